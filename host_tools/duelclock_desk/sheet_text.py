"""The written-style sheet as text: the paper sheet's lines, for `duelclock sheet`, the
HTML sheet and the desk. The board builds the Sheet (duelclock.core.sheet) and shows its own
compact lines (core.sheet.record_lines); these English lines are the desk's."""
from duelclock.core.sheet import LONG_TURN_MS, clock


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
        if row[2] == "pause":
            return "PAUSED %s-%s" % (clock(row[1]), "" if row[3] is None else clock(row[3]))
        return "30:00 PAST TIME: MATCH OVER"
    if k == "seated":
        return "%s seated" % row[2]
    if k == "penalty":
        how = " (3rd warning)" if row[6] else (" (by the clock)" if row[5] else "")
        if row[7]:
            how += " (after the match)"
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


BLANK = "_" * 20              # a field the record cannot fill: written in by hand


def heading(sheet, event=None, table=None, names=None):
    """(event, table, name A, name B) as printed: what the record or the desk's store does
    not know is a blank to fill in by hand. `names`: (A, B) from the round's pairings."""
    a, b = names or (BLANK, BLANK)
    return (event or BLANK, BLANK if table is None else str(table), a, b)


def carried_line(c):
    """A penalty carried into this match (a row of the desk's carries, sent here)."""
    return "CARRIED %s: %s, %s (given after the match in round %d, table %d)" % (
        c["p"], KIND_TEXT[c["kind"]], c["code"], c["from_round"], c["from_tbl"])


def render_text(sheet, event=None, table=None, names=None, carried=()):
    """The sheet as plain text, two columns A | B like the paper sheet: event, round, table
    and the players' names on top, signature lines for both players and the judge below.
    `carried`: the desk's carries sent into this match, each said under the names (the
    record has them as penalties before duel 1)."""
    ev, tbl, name_a, name_b = heading(sheet, event, table, names)
    out = ["ROUND %d  %s  rules %s  limit %s" % (sheet.round_no, sheet.kind, sheet.rules,
                                                clock(sheet.limit_s * 1000)),
           "event %s  round %d  table %s" % (ev, sheet.round_no, tbl),
           "A: %s   B: %s" % (name_a, name_b)] + [carried_line(c) for c in carried]
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
    out += ["", "Signatures: the players agree this record; the judge checked it."]
    width = max(len(name_a), len(name_b), len(BLANK))
    for who, name in (("A", name_a), ("B", name_b), ("Judge", BLANK)):
        out.append("  %-5s %-*s  signature %s" % (who, width, name, BLANK))
    return "\n".join(out) + "\n"
