# Runs under MicroPython: the table's MqttLink (make_link, from a duelclock.json) polled
# every 2 ms as the app's link task polls it, for argv[2] seconds (0: until it is up, 5 s at
# most), with a report and a state line sent each second once up. Prints one JSON line:
#   up_ms     ms from make_link to up (null: never)
#   hold_ms   the longest one poll() or send() took
#   live      live heap (collected) once up, less before make_link, bytes (null: never up)
# umqtt.simple and ssl are imported first: `live` is what the connection holds.
import gc
import json
import sys
import time

import ssl  # noqa: F401
import umqtt.simple  # noqa: F401
from duelclock import link


class _Board:
    connect_wifi = None


with open(sys.argv[1]) as f:
    cfg = json.load(f)
run_ms = int(float(sys.argv[2]) * 1000) or 5000
until_up = sys.argv[2] in ("0", "0.0")
gc.collect()
base = gc.mem_alloc()
t0 = time.ticks_ms()
lk = link.make_link(_Board, cfg, time.ticks_ms)
hold = 0
up_ms = live = None
sent_at = 0
while time.ticks_diff(time.ticks_ms(), t0) < run_ms:
    a = time.ticks_ms()
    lk.poll()
    now = time.ticks_ms()
    hold = max(hold, time.ticks_diff(now, a))
    if lk.up and up_ms is None:
        up_ms = time.ticks_diff(now, t0)
        gc.collect()
        live = gc.mem_alloc() - base
        if until_up:
            break
    if lk.up and time.ticks_diff(now, sent_at) >= 1000:
        sent_at = now
        for kind in ("report", "state"):
            a = time.ticks_ms()
            lk.send(b'{"k":"bench","t":%d}\n' % now, kind)
            hold = max(hold, time.ticks_diff(time.ticks_ms(), a))
    time.sleep_ms(2)
print(json.dumps({"up_ms": up_ms, "hold_ms": hold, "live": live}))
