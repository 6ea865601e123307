"""The table's MQTT link (firmware/duelclock/link.py MqttLink) under the real MicroPython unix
port with micropython-lib's umqtt.simple, against a real mosquitto: what QoS each kind of
line goes at (docs/protocol.md, the MQTT topics table), and the link on a broker that fails
in every way a venue's can (docs/protocol.md, "The table's link on faults"): the real app
on boards/SIM keeps its clock's seconds coming, never ends, and joins a good broker once
one is there."""
import json
import os
import random
import socket
import subprocess
import threading
import time

import paho.mqtt.client as paho
import pytest

from duelclock_desk.broker import Mosquitto
from duelclock_desk.deploy import parse_broker, table_secret
from simulator import build
from simulator.build import umqtt
from tests.faults.netkit import Proxy
from tests.host.mqtt_tls import TlsBroker
from tests.host.upy import run_upy

HERE = os.path.dirname(os.path.abspath(__file__))
KEY_HEX = "00" * 32

TABLE = """
import time
from umqtt.simple import MQTTClient
from duelclock.link import MqttLink
link = MqttLink(lambda: MQTTClient("dc-t5", "127.0.0.1", %d, keepalive=30), "ev", 5, 30,
                time.ticks_ms)
end = time.ticks_add(time.ticks_ms(), 5000)
while not link.up and time.ticks_diff(end, time.ticks_ms()) > 0:
    link.poll()
    time.sleep_ms(2)
print(link.up, link.send(b'{"k":"sync","n":1}\\n', "sync"),
      link.send(b'{"k":"record","n":2}\\n', "report"))
for _ in range(50):
    link.poll()
    time.sleep_ms(2)
"""


@pytest.fixture
def broker():
    b = Mosquitto()
    yield b
    b.stop()


def watch(port, qos_topic="duelclock/ev/table/5/report", user=None):
    """A paho client subscribed to `qos_topic` on 127.0.0.1:port: (client, got, subscribed)."""
    got, subscribed = [], threading.Event()
    sub = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id="watch-%d" % port)
    if user is not None:
        sub.username_pw_set(*user)
    sub.on_connect = lambda c, u, f, rc, p=None: c.subscribe(qos_topic, 1)
    sub.on_subscribe = lambda *a: subscribed.set()
    sub.on_message = lambda c, u, msg: got.append((msg.payload, msg.qos))
    sub.connect("127.0.0.1", port)
    sub.loop_start()
    return sub, got, subscribed


def test_sync_requests_go_at_qos_0_and_reports_at_qos_1(broker):
    sub, got, subscribed = watch(broker.port)
    try:
        assert subscribed.wait(10)
        r = run_upy(["-c", TABLE % broker.port], extra_path=(umqtt(),), timeout=60)
        assert r.returncode == 0 and r.stdout.split() == ["True", "True", "True"], r.stderr
        end = time.monotonic() + 10
        while len(got) < 2 and time.monotonic() < end:
            time.sleep(0.02)
    finally:
        sub.loop_stop()
        sub.disconnect()
    # A sync request resent late is worthless (the table asks again); a record must arrive.
    assert sorted(got) == [(b'{"k":"record","n":2}', 1), (b'{"k":"sync","n":1}', 0)]


# --- the real app on a failing broker ---------------------------------------------------------

FAULT_S = 14            # > link._CONNECT_TIMEOUT_MS: a hung connect is given up and tried again
RECOVER_S = 60          # the back-off's longest wait (30 s) and a connect, on a loaded machine
KEEPALIVE_S = 4         # the tables' here: a broker gone quiet is found in 4 s
FRAME_GAP_MS = 1500     # the screen task looks at the screen every second; a held loop would not
HEAP = "512k"           # the app at 240x135 on the 64-bit unix port (simulator/table.py)


class WatchedTable:
    """The real app (duelclock.app.main on boards/SIM, tests/host/upy_link_watch.py) with
    an MQTT config; its watch lines (one a second) collected in `lines`."""

    def __init__(self, workdir, name, mqtt, table):
        self.dir = os.path.join(workdir, name)
        os.makedirs(self.dir)
        cfg = {"table": table, "key": table_secret(KEY_HEX, table), "lang": "en", "event": "ev",
               "link": "mqtt", "mqtt": dict(mqtt, keepalive_s=KEEPALIVE_S)}
        self.config = os.path.join(self.dir, "duelclock.json.in")
        with open(self.config, "w") as f:
            json.dump(cfg, f)
        self.lines = []
        self.said = []
        self.err = os.path.join(self.dir, "stderr.log")

    def start(self):
        env = dict(os.environ, MICROPYPATH=build.table_path(), DUELCLOCK_SIM_FS=self.dir,
                   DUELCLOCK_SIM_CONFIG=self.config)
        with open(self.err, "wb") as err:
            self.proc = subprocess.Popen(
                [build.UPY, "-X", "heapsize=" + HEAP, os.path.join(HERE, "upy_link_watch.py")],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, env=env,
                cwd=self.dir)
        threading.Thread(target=self._read, daemon=True).start()
        return self

    def _read(self):
        for raw in self.proc.stdout:
            try:
                self.lines.append(dict(json.loads(raw), at=time.monotonic()))
            except ValueError:          # not a watch line: MicroPython's own last words
                self.said.append(raw.decode("utf-8", "replace"))

    def up_since(self, since):
        return any(w["up"] for w in self.lines if w["at"] >= since)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def why(self):
        with open(self.err, "rb") as f:
            return "".join(self.said) + f.read().decode("utf-8", "replace")[-2000:]


class Server:
    """A TCP server on loopback that speaks no MQTT: `answer(data)` -> bytes to send back
    (b"": nothing, a broker that accepts and never answers)."""

    def __init__(self, answer):
        self.answer = answer
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(16)
        self.addr = self.srv.getsockname()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        with c:
            while True:
                try:
                    data = c.recv(4096)
                    if not data:
                        return
                    c.sendall(self.answer(data))
                except OSError:
                    return

    def stop(self):
        self.srv.close()


def _first_only():
    """A proxy filter: the first chunk passes (the CONNECT, the CONNACK), nothing after."""
    seen = []

    def f(data):
        seen.append(1)
        return data if len(seen) == 1 else None
    return f


class Unreachable:
    """A port on loopback whose SYNs go unanswered, as to a host that is gone: a listener
    with no room in its queue (listen(0), one connection in it, never accepted), so the
    kernel drops every further SYN and the connect hangs in SYN_SENT."""

    def __init__(self):
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(0)
        self.port = self.srv.getsockname()[1]
        self.filler = socket.create_connection(("127.0.0.1", self.port))

    def stop(self):
        self.filler.close()
        self.srv.close()


def _garbage(seed):
    rnd = random.Random(seed)
    return lambda data: bytes(rnd.randrange(256) for _ in range(64))


SCENARIOS = ("silent", "connack_then_silent", "refused", "garbage", "drops", "unreachable")


@pytest.fixture(scope="module")
def faults(tmp_path_factory):
    """Every scenario at once, one table each behind its own proxy: FAULT_S of the fault
    (for `drops`, after the table first joined), then the proxy leads to a good mosquitto."""
    work = str(tmp_path_factory.mktemp("links"))
    good = Mosquitto()
    locked = TlsBroker()
    silent, garbage = Server(lambda d: b""), Server(_garbage(30))
    dropping = {"on": False}

    def gate(data):
        return None if dropping["on"] else data
    good_addr = ("127.0.0.1", good.port)
    proxies = {
        "silent": Proxy(silent.addr),
        "connack_then_silent": Proxy(good_addr, lambda: (_first_only(), _first_only())),
        "refused": Proxy(("127.0.0.1", locked.plain_port)),
        "garbage": Proxy(garbage.addr),
        "drops": Proxy(good_addr, lambda: (gate, gate)),
    }
    hole = Unreachable()
    ports = dict({n: p.port for n, p in proxies.items()}, unreachable=hole.port)
    tables = {}
    try:
        for table, name in enumerate(SCENARIOS, 7):
            mqtt = {"host": "127.0.0.1", "port": ports[name]}
            if name == "refused":       # a user the broker knows, a wrong password: CONNACK 5
                mqtt.update(user="table", password="not-" + locked.users["table"])
            # a table number each, so a client id each: on one broker a second connect with
            # the same id takes the first one's session away
            tables[name] = WatchedTable(work, name, mqtt, table).start()
        end = time.monotonic() + 20
        while not tables["drops"].up_since(0) and time.monotonic() < end:
            time.sleep(0.1)
        assert tables["drops"].up_since(0), tables["drops"].why()
        fault_at = time.monotonic()
        dropping["on"] = True
        time.sleep(FAULT_S)
        healed_at = time.monotonic()
        counts = {n: p.connections for n, p in proxies.items()}
        for p in proxies.values():
            p.target, p.filters = good_addr, None
        dropping["on"] = False
        hole.stop()                     # the host is back: its port leads to the broker
        proxies["unreachable"] = Proxy(good_addr, port=hole.port)
        end = healed_at + RECOVER_S
        while time.monotonic() < end and not all(t.up_since(healed_at) for t in tables.values()):
            time.sleep(0.2)
        time.sleep(2)                   # a few seconds on the good broker
        alive = {n: t.proc.poll() is None for n, t in tables.items()}
        yield {"tables": tables, "fault_at": fault_at, "healed_at": healed_at,
               "connections": counts, "alive": alive}
    finally:
        for t in tables.values():
            t.stop()
        for p in proxies.values():
            p.stop()
        for s in (silent, garbage, hole):
            s.stop()
        good.stop()
        locked.stop()


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_table_never_ends(faults, name):
    t = faults["tables"][name]
    assert faults["alive"][name], t.why()
    assert "Traceback" not in t.why(), t.why()


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_clock_is_looked_at_every_second(faults, name):
    lines = faults["tables"][name].lines
    assert len(lines) >= FAULT_S + 2
    for w in lines[1:]:                 # the first second holds the start-up
        assert w["frames"] >= 1 and w["gap"] <= FRAME_GAP_MS, (name, w)


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_link_is_down_through_the_fault_and_tried_again(faults, name):
    t = faults["tables"][name]
    # drops: the table notices within its keepalive (and a line's second)
    quiet_from = faults["fault_at"] + (KEEPALIVE_S + 2 if name == "drops" else 0)
    during = [w for w in t.lines if quiet_from <= w["at"] < faults["healed_at"]]
    assert during and not any(w["up"] for w in during), (name, during)
    # it gave up on the bad connection and dialled again, not stuck on the first one (no
    # count where the SYNs went unanswered: the clock's seconds show the connect never hung)
    if name != "unreachable":
        assert faults["connections"][name] >= 2, faults["connections"]


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_table_joins_a_good_broker_once_there(faults, name):
    t = faults["tables"][name]
    assert t.up_since(faults["healed_at"]), (name, t.lines[-5:], t.why())


# --- TLS and a password -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def tls_broker():
    b = TlsBroker()
    yield b
    b.stop()


def tls_config(b, ca=None):
    """The table's cfg["mqtt"] as `duelclock deploy --broker mqtts://... --ca` writes it."""
    url = "mqtts://table:%s@127.0.0.1:%d" % (b.users["table"], b.port)
    return parse_broker(url, ca or b.ca)


def test_a_table_joins_a_tls_broker_with_its_password(tls_broker, tmp_path):
    b = tls_broker
    sub, got, subscribed = watch(b.plain_port, "duelclock/ev/table/7/report",
                                 user=("desk", b.users["desk"]))
    table = WatchedTable(str(tmp_path), "tls", tls_config(b), 7).start()
    try:
        assert subscribed.wait(10)
        end = time.monotonic() + 20
        while not (table.up_since(0) and any(b'"k":"hello"' in p for p, _ in got)) \
                and time.monotonic() < end:
            time.sleep(0.1)
        assert table.up_since(0), (table.lines, table.why())
        # its hello, at QoS 1 (its PUBACK came back through TLS), reached the desk's user
        assert any(b'"k":"hello"' in p and qos == 1 for p, qos in got), got
        assert all(w["gap"] <= FRAME_GAP_MS for w in table.lines[1:]), table.lines
    finally:
        table.stop()
        sub.loop_stop()
        sub.disconnect()


def test_a_broker_certificate_from_another_ca_is_refused_and_the_table_runs_on(tls_broker,
                                                                               tmp_path):
    cfg = tls_config(tls_broker, tls_broker.other_ca)
    table = WatchedTable(str(tmp_path), "other-ca", cfg, 7).start()
    try:
        end = time.monotonic() + 30
        while len(table.lines) < 8 and table.proc.poll() is None and time.monotonic() < end:
            time.sleep(0.2)
        assert table.proc.poll() is None and "Traceback" not in table.why(), table.why()
        assert len(table.lines) >= 8 and not table.up_since(0), table.lines
        assert all(w["frames"] >= 1 and w["gap"] <= FRAME_GAP_MS for w in table.lines[1:])
    finally:
        table.stop()


# --- replies that arrive in pieces -------------------------------------------------------------

PIECES = """
import time
from umqtt.simple import MQTTClient
from duelclock.link import MqttLink
link = MqttLink(lambda: MQTTClient("dc-t5", "127.0.0.1", %d, keepalive=30), "ev", 5, 30,
                time.ticks_ms)
got, sent, end = b"", 0, time.ticks_add(time.ticks_ms(), 60000)
while time.ticks_diff(end, time.ticks_ms()) > 0 and (sent < 5 or got.count(b"\\n") < 5):
    got += link.poll()
    if link.up and sent < 5 and link.send(b'{"n":%%d}\\n' %% sent, "report"):
        sent += 1
    time.sleep_ms(2)
print(link.up, sent)
print(got.decode())
"""


def test_replies_in_pieces_are_read_once_whole(broker):
    """Every byte from the broker comes alone, 10 ms after the one before: each CONNACK,
    SUBACK, PUBACK and command is read across many polls, and its call tried again as it
    grows. The CONNECT, the SUBSCRIBE and each report go once (mosquitto drops a client
    that sends a second CONNECT), and each command is taken once, in order."""
    proxy = Proxy(("127.0.0.1", broker.port),
                  lambda: (None, lambda data: [data[i:i + 1] for i in range(len(data))]))
    sub, got, subscribed = watch(broker.port)
    stop = threading.Event()

    def desk():                         # a command a second at QoS 1, while the table reports
        end = time.monotonic() + 60     # from its first report: it has subscribed by then
        while not got and time.monotonic() < end and not stop.is_set():
            time.sleep(0.05)
        pub = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id="desk")
        pub.connect("127.0.0.1", broker.port)
        pub.loop_start()
        for n in range(5):
            if stop.wait(1.0):
                break
            pub.publish("duelclock/ev/table/5/cmd", b'{"cmd":%d}' % n, qos=1)
        pub.loop_stop()
        pub.disconnect()
    try:
        assert subscribed.wait(10)
        threading.Thread(target=desk, daemon=True).start()
        r = run_upy(["-c", PIECES % proxy.port], extra_path=(umqtt(),), timeout=120)
        assert r.returncode == 0, r.stderr
        head, _, lines = r.stdout.partition("\n")
        assert head.split() == ["True", "5"], r.stdout
        assert lines.split() == ['{"cmd":%d}' % n for n in range(5)], r.stdout
        end = time.monotonic() + 10
        while len(got) < 5 and time.monotonic() < end:
            time.sleep(0.05)
        assert [p for p, _ in got] == [b'{"n":%d}' % n for n in range(5)], got
        assert proxy.connections == 1       # never down and dialled again meanwhile
    finally:
        stop.set()
        proxy.stop()
        sub.loop_stop()
        sub.disconnect()
