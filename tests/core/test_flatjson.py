# flatjson.canonical_flat: a journal line's canonical JSON (sign.py) made from its bytes,
# for the record messages. Plain functions: the core suite runs under MicroPython too.
import json

from duelclock.core.flatjson import canonical_flat
from duelclock.core.jsonio import dumps_event
from duelclock.core.sign import canonical
from duelclock.core.wire import MAX_STR

MAX_KEYS = 16
# Keys that sort differently as pieces ('key":...') if compared wrongly: prefixes of one
# another, "_" and digits, upper before lower case.
KEYS = ("A", "B", "by", "b", "cost", "code", "c", "p", "kind", "judge", "first", "round",
        "start_ms", "start", "limit_s", "cap_s", "extra_turns", "seating", "x_1", "x1", "Z9")
WORDS = ("A", "B", "lp", "slow_play", "floor", "warning", "x", "Kim-Minsu", "a.b/c",
         "9", "true", "null", "{}", "[1]", ":", ",", "'", "#" * MAX_STR)


class _Rand:
    """The same numbers on every port (no random module under the core tests)."""

    def __init__(self, seed):
        self.s = seed

    def below(self, n):
        self.s = (self.s * 1103515245 + 12345) & 0x7FFFFFFF
        return (self.s >> 8) % n


def _value(r):
    k = r.below(9)
    if k == 0:
        return r.below(2) == 1
    if k == 1:
        return WORDS[r.below(len(WORDS))]
    if k == 2:
        return -r.below(10 ** 6)
    if k == 3:
        return 10 ** 15 - 1 - r.below(1000)          # 15 digits, the most it is sure of
    if k == 4:
        return 0
    if k == 5:
        return "".join(chr(33 + r.below(94)) for _ in range(1 + r.below(12)))  # any printable
    return r.below(100000)


def _event(r):
    ev = {"t": r.below(3600000), "ev": WORDS[r.below(len(WORDS) - 1)]}
    for _ in range(r.below(MAX_KEYS - 1)):
        ev[KEYS[r.below(len(KEYS))]] = _value(r)
    return ev


def test_canonical_flat_is_the_canonical_json_of_generated_event_lines():
    r = _Rand(26)
    sure = 0
    for _ in range(600):
        line = dumps_event(_event(r)).encode()
        got = canonical_flat(line, MAX_KEYS, MAX_STR)
        if got is not None:
            assert got == canonical(json.loads(line)), line
            sure += 1
    assert sure > 400, sure                 # unsure only for a "!", a '"' or a "\\"


def test_canonical_flat_is_sure_of_plain_events():
    for ev in ({"t": 0, "ev": "round_start", "round": 3, "kind": "swiss", "start_ms": 1000,
                "limit_s": 2400, "cap_s": 1800, "extra_turns": 1, "seating": False},
               {"t": 91000, "ev": "lp", "B": -1200, "cost": True, "by": "A"},
               {"t": 120000, "ev": "penalty", "p": "B", "kind": "warning",
                "code": "slow_play", "judge": "floor"},
               {"t": 5, "ev": "turn_end"},
               {"t": 2 ** 53 - 1 - 10 ** 15 * 9, "ev": "x", "n": -(10 ** 15 - 1)}):
        line = dumps_event(ev).encode()
        assert canonical_flat(line, MAX_KEYS, MAX_STR) == canonical(ev), line


def test_canonical_flat_is_none_where_the_bytes_cannot_make_it_sure():
    def line(**kv):
        ev = {"t": 1000, "ev": "lp"}
        ev.update(kv)
        return dumps_event(ev).encode()
    unsure = [
        line(judge='say "hi"'),                         # an escape
        line(judge="J\u00fcrgen"),                      # non-ASCII: escaped by dumps_event
        line(judge="a\tb"),                             # a control character
        line(judge="a b"),                              # a space but between the pairs
        line(judge="hey!"),                             # "!" sorts before '"' in a piece
        line(judge=""),                                 # an empty string
        line(judge="x" * (MAX_STR + 1)),                # a string over max_str
        line(n=10 ** 15),                               # 16 digits
        line(n=-(10 ** 15)),
        line(names={"A": "Kim", "B": "Lee"}),           # not flat
        line(n=[1, 2]),
        line(n=None),
        line(n=1.5),
        dumps_event(dict({"t": 1, "ev": "x"}, **{"k%d" % i: i for i in range(MAX_KEYS - 1)}))
        .encode(),                                      # over max_keys
        b'{"t": 1, "ev": "x", "a": 1, "a": 2}'[:-1],   # cut short
        b'{"t": 1, "ev": "x",  "a": 1}',               # another spacing
        b'{"t": 01, "ev": "x"}',                        # not an int JSON takes
        b'{"t": -0, "ev": "x"}',
        b'{"t": 1, "ev": "x", "a": tru}',
        b'{"t": 1, "ev": "x"} ',
        b'[1]',
        b'{}',
    ]
    for b in unsure:
        assert canonical_flat(b, MAX_KEYS, MAX_STR) is None, b
    # at the bounds: still sure
    ok = line(judge="x" * MAX_STR, n=10 ** 15 - 1)
    assert canonical_flat(ok, MAX_KEYS, MAX_STR) == canonical(json.loads(ok))
    many = dumps_event(dict({"t": 1, "ev": "x"}, **{"k%d" % i: i for i in range(MAX_KEYS - 2)}))
    assert canonical_flat(many.encode(), MAX_KEYS, MAX_STR) == canonical(json.loads(many))
