"""Network and desk faults mid-round (short form of soak_network.py: one round, each fault
once): mosquitto killed and restarted, the desk process killed and restarted, a serial and
a Wi-Fi table's link down for 5 simulated minutes, the desk's wall clock stepped +2 s and
-2 s. After each: every table runs and its clock is within its link's budget of the desk's,
the desk's status shows every table as it is; at the end every journal event is in the
store once, at its place, and every result is verified."""

import pytest

from duelclock_desk import desk_time
from duelclock_desk.desk_time import DeskClock
from simulator.scripts import expected
from tests.faults import soak_network as net

pytestmark = pytest.mark.needs("mosquitto")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return net.Run(str(tmp_path_factory.mktemp("net"))).play()


@pytest.mark.parametrize("fault", net.FAULTS)
def test_tables_run_on_and_the_desk_view_recovers(run, fault):
    f = run.faults[fault]
    assert f["alive"], "a table process died"
    assert f["view_s"] is not None, "status did not show every table as it is"


@pytest.mark.parametrize("fault", net.FAULTS)
def test_clocks_within_budget_after_resync(run, fault):
    f = run.faults[fault]
    assert f["clock_err_ms"] is not None, "a table did not re-sync: %r" % f["per_table"]
    # each table within its link's budget, in real ms past one tick (soak_network.py)
    real = {n: run.real_ms(e) for n, e in f["per_table"].items()}
    assert all(r <= run.budget_ms(n) for n, r in real.items()), (real, f)
    assert f["clock_ok"]


def test_clocks_agree_before_the_faults(run):
    # The same measurement with no fault yet, held to the same budgets.
    assert run.baseline, "no state before the first fault"
    real = {n: run.real_ms(e) for n, e in run.baseline.items()}
    assert all(r <= run.budget_ms(n) for n, r in real.items()), real
    assert run.baseline_ok


def test_no_event_lost_or_duplicated_in_the_store(run):
    for n, (lost, dup, journaled) in run.records.items():
        assert journaled > 1, "table %d journaled nothing" % n
        assert (n, lost, dup) == (n, 0, 0)


def test_every_result_verified_as_its_script_means(run):
    assert run.verified
    for n, events in run.scripts.items():
        want = expected(events)
        assert run.results[n] == (want["result"], want["wins"], "ok")


def test_metrics_say_all_faults_survived(run):
    by = {m["metric"]: m for m in run.metrics()}
    assert by["faults_survived"]["value"] == len(net.FAULTS)
    assert all(m["ok"] for m in by.values()), by


# --- the desk clock across restarts (the fix the desk_restart fault needed) ---------------

def test_desk_time_carries_on_from_the_mark_on_the_same_machine_boot(monkeypatch):
    monkeypatch.setattr(desk_time, "machine_boot_id", lambda: "boot-1")
    first = DeskClock(0, speed=40.0)
    mark = first.mark()
    monkeypatch.setattr(desk_time, "unix_ms", lambda: 10 ** 12)     # wall clock far away
    again = DeskClock(0, speed=40.0)
    again.resume(mark)
    assert 0 <= again() - mark[2] < 40 * 1000


def test_desk_time_never_goes_back_after_a_machine_reboot(monkeypatch):
    monkeypatch.setattr(desk_time, "machine_boot_id", lambda: "boot-2")
    clock = DeskClock(desk_time.unix_ms())          # desk time ~0 by the wall clock
    clock.resume(("boot-1", 123, 5000000))         # the last run had reached 5000 s
    assert clock() >= 5000000
    later = DeskClock(desk_time.unix_ms() - 9000000)
    later.resume(("boot-1", 123, 5000000))         # the wall clock is ahead: it rules
    assert later() >= 9000000


def test_desk_time_to_the_us_reads_the_same_clock():
    # What a sync reply's t2u and t3u come from: within the ms the int clock reads around it.
    clock = DeskClock(desk_time.unix_ms() - 5000000)
    fractions = set()
    for _ in range(200):
        before, exact, after = clock(), clock.exact(), clock()
        assert before <= exact < after + 1
        fractions.add(int((exact - int(exact)) * 1000))
    assert len(fractions) > 10
