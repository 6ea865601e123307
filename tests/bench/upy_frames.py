# What a frame costs the chip, counted under the MicroPython unix port (the display bench,
# tests/bench/bench_display.py). MICROPYPATH: the firmware, tests/upy, .frozen.
#
#   micropython upy_frames.py W H MONO
#
# Counts, per frame, the framebuf primitive calls the renderer makes (fill, fill_rect, text,
# blit...: each one is Python-level work on a board) and the bytes sent to the panel, for
#   lp_key      every key of LP entries (a 1 0 0 ok, a 1 0 0 sign ok), as upy_timing.py
#   clock_tick  a duel at home, the clock one second on and nothing else changed
# Prints one JSON line: {"lp_key": {"calls": median, "bytes": median, "frames": n},
# "clock_tick": {...}, "full_bytes": bytes of a whole frame}.
import json
import sys

from duelclock.core.ui import Ui
from duelclock.core.view import build
from duelclock.render_fb import FbRenderer
from test_render_fb import framebuffer

START = {"t": 0, "ev": "round_start", "round": 1, "kind": "swiss", "limit_s": 2700,
         "cap_s": 1800, "extra_turns": 1, "seating": False}
ENTRIES = (("a", "1", "0", "0", "ok"), ("a", "1", "0", "0", "sign", "ok"))
TICKS = 20                      # clock ticks counted
WINDOW_BYTES = 11               # an ST7789 window's commands: CASET, RASET, RAMWR, 8 bytes


class CountingFB:
    """A FrameBuffer that counts the primitive calls made on it."""

    def __init__(self, fb):
        self.fb = fb
        self.calls = 0

    def fill(self, c):
        self.calls += 1
        self.fb.fill(c)

    def fill_rect(self, x, y, w, h, c):
        self.calls += 1
        self.fb.fill_rect(x, y, w, h, c)

    def rect(self, x, y, w, h, c):
        self.calls += 1
        self.fb.rect(x, y, w, h, c)

    def hline(self, x, y, w, c):
        self.calls += 1
        self.fb.hline(x, y, w, c)

    def text(self, s, x, y, c):
        self.calls += 1
        self.fb.text(s, x, y, c)

    def blit(self, src, x, y, key=-1, palette=None):
        self.calls += 1
        self.fb.blit(src, x, y, key, palette)


class Panel:
    """The display: counts the bytes show(windows) sends, as the ST7789 driver (2 bytes a
    pixel, and a window's commands) or the ESP32 board's SSD1306 (a byte per column of
    each 8-row page) does."""

    def __init__(self, mono):
        self.mono = mono
        self.sent = 0

    def show(self, windows):
        for x, y, w, h in windows:
            self.sent += w * ((y + h - 1) // 8 - y // 8 + 1) if self.mono else \
                WINDOW_BYTES + 2 * w * h


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def main(w, h, mono):
    buf, fb = framebuffer(w, h, mono)
    cfb = CountingFB(fb)
    r = FbRenderer(cfb, w, h, mono)
    panel = Panel(mono)
    ui = Ui(1, lambda ev: None)
    ui.start_round(dict(START))
    now = 60000
    ui.key("a", now)
    ui.key("a", now)                  # who goes first: A

    def frame(now):
        cfb.calls = 0
        panel.sent = 0
        windows = r.draw(build(ui, now, 1, None, False))
        if windows:
            panel.show(windows)
        return cfb.calls, panel.sent

    frame(now)
    keys = []
    for i in range(10):
        for k in ENTRIES[i % 2]:
            now += 300
            ui.key(k, now)
            keys.append(frame(now))
    ticks = []
    now = now // 1000 * 1000 + 1000
    frame(now)
    for i in range(TICKS):
        now += 1000
        ticks.append(frame(now))
    out = {"full_bytes": len(buf)}
    for name, xs in (("lp_key", keys), ("clock_tick", ticks)):
        out[name] = {"calls": median([x[0] for x in xs]), "bytes": median([x[1] for x in xs]),
                     "frames": len(xs)}
    print(json.dumps(out))


main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1")
