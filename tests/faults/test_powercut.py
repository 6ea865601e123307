"""Power cuts: nothing the table confirmed is lost, it resumes where it was, and
its round clock agrees with the desk's once re-synced. Short form of soak_powercut.py.

The MicroPython driver (upy_powercut.py) plays matches by keys into the real table on
littlefs over a RAM flash chip and cuts the power 300 times (torn writes included), in
appends, ticks, start_match and its rotation, mark_collected, and boots. The room test
cuts two real simulator tables (firmware on boards/SIM, real desk) mid-round at 1x."""
from tests.faults.soak_powercut import upy_cuts, room_clock_cuts, CLOCK_BUDGET_MS

CUTS = 300


def test_random_power_cuts_lose_no_confirmed_event(tmp_path):
    s = upy_cuts(str(tmp_path), CUTS, seed=2)       # a seed whose cuts hit every kind of write
    assert s["errors"] == [], s["errors"]
    assert (s["confirmed_events_lost"], s["state_mismatches"]) == (0, 0), s
    assert s["cuts"] >= CUTS and s["matches"] >= 3 and s["rotations"] >= 1, s
    # the cuts hit every kind of write the table makes
    assert {"append", "tick", "start_match", "boot"} <= set(s["cut_in"]), s["cut_in"]
    assert s["extra_events"] > 0          # cuts after the data landed, before append returned
    assert s["cuts_paused"] > 0           # and while the desk had the match paused


def test_cut_tables_resume_the_same_state_and_clock(tmp_path):
    cuts = room_clock_cuts(str(tmp_path / "room"), 3)
    assert len(cuts) == 3
    for c in cuts:
        assert c["same_state"], c
        assert c["phase_after"] == c["phase_before"] == "duel", c
        assert c["clock_error_ms"] <= CLOCK_BUDGET_MS, c


def _events(room, n):
    from duelclock_desk.store import Store
    store = Store(room.store)
    try:
        events = store.events(1, 1)
    finally:
        store.close()
    return events if len(events) >= n else None


def _below_the_status_line(png):
    # The status line's sync age changes with every sync: all the rest must be the same.
    from PIL import Image
    img = Image.open(png).convert("RGB")
    return img.crop((0, 34, img.width, img.height)).tobytes()     # 2x: 17 rows of status


def test_a_table_paused_past_its_limit_and_cut_comes_back_paused_and_plays_on(tmp_path):
    # The real firmware on boards/SIM and the real desk, at 10x. Swiss duel 1 is paused by
    # the desk with 2:00 left and stays paused past the limit; the power goes meanwhile.
    # It comes back showing what it showed (paused, the players' names, Korean), and once
    # resumed it plays on with the time it had: no double loss.
    from simulator.room import Room
    from simulator.table import wait_for
    from tests.faults.soak_powercut import _synced_state_after
    pairings = tmp_path / "pairings.csv"
    pairings.write_text("1,Kim Minsu,Budi Santoso\n")
    room = Room(str(tmp_path / "room"), serial_tables=1, speed=10.0, ppm_spread=0.0)
    try:
        room.start()
        room.start_round(1, limit="3m", lang="ko", pairings=str(pairings))
        t = room.tables[1]
        # the round on the table and its clock synced (keys before the round do nothing)
        wait_for(lambda: room.status()["tables"][0]["round"] == 1
                 and room.status()["tables"][0]["sync_age_ms"] is not None, 30, 0.05)
        t.press("a", "a")                                  # Kim goes first
        wait_for(lambda: room.round_ms() >= 60000, 30, 0.05)
        room.cli("pause")
        wait_for(lambda: room.round_ms() >= 200000, 30, 0.05)   # past the 3:00 limit
        before = _synced_state_after(room, 1, room.status()["desk_ms"])[0]
        left = before["remaining_ms"]              # the desk's pause lands a few s after 1:00
        assert before["phase"] == "duel" and 90000 <= left <= 120000, before
        shot = t.screenshot(str(tmp_path / "before.png"))
        cut_ms = room.status()["desk_ms"]
        t.power_cut()
        t.start()
        after = _synced_state_after(room, 1, cut_ms)[0]
        wait_for(lambda: room.status()["desk_ms"] > cut_ms + 30000, 30, 0.05)   # frames drawn
        again = t.screenshot(str(tmp_path / "after.png"))
        assert after["phase"] == "duel" and after["remaining_ms"] == before["remaining_ms"]
        assert _below_the_status_line(again) == _below_the_status_line(shot), \
            "the screen after the cut differs: see %s and %s" % (shot, again)
        room.cli("resume")
        mark = room.status()["desk_ms"]
        running = _synced_state_after(room, 1, mark + 5000)[0]
        assert running["phase"] == "duel" and left - 30000 < running["remaining_ms"] < left, running
        t.press("b", "8", "000", "ok")                     # Budi to 0: duel 1 to Kim
        wait_for(lambda: room.status()["tables"][0]["phase"] == "interval", 30, 0.05)
        events = wait_for(lambda: _events(room, 5), 30, 0.1)     # the record, as the desk holds it
        assert [ev["ev"] for ev in events if ev["ev"] in ("pause", "resume")] == \
            ["pause", "resume"]
        assert events[0]["names"] == {"A": "Kim Minsu", "B": "Budi Santoso"}
    finally:
        room.stop()
