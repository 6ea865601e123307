"""Fuzzing the table's input paths: the wire decoder (both ends), the record parser, the key
handler (core/keys.py) and the UI (core/ui.py). 0 crashes, 0 state corruption.

Generators (a seeded random.Random in, one input out) make arbitrary bytes, near-valid lines
(valid signed messages and events, mutated: flipped bytes, cuts, duplicated keys, huge numbers,
deep nesting, wrong types) and valid-but-hostile ones (well signed, extreme values). The
generators are in fuzz_inputs.py; the wire and record targets and their invariants in
upy_fuzz.py (they run under MicroPython too); the key and UI targets in fuzz_targets.py.

soak(minutes, scratch_dir) runs each target for its share of the time (the wire and record
targets under atheris, coverage-guided from a seed corpus, when it imports; else a random
loop); bench(scratch_dir) a short fixed-size run. Both yield tests/bench/common.py metrics,
and both run a fixed seeded corpus under the real MicroPython (upy_fuzz.py).

    python tests/faults/soak_fuzz.py [minutes]       # the soak, metrics as JSON lines
"""
import binascii
import json
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for _p in (os.path.join(ROOT, "firmware"), ROOT):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from tests.bench.common import metric  # noqa: E402
from tests.faults import upy_fuzz  # noqa: E402
from tests.faults.fuzz_inputs import POOL, corpus, gen_input, gen_record  # noqa: E402
from tests.faults.fuzz_targets import KeysTarget, UiTarget  # noqa: E402
from tests.faults.upy_fuzz import Corrupt, run_one  # noqa: E402
from tests.host.upy import run_upy  # noqa: E402

UPY_CORPUS = 2000            # inputs of the fixed corpus run under MicroPython


# --- loops, MicroPython, atheris --------------------------------------------------------------

class Tally:
    def __init__(self):
        self.execs = {}
        self.crashes = 0
        self.corruptions = 0
        self.failures = []                 # the first few, for the report

    def fail(self, what, text):
        if text.startswith("crash"):
            self.crashes += 1
        else:
            self.corruptions += 1
        if len(self.failures) < 20:
            self.failures.append("%s: %s" % (what, text))

    def count(self, target, n=1):
        self.execs[target] = self.execs.get(target, 0) + n


def random_loop(kind, seconds, seed, tally, max_execs=None):
    """Feed target `kind` (t, d, p, keys, ui) random inputs for `seconds` or max_execs."""
    rng = random.Random(seed)
    tgts = upy_fuzz.targets()
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end and (max_execs is None or n < max_execs):
        if kind in ("keys", "ui"):
            try:
                (KeysTarget() if kind == "keys" else UiTarget()).run(random.Random(rng.random()))
            except Corrupt as e:
                tally.fail(kind, "corrupt: %s" % e)
            except Exception as e:           # noqa: BLE001
                tally.fail(kind, "crash: %s: %s" % (type(e).__name__, e))
        else:
            _, fail = run_one(tgts, kind, gen_input(rng, kind, n))
            if fail:
                tally.fail(kind, fail)
                tgts = upy_fuzz.targets()
        n += 1
    tally.count(kind, n)


def run_corpus_upy(path_dir, seed=7, n=UPY_CORPUS):
    """The fixed corpus through CPython and MicroPython: (cpython outcomes, micropython
    outcomes, micropython summary (inputs, crashes, corruptions), stderr)."""
    items = corpus(seed, n)
    path = os.path.join(path_dir, "fuzz_corpus.txt")
    with open(path, "w") as f:
        for kind, data in items:
            f.write("%s %s\n" % (kind, binascii.hexlify(data).decode()))
    tgts = upy_fuzz.targets()
    mine = []
    for kind, data in items:
        outcome, fail = run_one(tgts, kind, data)
        if fail:
            tgts = upy_fuzz.targets()
            outcome = "FAIL " + fail
        mine.append(outcome)
    r = run_upy([os.path.join(HERE, "upy_fuzz.py"), path], timeout=600)
    theirs, summary = [], None
    for line in r.stdout.splitlines():
        parts = line.split()
        if parts and parts[0] == "done":
            summary = tuple(int(x) for x in parts[1:])
        elif len(parts) == 2:
            theirs.append(binascii.unhexlify(parts[1]).decode("utf-8", "surrogateescape"))
        elif len(parts) == 1:
            theirs.append("")
    return items, mine, theirs, summary, r.stderr


def upy_metrics(scratch):
    items, mine, theirs, summary, err = run_corpus_upy(scratch)
    crashes = (summary[1] if summary else len(items)) + sum(o.startswith("FAIL crash") for o in mine)
    corrupt = (summary[2] if summary else 0) + sum(o.startswith("FAIL corrupt") for o in mine)
    differ = sum(1 for a, b in zip(mine, theirs) if a != b) + abs(len(mine) - len(theirs))
    yield metric("fuzz_crashes_micropython", crashes, "crashes", 0, exact=True,
                 note="%d inputs (decoder x2, parser) under micropython and CPython" % len(items))
    yield metric("fuzz_state_corruptions_micropython", corrupt, "corruptions", 0, exact=True)
    yield metric("fuzz_outcomes_differing_micropython", differ, "inputs",
                 note="outcome per input, CPython vs MicroPython (see test_fuzz.py)")


ATHERIS_CHILD = os.path.abspath(__file__)


def atheris_available():
    try:
        import atheris  # noqa: F401
        return True
    except ImportError:
        return False


def run_atheris(kind, seconds, scratch, tally):
    """Coverage-guided: libFuzzer's loop over target `kind` ("wire" or "record") in a child
    process for `seconds`, from a seed corpus of valid lines. Failures are written by the
    child, one a line; execs come from libFuzzer's final stats."""
    corpus_dir = os.path.join(scratch, "atheris_" + kind)
    os.makedirs(corpus_dir, exist_ok=True)
    rng = random.Random(3)
    seeds = ([b"\x00" + l for l in POOL[0]] + [b"\x01" + l for l in POOL[1]] if kind == "wire"
             else [gen_record(rng, i) for i in range(64)])
    for i, s in enumerate(seeds):
        with open(os.path.join(corpus_dir, "seed%03d" % i), "wb") as f:
            f.write(s)
    fails = os.path.join(scratch, "atheris_%s_failures.txt" % kind)
    open(fails, "w").close()
    r = subprocess.run([sys.executable, ATHERIS_CHILD, "--atheris", kind, fails, corpus_dir,
                        "-max_total_time=%d" % max(1, int(seconds)), "-print_final_stats=1",
                        "-max_len=4096", "-timeout=20", "-rss_limit_mb=2048"],
                       capture_output=True, text=True, cwd=ROOT, timeout=seconds + 120)
    execs = 0
    for line in r.stderr.splitlines():
        if line.startswith("stat::number_of_executed_units:"):
            execs = int(line.split(":")[-1])
    tally.count("atheris_" + kind, execs)
    with open(fails) as f:
        for line in f:
            tally.fail("atheris_" + kind, line.strip())
    if execs == 0:                      # the child itself died: that is a crash too
        tally.fail("atheris_" + kind, "crash: fuzzer exited %d: %s" % (r.returncode, r.stderr[-500:]))


def _atheris_child(kind, fails_path, argv):
    import atheris
    with atheris.instrument_imports():
        from duelclock.core import jsonio, record, replay, sign  # noqa: F401
        from duelclock.core import wire as _w  # noqa: F401
    tgts = [upy_fuzz.targets()]

    def one(data):
        if kind == "wire":
            if not data:
                return
            which, data = "td"[data[0] & 1], data[1:]
        else:
            which = "p"
        _, fail = run_one(tgts[0], which, data)
        if fail:
            with open(fails_path, "a") as f:
                f.write("%s %s\n" % (fail.replace("\n", " ")[:300], binascii.hexlify(data[:200]).decode()))
            tgts[0] = upy_fuzz.targets()

    atheris.Setup([sys.argv[0]] + argv, one)
    atheris.Fuzz()


# --- soak and bench ---------------------------------------------------------------------------

SHARES = (("wire", 0.3), ("record", 0.3), ("keys", 0.15), ("ui", 0.25))


def _metrics(tally, seconds):
    total = sum(tally.execs.values())
    yield metric("fuzz_crashes", tally.crashes, "crashes", 0, exact=True,
                 note="; ".join(tally.failures[:3]) or None)
    yield metric("fuzz_state_corruptions", tally.corruptions, "corruptions", 0, exact=True)
    yield metric("fuzz_execs", total, "inputs", note="in %.0f s: %s" % (seconds, ", ".join(
        "%s %d" % kv for kv in sorted(tally.execs.items()))))
    for target, n in sorted(tally.execs.items()):
        yield metric("fuzz_execs_" + target, n, "inputs")


def soak(minutes, scratch_dir):
    """Each target for its share of `minutes`, then the MicroPython corpus."""
    os.makedirs(scratch_dir, exist_ok=True)
    tally = Tally()
    t0 = time.monotonic()
    budget_s = minutes * 60.0
    fuzzer = atheris_available()
    for target, share in SHARES:
        s = budget_s * share
        if target in ("wire", "record") and fuzzer:
            run_atheris(target, s, scratch_dir, tally)
        elif target == "wire":
            random_loop("t", s / 2, 1, tally)
            random_loop("d", s / 2, 2, tally)
        elif target == "record":
            random_loop("p", s, 3, tally)
        else:
            random_loop(target, s, 4, tally)
    yield from _metrics(tally, time.monotonic() - t0)
    yield from upy_metrics(scratch_dir)


def bench(scratch_dir):
    """A fixed-size run: 3,000 inputs for each decoder and the parser, 100 key and 60 UI
    sessions, and the MicroPython corpus."""
    os.makedirs(scratch_dir, exist_ok=True)
    tally = Tally()
    t0 = time.monotonic()
    for kind, n, seed in (("t", 3000, 11), ("d", 3000, 12), ("p", 3000, 13), ("keys", 100, 14),
                          ("ui", 60, 15)):
        random_loop(kind, 1e9, seed, tally, max_execs=n)
    yield from _metrics(tally, time.monotonic() - t0)
    yield from upy_metrics(scratch_dir)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--atheris"]:
        _atheris_child(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            for m in soak(float(sys.argv[1]) if len(sys.argv) > 1 else 60.0, d):
                print(json.dumps(m), flush=True)
