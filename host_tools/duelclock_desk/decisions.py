"""The head judge's result beside a record's LP sheet (store.decision): "entered by the head
judge" (the table reported none) or "overridden" (it replaced the table's), what it took,
who gave it, when, and why. The sheet itself stays the table's record replayed."""
import time
from html import escape

TAKEN = {"table": "the table's verdict", "replay": "the desk's replay of the record",
         "typed": "typed in from the paper sheet"}


def lines(d):
    """A decision (a result_versions row) -> text lines; [] for none."""
    if not d:
        return []
    head = "Result entered by the head judge" if d["how"] == "entered" else \
        "Result overridden by the head judge"
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(d["unix_ms"] / 1000)) \
        if d["unix_ms"] else "?"
    return ["%s: %s %d-%d (%s)" % (head, d["result"], d["wins_a"], d["wins_b"],
                                   TAKEN[d["taken"]]),
            "    by %s at %s: %s" % (d["who"] or "?", when, d["reason"])]


def html(d):
    """The same as a sheet section ("" for none)."""
    text = lines(d)
    if not text:
        return ""
    return ('<section class="decision" id="decision" data-how="%s"><h2>%s</h2><p>%s</p>'
            '</section>' % (escape(d["how"]), escape(text[0]), escape(text[1].strip())))
