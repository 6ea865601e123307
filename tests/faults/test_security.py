"""Security against the real desk (`duelclock desk`), real mosquitto and SIM tables running
the real firmware over MQTT, with a second client on the broker (a laptop on venue Wi-Fi).

Beyond tests/host/test_desk_security.py (a hostile table on a socket link, desk side) and
test_desk_mqtt.py (a keyless desk against fake tables): here the tables are the firmware, the
commands replayed are real ones captured off the broker, and what the table counts is checked
through its own state report.

  - forged, replayed (captured extend and round), reflected and unsigned desk commands, and
    commands for another table (readdressed, or signed with table 1's own keys, all a stolen
    table 1 holds): the tables' records and clocks are unchanged, their state reports count
    the drops;
  - a report signed with another table's key, and one replayed: the desk drops and shows them;
  - judge PIN guessing at a table: lockout, shown at the desk, and over after LOCKOUT_MS;
  - the event key is in no MQTT payload, API answer, dashboard page, log, CLI output or
    store of the desk, nor on a table: its config holds its own key and hashed PINs.
"""
import base64
import json
import os
import threading
import time
import urllib.request

import pytest
from paho.mqtt import client as mqtt

from duelclock.core.sign import command_key, table_key
from tests.core.dc import encode
from duelclock.core.ui import LOCKOUT_MS
from duelclock.core.wire import Encoder
from simulator.room import Room
from simulator.table import wait_for

SPEED = 10.0
pytestmark = pytest.mark.needs("mosquitto")


class Sniffer:
    """A second client on the broker: hears every topic ('#'), publishes anything."""

    def __init__(self, url):
        host, port = url.split("://")[1].split(":")
        self.got = []                                # (topic, payload, retained)
        self.lock = threading.Lock()
        self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="rogue")
        self.c.on_message = self._on
        self.c.on_connect = lambda c, u, f, r, p: c.subscribe("#", 1)
        self.c.connect(host, int(port))
        self.c.loop_start()

    def _on(self, client, userdata, msg):
        with self.lock:
            self.got.append((msg.topic, bytes(msg.payload), msg.retain))

    def last(self, topic_end, k=None):
        with self.lock:
            for topic, payload, _ in reversed(self.got):
                if topic.endswith(topic_end) and payload.startswith(b"{") and \
                        (k is None or json.loads(payload)["k"] == k):
                    return topic, payload
        return None

    def publish(self, topic, payload):
        self.c.publish(topic, payload, 1).wait_for_publish(5)

    def stop(self):
        self.c.disconnect()
        self.c.loop_stop()


def api(room, path):
    with urllib.request.urlopen(room.api + path, timeout=10) as r:
        return r.read()


def detail(room, n):
    return json.loads(api(room, "/api/tables/%d" % n))


@pytest.fixture(scope="module")
def venue(tmp_path_factory):
    room = Room(str(tmp_path_factory.mktemp("venue")), serial_tables=0, mqtt_tables=2,
                speed=SPEED, event="sec")
    rogue = None
    try:
        room.start_tables()
        rogue = Sniffer(room.broker.url)             # hears everything from the first byte
        room.start_desk()
        room.start_round(1)
        assert wait_for(lambda: all(v["round"] == 1 and v["sync_age_ms"] is not None
                                    for v in room.status()["tables"]), 60), room.status()
        room.cli("extend", "--table", "1", "--minutes", "1")      # a real command to capture
        assert wait_for(lambda: rogue.last("table/1/cmd", "extend"), 20)
        assert wait_for(lambda: detail(room, 1)["events_stored"] == 2, 30)   # round_start, extend
        with open(room.key_file) as f:
            key = bytes.fromhex(f.read().strip())
        yield room, rogue, key
    finally:
        if rogue is not None:
            rogue.stop()
        room.stop()


def _drops(room, n):
    return (detail(room, n)["state"] or {}).get("drops", 0)


def test_forged_replayed_and_unsigned_commands_change_nothing_at_the_table(venue):
    room, rogue, key = venue
    base = "duelclock/sec/"
    _, extend = rogue.last("table/1/cmd", "extend")
    _, round_line = rogue.last("table/1/cmd", "round")
    _, round_2 = rogue.last("table/2/cmd", "round")
    before = {n: detail(room, n) for n in (1, 2)}
    drops0 = {n: _drops(room, n) for n in (1, 2)}
    forger = Encoder(b"a guessed key, not the event key", boot=999)
    bumped = json.loads(extend)
    bumped["seq"] += 1000                            # the captured sig no longer fits
    unsigned = dict(bumped)
    del unsigned["sig"]
    pause_2 = dict(unsigned, k="pause", tbl=2, at_ms=0, seq=unsigned["seq"] + 2)
    del pause_2["round"], pause_2["ms"]
    attacks = [
        ("table/1/cmd", extend),                                     # replayed, verbatim
        ("table/1/cmd", round_line),                                 # the round, replayed
        ("table/1/cmd", round_2),                                    # table 2's, to table 1
        ("table/1/cmd", json.dumps(bumped).encode()),                # replayed, seq raised
        ("table/1/cmd", forger.build("extend", {"round": 1, "ms": 3600000}, 1)),
        ("table/1/cmd", json.dumps(unsigned).encode()),
        ("table/1/cmd", encode(dict(unsigned, seq=unsigned["seq"] + 1),   # its report key
                               table_key(key, 1))),
    ]
    # A stolen (opened) table 1 holds its own key and its command key, nothing else: what
    # it signs for table 2 is forged there.
    own_1 = table_key(key, 1)
    attacks_2 = [
        ("table/2/cmd", extend.replace(b'"tbl":1,', b'"tbl":2,')),   # readdressed
        ("table/2/cmd", encode(pause_2, command_key(own_1))),
        ("table/2/cmd", encode(pause_2, own_1)),
    ]
    for topic, payload in attacks + attacks_2:
        rogue.publish(base + topic, payload.rstrip(b"\n"))
    # The tables count each one and say so in their next state reports.
    assert wait_for(lambda: _drops(room, 1) >= drops0[1] + len(attacks), 30), _drops(room, 1)
    assert wait_for(lambda: _drops(room, 2) >= drops0[2] + len(attacks_2), 30), _drops(room, 2)
    time.sleep(1.0)
    after = {n: detail(room, n) for n in (1, 2)}
    for n in (1, 2):
        assert after[n]["events_stored"] == before[n]["events_stored"], n     # record as was
        assert after[n]["round"] == 1 and not after[n]["paused"]
        assert after[n]["state"]["phase"] == before[n]["state"]["phase"]
    # Clock: table 1 is still 60 s (the desk's extend) ahead of table 2, not an hour more.
    lead_ms = after[1]["remaining_ms"] - after[2]["remaining_ms"]
    assert abs(lead_ms - 60000) <= 2000 * SPEED, lead_ms


def test_a_report_signed_with_another_tables_key_is_dropped_and_shown(venue):
    room, rogue, key = venue
    base = "duelclock/sec/"
    _, state2 = rogue.last("table/2/state", "state")
    st0 = room.status()
    lp0 = detail(room, 1)["lp"]
    moved = json.loads(state2)
    moved.update(tbl=1, lp={"A": 100, "B": 100})                     # table 2's sig, for 1
    stolen = dict(moved, seq=moved["seq"] + 5 * 2 ** 24)
    del stolen["sig"]
    rogue.publish(base + "table/1/state", json.dumps(moved).encode())
    rogue.publish(base + "table/1/report", encode(stolen, table_key(key, 2)).rstrip(b"\n"))
    rogue.publish(base + "table/2/report", state2)                  # a replay of table 2's
    def grew(reason, n):
        return room.status()["drops"][reason] >= st0["drops"][reason] + n
    assert wait_for(lambda: grew("sig", 2) and grew("replay", 1), 20), room.status()["drops"]
    st = room.status()
    link = st["links"][0]["drops"]
    assert link["sig"] >= 2 and link["replay"] >= 1
    assert "sig=" in room.cli("status")                             # the judges see it
    time.sleep(0.5)
    assert detail(room, 1)["lp"] == lp0 == {"A": 8000, "B": 8000}


def test_judge_pin_guessing_locks_out_and_the_desk_sees_it(venue):
    room, rogue, key = venue
    t = room.tables[2]
    t.press("menu", "3")                 # between duels: Record, Start duel, Judge
    for _ in range(3):
        t.press("9", "9", "9", "9", "ok")
    assert wait_for(lambda: "pin locked" in detail(room, 2)["alerts"], 20), detail(room, 2)
    assert detail(room, 2)["state"]["locked"] is True
    assert "pin locked" in room.cli("status")
    assert b"pin locked" in api(room, "/table/2")                   # its dashboard page
    # The lockout ends after LOCKOUT_MS of round time, and the desk sees that too.
    assert wait_for(lambda: "pin locked" not in detail(room, 2)["alerts"],
                    LOCKOUT_MS / 1000 / SPEED + 20)
    # Three more: the second lockout is twice as long, and pulling the power does not end
    # it or give fresh tries (the table keeps its lockout on flash).
    for _ in range(3):
        t.press("9", "9", "9", "9", "ok")
    assert wait_for(lambda: "pin locked" in detail(room, 2)["alerts"], 20), detail(room, 2)
    t.power_cut()
    assert wait_for(lambda: not detail(room, 2)["online"], 20)
    t.start()
    assert wait_for(lambda: detail(room, 2)["online"] and detail(room, 2)["state"]
                    and detail(room, 2)["sync_age_ms"] is not None, 30), detail(room, 2)
    assert detail(room, 2)["state"].get("locked") is True, detail(room, 2)


def test_the_event_key_never_leaves_the_desk_in_clear(venue):
    room, rogue, key = venue
    forms = [key, key.hex().encode(), key.hex().upper().encode(), base64.b64encode(key)]
    seen = {}
    with rogue.lock:
        seen["mqtt"] = b"\n".join(t.encode() + b" " + p for t, p, _ in rogue.got)
    assert len(rogue.got) > 20
    for path in ("/api/status", "/api/tables/1", "/api/tables/2", "/api/results.csv", "/",
                 "/table/1", "/api/room", "/api/audit", "/api/results", "/login"):
        try:
            seen[path] = api(room, path)
        except urllib.error.HTTPError as e:          # a guarded page: its answer counts too
            seen[path] = e.read()
    for args in (("status",), ("status", "--json")):
        seen["cli " + " ".join(args)] = room.cli(*args).encode()
    for name in os.listdir(room.dir):                # the store (+ WAL), the desk's log
        path = os.path.join(room.dir, name)
        if os.path.isfile(path) and name != "event.key":
            with open(path, "rb") as f:
                seen[name] = f.read()
    assert "desk.sqlite" in seen and "desk.log" in seen
    leaks = [(where, i) for where, data in seen.items() for i, form in enumerate(forms)
             if form in data]
    assert leaks == []
    # Nor is it on a table: the config holds the table's own key and the PINs hashed.
    for n, t in room.tables.items():
        with open(t.config, "rb") as f:
            data = f.read()
        assert [form for form in forms if form in data] == [], n
        cfg = json.loads(data)
        assert cfg["key"] == table_key(key, n).hex()
        assert sorted(cfg["pins"]) == ["floor", "head"]
        assert all(pin.count("$") == 2 and pin not in ("1111", "2222")
                   for pin in cfg["pins"].values()), cfg["pins"]
