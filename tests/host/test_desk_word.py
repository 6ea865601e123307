"""The desk has the last word: the head judge's result (a mismatch settled by the table's
verdict, the desk's replay or a typed result; a dead table's result typed in), every
version kept; a round-wide extension, one signed command per table; closing a round, and
a record that arrives after it; the export that waits for every result. The real Desk
and store with fake tables on one simulated clock (Room); the API and the CLI below."""
import json

import pytest

from duelclock_desk import record_flags
from duelclock_desk.commands import CommandError
from tests.host.tables import RESEND_MS, SessionTable, Room, short_match

KEY = bytes(range(32))
PAIRS = [[1, "Kim Minsu", "Budi Santoso"], [2, "Lee Jiwoo", "Sari Dewi"],
         [3, "Park Jisoo", "Rina Wati"]]


def room(tmp_path, n=3):
    tables = [SessionTable(KEY, t) for t in range(1, n + 1)]
    r = Room(str(tmp_path / "desk.sqlite"), KEY, tables)
    for t in tables:
        t.hello()
    r.run(1000)
    r.desk.run("judge", "start_round", {"round": 1, "pairings": PAIRS[:n]})
    r.run(200)
    return r


def settle(r, ms=2 * RESEND_MS):
    # As the desk service: a batch of lines is committed before any command runs.
    r.run(ms)
    r.desk.flush()


def csv_rows(r, round_no=1):
    return r.store.results_csv(round_no).splitlines()[1:]


def mismatched(tmp_path):
    """Table 1 plays and reports straight; table 2 reports B 0-2 for a record of A 2-0."""
    r = room(tmp_path, n=2)
    r.tables[2].lie = {"result": "B", "wins": {"A": 0, "B": 2}}
    for t in r.tables.values():
        t.play(short_match(), r.local(t.tbl))
    settle(r)
    assert r.store.standing(2, 1) == "mismatch" and r.tables[2].acked is None
    return r


@pytest.mark.parametrize("how, body, row", [
    ("table", {"take": "table"}, "2,1,Lee Jiwoo,Sari Dewi,B,0,2,B warning slow_play,"
                                 "overridden: A conceded to B at the table"),
    ("replay", {"take": "replay"}, "2,1,Lee Jiwoo,Sari Dewi,A,2,0,B warning slow_play,"
                                   "overridden: A conceded to B at the table"),
    ("typed", {"result": "A", "wins": {"A": 2, "B": 1}},
     "2,1,Lee Jiwoo,Sari Dewi,A,2,1,B warning slow_play,"
     "overridden: A conceded to B at the table")])
def test_a_mismatch_settled_each_way(tmp_path, how, body, row):
    r = mismatched(tmp_path)
    record = r.store.events(2, 1)
    out = r.desk.run("head judge", "result", dict(body, table=2,
                                                  reason=" A conceded to B at the table "))
    assert (out["how"], out["taken"], out["who"]) == ("overridden", how, "head judge")
    r.run(500)
    # The table is acked (the desk holds its record whole and has decided); its record and
    # report are as they came; the verdict is the judge's.
    assert r.tables[2].acked == (1, 8)
    assert r.store.events(2, 1) == record
    res = r.store.result(2, 1)
    assert (res["result"], res["wins_b"], res["verified"]) == ("B", 2, "mismatch")
    assert csv_rows(r)[1] == row
    view = r.desk.table_view(2)
    assert view["verified"] == "overridden" and "mismatch" not in view["alerts"]
    assert r.desk.status()["unfinished"] == []
    assert [(v["source"], v["how"], v["taken"]) for v in r.store.versions(2, 1)] == [
        ("table", "reported", None), ("judge", "overridden", how)]
    log = r.store.audit_log()[0]
    assert (log["who"], log["command"], log["outcome"]) == ("head judge", "result", "ok")
    assert json.loads(log["args"])["reason"] == " A conceded to B at the table "


def test_a_typed_result_can_be_corrected_and_every_version_stays(tmp_path):
    r = mismatched(tmp_path)
    r.desk.run("hj", "result", {"table": 2, "result": "A", "wins": {"A": 2, "B": 1},
                                "reason": "from the sheet"})
    r.desk.run("hj", "result", {"table": 2, "result": "A", "wins": {"A": 2, "B": 0},
                                "reason": "typo: the sheet says 2-0"})
    got = [(v["result"], v["wins_a"], v["wins_b"], v["reason"]) for v in r.store.versions(2, 1)]
    assert got == [("B", 0, 2, None), ("A", 2, 1, "from the sheet"),
                   ("A", 2, 0, "typo: the sheet says 2-0")]
    assert csv_rows(r)[1].endswith(",A,2,0,B warning slow_play,overridden: typo: the sheet "
                                   "says 2-0")


def test_refusals_change_nothing_and_say_why(tmp_path):
    r = mismatched(tmp_path)
    bad = [({"table": 2, "take": "table"}, "a reason is 1 to 200"),
           ({"table": 2, "take": "table", "reason": "  "}, "a reason is 1 to 200"),
           ({"table": 2, "take": "table", "reason": "x" * 201}, "a reason is 1 to 200"),
           ({"table": 2, "take": "mine", "reason": "r"}, "take is table or replay"),
           ({"table": 2, "take": "table", "result": "A", "reason": "r"}, "not both"),
           ({"table": 1, "take": "replay", "reason": "r"},
            "no mismatch or flagged record to settle (it is ok)"),
           ({"table": 2, "result": "C", "wins": {"A": 1, "B": 0}, "reason": "r"},
            "the result is one of A, B, double_loss"),
           ({"table": 2, "result": "A", "reason": "r"}, "wins are {A: n, B: n}"),
           ({"table": 2, "result": "A", "wins": {"A": -1, "B": 0}, "reason": "r"},
            "wins are {A: n, B: n}"),
           ({"table": 2, "result": "A", "wins": {"A": 2}, "reason": "r"}, "wins are"),
           ({"table": 7, "result": "A", "wins": {"A": 2, "B": 0}, "reason": "r"},
            "table 7 has no match in round 1"),
           ({"table": "2", "result": "A", "wins": {"A": 2, "B": 0}, "reason": "r"},
            "the table is a number"),
           ({"table": 2, "round": 5, "result": "A", "wins": {"A": 2, "B": 0}, "reason": "r"},
            "no such round")]
    for args, why in bad:
        with pytest.raises(CommandError, match=why.replace("{", r"\{").replace("(", r"\(")
                           .replace(")", r"\)")):
            r.desk.run("hj", "result", args)
    assert len(r.store.versions(2, 1)) == 1 and r.store.standing(2, 1) == "mismatch"
    assert sum(1 for a in r.store.audit_log() if a["outcome"].startswith("refused")) == len(bad)


def test_a_dead_tables_result_typed_in_from_the_paper_sheet(tmp_path):
    # Table 3 played half a duel and died: its partial record is at the desk, no result.
    r = room(tmp_path)
    r.tables[3].play([{"t": 500, "ev": "duel_start", "first": "A"},
                      {"t": 1000, "ev": "lp", "B": -3000, "by": "A"}], r.local(3))
    settle(r)
    del r.tables[3]                                        # it never speaks again
    assert r.store.standing(3, 1) == "playing"
    with pytest.raises(CommandError, match="no mismatch or flagged record to settle"):
        r.desk.run("hj", "result", {"table": 3, "take": "replay", "reason": "dead"})
    out = r.desk.run("hj", "result", {"table": 3, "result": "B", "wins": {"A": 1, "B": 2},
                                      "reason": "board died in duel 1; paper sheet, signed"})
    assert out["how"] == "entered"
    assert csv_rows(r)[2] == ('3,1,Park Jisoo,Rina Wati,B,1,2,,"entered by the head judge: '
                              'board died in duel 1; paper sheet, signed"')    # quoted: a comma
    assert r.desk.table_view(3)["verified"] == "entered"
    assert r.store.events(3, 1)[-1] == {"t": 1000, "ev": "lp", "B": -3000, "by": "A"}   # kept
    # Paired, never heard from at all (table 4 was never plugged in): typed in too.
    r.desk.run("judge", "start_round", {"round": 1, "pairings": [[4, "Ana", "Bo"]]})
    r.desk.run("hj", "result", {"table": 4, "result": "double_loss", "wins": {"A": 0, "B": 0},
                                "reason": "no board: paper sheet"})
    assert csv_rows(r)[3] == "4,1,Ana,Bo,double_loss,0,0,,entered by the head judge: no " \
                             "board: paper sheet"
    assert r.desk.run("judge", "collect", {})["results"]["entered"] == [3, 4]


def test_extend_every_table_of_the_round_each_its_own_signed_command(tmp_path):
    r = room(tmp_path)
    out = r.desk.run("judge", "extend", {"ms": 300000})
    assert out["tables"] == [1, 2, 3]
    r.run(500)
    assert [t.extended_ms for t in r.tables.values()] == [300000] * 3
    # Each table took one extend of its own: its own seq, signed with its own key (the
    # table's Decoder takes only those), and journalled it in its record.
    for t in r.tables.values():
        assert [m["k"] for m in t.taken].count("extend") == 1
        assert [e["ms"] for e in t.record if e["ev"] == "extend"] == [300000]
    r.desk.run("judge", "extend", {"ms": 60000, "tables": [1, 3]})
    r.run(500)
    assert [t.extended_ms for t in r.tables.values()] == [360000, 300000, 360000]
    for args, why in [({"ms": 60000, "tables": [1, 9]}, "table 9 is not in round 1"),
                      ({"ms": 60000, "table": 1, "tables": [2]}, "not both"),
                      ({"ms": 0}, "an extension is 1 s to 60 min")]:
        with pytest.raises(CommandError, match=why):
            r.desk.run("judge", "extend", args)
    r.run(500)
    assert [t.extended_ms for t in r.tables.values()] == [360000, 300000, 360000]


def test_pause_and_resume_every_table_of_a_round_on_some_tables(tmp_path):
    r = room(tmp_path)
    r.desk.run("judge", "start_round", {"round": 2, "tables": [1, 2]})
    r.run(200)
    r.desk.run("judge", "pause", {})
    r.run(200)
    assert [[m["k"] for m in t.taken].count("pause") for t in r.tables.values()] == [1, 1, 0]
    assert r.desk.paused(1) and not r.desk.paused(3)


def test_close_lists_what_is_open_and_refuses_unless_forced(tmp_path):
    r = mismatched(tmp_path)
    with pytest.raises(CommandError) as e:
        r.desk.run("hj", "close_round", {})
    assert "round 1 is not done: flagged: 2 (mismatch); --force closes it anyway" in str(e.value)
    assert r.desk.round["state"] == "running"
    r.desk.run("hj", "result", {"table": 2, "take": "replay", "reason": "replay is right"})
    out = r.desk.run("hj", "close_round", {})
    assert out["round"] == 1 and out["unfinished"] == [] and out["flagged"] == []
    assert r.desk.round["state"] == "closed" and r.desk.round["closed_ms"] == out["closed_ms"]
    for cmd, args, why in [("close_round", {}, "no round is running"),
                           ("extend", {"ms": 60000}, "no round is running"),
                           ("pause", {}, "no round is running"),
                           ("start_round", {"round": 1}, "round 1 is closed")]:
        with pytest.raises(CommandError, match=why):
            r.desk.run("hj", cmd, args)
    # The head judge still has the last word on a closed round.
    r.desk.run("hj", "result", {"table": 1, "result": "A", "wins": {"A": 2, "B": 1},
                                "reason": "appeal upheld"})
    assert csv_rows(r)[0].endswith("overridden: appeal upheld")


def test_a_record_that_arrives_after_the_close_is_stored_and_flagged(tmp_path):
    r = room(tmp_path)
    for n in (1, 2):
        r.tables[n].play(short_match(), r.local(n))
    settle(r)
    away = r.tables.pop(3)                     # table 3 plays on, unlinked
    with pytest.raises(CommandError, match="unfinished: tables 3"):
        r.desk.run("hj", "close_round", {})
    closed = r.desk.run("hj", "close_round", {"force": True})
    assert closed["unfinished"] == [3]
    away.play(short_match(), r.local(3))
    r.run(30000)
    r.tables[3] = away                         # back on the link: it sends what it has
    settle(r)
    assert r.store.standing(3, 1) == "ok" and away.acked == (1, 8)
    kinds = {f[1] for f in r.store.flags(3, 1)}
    assert "after_close" in kinds
    assert r.store.flags(1, 1) == []
    res = r.store.result(3, 1)
    assert "event(s) reached the desk after the round was closed" in res["note"]
    assert "after close" in r.desk.table_view(3)["alerts"]
    lines = record_flags.lines(r.store.flags(3, 1))
    assert any("reached the desk after the round was closed" in l for l in lines), lines
    assert csv_rows(r)[2] == ("3,1,Park Jisoo,Rina Wati,A,2,0,B warning slow_play,"
                              "ok (arrived after the close)")


def test_the_export_waits_for_every_result(tmp_path):
    r = mismatched(tmp_path)
    why = r.store.export_refusal(1)
    assert why.startswith("round 1 has no final result at table(s) 2 (mismatch)")
    r.desk.run("hj", "result", {"table": 2, "take": "table", "reason": "players agree"})
    assert r.store.export_refusal(1) is None


def test_a_record_flagged_late_is_confirmed_by_the_head_judge_before_the_close(tmp_path):
    # Table 2 stays linked, and minutes later sends entries stamped back then: what an
    # opened table's made-up lines look like (lateness.py judges by the link).
    r = room(tmp_path, n=2)
    r.tables[1].play(short_match(), r.local(1))
    r.run(200000)
    r.tables[2].play(short_match(), r.local(2))
    settle(r)
    assert r.store.standing(2, 1) == "ok" and "late" in {f[1] for f in r.store.flags(2, 1)}
    with pytest.raises(CommandError, match=r"flagged: 2 \(record late\)"):
        r.desk.run("hj", "close_round", {})
    r.desk.run("hj", "result", {"table": 2, "take": "table",
                                "reason": "players confirm the entries"})
    assert "late entry" not in r.desk.table_view(2)["alerts"]
    assert r.desk.run("hj", "close_round", {})["flagged"] == []
    assert csv_rows(r)[1] == ("2,1,Lee Jiwoo,Sari Dewi,A,2,0,B warning slow_play,overridden: "
                              "players confirm the entries")
