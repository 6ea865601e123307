# The provision bench group: `duelclock provision` as a judge runs it, on BOARDS simulated
# boards (simulator/bridge.py: the unix port's REPL behind a socket) over the real mpremote
# transport, --jobs 1 as one board plugged in after another:
#
#   provision_s_per_board         the whole command's wall time over the boards, fresh flash
#                                 images: the firmware copied, config and key, every file
#                                 hashed, the self-test; median of 3 runs (1 with --repeat 1)
#   provision_again_s_per_board   the same command run again on the same boards: nothing to
#                                 copy, the hash check and the self-test only
#
# Target: forty boards in an hour is 90 s a board with a person plugging them in; the tool
# takes at most a third of that.
import os
import statistics
import subprocess
import sys
import time

from common import BenchError, ROOT, metric

from simulator.bridge import Bridge

BOARDS = 4
RUNS = 3                        # the median of at most this many runs
TARGET_S = 30


def _provision(b, run, boards):
    cmd = [sys.executable, "-m", "duelclock_desk.cli", "provision", "--tables", "1-40",
           "--key", b.path("event.key"), "--pins", "2468:1357", "--board", "SIM",
           "--jobs", "1", "--state", b.path("state%d.json" % run)]
    for bridge in boards:
        cmd += ["--port", bridge.url]
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
    took = time.monotonic() - t0
    if r.returncode or r.stdout.count("check ok") != len(boards):
        raise BenchError("provision failed: %s" % (r.stdout + r.stderr)[-600:])
    return took / len(boards)


def bench_provision(b):
    with open(b.path("event.key"), "w") as f:
        f.write("5e" * 32 + "\n")
    first, again = [], []
    for run in range(min(b.repeat, RUNS)):
        boards = [Bridge(b.path("p%d_%d.img" % (run, i)), tcp_port=0).start()
                  for i in range(BOARDS)]
        try:
            first.append(_provision(b, run, boards))
            again.append(_provision(b, run, boards))
        finally:
            for bridge in boards:
                bridge.close()
        for i in range(BOARDS):
            os.remove(b.path("p%d_%d.img" % (run, i)))
    note = "%d SIM boards, firmware from source (.py), over socket://" % BOARDS
    yield metric("provision_s_per_board", round(statistics.median(first), 2), "s", TARGET_S,
                 note=note)
    yield metric("provision_again_s_per_board", round(statistics.median(again), 2), "s",
                 note=note)
