"""The table's MQTT link (firmware/duelclock/link.py MqttLink) under the real MicroPython unix
port with micropython-lib's umqtt.simple, against a real mosquitto: what QoS each kind of
line goes at (docs/protocol.md, the MQTT topics table)."""
import threading

import paho.mqtt.client as paho
import pytest

from duelclock_desk.broker import Mosquitto
from simulator.build import umqtt
from tests.host.upy import run_upy

TABLE = """
import time
from umqtt.simple import MQTTClient
from duelclock.link import MqttLink
link = MqttLink(lambda: MQTTClient("dc-t5", "127.0.0.1", %d, keepalive=30), "ev", 5, 30,
                time.ticks_ms)
link.poll()
print(link.up, link.send(b'{"k":"sync","n":1}\\n', "sync"),
      link.send(b'{"k":"record","n":2}\\n', "report"))
link.poll()
"""


@pytest.fixture
def broker():
    b = Mosquitto()
    yield b
    b.stop()


def test_sync_requests_go_at_qos_0_and_reports_at_qos_1(broker):
    got, subscribed, both = [], threading.Event(), threading.Event()
    sub = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id="watch")
    sub.on_connect = lambda c, u, f, rc, p=None: c.subscribe("duelclock/ev/table/5/report", 1)
    sub.on_subscribe = lambda *a: subscribed.set()

    def on_message(c, u, msg):
        got.append((msg.payload, msg.qos))
        if len(got) == 2:
            both.set()
    sub.on_message = on_message
    sub.connect("127.0.0.1", broker.port)
    sub.loop_start()
    try:
        assert subscribed.wait(10)
        r = run_upy(["-c", TABLE % broker.port], extra_path=(umqtt(),), timeout=60)
        assert r.returncode == 0 and r.stdout.split() == ["True", "True", "True"], r.stderr
        assert both.wait(10), got
    finally:
        sub.loop_stop()
        sub.disconnect()
    # A sync request resent late is worthless (the table asks again), and QoS 1 would make
    # umqtt.simple wait for its PUBACK; a record must arrive.
    assert sorted(got) == [(b'{"k":"record","n":2}', 1), (b'{"k":"sync","n":1}', 0)]
