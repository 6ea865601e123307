# The table's MQTT link (firmware/duelclock/link.py MqttLink, umqtt.simple) on the MicroPython
# unix port, against a real mosquitto (plain, and TLS with a password: tests/host/mqtt_tls.py):
#
#   table_link_fault_hold_max_ms  the longest one poll() or send() held the loop, over
#                                 FAULT_S against each broker fault of the link's tests (one
#                                 that never answers, one that answers the CONNACK and goes
#                                 quiet, one that refuses the login, one that sends garbage),
#                                 worst of them (wall time: a preempted poll counts);
#                                 target link.LINK_HOLD_MS
#   table_tls_step_max_ms         the longest poll() while connecting over TLS: the heaviest
#                                 step of the handshake (median over the repeats)
#   table_mqtt_heap_min_kb        the smallest -X heapsize at which the link gets up (2 KB
#   table_tls_heap_min_kb         steps, bisection), plain and over TLS (the firmware as .mpy,
#                                 umqtt.simple and ssl imported first)
#   table_tls_heap_extra_kb       their difference: what the handshake needs of the GC heap
#   table_tls_live_bytes          live heap the link holds once up over TLS, less plain
#   table_tls_c_heap_peak_bytes   mbedtls's own: the unix port's mbedtls allocates with the C
#   table_tls_c_heap_held_bytes   library's calloc, outside the GC heap (a bare-metal port's,
#                                 rp2 or esp32, from the GC heap: docs/protocol.md). Counted
#                                 by malloc_peak.c (LD_PRELOAD, built here with cc): the peak
#                                 the extension's code held from make_link to up, and what it
#                                 still holds once up, less a plain link's
# The unix port is 64-bit: Python objects take about twice the bytes.
import json
import os
import random
import shutil
import subprocess

from common import ROOT, UPY, metric
from bench_firmware import smallest_heap_kb

FAULT_S = 12
HEAP_LOW_KB = 16


def _path():
    from simulator.build import compiled_firmware, umqtt
    return ":".join((compiled_firmware(), umqtt(), ".frozen"))


def _run(b, cfg, seconds, heap_kb=None, env=None):
    """upy_table_link.py's JSON for a config with `cfg` as its "mqtt", or None if it failed."""
    path = b.path("link_%d.json" % random.randrange(1 << 30))
    with open(path, "w") as f:
        json.dump({"table": 7, "link": "mqtt", "event": "bench", "mqtt": cfg}, f)
    cmd = [UPY] + (["-X", "heapsize=%dk" % heap_kb] if heap_kb else []) + [
        os.path.join(ROOT, "tests", "bench", "upy_table_link.py"), path, str(seconds)]
    r = subprocess.run(cmd, env=dict(os.environ, MICROPYPATH=_path(), **(env or {})),
                       capture_output=True, text=True, timeout=seconds + 60, cwd=ROOT)
    os.remove(path)
    if r.returncode != 0:
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def _c_heap(b, cfg):
    """(peak, held) bytes of C heap the unix port's own code took for `cfg`'s link (the
    GC heap block apart), or None without a C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    lib = b.path("malloc_peak.so")
    if not os.path.exists(lib):
        subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", lib,
                        os.path.join(ROOT, "tests", "bench", "malloc_peak.c"), "-ldl"], check=True)
    report = b.path("malloc_peak.txt")
    heap_kb = 64
    out = _run(b, cfg, 0, heap_kb, {"LD_PRELOAD": lib, "DUELCLOCK_MALLOC_OBJECT": "micropython_run",
                                    "DUELCLOCK_MALLOC_SKIP": str(heap_kb * 1024),
                                    "DUELCLOCK_MALLOC_REPORT": report})
    if out is None or out["up_ms"] is None:
        return None
    with open(report) as f:
        peak, held = (int(n) for n in f.read().split())
    return peak, held


def bench_table_link(b):
    from duelclock.link import LINK_HOLD_MS
    from duelclock_desk.deploy import parse_broker
    from tests.faults.netkit import Proxy
    from tests.host.mqtt_tls import TlsBroker
    from tests.host.test_table_mqtt_link import Server, _first_only, _garbage
    tls = TlsBroker()
    silent, garbage = Server(lambda d: b""), Server(_garbage(30))
    quiet = Proxy(("127.0.0.1", tls.plain_port), lambda: (_first_only(), _first_only()))
    try:
        good = "table:%s@127.0.0.1" % tls.users["table"]
        plain = parse_broker("mqtt://%s:%d" % (good, tls.plain_port))
        secure = parse_broker("mqtts://%s:%d" % (good, tls.port), tls.ca)
        faults = {"silent": {"host": "127.0.0.1", "port": silent.addr[1]},
                  "connack_then_silent": parse_broker("mqtt://%s:%d" % (good, quiet.port)),
                  "refused": parse_broker("mqtt://table:wrong@127.0.0.1:%d" % tls.plain_port),
                  "garbage": {"host": "127.0.0.1", "port": garbage.addr[1]}}
        # one after the other: four tables at once on two cores would time the scheduler
        holds = {n: (_run(b, c, FAULT_S) or {}).get("hold_ms") for n, c in faults.items()}
        worst = None if None in holds.values() else max(holds.values())
        yield metric("table_link_fault_hold_max_ms", worst, "ms", LINK_HOLD_MS,
                     note="longest poll()/send() over %d s per fault: %s" % (
                         FAULT_S, ", ".join("%s %s" % kv for kv in sorted(holds.items()))))
        steps = [(_run(b, secure, 0) or {}).get("hold_ms") for _ in range(b.repeat)]
        steps = sorted(s for s in steps if s is not None)
        yield metric("table_tls_step_max_ms", steps[len(steps) // 2] if steps else None, "ms",
                     LINK_HOLD_MS, note="the longest poll() while connecting over TLS (RSA 2048 "
                     "certificates), median of %d" % b.repeat)
        mins = {}
        for name, cfg in (("mqtt", plain), ("tls", secure)):
            mins[name] = smallest_heap_kb(
                lambda kb, cfg=cfg: ((_run(b, cfg, 0, kb) or {}).get("up_ms") is not None),
                HEAP_LOW_KB)
            yield metric("table_%s_heap_min_kb" % name, mins[name], "KB",
                         note="smallest -X heapsize at which the link gets up (64-bit)")
        extra = None if None in mins.values() else mins["tls"] - mins["mqtt"]
        yield metric("table_tls_heap_extra_kb", extra, "KB",
                     note="GC heap the TLS handshake needs over a plain connect (mbedtls's "
                     "own buffers are outside it on the unix port)")
        live = {n: (_run(b, c, 0) or {}).get("live") for n, c in (("mqtt", plain),
                                                                  ("tls", secure))}
        yield metric("table_tls_live_bytes",
                     None if None in live.values() else live["tls"] - live["mqtt"], "bytes",
                     note="live GC heap once up over TLS, less plain (%s)" % live)
        c = {n: _c_heap(b, cfg) for n, cfg in (("mqtt", plain), ("tls", secure))}
        why = None if None not in c.values() else "no C compiler, or the link did not get up"
        for i, what in enumerate(("peak", "held")):
            yield metric("table_tls_c_heap_%s_bytes" % what,
                         None if why else c["tls"][i] - c["mqtt"][i], "bytes",
                         note=why or "mbedtls's C heap over TLS less plain (%s: %s)" % (
                             what, ", ".join("%s %d" % (n, v[i]) for n, v in c.items())))
    finally:
        quiet.stop()
        silent.stop()
        garbage.stop()
        tls.stop()
