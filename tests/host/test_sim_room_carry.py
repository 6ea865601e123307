"""End to end: penalties given after a match carry to the player's next
match. The real desk and 2 tables running the real firmware (MicroPython unix port, serial),
three accelerated rounds with pairings:

  round 1 (ID)  table 1: Kim 2-0 Budi, then the head judge gives Budi a match loss after
                the match  ->  carried at once (ID: mandatory)
  round 2 (KR)  Budi is A at table 2: the table records the match loss before duel 1, Sari
                wins; table 1: Kim 2-0 Lee, then Kim gets a duel loss after the match ->
                awaits the head judge (KR 1.D); confirmed with `duelclock carry`
  round 3 (KR)  Kim is B at table 2: duel 1 lost before it is played, Lee wins duel 2

Each carried penalty is checked in the table's record (before duel 1), on its screen, in
`duelclock status`, in the dashboard's API and table page, in the CSV export and the sheets."""
import json
import os
import urllib.request

import pytest
from PIL import Image

from simulator.screens import fb_to_image

from simulator.room import Room
from simulator.scripts import ROUND, MIN
from simulator.table import wait_for
from tests.host.golden import GOLDEN

SPEED = 40.0
PAIRINGS = {1: [(1, "Kim Minsu", "Budi Santoso"), (2, "Lee Jiwoo", "Sari Dewi")],
            2: [(1, "Kim Minsu", "Lee Jiwoo"), (2, "Budi Santoso", "Sari Dewi")],
            3: [(1, "Budi Santoso", "Sari Dewi"), (2, "Lee Jiwoo", "Kim Minsu")]}
RULES = {1: "ID", 2: "KR", 3: "KR"}


def script(round_no, *events):
    start = dict(ROUND, round=round_no, seating=False, rules=RULES[round_no])
    return [start] + [dict(ev, t=int(ev["t"] * MIN)) for ev in events]


def two_nil(after=()):
    """A wins 2-0 on LP in about 6 minutes; `after`: events once the match is over."""
    return [{"t": 0.5, "ev": "duel_start", "first": "A"},
            {"t": 1.5, "ev": "lp", "B": -8000, "by": "A"},
            {"t": 3, "ev": "duel_start", "first": "B"},
            {"t": 4.5, "ev": "lp", "B": -8000, "by": "A"}] + list(after)


def penalty(minutes, p, kind, code):
    return {"t": minutes, "ev": "penalty", "p": p, "kind": kind, "code": code, "judge": "head"}


def api(room, path):
    with urllib.request.urlopen(room.api + path, timeout=10) as r:
        body = r.read().decode()
        return json.loads(body) if path.startswith("/api/") else body


def start_round(room, round_no):
    path = os.path.join(room.dir, "pairings%d.csv" % round_no)
    with open(path, "w") as f:
        f.write("table,player_a,player_b\n")
        for row in PAIRINGS[round_no]:
            f.write("%d,%s,%s\n" % row)
    room.start_round(round_no, rules=RULES[round_no], pairings=path, at="+1m")


def play_round(room, round_no, scripts):
    if (room.status()["round"] or {}).get("round") != round_no:
        start_round(room, round_no)
    room.play(scripts)
    assert room.wait_results(timeout_s=120)


def message_bar(img):
    """The box of the message bar (a framed bar across the middle, layout._message) of a
    240x135 frame: from the bar's left edge on the middle row, the rows its colour runs."""
    w, h = img.size
    y = h // 2
    x = 0
    while img.getpixel((x, y)) != (255, 255, 255):
        x += 1
    y0, y1 = y, y
    while img.getpixel((x, y0 - 1)) == (255, 255, 255):
        y0 -= 1
    while img.getpixel((x, y1 + 1)) == (255, 255, 255):
        y1 += 1
    return x, y0, w - x, y1 + 1


# What a 240x135 table shows of "Last match: A Match loss" (tests/upy/screens.py carried).
GOLDEN_CARRIED = Image.open(os.path.join(GOLDEN, "fb_240x135_carried.png")).convert("RGB")
BAR = message_bar(GOLDEN_CARRIED)


def shows_the_carried_penalty(table):
    with open(table.fb, "rb") as f:
        img = fb_to_image(f.read(), 240, 135, False, swapped=True)
    return img.crop(BAR).tobytes() == GOLDEN_CARRIED.crop(BAR).tobytes()


@pytest.fixture(scope="module")
def rounds(tmp_path_factory):
    room = Room(str(tmp_path_factory.mktemp("carry")), serial_tables=2, speed=SPEED)
    shots = {}
    try:
        room.start()
        play_round(room, 1, {1: script(1, *two_nil([penalty(6, "B", "match_loss", "unsporting")])),
                             2: script(1, *two_nil())})
        wait_for(lambda: room.status()["carries"], 60, 0.2)       # the after-match penalty
        status1 = room.cli("status")
        start_round(room, 2)
        # Table 2 says it for a minute of round time (1.5 s here) from the round's arrival.
        shots[2] = wait_for(lambda: shows_the_carried_penalty(room.tables[2]), 30, 0.02)
        play_round(room, 2, {1: script(2, *two_nil([penalty(6, "A", "duel_loss", "slow_play")])),
                             2: script(2)})                        # its carried match loss
        wait_for(lambda: len(room.status()["carries"]) == 2, 60, 0.2)
        status2 = room.cli("status")
        kr = room.status()["carries"][1]
        confirmed = room.cli("carry", str(kr["id"]), "--confirm")
        play_round(room, 3, {1: script(3, *two_nil()),
                             2: script(3, {"t": 1, "ev": "duel_start", "first": "A"},
                                       {"t": 2.5, "ev": "lp", "B": -8000, "by": "A"})})
        yield room, shots, status1, status2, confirmed
    finally:
        room.stop()


def stored(room, tbl, round_no, what="events"):
    """The desk store's events (or result, penalties) of a table's match."""
    from duelclock_desk.store import Store
    store = Store(room.store)
    try:
        return getattr(store, what)(tbl, round_no)
    finally:
        store.close()


def test_id_the_match_loss_after_round_1_is_recorded_before_duel_1_of_round_2(rounds):
    room, shots, status1, status2, confirmed = rounds
    assert "carry 1: Budi Santoso match_loss unsporting (round 1 table 1, after the match, " \
           "ID): goes with the next round started that names the player" in status1
    assert "carry 1: Budi Santoso match_loss unsporting (round 1 table 1, after the match, " \
           "ID): into round 2 table 2 as A" in status2
    events = stored(room, 2, 2)
    assert events[0]["ev"] == "round_start"
    assert {k: events[1][k] for k in ("ev", "p", "kind", "code", "judge")} == {
        "ev": "penalty", "p": "A", "kind": "match_loss", "code": "unsporting", "judge": "head"}
    assert not [e for e in events if e["ev"] == "duel_start"]
    res = stored(room, 2, 2, "result")
    assert res["result"] == "B" and res["verified"] == "ok"
    assert stored(room, 2, 2, "penalties") == [{"p": "A", "kind": "match_loss",
                                                "code": "unsporting", "after_match": False,
                                                "carried_from": 1}]


def test_the_table_says_so_on_its_screen(rounds):
    room, shots, status1, status2, confirmed = rounds
    # Round 2's start on table 2: its message bar, pixel for pixel the golden one's.
    assert shots[2]
    assert BAR[2] - BAR[0] > 200 and 20 < BAR[3] - BAR[1] < 80


def test_kr_waits_for_the_head_judge_and_then_carries_into_round_3(rounds):
    room, shots, status1, status2, confirmed = rounds
    assert "carry 2: Kim Minsu duel_loss slow_play (round 2 table 1, after the match, KR): " \
           "awaits the head judge: duelclock carry 2 --confirm (or --decline)" in status2
    assert "confirmed: it goes with the next round started that names the player" in confirmed
    audit = api(room, "/api/audit?limit=50")
    assert [a["command"] for a in audit if a["command"] == "carry"] == ["carry"]
    events = stored(room, 2, 3)
    assert {k: events[1][k] for k in ("ev", "p", "kind", "code")} == {
        "ev": "penalty", "p": "B", "kind": "duel_loss", "code": "slow_play"}
    assert events[2]["ev"] == "duel_start"            # recorded before duel 1
    detail = api(room, "/api/tables/2")           # the dashboard's API: the round now
    assert detail["round"] == 3 and detail["result_detail"]["result"] == "A"
    assert detail["penalties"] == [{"p": "B", "kind": "duel_loss", "code": "slow_play",
                                    "after_match": False, "carried_from": 2}]
    assert detail["result_detail"]["verdict"]["duels"] == [
        {"winner": "A", "by": "penalty"}, {"winner": "A", "by": "lp"}]


def test_status_dashboard_csv_and_sheets_show_both(rounds):
    room, shots, status1, status2, confirmed = rounds
    room_api = api(room, "/api/room")
    assert [(c["player"], c["state"], c["round"], c["tbl"], c["p"]) for c in room_api["carries"]] \
        == [("Budi Santoso", "sent", 2, 2, "A"), ("Kim Minsu", "sent", 3, 2, "B")]
    assert "carry 2: Kim Minsu duel_loss slow_play (round 2 table 1, after the match, KR): " \
           "into round 3 table 2 as B" in room.cli("status")
    csv1 = room.cli("export", "--csv", "--round", "1", store=True)
    assert "B match_loss unsporting (after the match)" in csv1
    csv2 = room.cli("export", "--csv", "--round", "2", store=True)
    assert "A match_loss unsporting (from round 1)" in csv2
    assert "A duel_loss slow_play (after the match)" in csv2
    csv3 = room.cli("export", "--csv", "--round", "3", store=True)
    assert "B duel_loss slow_play (from round 2)" in csv3
    sheet1 = room.cli("sheet", "--table", "1", "--round", "1", store=True)
    assert "PENALTY B: match loss, unsporting (after the match)" in sheet1
    sheet3 = room.cli("sheet", "--table", "2", "--round", "3", store=True)
    assert "CARRIED B: duel loss, slow_play (given after the match in round 2, table 1)" in sheet3
    html = os.path.join(room.dir, "t2r2.html")
    room.cli("sheet", "--table", "2", "--round", "2", "--html", html, store=True)
    with open(html, encoding="utf-8") as f:
        assert ('<p class="carried">CARRIED A: match loss, unsporting (given after the match '
                'in round 1, table 1)</p>') in f.read()
    page = api(room, "/table/2?round=2")
    assert 'data-i18n="pen_carried" data-i18n-args="1"' in page
    assert "CARRIED A: match loss, unsporting" in page
    assert 'data-i18n="pen_after_match"' in api(room, "/table/1?round=2")
