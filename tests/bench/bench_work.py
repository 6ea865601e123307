# The work bench group: what the table's whole firmware costs the chip, counted in x86
# instructions of the MicroPython unix port under valgrind (cachegrind, no cache model),
# not in time: the unix port runs the same bytecode about 100x faster than an RP2040 and
# a shared machine's load moves times, not instruction counts.
#
#   lp_key_instructions        per key of LP entries (A opens an entry for A, X steps it
#                              +100, A confirms): the median over KEYS keys of the
#                              instructions from the key to the last window of its frame
#                              painted and presented, each key's own count from callgrind,
#                              which dumps its counters where the driver marks a key and
#                              its frame's end (upy_work.py's MARK: a builtin the firmware
#                              never calls); the mean goes in the note
#   hold_hint_instructions     the same for A's presses alone (2 of each entry's 10 keys):
#                              A waits on its release or its hold (menu), so what shows at
#                              its press is the hint in the status line or the entry's title
#   idle_instructions_per_s    per second of a duel on (both clocks ticking, the sync in
#                              its steady state, nobody at the keys): two idle runs IDLE_S
#                              apart in length, the difference over IDLE_S. A fifth of it
#                              can be gc_alloc's search for free blocks, which grows with
#                              the heap's fragmentation: a change in the driver's own
#                              objects has moved it by that much (the garbage is what
#                              feeds it: alloc_bytes_per_idle_s)
#
# Each is also counted for the firmware at BEFORE (the same driver, upy_work.py, runs any
# tree with the same Table, frame, key, session and renderer calls), with the targets:
# a fifth of BEFORE's work per key, a third per idle second. Needs valgrind (make bench
# installs it) and the clone's history for BEFORE (a shallow clone gives only today's).
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

from common import BenchError, ROOT, metric

BEFORE = "7c5d65a"                  # the firmware measured on the RP2040 before the
                                    # retained screen (226 ms from press to glass)
KEYS = 40
KEY_EVERY_MS = 300                  # upy_work.py's
STEPS = 8                           # upy_work.py's: an entry is A, X * STEPS, A
TAIL_MS = 2000                      # after the last key, the same in every run
IDLE_S = 30
HEAP = "512k"                       # GC as often as on a board with that much free
MARK = "mp_builtin_oct"             # upy_work.py calls oct() before each key
KEY_TARGET_PART = 5
IDLE_TARGET_PART = 3
UPY = [sys.executable, os.path.join(os.path.dirname(sys.executable), "micropython")]


def instructions(tree, keys, idle_ms):
    """x86 instructions of one upy_work.py run on firmware `tree`."""
    env = dict(os.environ, MICROPYPATH=":".join((tree, os.path.join(ROOT, "tests", "upy"),
                                                 ".frozen")))     # the frozen modules
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"] \
        + UPY + ["-X", "heapsize=" + HEAP, os.path.join(ROOT, "tests", "bench", "upy_work.py"),
                 str(keys), str(idle_ms)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, cwd=ROOT)
    m = re.search(r"I\s+refs:\s+([\d,]+)", r.stderr)
    if r.returncode != 0 or m is None or '"lp_a"' not in r.stdout:
        raise BenchError("upy_work.py %d %d on %s: %s" % (keys, idle_ms, tree, (r.stderr or r.stdout)[-800:]))
    return int(m.group(1).replace(",", ""))


def per_key(tree):
    """The instructions of each of KEYS keys (key to key) of one upy_work.py run on
    `tree`, in order: callgrind dumps its counters each time the driver marks a key."""
    env = dict(os.environ, MICROPYPATH=":".join((tree, os.path.join(ROOT, "tests", "upy"),
                                                 ".frozen")))
    out = tempfile.mkdtemp(prefix="work-keys-")
    try:
        cmd = ["valgrind", "--tool=callgrind", "--dump-before=" + MARK,
               "--callgrind-out-file=" + os.path.join(out, "cg.out")] \
            + UPY + ["-X", "heapsize=" + HEAP, os.path.join(ROOT, "tests", "bench", "upy_work.py"),
                     str(KEYS), str(TAIL_MS), "mark"]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800, cwd=ROOT)
        if r.returncode != 0 or '"lp_a"' not in r.stdout:
            raise BenchError("upy_work.py marked on %s: %s" % (tree, (r.stderr or r.stdout)[-800:]))
        parts = []
        for f in glob.glob(os.path.join(out, "cg.out.*")):
            n = f.rsplit(".", 1)[1]
            with open(f) as fh:
                m = re.search(r"^(?:summary|totals):\s+(\d+)", fh.read(), re.M)
            if n.isdigit() and m:
                parts.append((int(n), int(m.group(1))))
        parts.sort()
        # dump 1: the boot and the duel's start, before the first mark; then a key and
        # its frame, and the rest of its KEY_EVERY_MS, in turn
        keys = [ir for _, ir in parts[1:2 * KEYS + 1:2]]
        if len(keys) != KEYS:
            raise BenchError("callgrind gave %d dumps for %d keys" % (len(parts), KEYS))
        return keys
    finally:
        shutil.rmtree(out, ignore_errors=True)


def counts(tree):
    """(per LP key: median, mean; A's presses: median; per idle second) for firmware
    `tree`."""
    keys = per_key(tree)
    a = sorted(keys[i] for i in range(KEYS) if i % (STEPS + 2) in (0, STEPS + 1))
    keys = sorted(keys)
    span_ms = KEYS * KEY_EVERY_MS + TAIL_MS
    still = instructions(tree, 0, span_ms)
    longer = instructions(tree, 0, span_ms + IDLE_S * 1000)
    return keys[KEYS // 2], round(sum(keys) / KEYS), a[len(a) // 2], \
        round((longer - still) / IDLE_S)


def before_tree(scratch):
    """BEFORE's firmware/ exported into scratch (the board font beside it: a build
    product, not in git), or None without that history."""
    out = os.path.join(scratch, "before")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    git = subprocess.run("git archive %s firmware | tar -x -C %s" % (BEFORE, out), shell=True,
                         cwd=ROOT, capture_output=True, text=True)
    if git.returncode != 0:
        return None
    font = os.path.join("firmware", "duelclock", "font_ko.py")
    shutil.copy(os.path.join(ROOT, font), os.path.join(out, font))
    return os.path.join(out, "firmware")


def bench_work(b):
    if shutil.which("valgrind") is None:
        raise BenchError("valgrind is not installed: make bench installs it")
    key_now, mean_now, a_now, idle_now = counts(os.path.join(ROOT, "firmware"))
    tree = before_tree(b.scratch)
    if tree is None:
        yield metric("lp_key_instructions", key_now, "instructions",
                     note="%s is not in this clone's history: no target" % BEFORE)
        yield metric("hold_hint_instructions", a_now, "instructions")
        yield metric("idle_instructions_per_s", idle_now, "instructions")
        return
    key_before, mean_before, a_before, idle_before = counts(tree)
    yield metric("lp_key_instructions", key_now, "instructions", key_before // KEY_TARGET_PART,
                 note="median of %d keys; %d at %s (%.1fx fewer now); means %d and %d" % (
                     KEYS, key_before, BEFORE, key_before / max(1, key_now), mean_now,
                     mean_before))
    yield metric("hold_hint_instructions", a_now, "instructions", key_before // KEY_TARGET_PART,
                 note="median of A's %d presses; at %s A showed nothing before its release, "
                      "then its frame took %d" % (KEYS // 5, BEFORE, a_before))
    yield metric("idle_instructions_per_s", idle_now, "instructions", idle_before // IDLE_TARGET_PART,
                 note="a duel on, over %d s; %d at %s (%.1fx fewer now)" % (
                     IDLE_S, idle_before, BEFORE, idle_before / max(1, idle_now)))
