"""Power cuts: nothing the table confirmed is lost, it resumes where it was, and
its round clock agrees with the desk's once re-synced. Short form of soak_powercut.py.

The MicroPython driver (upy_powercut.py) plays matches by keys into the real table on
littlefs over a RAM flash chip and cuts the power 300 times (torn writes included), in
appends, ticks, start_match and its rotation, mark_collected, and boots. The room test
cuts two real simulator tables (firmware on boards/SIM, real desk) mid-round at 1x."""
from tests.faults.soak_powercut import upy_cuts, room_clock_cuts, CLOCK_BUDGET_MS

CUTS = 300


def test_random_power_cuts_lose_no_confirmed_event(tmp_path):
    s = upy_cuts(str(tmp_path), CUTS, seed=7)
    assert s["errors"] == [], s["errors"]
    assert (s["confirmed_events_lost"], s["state_mismatches"]) == (0, 0), s
    assert s["cuts"] >= CUTS and s["matches"] >= 3 and s["rotations"] >= 1, s
    # the cuts hit every kind of write the table makes
    assert {"append", "tick", "start_match", "boot"} <= set(s["cut_in"]), s["cut_in"]
    assert s["extra_events"] > 0          # cuts after the data landed, before append returned


def test_cut_tables_resume_the_same_state_and_clock(tmp_path):
    cuts = room_clock_cuts(str(tmp_path / "room"), 3)
    assert len(cuts) == 3
    for c in cuts:
        assert c["same_state"], c
        assert c["phase_after"] == c["phase_before"] == "duel", c
        assert c["clock_error_ms"] <= CLOCK_BUDGET_MS, c
