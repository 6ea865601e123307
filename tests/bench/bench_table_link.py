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
#
# mbedtls's own buffers are not in these: the unix port's mbedtls allocates with the C
# library's calloc, a bare-metal port's (rp2, esp32) from the GC heap (docs/protocol.md,
# "TLS on a table"). The unix port is 64-bit: Python objects take about twice the bytes.
import json
import os
import random

from common import ROOT, metric, run_upy
from bench_firmware import smallest_heap_kb

FAULT_S = 12
HEAP_LOW_KB = 16


def _path():
    from simulator.build import compiled_firmware, umqtt
    return ":".join((compiled_firmware(), umqtt(), ".frozen"))


def _run(b, cfg, seconds, heap_kb=None):
    path = b.path("link_%d.json" % random.randrange(1 << 30))
    with open(path, "w") as f:
        json.dump({"table": 7, "link": "mqtt", "event": "bench", "mqtt": cfg}, f)
    r = run_upy([os.path.join(ROOT, "tests", "bench", "upy_table_link.py"), path, str(seconds)],
                path=_path(), heap_kb=heap_kb, timeout=seconds + 60)
    os.remove(path)
    if r.returncode != 0:
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


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
    finally:
        quiet.stop()
        silent.stop()
        garbage.stop()
        tls.stop()
