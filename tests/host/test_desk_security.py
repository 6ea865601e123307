"""A hostile "table" on a socket link: forged, impersonating, replayed, unsigned, truncated,
reflected and 1 MB lines are dropped, counted, visible in the desk's status, and change
nothing in the store."""
import asyncio
import json
import socket
import threading
import time
import urllib.request

from duelclock.core.sign import encode, table_key
from duelclock.core.wire import Encoder
from duelclock_desk.api import Service

KEY = bytes(range(32))


def hostile_lines():
    t5 = Encoder(table_key(KEY, 5), 1, tbl=5)
    hello = t5.build("hello", {"board": "X", "fw": "1"})
    state = {"round": 1, "phase": "duel", "duel": 1, "wins": {"A": 0, "B": 0},
             "lp": {"A": 8000, "B": 0}, "turn": 1, "remaining_ms": 1}
    other = Encoder(table_key(b"some other event key", 5), 1, tbl=5).build("state", state)
    as_six = encode(dict(state, v=1, k="state", tbl=5, seq=2 ** 24 + 5), table_key(KEY, 6))
    unsigned = json.dumps(dict(state, v=1, k="state", tbl=5, seq=2 ** 24 + 6)).encode() + b"\n"
    truncated = t5.build("state", state)[:60] + b"\n"
    reflected = Encoder(KEY, 1).build("extend", {"round": 1, "ms": 60000}, 5)
    huge = b'{"v":1,"k":"state","pad":"' + b"x" * 1000000 + b'"}\n'
    return [hello, other, as_six, hello, unsigned, truncated, reflected, huge]


def serve_once(data):
    server = socket.create_server(("127.0.0.1", 0))
    conns = []

    def run():
        conn, _ = server.accept()
        conns.append(conn)
        time.sleep(0.3)           # pyserial empties the input buffer as it opens the port
        conn.sendall(data)

    threading.Thread(target=run, daemon=True).start()
    return server, conns


def test_hostile_lines_are_dropped_counted_and_shown(tmp_path):
    server, conns = serve_once(b"".join(hostile_lines()))
    url = "socket://127.0.0.1:%d" % server.getsockname()[1]
    svc = Service(str(tmp_path / "d.sqlite"), KEY, links=[url], broker="off", http_port=0)
    expect = {"sig": 2, "replay": 1, "unsigned": 1, "json": 1, "type": 1, "size": 1}

    async def scenario():
        await svc.start()
        try:
            end = time.monotonic() + 10
            while sum(svc.desk.drops.values()) < sum(expect.values()) and time.monotonic() < end:
                await asyncio.sleep(0.02)
            api = "http://127.0.0.1:%d/api/status" % svc.http_port
            return json.loads(await asyncio.to_thread(lambda: urllib.request.urlopen(api).read()))
        finally:
            await svc.stop()

    st = asyncio.run(scenario())
    server.close()
    for c in conns:
        c.close()
    assert {k: v for k, v in st["drops"].items() if v} == expect
    assert {k: v for k, v in st["links"][0]["drops"].items() if v} == expect
    (t5,) = st["tables"]                        # the one good line: table 5's hello
    assert t5["table"] == 5 and t5["board"] == "X" and t5["phase"] is None
