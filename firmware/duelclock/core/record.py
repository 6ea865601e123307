# The match record: events in the interchange form of docs/record.md.
#
# Pure and MicroPython-compatible: no I/O. `parse_line` turns one JSON line into an
# event dict or a reason (`read_line` only decodes it); `check_event` validates the keys
# and types of one event; the `dumps_*` helpers write JSON with a fixed key order so
# CPython and MicroPython print byte-identical verdicts (MicroPython dicts do not keep
# insertion order).
import json

from .jsonio import strict_json

PLAYERS = ("A", "B")
MAX_LINE_BYTES = 1024          # a longer line is rejected unread (a record line is < 200 bytes)
MAX_AMOUNT = 1000000000        # |LP change|, LP total and judge fix bound: a 31-bit small int on boards
MAX_T_MS = 100000000000        # about 27 hours either side of the round start
KINDS = ("swiss", "elimination")
RULE_SETS = ("ID", "KR")       # penalty guideline in force: Indonesian (default) or Korean
PENALTY_KINDS = ("caution", "warning", "duel_loss", "match_loss", "dq", "dq_prizes")


# --- lines: the one line splitter of the table and the desk ----------------------------------
# The wire Decoder, the journal's and the replay's readers and the desk's links split with it.
#
#   Lines(max_bytes).feed(chunk) -> each line the chunk completes, one at a time: bytes
#                                   without b"\n", or None for a line longer than max_bytes
#   .part                        -> the line begun and not ended: b"" at a line's start,
#                                   None inside a line too long; at the end of input,
#                                   anything but b"" is an unended last line
#
# A line too long is counted, never held: a 10 MB line costs nothing in a 64 KB heap. Lines
# come out one at a time, never as a list: a flood of junk ("x\n" x 2,000 in one MQTT
# payload) would hold a 32-byte object per line at once. One attribute of state and no
# buffer: a class with a 1 KB buffer and four methods cost the table about 480 bytes of live
# heap more. Here beside the record's line limit: every reader of lines
# loads this module anyway.

class Lines:
    def __init__(self, max_bytes):
        self.max_bytes = max_bytes
        self.part = b""

    def feed(self, data, end=None):
        """Yield the lines completed by data[:end] (default: all of it)."""
        n = len(data) if end is None else end
        view = memoryview(data)     # its slices copy nothing: a line is copied once, as bytes
        i = 0
        while True:
            nl = data.find(b"\n", i, n)
            stop = n if nl < 0 else nl
            part = self.part
            if part is not None:    # the length first: a line too long is never copied
                self.part = part + view[i:stop] if len(part) + stop - i <= self.max_bytes \
                    else None
            if nl < 0:
                return
            line, self.part = self.part, b""
            yield line
            i = nl + 1


class JournalFull(Exception):
    """No room for the event even after deleting every collected match. The event is
    not written; `uncollected` lists the match ids the desk still has to collect."""

    def __init__(self, uncollected):
        super().__init__("journal full: %d match(es) not collected by the desk"
                         % len(uncollected))
        self.uncollected = uncollected


def _is_int(v):
    # bool is not an int here (CPython makes it a subclass; MicroPython does not).
    return type(v) is int


def _player(ev, key):
    v = ev.get(key)
    if v is None:
        return "missing '%s'" % key
    if v not in PLAYERS:
        return "'%s' must be A or B" % key
    return None


def _str(ev, key, required=True):
    v = ev.get(key)
    if v is None:
        return ("missing '%s'" % key) if required else None
    if type(v) is not str or not v:
        return "'%s' must be a non-empty string" % key
    return None


def _lp(ev):
    seen = False
    for p in PLAYERS:
        if p not in ev:                # absent, not null: the engine adds what is present
            continue
        v = ev[p]
        if not _is_int(v):
            return "'%s' must be an integer" % p
        if v == 0:
            return "'%s' must not be 0" % p
        if v > MAX_AMOUNT or v < -MAX_AMOUNT:
            return "'%s' out of range" % p
        seen = True
    if not seen:
        return "lp needs 'A' and/or 'B'"
    cost = ev.get("cost")
    if cost is not None and type(cost) is not bool:
        return "'cost' must be true or false"
    v = ev.get("by")            # optional: who keyed the entry in (the device writes it)
    if v is not None and v not in ("A", "B", "judge"):
        return "'by' must be A, B or judge"
    return None


def _duel_start(ev):
    return _player(ev, "first")


def _duel_end(ev):
    if ev.get("winner") not in ("A", "B", "draw"):
        return "'winner' must be A, B or draw"
    return None


def _p(ev):
    return _player(ev, "p")


def _penalty(ev):
    why = None if ev.get("p") == "both" else _player(ev, "p")   # both: rules.md 5
    if why:
        return why
    if ev.get("kind") not in PENALTY_KINDS:
        return "'kind' must be one of " + ", ".join(PENALTY_KINDS)
    return _str(ev, "code") or _str(ev, "judge", False)


def _judge_fix(ev):
    why = _player(ev, "p")
    if why:
        return why
    v = ev.get("lp")
    if not _is_int(v):
        return "'lp' must be an integer"
    if v < 0 or v > MAX_AMOUNT:
        return "'lp' out of range"
    return None


def _judge_void(ev):
    return _player(ev, "p") or _str(ev, "code")


def _extend(ev):
    v = ev.get("ms")
    if not _is_int(v) or v < 1 or v > MAX_T_MS:
        return "'ms' must be a positive integer"
    return None


def _round_start(ev):
    if not _is_int(ev.get("round")) or ev["round"] < 0:
        return "'round' must be a non-negative integer"
    if ev.get("kind") not in KINDS:
        return "'kind' must be swiss or elimination"
    # Optional keys: absent takes the default; present (null included) must be right.
    for key, low, high in (("limit_s", 1, 86400), ("cap_s", 0, 86400), ("extra_turns", 0, 20)):
        v = ev.get(key)
        if key in ev and (not _is_int(v) or v < low or v > high):
            return "'%s' must be an integer from %d to %d" % (key, low, high)
    v = ev.get("seating")
    if "seating" in ev and type(v) is not bool:
        return "'seating' must be true or false"
    if ev.get("rules", "ID") not in RULE_SETS:
        return "'rules' must be ID or KR"
    if "names" in ev:                       # the players, from the pairings: shown, not ruled
        names = ev["names"]
        if type(names) is not dict or _str(names, "A") or _str(names, "B"):
            return "'names' must give A and B as non-empty strings"
    return None


# ev name -> key checker (None: no keys but t and ev). Adding an event means a line here and
# a handler in match.py.
CHECKS = {
    "round_start": _round_start,
    "seated": _p,
    "duel_start": _duel_start,
    "lp": _lp,
    "undo": None,
    "turn_end": None,
    "duel_end": _duel_end,
    "surrender": _p,
    "penalty": _penalty,
    "judge_fix": _judge_fix,
    "judge_void": _judge_void,
    "tick": None,
    "extend": _extend,
    "pause": None,
    "resume": None,
}


def check_event(ev):
    """None if `ev` is a well-formed event, else a short reason. Rules are match.py's job."""
    if type(ev) is not dict:
        return "not a JSON object"
    t = ev.get("t")
    if not _is_int(t):
        return "'t' must be an integer (ms)"
    if t > MAX_T_MS or t < -MAX_T_MS:
        return "'t' out of range"
    name = ev.get("ev")
    if type(name) is not str:
        return "missing 'ev'"
    if name not in CHECKS:
        return "unknown event '%s'" % name[:40]
    check = CHECKS[name]
    return check(ev) if check else None


def read_line(line):
    """(value, None) or (None, reason): one line (str or bytes) as strict JSON, not yet
    checked as an event."""
    if len(line) > MAX_LINE_BYTES:
        return None, "line longer than %d bytes" % MAX_LINE_BYTES
    try:
        if type(line) is str:
            line = line.encode()
        text = line.decode()                      # raises on bad UTF-8
        if not strict_json(line):                 # reads the bytes (see jsonio)
            return None, "not JSON"
        return json.loads(text), None
    except (ValueError, UnicodeError):
        return None, "not JSON"


def parse_line(line):
    """(event, None) or (None, reason) for one line (str or bytes) of a record."""
    ev, why = read_line(line)
    if why is None:
        why = check_event(ev)
    if why:
        return None, why
    return ev, None
