"""Late entry, judged by the link (host_tools/duelclock_desk/lateness.py), end to end: the
real desk and one SIM table running the real firmware on its littlefs flash image. Lines are
appended to the table's journal on the image (with a valid CRC, by the firmware's own
Journal, as an opened table allows) while it is off, and the table sends them when it
comes back:

  - a line stamped at a time the desk had the table linked reaches the desk over
    LINKED_LATE_MS after that time: flagged "late", beside "record changed";
  - a line stamped while the table was off (not heard for longer than LINK_GAP_MS) reaches
    the desk as soon as the link is back, well within OFFLINE_LATE_MS: not flagged."""
import json
import os
import sqlite3
import subprocess
import time

import pytest

from duelclock_desk.lateness import LINK_GAP_MS, LINKED_LATE_MS, OFFLINE_LATE_MS
from simulator.room import Room
from simulator.table import wait_for
from tests.host.upy import ROOT, UPY, upy_path

SPEED = 5.0                          # desk ms per real ms: LINKED_LATE_MS is 3 s here

APPEND = """
import json, board
from duelclock.journal import Journal
j = Journal(board.FS_PREFIX + 'journal')
j.recover(lambda line: None)
j.append(json.loads(%r))
"""


def append(flash, ev):
    """One event on the current match of the table's (powered off) flash image."""
    r = subprocess.run([UPY, "-c", APPEND % json.dumps(ev)], capture_output=True, text=True,
                       cwd=ROOT, timeout=60,
                       env=dict(os.environ, DUELCLOCK_SIM_FLASH=flash,
                                MICROPYPATH=upy_path("boards/SIM")))
    assert r.returncode == 0, r.stdout + r.stderr


def rows(store, query):
    db = sqlite3.connect("file:%s?mode=ro" % store, uri=True)
    try:
        return db.execute(query).fetchall()
    except sqlite3.OperationalError:        # the desk has not made the table yet
        return []
    finally:
        db.close()


def stored(room):
    return len(rows(room.store, "SELECT idx FROM records WHERE tbl = 1 AND round = 1"))


def table_alerts(room):
    views = [v for v in room.status()["tables"] if v["table"] == 1]
    return views[0]["alerts"] if views else []


@pytest.fixture
def room(tmp_path):
    r = Room(str(tmp_path / "room"), serial_tables=1, speed=SPEED)
    try:
        r.start()
        yield r
    finally:
        r.stop()


def test_a_line_made_up_while_linked_is_late_one_entered_offline_is_not(room):
    room.start_round(1)
    assert wait_for(lambda: [v for v in room.status()["tables"]
                             if v["round"] == 1 and v.get("sync_age_ms") is not None], 60)
    table = room.tables[1]
    table.press("a", "a")                                   # duel 1: A goes first
    assert wait_for(lambda: stored(room) == 2, 60), stored(room)

    # Made up: a line stamped now, while the desk hears the table, that reaches it only
    # after a power cycle well past LINKED_LATE_MS.
    made_up_at = room.round_ms()
    time.sleep(LINKED_LATE_MS * 4 / 3 / 1000 / SPEED)       # 20 s of desk time, heard
    table.power_cut()
    append(table.flash, {"t": made_up_at, "ev": "lp", "B": -1000, "by": "A"})
    table.start()
    assert wait_for(lambda: stored(room) == 3, 60), stored(room)
    late = wait_for(lambda: rows(room.store, "SELECT idx, detail FROM record_flags WHERE "
                                 "tbl = 1 AND round = 1 AND kind = 'late'"), 30)
    assert [idx for idx, _ in late] == [2] and int(late[0][1]) > LINKED_LATE_MS, late
    assert wait_for(lambda: "late entry" in table_alerts(room), 30), table_alerts(room)

    # Offline: the table off for longer than LINK_GAP_MS, a line stamped in that time
    # (entered while the desk could not hear it): sent at once when it is back.
    assert wait_for(lambda: [v for v in room.status()["tables"]
                             if v["table"] == 1 and v.get("sync_age_ms") is not None], 60)
    table.power_cut()
    off_at = room.round_ms()
    time.sleep(2 * LINK_GAP_MS / 1000 / SPEED)
    append(table.flash, {"t": off_at + LINK_GAP_MS, "ev": "lp", "B": -500, "by": "A"})
    table.start()
    assert wait_for(lambda: stored(room) == 4, 60), stored(room)
    back_ms = room.round_ms()
    time.sleep(1)                           # what the desk makes of it is committed
    flags = rows(room.store, "SELECT idx, kind FROM record_flags WHERE tbl = 1 AND round = 1")
    assert flags == [(2, "late")], flags
    assert back_ms - (off_at + LINK_GAP_MS) < OFFLINE_LATE_MS
