"""The desk service over real byte streams: a pseudo-terminal (raw) and a TCP socket
(socket:// URL), both through SerialLink and pyserial's serial_for_url, at the same time."""
import asyncio
import json
import urllib.request

import pytest

from duelclock.core.clock import FIRST
from duelclock.core.wire import MAX_LINE_BYTES
from duelclock_desk.api import Service
from duelclock_desk.links import MqttLink, SerialLink, open_link
from duelclock_desk.store import Store
from tests.host.tables import SessionTable, StreamTables, short_match
from tests.host.desk_rig import run_desk, until

KEY = bytes(range(32))



def test_links_are_chosen_by_url_scheme():
    assert type(open_link("/dev/ttyACM0", "e")) is SerialLink
    assert type(open_link("socket://127.0.0.1:7001", "e")) is SerialLink
    assert type(open_link("loop://", "e")) is SerialLink
    assert type(open_link("mqtt://127.0.0.1:1883", "e")) is MqttLink
    with pytest.raises(ValueError):
        open_link("http://example", "e")


def test_a_round_over_a_pty_and_a_socket_at_once(tmp_path):
    pty_tables = [SessionTable(KEY, n) for n in (1, 2)]
    tcp_tables = [SessionTable(KEY, n) for n in (3, 4)]
    on_pty = StreamTables.on_pty(pty_tables, ppm=80, offset_ms=40000)
    on_tcp = StreamTables.serve_tcp(tcp_tables, ppm=-60, offset_ms=-5000)
    everyone = pty_tables + tcp_tables
    svc = Service(str(tmp_path / "d.sqlite"), KEY, links=[on_pty.path, on_tcp.url],
                  broker="off", http_port=0)

    async def scenario():
        await svc.start()
        try:
            await until(lambda: all(t.sync_replies >= FIRST for t in everyone), what="sync")
            svc.desk.run("test", "start_round", {"round": 1, "pairings": [[4, "Ana", "Bo"]]})
            await until(lambda: all(t.round for t in everyone), what="round")
            assert tcp_tables[1].round["names"] == {"A": "Ana", "B": "Bo"}
            # Every table agrees with the desk's clock within a few ms (loopback legs).
            for t, drv in [(t, on_pty) for t in pty_tables] + [(t, on_tcp) for t in tcp_tables]:
                assert abs(t.desk_ms(drv.local_ms()) - svc.desk.now_ms()) <= 5, t.tbl
            pty_tables[0].play(short_match(), on_pty.local_ms())
            tcp_tables[0].play(short_match(), on_tcp.local_ms())
            await until(lambda: pty_tables[0].acked and tcp_tables[0].acked, what="acks")
            url = "http://127.0.0.1:%d/api/status" % svc.http_port
            st = json.loads(await asyncio.to_thread(lambda: urllib.request.urlopen(url).read()))
            links = {v["table"]: v["link"] for v in st["tables"]}
            assert links == {1: on_pty.path, 2: on_pty.path, 3: on_tcp.url, 4: on_tcp.url}
            assert [l["up"] for l in st["links"]] == [True, True]
            assert sum(st["drops"].values()) == 0
        finally:
            await svc.stop()

    try:
        asyncio.run(scenario())
    finally:
        on_pty.stop()
        on_tcp.stop()
    store = Store(str(tmp_path / "d.sqlite"))               # what the desk left on disk
    assert [store.result(n, 1)["verified"] for n in (1, 3)] == ["ok", "ok"]


def test_a_lost_socket_is_reopened(tmp_path):
    tables = [SessionTable(KEY, 1)]

    async def scenario(svc, server):
        link = svc.desk.links[0]
        await until(lambda: link.up and server.connections == 1, what="connect")
        link._port.close()                      # as an unplugged cable would
        await until(lambda: server.connections == 2, what="reconnect")
        svc.desk.run("test", "start_round", {"round": 1})
        await until(lambda: tables[0].round, what="round after reconnect")

    run_desk(tmp_path, KEY, tables, scenario)
