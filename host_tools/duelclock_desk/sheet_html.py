"""The LP sheet as a printable HTML page: one section per duel, two columns A | B as on the
paper sheet judges know; taken-back lines struck through, judge fixes and markers shown."""
from html import escape

from duelclock.core.sheet import clock
from duelclock_desk.sheet_text import describe, lp_note, section_title

CSS = """
body { font: 11pt/1.35 system-ui, sans-serif; color: #111; margin: 1.5em; }
h1 { font-size: 15pt; margin: 0 0 .2em; }
.meta { color: #444; margin-bottom: 1em; }
section { break-inside: avoid; margin-bottom: 1.2em; }
h2 { font-size: 12pt; border-bottom: 2px solid #111; margin: .6em 0 .3em; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #999; padding: 2px 6px; }
th { background: #eee; }
td.n { text-align: right; }
td.lp { font-weight: 600; }
th.a, th.b { width: 16%; }
tr.undone td.n { text-decoration: line-through; color: #777; }
tr.fix td { background: #fff4d6; }
tr.mark td { background: #e8eefc; font-weight: 600; }
tr.pen td { background: #fde8e8; }
tr.turn td { color: #555; font-size: 9.5pt; }
tr.long td { color: #a00; }
.verdict { margin-top: 1em; font-weight: 600; }
@media print { body { margin: 0; } th { background: #ddd !important; } }
"""


def _lp_row(row):
    _, t, turn, tp, da, db, la, lb, by, cost, undone = row
    cells = [clock(t), "%d %s" % (turn, tp)]
    for d, total in ((da, la), (db, lb)):
        cells.append("%+d" % d if d else "")
        cells.append(str(total) if d else "")
    cls = ' class="undone"' if undone else ""
    tds = ('<td>%s</td><td>%s</td><td class="n">%s</td><td class="n lp">%s</td>'
           '<td class="n">%s</td><td class="n lp">%s</td>' % tuple(escape(c) for c in cells))
    return "<tr%s>%s<td>%s</td></tr>" % (cls, tds, escape(lp_note(row).lower()))


ROW_CLASS = {"fix": "fix", "mark": "mark", "penalty": "pen", "void": "pen", "turn": "turn",
             "end": "mark", "result": "mark", "seated": "turn"}


def _other_row(row):
    cls = ROW_CLASS[row[0]]
    if row[0] == "turn" and "over 3:00" in describe(row):
        cls += " long"
    return '<tr class="%s"><td>%s</td><td colspan="6">%s</td></tr>' % (
        cls, clock(row[1]), escape(describe(row)))


def render_html(sheet, verdict, title="match record"):
    """A whole page. `verdict` is Match.verdict() of the same replay."""
    parts = ["<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">",
             "<title>LP sheet - %s</title><style>%s</style></head><body>" % (escape(title), CSS),
             "<h1>Life-point record: round %d (%s)</h1>" % (sheet.round_no, escape(sheet.kind)),
             '<div class="meta">rules %s &middot; time limit %s &middot; %s</div>' % (
                 escape(sheet.rules), clock(sheet.limit_s * 1000), escape(title))]
    for sec in sheet.sections:
        if sec.no == 0 and not sec.rows:
            continue
        parts.append("<section><h2>%s</h2><table>" % escape(section_title(sec)))
        parts.append('<tr><th>time</th><th>turn</th><th class="a">A</th><th>LP A</th>'
                     '<th class="b">B</th><th>LP B</th><th>note</th></tr>')
        for row in sec.rows:
            parts.append(_lp_row(row) if row[0] == "lp" else _other_row(row))
        parts.append("</table></section>")
    v = verdict
    parts.append('<p class="verdict">Result: %s &middot; wins A %d, B %d &middot; phase %s</p>' % (
        escape(v["result"]), v["wins"]["A"], v["wins"]["B"], escape(v["phase"])))
    parts.append("</body></html>\n")
    return "\n".join(parts)
