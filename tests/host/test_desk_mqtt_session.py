"""The desk's MQTT connection (duelclock_desk/mqtt_session.py, paho-mqtt) against a real
mosquitto: sends that wait out a dropped link and arrive once, a broker gone silent, a
refused login, bytes no broker sends, and TLS (tests/host/mqtt_tls.py)."""
import os
import shutil
import socket
import threading
import time

import pytest

from duelclock_desk.mqtt_session import Session
from duelclock_desk.broker import Mosquitto
from tests.faults.netkit import Proxy
from tests.host.mqtt_tls import TlsBroker

pytestmark = pytest.mark.skipif(
    shutil.which("mosquitto") is None and not os.access("/usr/sbin/mosquitto", os.X_OK),
    reason="mosquitto is not installed (apt-get install -y mosquitto)")


def until(cond, timeout_s=15.0, what=""):
    end = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < end, "timed out: " + what
        time.sleep(0.01)


class Link:
    """netkit's cuttable proxy to the broker (the desk's Wi-Fi or cable) that can also go
    silent (the connection kept, nothing relayed) or, with `noise` set, hand the client
    those bytes in place of the broker's (a port that is not a broker, a corrupted link)."""

    def __init__(self, broker_port):
        self.silent = False
        self.noise = None
        drop = lambda data: None if self.silent else data      # noqa: E731
        spoil = lambda data: None if self.silent else (self.noise or data)  # noqa: E731
        self.proxy = Proxy(("127.0.0.1", broker_port), filters=lambda: (drop, spoil))
        self.port = self.proxy.port


def receiver(port, topic):
    """A client subscribed to `topic` at QoS 1: (client, [payloads received])."""
    got = []
    c = Session("127.0.0.1", port, "test-receiver")
    c.on_connect = lambda: c.subscribe([(topic, 1)])
    c.on_message = lambda t, payload, retained, rx: got.append(payload)
    c.start()
    return c, got


@pytest.fixture
def broker():
    b = Mosquitto()
    yield b
    b.stop()


def test_sends_wait_out_a_cut_link_and_arrive_once(broker):
    link = Link(broker.port)
    rx, got = receiver(broker.port, "t/x")
    ups = []
    tx = Session("127.0.0.1", link.port, "test-sender")
    tx.on_connect = lambda: ups.append(1)
    tx.on_disconnect = lambda reason: ups.append(0)
    tx.start()
    try:
        until(lambda: ups == [1], what="the sender connected")
        time.sleep(0.2)                         # the receiver's SUBSCRIBE is in
        tx.publish("t/x", b"before")
        until(lambda: got == [b"before"], what="a send on a live link")
        link.proxy.cut()
        until(lambda: ups == [1, 0], what="the cut seen")
        for n in range(50):                     # sent while no broker is reachable
            tx.publish("t/x", b"during %d" % n)
        time.sleep(1.5)                         # a reconnect or two refused meanwhile
        link.proxy.restore()
        until(lambda: len(got) == 51, what="the sends made during the cut")
        assert got == [b"before"] + [b"during %d" % n for n in range(50)]
        assert ups[-1] == 1
        time.sleep(0.5)
        assert len(got) == 51                   # each once: the broker's PUBACK ends a send
        assert tx.inflight() == 0
    finally:
        tx.stop()
        rx.stop()
        link.proxy.stop()


def test_a_callback_that_raises_is_said_and_the_link_lives_on(broker, capfd):
    rx, got = receiver(broker.port, "t/x")
    take = rx.on_message

    def on_message(topic, payload, retained, at):
        if payload == b"boom":
            raise ValueError("a bug")
        take(topic, payload, retained, at)
    rx.on_message = on_message
    tx = Session("127.0.0.1", broker.port, "test-sender")
    tx.start()
    try:
        time.sleep(0.3)
        for payload in (b"one", b"boom", b"two"):
            tx.publish("t/x", payload)
        until(lambda: got == [b"one", b"two"], what="the messages around the bad one")
        assert "on_message failed: ValueError('a bug')" in capfd.readouterr().err
    finally:
        tx.stop()
        rx.stop()


def test_the_packets_of_one_read_share_the_stamp_of_that_read(broker):
    # The broker's bytes for five messages held by the proxy and handed on in one write: one
    # read at the client. Each message is slow to handle; every stamp is still the read's
    # (a sync request's t2 is when the desk got it, not when the ones before it were done).
    held, hold = bytearray(), []

    def down(data):
        if not hold:
            return data
        held.extend(data)
        if b"last" not in held:
            return None
        out = bytes(held)
        held.clear()
        return out
    proxy = Proxy(("127.0.0.1", broker.port), filters=lambda: (lambda data: data, down))
    got = []

    def on_message(topic, payload, retained, rx):
        got.append((payload, rx, time.monotonic()))
        time.sleep(0.05)
    ups = []
    c = Session("127.0.0.1", proxy.port, "test-stamp")
    c.on_connect = lambda: (c.subscribe([("t/x", 1)]), ups.append(1))
    c.on_message = on_message
    c.start()
    tx = Session("127.0.0.1", broker.port, "test-sender")
    tx.start()
    try:
        until(lambda: ups, what="connected")
        time.sleep(0.3)                         # the SUBACK in
        hold.append(1)
        for payload in (b"m0", b"m1", b"m2", b"m3", b"last"):
            tx.publish("t/x", payload)
        until(lambda: len(got) == 5, what="the five messages")
        assert [p for p, _, _ in got] == [b"m0", b"m1", b"m2", b"m3", b"last"]
        stamps = {rx for _, rx, _ in got}
        assert len(stamps) == 1, got
        assert got[0][1] <= got[0][2] and got[-1][2] - got[0][1] >= 0.2
    finally:
        tx.stop()
        c.stop()
        proxy.stop()


def test_a_silent_broker_is_left_and_the_client_comes_back(broker):
    link = Link(broker.port)
    ups = []
    c = Session("127.0.0.1", link.port, "test-silent", keepalive_s=2)
    c.on_connect = lambda: ups.append(1)
    c.on_disconnect = lambda reason: ups.append(0)
    c.start()
    try:
        until(lambda: ups == [1], what="connected")
        link.silent = True                      # the TCP connection stays, nothing comes
        until(lambda: ups == [1, 0], timeout_s=10, what="silence noticed (2 keepalives)")
        link.silent = False
        until(lambda: ups == [1, 0, 1], timeout_s=15, what="back")
    finally:
        c.stop()
        link.proxy.stop()


def test_garbage_from_the_broker_drops_the_connection_and_it_comes_back(broker):
    # Bytes no MQTT broker sends (a remaining length over 4 bytes), after a good CONNACK.
    link = Link(broker.port)
    ups, reasons = [], []
    c = Session("127.0.0.1", link.port, "test-garbage", keepalive_s=2)
    c.on_connect = lambda: ups.append(1)
    c.on_disconnect = lambda reason: (ups.append(0), reasons.append(reason))
    c.start()
    try:
        until(lambda: ups == [1], what="connected")
        link.noise = b"\xff" * 8
        until(lambda: ups == [1, 0], timeout_s=10, what="garbage dropped (or silence seen)")
        link.noise = None
        until(lambda: ups == [1, 0, 1], timeout_s=15, what="back")
    finally:
        c.stop()
        link.proxy.stop()


def test_a_port_that_is_not_a_broker_is_retried():
    # A server that answers every connection with text, then hangs up: no CONNACK ever.
    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]
    seen = []

    def serve():
        while True:
            try:
                s, _ = srv.accept()
            except OSError:
                return
            s.recv(1024)
            s.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
            s.close()
            seen.append(1)
    threading.Thread(target=serve, daemon=True).start()
    ups = []
    c = Session("127.0.0.1", port, "test-not-a-broker")
    c.on_connect = lambda: ups.append(1)
    c.start()
    try:
        until(lambda: len(seen) >= 2, timeout_s=10, what="tried again")
        assert ups == [] and c.error
    finally:
        c.stop()
        srv.close()


def test_a_user_and_password_are_given_and_a_wrong_one_is_refused():
    broker = Mosquitto(users={"desk": "s3cret"})
    clients = {}
    try:
        ups = {}
        for name, auth in (("good", ("desk", "s3cret")), ("bad", ("desk", "guess")),
                           ("none", None)):
            c = Session("127.0.0.1", broker.port, "test-" + name, auth)
            c.on_connect = lambda name=name: ups.setdefault(name, True)
            c.start()
            clients[name] = c
        until(lambda: "good" in ups, what="the right password let in")
        until(lambda: clients["bad"].error and clients["none"].error, what="the others refused")
        time.sleep(1.5)                             # and again at every retry
        assert ups == {"good": True}
        for name in ("bad", "none"):
            assert "refused" in clients[name].error and "password" in clients[name].error
    finally:
        for c in clients.values():
            c.stop()
        broker.stop()


@pytest.fixture(scope="module")
def tls():
    b = TlsBroker()
    yield b
    b.stop()


def connect(port, auth, ca):
    """A Session started to 127.0.0.1:port: (session, [1 per connect], [payloads on t/x])."""
    ups, got = [], []
    c = Session("127.0.0.1", port, "test-tls-%d" % len(auth[1]), auth, ca)
    c.on_connect = lambda: (ups.append(1), c.subscribe([("t/x", 1)]))
    c.on_message = lambda t, payload, retained, rx: got.append(payload)
    c.start()
    return c, ups, got


def test_tls_with_the_right_ca_and_password_carries_messages(tls):
    c, ups, got = connect(tls.port, ("desk", tls.users["desk"]), tls.ca)
    try:
        until(lambda: ups == [1], what="connected over TLS")
        time.sleep(0.2)
        for n in range(20):
            c.publish("t/x", b"over tls %d" % n)
        until(lambda: len(got) == 20, what="the messages back")
        assert got == [b"over tls %d" % n for n in range(20)]
    finally:
        c.stop()


def test_tls_refuses_a_wrong_password_and_a_wrong_ca_and_says_which(tls):
    bad_pw, ups1, _ = connect(tls.port, ("desk", "guess"), tls.ca)
    bad_ca, ups2, _ = connect(tls.port, ("desk", tls.users["desk"]), tls.other_ca)
    plain, ups3, _ = connect(tls.port, ("desk", tls.users["desk"]), None)
    try:
        until(lambda: bad_pw.error and bad_ca.error and plain.error, what="all three refused")
        time.sleep(1.5)
        assert ups1 == ups2 == ups3 == []
        assert "refused" in bad_pw.error and "password" in bad_pw.error, bad_pw.error
        assert "TLS" in bad_ca.error and "--ca" in bad_ca.error, bad_ca.error
    finally:
        for c in (bad_pw, bad_ca, plain):
            c.stop()
