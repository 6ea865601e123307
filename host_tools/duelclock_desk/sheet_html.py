"""The LP sheet as a printable HTML page: one section per duel, two columns A | B as on the
paper sheet judges know; taken-back lines struck through, judge fixes and markers shown.
Printed (A4, one column): every page carries the event, round, table and players in its top
margin and its number below; a duel's column heads repeat on each page it spans; no row is
cut across pages; signature lines for both players and the judge end the sheet."""
from html import escape

from duelclock.core.sheet import clock
from duelclock_desk.sheet_text import BLANK, carried_line, describe, heading, lp_note, section_title

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
tr { break-inside: avoid; }
thead { display: table-header-group; }
.sign { break-inside: avoid; margin-top: 1.5em; }
.sign table td { border: none; border-bottom: 1px solid #111; height: 2.2em; width: 40%;
                 vertical-align: bottom; }
.sign table td.who { border: none; width: 10%; white-space: nowrap; }
@page { size: A4; margin: 16mm 14mm 14mm;
        @bottom-right { content: "page " counter(page) " of " counter(pages); font: 9pt sans-serif; } }
@media print { body { margin: 0; } th { background: #ddd !important; } }
"""


def _css_string(text):
    """text as a CSS string literal safe inside <style>: quotes, backslashes, control
    characters and < > & as CSS hex escapes (no name can end the style element)."""
    return '"%s"' % "".join("\\%x " % ord(c) if c in '"\\<>&' or ord(c) < 32 else c
                            for c in text)


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


def render_html(sheet, verdict, title="match record", event=None, table=None, names=None,
                carried=()):
    """A whole page. `verdict` is Match.verdict() of the same replay; `event`, `table`,
    `names` (A, B) and `carried` (penalties carried into this match: render_text) from the
    desk's store when it has them, else blanks to fill in by hand.
    The page's own @page rule (the running head) sits in the body, so a page that embeds
    the body (the dashboard's table page) prints it too."""
    ev, tbl, name_a, name_b = heading(sheet, event, table, names)
    run = "%s \u00b7 round %d \u00b7 table %s \u00b7 A %s \u00b7 B %s" % (
        ev, sheet.round_no, tbl, name_a, name_b)
    parts = ["<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">",
             "<title>LP sheet - %s</title><style>%s</style></head><body>" % (escape(title), CSS),
             "<style>@page { @top-left { content: %s; font: 9pt sans-serif; } }</style>"
             % _css_string(run),
             "<h1>Life-point record: round %d (%s), table %s</h1>" % (
                 sheet.round_no, escape(sheet.kind), escape(tbl)),
             '<div class="meta">event %s &middot; rules %s &middot; time limit %s &middot; %s</div>'
             % (escape(ev), escape(sheet.rules), clock(sheet.limit_s * 1000), escape(title)),
             '<p class="players">A: %s &middot; B: %s</p>' % (escape(name_a), escape(name_b))]
    parts += ['<p class="carried">%s</p>' % escape(carried_line(c)) for c in carried]
    for sec in sheet.sections:
        if sec.no == 0 and not sec.rows:
            continue
        parts.append("<section><h2>%s</h2><table>" % escape(section_title(sec)))
        parts.append('<thead><tr><th>time</th><th>turn</th><th class="a">A</th><th>LP A</th>'
                     '<th class="b">B</th><th>LP B</th><th>note</th></tr></thead><tbody>')
        for row in sec.rows:
            parts.append(_lp_row(row) if row[0] == "lp" else _other_row(row))
        parts.append("</tbody></table></section>")
    v = verdict
    parts.append('<p class="verdict">Result: %s &middot; wins A %d, B %d &middot; phase %s</p>' % (
        escape(v["result"]), v["wins"]["A"], v["wins"]["B"], escape(v["phase"])))
    parts.append('<section class="sign"><h2>Signatures</h2><p>The players agree this record; '
                 'the judge checked it.</p><table>')
    for who, name in (("Player A", name_a), ("Player B", name_b), ("Judge", BLANK)):
        parts.append('<tr><td class="who">%s</td><td>%s</td><td class="who">signature</td>'
                     '<td></td></tr>' % (who, escape(name) if name != BLANK else ""))
    parts.append("</table></section>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
