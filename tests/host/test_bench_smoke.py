"""The bench (tests/bench) runs and speaks its line format; its record replays as planned.
No timing is asserted: figures are the bench's business, not the suite's."""
import json
import os
import re
import subprocess
import sys

import pytest

from duelclock.core.replay import Replay
from tests.bench import gen_record
from tests.host.upy import ROOT

RUN = os.path.join(ROOT, "tests", "bench", "run.py")
GEN = os.path.join(ROOT, "tests", "bench", "gen_record.py")
CORE_METRICS = {
    "replay_2000_upy_ms", "replay_2000_upy_process_ms", "replay_2000_cpython_ms",
    "replay_upy_over_cpython_ratio", "replay_2000_rejected", "replay_2000_heap_peak_bytes",
    "replay_2000_heap64k_ok", "core_mpy_bytes",
}


def test_core_group_prints_one_metric_per_line():
    r = subprocess.run([sys.executable, RUN, "--repeat", "1", "core"],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().split("\n")
    names = set()
    for line in lines:
        m = json.loads(line)
        assert {"metric", "value", "unit", "target"} <= set(m), line
        assert ("ok" in m) == (m["target"] is not None), line
        if "ok" in m:
            assert type(m["ok"]) is bool, line
        names.add(m["metric"])
    assert len(names) == len(lines)
    assert CORE_METRICS <= names


def test_unknown_group_is_refused():
    r = subprocess.run([sys.executable, RUN, "no_such_group"], capture_output=True, text=True,
                       timeout=60, cwd=ROOT)
    assert r.returncode == 2 and "no_such_group" in r.stderr and not r.stdout


def _replay(events):
    r = Replay()
    for ev in events:
        r.feed(gen_record.dumps(ev))
    return json.loads(r.verdict_json())


@pytest.mark.parametrize("n_events,seed", [(gen_record.MIN_EVENTS, 1), (300, 5), (2000, 1)])
def test_record_replays_to_its_planned_verdict(n_events, seed):
    events, expect = gen_record.build(n_events, seed)
    assert len(events) == n_events
    assert [ev["t"] for ev in events[1:]] == sorted(ev["t"] for ev in events[1:])
    v = _replay(events)
    for key in ("result", "wins", "duels", "phase", "lp", "penalties"):
        assert v[key] == expect[key], key
    assert [x["index"] for x in v["rejected"]] == expect["rejected_indexes"]
    assert len(expect["rejected_indexes"]) == 2


def test_record_is_deterministic_and_seeded():
    assert gen_record.build(500, 3) == gen_record.build(500, 3)
    assert gen_record.build(500, 3)[0] != gen_record.build(500, 4)[0]


def test_record_cli_writes_n_lines():
    r = subprocess.run([sys.executable, GEN, "120"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    assert lines[-1] == "" and len(lines) == 121
    assert [json.loads(x) for x in lines[:-1]] == gen_record.build(120)[0]
    r = subprocess.run([sys.executable, GEN, str(gen_record.MIN_EVENTS - 1)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and not r.stdout


# --- the firmware, link and sim groups' tools, cheaply (the groups themselves take minutes) ---

sys.path.insert(0, os.path.join(ROOT, "tests", "bench"))
PROXY = os.path.join(ROOT, "tests", "bench", "wifi_proxy.py")


def test_firmware_timing_script_times_entries_and_appends():
    import bench_firmware
    t = bench_firmware.upy_timing(["entry", 128, 64, 1, 2])
    assert t["keys"] == 11 and t["key_us"] > 0 and t["ok_us"] > 0
    assert bench_firmware.upy_timing(["journal", 3])["append_us"] > 0


def test_bench_match_plays_to_its_verdict_and_reports_a_memory_error(tmp_path):
    import bench_firmware
    from common import Bench
    match = bench_firmware.MatchRun(Bench(1, str(tmp_path)))
    out, why = match(512, sample=True)          # the verdict is checked inside
    assert why is None and 0 < out["base"] < out["peak"]
    start = gen_record.build(bench_firmware.MATCH_EVENTS)[0][0]["t"]
    assert out["frames"] == (bench_firmware.MATCH_END_MS - start) // 1000 + 1
    out, why = match(32)
    assert out is None and why.startswith("MemoryError")


def _proxy(*args):
    p = subprocess.Popen([sys.executable, PROXY] + list(args), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert line.startswith("listening 127.0.0.1:"), line
    return p, int(line.rsplit(":", 1)[1])


def _proxy_counts(p):
    out, _ = p.communicate(timeout=10)          # stdin closes: the proxy stops
    return json.loads(out.strip().split("\n")[-1])


def _echo(udp):
    """A loopback echo server in a thread: its port."""
    import socket
    import threading
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM if udp else socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))

    def serve():
        if udp:
            while True:
                data, addr = s.recvfrom(2048)
                s.sendto(data, addr)
        s.listen(1)
        conn, _ = s.accept()
        while True:
            data = conn.recv(4096)
            if not data:
                return
            conn.sendall(data)
    threading.Thread(target=serve, daemon=True).start()
    return s.getsockname()[1]


def test_wifi_proxy_delays_tcp_both_ways_and_keeps_order():
    import socket
    import time
    p, port = _proxy("--to", "127.0.0.1:%d" % _echo(False), "--delay-ms", "30",
                     "--jitter-ms", "0", "--hold-pct", "0")
    c = socket.create_connection(("127.0.0.1", port))
    for i in range(4):
        t0 = time.monotonic()
        c.sendall(b"message %d\n" % i)
        got = b""
        while not got.endswith(b"\n"):
            got += c.recv(100)
        assert got == b"message %d\n" % i
        assert time.monotonic() - t0 >= 0.06    # 30 ms each way: never sooner
    c.close()
    counts = _proxy_counts(p)
    assert counts["connections"] == 1 and counts["held"] == 0 and counts["packets"] >= 8


def test_wifi_proxy_holds_udp_datagrams():
    import socket
    import time
    p, port = _proxy("--udp", "--to", "127.0.0.1:%d" % _echo(True), "--delay-ms", "0",
                     "--jitter-ms", "0", "--hold-pct", "100", "--hold-ms", "50")
    c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    c.settimeout(5)
    for i in range(3):
        t0 = time.monotonic()
        c.sendto(b"ntp %d" % i, ("127.0.0.1", port))
        assert c.recvfrom(100)[0] == b"ntp %d" % i
        assert time.monotonic() - t0 >= 0.1     # held 50 ms each way
    counts = _proxy_counts(p)
    assert counts["packets"] == counts["held"] == 6


def test_mqtt_tables_ticked_by_the_bench_get_ready_on_their_own():
    # The Wi-Fi sync bench ticks the tables itself (auto_tick off) only once all are
    # ready: the SUBSCRIBE each queues at its CONNACK must go out without a tick.
    import time
    import mqtt_tables
    from duelclock_desk.broker import Mosquitto
    from tests.host.tables import SessionTable
    broker = Mosquitto()
    host = None
    try:
        tables = [SessionTable(bytes(range(32)), n) for n in (1, 2)]
        host = mqtt_tables.Host(broker.url, "smoke", tables, lambda tbl: 0.0,
                                auto_tick=False, tick_s=0.5).start()
        end = time.monotonic() + 10
        while not host.ready() and time.monotonic() < end:
            time.sleep(0.02)
        assert host.ready(), host.error
    finally:
        if host is not None:
            host.close()
        broker.stop()


def test_mqtt_tables_take_a_signed_round_and_report_its_state():
    import time
    import mqtt_tables
    from paho.mqtt import client as mqtt
    from duelclock.core.wire import Encoder
    from duelclock_desk.broker import Mosquitto
    from tests.host.tables import SessionTable
    key = bytes(range(32))
    broker = Mosquitto()
    host = watcher = None
    try:
        tables = [SessionTable(key, n) for n in (1, 2, 3)]
        host = mqtt_tables.Host(broker.url, "smoke", tables,
                                lambda tbl: int(time.monotonic() * 1000)).start()
        end = time.monotonic() + 10
        while not host.ready() and time.monotonic() < end:
            time.sleep(0.02)
        assert host.ready(), host.error
        states = {}
        watcher = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
        watcher.on_message = lambda c, u, m: states.__setitem__(m.topic, json.loads(m.payload))
        watcher.connect("127.0.0.1", broker.port)
        watcher.subscribe("duelclock/smoke/table/+/state")
        watcher.loop_start()
        desk = Encoder(key, 1)
        for n in (1, 2, 3):
            line = desk.build("round", {"round": 1, "kind": "swiss", "start_ms": 0,
                                        "limit_s": 2700, "cap_s": 1800, "extra_turns": 1,
                                        "seating": False}, n)
            watcher.publish("duelclock/smoke/table/%d/cmd" % n, line, 1)
        end = time.monotonic() + 10
        while len([s for s in states.values() if s.get("round") == 1]) < 3 and time.monotonic() < end:
            time.sleep(0.02)
        assert sorted(s["tbl"] for s in states.values() if s.get("round") == 1) == [1, 2, 3]
        assert host.error is None and all(t.match is not None for t in tables)
    finally:
        if watcher is not None:
            watcher.loop_stop()
            watcher.disconnect()
        if host is not None:
            host.close()
        broker.stop()


# --- the display group's tools (the group itself runs the app loop for about 20 s) ---------

def test_frame_counter_counts_calls_and_bytes_of_a_mono_frame():
    import bench_display
    f = bench_display._upy("upy_frames.py", [128, 64, 1])
    assert f["full_bytes"] == 1024 and f["lp_key"]["frames"] == 55
    for name in ("lp_key", "clock_tick"):
        assert 0 < f[name]["bytes"] <= 1024 and f[name]["calls"] > 0


def test_work_driver_plays_the_keys_it_is_given_in_virtual_time():
    # bench_work.py counts this driver's instructions under valgrind; here it runs bare:
    # 10 keys are an LP entry of -800 for A, and two runs of the same span show the same;
    # marked for callgrind (each key's frame at once), the keys still make that entry.
    import bench_work
    out = []
    for extra in ([], [], ["mark"]):
        r = bench_work.subprocess.run(
            bench_work.UPY + ["-X", "heapsize=" + bench_work.HEAP, "tests/bench/upy_work.py", "10", "500"]
            + extra, env=dict(os.environ, MICROPYPATH="firmware:tests/upy:.frozen"), cwd=ROOT,
            capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        out.append(json.loads(r.stdout))
    assert out[0] == out[1] and out[0]["lp_a0"] - out[0]["lp_a"] == 800 and out[0]["frames"] > 10
    assert out[2]["lp_a0"] - out[2]["lp_a"] == 800


def test_typing_through_the_app_loop_shows_each_press_of_a_before_its_release():
    # The real screen task on the Pico W's keymap: A (menu on hold) waits on its release, and
    # the screen shows it held at once; X acts on its press. No press is lost.
    import bench_display
    r = bench_display._upy("upy_loop.py", ["typing"])
    assert r["registered"] == r["pressed"]
    assert r["a_shown"] >= r["a_pressed"], r


def test_duel_loop_counts_presents_bytes_and_allocations_of_the_whole_firmware():
    import bench_display
    d = bench_display._upy("upy_loop.py", ["duel", 2, 2])
    assert d["registered"] == 2 and len(d["key_bytes"]) == 2 and d["syncs"] > 0
    assert 1500 <= d["idle"]["ms"] <= 2500 and d["idle"]["presents"] >= 1
    got = {m["metric"]: m for m in bench_display.duel_metrics(d)}
    assert set(got) == {"presents_per_idle_minute", "display_bytes_per_clock_tick",
                        "alloc_bytes_per_idle_s", "display_bytes_per_lp_key",
                        "alloc_bytes_per_lp_key"}
    assert 0 < got["display_bytes_per_lp_key"]["value"] <= 240 * 135 * 2
    assert all(m["value"] >= 0 and m["target"] is not None for m in got.values())


def _small_chrony(tmp_path, monkeypatch, quiet_last=False):
    # sync_error_chrony_ms's machinery, small: 3 chronyd clients for 5 s of their sync;
    # `quiet_last`: the last client never reads as synchronised.
    import bench_link
    from common import Bench
    monkeypatch.setattr(bench_link, "CHRONY_CLIENTS", 3)
    monkeypatch.setattr(bench_link, "CHRONY_S", 5)
    if quiet_last:
        monkeypatch.setattr(bench_link, "CHRONY_SYNC_S", 15)
        ports = []
        free, read = bench_link._free_udp_ports, bench_link._ntp_offset_ms
        monkeypatch.setattr(bench_link, "_free_udp_ports",
                            lambda n: ports.extend(free(n)) or ports)

        def quiet(port):
            off, synced = read(port)
            return off, synced and port != ports[-1]
        monkeypatch.setattr(bench_link, "_ntp_offset_ms", quiet)
    b = Bench(1, str(tmp_path))
    try:
        return {m["metric"]: m for m in bench_link.sync_chrony(b)}
    finally:
        b.procs.end_all()


def test_chrony_clients_sync_through_the_udp_proxy_and_are_read(tmp_path, monkeypatch):
    got = _small_chrony(tmp_path, monkeypatch)
    top = got["sync_error_chrony_ms"]
    assert top["value"] is not None, top["note"]
    assert "3 chronyd -x clients" in top["note"]
    assert 0 <= got["sync_error_chrony_client_p50_max_ms"]["value"] <= top["value"]
    assert 0 <= got["table_skew_chrony_max_ms"]["value"] <= 2 * top["value"]
    assert got["sync_msgs_chrony_per_min"]["value"] > 0


def test_chrony_figures_stand_on_the_clients_that_synchronised(tmp_path, monkeypatch):
    # The run is not thrown away for one quiet chronyd: the figures are the others', and
    # the note says so.
    top = _small_chrony(tmp_path, monkeypatch, quiet_last=True)["sync_error_chrony_ms"]
    assert top["value"] is not None, top["note"]
    assert "only 2 of 3 chronyd clients synchronised" in top["note"], top["note"]


def test_exact_drift_filter_takes_each_legs_lowest_in_true_desk_time():
    # table_skew_exact_drift_max_ms's filter: a crystal 100 ppm fast, booted 5 s before desk
    # time 0. Three exchanges; the lowest leg out (10.5 ms) and the lowest leg back (10.2 ms)
    # come from different ones, and the us parts count.
    import bench_link
    rate, boot = 1.0001, 5000.0
    local = lambda desk: (desk + boot) * rate  # noqa: E731
    desk_ahead = 0.4        # the desk's stamps against the time the crystal is known in:
                            # a table that follows them is off by this much

    def exchange(t1_desk, out, back, us=False):
        t2 = t1_desk + out + desk_ahead
        t3 = t2 + 0.25
        t4 = local(t3 - desk_ahead + back)
        t1 = local(t1_desk)
        if not us:
            return (t1, t2, t3, t4)
        stamps = [int(t1), int(t2), int(t3), int(t4)]
        return tuple(stamps) + (tuple(int(round((v - int(v)) * 1000))
                                      for v in (t1, t2, t3, t4)),)
    f = bench_link.Floors((rate, boot))
    stamps = [exchange(1000.0, 12.0, 11.0), exchange(900000.0, 10.5, 25.0)]
    assert abs(f.error_ms(stamps) - ((10.5 - 11.0) / 2 + desk_ahead)) < 1e-6
    stamps.append(exchange(1800000.0, 30.0, 10.2, us=True))
    assert f.taken == 2
    assert abs(f.error_ms(stamps) - ((10.5 - 10.2) / 2 + desk_ahead)) < 0.002
    assert f.taken == 3


def test_protocol_cpu_runs_a_round_start_through_the_real_desk():
    # round_start_2000_protocol_cpu_ms's machinery, small: the desk signs a round for 20
    # sessions, each takes it and writes its state, the desk takes them (else BenchError).
    import bench_link
    m = bench_link.protocol_cpu({"metric": "fanout_2000_bare_p100_ms", "value": 40.0}, tables=20)
    assert m["metric"] == "round_start_20_protocol_cpu_ms"
    assert m["value"] > 0
    assert "sign 20 commands, take 20 states" in m["note"] and "is 120 ms" in m["note"], m["note"]



# --- the table_link group's tools -----------------------------------------------------------

def test_table_link_counts_mbedtls_heap_outside_the_gc_heap(tmp_path):
    """The LD_PRELOAD counter sees what mbedtls holds while a TLS link is up (its record
    buffers, 16 KB in and 4 KB out) and nothing for a plain one; the driver gets up both ways."""
    import bench_table_link
    from common import Bench
    from duelclock_desk.deploy import parse_broker
    from tests.host.mqtt_tls import TlsBroker
    b = Bench(1, str(tmp_path))
    with TlsBroker() as t:
        cred = "table:%s@127.0.0.1" % t.users["table"]
        plain = bench_table_link._c_heap(b, parse_broker("mqtt://%s:%d" % (cred, t.plain_port)))
        tls = bench_table_link._c_heap(b, parse_broker("mqtts://%s:%d" % (cred, t.port), t.ca))
    assert plain is not None and tls is not None, "no C compiler, or the link did not get up"
    assert plain[1] < 1024 and tls[1] >= 20 * 1024 and tls[0] >= tls[1], (plain, tls)


def test_the_performance_page_says_machine_date_figure_target_and_how(tmp_path):
    # report.py writes docs/performance.md from run.py's lines (make bench does both).
    lines = tmp_path / "bench.jsonl"
    lines.write_text("\n".join(json.dumps(m) for m in (
        {"metric": "replay_2000_upy_ms", "value": 87.5, "unit": "ms", "target": 100, "ok": True,
         "group": "core"},
        {"metric": "display_bytes_per_lp_key_128x64", "value": 298, "unit": "bytes",
         "target": None, "note": "128x64 mono", "group": "display"},
        {"metric": "journal_append_ms", "value": None, "unit": "ms", "target": 2, "ok": False,
         "group": "firmware"})) + "\n")
    page = tmp_path / "performance.md"
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "bench", "report.py"),
                        "--from", str(lines), "--out", str(page)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    text = page.read_text()
    assert "- Machine: " in text and "%d cores" % os.cpu_count() in text
    assert re.search(r"- Date: \d{4}-\d\d-\d\d \d\d:\d\d UTC", text)
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in text.splitlines() if line.startswith("| `")}
    assert rows["`replay_2000_upy_ms`"][:3] == ["87.5 ms", "100 ms", "yes"]
    assert "replay_file alone under the MicroPython unix port" in rows["`replay_2000_upy_ms`"][3]
    # a variant finds its figure's description, and keeps its own note
    how = rows["`display_bytes_per_lp_key_128x64`"][3]
    assert how.startswith("bytes sent to the panel") and how.endswith("(128x64 mono)")
    assert rows["`journal_append_ms`"][:3] == ["not measured", "2 ms", "**no**"]


def test_clients_group_measures_paho_and_gives_null_for_a_client_that_does_not_import(
        tmp_path, monkeypatch):
    import bench_clients
    from common import Bench
    hidden = tmp_path / "hidden" / "gmqtt"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ImportError('not installed here')\n")
    monkeypatch.setenv("PYTHONPATH", str(hidden.parent))     # the client processes' gmqtt
    b = Bench(1, str(tmp_path))
    try:
        paho = bench_clients.client_round(b, "paho_desk", messages=50)
        gmqtt = bench_clients.client_round(b, "gmqtt", messages=50)
    finally:
        b.procs.end_all()
    assert [m["metric"] for m in paho] == ["mqtt_client_paho_desk_round_50_p100_ms",
                                           "mqtt_client_paho_desk_round_50_cpu_ms"]
    assert all(m["value"] > 0 and m["client"].startswith("paho-mqtt 2.") for m in paho), paho
    assert [m["value"] for m in gmqtt] == [None, None]
    assert "ImportError: not installed here" in gmqtt[0]["note"] and gmqtt[0]["ok"] is False


# --- the provision group (one run: about 30 s) -----------------------------------------------

def test_provision_group_provisions_and_prints_its_figures():
    r = subprocess.run([sys.executable, RUN, "--repeat", "1", "provision"],
                       capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    got = {m["metric"]: m for m in map(json.loads, r.stdout.strip().split("\n"))}
    assert set(got) == {"provision_s_per_board", "provision_again_s_per_board"}
    # a run that copies nothing takes less than one that copies the firmware
    assert 0 < got["provision_again_s_per_board"]["value"] < got["provision_s_per_board"]["value"]
