# The written-style LP sheet: what the paper record shows, built from the notes the rules
# engine emits for applied events (Match(on_note=sheet.note)). Pure.
#
# A sheet is a list of sections written in order, as on paper: section 0 is before
# duel 1 (check-in, early penalties), then one per duel, a duel's section also holding
# what happens in the interval after it. Rows are tuples; an LP row is a list because a
# taken-back entry is later marked, never removed:
#   ["lp", t, turn, turn_player, dA, dB, lpA, lpB, by, cost, undone]
#   ("fix", t, turn, turn_player, p, lp_before, lp_after)
#   ("turn", t, turn, turn_player, turn_ms)
#   ("mark", t, what, k, n)        what: time | extra_turn (k of n) | sudden_death | cap
#                                  | extend (k ms)
#   ("seated", t, p)
#   ("penalty", t, p, kind, code, auto, escalated)
#   ("void", t, p, kind, code)
#   ("end", t, winner, by)          a duel's result
#   ("result", t, result)           the match's result
LONG_TURN_MS = 180000             # KR 2.E notes 6: 3 minutes of thinking per turn (guideline)


class Section:
    def __init__(self, no, first, extra, played):
        self.no = no              # duel number, 0 for "before duel 1"
        self.first = first
        self.extra = extra
        self.played = played      # False: a duel lost without play (penalty)
        self.rows = []


class Sheet:
    """Collects engine notes. `keep` > 0 keeps only the last `keep` sections (a board's
    record view needs the current duel, not the whole match, in its 64 KB heap)."""

    def __init__(self, start, keep=0):
        self.round_no = start["round"]
        self.kind = start["kind"]
        self.rules = start.get("rules", "ID")
        self.limit_s = start.get("limit_s", 2700)
        self.keep = keep
        self.sections = [Section(0, None, False, True)]
        self.open = False         # a duel is being played
        self.last_lp = None       # the LP row an undo would cross out

    def _add(self, row):
        self.sections[-1].rows.append(row)

    def _section(self, sec):
        self.sections.append(sec)
        if self.keep and len(self.sections) > self.keep:
            self.sections = self.sections[-self.keep:]

    def note(self, t, kind, d):
        if kind == "lp":
            ev, lp, turn, tp = d
            row = ["lp", t, turn, tp, ev.get("A", 0), ev.get("B", 0), lp["A"], lp["B"],
                   ev.get("by"), ev.get("cost") is True, False]
            self.last_lp = row
            self._add(row)
        elif kind == "undo":
            if self.last_lp is not None:
                self.last_lp[10] = True
            self.last_lp = None
        elif kind == "turn_end":
            self._add(("turn", t, d[0], d[1], d[2]))
        elif kind == "fix":
            self._add(("fix", t, d[3], d[4], d[0], d[1], d[2]))
        elif kind == "duel":
            self._section(Section(d[0], d[1], d[2], True))
            self.open = True
        elif kind == "duel_over":
            if not self.open:
                no = self.sections[-1].no + 1
                self._section(Section(no, None, False, False))
            self.open = False
            self._add(("end", t, d[0], d[1]))
        elif kind == "extra_turn":
            self._add(("mark", t, "extra_turn", d[0], d[1]))
        elif kind in ("time", "sudden_death", "cap"):
            self._add(("mark", t, kind, 0, 0))
        elif kind == "extend":
            self._add(("mark", t, "extend", d, 0))
        elif kind == "seated":
            self._add(("seated", t, d))
        elif kind == "penalty":
            self._add(("penalty", t, d["p"], d["kind"], d["code"], d["auto"], d.get("escalated", False)))
        elif kind == "void":
            self._add(("void", t, d[0], d[1], d[2]))
        elif kind == "match_over":
            self._add(("result", t, d))


def clock(t_ms):
    """Desk time as m:ss from the round start ('-0:30' before it)."""
    sign = "-" if t_ms < 0 else ""
    s = (t_ms if t_ms >= 0 else -t_ms) // 1000
    return "%s%d:%02d" % (sign, s // 60, s % 60)


def _amount(v):
    return "" if v == 0 else ("%+d" % v)


BY_TEXT = {"lp": "LP 0", "game": "game win", "surrender": "surrender", "penalty": "penalty",
           "time_lp": "LP after time", "sudden_death": "sudden death"}
KIND_TEXT = {"caution": "caution", "warning": "warning", "duel_loss": "duel loss",
             "match_loss": "match loss", "dq": "disqualified", "dq_prizes": "disqualified, prizes lost"}


def lp_note(row):
    """The note beside an LP row: paid as a cost, who keyed it in, taken back."""
    note = []
    if row[9]:
        note.append("cost")
    if row[8]:
        note.append("by " + row[8])
    if row[10]:
        note.append("TAKEN BACK")
    return ", ".join(note)


def describe(row):
    """One line of English for a non-LP row (the text sheet and the HTML sheet share it)."""
    k = row[0]
    if k == "turn":
        long = "  over 3:00" if row[4] > LONG_TURN_MS else ""
        return "end of turn %d (%s), %s%s" % (row[2], row[3], clock(row[4]), long)
    if k == "fix":
        return "JUDGE FIX %s: %d -> %d" % (row[4], row[5], row[6])
    if k == "mark":
        if row[2] == "time":
            return "TIME CALLED"
        if row[2] == "extra_turn":
            return "EXTRA TURN %d/%d" % (row[3], row[4])
        if row[2] == "sudden_death":
            return "SUDDEN DEATH"
        if row[2] == "extend":
            return "TIME EXTENDED +" + clock(row[3])
        return "30:00 PAST TIME: MATCH OVER"
    if k == "seated":
        return "%s seated" % row[2]
    if k == "penalty":
        how = " (3rd warning)" if row[6] else (" (by the clock)" if row[5] else "")
        return "PENALTY %s: %s, %s%s" % (row[2], KIND_TEXT[row[3]], row[4], how)
    if k == "void":
        return "VOIDED %s: %s, %s" % (row[2], KIND_TEXT[row[3]], row[4])
    if k == "end":
        who = {"draw": "draw", "none": "lost by both"}.get(row[2], row[2] + " wins")
        return "DUEL OVER: %s (%s)" % (who, BY_TEXT[row[3]])
    result = row[2]
    return "MATCH OVER: " + ("double loss" if result == "double_loss" else result + " wins the match")


def section_title(sec):
    if sec.no == 0:
        return "Before duel 1"
    if not sec.played:
        return "Duel %d - not played" % sec.no
    return "%s %d - %s goes first" % ("Extra duel" if sec.extra else "Duel", sec.no, sec.first)


def render_text(sheet):
    """The sheet as plain text, two columns A | B like the paper sheet."""
    out = ["ROUND %d  %s  rules %s  limit %s" % (sheet.round_no, sheet.kind, sheet.rules,
                                                clock(sheet.limit_s * 1000))]
    for sec in sheet.sections:
        if sec.no == 0 and not sec.rows:
            continue
        out.append("")
        out.append("== " + section_title(sec) + " ==")
        if sec.played and sec.no:
            out.append("   time  turn |      A     LP |      B     LP | note")
        for row in sec.rows:
            if row[0] == "lp":
                _, t, turn, tp, da, db, la, lb, by, cost, undone = row
                a = "%6s %6s" % (_amount(da), la if da else "")
                b = "%6s %6s" % (_amount(db), lb if db else "")
                note = lp_note(row)
                # x in the margin: a crossed-out line, still readable as on paper
                out.append("%s%6s %3d %s | %s | %s | %s" % ("x" if undone else " ", clock(t), turn,
                                                             tp, a, b, note))
            else:
                out.append(" %6s       -- %s" % (clock(row[1]), describe(row)))
    return "\n".join(out) + "\n"
