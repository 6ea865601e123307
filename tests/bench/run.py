# `make bench`: measure duelclock and print one JSON object per line,
#   {"metric": NAME, "value": V, "unit": U, "target": T, "group": G}   plus "ok": true/false
# when T is set. report.py runs this and writes docs/performance.md from the lines.
# A target is met when value <= target, except for metrics marked exact (value == target).
#
#   .venv/bin/python tests/bench/run.py [--repeat N] [GROUP ...]     (default: every group)
#
# Timings are medians over N runs (default 7; --repeat or DUELCLOCK_BENCH_REPEAT). The machine
# is noisy: the bench reports, it never fails on a figure; a run that could not measure at all
# (replay crashed, wrong verdict) exits 1.
#
# A group is one function in GROUPS taking a Bench (common.py) and yielding metric dicts
# (common.metric()): core here, firmware (bench_firmware.py), display (bench_display.py), link (bench_link.py), sim
# (bench_sim.py), dashboard (bench_dashboard.py), faults (bench_faults.py), provision
# (bench_provision.py), table_link (bench_table_link.py) and clients (bench_clients.py: MQTT
# client libraries side by side, --repeat rounds each in one process of its own). Each runs
# alone, in a scratch folder of its own (a group's tables and desk store start empty):
# run.py firmware; run.py round runs the link group's 2,000-table round starts alone (a
# whole run, with no group named, leaves it out: the link group runs them).
# A metric may carry a "note" (how it was measured, or why its value is null).
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import (Bench, BenchError, compile_mpy, metric, median_ms,  # noqa: E402
                    package_sources, run_upy)
import bench_clients  # noqa: E402
import bench_dashboard  # noqa: E402
import bench_display  # noqa: E402
import bench_faults  # noqa: E402
import bench_firmware  # noqa: E402
import bench_link  # noqa: E402
import bench_provision  # noqa: E402
import bench_sim  # noqa: E402
import bench_table_link  # noqa: E402
import bench_work  # noqa: E402
import gen_record  # noqa: E402

REPLAY_EVENTS = 2000
REPLAY_TARGET_MS = 100           # target: median replay of 2,000 events on the unix port
HEAP_LIMIT_KB = 64               # target: the replay must finish with -X heapsize=64k
HEAP_STEP_KB = 2
HEAP_MIN_KB = 8
HEAP_MAX_KB = 1024               # past this the search gives up (value null)


# --- core: the rules engine replaying a long record ------------------------------------
# The core bench group: gen_record.py's record of REPLAY_EVENTS events (a long match with
# rejected lines), replayed to its planned verdict:
#
#   replay_2000_upy_ms            replay_file alone under the MicroPython unix port, the
#                                 modules imported first (median of --repeat runs)
#   replay_2000_upy_process_ms    the whole `micropython -m duelclock.replay FILE` command:
#                                 start-up, compiling the modules, the verdict printed
#   upy_startup_ms                `micropython -c pass`, for scale
#   replay_2000_rejected          the lines the replay rejected: exactly the planned ones
#   replay_2000_cpython_ms        replay_file under CPython, in the bench's process
#   replay_upy_over_cpython_ratio  the two in-process figures' ratio
#   replay_2000_heap_peak_bytes   the smallest -X heapsize (HEAP_STEP_KB steps) that still
#                                 gives the verdict, the firmware from source (_mpy: from
#                                 armv6m .mpy files); the 64-bit port's objects are about
#                                 twice a 32-bit board's
#   replay_2000_heap64k_ok        1 when the command gives the verdict in a 64 KB heap
#   replay_2000_heap_live_...     the live heap the replay holds at most over the heap before
#                                 it (collected after every line)
#   core_mpy_bytes                duelclock.core compiled by mpy-cross -O3 -march=armv6m

# Runs under MicroPython: replays argv[1] argv[2] times, timing only replay_file (the
# modules are imported first), then prints the verdict and the times in us as JSON.
UPY_TIMER = """\
import sys, time, gc, json
from duelclock.replay import replay_file
path, n = sys.argv[1], int(sys.argv[2])
times_us = []
for _ in range(n):
    gc.collect()
    t0 = time.ticks_us()
    r = replay_file(path)
    times_us.append(time.ticks_diff(time.ticks_us(), t0))
print(r.verdict_json())
print(json.dumps(times_us))
"""

# Runs under MicroPython: feeds the record line by line and, after each line, collects
# and samples the live heap; prints the largest growth over the heap before the replay.
UPY_HEAP_SAMPLER = """\
import sys, gc
from duelclock.replay import read_lines
from duelclock.core.replay import Replay
gc.collect()
base = gc.mem_alloc()
top = base
r = Replay()
with open(sys.argv[1], "rb") as f:
    for line in read_lines(f):
        r.feed(line)
        gc.collect()
        used = gc.mem_alloc()
        if used > top:
            top = used
r.verdict_json()
print(top - base)
"""


def _expect_verdict(verdict_line, expect, who):
    """How many events were rejected; BenchError unless it is gen_record's planned verdict
    (so a replay that went 'over' early cannot pass for a fast one)."""
    v = json.loads(verdict_line)
    got = dict((k, v[k]) for k in ("result", "wins", "duels", "phase", "lp", "penalties"))
    want = dict((k, expect[k]) for k in got)
    rejected = [x["index"] for x in v["rejected"]]
    if got != want or rejected != expect["rejected_indexes"]:
        raise BenchError("%s replayed the bench record to %s, expected %s" % (who, verdict_line, expect))
    return len(rejected)


def smallest_heap_kb(works):
    """Smallest heap (KB, a multiple of HEAP_STEP_KB) from which every larger size up to
    a known-good one works(kb); None if nothing up to HEAP_MAX_KB works. Near the limit
    success depends on fragmentation (86k may pass where 88k fails), so a bisection
    would land on either side: walk down from the good size to the first failure."""
    good = HEAP_LIMIT_KB
    while not works(good):
        good *= 2
        if good > HEAP_MAX_KB:
            return None
    while good - HEAP_STEP_KB >= HEAP_MIN_KB and works(good - HEAP_STEP_KB):
        good -= HEAP_STEP_KB
    return good


def bench_core(b):
    record = b.path("record_%d.jsonl" % REPLAY_EVENTS)
    with open(record, "w") as f:
        expect = gen_record.write(f, REPLAY_EVENTS)

    # MicroPython, in process: replay_file only.
    timer = b.path("upy_timer.py")
    with open(timer, "w") as f:
        f.write(UPY_TIMER)
    r = run_upy([timer, record, str(b.repeat)])
    if r.returncode != 0:
        raise BenchError("micropython replay failed: " + r.stderr.strip())
    verdict_line, times_line = r.stdout.strip().split("\n")[-2:]
    rejected = _expect_verdict(verdict_line, expect, "micropython")
    upy_ms = round(statistics.median(json.loads(times_line)) / 1000, 2)
    yield metric("replay_%d_upy_ms" % REPLAY_EVENTS, upy_ms, "ms", REPLAY_TARGET_MS)

    # MicroPython, the whole command (interpreter start-up, compiling the modules, output).
    cmd = ["-m", "duelclock.replay", record]
    walls = []
    for _ in range(b.repeat):
        t0 = time.perf_counter()
        r = run_upy(cmd)
        walls.append(time.perf_counter() - t0)
        if r.returncode != 0 or r.stdout.strip() != verdict_line:
            raise BenchError("micropython -m duelclock.replay: " + (r.stderr.strip() or r.stdout))
    yield metric("replay_%d_upy_process_ms" % REPLAY_EVENTS, median_ms(walls), "ms", REPLAY_TARGET_MS)
    starts = []
    for _ in range(b.repeat):
        t0 = time.perf_counter()
        run_upy(["-c", "pass"])
        starts.append(time.perf_counter() - t0)
    yield metric("upy_startup_ms", median_ms(starts), "ms")
    yield metric("replay_%d_rejected" % REPLAY_EVENTS, rejected, "events",
                 len(expect["rejected_indexes"]), exact=True)

    # CPython, in this process.
    from duelclock.replay import replay_file
    walls = []
    for _ in range(b.repeat):
        t0 = time.perf_counter()
        rp = replay_file(record)
        walls.append(time.perf_counter() - t0)
    _expect_verdict(rp.verdict_json(), expect, "cpython")
    cpy_ms = median_ms(walls)
    yield metric("replay_%d_cpython_ms" % REPLAY_EVENTS, cpy_ms, "ms")
    yield metric("replay_upy_over_cpython_ratio", round(upy_ms / cpy_ms, 2), "x")

    # Heap: the smallest -X heapsize that still gives the verdict, from the .py sources
    # (the command as it is: compiling the modules counts) and from armv6m .mpy files.
    # The unix port is 64-bit: objects are about twice their size on an RP2040.
    mpy_dir = b.path("mpy")
    compile_mpy(package_sources("duelclock"), mpy_dir)
    for suffix, path in (("", None), ("_mpy", mpy_dir + ":.frozen")):
        def works(kb, path=path):
            r = run_upy(cmd, path=path, heap_kb=kb)
            return r.returncode == 0 and r.stdout.strip() == verdict_line
        peak_kb = smallest_heap_kb(works)
        yield metric("replay_%d_heap_peak%s_bytes" % (REPLAY_EVENTS, suffix),
                     peak_kb and peak_kb * 1024, "bytes")
        yield metric("replay_%d_heap64k%s_ok" % (REPLAY_EVENTS, suffix),
                     1 if works(HEAP_LIMIT_KB) else 0, "bool", 1, exact=True)

    # How much live heap the replay itself holds at most (collected after every line).
    sampler = b.path("upy_heap.py")
    with open(sampler, "w") as f:
        f.write(UPY_HEAP_SAMPLER)
    r = run_upy([sampler, record])
    if r.returncode != 0:
        raise BenchError("micropython heap sampler: " + r.stderr.strip())
    yield metric("replay_%d_heap_live_growth_bytes" % REPLAY_EVENTS, int(r.stdout.split()[-1]), "bytes")

    core = package_sources(os.path.join("duelclock", "core"))
    yield metric("core_mpy_bytes", compile_mpy(core, b.path("mpy_core")), "bytes")


GROUPS = {
    "clients": bench_clients.bench_clients,
    "core": bench_core,
    "dashboard": bench_dashboard.bench_dashboard,
    "display": bench_display.bench_display,
    "faults": bench_faults.bench_faults,
    "firmware": bench_firmware.bench_firmware,
    "link": bench_link.bench_link,
    "provision": bench_provision.bench_provision,
    "round": bench_link.bench_round,
    "sim": bench_sim.bench_sim,
    "table_link": bench_table_link.bench_table_link,
    "work": bench_work.bench_work,
}
PARTS = ("round",)              # groups that are part of another: named, or not run


def parse_args(argv):
    repeat = int(os.environ.get("DUELCLOCK_BENCH_REPEAT", "7"))
    groups = []
    i = 0
    while i < len(argv):
        if argv[i] == "--repeat" and i + 1 < len(argv):
            repeat = int(argv[i + 1])
            i += 2
            continue
        groups.append(argv[i])
        i += 1
    unknown = [g for g in groups if g not in GROUPS]
    if unknown or repeat < 1:
        raise ValueError("unknown group %s" % ", ".join(unknown) if unknown else "--repeat must be >= 1")
    return repeat, groups or sorted(g for g in GROUPS if g not in PARTS)


def main(argv):
    try:
        repeat, groups = parse_args(argv)
    except ValueError as e:
        sys.stderr.write("run.py: %s\nusage: run.py [--repeat N] [%s ...]\n" % (e, "|".join(sorted(GROUPS))))
        return 2
    scratch = tempfile.mkdtemp(prefix="duelclock-bench-")
    try:
        for name in groups:
            os.mkdir(os.path.join(scratch, name))
            b = Bench(repeat, os.path.join(scratch, name))
            try:
                for m in GROUPS[name](b):
                    print(json.dumps(dict(m, group=name)), flush=True)
            finally:
                b.procs.end_all()
    except BenchError as e:
        sys.stderr.write("run.py: %s\n" % e)
        return 1
    finally:
        shutil.rmtree(scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
