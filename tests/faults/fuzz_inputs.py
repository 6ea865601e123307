"""Fuzz inputs: generators that take a seeded random.Random and give one input, for the
wire decoder (arbitrary bytes; valid signed desk and table messages, mutated: flipped bytes,
cuts, duplicated keys, huge numbers, deep nesting, wrong types; well-signed hostile values)
and the record parser (events, mutated alike). corpus(seed, n) is the fixed sample both
interpreters run. Used by soak_fuzz.py and test_fuzz.py."""
import json
import random

from duelclock.core import wire
from duelclock.core.sign import command_key, table_key
from tests.core.dc import encode
from tests.faults.upy_fuzz import KEY, TBL

SEQ_BOOT = wire.SEQ_BOOT


# --- inputs for the wire decoder ------------------------------------------------------------

def _pool():
    """Valid signed lines: every desk command (to table TBL, to another table) and every
    table report (from TBL and from table 6)."""
    desk = wire.Encoder(KEY, 1)
    rnd = {"round": 3, "kind": "swiss", "start_ms": 120000, "limit_s": 2700, "cap_s": 1800,
           "extra_turns": 1, "seating": True}
    cmds = [desk.build("round", rnd, 7),
            desk.build("round", dict(rnd, names={"A": "Kim", "B": "Budi"}, lang="ko", rules="KR"), TBL),
            desk.build("pause", {"at_ms": 5000}, TBL),
            desk.build("resume", {"at_ms": 9000}, TBL),
            desk.build("extend", {"round": 3, "ms": 60000}, TBL),
            desk.build("extend", {"round": 3, "ms": 60000}, 9),
            desk.build("round", dict(rnd, judge_extend=True), TBL),
            desk.build("extend", {"round": 3, "ms": 60000, "at_ms": 130000}, TBL),
            desk.build("ack", {"round": 3, "events": 12}, TBL),
            desk.build("sync", {"t1": 100, "t2": 200, "t3": 201, "re": 7}, TBL)]
    reports = []
    for tbl in (TBL, 6):
        t = wire.Encoder(table_key(KEY, tbl), 1, tbl=tbl)
        reports += [t.build("hello", {"board": "SIM", "fw": "0.1", "battery": 80}),
                    t.build("state", {"round": 3, "phase": "duel", "duel": 1,
                                      "wins": {"A": 0, "B": 0}, "lp": {"A": 8000, "B": 6500},
                                      "turn": 2, "remaining_ms": 1000, "judge": True}),
                    t.build("record", {"round": 3, "first": 0, "total": 2, "events": [
                        {"t": 0, "ev": "round_start", "round": 3, "kind": "swiss"},
                        {"t": 90, "ev": "lp", "A": -500, "by": "A"}]}),
                    t.build("result", {"round": 3, "result": "A", "wins": {"A": 2, "B": 0},
                                       "events": 2}),
                    t.build("sync", {"t1": 55})]
    return cmds, reports


POOL = _pool()
FIELDS = ("v", "k", "tbl", "seq", "sig", "round", "ms", "at_ms", "tables", "names", "events",
          "wins", "lp", "settings", "t1", "re", "start_ms", "extra", "A")
HOSTILE = (2 ** 53, 2 ** 53 - 1, -2 ** 53 + 1, 10 ** 30, -10 ** 30, 2 ** 63, 1e308, 1.5, -0.0,
           True, False, None, "", "x" * 64, "x" * 65, "\u00e9" * 64, "\ud800", "\x00", [], {},
           [1] * 300, list(range(1, 70)), {"A": 1, "B": 2}, {"A": "x", "B": "y", "C": "z"},
           {"A": [1], "B": 2}, [{"t": 0, "ev": "x"}] * 65, 0, -1, 1, 9999, 10000, "state")


def _deep(rng):
    n = rng.choice((9, 64, 300, 600, 2000))
    o, c = rng.choice((("[", "]"), ('{"a":', "}")))
    return o * n + "1" + c * n


def _number_text(rng):
    return rng.choice(("1" + "0" * rng.randint(16, 400), "-" + "9" * rng.randint(16, 400),
                       "1e400", "-1e400", "NaN", "Infinity", "-0", "0.0", "00", "1.", "+1"))


def _bytes_mutate(rng, line):
    b = bytearray(line)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(8)
        i = rng.randrange(len(b) + 1)
        if op == 0 and b:
            b[min(i, len(b) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1 and b:
            b[min(i, len(b) - 1)] = rng.randrange(256)
        elif op == 2:
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 3:
            del b[i:i + rng.randint(1, 40)]
        elif op == 4:
            del b[i:]
        elif op == 5:
            j = rng.randrange(len(b) + 1)
            b[i:i] = b[min(i, j):max(i, j)][:600]
        elif op == 6:
            b[i:i] = rng.choice((b"\n", b"\r", b"\r\n", b"\\", b'"', b"\x00", b"\xff", b"\xc3"))
        else:
            b[i:i] = rng.choice((b" ", b"\t", b"{}", b"[]", b",", b":"))
    return bytes(b)


def _resign(rng, d, side, counter):
    """Text of dict `d` with a sig: the right key (a valid but hostile message), a wrong
    one, the other direction's, the old sig, none, or a sig that is not a hex string."""
    d = dict(d)
    old = d.pop("sig", None)
    how = rng.randrange(7)
    how = 0 if how > 4 else how                          # the right key: 3 in 7
    tbl = d.get("tbl")
    own = table_key(KEY, tbl if type(tbl) is int else 0)
    right = command_key(own) if side == "t" else own
    if how <= 2:
        if rng.random() < 0.7:
            d["seq"] = 2 * SEQ_BOOT + counter * 64        # fresh: not a replay
        key = (right, b"not the key", own if side == "t" else command_key(own))[how]
        try:
            return encode(d, key).rstrip(b"\n")
        except (ValueError, UnicodeError, TypeError):    # floats, null, surrogates
            how = 3
    if how == 3:
        d["sig"] = old
    elif how == 4:
        d["sig"] = rng.choice((1, None, "zz" * 32, "0" * 63, "0" * 64, [old], str(old).upper()))
    return json.dumps(d, separators=rng.choice(((",", ":"), (", ", ": ")))).encode()


def _structural(rng, line, side, counter):
    d = json.loads(line)
    op = rng.randrange(6)
    key = rng.choice(FIELDS) if rng.random() < 0.5 else rng.choice(sorted(d))
    if op <= 1:
        val = rng.choice(HOSTILE)
        if key == "seq" and type(val) is int and val > 2 * SEQ_BOOT:
            val = -1                                     # keep the stream usable: see _probe
        d[key] = val
        return _resign(rng, d, side, counter)
    if op == 2:
        d.pop(key, None)
        return _resign(rng, d, side, counter)
    text = _resign(rng, d, side, counter)
    if op == 3:                                          # a key twice: the last one wins
        val = json.dumps(rng.choice(HOSTILE)).encode() if rng.random() < 0.7 else \
            json.dumps(d.get(key, 1)).encode()
        dup = b'"' + key.encode() + b'":' + val
        return (text[:-1] + b"," + dup + b"}") if rng.random() < 0.5 else (b"{" + dup + b"," + text[1:])
    if op == 4:
        return text[:-1] + b',"' + key.encode() + b'":' + _deep(rng).encode() + b"}"
    return text[:-1] + b',"' + key.encode() + b'":' + _number_text(rng).encode() + b"}"


def gen_wire(rng, side, counter=0):
    """One input for the Decoder of `side` ("t": a table's, "d": the desk's)."""
    cmds, reports = POOL
    mine, other = (cmds, reports) if side == "t" else (reports, cmds)
    pick = lambda: rng.choice(mine) if rng.random() < 0.85 else rng.choice(other)  # noqa: E731
    kind = rng.randrange(10)
    if kind == 0:
        n = rng.choice((0, 1, 8, 100, 1100, 3000))
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, n)))
    if kind <= 3:
        return _bytes_mutate(rng, pick().rstrip(b"\n"))
    if kind <= 7:
        line = pick().rstrip(b"\n")
        out = _structural(rng, line, side, counter)
        return _bytes_mutate(rng, out) if rng.random() < 0.15 else out
    if kind == 8:                                        # lines together: replays, splices
        parts = [pick().rstrip(b"\n") for _ in range(rng.randint(2, 5))]
        if rng.random() < 0.5:
            parts.append(parts[0])
        return rng.choice((b"\n", b"\r\n", b"\n\n")).join(parts)
    line = pick().rstrip(b"\n")                          # about MAX_LINE_BYTES long
    pad = wire.MAX_LINE_BYTES - len(line) + rng.randint(-3, 3)
    d = json.loads(line)
    d["pad"] = "x" * max(pad - 10, 1)
    return _resign(rng, d, side, counter)


# --- inputs for the record parser -----------------------------------------------------------

EVENTS = ({"ev": "lp", "A": -500}, {"ev": "lp", "B": -8000, "by": "B"}, {"ev": "lp", "A": 100, "cost": True},
          {"ev": "turn_end"}, {"ev": "undo"}, {"ev": "tick"}, {"ev": "duel_end", "winner": "A"},
          {"ev": "surrender", "p": "B"}, {"ev": "penalty", "p": "A", "kind": "warning", "code": "slow_play"},
          {"ev": "judge_fix", "p": "B", "lp": 4000}, {"ev": "judge_void", "p": "A", "code": "tardiness"},
          {"ev": "extend", "ms": 60000}, {"ev": "duel_start", "first": "B"}, {"ev": "seated", "p": "A"},
          {"ev": "round_start", "round": 4, "kind": "swiss"})
EV_KEYS = ("t", "ev", "A", "B", "p", "kind", "code", "lp", "ms", "first", "winner", "cost", "by",
           "round", "limit_s", "judge", "x")


def gen_record(rng, counter=0):
    """One record line (bytes, no newline)."""
    ev = dict(rng.choice(EVENTS), t=2000 + counter * 50 + rng.choice((0, 0, 1, -1, 500)))
    kind = rng.randrange(8)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, rng.choice((10, 200, 1100)))))
    line = json.dumps(ev, ensure_ascii=rng.random() < 0.5,
                      separators=rng.choice(((",", ":"), (", ", ": ")))).encode()
    if kind == 1:
        return line
    if kind == 2:
        return _bytes_mutate(rng, line)
    key = rng.choice(EV_KEYS)
    if kind == 3:
        ev[key] = rng.choice(HOSTILE)
        try:
            return json.dumps(ev).encode()
        except ValueError:
            return line
    if kind == 4:
        return line[:-1] + b', "' + key.encode() + b'": ' + json.dumps(rng.choice(HOSTILE)).encode() + b"}"
    if kind == 5:
        return line[:-1] + b', "' + key.encode() + b'": ' + _deep(rng).encode() + b"}"
    if kind == 6:
        return line[:-1] + b', "' + key.encode() + b'": ' + _number_text(rng).encode() + b"}"
    return rng.choice((b"\xef\xbb\xbf", b"", b" ")) + line + rng.choice(
        (b"\r", b",", b"}", b"\x00", b" ", b"\n{}", b"x" * rng.choice((1, 1100))))


def gen_input(rng, kind, counter=0):
    return gen_record(rng, counter) if kind == "p" else gen_wire(rng, kind, counter)


def corpus(seed, n):
    """A fixed sample: [(target, bytes)], the three targets in turn."""
    rng = random.Random(seed)
    return [("tdp"[i % 3], gen_input(rng, "tdp"[i % 3], i)) for i in range(n)]
