"""The desk's Encoder (desk_wire.py) writes wire.Encoder's lines byte for byte, escapes,
non-ASCII and refusals included: a table verifies what it gets against core/sign.py."""
import pytest

from duelclock.core.wire import Encoder
from duelclock_desk.desk_wire import DeskEncoder

KEY = bytes(range(32))
ROUND = {"round": 3, "kind": "swiss", "start_ms": -5, "limit_s": 2700, "cap_s": 1800,
         "extra_turns": 1, "seating": False}
MESSAGES = [
    ("round", ROUND),
    ("round", dict(ROUND, names={"A": "Kim Minjun", "B": "Ünal Çelik 김민준"}, lang="ko",
                   pens=[{"p": "A", "kind": "warning", "code": "slow_play"}])),
    ("round", dict(ROUND, names={"A": 'say "hi"\\', "B": "tab\there\nline\x01\x7f"})),
    ("rules", {"name": "ID", "settings": {"extend_ok": True, "x": -1, "s": "a\u2028b"}}),
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
    ("rules", {"name": "ID", "settings": {"s%d" % i: "x" * 60 for i in range(16)}}, 1),
])
def test_refuses_what_wire_encoder_refuses_and_spends_no_seq(k, fields, tbl):
    ref, desk = Encoder(KEY, 7), DeskEncoder(KEY, 7)
    with pytest.raises(ValueError):
        ref.build(k, fields, tbl)
    with pytest.raises(ValueError):
        desk.build(k, fields, tbl)
    assert desk.seq == ref.seq == 7 * (1 << 24)
