# Timings of the table's hot paths under the MicroPython unix port, for the firmware bench
# (tests/bench/bench_firmware.py). MICROPYPATH: the firmware, tests/upy (ramdisk), .frozen.
#
#   micropython upy_timing.py entry W H MONO N   key press to rendered frame: N LP entries
#       (a 1 0 0 ok, then a 1 0 0 sign ok), each key timed through Ui.key + view.build +
#       FbRenderer.draw on a W x H framebuf; the journal on littlefs over a RAM disk
#   micropython upy_timing.py journal N           N journal appends (write, flush, close)
#       on littlefs over a RAM disk
#
# Prints one JSON line of medians in microseconds: {"key_us", "ok_us", "keys": how many}
# or {"append_us"}.
import json
import sys
import time

from ramdisk import RAMDisk
from duelclock.journal import Journal

START = {"t": 0, "ev": "round_start", "round": 1, "kind": "swiss", "limit_s": 2700,
         "cap_s": 1800, "extra_turns": 1, "seating": False}
ENTRIES = (("a", "1", "0", "0", "ok"), ("a", "1", "0", "0", "sign", "ok"))


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def journal_on_ramdisk():
    disk = RAMDisk(64)
    disk.mount("/flash", format=True)
    return Journal("/flash/journal")


def entry(w, h, mono, n):
    import framebuf
    from duelclock.core.ui import Ui
    from duelclock.core.view import build
    from duelclock.render_fb import FbRenderer
    if mono:
        fb = framebuf.FrameBuffer(bytearray(w * ((h + 7) // 8)), w, h, framebuf.MONO_VLSB)
    else:
        fb = framebuf.FrameBuffer(bytearray(w * h * 2), w, h, framebuf.RGB565)
    r = FbRenderer(fb, w, h, mono)
    journal = journal_on_ramdisk()

    def save(ev):
        if ev["ev"] == "round_start":
            journal.start_match(ev)
        else:
            journal.append(ev)

    ui = Ui(1, save)
    ui.start_round(dict(START))
    now = 60000
    ui.key("a", now)
    ui.key("a", now)                  # who goes first: A
    if not ui.match.in_duel:
        raise SystemExit("no duel started")
    keys, oks = [], []
    for i in range(n):
        for k in ENTRIES[i % 2]:
            now += 300
            t0 = time.ticks_us()
            ui.key(k, now)
            r.draw(build(ui, now, 1, None, False))
            dt = time.ticks_diff(time.ticks_us(), t0)
            keys.append(dt)
            if k == "ok":
                oks.append(dt)
    if ui.match.lp["A"] != 8000 - (n % 2) * 100 or len(ui.stack) != 1:
        raise SystemExit("the entries did not land: LP %s" % ui.match.lp)
    print(json.dumps({"key_us": median(keys), "ok_us": median(oks), "keys": len(keys)}))


def journal(n):
    j = journal_on_ramdisk()
    j.start_match(dict(START))
    times = []
    for i in range(n):
        ev = {"t": 60000 + i * 1000, "ev": "lp", "B": -100 * (1 + i % 20), "by": "B"}
        t0 = time.ticks_us()
        j.append(ev)
        times.append(time.ticks_diff(time.ticks_us(), t0))
    print(json.dumps({"append_us": median(times)}))


if sys.argv[1] == "entry":
    entry(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1", int(sys.argv[5]))
else:
    journal(int(sys.argv[2]))
