"""Journal full: a table whose flash is exhausted says so on screen, keeps the
current match going, tells the desk, and overwrites nothing the desk has not collected.

The real simulator and desk: a SIM table whose flash image (file-backed littlefs) holds
three old matches the desk never collected and other files, 12 KB left. The round's LP
entries fill it: the desk's status (API and CLI) shows "journal full", the table takes
further entries (held in RAM, sent to the desk: the desk's store holds every event), and
the old matches are all still on the flash afterwards, untouched. (The on-screen text
is lang.py's flash_full, shown by Table.frame while journal_full is set.)"""
import json
import os
import subprocess
import time

from duelclock_desk.store import Store
from simulator.room import Room
from simulator.table import wait_for
from tests.host.upy import ROOT, UPY, upy_path

HERE = os.path.dirname(os.path.abspath(__file__))
FILL = os.path.join(HERE, "upy_fill_flash.py")
FREE_BYTES = 12288
ENTRIES = (["a", "1", "0", "ok"], ["a", "1", "0", "sign", "ok"])   # A -10, A +10


def _flash(image, *args):
    r = subprocess.run([UPY, FILL] + list(args), capture_output=True, text=True, cwd=ROOT,
                       timeout=60, env=dict(os.environ, DUELCLOCK_SIM_FLASH=image,
                                            MICROPYPATH=upy_path("boards/SIM")))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def _view(room):
    return room.status()["tables"][0]


def test_full_flash_tells_the_desk_keeps_the_match_and_the_old_records(tmp_path):
    work = str(tmp_path / "room")
    image = os.path.join(work, "table01", "flash.img")
    os.makedirs(os.path.dirname(image))
    old = _flash(image, "fill", str(FREE_BYTES))
    assert sorted(old["matches"]) == ["1", "2", "3"] and old["collected"] == []
    room = Room(work, serial_tables=1, mqtt_tables=0, speed=10.0)
    try:
        room.start()
        room.start_round(1, limit="45m", cap="30m")
        assert wait_for(lambda: _view(room)["round"] == 1
                        and _view(room)["sync_age_ms"] is not None, 30)
        table = room.tables[1]
        table.press("a", "a")                               # duel 1, A goes first
        entries = 0
        for _ in range(60):                                 # 600 entries at most
            for i in range(10):
                table.press(*ENTRIES[entries % 2])
                entries += 1
            time.sleep(0.15)
            if "journal full" in _view(room)["alerts"]:
                break
        assert wait_for(lambda: "journal full" in _view(room)["alerts"], 10), _view(room)
        assert table.alive
        assert "journal full" in room.cli("status")
        # the match goes on: entries and turns still count, on the table and at the desk
        lp_b = _view(room)["lp"]["B"]
        table.press("b", "5", "0", "0", "ok")
        table.press("turn")
        assert wait_for(lambda: _view(room)["lp"]["B"] == lp_b - 500
                        and _view(room)["turn"] == 2, 10), _view(room)
        events = 2 + entries + 2                            # round_start, duel_start, ...
        store = Store(room.store)
        try:
            assert wait_for(lambda: store.event_count(1, 1) == events, 20), \
                (store.event_count(1, 1), events)
        finally:
            store.close()
        assert "journal full" in _view(room)["alerts"]
        # A power cut while full: the table boots on the full flash, is heard and synced
        # again, and shows what its flash holds: B's -500, held in RAM, is gone from the
        # table (the desk has it; the paper record is the players').
        table.power_cut()
        table.start()
        assert wait_for(lambda: _view(room)["lp"]["B"] == 8000 and _view(room)["round"] == 1
                        and _view(room)["sync_age_ms"] is not None, 30), _view(room)
        assert table.alive
    finally:
        room.stop()
    after = _flash(image, "count")
    for mid in ("1", "2", "3"):                             # nothing earlier overwritten
        assert after["matches"][mid] == old["matches"][mid]
    assert after["collected"] == []
    assert after["matches"]["4"] > 2                        # the round, as far as it fitted
