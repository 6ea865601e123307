# `make soak`: the long form of the fault-injection suite. Prints one JSON object
# per line, as `make bench` does ({"metric", "value", "unit", "target", "ok"}), and exits 1
# when a target is missed or a part could not run.
#
#   .venv/bin/python tests/faults/soak.py [--minutes PART=N ...] [PART ...]
#
# Parts, each a module tests/faults/soak_PART.py with soak(minutes, scratch_dir), a generator
# of metric dicts (tests/bench/common.py metric()), and bench(scratch_dir), its short form
# for `make bench` (tests/bench/bench_faults.py):
#   powercut   1,000 and more power cuts at random instants over matches, littlefs under
#              micropython; a cut table's clock after re-sync
#   network    broker, desk and table link killed, the desk's wall clock stepped, over a room
#              of simulated tables and the real desk
#   fuzz       the wire decoder, the record parser and the key handler (atheris where it
#              imports, else hypothesis), for an hour by default
# The parts run one after the other: the machine has 2 cores and the simulated tables need them.
import json
import os
import shutil
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests", "bench"), os.path.join(ROOT, "firmware")]

MINUTES = {"powercut": 15, "network": 20, "fuzz": 60}     # the defaults: about 95 minutes
CLOCK_BUDGET_MS = 50


class Worst:
    """recovery_clock_error_ms, the soak's clock budget: the worst of the parts' recovery_clock_error_*_ms
    (power cut, network). See(m) each metric, then figure()."""

    def __init__(self):
        self.parts = {}

    def see(self, m):
        name = m["metric"]
        if name.startswith("recovery_clock_error_") and name.endswith("_ms"):
            self.parts[name[len("recovery_clock_error_"):-3]] = m["value"]

    def figure(self):
        values = list(self.parts.values())
        worst = None if not values or None in values else max(values)
        return {"metric": "recovery_clock_error_ms", "value": worst, "unit": "ms",
                "target": CLOCK_BUDGET_MS, "ok": worst is not None and worst <= CLOCK_BUDGET_MS,
                "note": "worst after any fault: " + ", ".join(
                    "%s %s" % kv for kv in sorted(self.parts.items()))}


def parse_args(argv):
    minutes = dict(MINUTES)
    parts = []
    i = 0
    while i < len(argv):
        if argv[i] == "--minutes" and i + 1 < len(argv):
            part, _, n = argv[i + 1].partition("=")
            if part not in MINUTES or not n:
                raise ValueError("--minutes takes PART=N, PART one of " + ", ".join(MINUTES))
            minutes[part] = float(n)
            i += 2
            continue
        if argv[i] not in MINUTES:
            raise ValueError("unknown part " + argv[i])
        parts.append(argv[i])
        i += 1
    return minutes, parts or list(MINUTES)


def run_part(name, minutes, scratch):
    """The part's metrics, then a line of its own: how long it ran, and whether it ran."""
    import importlib
    t0 = time.monotonic()
    ok = True
    try:
        mod = importlib.import_module("tests.faults.soak_" + name)
        for m in mod.soak(minutes, os.path.join(scratch, name)):
            ok = ok and m.get("ok", True)
            yield m
    except Exception:
        traceback.print_exc()
        ok = False
        yield {"metric": "soak_%s_ran" % name, "value": 0, "unit": "bool", "target": 1, "ok": False}
    yield {"metric": "soak_%s_minutes" % name, "value": round((time.monotonic() - t0) / 60, 1),
           "unit": "min", "target": None, "note": "asked for %g" % minutes}


def main(argv):
    try:
        minutes, parts = parse_args(argv)
    except ValueError as e:
        sys.stderr.write("soak.py: %s\n" % e)
        return 2
    scratch = tempfile.mkdtemp(prefix="duelclock-soak-")
    failed = False
    worst = Worst()
    try:
        for name in parts:
            os.makedirs(os.path.join(scratch, name))
            for m in run_part(name, minutes[name], scratch):
                failed = failed or m.get("ok") is False
                worst.see(m)
                print(json.dumps(m), flush=True)
        if worst.parts:
            m = worst.figure()
            failed = failed or not m["ok"]
            print(json.dumps(m), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
