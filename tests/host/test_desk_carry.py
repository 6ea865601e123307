"""Penalties given after a match, carried to the player's next match (docs/rules.md,
"Penalties after a match"): the desk and fake tables on one simulated clock. The real
tables' side (the firmware records the carried penalty before duel 1) is
test_sim_room_carry.py's."""
import pytest

from duelclock_desk.client import status_lines
from duelclock_desk.commands import CommandError
from tests.core.ramstore import ListJournal
from tests.host.tables import RESEND_MS, STATE_MS, SessionTable, Room, short_match

KEY = bytes(range(32))
ROUND1 = [[1, "Kim Minsu", "Budi Santoso"], [2, "Lee Jiwoo", "Sari Dewi"]]
# Round 2: Budi (B at table 1 in round 1) plays as A at table 2.
ROUND2 = [[1, "Kim Minsu", "Lee Jiwoo"], [2, "Budi Santoso", "Sari Dewi"]]
ROUND3 = [[1, "Sari Dewi", "Budi Santoso"], [2, "Kim Minsu", "Lee Jiwoo"]]
AFTER = {"t": 400000, "ev": "penalty", "p": "B", "kind": "match_loss", "code": "unsporting",
         "judge": "head"}


def room(tmp_path):
    tables = [SessionTable(KEY, t) for t in (1, 2)]
    r = Room(str(tmp_path / "desk.sqlite"), KEY, tables)
    for t in tables:
        t.hello()
    r.run(1000)
    return r


def start(r, round_no, pairings, rules="ID"):
    r.desk.run("judge", "start_round", {"round": round_no, "rules": rules,
                                        "pairings": pairings})
    r.run(200)


def play_round(r, after=(AFTER,)):
    """Table 1: A wins 2-0 and then B gets `after`; table 2: a plain 2-0."""
    r.tables[1].play(short_match() + list(after), r.local(1))
    r.tables[2].play(short_match(), r.local(2))
    r.run(2 * RESEND_MS)
    assert r.store.result(1, r.desk.round["round"])["verified"] == "ok"


def pens(t):
    return t.round.get("pens")


def test_id_carries_a_match_loss_after_the_match_to_the_players_next_table(tmp_path):
    r = room(tmp_path)
    start(r, 1, ROUND1)
    play_round(r)
    pen = r.store.penalties(1, 1)[-1]
    assert pen == {"p": "B", "kind": "match_loss", "code": "unsporting", "after_match": True,
                   "carried_from": None}
    assert not r.store.penalties(1, 1)[0]["after_match"]          # the warning in duel 1
    assert "B match_loss unsporting (after the match)" in r.store.results_csv(1)
    [c] = r.desk.status()["carries"]
    assert (c["player"], c["state"], c["rules"]) == ("Budi Santoso", "ready", "ID")

    start(r, 2, ROUND2)
    assert pens(r.tables[2]) == [{"p": "A", "kind": "match_loss", "code": "unsporting"}]
    assert pens(r.tables[1]) is None
    [c] = r.desk.status()["carries"]
    assert (c["state"], c["round"], c["tbl"], c["p"]) == ("sent", 2, 2, "A")
    assert "into round 2 table 2 as A" in status_lines(r.desk.status())[-1]
    # Recorded by the table itself when the round came (core/ui.py carry), before duel 1:
    # the match is Sari's, and the desk marks the penalty as carried.
    r.run(2 * RESEND_MS)
    assert r.store.result(2, 2)["result"] == "B"
    assert r.store.penalties(2, 2) == [{"p": "A", "kind": "match_loss", "code": "unsporting",
                                        "after_match": False, "carried_from": 1}]
    assert "A match_loss unsporting (from round 1)" in r.store.results_csv(2)
    # Sent once: round 3 carries nothing.
    start(r, 3, ROUND3)
    assert pens(r.tables[1]) is None and pens(r.tables[2]) is None


def test_kr_waits_for_the_head_judge_and_a_declined_one_never_carries(tmp_path):
    r = room(tmp_path)
    start(r, 1, ROUND1, rules="KR")
    duel_loss = dict(AFTER, t=401000, p="A", kind="duel_loss", code="slow_play")
    play_round(r, after=(AFTER, duel_loss))
    ml, dl = r.desk.status()["carries"]
    assert (ml["player"], ml["state"], ml["rules"]) == ("Budi Santoso", "confirm", "KR")
    assert (dl["player"], dl["kind"], dl["state"]) == ("Kim Minsu", "duel_loss", "confirm")
    assert "duelclock carry %d --confirm" % ml["id"] in "\n".join(status_lines(r.desk.status()))

    start(r, 2, ROUND2, rules="KR")                   # not confirmed yet: nothing carried
    assert pens(r.tables[1]) is None and pens(r.tables[2]) is None
    r.desk.run("head", "carry", {"id": ml["id"], "confirm": True})
    r.desk.run("head", "carry", {"id": dl["id"], "confirm": False})
    with pytest.raises(CommandError, match="declined, not awaiting"):
        r.desk.run("head", "carry", {"id": dl["id"], "confirm": True})
    with pytest.raises(CommandError, match="no carried penalty 99"):
        r.desk.run("head", "carry", {"id": 99, "confirm": True})
    audit = [(a["who"], a["command"], a["outcome"][:7]) for a in r.store.audit_log()]
    assert audit[:4] == [("head", "carry", "refused"), ("head", "carry", "refused"),
                         ("head", "carry", "ok"), ("head", "carry", "ok")]

    start(r, 3, ROUND3, rules="KR")                   # the next round after the confirmation
    assert pens(r.tables[1]) == [{"p": "B", "kind": "match_loss", "code": "unsporting"}]
    assert pens(r.tables[2]) is None                  # Kim's duel loss was declined
    states = [c["state"] for c in r.desk.status()["carries"]]
    assert states == ["sent", "declined"]


def test_without_pairings_the_desk_cannot_find_the_next_match_and_says_so(tmp_path):
    r = room(tmp_path)
    r.desk.run("judge", "start_round", {"round": 1})
    r.run(200)
    play_round(r)
    [c] = r.desk.status()["carries"]
    assert (c["player"], c["state"]) == (None, "unnamed")
    assert "no pairing names the player" in status_lines(r.desk.status())[-1]
    start(r, 2, ROUND2)
    assert pens(r.tables[1]) is None and pens(r.tables[2]) is None


def test_a_table_that_missed_the_round_gets_its_carried_penalty_with_it(tmp_path):
    r = room(tmp_path)
    start(r, 1, ROUND1)
    play_round(r)
    start(r, 2, ROUND2)
    r.tables[2].reboot(ListJournal())                 # rebooted without a journal: round 0
    r.run(2 * STATE_MS)                               # its round-0 states: the round again
    assert pens(r.tables[2]) == [{"p": "A", "kind": "match_loss", "code": "unsporting"}]


def test_the_dashboard_has_every_carry_state_and_note_in_each_language():
    import os
    import re
    from duelclock_desk import dashboard
    from duelclock_desk.client import CARRY_STATES
    with open(os.path.join(dashboard.WEB_DIR, "i18n.js"), encoding="utf-8") as f:
        blocks = re.split(r"\n  (?:en|ko|id): \{", f.read())[1:]
    assert len(blocks) == 3
    keys = ["cs_" + s for s in CARRY_STATES] + ["carries", "pen_note", "pen_after_match",
                                                 "pen_carried", "carry_from", "carry_confirm",
                                                 "carry_decline", "c_carry_confirm",
                                                 "c_carry_decline"]
    for block in blocks:
        for key in keys:
            assert "\n    %s: " % key in block or " %s: " % key in block, key


def test_a_store_from_before_after_match_gets_the_column_and_keeps_its_penalties(tmp_path):
    import sqlite3
    from duelclock_desk.store import Store
    path = str(tmp_path / "old.sqlite")
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE penalties (tbl INTEGER NOT NULL, round INTEGER NOT NULL, n INTEGER"
               " NOT NULL, p TEXT NOT NULL, kind TEXT NOT NULL, code TEXT NOT NULL,"
               " PRIMARY KEY (tbl, round, n))")
    db.execute("INSERT INTO penalties VALUES (1, 1, 0, 'B', 'warning', 'slow_play')")
    db.commit()
    db.close()
    store = Store(path)
    try:
        assert store.penalties(1, 1) == [{"p": "B", "kind": "warning", "code": "slow_play",
                                          "after_match": False, "carried_from": None}]
    finally:
        store.close()
    Store(path).close()                               # opened again: nothing to add


def test_status_lists_the_carries_to_settle_and_those_of_this_round_only(tmp_path):
    r = room(tmp_path)
    start(r, 1, ROUND1)
    play_round(r)
    start(r, 2, ROUND2)
    start(r, 3, ROUND3)
    assert r.desk.status()["carries"][0]["round"] == 2
    assert not [x for x in status_lines(r.desk.status()) if x.startswith("carry ")]
