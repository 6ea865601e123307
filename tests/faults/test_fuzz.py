"""Fuzzing, short form (the hour-long form: soak_fuzz.soak): the wire decoder at both ends,
the record parser, the key handler and the UI under hypothesis, and a fixed corpus under the
real MicroPython. 0 crashes and 0 state corruptions (invariants: upy_fuzz.py, soak_fuzz.py).

Beyond tests/core/test_wire.py (random bytes, one case per drop reason), test_properties.py
(generated match records) and test_ui.py's key mashing (one seeded sequence, one check): here
inputs are mutated valid signed lines and valid-but-hostile ones, every input is followed by a
check that the Decoder still takes a valid message and that its counters add up, taken
messages must carry their sender's sig and a fresh seq, and the UI runs with clock steps,
desk commands and failing journal writes, its journal replaying to the state it shows."""
import json

from hypothesis import HealthCheck, given, settings, strategies as st

from duelclock.core import wire
from duelclock.core.jsonio import MAX_DEPTH, strict_json
from tests.faults import upy_fuzz
from tests.faults.fuzz_inputs import POOL, gen_input
from tests.faults.fuzz_targets import KeysTarget, UiTarget
from tests.faults.soak_fuzz import Tally, random_loop, run_corpus_upy
from tests.faults.upy_fuzz import run_one

FAST = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SESSION = 6                     # inputs fed to one target in a row (state carries over)


def feed(kind, rng, extra):
    tgts = upy_fuzz.targets()
    inputs = [gen_input(rng, kind, i) for i in range(SESSION)] + [extra]
    for data in inputs:
        outcome, fail = run_one(tgts, kind, data)
        assert fail is None, (fail, data[:300])


@FAST
@given(st.randoms(use_true_random=False), st.binary(max_size=1200))
def test_a_tables_decoder_takes_any_bytes(rng, extra):
    feed("t", rng, extra)


@FAST
@given(st.randoms(use_true_random=False), st.binary(max_size=1200))
def test_the_desks_decoder_takes_any_bytes(rng, extra):
    feed("d", rng, extra)


@FAST
@given(st.randoms(use_true_random=False), st.binary(max_size=1200))
def test_the_record_parser_takes_any_line(rng, extra):
    feed("p", rng, extra)


@FAST
@given(st.randoms(use_true_random=False))
def test_keys_from_any_levels_at_any_times(rng):
    KeysTarget().run(rng)


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False))
def test_the_ui_under_any_keys_times_and_journal_failures(rng):
    UiTarget().run(rng)


def _cpython_strict(s):
    # RFC 8259 through CPython: no NaN/Infinity, nesting up to MAX_DEPTH, no lone surrogate.
    def bad_constant(name):
        raise ValueError(name)

    try:
        v = json.loads(s, parse_constant=bad_constant)
    except (ValueError, RecursionError):
        return False

    def ok(x, depth):
        if type(x) is str:
            return not any(0xD800 <= ord(c) <= 0xDFFF for c in x)
        if type(x) in (list, dict):
            if depth >= MAX_DEPTH:
                return False
            items = list(x.items()) if type(x) is dict else [(None, y) for y in x]
            return all((k is None or ok(k, depth + 1)) and ok(y, depth + 1) for k, y in items)
        return True
    return ok(v, 0)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.randoms(use_true_random=False))
def test_strict_json_is_rfc_8259_as_cpython_reads_it(rng):
    # jsonio.strict_json guards every record line on both Pythons: it must take exactly
    # what CPython's json takes (less NaN, depth > MAX_DEPTH and lone surrogates).
    raw = gen_input(rng, "p", rng.randrange(100))
    try:
        s = raw.decode("utf-8")
    except UnicodeError:
        return
    assert strict_json(s) == _cpython_strict(s), s[:300]


def test_the_harness_sees_a_decoder_that_takes_a_replay(monkeypatch):
    # The checks can fail: a Decoder that forgets seqs takes a line twice.
    monkeypatch.setattr(wire.Decoder, "_fresh", lambda self, stream, seq: True)
    line = POOL[0][4].rstrip(b"\n")            # extend for table 4
    tgts = upy_fuzz.targets()
    assert run_one(tgts, "t", line)[1] is None
    assert run_one(tgts, "t", line)[1].startswith("corrupt: took seq")


def test_seeded_inputs_to_every_target_crash_and_corrupt_nothing():
    tally = Tally()
    # a count of inputs per target, not a time: a busy machine runs them slower, not fewer
    # (about 2 s each on an idle one; the 120-s bound only stops a hung target)
    counts = {"t": 2000, "d": 2000, "p": 2000, "keys": 60, "ui": 60}
    for kind, seed in (("t", 21), ("d", 22), ("p", 23), ("keys", 24), ("ui", 25)):
        random_loop(kind, 120.0, seed, tally, max_execs=counts[kind])
    assert (tally.crashes, tally.corruptions) == (0, 0), tally.failures
    assert tally.execs == counts, tally.execs


def _normal(outcome):
    # MicroPython's json.loads takes some text CPython's refuses (leading zeros, raw control
    # characters) and the other way round (Infinity): such a line is dropped on both, as
    # "json" on one and later (field, sig) on the other. What must agree: the messages
    # taken and the lines dropped; the reasons may differ only where one says "json".
    if not outcome.startswith("m"):
        return outcome, None
    taken, _, drops = outcome.partition(" ")
    reasons = [part.split("=") for part in drops.split(",") if part]
    return (taken, sum(int(n) for _, n in reasons)), "json" in [r for r, _ in reasons]


def test_micropython_runs_the_corpus_without_a_crash_and_agrees(tmp_path):
    items, mine, theirs, summary, err = run_corpus_upy(str(tmp_path))
    assert summary == (len(items), 0, 0), err[-2000:]
    assert not [o for o in mine if o.startswith("FAIL")]
    assert len(theirs) == len(mine)
    differ = [(i, items[i], a, b) for i, (a, b) in enumerate(zip(mine, theirs))
              if _normal(a)[0] != _normal(b)[0] or (a != b and not (_normal(a)[1] or _normal(b)[1]))]
    assert differ == [], differ[:5]
    taken = sum(1 for o in mine if o.startswith("m") and not o.startswith("m0"))
    events = sum(1 for o in mine if o.startswith("ev "))
    assert taken >= 10 and events >= 100, (taken, events)      # the corpus reaches deep
