# Many protocol-level tables (tests/host/tables.py SessionTable: the firmware's own session
# on a list journal) on one thread, each its own MQTT 3.1.1 connection, a paho-mqtt client
# driven by one selector loop (paho's external-loop calls: socket, loop_read, loop_write,
# loop_misc): the light driver the desk-link bench needs for hundreds of tables per process
# (paho's loop_start(), a thread per client, does not get there). Topics as docs/protocol.md and
# tables.MqttTables: table/<n>/cmd in (QoS 1), state out (QoS 0,
# retained, last will "offline"), reports out (QoS 1).
#
# In the bench process (the Wi-Fi sync bench): Host(...) with a local_ms(tbl) the bench
# controls and auto_tick off; the bench ticks the tables itself (tick_all) between time
# jumps. As a process (the round-start bench), in real time:
#
#   python tests/bench/mqtt_tables.py --broker mqtt://127.0.0.1:1883 --event EV --key HEX
#          --first 1 --count 250 [--seed 1] [--connect-per-s 200]
#
# prints "ready N" once every table is connected and subscribed, runs until stdin closes or
# SIGTERM, then prints its counts as one JSON line.
import argparse
import json
import os
import random
import selectors
import signal
import socket
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# This tree's desk tools too, not an installed copy: a venv made in another worktree (the
# bench run with another checkout's python) would give its duelclock_desk.
for _p in (os.path.join(ROOT, "firmware"), ROOT, os.path.join(ROOT, "host_tools")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import paho.mqtt.client as paho  # noqa: E402

from duelclock.core.clock import WIFI_BUDGET_MS  # noqa: E402
from tests.host.tables import SessionTable  # noqa: E402

KEEPALIVE_S = 60
# A table here is ticked every TICK_S and right after each desk message. The firmware's link
# task ticks every 20 ms on its own CPU; 2,000 tables ticked that often took about 0.4 of a
# core of this 2-core machine at idle (measured: the processes' CPU over 3 s, 713 against
# 303 ms a second), CPU the desk and brokers then lacked. What is due waits at most TICK_S:
# a sync request's t1 is stamped when it leaves, so only its schedule moves, not the sync;
# a desk command's state goes at once (the tick after it). 0.25 s is the session's own
# state check (_STATE_CHECK_MS): ticks between two checks found nothing due but a sync
# request, and still took a third of these processes' idle CPU at 0.1 s.
TICK_S = 0.25
MISC_S = 1.0                             # each client's loop_misc (its keepalive pings)


def client(client_id, will_topic=None, clean_session=True):
    """A paho client for the external loop: MQTT 3.1.1, no Nagle, no in-flight limit, a
    retained last will `offline` on will_topic."""
    c = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=client_id,
                    clean_session=clean_session, protocol=paho.MQTTv311)
    c.max_inflight_messages_set(0)
    c.on_socket_open = lambda cl, u, sock: sock.setsockopt(socket.IPPROTO_TCP,
                                                           socket.TCP_NODELAY, 1)
    if will_topic:
        c.will_set(will_topic, b"offline", 0, True)
    return c


class Conn:
    """One table's connection. Its publishes are written at once (paho's loop_write, on
    this thread); what the socket did not take waits in paho for the host's loop."""

    def __init__(self, host, table):
        self.host, self.table = host, table
        self.client = None
        self.sock = None
        self.ready = False               # CONNACK and SUBACK in
        self.rx_ms = None                # the table's ticks when select() said bytes came
        self.polled = 0                  # the selector events asked for (0: not registered)
        self.fed = False                 # readable() fed the table a desk message

    def topic(self, leaf):
        return self.host.base + "table/%d/%s" % (self.table.tbl, leaf)

    def open(self):
        c = client("bench-t%d" % self.table.tbl, self.topic("state"))
        c.on_connect = self._connected
        c.on_subscribe = self._subscribed
        c.on_message = self._message
        c.on_disconnect = self._disconnected
        c.connect(self.host.addr[0], self.host.addr[1], KEEPALIVE_S)
        self.client, self.sock = c, c.socket()

    def _connected(self, cl, userdata, flags, reason, properties):
        if reason.is_failure:
            raise ConnectionError("table %d: CONNACK refused: %s" % (self.table.tbl, reason))
        cl.subscribe(self.topic("cmd"), 1)

    def _subscribed(self, cl, userdata, mid, reasons, properties):
        self.ready = True
        self.table.hello()

    def _disconnected(self, cl, userdata, flags, reason, properties):
        if not self.host.stop.is_set():
            self.host.error = ConnectionError("table %d: the broker closed the connection: %s"
                                              % (self.table.tbl, reason))

    def _message(self, cl, userdata, msg):
        payload = msg.payload
        self.table.feed(payload if payload.endswith(b"\n") else payload + b"\n", self.rx_ms)
        self.host.counts["in"] += 1
        self.fed = True

    def poll(self):
        # Ask the selector for writable only while bytes wait: one modify when that changes,
        # not a look at every connection on every turn of the loop (2,000 tables).
        want = selectors.EVENT_READ | (selectors.EVENT_WRITE if self.client.want_write() else 0)
        if self.polled and self.polled != want:
            self.host._sel.modify(self.sock, want, self)
            self.polled = want

    def send_lines(self):
        for k, line in self.table.take():
            if k == "state":
                self.client.publish(self.topic("state"), line, 0, True)
            elif k == "sync":                # QoS 0, as the firmware's link sends it
                self.client.publish(self.topic("report"), line, 0, False)
            else:
                self.client.publish(self.topic("report"), line, 1, False)
            self.host.counts["out_" + k] = self.host.counts.get("out_" + k, 0) + 1
        self.poll()

    def receive(self):
        """Stamp what arrived with the table's ticks now (a sync reply's t4): the host stamps
        every ready socket before it feeds any table, as each table's own board would, so a
        table's stamp does not wait for the others' work."""
        self.rx_ms = self.host.local_ms(self.table.tbl)

    def readable(self):
        """Read and take what arrived; True when a desk message was fed to the table."""
        self.fed = False
        self.client.loop_read()
        if self.client.socket() is None and self.host.error is None:
            self.host.error = ConnectionError("table %d: the connection closed" % self.table.tbl)
        return self.fed

    def flush(self):
        self.client.loop_write()
        self.poll()


class Host:
    """Tables on one selector loop (run() in a thread or as the process). `local_ms(tbl)`:
    table tbl's ticks (a float: to the us, tables.py). auto_tick: tick every table each
    tick_s and right after a desk message (as the firmware's link task does); else the
    caller ticks with tick_all()."""

    def __init__(self, url, event, tables, local_ms, auto_tick=True, tick_s=TICK_S,
                 connect_per_s=0):
        host, port = url.split("://", 1)[1].rsplit(":", 1)
        self.addr = (host, int(port))
        self.base = "duelclock/%s/" % event
        self.tables = list(tables)
        self.local_ms = local_ms
        self.auto_tick = auto_tick
        self.tick_s = tick_s
        self.connect_per_s = connect_per_s
        self.conns = [Conn(self, t) for t in self.tables]
        self.lock = threading.RLock()
        self.stop = threading.Event()
        self.counts = {"in": 0}
        self.error = None
        self._sel = selectors.DefaultSelector()
        self._opened = 0

    def ready(self):
        return self._opened == len(self.conns) and all(c.ready for c in self.conns)

    def tick_all(self, spread_s=0.0):
        """Tick every table at its local time and send what it has to say, the tables
        spread_s (real s) apart from the first to the last."""
        for c in self.conns:
            with self.lock:
                if c.sock is not None:
                    c.table.tick(self.local_ms(c.table.tbl))
                    c.send_lines()
            if spread_s:
                time.sleep(spread_s / len(self.conns))

    def _open_some(self, started):
        due = len(self.conns) if not self.connect_per_s else \
            min(len(self.conns), int((time.monotonic() - started) * self.connect_per_s) + 1)
        while self._opened < due:
            c = self.conns[self._opened]
            c.open()
            c.polled = selectors.EVENT_READ | (selectors.EVENT_WRITE
                                               if c.client.want_write() else 0)
            self._sel.register(c.sock, c.polled, c)
            self._opened += 1

    def run(self):
        started = time.monotonic()
        next_tick = next_ping = started
        try:
            while not self.stop.is_set():
                if self._opened < len(self.conns):
                    with self.lock:
                        self._open_some(started)
                timeout = max(0.0, next_tick - time.monotonic()) if self.auto_tick else self.tick_s
                events = self._sel.select(timeout)
                with self.lock:
                    for key, mask in events:
                        if mask & selectors.EVENT_READ:
                            key.data.receive()
                    for key, mask in events:
                        c = key.data
                        if mask & selectors.EVENT_WRITE:
                            c.flush()
                        if mask & selectors.EVENT_READ:
                            if c.readable():
                                if self.auto_tick:
                                    c.table.tick(self.local_ms(c.table.tbl))
                                c.send_lines()
                            else:       # a read may queue a write: the SUBSCRIBE that
                                c.poll()    # answers the CONNACK, a PUBACK
                    if self.error is not None:
                        raise self.error
                    now = time.monotonic()
                    if now >= next_ping:
                        next_ping = now + MISC_S
                        for c in self.conns[:self._opened]:
                            c.client.loop_misc()
                if self.auto_tick and time.monotonic() >= next_tick:
                    self.tick_all()
                    next_tick = time.monotonic() + self.tick_s
        except Exception as e:           # the bench reports it; the loop stops
            self.error = e
        finally:
            for c in self.conns:
                if c.sock is not None:
                    c.sock.close()
            self._sel.close()

    def start(self):
        self.thread = threading.Thread(target=self.run, name="mqtt tables", daemon=True)
        self.thread.start()
        return self

    def close(self):
        self.stop.set()
        if getattr(self, "thread", None) is not None:
            self.thread.join(10)


def main(argv):
    ap = argparse.ArgumentParser(prog="mqtt_tables")
    ap.add_argument("--broker", required=True)
    ap.add_argument("--event", required=True)
    ap.add_argument("--key", required=True, help="the event key, hex")
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ppm", type=float, default=100.0, help="crystals off by up to +/- this")
    ap.add_argument("--connect-per-s", type=float, default=200.0)
    a = ap.parse_args(argv)
    key = bytes.fromhex(a.key)
    rng = random.Random(a.seed)
    rate, boot = {}, {}
    tables = []
    for tbl in range(a.first, a.first + a.count):
        tables.append(SessionTable(key, tbl, budget_ms=WIFI_BUDGET_MS, board="BENCH"))
        rate[tbl] = 1 + rng.uniform(-a.ppm, a.ppm) / 1e6
        boot[tbl] = rng.uniform(0, 600000)
    t0 = time.monotonic()

    def local_ms(tbl):
        return ((time.monotonic() - t0) * 1000 + boot[tbl]) * rate[tbl]   # ticks to the us

    host = Host(a.broker, a.event, tables, local_ms, connect_per_s=a.connect_per_s)
    signal.signal(signal.SIGTERM, lambda *_: host.stop.set())
    host.start()
    while not host.ready():
        if host.error is not None or not host.thread.is_alive():
            sys.stderr.write("mqtt_tables: %s\n" % host.error)
            return 1
        time.sleep(0.05)
    print("ready %d" % len(tables), flush=True)
    threading.Thread(target=lambda: (sys.stdin.read(), host.stop.set()), daemon=True).start()
    host.stop.wait()
    host.close()
    print(json.dumps(host.counts), flush=True)
    if host.error is not None:
        sys.stderr.write("mqtt_tables: %s\n" % host.error)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
