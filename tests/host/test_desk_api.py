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
            async with http.get(base + "results.csv") as r:
                assert r.content_type == "text/csv"
                assert (await r.text()).splitlines()[1] == "1,1,,,A,2,0,B warning slow_play,ok"
        log = svc.desk.store.audit_log()
        assert log[0]["who"] == "alice@127.0.0.1" and log[0]["outcome"] == "ok"
        assert sum(1 for a in log if a["outcome"].startswith("refused")) == 5

    run_desk(tmp_path, KEY, tables, scenario)


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
