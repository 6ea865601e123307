# The simulator bench group (the room's budgets), with the real firmware (simulator SimTable:
# the MicroPython unix port running duelclock.app on boards/SIM) and the real desk
# (`duelclock desk`, through simulator.room.Room), at 1x time:
#
#   sim_tables_per_core   rooms of TABLE_STEPS tables in turn (half on serial, half on MQTT,
#                         crystals +/-100 ppm), a round started SETTLE_S after they are up,
#                         watched for WATCH_S through the desk's status API. A room passes
#                         while every table's error stays within BUDGET_MS: both the error
#                         it reports (sync_err_ms, its Clock's own estimate) and the error
#                         measured (its states' remaining time against the desk's round
#                         clock, see _watch). The largest passing room, divided by the cores
#   demo_wall_s           `python -m simulator.demo` (make demo once installed), wall time
import os
import signal
import subprocess
import sys
import time

from common import ROOT, metric

TABLE_STEPS = (8, 16, 24, 32)
SETTLE_S = 40                    # tables on before the round: their Clocks have their first
                                 # KEEP 16-s buckets (before that they report MAX_PPM errors)
WATCH_S = 20
WINDOW_S = 5
BUDGET_MS = 20
DEMO_TIMEOUT_S = 600


def _watch(room, seconds):
    """(clock error ms, the same with the states' delivery, max reported sync_err_ms, tables
    seen in the round) over `seconds`, polling the desk's status every second.

    Each poll gives per table m = (remaining time in its latest state, aged by the desk) -
    (the round's remaining time by the desk's clock) = d - e: its clock's error e (its
    desk-time estimate - desk time) and d >= 0, that state's way from the table's clock
    read to the desk's receipt stamp (which a busy desk or host stretches). The clock error
    is |min m| over each WINDOW_S (d at its smallest), the largest of those."""
    per = {}
    reported = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        s = room.status()
        r = s["round"]
        elapsed = s["desk_ms"] - r["start_ms"]
        slot = int((end - time.monotonic()) // WINDOW_S)
        for v in s["tables"]:
            if v["round"] != r["round"] or v["remaining_ms"] is None:
                continue
            m = v["remaining_ms"] - (r["limit_s"] * 1000 - elapsed)
            per.setdefault(v["table"], {}).setdefault(slot, []).append(m)
            reported = max(reported, v["sync_err_ms"] or 0)
        time.sleep(1.0)
    clock = raw = 0
    for slots in per.values():
        for ms in slots.values():
            clock = max(clock, abs(min(ms)))
            raw = max(raw, max(abs(m) for m in ms))
    return clock, raw, reported, len(per)


def room_passes(b, n):
    """Run a room of n tables; (passed, measured, reported, note)."""
    from simulator.room import Room
    room = Room(b.path("sim%d" % n), serial_tables=n // 2, mqtt_tables=n - n // 2, speed=1.0,
                ppm_spread=100.0, seed=n, size="128x64", event="benchsim%d" % n)
    try:
        room.start()
        time.sleep(SETTLE_S)
        room.start_round(1)
        measured, raw, reported, seen = _watch(room, WATCH_S)
        dead = [t.number for t in room.tables.values() if not t.alive]
    finally:
        room.stop()
    ok = seen == n and not dead and measured <= BUDGET_MS and reported <= BUDGET_MS
    note = ("%d tables: clock error measured %d ms (%d ms with the states' delivery), reported "
            "%d ms; %d in the round" % (n, measured, raw, reported, seen))
    if dead:
        note += ", tables %s died" % dead
    return ok, measured, reported, note


def bench_sim(b):
    cores = os.cpu_count() or 1
    best, notes = 0, []
    for n in TABLE_STEPS:
        ok, measured, reported, note = room_passes(b, n)
        notes.append(note)
        yield metric("sim_%d_tables_max_error_ms" % n, max(measured, reported), "ms", BUDGET_MS,
                     note=note)
        if not ok:
            break
        best = n
    yield metric("sim_tables_per_core", round(best / cores, 1), "tables",
                 note="%s%d real-firmware tables within %d ms at 1x on %d cores, %d s each room "
                 "(tried %s)" % ("at least: " if best == TABLE_STEPS[-1] else "", best, BUDGET_MS,
                                 cores, WATCH_S, ", ".join(str(n) for n in TABLE_STEPS)))

    out = b.path("demo")
    t0 = time.monotonic()
    p = b.procs.start([sys.executable, "-m", "simulator.demo", "--out", out], cwd=ROOT,
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = p.communicate(timeout=DEMO_TIMEOUT_S)
        wall = time.monotonic() - t0
        why = None if p.returncode == 0 else "exit %d: %s" % (
            p.returncode, (stderr.strip() or stdout.strip()).split("\n")[-1])
    except subprocess.TimeoutExpired:
        why = "still running after %d s" % DEMO_TIMEOUT_S
    finally:
        b.procs.end(p, grace_s=30, first=signal.SIGINT)    # the demo stops its room itself
    yield metric("demo_wall_s", None if why else round(wall, 1), "s",
                 note=why or "python -m simulator.demo: 8 tables, a 75-minute round at 40x")
