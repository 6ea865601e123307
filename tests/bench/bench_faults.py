# The faults bench group (the fault suite's budgets, short form): each part of the fault-injection
# suite (tests/faults/soak_PART.py) at bench size. `make soak` runs the long form.
#   powercut_confirmed_events_lost   0 over 1,000 cuts at random instants
#   faults_survived                  every fault of the list (network part)
#   fuzz_crashes / fuzz_execs        decoder, parser and key handler
#   recovery_clock_error_ms          after each fault (the worst of the parts), <= 50 ms
import importlib
import os
import sys

from common import ROOT

PARTS = ("powercut", "network", "fuzz")

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)                # tests.faults is a package of the repository

from tests.faults.soak import Worst  # noqa: E402


def bench_faults(b):
    worst = Worst()
    for name in PARTS:
        mod = importlib.import_module("tests.faults.soak_" + name)
        scratch = b.path("faults_" + name)
        os.makedirs(scratch, exist_ok=True)
        for m in mod.bench(scratch):
            worst.see(m)
            yield m
    yield worst.figure()
