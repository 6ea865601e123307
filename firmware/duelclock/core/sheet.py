# The written-style LP sheet: what the paper record shows, built from the notes the rules
# engine emits for applied events (Match(on_note=sheet.note); Match._note lists them). Pure.
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
#   ["mark", t, "pause", until, 0]  the match time paused at t, until the desk ms `until`
#                                  (None while still paused: a list, the resume sets it)
#   ("seated", t, p)
#   ("penalty", t, p, kind, code, auto, escalated, after_match)
#   ("void", t, p, kind, code)
#   ("end", t, winner, by)          a duel's result
#   ("result", t, result)           the match's result
LP_UNDONE = 10                    # the field of an LP row that an undo sets
LONG_TURN_MS = 180000             # KR 2.E notes 6: 3 minutes of thinking per turn (guideline)
LAST_MINUTES_MS = 300000          # the table says "5 MINUTES LEFT" and draws the clock so from here


class Section:
    def __init__(self, no, first, extra, played):
        self.no = no              # duel number, 0 for "before duel 1"
        self.first = first
        self.extra = extra
        self.played = played      # False: a duel lost without play (penalty)
        self.rows = []
        self.dropped = 0          # oldest rows let go (Sheet max_rows); the journal has them


class Sheet:
    """Collects engine notes. The desk keeps every section and row (keep=0, max_rows=0).
    A board keeps its RAM bounded however long the match: `keep` > 0 keeps only the last
    `keep` sections (the record view shows the current duel) and `max_rows` > 0 only the
    newest rows of a section, counting the others in `dropped`; every row is still in the
    journal on flash and in the desk's store."""

    def __init__(self, start, keep=0, max_rows=0):
        self.round_no = start["round"]
        self.kind = start["kind"]
        self.rules = start.get("rules", "ID")
        self.limit_s = start.get("limit_s", 2700)
        self.keep = keep
        self.max_rows = max_rows
        self.sections = [Section(0, None, False, True)]
        self.open = False         # a duel is being played
        self.last_lp = None       # the LP row an undo would cross out
        self.pause_row = None     # the pause row a resume closes

    def _add(self, row):
        sec = self.sections[-1]
        sec.rows.append(row)
        if self.max_rows and len(sec.rows) > self.max_rows:
            sec.rows.pop(0)
            sec.dropped += 1

    def _section(self, sec):
        self.sections.append(sec)
        if self.keep and len(self.sections) > self.keep:
            self.sections = self.sections[-self.keep:]

    def note(self, n):
        """One engine note (Match(on_note=sheet.note); match.py's _note lists them)."""
        kind, t = n["kind"], n["t"]
        if kind == "lp":
            ev, lp = n["ev"], n["lp"]
            row = ["lp", t, n["turn"], n["turn_player"], ev.get("A", 0), ev.get("B", 0), lp["A"],
                   lp["B"], ev.get("by"), ev.get("cost") is True, False]
            self.last_lp = row
            self._add(row)
        elif kind == "undo":
            if self.last_lp is not None:
                self.last_lp[LP_UNDONE] = True
            self.last_lp = None
        elif kind == "turn_end":
            self._add(("turn", t, n["turn"], n["turn_player"], n["turn_ms"]))
        elif kind == "fix":
            self._add(("fix", t, n["turn"], n["turn_player"], n["p"], n["before"], n["after"]))
        elif kind == "duel":
            self._section(Section(n["no"], n["first"], n["extra"], True))
            self.open = True
        elif kind == "duel_over":
            if not self.open:
                no = self.sections[-1].no + 1
                self._section(Section(no, None, False, False))
            self.open = False
            self._add(("end", t, n["winner"], n["by"]))
        elif kind == "extra_turn":
            self._add(("mark", t, "extra_turn", n["no"], n["total"]))
        elif kind in ("time", "sudden_death", "cap"):
            self._add(("mark", t, kind, 0, 0))
        elif kind == "extend":
            self._add(("mark", t, "extend", n["ms"], 0))
        elif kind == "pause":
            self.pause_row = ["mark", t, "pause", None, 0]
            self._add(self.pause_row)
        elif kind == "resume":
            if self.pause_row is not None:
                self.pause_row[3] = t
            self.pause_row = None
        elif kind == "seated":
            self._add(("seated", t, n["p"]))
        elif kind == "penalty":
            pen = n["pen"]
            self._add(("penalty", t, pen["p"], pen["kind"], pen["code"], pen["auto"],
                       pen.get("escalated", False), "after_match" in pen))
        elif kind == "void":
            pen = n["pen"]
            self._add(("void", t, pen["p"], pen["kind"], pen["code"]))
        elif kind == "match_over":
            self._add(("result", t, n["result"]))


def clock(t_ms):
    """Desk time as m:ss from the round start ('-0:30' before it)."""
    s = (t_ms if t_ms >= 0 else -t_ms) // 1000
    text = "%d:%02d" % (s // 60, s % 60)       # two args: a tuple of one heap block
    return "-" + text if t_ms < 0 else text


def record_lines(sheet):
    """Compact sheet lines (about 18 characters) for small displays: the last section."""
    sec = sheet.sections[-1]
    out = ["(%d earlier rows)" % sec.dropped] if sec.dropped else []
    for row in sec.rows:
        k = row[0]
        if k == "lp":
            _, t, turn, tp, da, db, la, lb, by, cost, undone = row
            cells = []
            if da:
                cells.append("A%+d=%d" % (da, la))
            if db:
                cells.append("B%+d=%d" % (db, lb))
            out.append("%s%d%s %s%s" % ("x" if undone else "", turn, tp, " ".join(cells), " c" if cost else ""))
        elif k == "turn":
            _, t, turn, tp, turn_ms = row
            out.append("-- T%d %s%s" % (turn, clock(turn_ms), " !" if turn_ms > LONG_TURN_MS else ""))
        elif k == "fix":
            _, t, turn, tp, p, before, after = row
            out.append("FIX %s %d>%d" % (p, before, after))
        elif k == "mark":       # TIME, EXTRA TURN, SUDDEN DEATH, CAP, +5:00, PAUSE 44:00-47:00
            what = row[2]
            if what == "extend":
                out.append("+" + clock(row[3]))
            elif what == "pause":
                out.append("PAUSE %s-%s" % (clock(row[1]), "" if row[3] is None else clock(row[3])))
            else:
                out.append(what.replace("_", " ").upper())
        elif k == "penalty":
            out.append("PEN %s %s" % (row[2], row[3]))
        elif k == "end":
            out.append("END %s %s" % (row[2], row[3]))
        elif k == "result":
            out.append("MATCH %s" % row[2])
    return out
