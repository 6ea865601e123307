"""The desk's own MQTT client (duelclock_desk/mqtt.py) against a real mosquitto: sends that
wait out a dropped link and arrive once, a broker gone silent, and bytes no broker sends."""
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import pytest

from duelclock_desk import mqtt
from duelclock_desk.broker import Mosquitto, free_port
from tests.faults.netkit import Proxy

pytestmark = pytest.mark.needs("mosquitto")


def until(cond, timeout_s=15.0, what=""):
    end = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < end, "timed out: " + what
        time.sleep(0.01)


class Link:
    """netkit's cuttable proxy to the broker (the desk's Wi-Fi or cable) that can also go
    silent: the connection kept, nothing relayed."""

    def __init__(self, broker_port):
        self.silent = False
        drop = lambda data: None if self.silent else data      # noqa: E731
        self.proxy = Proxy(("127.0.0.1", broker_port), filters=lambda: (drop, drop))
        self.port = self.proxy.port


def receiver(port, topic):
    """A client subscribed to `topic` at QoS 1: (client, [payloads received])."""
    got = []
    c = mqtt.Client("127.0.0.1", port, "test-receiver")
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
    tx = mqtt.Client("127.0.0.1", link.port, "test-sender")
    tx.on_connect = lambda: ups.append(1)
    tx.on_disconnect = lambda: ups.append(0)
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
        assert not tx._inflight
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
    tx = mqtt.Client("127.0.0.1", broker.port, "test-sender")
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


def test_a_silent_broker_is_left_and_the_client_comes_back(broker):
    link = Link(broker.port)
    ups = []
    c = mqtt.Client("127.0.0.1", link.port, "test-silent", keepalive_s=2)
    c.on_connect = lambda: ups.append(1)
    c.on_disconnect = lambda: ups.append(0)
    c.start()
    try:
        until(lambda: ups == [1], what="connected")
        link.silent = True                      # the TCP connection stays, nothing comes
        until(lambda: ups == [1, 0], timeout_s=10, what="silence noticed (1.5 keepalives)")
        link.silent = False
        until(lambda: ups == [1, 0, 1], timeout_s=15, what="back")
    finally:
        c.stop()
        link.proxy.stop()


def test_a_refused_connect_and_garbage_from_the_broker_are_retried():
    # A "broker" that answers CONNACK with "not authorised", then one that sends a packet
    # length no MQTT packet has: the client drops each connection and tries again.
    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]
    answers = [b"\x20\x02\x00\x05", b"\x20\x02\x00\x00" + b"\x30\xff\xff\xff\xff\x7f"]
    seen = []

    def serve():
        for answer in answers:
            s, _ = srv.accept()
            s.recv(1024)                        # CONNECT
            s.sendall(answer)
            seen.append(s)
    threading.Thread(target=serve, daemon=True).start()
    ups = []
    c = mqtt.Client("127.0.0.1", port, "test-garbage")
    c.on_connect = lambda: ups.append(1)
    c.on_disconnect = lambda: ups.append(0)
    c.start()
    try:
        until(lambda: ups == [1, 0], timeout_s=10, what="refused, then garbage dropped")
        assert len(seen) == 2
    finally:
        c.stop()
        srv.close()
        for s in seen:
            s.close()


def test_packets_are_parsed_across_reads():
    pub = mqtt.packet(mqtt.PUBLISH, 2, b"\x00\x03a/b\x00\x07" + b"x" * 200)
    data = pub + mqtt.packet(mqtt.PUBACK, 0, b"\x00\x07")
    for cut_at in range(len(data) + 1):
        head, used = mqtt.parse(bytearray(data[:cut_at]))
        rest, used2 = mqtt.parse(bytearray(data[used:]))
        assert [k for k, _, _ in head + rest] == [mqtt.PUBLISH, mqtt.PUBACK], cut_at
        assert used + used2 == len(data)
    with pytest.raises(mqtt.MqttError):
        mqtt.parse(bytearray(b"\x30\xff\xff\xff\xff\x01"))


def test_a_user_and_password_are_given_and_a_wrong_one_is_refused():
    # mosquitto started as root reads its password file as its own user: a directory all
    # may enter (pytest's tmp_path is not).
    d = tempfile.mkdtemp(prefix="duelclock-auth-")
    os.chmod(d, 0o755)
    pw = os.path.join(d, "passwd")
    subprocess.run([shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd", "-b", "-c",
                    pw, "desk", "s3cret"], check=True, capture_output=True)
    os.chmod(pw, 0o644)
    port = free_port()
    conf = os.path.join(d, "m.conf")
    with open(conf, "w") as f:
        f.write("listener %d 127.0.0.1\nallow_anonymous false\npassword_file %s\n" % (port, pw))
    exe = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    proc = subprocess.Popen([exe, "-c", conf], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    clients = []
    try:
        ups = {}
        for name, auth in (("good", ("desk", "s3cret")), ("bad", ("desk", "guess")),
                           ("none", None)):
            c = mqtt.Client("127.0.0.1", port, "test-" + name, auth)
            c.on_connect = lambda name=name: ups.setdefault(name, True)
            c.start()
            clients.append(c)
        until(lambda: "good" in ups, what="the right password let in")
        time.sleep(1.5)
        assert ups == {"good": True}
    finally:
        for c in clients:
            c.stop()
        proc.terminate()
        proc.wait(5)
        shutil.rmtree(d, ignore_errors=True)
