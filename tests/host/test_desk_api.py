"""The desk's HTTP API as a client (the CLI, later the dashboard) sees it: JSON in and out,
refusals as 400 with a reason, the server-sent events feed, the results CSV."""
import asyncio
import json

import aiohttp

from tests.host.desk_rig import run_desk, until
from tests.host.tables import SessionTable, short_match

KEY = bytes(range(32))



async def next_event(stream, kind, match):
    """The data of the next server-sent event of `kind` for which match(data) holds."""
    event = None
    async for raw in stream:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: ") and event == kind:
            data = json.loads(line[6:])
            if match(data):
                return data


def test_api_commands_refusals_events_and_csv(tmp_path):
    tables = [SessionTable(KEY, 1), SessionTable(KEY, 2)]

    async def scenario(svc, server):
        base = "http://127.0.0.1:%d/api/" % svc.http_port
        async with aiohttp.ClientSession() as http:
            await until(lambda: len(svc.desk.store.tables()) == 2, what="tables")
            for path, body, why in [
                    ("round/start", {"round": 1, "colour": "red"}, "unknown keys: colour"),
                    ("round/start", {"round": 1, "kind": "draft"}, "kind is swiss"),
                    ("round/start", {"round": 1, "limit_s": -5}, "bad round"),
                    ("round/start", {"round": 1, "pairings": [[1, "x" * 65, "B"]]},
                     "a player name is 1 to 64"),
                    ("pause", {}, "no round is running"),
                    ("extend", {"table": 1, "ms": 60000}, "no round is running")]:
                async with http.post(base + path, json=body) as r:
                    assert r.status == 400 and why in (await r.json())["error"], (path, body)
            async with http.post(base + "pause", data=b"[1,") as r:
                assert r.status == 400
            async with http.get(base + "events") as events:
                async with http.post(base + "round/start",
                                     json={"round": 1, "who": "alice"}) as r:
                    assert r.status == 200 and (await r.json())["round"] == 1
                data = await asyncio.wait_for(next_event(
                    events.content, "table", lambda d: d["round"] == 1), 10)
                assert data["table"] in (1, 2)
            tables[0].play(short_match(), server.local_ms())
            await until(lambda: tables[0].acked, what="ack")
            async with http.get(base + "tables/1") as r:
                detail = await r.json()
            assert detail["result_detail"]["verdict"]["result"] == "A"
            assert detail["events_stored"] == 8
            assert detail["penalties"][0]["code"] == "slow_play"
            async with http.get(base + "tables/7") as r:
                assert r.status == 404
            # Table 2 has no result yet: the export waits for it, unless forced.
            async with http.get(base + "results.csv") as r:
                assert r.status == 409 and (await r.json())["missing"] == [[2, "no result"]]
            async with http.get(base + "results.csv?force=1") as r:
                assert r.content_type == "text/csv"
                assert (await r.text()).splitlines()[1] == "1,1,,,A,2,0,B warning slow_play,ok"
        log = svc.desk.store.audit_log()
        assert log[0]["who"] == "alice@127.0.0.1" and log[0]["outcome"] == "ok"
        assert sum(1 for a in log if a["outcome"].startswith("refused")) == 5

    run_desk(tmp_path, KEY, tables, scenario)


def test_api_the_head_judges_result_close_and_a_late_record(tmp_path):
    # Table 1 reports B 0-2 for a record of A 2-0; table 2 is unlinked and plays on.
    liar, away = SessionTable(KEY, 1), SessionTable(KEY, 2)
    liar.lie = {"result": "B", "wins": {"A": 0, "B": 2}}

    async def scenario(svc, server):
        base = "http://127.0.0.1:%d/api/" % svc.http_port
        store = svc.desk.store
        async with aiohttp.ClientSession() as http:
            async def post(path, body, status=200):
                async with http.post(base + path, json=body) as r:
                    assert r.status == status, (path, body, await r.text())
                    return await r.json()

            await until(lambda: len(store.tables()) == 2, what="tables")
            await post("round/start", {"round": 1, "pairings": [[1, "Kim", "Budi"],
                                                                [2, "Lee", "Sari"]]})
            await until(lambda: liar.round and away.round, what="the round")
            server.tables.remove(away)
            liar.play(short_match(), server.local_ms())
            await until(lambda: store.standing(1, 1) == "mismatch", what="the mismatch")
            why = (await post("round/close", {}, 400))["error"]
            assert why == ("round 1 is not done: unfinished: tables 2; flagged: 1 (mismatch); "
                           "--force closes it anyway")
            assert "reason" in (await post("result", {"table": 1, "take": "table"}, 400))["error"]
            out = await post("result", {"table": 1, "take": "replay", "reason": "sheet: A 2-0",
                                        "who": "hj"})
            assert (out["result"], out["how"], out["who"]) == ("A", "overridden", "hj@127.0.0.1")
            await until(lambda: liar.acked == (1, 8), what="the settled record acked")
            async with http.get(base + "tables/1") as r:
                detail = await r.json()
            assert detail["verified"] == "overridden" and detail["decision"]["reason"] == \
                "sheet: A 2-0"
            assert [v["how"] for v in detail["versions"]] == ["reported", "overridden"]
            async with http.get(base + "results.csv") as r:
                assert r.status == 409 and "table(s) 2 (no result)" in (await r.json())["error"]
            closed = await post("round/close", {"force": True, "who": "hj"})
            assert closed["unfinished"] == [2]
            # Table 2 comes back after the close: its record is stored, flagged, verified.
            away.play(short_match(), server.local_ms())
            server.tables.append(away)
            await until(lambda: away.acked == (1, 8), what="the late record acked")
            async with http.get(base + "tables/2") as r:
                assert "after close" in (await r.json())["alerts"]
            async with http.get(base + "results.csv") as r:
                assert r.status == 200
                assert (await r.text()).splitlines()[1:] == [
                    "1,1,Kim,Budi,A,2,0,B warning slow_play,overridden: sheet: A 2-0",
                    "2,1,Lee,Sari,A,2,0,B warning slow_play,ok (arrived after the close)"]
        assert [(a["command"], a["outcome"][:7]) for a in store.audit_log()[:4]] == [
            ("close_round", "ok"), ("result", "ok"), ("result", "refused"),
            ("close_round", "refused")]

    run_desk(tmp_path, KEY, [liar, away], scenario)


def test_unlock_is_audited_and_refuses_what_is_no_challenge(tmp_path):
    from duelclock.core.sign import table_key, unlock_code

    async def scenario(svc, server):
        base = "http://127.0.0.1:%d/api/" % svc.http_port
        async with aiohttp.ClientSession() as http:
            for body, why in [({"table": 17, "challenge": "1234"}, "the 8 digits"),
                              ({"table": 17, "challenge": "1234567x"}, "the 8 digits"),
                              ({"table": 0, "challenge": "12345678"}, "a number from 1"),
                              ({"table": "17", "challenge": "12345678"}, "a number from 1"),
                              ({"table": 17, "challenge": 12345678}, "the 8 digits")]:
                async with http.post(base + "unlock", json=body) as r:
                    assert r.status == 400 and why in (await r.json())["error"], body
            async with http.post(base + "unlock", json={"table": 17, "challenge": "0412 7783",
                                                        "who": "hj"}) as r:
                assert r.status == 200
                got = await r.json()
        assert got == {"table": 17, "code": unlock_code(table_key(KEY, 17), "04127783")}
        log = svc.desk.store.audit_log()
        assert (log[0]["who"], log[0]["command"], log[0]["outcome"]) == \
            ("hj@127.0.0.1", "unlock", "ok")
        assert json.loads(log[0]["args"]) == {"table": 17, "challenge": "0412 7783"}
        assert all(got["code"] not in a["args"] + a["outcome"] for a in log)   # nor the code
        assert sum(1 for a in log if a["outcome"].startswith("refused")) == 5

    run_desk(tmp_path, KEY, [SessionTable(KEY, 1)], scenario)


def test_a_desk_behind_on_its_links_still_gives_the_loop_turns():
    # 1,000 link items queued at once (a desk behind on 2,000 tables): the loop's other work
    # (the room page, the CLI, a round start) runs after the first TAKE_BATCH of them, not
    # once the whole backlog is taken; each batch is flushed.
    from duelclock_desk.api import TAKE_BATCH, Service

    class Desk:
        taken = flushes = 0

        def lines(self, *args):
            Desk.taken += 1

        def flush(self):
            Desk.flushes += 1

    svc = Service(":memory:", KEY)
    svc.desk = Desk()
    seen = []

    async def main():
        queue = asyncio.Queue()
        for _ in range(1000):
            queue.put_nowait(("lines", None, [], 0))
        task = asyncio.create_task(svc._take(queue))
        await asyncio.sleep(0)                     # the take task starts on its first batch
        seen.append(Desk.taken)
        await until(lambda: Desk.taken == 1000, what="backlog taken")
        task.cancel()

    asyncio.run(main())
    assert seen == [TAKE_BATCH] and Desk.flushes == 1000 // TAKE_BATCH, (seen, Desk.flushes)
