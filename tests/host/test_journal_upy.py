"""The journal under the real MicroPython unix port, and across interpreters.

tests/upy/test_journal.py (that module only) runs here under micropython (littlefs on a RAM disk, power
cuts at every block write). pytest also collects that module directly, where its
filesystem-generic tests run on CPython in a temp dir. The tests below add what only
CPython can set up: a journal written by one interpreter and read by the other, and a
real ENOSPC from the operating system (/dev/full).
"""
import json
import os

import pytest

from duelclock.core.jsonio import dumps_event
from duelclock.journal import Journal, JournalFull
from tests.host.upy import run_upy

EVENTS = [
    {"t": 0, "ev": "round_start", "round": 2, "kind": "swiss"},
    {"t": 60000, "ev": "duel_start", "first": "B"},
    {"t": 75000, "ev": "lp", "A": -1200, "by": "B"},
    {"t": 90000, "ev": "turn_end"},
    {"t": 99000, "ev": "lp", "B": -500, "cost": True, "by": "B"},
    {"t": 120000, "ev": "penalty", "p": "A", "kind": "warning", "code": "slow_play",
     "judge": "J\u00fcrgen"},
]
LINES = [dumps_event(e).encode() for e in EVENTS]


def _events(lines):
    # MicroPython's json writes non-ASCII as UTF-8, CPython's as \u escapes: the
    # records differ in bytes, not in events.
    return [json.loads(line) for line in lines]


def _recover(root):
    lines = []
    report = Journal(root).recover(lines.append)
    return lines, report


def test_journal_suite_under_micropython():
    r = run_upy(["tests/upy_run.py", "tests/upy", "test_journal"], extra_path=["tests/upy"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert " 0 failed" in r.stdout and not r.stdout.startswith("0 passed")
    assert "power cuts tested: " in r.stdout


def test_cpython_writes_micropython_resumes_and_seals(tmp_path):
    root = str(tmp_path / "journal")
    j = Journal(root)
    mid = j.start_match(EVENTS[0])
    for ev in EVENTS[1:4]:
        j.append(ev)
    with open(os.path.join(root, "m%d.jsonl" % mid), "ab") as f:
        f.write(LINES[4][:20])                            # an append cut short
    code = (
        "import json\n"
        "from duelclock.journal import Journal\n"
        "j = Journal(%r)\n"
        "r = j.recover(lambda line: print(line.decode()))\n"
        "print(json.dumps([r.match_id, r.good, r.torn, r.corrupt]))\n"
        "for line in %r:\n"
        "    j.append(json.loads(line))\n" % (root, [l.decode() for l in LINES[4:]]))
    r = run_upy(["-c", code])
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout.splitlines()
    assert [l.encode() for l in out[:4]] == LINES[:4]
    assert json.loads(out[4]) == [mid, 4, 1, 0]
    lines, report = _recover(root)
    assert lines[:4] == LINES[:4] and _events(lines) == EVENTS
    assert report.dropped == [(5, "torn")]


def test_micropython_writes_cpython_reads(tmp_path):
    root = str(tmp_path / "journal")
    code = (
        "import json\n"
        "from duelclock.journal import Journal\n"
        "j = Journal(%r)\n"
        "evs = [json.loads(l) for l in %r]\n"
        "j.start_match(evs[0])\n"
        "for ev in evs[1:]:\n"
        "    j.append(ev)\n"
        "j.mark_collected(1)\n" % (root, [l.decode() for l in LINES]))
    r = run_upy(["-c", code])
    assert r.returncode == 0, r.stdout + r.stderr
    j = Journal(root)
    assert j.matches() == [(1, os.path.getsize(os.path.join(root, "m1.jsonl")), True)]
    assert _events(j.export(1)) == EVENTS
    with open(os.path.join(root, "m1.jsonl"), "rb") as f:
        body = f.read()
    assert body.count(b"\n") == len(LINES) and b"\t" in body   # one record per line


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_enospc_from_the_os_is_journal_full(tmp_path):
    root = str(tmp_path / "journal")
    j = Journal(root, reserve_bytes=0)
    for _ in range(3):
        j.start_match(EVENTS[0])
        j.append(EVENTS[1])
    j.mark_collected(2)
    os.symlink("/dev/full", os.path.join(root, "m4.jsonl"))   # flash exhausted
    with pytest.raises(JournalFull) as e:
        j.start_match(EVENTS[0])
    assert e.value.uncollected == [1, 3, 4]
    assert j.current is None
    assert [m for m, _, _ in j.matches()] == [1, 3, 4]      # 2 went, collected
    with pytest.raises(ValueError):
        j.append(EVENTS[1])
    assert list(j.export(1)) == LINES[:2] and list(j.export(3)) == LINES[:2]
