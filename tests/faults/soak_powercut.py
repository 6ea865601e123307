"""Power cuts: what survives them, in figures, for the tests (short), the bench and `make soak`.

    upy_cuts(scratch, cuts, seed)  N random power cuts over matches played by keys into the
                                   real table (tests/faults/upy_powercut.py, littlefs on a RAM
                                   flash chip, MicroPython unix port): its JSON summary
    room_clock_cuts(workdir, cuts) the real simulator and desk (simulator/room.py) at 1x:
                                   tables cut mid-round and plugged back in; per cut the
                                   phase before and after, and recovery_clock_error_ms
    soak(minutes, scratch_dir), bench(scratch_dir): metric dicts (tests/bench/common.py)

recovery_clock_error_ms: once a rebooted table has re-synced, its first state report's
remaining_ms (computed from its clock when it sent it) against the desk's own remaining time
at the instant the desk received that report (the store's state_ms): limit - (state_ms -
start_ms). The report's transit (serial relay, loopback) counts against the table, so the
figure is an upper bound on the clock error.
"""
import json
import os
import sqlite3
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for _p in (os.path.join(ROOT, "tests", "bench"), os.path.join(ROOT, "firmware"), ROOT):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import gen_record  # noqa: E402
from common import metric  # noqa: E402
from simulator.table import wait_for  # noqa: E402
from tests.host.upy import run_upy  # noqa: E402

DRIVER = os.path.join(ROOT, "tests", "faults", "upy_powercut.py")
CLOCK_BUDGET_MS = 50
MATCH_EVENTS = 120          # a short match: more rounds (start_match, rotation) per cut
FLASH_BLOCKS = 24           # 96 KB: the journal rotates every few matches


def upy_cuts(scratch, cuts, seed=1, blocks=FLASH_BLOCKS, events=MATCH_EVENTS):
    script = os.path.join(scratch, "match%d.jsonl" % events)
    with open(script, "w") as f:
        gen_record.write(f, events)
    r = run_upy([DRIVER, script, str(seed), str(cuts), str(blocks)],
                extra_path=("simulator", "tests/upy"), timeout=600)
    if r.returncode != 0 or not r.stdout.strip():
        raise RuntimeError("upy_powercut failed: %s" % (r.stderr or r.stdout)[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


# --- the simulator: a table's clock after a power cut -------------------------------------

def _state_row(store, tbl):
    db = sqlite3.connect("file:%s?mode=ro" % store, uri=True, timeout=5)
    try:
        row = db.execute("SELECT state, state_ms FROM tables WHERE tbl = ?", (tbl,)).fetchone()
    finally:
        db.close()
    if row is None or row[0] is None:
        return None, None
    return json.loads(row[0]), row[1]


def _synced_state_after(room, tbl, after_ms):
    """The table's first state report received after desk time `after_ms` that was sent
    with a synced clock: (state, desk ms it arrived)."""
    def got():
        state, at = _state_row(room.store, tbl)
        if state is not None and at > after_ms and "sync_age_ms" in state:
            return state, at
        return None
    return wait_for(got, 30, 0.02)


def _clock_error_ms(room, state, at_ms):
    r = room.status()["round"]
    desk_remaining = r["limit_s"] * 1000 - (at_ms - r["start_ms"])
    return abs(state["remaining_ms"] - desk_remaining)


SHOWN = ("round", "phase", "duel", "wins", "lp", "turn")
# Key presses between cuts, per table: check-ins are off, so a duel and LP entries.
MOVES = [["a", "a"], ["a", "5", "0", "0", "ok"], ["b", "1", "2", "0", "0", "ok"], ["turn"],
         ["b", "3", "0", "0", "ok"], ["turn"], ["a", "8", "0", "0", "ok"]]


def room_clock_cuts(workdir, cuts, tables=2):
    """`cuts` power cuts, round robin over the tables, in one room at real time. Returns
    [{"table", "phase_before", "phase_after", "same_state", "clock_error_ms",
    "clock_error_before_ms"}]."""
    from simulator.room import Room
    room = Room(workdir, serial_tables=tables, mqtt_tables=0, speed=1.0, ppm_spread=100.0)
    out = []
    try:
        room.start()
        room.start_round(1, limit="45m", cap="30m")
        wait_for(lambda: all(v["round"] == 1 and v["sync_age_ms"] is not None
                             for v in room.status()["tables"]), 30, 0.02)
        moves = {n: list(MOVES) for n in room.tables}
        for i in range(cuts):
            n = 1 + i % tables
            if moves[n]:
                room.tables[n].press(*moves[n].pop(0))
            mark = room.status()["desk_ms"]
            before, at = _synced_state_after(room, n, mark)     # the key's state report
            err_before = _clock_error_ms(room, before, at)
            room.tables[n].power_cut()
            cut_ms = room.status()["desk_ms"]
            room.tables[n].start()
            after, at = _synced_state_after(room, n, cut_ms)
            out.append({"table": n, "phase_before": before["phase"], "phase_after": after["phase"],
                        "same_state": all(before[k] == after[k] for k in SHOWN),
                        "before": {k: before[k] for k in SHOWN},
                        "after": {k: after[k] for k in SHOWN},
                        "clock_error_ms": _clock_error_ms(room, after, at),
                        "clock_error_before_ms": err_before})
    finally:
        room.stop()
    return out


# --- metrics --------------------------------------------------------------------------------

def _metrics(s, clock):
    yield metric("powercut_cuts", s["cuts"], "cuts", note=json.dumps(s["cut_in"], sort_keys=True))
    yield metric("powercut_confirmed_events_lost", s["confirmed_events_lost"], "events", 0,
                 exact=True, note="%d events confirmed over %d matches" %
                 (s["events_confirmed"], s["matches"]))
    yield metric("powercut_state_mismatches", s["state_mismatches"], "reboots", 0, exact=True)
    if clock:
        worst = max(c["clock_error_ms"] for c in clock)
        yield metric("recovery_clock_error_powercut_ms", worst, "ms", CLOCK_BUDGET_MS,
                     note="worst of %d cuts on the simulator at 1x" % len(clock))
        ok = sum(1 for c in clock if c["same_state"] and c["clock_error_ms"] <= CLOCK_BUDGET_MS)
        yield metric("faults_survived_powercut", ok, "cuts", len(clock), exact=True)


def bench(scratch_dir):
    s = upy_cuts(scratch_dir, 1000, seed=1)
    clock = room_clock_cuts(os.path.join(scratch_dir, "room"), 4)
    for m in _metrics(s, clock):
        yield m


def soak(minutes, scratch_dir):
    """Batches of 1,000 cuts (new seeds) until `minutes` are up; a clock round at the end."""
    end = time.monotonic() + minutes * 60
    total = {"cuts": 0, "confirmed_events_lost": 0, "state_mismatches": 0,
             "events_confirmed": 0, "matches": 0, "cut_in": {}}
    seed = 1
    while True:
        s = upy_cuts(scratch_dir, 1000, seed=seed)
        for k in ("cuts", "confirmed_events_lost", "state_mismatches", "events_confirmed",
                  "matches"):
            total[k] += s[k]
        for k, v in s["cut_in"].items():
            total["cut_in"][k] = total["cut_in"].get(k, 0) + v
        seed += 1
        if time.monotonic() >= end:
            break
    clock = room_clock_cuts(os.path.join(scratch_dir, "room"), 10)
    for m in _metrics(total, clock):
        yield m
