"""Replay never crashes on bad input: `duelclock replay FILE` (CPython) and `micropython -m
duelclock.replay FILE`, with the default heap and with a board's 64 KB heap.

Contract (docs/record.md): a bad line inside a record is rejected with a reason and
replay goes on (exit 0, one JSON line on stdout); input that is not a match record at all
gives a non-zero exit and one line on stderr. Both implementations print the same bytes.
"""
import json
import os
import random
import subprocess
import sys

import pytest

from tests.host.upy import run_upy

BIN = os.path.dirname(sys.executable)
DUELCLOCK = os.path.join(BIN, "duelclock")
BOARD_HEAP = "64k"
VERDICT_KEYS = {"result", "wins", "duels", "phase", "lp", "penalties", "rejected"}
TEN_MB = 10 * 1000 * 1000

START = b'{"t": 0, "ev": "round_start", "round": 3, "kind": "swiss"}'
DUEL = b'{"t": 1000, "ev": "duel_start", "first": "A"}'
DAMAGE = b'{"t": 9000, "ev": "lp", "A": -500}'    # applied after the bad lines: A at 7500


def record(*middle, eol=b"\n"):
    """START, DUEL, the middle lines, DAMAGE: the bad lines get indexes 2, 3, ..."""
    return eol.join((START, DUEL) + middle + (DAMAGE,)) + eol


def garbage(seed, n_bytes):
    return random.Random(seed).randbytes(n_bytes)


WRONG_TYPES = (
    b'{"t": 2000, "ev": "lp", "A": true}',
    b'{"t": 2000.5, "ev": "lp", "A": -100}',
    b'{"t": 2000, "ev": "lp", "A": "-100"}',
    b'{"t": 2000, "ev": "lp", "A": -100.0}',
    b'{"t": "2000", "ev": "tick"}',
    b'{"t": true, "ev": "tick"}',
    b'{"t": null, "ev": "tick"}',
    b'{"t": 2000, "ev": "lp", "A": -100, "cost": "yes"}',
    b'{"t": 2000, "ev": "judge_fix", "p": "A", "lp": 7000.0}',
    b'{"t": 2000, "ev": "judge_fix", "p": "A", "lp": false}',
    b'{"t": 2000, "ev": "duel_end", "winner": 1}',
    b'{"t": 2000, "ev": "surrender", "p": ["A"]}',
    b'{"t": 2000, "ev": "penalty", "p": {"A": 1}, "kind": "warning", "code": "x"}',
    b'{"t": 2000, "ev": "penalty", "p": "B", "kind": "warning", "code": 5}',
    b'{"t": 2000, "ev": "penalty", "p": "B", "kind": "warning", "code": ""}',
    b'{"t": 2000, "ev": ["lp"]}',
    b'[{"t": 2000, "ev": "tick"}]',
    b'"tick"',
    b'2000',
    b'null',
)
UNKNOWN_EVENTS = (
    b'{"t": 2000, "ev": "explode"}',
    b'{"t": 2000, "ev": "TICK"}',
    b'{"t": 2000, "ev": ""}',
    b'{"t": 2000}',
    b'{"ev": "tick"}',
    b'{"t": 2000, "ev": "' + b"x" * 1000 + b'"}',
)
HUGE_NUMBERS = (
    b'{"t": 2000, "ev": "lp", "A": -' + b"1" + b"0" * 30 + b'}',
    b'{"t": 2000, "ev": "lp", "B": ' + b"1" + b"0" * 30 + b'}',
    b'{"t": 1' + b"0" * 30 + b', "ev": "tick"}',
    b'{"t": -1' + b"0" * 30 + b', "ev": "tick"}',
    b'{"t": 2000, "ev": "judge_fix", "p": "A", "lp": 1' + b"0" * 30 + b'}',
    b'{"t": 2000, "ev": "lp", "A": -1e400}',
    b'{"t": 2000, "ev": "lp", "A": -' + b"9" * 3000 + b'}',
)
CAUTION = b'{"t": 2000, "ev": "penalty", "p": "A", "kind": "caution", "code": "%s"}'
NON_ASCII = (     # a penalty code in Hangul (applied), unknown events in Hangul and DEL
    CAUTION % "지각".encode("utf-8"),
    '{"t": 2000, "ev": "폭발"}'.encode("utf-8"),
    b'{"t": 2000, "ev": "\\u007f"}',
)
from duelclock.core.record import MAX_LINE_BYTES  # noqa: E402

PAD_MAX = b'{"t": 2000, "ev": "tick", "pad": "%s"}'
LINE_MAX = PAD_MAX % (b"x" * (MAX_LINE_BYTES - len(PAD_MAX) + 2))   # exactly the longest line

# name -> (file content, [(index, reason)] of the events that must be rejected, reason None
# for any reason; None for "some"). In every one the last line, DAMAGE, leaves A at 7500.
GOOD = {
    "not_json_in_middle": (record(b"this is not json", b"{", b'{"t": 2000, "ev": "tick"'),
                           [(2, "not JSON"), (3, "not JSON"), (4, "not JSON")]),
    "wrong_types": (record(*WRONG_TYPES), [(2 + i, None) for i in range(len(WRONG_TYPES))]),
    "unknown_events": (record(*UNKNOWN_EVENTS), [(2 + i, None) for i in range(len(UNKNOWN_EVENTS))]),
    "huge_numbers": (record(*HUGE_NUMBERS), [(2 + i, None) for i in range(len(HUGE_NUMBERS))]),
    "ten_mb_line": (record(b"x" * TEN_MB, b'{"t": 2000, "ev": "tick", "pad": "' + b"x" * TEN_MB + b'"}'),
                    [(2, "line too long"), (3, "line too long")]),
    "longest_line_is_read": (record(LINE_MAX, LINE_MAX[:-1] + b' }'), [(3, None)]),
    "deeply_nested_json": (record(b"[" * 2000 + b"]" * 2000, b"[" * 4000), [(2, None), (3, None)]),
    "nul_and_invalid_utf8": (record(b"\x00", b"\x00\x00\x00\x00{}", CAUTION % b"\xff\xfe"),
                             [(2, None), (3, None), (4, None)]),
    "binary_garbage_in_middle": (record(garbage(7, 3000)), None),
    "plain": (record(), []),
    "crlf": (record(eol=b"\r\n"), []),
    "blank_lines": (b"\n \n" + record(b"", b"   ", b"\t", b"\r", eol=b"\n\n") + b"\n\r\n", []),
    "no_final_newline": (record()[:-1], []),
    "non_ascii_strings": (record(*NON_ASCII), [(3, None), (4, None)]),
}
SAME_AS_PLAIN = ("crlf", "blank_lines", "no_final_newline")

# Not a match record at all: non-zero exit, one line on stderr, nothing on stdout.
NOT_A_RECORD = {
    "empty_file": b"",
    "only_blank_lines": b"\n \n\r\n\t\n",
    "first_line_not_json": b"hello\n" + record(),
    "first_line_a_json_array": b"[1, 2]\n" + record(),
    "first_event_not_round_start": DUEL + b"\n" + record(),
    "first_line_a_bad_round_start": START.replace(b"swiss", b"friendly") + b"\n" + DUEL + b"\n",
    "first_line_a_huge_limit": b'{"t": 0, "ev": "round_start", "round": 3, "kind": "swiss", "limit_s": 1'
                               + b"0" * 30 + b'}\n' + DUEL + b"\n",
    "first_line_ten_mb": b"x" * TEN_MB + b"\n" + record(),
    "binary_garbage": b"\xff" + garbage(11, 20000),
}

# Only for the CPython/MicroPython agreement: input that JSON parsers disagree on.
DISPUTED = {
    "utf8_bom": b"\xef\xbb\xbf" + record(),
    "json_near_misses": record(b'{"t": 2000, "ev": "tick",}', b'{"t": 2000 "ev": "tick"}',
                               b'{"t": 02000, "ev": "tick"}', b'{"t": 2000, "ev": "tick"}\x00',
                               b'{"t": NaN, "ev": "tick"}', b'{"t": 2000, "ev": "lp", "A": -Infinity}',
                               CAUTION % b"a\x01b"),
}
MISSING = ("missing_file", "directory")
ALL_CASES = sorted(GOOD) + sorted(NOT_A_RECORD) + sorted(DISPUTED) + list(MISSING)
IMPLS = ("cpython", "micropython", "micropython_64k")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad_input")
    paths = {name: _write(d, name, content) for name, (content, _) in GOOD.items()}
    for table in (NOT_A_RECORD, DISPUTED):
        paths.update((name, _write(d, name, content)) for name, content in table.items())
    paths["missing_file"] = str(d / "no_such_record.jsonl")
    paths["directory"] = str(d)
    return paths


def _write(d, name, content):
    path = d / (name + ".jsonl")
    path.write_bytes(content)
    return str(path)


@pytest.fixture(scope="module")
def run(files):
    """run(impl, case) -> (exit code, stdout bytes, stderr bytes), each pair run once."""
    done = {}

    def go(impl, case):
        if (impl, case) not in done:
            done[impl, case] = _run(impl, files[case])
        return done[impl, case]
    return go


def _run(impl, path):
    if impl == "cpython":
        r = subprocess.run([DUELCLOCK, "replay", path], capture_output=True, timeout=120)
        return r.returncode, r.stdout, r.stderr
    heap = BOARD_HEAP if impl == "micropython_64k" else None
    # A board's 64 KB heap holds no compiler (the firmware is frozen): run compiled there.
    r = run_upy(["-m", "duelclock.replay", path], heap=heap, compiled=heap is not None,
                encoding="utf-8", errors="surrogateescape")
    return r.returncode, _bytes(r.stdout), _bytes(r.stderr)


def _bytes(text):
    return text.encode("utf-8", "surrogateescape")


def verdict_of(result):
    code, out, err = result
    assert code == 0 and err == b"", err.decode("utf-8", "replace")[-2000:]
    assert out.endswith(b"\n") and out.count(b"\n") == 1, out[:2000]
    v = json.loads(out)
    assert set(v) == VERDICT_KEYS
    return v


def assert_refused(result):
    code, out, err = result
    assert code != 0 and out == b""
    one_line = err.endswith(b"\n") and err.count(b"\n") == 1 and err.strip()
    assert one_line, err.decode("utf-8", "replace")[-2000:]
    assert b"Traceback" not in err


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", sorted(GOOD))
def test_bad_lines_are_rejected_and_replay_goes_on(run, impl, case):
    _, rejected = GOOD[case]
    v = verdict_of(run(impl, case))
    assert (v["result"], v["phase"], v["lp"]) == ("pending", "duel", {"A": 7500, "B": 8000})
    if rejected is None:
        assert v["rejected"], "garbage lines must be rejected"
    else:
        assert [r["index"] for r in v["rejected"]] == [i for i, _ in rejected]
        for r, (_, why) in zip(v["rejected"], rejected):
            assert type(r["why"]) is str and r["why"]
            if why is not None:
                assert r["why"] == why
    if case in SAME_AS_PLAIN:
        assert run(impl, case)[1] == run(impl, "plain")[1]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", sorted(NOT_A_RECORD) + list(MISSING))
def test_input_that_is_not_a_record_is_refused_in_one_line(run, impl, case):
    assert_refused(run(impl, case))


@pytest.mark.parametrize("case", ALL_CASES)
def test_cpython_and_micropython_agree(run, case):
    outcomes = {impl: run(impl, case)[:2] for impl in IMPLS}
    assert outcomes["micropython"] == outcomes["cpython"]
    assert outcomes["micropython_64k"] == outcomes["cpython"]
