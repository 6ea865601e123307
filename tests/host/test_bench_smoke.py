"""The bench (tests/bench) runs and speaks its line format; its record replays as planned.
No timing is asserted: figures are the bench's business, not the suite's."""
import json
import os
import subprocess
import sys

import pytest

from duelclock.core.replay import Replay
from tests.bench import gen_record
from tests.host.upy import ROOT

RUN = os.path.join(ROOT, "tests", "bench", "run.py")
GEN = os.path.join(ROOT, "tests", "bench", "gen_record.py")
CORE_METRICS = {
    "replay_2000_upy_ms", "replay_2000_upy_process_ms", "replay_2000_cpython_ms",
    "replay_upy_over_cpython_ratio", "replay_2000_rejected", "replay_2000_heap_peak_bytes",
    "replay_2000_heap64k_ok", "core_mpy_bytes",
}


def test_core_group_prints_one_metric_per_line():
    r = subprocess.run([sys.executable, RUN, "--repeat", "1", "core"],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().split("\n")
    names = set()
    for line in lines:
        m = json.loads(line)
        assert {"metric", "value", "unit", "target"} <= set(m), line
        assert ("ok" in m) == (m["target"] is not None), line
        if "ok" in m:
            assert type(m["ok"]) is bool, line
        names.add(m["metric"])
    assert len(names) == len(lines)
    assert CORE_METRICS <= names


def test_unknown_group_is_refused():
    r = subprocess.run([sys.executable, RUN, "no_such_group"], capture_output=True, text=True,
                       timeout=60, cwd=ROOT)
    assert r.returncode == 2 and "no_such_group" in r.stderr and not r.stdout


def _replay(events):
    r = Replay()
    for ev in events:
        r.feed(gen_record.dumps(ev))
    return json.loads(r.verdict_json())


@pytest.mark.parametrize("n_events,seed", [(gen_record.MIN_EVENTS, 1), (300, 5), (2000, 1)])
def test_record_replays_to_its_planned_verdict(n_events, seed):
    events, expect = gen_record.build(n_events, seed)
    assert len(events) == n_events
    assert [ev["t"] for ev in events[1:]] == sorted(ev["t"] for ev in events[1:])
    v = _replay(events)
    for key in ("result", "wins", "duels", "phase", "lp", "penalties"):
        assert v[key] == expect[key], key
    assert [x["index"] for x in v["rejected"]] == expect["rejected_indexes"]
    assert len(expect["rejected_indexes"]) == 2


def test_record_is_deterministic_and_seeded():
    assert gen_record.build(500, 3) == gen_record.build(500, 3)
    assert gen_record.build(500, 3)[0] != gen_record.build(500, 4)[0]


def test_record_cli_writes_n_lines():
    r = subprocess.run([sys.executable, GEN, "120"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    assert lines[-1] == "" and len(lines) == 121
    assert [json.loads(x) for x in lines[:-1]] == gen_record.build(120)[0]
    r = subprocess.run([sys.executable, GEN, str(gen_record.MIN_EVENTS - 1)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and not r.stdout
