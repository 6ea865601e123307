"""The desk's Encoder (desk_wire.py) writes wire.Encoder's lines byte for byte, escapes,
non-ASCII and refusals included: a table verifies what it gets against core/sign.py."""
import random

import pytest

from duelclock.core import sign
from duelclock.core.wire import Encoder
from duelclock_desk import desk_wire
from duelclock_desk.desk_wire import DeskEncoder

KEY = bytes(range(32))
ROUND = {"round": 3, "kind": "swiss", "start_ms": -5, "limit_s": 2700, "cap_s": 1800,
         "extra_turns": 1, "seating": False}
MESSAGES = [
    ("round", ROUND),
    ("round", dict(ROUND, names={"A": "Kim Minjun", "B": "Ünal Çelik 김민준"}, lang="ko",
                   pens=[{"p": "A", "kind": "warning", "code": "slow_play"}])),
    ("round", dict(ROUND, names={"A": 'say "hi"\\', "B": "tab\there\nline\x01\x7f"})),
    ("round", dict(ROUND, judge_extend=True)),
    ("extend", {"round": 3, "ms": 60000, "at_ms": -1}),
    ("sync", {"t1": 1, "t2": 2, "t3": 3, "re": 4}),
    ("ack", {"round": 1, "events": 0}),
]


@pytest.mark.parametrize("k,fields", MESSAGES)
def test_the_same_line_as_wire_encoder(k, fields):
    ref, desk = Encoder(KEY, 7), DeskEncoder(KEY, 7)
    for tbl in (1, 42, 9999):
        assert desk.build(k, fields, tbl) == ref.build(k, fields, tbl)
    assert desk.seq == ref.seq


@pytest.mark.parametrize("k,fields,tbl", [
    ("round", dict(ROUND, kind=1.5), 1),                 # a float: no canonical form
    ("round", dict(ROUND, names={"A": "x" * 65, "B": "y"}), 1),
    ("round", dict(ROUND, seq=3), 1),
    ("ack", {"round": 1, "events": 0}, None),            # the desk names the table
    ("round", dict(ROUND, pens=[{"p": "A", "kind": "warning", "code": "x" * 60}] * 16), 1),
])
def test_refuses_what_wire_encoder_refuses_and_spends_no_seq(k, fields, tbl):
    ref, desk = Encoder(KEY, 7), DeskEncoder(KEY, 7)
    with pytest.raises(ValueError):
        ref.build(k, fields, tbl)
    with pytest.raises(ValueError):
        desk.build(k, fields, tbl)
    assert desk.seq == ref.seq == 7 * (1 << 24)


# Characters a protocol string may hold that json.dumps and the canonical form could write
# apart: controls (short escapes \n \t \b \f \r), quote, backslash, DEL, non-ASCII, U+2028,
# astral (a surrogate pair in \u form if ensure_ascii slipped in), and a lone surrogate.
CHARS = ["a", "Z", "0", " ", "~", "\"", "\\", "/", "\x7f", "\u00e9", "\u2028", "\uffff",
         "\U0001f600", "\ud800"] + [chr(c) for c in range(32)]


def _value(rng, depth):
    kind = rng.randrange(6 if depth < 2 else 3)
    if kind == 0:
        return rng.choice([0, 1, -1, 2 ** 53 - 1, -(2 ** 53) + 1, rng.randrange(-10 ** 9, 10 ** 9)])
    if kind == 1:
        return "".join(rng.choice(CHARS) for _ in range(rng.randrange(0, 8)))
    if kind == 2:
        return rng.random() < 0.5
    if kind == 3:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    return {_value_str(rng): _value(rng, depth + 1) for _ in range(rng.randrange(0, 5))}


def _value_str(rng):
    return "".join(rng.choice(CHARS) for _ in range(rng.randrange(0, 6)))


def test_canonical_is_sign_canonical_on_generated_messages():
    # desk_wire.canonical (json.dumps) and desk_wire.signed_line stand in for core/sign.py's
    # on CPython (the desk, the bench's tables): the same bytes, or the same refusal.
    rng = random.Random(12)
    refused = 0
    for _ in range(20000):
        msg = {_value_str(rng): _value(rng, 0) for _ in range(rng.randrange(0, 7))}
        try:
            ref = sign.canonical(msg)
        except ValueError:                   # a lone surrogate: UTF-8 cannot carry it
            refused += 1
            with pytest.raises(ValueError):
                desk_wire.canonical(msg)
            continue
        assert desk_wire.canonical(msg) == ref, msg
        key = sign.Key(KEY)
        assert desk_wire.signed_line(msg, key) == sign.signed_line(msg, key)
    assert 0 < refused < 10000
