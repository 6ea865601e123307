"""Duplicate and out-of-order delivery through the real links into the real store: the
desk service (api.Service: links, Desk, SQLite store) with a table's record arriving
  - on a serial link (the desk's SerialLink on a socket:// port): chunks out of order, a
    frame retransmitted byte for byte, chunks sent again with new seqs and other
    boundaries (the firmware's resend), the result before the last chunk, every line cut
    at random byte boundaries;
  - over MQTT through a real mosquitto: chunks published out of order and twice by the
    table, and a real QoS 1 redelivery to the desk: a proxy between desk and broker
    swallows the desk's PUBACKs, then drops the connection; the desk's persistent session
    resumes and mosquitto sends every unacknowledged report again (DUP set).
Each time the store must hold each event once, at its index, in the table's order, the
result verified and acked."""
import asyncio
import json
import random
import socket
import threading
import time

import pytest
from paho.mqtt import client as mqtt

from duelclock.core.clock import FIRST
from duelclock.core.sign import pin_hash
from duelclock.core.wire import Encoder
from duelclock_desk.api import Service
from duelclock_desk.broker import Mosquitto
from tests.faults.netkit import MqttPackets, Proxy, stored_rows
from tests.host.tables import RESEND_MS, SessionTable
from tests.host.desk_rig import until

KEY = bytes(range(32))
EVENT = "delivery"
ROUND = {"round": 1, "kind": "swiss", "start_ms": 0, "limit_s": 2700, "cap_s": 1800,
         "extra_turns": 1, "seating": False}
CHUNK = 4                    # events per record line here: several lines to shuffle


def long_match():
    """A 2-0 with many turns: a record of 30-odd events."""
    ev, t = [], 60000
    for duel, first in ((1, "A"), (2, "B")):
        ev.append({"t": t, "ev": "duel_start", "first": first})
        for i in range(6):
            t += 20000
            ev.append({"t": t, "ev": "lp", "B": -1000, "by": "B"})
            t += 20000
            ev.append({"t": t, "ev": "turn_end"})
        t += 20000
        ev.append({"t": t, "ev": "lp", "B": -2000, "by": "B"})
        t += 120000
    return ev


def table_with_record(tbl):
    t = SessionTable(KEY, tbl)
    t.feed(Encoder(KEY, 0).build("round", ROUND, tbl), 0)     # boot 0: the desk's seqs follow
    assert t.play(long_match()) == []
    assert t.match.over
    return t


def record_line(t, first, n):
    return t.enc.build("record", {"round": 1, "first": first,
                                  "events": t.record[first:first + n],
                                  "total": len(t.record)})


def result_line(t):
    return t.enc.build("result", {"round": 1, "result": t.result["result"],
                                  "wins": t.result["wins"], "events": len(t.record)})



def run_service(svc, scenario):
    async def main():
        await svc.start()
        try:
            await scenario(svc)
        finally:
            await svc.stop()
    asyncio.run(main())


def assert_stored_once_in_order(store_path, t, drops):
    rows = stored_rows(store_path, t.tbl, 1)
    assert sorted(rows) == list(range(len(t.record))), "indices stored: %s" % sorted(rows)
    assert [rows[i] for i in range(len(t.record))] == t.record
    assert drops["replay"] > 0, "no duplicate reached the desk: the test proved nothing"


def test_serial_retransmits_and_reordering_store_each_event_once(tmp_path):
    rng = random.Random(7)
    t = table_with_record(1)
    n = len(t.record)
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    conn = {}

    def accept_and_read():
        c, _ = srv.accept()
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn["c"] = c
        while True:
            data = c.recv(4096)
            if not data:
                return
            t.feed(data, 0)

    threading.Thread(target=accept_and_read, daemon=True).start()
    svc = Service(str(tmp_path / "d.sqlite"), KEY, EVENT, links=["socket://127.0.0.1:%d" % port],
                  broker="off", http_port=0)

    def write_cut(lines):
        # The lines as a USB CDC stream delivers them: split anywhere, in bursts.
        data = b"".join(lines)
        i = 0
        while i < len(data):
            j = min(len(data), i + rng.randint(1, 300))
            conn["c"].sendall(data[i:j])
            i = j
            time.sleep(0.001)

    async def scenario(svc):
        await until(lambda: "c" in conn, what="the desk on the port")
        chunks = [record_line(t, first, CHUNK) for first in range(0, n, CHUNK)]
        order = list(range(len(chunks)))
        rng.shuffle(order)
        last = order.pop()                      # held back until after the result
        sent = []
        for i in order:
            sent += [chunks[i], chunks[i]] if i % 2 else [chunks[i]]   # same frame twice
        # The firmware's resend: the record again from 0, new seqs, other boundaries.
        sent += [record_line(t, first, CHUNK + 1) for first in range(0, n - CHUNK, CHUNK + 1)]
        sent += [result_line(t), chunks[last], chunks[last]]
        write_cut(sent)
        await until(lambda: t.acked == (1, n), what="the ack of all %d events" % n)
        res = svc.desk.store.result(1, 1)
        assert (res["verified"], res["events"]) == ("ok", n)
        assert_stored_once_in_order(svc.store_path, t, svc.desk.drops)

    run_service(svc, scenario)


@pytest.mark.needs("mosquitto")
def test_mqtt_qos1_redelivery_and_reordering_store_each_event_once(tmp_path):
    rng = random.Random(11)
    t = table_with_record(2)
    n = len(t.record)
    broker = Mosquitto()
    seen = {"dup_publishes": 0, "swallow": False, "swallowed": 0}

    def filters():
        ups, downs = MqttPackets(), MqttPackets()

        def up(data):                         # desk -> broker: PUBACKs lost while swallowing
            if not seen["swallow"]:
                return data
            pkts = ups.feed(data)
            seen["swallowed"] += sum(1 for p in pkts if p[0] >> 4 == 4)
            return b"".join(p for p in pkts if p[0] >> 4 != 4)

        def down(data):                       # broker -> desk: count the redeliveries
            for p in downs.feed(data):
                if p[0] >> 4 == 3 and p[0] & 0x08:
                    seen["dup_publishes"] += 1
            return data
        return up, down

    proxy = Proxy(("127.0.0.1", broker.port), filters)
    base = "duelclock/%s/table/2/" % EVENT
    pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="duelclock-t2")
    pub.on_message = lambda c, u, msg: t.feed(msg.payload + b"\n", 0)
    pub.connect("127.0.0.1", broker.port)
    pub.subscribe(base + "cmd", 1)
    pub.loop_start()
    svc = Service(str(tmp_path / "d.sqlite"), KEY, EVENT, broker=proxy.url, http_port=0)

    async def scenario(svc):
        link = svc.desk.links[0]
        await until(lambda: link.up, what="the desk on the broker")
        chunks = [record_line(t, first, CHUNK) for first in range(0, n, CHUNK)]
        order = list(range(len(chunks)))
        rng.shuffle(order)
        seen["swallow"] = True
        for i in order:                       # seqs out of order; some published twice
            for _ in range(1 + i % 2):
                pub.publish(base + "report", chunks[i].rstrip(b"\n"), 1).wait_for_publish(5)
        store = svc.desk.store
        await until(lambda: store.event_count(2, 1) == n, what="the chunks at the desk")
        await until(lambda: seen["swallowed"] >= len(order), what="the PUBACKs swallowed")
        replays = svc.desk.drops["replay"]
        seen["swallow"] = False
        proxy.cut()                           # the desk's connection drops, unacked
        proxy.restore()
        await until(lambda: seen["dup_publishes"] >= len(order), timeout_s=20,
                    what="mosquitto's redelivery to the desk")
        await until(lambda: svc.desk.drops["replay"] >= replays + len(order),
                    what="the redelivered reports at the desk")
        pub.publish(base + "report", result_line(t).rstrip(b"\n"), 1).wait_for_publish(5)
        await until(lambda: t.acked == (1, n), what="the ack of all %d events" % n)
        res = store.result(2, 1)
        assert (res["verified"], res["events"]) == ("ok", n)
        assert_stored_once_in_order(svc.store_path, t, svc.desk.drops)

    try:
        run_service(svc, scenario)
    finally:
        pub.loop_stop()
        pub.disconnect()
        proxy.stop()
        broker.stop()


def test_a_lost_result_is_sent_again_until_the_desk_acks(tmp_path):
    # The link takes every line (a USB pipe with the desk away) and nothing comes back: the
    # table sends its record again after RESEND_MS, and its result with it.
    from duelclock import app

    class Board:
        BOARD = "SIM"
        battery_pct = buzzer = led = None

    class Wire:
        up = True

        def __init__(self):
            self.sent = []

        def poll(self):
            return b""

        def send(self, line, kind):
            self.sent.append(json.loads(line)["k"])
            return True

    now = [0]
    cfg = {"table": 1, "key": "00" * 32, "pins": {"floor": pin_hash("1111", b"salt", 2),
                                                  "head": pin_hash("2222", b"salt", 2)}}
    wire = Wire()
    t = app.Table(Board(), cfg, wire, lambda: now[0], str(tmp_path)).session
    for _ in range(FIRST):
        t.clock.sample(0, 0, 0, 0)                           # synced: desk = local
    t.ui.start_round({"t": 0, "ev": "round_start", "round": 1, "kind": "swiss", "limit_s": 2700,
                      "cap_s": 1800, "extra_turns": 1, "seating": False, "rules": "ID",
                      "start_ms": 0})
    t.start_ms = 0
    for ev in ({"t": 1000, "ev": "duel_start", "first": "A"}, {"t": 2000, "ev": "lp", "B": -8000},
               {"t": 3000, "ev": "duel_start", "first": "B"}, {"t": 4000, "ev": "lp", "B": -8000}):
        t.ui.record(ev)
    assert t.ui.match.over
    for now[0] in range(5000, 5000 + 3 * RESEND_MS + 1000, 20):
        t.tick(now[0])
    assert wire.sent.count("result") == wire.sent.count("record") >= 3


def test_a_settled_drift_is_kept_on_flash_for_the_next_boot(tmp_path):
    # A table 60 ppm slow: once its clock knows the drift, it writes it once; the next boot's
    # clock starts from it.
    from duelclock import app

    class Wire:
        up = True

        def poll(self):
            return b""

        def send(self, line, kind):
            return True

    class Board:
        BOARD = "SIM"
        battery_pct = buzzer = led = None

    cfg = {"table": 1, "key": "00" * 32, "pins": {"floor": "1111", "head": "2222"}}
    t = app.Table(Board(), cfg, Wire(), lambda: 0, str(tmp_path)).session
    assert t.clock.drift_ppm == 0 and not (tmp_path / "drift").exists()
    local = 0
    for i in range(60):                      # 16 minutes of exchanges, 1-ms legs
        t.sync_seq, t.sync_t1 = i, local   # as if tick had asked at local
        desk = int(local * (1 + 60e-6))
        t.handle({"k": "sync", "re": i, "t1": local, "t2": desk + 1, "t3": desk + 1}, local + 2)
        local += 16000
    kept = float((tmp_path / "drift").read_text())
    assert abs(kept - 60) < 2, kept
    again = app.Table(Board(), cfg, Wire(), lambda: 0, str(tmp_path)).session
    assert abs(again.clock.drift_ppm - kept) < 1e-6


def test_the_boards_ticks_unwrap_to_ms_and_the_us_past_them_across_the_wrap():
    # ticks_us wraps at 2**30 on a board (18 minutes); ticks_diff is modular, as there.
    from duelclock import app
    wrap = 1 << 30
    ticks = [wrap - 1500]
    local_ms, sub_us = app.unwrap(lambda: ticks[0],
                                  lambda a, b: ((a - b + wrap // 2) & (wrap - 1)) - wrap // 2)
    assert (local_ms(), sub_us()) == (0, 0)
    total_us = 0
    for step_us in (700, 700, 999, 1, 123456, wrap // 2 - 1, wrap // 2 - 1, 1001):
        ticks[0] = (ticks[0] + step_us) % wrap
        total_us += step_us
        assert (local_ms(), sub_us()) == (total_us // 1000, total_us % 1000), step_us
