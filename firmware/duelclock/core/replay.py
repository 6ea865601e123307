# Replay: lines of a match record in, the match and its rejections out. Pure: the caller
# reads the file (or the journal) and feeds lines; see duelclock/replay.py for the CLI.
from .record import check_event, read_line
from .jsonio import dumps_obj, quote
from .match import Match


class RecordError(Exception):
    """The input is not a match record at all (replay exits non-zero)."""


class Replay:
    """Feed the lines of one record in order. The first event must be a valid
    round_start, else RecordError (the input is not a match record). Every later line
    that is not a well-formed event, or that the rules refuse, lands in `rejected`
    as (index, why) and changes nothing but the time: one with a valid `t` is a tick
    at that `t`."""

    def __init__(self, with_sheet=False):
        self.with_sheet = with_sheet
        self.sheet = None         # core.sheet.Sheet, when asked for
        self.match = None
        self.rejected = []
        self.count = 0            # events seen (blank lines are not events)

    def feed(self, line):
        """One line (bytes or str; None stands for a line too long to read)."""
        if line is not None and not line.strip():
            return
        index = self.count
        self.count += 1
        if line is None:
            ev, why = None, "line too long"
        else:
            ev, why = read_line(line)
            if why is None:
                why = check_event(ev)
        if self.match is None:
            self._first(ev if why is None else None, why)
            return
        if why is None:
            why = self.match.apply(ev)
        elif type(ev) is dict:
            # Not an event, yet it has a time: a rejected event is a tick at its t
            # (events.md), whatever else is wrong with it.
            tick = {"t": ev.get("t"), "ev": "tick"}
            if check_event(tick) is None:
                self.match.apply(tick)
        if why is not None:
            self.rejected.append((index, why))

    def _first(self, ev, why):
        if ev is None:
            raise RecordError("not a match record: first line: " + why)
        if ev["ev"] != "round_start":
            raise RecordError("not a match record: the first event must be round_start")
        on_note = None
        if self.with_sheet:
            from .sheet import Sheet
            self.sheet = Sheet(ev)
            on_note = self.sheet.note
        self.match = Match(ev, on_note)

    def verdict_json(self):
        if self.match is None:
            raise RecordError("not a match record: no events")
        return dumps_verdict(self.match.verdict(), self.rejected)


def write_verdict(write, v, rejected):
    """The verdict of events.md as one JSON line (no newline), passed to `write(str)` in
    pieces of one duel, penalty or rejection each: on a 64 KB MicroPython heap a record
    with many rejections makes a verdict too long for one allocation. `v` is
    Match.verdict(); `rejected` a list of (index, why)."""
    write('{"result": %s, "wins": %s, "duels": [' % (quote(v["result"]), _dumps_ab(v["wins"])))
    sep = ""
    for d in v["duels"]:
        write(sep + dumps_obj((("winner", quote(d["winner"])), ("by", quote(d["by"])))))
        sep = ", "
    write('], "phase": %s, "lp": %s, "penalties": [' % (quote(v["phase"]), _dumps_ab(v["lp"])))
    sep = ""
    for x in v["penalties"]:
        pairs = [("p", quote(x["p"])), ("kind", quote(x["kind"])), ("code", quote(x["code"]))]
        if "after_match" in x:
            pairs.append(("after_match", "true"))
        write(sep + dumps_obj(pairs))
        sep = ", "
    write('], "rejected": [')
    sep = ""
    for i, w in rejected:
        write(sep + dumps_obj((("index", str(i)), ("why", quote(w)))))
        sep = ", "
    write("]}")


def _dumps_ab(d):
    return dumps_obj((("A", str(d["A"])), ("B", str(d["B"]))))


def dumps_verdict(v, rejected):
    """write_verdict as one string (on the desk, and for tests)."""
    out = []
    write_verdict(out.append, v, rejected)
    return "".join(out)
