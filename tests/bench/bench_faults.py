# The faults bench group (the fault suite's budgets, short form): each part of the fault-injection
# suite (tests/faults/soak_PART.py) at bench size. `make soak` runs the long form.
#   powercut_confirmed_events_lost   0 over 1,000 cuts at random instants
#   powercut_cuts                    the cuts made (littlefs under MicroPython, random writes)
#   powercut_state_mismatches        reboots after a cut that came back in another phase
#   faults_survived                  every fault of the list (network part; _powercut: the
#                                    power-cut part)
#   store_events_lost                events the desk's store lacks after the network faults
#   store_events_duplicated          events the desk's store holds twice after them
#   fuzz_crashes                     exceptions out of the wire decoder, the record parser,
#                                    the key handler and the UI on fuzzed input (_micropython:
#                                    the same seeded corpus under MicroPython)
#   fuzz_state_corruptions           inputs after which a target's state broke its invariants
#   fuzz_outcomes_differing_...      inputs whose outcome differs between MicroPython and
#                                    CPython (a rounding or a message's wording, not a crash)
#   fuzz_execs                       inputs tried per target: _t the table's wire decoder,
#                                    _d the desk's, _p the record parser, _keys the key
#                                    handler, _ui the table's UI
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
