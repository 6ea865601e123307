"""The desk and fake tables joined by an in-memory link on one simulated clock (Room): the
protocol cases, no threads, no sockets."""
import json

import pytest

from duelclock.app import _LINK_MS as LINK_MS     # a board's link task ticks this often
from duelclock.core.wire import SEQ_BOOT
from duelclock_desk.commands import CommandError
from duelclock_desk.protocol import REPUSH_MS
from tests.bench import gen_record
from tests.host.tables import RESEND_MS, STATE_MS, SessionTable, Room, short_match

KEY = bytes(range(32))


def room(tmp_path, n=3, **kw):
    tables = [SessionTable(KEY, t) for t in range(1, n + 1)]
    r = Room(str(tmp_path / "desk.sqlite"), KEY, tables, **kw)
    for t in tables:
        t.hello(battery=90)
    r.run(1000)
    return r


def start(r, **args):
    out = r.desk.run("judge", "start_round", dict({"round": 1}, **args))
    r.run(200)
    return out


def long_match():
    # gen_record's match after its round_start (round 3, swiss, seating, 45 + 30 min).
    events, expect = gen_record.build(300)
    return events[1:], expect


def test_round_start_reaches_every_table_with_its_names(tmp_path):
    r = room(tmp_path)
    start(r, round=1, limit_s=2400, pairings=[[1, "Kim Minsu", "Budi Santoso"],
                                               [2, "Lee Jiwoo", "Sari Dewi"]])
    for t in r.tables.values():
        assert t.round["round"] == 1 and t.round["limit_s"] == 2400
        assert t.round["start_ms"] == 1000
    assert r.tables[1].round["names"] == {"A": "Kim Minsu", "B": "Budi Santoso"}
    assert r.tables[2].round["names"] == {"A": "Lee Jiwoo", "B": "Sari Dewi"}
    assert "names" not in r.tables[3].round
    st = r.desk.status()
    assert [v["round"] for v in st["tables"]] == [1, 1, 1]
    assert all(v["alerts"] == [] for v in st["tables"]), st["tables"]
    assert st["round"]["round"] == 1 and st["unfinished"] == [1, 2, 3]
    assert [a["command"] for a in r.store.audit_log()] == ["start_round"]


def test_a_range_start_leaves_the_other_tables_alone(tmp_path):
    r = room(tmp_path)
    start(r, round=1, tables=[1, 2], at="+30s")
    assert r.tables[1].round["start_ms"] == 31000
    assert r.tables[3].round is None
    r.run(2 * REPUSH_MS)                        # table 3's round-0 states start nothing
    assert r.tables[3].round is None
    with pytest.raises(CommandError):
        r.desk.run("judge", "extend", {"table": 3, "ms": 60000})


def test_sync_replies_bring_drifting_tables_to_desk_time(tmp_path):
    r = room(tmp_path, ppm={1: 100, 2: -100, 3: 30}, offset_ms={1: 5000, 2: -70000, 3: 123})
    r.run(120000, step_ms=250)
    for t in r.tables.values():
        assert t.sync_replies >= 8
        assert abs(t.desk_ms(r.local(t.tbl)) - r.t) <= 2, t.tbl
    assert r.desk.status()["tables"][0]["sync_err_ms"] <= 2


def test_a_sync_that_asks_for_us_is_answered_with_the_desks_us(tmp_path):
    # A link that stamps finer than a ms hands the desk a float receive time; the desk's own
    # clock here gives whole ms (Room), so t3 is the later of the two.
    r = room(tmp_path, n=1)
    enc = r.tables[1].session.enc
    r.link.to_tables = []
    for fields, rx_ms in (({"t1": 500, "us": True}, r.t + 0.4567), ({"t1": 600}, r.t + 0.25)):
        req = enc.build("sync", fields)
        r.desk.lines(r.link, [req.rstrip(b"\n")], rx_ms)
        reply = json.loads(r.link.to_tables.pop())
        assert (reply["t1"], reply["t2"], reply["re"]) == (fields["t1"], r.t, json.loads(req)["seq"])
        if "us" in fields:
            assert (reply["t2u"], reply["t3"], reply["t3u"]) == (456, r.t, 456)
        else:           # a table of whole ms (or from before us stamps) gets what it knows
            assert "t2u" not in reply and "t3u" not in reply and reply["t3"] == r.t


def test_record_chunks_are_stored_once_whatever_the_order(tmp_path):
    r = room(tmp_path, n=1)
    start(r, round=3, seating=True)
    t = r.tables[1]
    events, expect = long_match()
    seen = []

    def shuffle(lines):
        # Records reversed, every line twice (duplicates are `replay` drops), results last.
        seen.extend(lines)
        recs = [x for x in lines if b'"k":"record"' in x]
        rest = [x for x in lines if b'"k":"record"' not in x]
        return [x for x in reversed(recs) for _ in (0, 1)] + rest

    r.to_desk = shuffle
    refused = t.play(events, r.local(1))
    assert len(refused) == len(expect["rejected_indexes"])
    r.run(3000, step_ms=LINK_MS)    # a record message of 12 events every few link ticks
    n = len(t.record)
    chunks = [x for x in seen if b'"k":"record"' in x]
    assert len(chunks) > 5
    assert r.store.event_count(1, 3) == n
    assert r.store.events(1, 3) == t.record
    res = r.store.result(1, 3)
    assert res["verified"] == "ok" and res["result"] == "A"
    assert (res["wins_a"], res["wins_b"]) == (2, 1)
    assert t.acked == (3, n)
    assert [(p["p"], p["kind"], p["code"]) for p in r.store.penalties(1, 3)] == \
        [(p["p"], p["kind"], p["code"]) for p in expect["penalties"]]
    assert r.desk.drops["replay"] == len(chunks)
    # Acked: the table stops resending; a resend from before the ack changes nothing.
    sent = len(seen)
    r.run(10000)
    assert not [x for x in seen[sent:] if b'"k":"record"' in x]


def test_what_the_desk_committed_is_acked_stored_up_to_a_gap_and_never_sent_again(tmp_path):
    r = room(tmp_path, n=1)
    start(r, round=3, seating=True)
    t = r.tables[1]
    events, expect = long_match()
    lost, chunks = [], []

    def lose_the_third_chunk(lines):
        recs = [x for x in lines if b'"k":"record"' in x]
        chunks.extend(recs)
        if len(chunks) >= 3 and not lost:
            lost.append(json.loads(chunks[2]))
            return [x for x in lines if x is not chunks[2]]
        return lines
    r.to_desk = lose_the_third_chunk
    sent = []
    t.session.send = (lambda send: lambda line, kind: sent.append(line) or send(line, kind))(
        t.session.send)
    t.play(events[:40], r.local(1))
    r.run(3000)
    gap = lost[0]["first"]
    assert 0 < gap < len(t.record) - len(lost[0]["events"])      # events past the gap
    assert r.store.event_count(1, 3) == len(t.record) - len(lost[0]["events"])
    # The events before the lost chunk held, those after it too: the stored ack stops at
    # the gap, and only what it did not cover goes again (after RESEND_MS without an ack).
    assert t.held == (3, gap) and t.acked is None
    r.to_desk = lambda lines: lines
    del sent[:]
    r.run(RESEND_MS + 1000)
    again = [json.loads(x) for x in sent if b'"k":"record"' in x]
    assert again and min(m["first"] for m in again) == gap
    n = len(t.record)
    assert t.held == (3, n) and r.store.held_events(1, 3) == n
    # Everything held: nothing goes again, however long.
    del sent[:]
    r.run(3 * RESEND_MS)
    assert not [x for x in sent if b'"k":"record"' in x]


def test_a_resend_after_a_lost_ack_is_acked_again(tmp_path):
    r = room(tmp_path, n=1)
    start(r)
    t = r.tables[1]
    r.link.send = lambda line, tbl, kind="cmd": (None if b'"k":"ack"' in line
                                                 else r.link.to_tables.append(line))
    t.play(short_match(), r.local(1))
    r.run(500)
    assert r.store.result(1, 1)["verified"] == "ok" and t.acked is None
    del r.link.send                              # the ack gets through this time
    r.run(RESEND_MS + 500)
    assert t.acked == (1, len(t.record))
    assert r.store.event_count(1, 1) == len(t.record)


def test_a_result_the_record_does_not_give_is_flagged_not_acked(tmp_path):
    r = room(tmp_path, n=2)
    start(r)
    liar = r.tables[2]
    liar.lie = {"result": "B", "wins": {"A": 0, "B": 2}}
    for t in r.tables.values():
        t.play(short_match(), r.local(t.tbl))
    r.run(2 * RESEND_MS)
    assert r.tables[1].acked == (1, 8)
    assert liar.acked is None
    res = r.store.result(2, 1)
    assert res["verified"] == "mismatch"
    assert "replays to A 2-0, the table reported B 0-2" in res["note"]
    views = {v["table"]: v for v in r.desk.status()["tables"]}
    assert views[2]["alerts"] == ["mismatch"] and views[1]["alerts"] == []
    assert r.desk.status()["unfinished"] == [2]
    assert r.desk.run("judge", "collect", {})["results"] == {"ok": [1], "mismatch": [2]}


def test_a_result_before_its_record_waits_for_the_missing_events(tmp_path):
    r = room(tmp_path, n=1)
    start(r)
    t = r.tables[1]
    first = []

    def lose_the_second_chunk(lines):
        out = []
        for x in lines:
            if b'"k":"record"' in x and not first:
                first.append(x)
                continue                          # lost once
            out.append(x)
        return out

    t.play(short_match(), r.local(1))
    r.to_desk = lose_the_second_chunk
    r.run(200)
    assert r.store.result(1, 1)["verified"] == "incomplete"
    assert t.acked is None
    r.run(RESEND_MS + 200, step_ms=LINK_MS)     # the record made again: a few link ticks
    assert r.store.result(1, 1)["verified"] == "ok" and t.acked == (1, 8)


def test_pause_resume_extend_reach_the_tables_they_name(tmp_path):
    r = room(tmp_path)
    start(r)
    r.desk.run("judge", "pause", {"tables": [2, 3]})
    r.run(100)
    r.desk.run("judge", "resume", {})
    r.desk.run("judge", "extend", {"table": 3, "ms": 180000})
    r.run(100)
    kinds = {n: [m["k"] for m in t.taken] for n, t in r.tables.items()}
    assert kinds == {1: ["round", "resume"], 2: ["round", "pause", "resume"],
                     3: ["round", "pause", "resume", "extend"]}
    assert r.tables[3].extended_ms == 180000
    with pytest.raises(CommandError):
        r.desk.run("judge", "extend", {"table": 3, "ms": 10})
    log = [(a["command"], a["outcome"][:7]) for a in reversed(r.store.audit_log())]
    assert log == [("start_round", "ok"), ("pause", "ok"), ("resume", "ok"), ("extend", "ok"),
                   ("extend", "refused")]


def test_a_rebooted_table_without_its_round_gets_it_again(tmp_path):
    r = room(tmp_path, n=2)
    start(r, pairings=[[2, "Ana", "Bo"]], rules="KR")
    r.desk.run("judge", "pause", {})
    r.desk.run("judge", "extend", {"table": 2, "ms": 60000})
    r.run(100)
    old = r.tables[2]
    # Table 2 reboots with its command seq persisted but its journal lost: round 0.
    new = SessionTable(KEY, 2, boot=2, seen={0: old.dec.last_seq(0)})
    r.tables[2] = new
    new.hello()
    r.run(200)
    assert [m["k"] for m in new.taken] == ["round", "pause", "extend"]
    assert new.round["names"] == {"A": "Ana", "B": "Bo"} and new.rules == "KR"
    assert all(m["seq"] > old.dec.last_seq(0) for m in new.taken)
    assert new.extended_ms == 60000
    # Journalled at the desk's instants, not when the re-push came: the same match time.
    assert [ev["ev"] for ev in new.record[1:]] == ["pause", "extend"]
    assert new.match.paused_at is not None
    assert new.record[1]["t"] == old.record[1]["t"] and new.record[2]["t"] == old.record[2]["t"]
    r.run(3 * REPUSH_MS)            # it has the round now: nothing more but its record's ack
    assert [m["k"] for m in new.taken if m["k"] != "ack"] == ["round", "pause", "extend"]


def test_rounds_only_go_up_and_the_same_round_takes_a_late_table(tmp_path):
    r = room(tmp_path)
    start(r, round=2, tables=[1, 2])
    with pytest.raises(CommandError):
        r.desk.run("judge", "start_round", {"round": 1})
    r.desk.run("judge", "start_round", {"round": 2, "tables": [3]})
    r.run(100)
    assert r.tables[3].round["round"] == 2
    assert r.desk.status()["round"]["tables"] == [1, 2, 3]


def test_the_desk_restarts_with_its_rounds_records_and_seqs(tmp_path):
    r = room(tmp_path, n=2)
    start(r, pairings=[[1, "Ana", "Bo"]])
    t1 = r.tables[1]
    t1.play(short_match(), r.local(1))
    r.run(500)
    captured = []
    r.to_desk = lambda lines: captured.extend(x for x in lines if b'"k":"sync"' not in x) or lines
    r.run(6000)                                    # some states to replay later
    r.desk.close()
    last_cmd = r.tables[2].dec.last_seq(0)

    r2 = Room(str(tmp_path / "desk.sqlite"), KEY, list(r.tables.values()))
    r2.t = r.t
    assert r2.desk.event["boot"] == 2
    assert r2.desk.round["round"] == 1 and r2.store.event_count(1, 1) == 8
    assert r2.store.result(1, 1)["verified"] == "ok"
    r2.link.receive(b"".join(captured))           # old reports: all replays now
    assert r2.desk.drops["replay"] == len(captured)
    r2.desk.run("judge", "pause", {})
    r2.run(200)
    assert r2.tables[2].taken[-1]["k"] == "pause"
    assert r2.tables[2].dec.last_seq(0) >= 2 * SEQ_BOOT > last_cmd
    assert r2.desk.status()["tables"][1]["alerts"] == []


def test_a_spent_boot_moves_to_the_next(tmp_path):
    r = room(tmp_path, n=1)
    r.desk.enc.seq = 2 * SEQ_BOOT                     # boot 1's seqs are spent
    start(r)
    assert r.desk.event["boot"] == 2 and r.store.event()["boot"] == 2
    assert r.tables[1].taken[0]["seq"] == 2 * SEQ_BOOT


def test_status_json_is_serialisable(tmp_path):
    r = room(tmp_path)
    start(r)
    json.dumps(r.desk.status())
    json.dumps(r.desk.table_detail(1))


def test_a_will_from_a_table_never_heard_from_is_ignored(tmp_path):
    r = room(tmp_path, n=1)
    r.desk.link_status(r.link, 99, False)
    r.desk.link_status(r.link, 1, False)
    assert [v["table"] for v in r.desk.status()["tables"]] == [1]
    assert r.desk.table_view(1)["alerts"] == ["offline"]
    r.run(6000)                                  # its next message: online again
    assert r.desk.table_view(1)["alerts"] == []


def test_a_refused_command_sends_nothing_and_uses_no_seq(tmp_path):
    r = room(tmp_path, n=1)
    start(r)
    seq, replies = r.desk.enc.seq, r.tables[1].sync_replies
    for name, args in (("start_round", {"round": 1, "judge_extend": "yes"}),
                       ("extend", {"table": 1, "ms": 1.5}),
                       ("pause", {"at_ms": "soon"}),
                       ("start_round", {"round": 2, "tables": [0]})):
        with pytest.raises(CommandError):
            r.desk.run("judge", name, args)
    r.run(100)
    # The only seqs used meanwhile: the replies to the table's sync requests.
    assert r.desk.enc.seq - seq == r.tables[1].sync_replies - replies
    assert [m["k"] for m in r.tables[1].taken] == ["round"]
    assert r.desk.round["round"] == 1 and len(r.store.cmds(1)) == 1


def test_sync_figures_are_shown_and_judged_in_real_ms_whatever_the_speed(tmp_path):
    # At 40x a table's 800 desk-rate ms of sync error are 20 real ms: the alert's edge
    # (SYNC_ERR_ALERT_MS), not past it; 840 are 21 real ms: past it.
    r = room(tmp_path, n=1)
    r.desk.speed = 40.0
    t = r.tables[1]
    for err_ms, alerts in ((800, []), (840, ["sync"])):
        t.clock.error_ms = lambda local_ms: err_ms
        r.run(STATE_MS + 100)
        v = r.desk.table_view(1)
        assert (v["sync_err_ms"], v["alerts"]) == (err_ms // 40, alerts)
        row = r.store.table(1)        # the age the table stated, plus the time since, / 40
        assert row["sync_age_ms"] + r.t - row["state_ms"] >= 40
        assert v["sync_age_ms"] == (row["sync_age_ms"] + r.t - row["state_ms"]) // 40


def test_the_hello_gives_the_desk_each_tables_health(tmp_path):
    from duelclock import VERSION
    r = room(tmp_path, n=3)
    r.tables[1].hello(battery=80, flash_kb=812, rssi_dbm=-58)
    r.tables[2].hello(battery=9, flash_kb=40, rssi_dbm=-83)           # low, weak
    r.run(200)
    v = {t["table"]: t for t in r.desk.status()["tables"]}
    assert (v[1]["fw"], v[1]["battery"], v[1]["flash_kb"], v[1]["rssi_dbm"], v[1]["reboots"]) \
        == (VERSION, 80, 812, -58, 0)
    assert v[1]["alerts"] == [] and v[2]["alerts"] == ["battery", "weak signal"]
    assert v[3]["flash_kb"] is None and v[3]["rssi_dbm"] is None      # an older board's hello
    # a table on other firmware than the desk's
    r.tables[3].fw = "0.0.9"
    r.tables[3].hello()
    r.run(200)
    assert {t["table"]: t for t in r.desk.status()["tables"]}[3]["alerts"] == ["firmware"]

    # reboots: counted in the running round only (a hello after a boot has a higher seq)
    r.tables[1].reboot()
    r.tables[1].hello()
    r.run(200)
    assert r.desk.status()["tables"][0]["reboots"] == 0                 # no round yet
    start(r)
    for _ in range(2):
        r.tables[1].reboot()
        r.tables[1].hello(battery=79)
        r.run(200)
    r.tables[2].hello(battery=9)                    # a link back up, no reboot
    r.run(200)
    v = {t["table"]: t for t in r.desk.status()["tables"]}
    assert (v[1]["reboots"], v[2]["reboots"], v[3]["reboots"]) == (2, 0, 0)
    # on serial now: no Wi-Fi signal; the battery and flash figures stay until told again
    assert (v[1]["rssi_dbm"], v[1]["battery"], v[1]["flash_kb"]) == (None, 79, 812)
    start(r, round=2)
    assert r.desk.status()["tables"][0]["reboots"] == 0                 # a new round


def test_status_lists_each_tables_health(tmp_path):
    from duelclock import VERSION
    from duelclock_desk.client import status_lines
    r = room(tmp_path, n=2)
    r.tables[2].hello(battery=64, flash_kb=812, rssi_dbm=-61)
    r.run(200)
    lines = status_lines(r.desk.status())
    head = lines.index([ln for ln in lines if "free flash" in ln][0])
    assert lines[head].split() == ["table", "board", "firmware", "battery", "Wi-Fi", "free",
                                   "flash", "reboots"]
    assert lines[head + 1].split() == ["1", "FAKE", VERSION, "90%", "-", "-", "0"]
    assert lines[head + 2].split() == ["2", "FAKE", VERSION, "64%", "-61", "dBm", "812", "KB",
                                       "0"]


def test_sync_requests_are_answered_where_they_arrive_and_the_rest_goes_on(tmp_path):
    # answer_syncs is what a link's own thread calls (api.ThreadSink): the sync requests
    # among a batch are answered at once on that link; the other lines go on to lines() in
    # order, and heard_syncs() tells the loop which tables it heard from and what it dropped.
    # (A desk service answers every sync request so: its sync replies are a seq stream of
    # their own, which the loop's replies would not continue.)
    t1, t2 = SessionTable(KEY, 1), SessionTable(KEY, 2)
    r = Room(str(tmp_path / "desk.sqlite"), KEY, [t1, t2])
    r.t = 5000
    for t in (t1, t2):
        t.hello()
        t.tick(r.local(t.tbl))
    out = t1.take() + t2.take()
    lines = [line.rstrip(b"\n") for k, line in out if k == "sync"]
    others = [line.rstrip(b"\n") for k, line in out if k != "sync"]
    assert len(lines) == 2 and len(others) == 4               # hellos and states
    forged = json.loads(lines[1])
    forged["t1"] += 1                                           # its signature no longer fits
    forged = json.dumps(forged, separators=(",", ":")).encode()
    rest, heard, dropped = r.desk.answer_syncs(
        r.link, [b"{nope", lines[0], forged, others[0], lines[1]] + others[1:], 5003.25)
    assert rest == [b"{nope"] + others
    assert heard == {1: 5003.25, 2: 5003.25} and dropped == {"sig": 1}
    replies = [json.loads(line) for line in r.link.to_tables]
    assert [(m["k"], m["tbl"], m["t2"]) for m in replies] == [("sync", 1, 5003), ("sync", 2, 5003)]
    # The keys derived to sign them serve the commands too (a round start derives none)
    assert r.desk.enc._keys is r.desk.sync_enc._keys and set(r.desk.enc._keys) == {1, 2}
    # A request taken is not taken again
    assert r.desk.answer_syncs(r.link, [lines[0]], 5004) == ([], {}, {"replay": 1})
    # The replies reach the tables: each takes its exchange
    for line in r.link.to_tables:
        for t in (t1, t2):
            t.feed(line, r.local(t.tbl) + 5)
    assert (t1.sync_replies, t2.sync_replies) == (1, 1) and t1.stamps[0][1:3] == (5003, 5003)
    # The loop: the other lines as any, the tables heard then (last seen, route), the drops
    # counted for the link
    r.desk.lines(r.link, rest, 5003)
    assert r.desk.drops["sig"] == 0 and r.desk.drops["json"] == 1
    r.desk.heard_syncs(r.link, heard, {"sig": 1, "replay": 1})
    assert r.store.table(1)["last_seen_ms"] == 5003 and r.desk.route[2] is r.link
    assert r.desk.drops["sig"] == 1 and r.desk.link_drops[r.link.url]["sig"] == 1
    assert r.desk.drops["replay"] == 1 and r.store.table(2)["board"] == "FAKE"


def test_a_spent_boot_answers_no_sync_request_until_the_loop_takes_the_next(tmp_path):
    t = SessionTable(KEY, 1)
    r = Room(str(tmp_path / "desk.sqlite"), KEY, [t])
    r.desk.sync_enc.seq = r.desk.sync_end             # boot 1's sync seqs are spent
    r.t = 5000
    t.session.sync_at = 0
    t.session.clock.sent(None)
    t.tick(r.local(1))
    line = [line.rstrip(b"\n") for k, line in t.take() if k == "sync"][0]
    r.link.to_tables = []
    assert r.desk.answer_syncs(r.link, [line], 5000) == ([], {1: 5000}, {})
    assert r.link.to_tables == [] and r.desk.event["boot"] == 1      # as lost: asked again
    r.desk.tick()                                     # the loop's next tick: boot 2
    assert r.desk.event["boot"] == 2 and r.store.event()["boot"] == 2
    t.session.sync_at = 0
    t.session.clock.sent(None)
    t.tick(r.local(1))
    line = [line.rstrip(b"\n") for k, line in t.take() if k == "sync"][0]
    r.desk.answer_syncs(r.link, [line], 5001)
    assert [json.loads(x)["seq"] for x in r.link.to_tables] == [2 * SEQ_BOOT]


def test_a_desk_behind_leaves_sync_requests_unanswered(tmp_path):
    # api.ThreadSink sheds them while more than SHED_BACKLOG items wait for the loop: the
    # link's thread goes on to the states, and the tables back off (core/clock.py).
    import asyncio
    from duelclock_desk.api import SHED_BACKLOG, ThreadSink
    t = SessionTable(KEY, 1)
    r = Room(str(tmp_path / "desk.sqlite"), KEY, [t])
    r.t = 5000
    t.tick(r.local(1))
    t.hello()
    out = t.take()
    sync = [line.rstrip(b"\n") for k, line in out if k == "sync"]
    hello = [line.rstrip(b"\n") for k, line in out if k == "hello"]
    assert r.desk.answer_syncs(r.link, sync + hello, 5000, shed=True) == (hello, {}, {})
    assert r.link.to_tables == []
    loop = asyncio.new_event_loop()
    try:
        queue = asyncio.Queue()
        sink = ThreadSink(r.desk.now_ms, loop, queue, r.desk)
        for _ in range(SHED_BACKLOG + 1):
            queue.put_nowait(("lines", r.link, [], 0))
        sink.lines(r.link, sync, 5001)                     # behind: left unanswered
        while not queue.empty():
            queue.get_nowait()
        sink.flush_heard()
        sink._drain()
        assert r.link.to_tables == [] and queue.empty()
        sink.lines(r.link, sync, 5002)                     # caught up: answered
        assert [json.loads(x)["t2"] for x in r.link.to_tables] == [5002]
        assert queue.empty()                               # the loop is not woken for it
        sink.link_status(r.link, 1, False)                 # what comes next: after it
        sink._drain()
        assert [queue.get_nowait()[:3] for _ in range(2)] == [
            ("heard_syncs", r.link, {1: 5002}), ("link_status", r.link, 1)]
    finally:
        loop.close()
