"""What the judge must see beside a record's LP sheet (store.record_flags): events
the table re-sent with another body ("record changed on the table": the desk's first copy,
which the sheet replays, and the table's version), events that reached the desk too long
after their own time ("late entry", lateness.py: made up since if the desk had the table
linked then, else entered while it was not connected: confirm them with the players), and
events that reached the desk after the head judge closed the round ("after the close")."""
import json
from html import escape

from duelclock.core.sheet import clock


def lines(flags):
    """[(idx, kind, detail, first copy)] -> text lines, one heading first; [] for none."""
    if not flags:
        return []
    out = ["Record integrity: %d flag(s) for the judge" % len(flags)]
    closed = [(idx, int(detail)) for idx, kind, detail, _ in flags if kind == "after_close"]
    if closed:      # one line: a record that arrives after the close arrives whole
        out.append("%d event(s), #%d to #%d, reached the desk after the round was closed "
                   "(up to %s after)" % (len(closed), closed[0][0], closed[-1][0],
                                         clock(max(d for _, d in closed))))
    for idx, kind, detail, first in flags:
        t = json.loads(first).get("t")
        at = "#%d at %s" % (idx, clock(t) if type(t) is int else "?")
        if kind == "after_close":
            continue
        if kind == "changed":
            out.append("%s changed on the table after the desk had it:" % at)
            out.append("    desk's copy (on the sheet): %s" % first)
            out.append("    the table's version:        %s" % detail)
        else:
            out.append("%s reached the desk late, %s after its time (made up since, or entered "
                       "while the table was not connected): confirm with the players"
                       % (at, clock(int(detail))))
    return out


def html(flags):
    """The same as a sheet section ("" for none)."""
    text = lines(flags)
    if not text:
        return ""
    return ('<section class="record-flags"><h2>%s</h2><ul>%s</ul></section>'
            % (escape(text[0]), "".join("<li><pre>%s</pre></li>" % escape(l) for l in text[1:])))
