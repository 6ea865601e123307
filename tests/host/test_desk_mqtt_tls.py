"""The desk on a venue broker with TLS and a password (tests/host/mqtt_tls.py: a real
mosquitto, certificates made for the test), and `duelclock desk --lan`: the broker the desk
starts for the venue, never anonymous, TLS when asked. Loopback only."""
import asyncio
import json
import os
import shutil
import stat
import subprocess
import sys
import time

import pytest
from paho.mqtt import client as mqtt

from duelclock_desk import venue
from duelclock_desk.api import Service
from duelclock_desk.broker import BrokerError, Mosquitto, free_port
from tests.host.desk_rig import until
from tests.host.mqtt_tls import TlsBroker
from tests.host.tables import MqttTables, SessionTable
from tests.faults.test_delivery import run_service as run

KEY = bytes(range(32))
EVENT = "tls"
pytestmark = pytest.mark.skipif(
    shutil.which("mosquitto") is None and not os.access("/usr/sbin/mosquitto", os.X_OK),
    reason="mosquitto is not installed (apt-get install -y mosquitto)")


@pytest.fixture(scope="module")
def tls():
    b = TlsBroker()
    yield b
    b.stop()


def test_the_desk_reaches_tables_through_tls_with_the_right_ca_and_password(tls, tmp_path):
    svc = Service(str(tmp_path / "d.sqlite"), KEY, EVENT, http_port=0,
                  broker="mqtts://127.0.0.1:%d" % tls.port, ca=tls.ca,
                  auth=("desk", tls.users["desk"]))
    tables = [SessionTable(KEY, n) for n in (1, 2)]

    async def scenario(svc):
        await until(lambda: svc.desk.links[0].up, what="the desk on the TLS broker")
        room = MqttTables("mqtt://127.0.0.1:%d" % tls.port, EVENT, tables,
                          auth=("table", tls.users["table"]), ca=tls.ca)
        try:
            svc.desk.run("test", "start_round", {"round": 1})
            await until(lambda: all(t.round for t in tables), what="the round over TLS")
            await until(lambda: all((svc.desk.table_view(n) or {}).get("round") == 1
                                    for n in (1, 2)), what="the tables' states at the desk")
        finally:
            room.stop()
        info = svc.desk.links[0].info()
        assert info["up"] and "error" not in info
        assert tls.users["desk"] not in info["url"]          # no password in what is shown
    run(svc, scenario)


@pytest.mark.parametrize("case", ["wrong password", "wrong ca", "no login"])
def test_the_desk_is_refused_and_says_why(tls, tmp_path, case, capfd):
    auth = {"wrong password": ("desk", "guess"), "no login": None}.get(
        case, ("desk", tls.users["desk"]))
    ca = tls.other_ca if case == "wrong ca" else tls.ca
    svc = Service(str(tmp_path / "d.sqlite"), KEY, EVENT, http_port=0,
                  broker="mqtts://127.0.0.1:%d" % tls.port, ca=ca, auth=auth)

    async def scenario(svc):
        link = svc.desk.links[0]
        await until(lambda: "error" in link.info(), what="the refusal")
        await asyncio.sleep(1.5)                              # and at every retry
        assert not link.up
        return link.info()["error"]
    out = {}

    async def keep(svc):
        out["error"] = await scenario(svc)
    run(svc, keep)
    err = capfd.readouterr().err
    if case == "wrong ca":
        assert "TLS: the broker's certificate is not trusted (--ca)" in out["error"]
    else:
        assert "refused" in out["error"] and "--password-file" in out["error"], out["error"]
    assert out["error"] in err and err.count(out["error"]) == 1     # said once, not per retry


def test_desk_lan_makes_a_password_and_never_lets_anyone_in_without_it(tmp_path):
    port = free_port()
    store = str(tmp_path / "d.sqlite")
    svc = Service(store, KEY, EVENT, broker="auto", lan=True, http_port=0,
                  venue_opts={"port": port})
    tables = [SessionTable(KEY, 1)]

    async def scenario(svc):
        await until(lambda: svc.desk.links[0].up, what="the desk on its venue broker")
        path = os.path.join(venue.state_dir(store), "tables.json")
        info = json.load(open(path))
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert info["url"].startswith("mqtt://") and info["url"].endswith(":%d" % port)
        assert info["user"] == "table" and len(info["password"]) >= 20
        conf = open(os.path.join(svc.broker._dir, "mosquitto.conf")).read()
        assert "allow_anonymous false" in conf and "listener %d 0.0.0.0" % port in conf
        assert "allow_anonymous true" not in conf
        for auth in (None, ("table", "guess"), ("desk", info["password"])):
            assert _refused(port, auth), auth
        room = MqttTables("mqtt://127.0.0.1:%d" % port, EVENT, tables,
                          auth=(info["user"], info["password"]))
        try:
            await until(lambda: svc.desk.table_view(1) is not None,
                        what="a table with the password heard")
        finally:
            room.stop()
        return info["password"]
    first = {}

    async def keep(svc):
        first["password"] = await scenario(svc)
    run(svc, keep)
    # A restart keeps the tables' password: they were deployed with it.
    again = Service(store, KEY, broker="auto", lan=True, http_port=0, venue_opts={"port": port})

    async def same(svc):
        await until(lambda: svc.desk.links[0].up, what="the desk back")
        assert svc.venue["password"] == first["password"]
    run(again, same)


def test_desk_lan_tls_makes_certificates_and_the_tables_need_the_ca(tmp_path):
    port = free_port()
    store = str(tmp_path / "d.sqlite")
    pw = tmp_path / "tables-password"
    pw.write_text("a venue's own password\n")
    svc = Service(store, KEY, EVENT, broker="auto", lan=True, http_port=0,
                  venue_opts={"port": port, "tls": True, "names": ["127.0.0.1"],
                              "password_file": str(pw)})
    tables = [SessionTable(KEY, 1)]

    async def scenario(svc):
        await until(lambda: svc.desk.links[0].up, what="the desk on its TLS venue broker")
        info = svc.venue
        assert info["url"] == "mqtts://127.0.0.1:%d" % port
        assert info["password"] == "a venue's own password"
        assert info["ca"] == os.path.join(venue.state_dir(store), "ca.crt")
        assert _refused(port, ("table", info["password"]))       # no TLS: no way in
        assert _refused(port, ("table", "guess"), info["ca"])
        room = MqttTables("mqtt://127.0.0.1:%d" % port, EVENT, tables,
                          auth=("table", info["password"]), ca=info["ca"])
        try:
            await until(lambda: svc.desk.table_view(1) is not None,
                        what="a table over TLS heard")
        finally:
            room.stop()
    run(svc, scenario)


def test_a_broker_open_to_the_venue_without_a_password_is_refused():
    with pytest.raises(BrokerError, match="password"):
        Mosquitto(lan=True)


def test_cli_desk_tls_flags_need_lan(tmp_path):
    key = tmp_path / "key"
    key.write_text("00" * 32)
    for extra, says in ((["--tls"], "are for the broker --lan opens"),
                        (["--lan", "--tls", "--tls-cert", str(key)], "go together"),
                        (["--password-file", str(key)], "needs --user"),
                        (["--link", "mqtts://127.0.0.1:1", "--ca", str(tmp_path / "nope")],
                         "no file")):
        r = subprocess.run([sys.executable, "-m", "duelclock_desk.cli", "desk", "--store",
                            str(tmp_path / "d.sqlite"), "--key", str(key)] + extra,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and says in r.stderr, (extra, r.stderr)


def _refused(port, auth, ca=None):
    """True unless a client with auth (and TLS with ca) gets a CONNACK 0 from 127.0.0.1:port."""
    got = []
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="probe-%d" % time.monotonic_ns())
    c.on_connect = lambda cl, u, f, reason, p: got.append(reason.is_failure)
    if auth:
        c.username_pw_set(*auth)
    if ca:
        c.tls_set(ca_certs=ca)
    try:
        c.connect("127.0.0.1", port, 10)
    except OSError:
        return True
    c.loop_start()
    end = time.monotonic() + 5
    while not got and time.monotonic() < end and c.is_connected() is not None:
        time.sleep(0.02)
    c.loop_stop()
    c.disconnect()
    return not got or got[0]
