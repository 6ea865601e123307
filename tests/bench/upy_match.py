# A whole match on a table, under the MicroPython unix port, for the firmware bench's heap
# figures (tests/bench/bench_firmware.py writes the plan):
#
#   micropython upy_match.py PLAN JOURNAL_DIR END_MS SAMPLE [ROMFS_IMAGE]
#
# PLAN: the round_start event (JSON) on the first line, then one line per step,
# "T_MS intent intent ...", in time order: the key presses of simulator/player.py.
# What the table's app does, without its tasks: core.ui.Ui takes the keys, the journal
# (duelclock.journal on JOURNAL_DIR) takes every event, and every simulated second the clock
# ticks and a frame is built (core.view) and drawn by render_fb on a 128x64 mono framebuf
# (the ESP32 board's OLED). SAMPLE 1: after each frame, collect and sample gc.mem_alloc().
# Prints one JSON line: the verdict, the live heap before the match (`base`) and its peak
# (bytes, 0 unless SAMPLE).
#
# ROMFS_IMAGE (mpremote romfs build of the compiled firmware): mounted with vfs.VfsRom and
# imported from, so the bytecode runs in place as it does frozen or in a board's ROMFS
# partition, not copied into the heap as from .mpy files. The unix port has no flash to map:
# the image is read into the heap first, one block, and `base` and `peak` leave it out
# (`image` says how much it took), so -X heapsize=IMAGE+96k leaves 96 KB for the table.
import gc
import json
import sys
import vfs

image_alloc = 0
if len(sys.argv) > 5:
    gc.collect()
    _before = gc.mem_alloc()
    with open(sys.argv[5], "rb") as _f:
        _image = _f.read()
    vfs.mount(vfs.VfsRom(_image), "/rom")
    sys.path.insert(0, "/rom")
    image_alloc = gc.mem_alloc() - _before

import framebuf  # noqa: E402

from duelclock.core.sign import pin_hash  # noqa: E402
from duelclock.core.ui import Ui  # noqa: E402
from duelclock.core.view import build  # noqa: E402
from duelclock.journal import Journal  # noqa: E402
from duelclock.render_fb import FbRenderer  # noqa: E402

W, H = 128, 64
# simulator/player.py JUDGE_PINS, stored as deploy stores them (the real rounds: the bench
# pays a board's PIN check)
PINS = {"floor": pin_hash("1111", b"bench-salt"), "head": pin_hash("2222", b"bench-salt")}


def main(plan_path, root, end_ms, sample):
    buf = bytearray(W * ((H + 7) // 8))
    r = FbRenderer(framebuf.FrameBuffer(buf, W, H, framebuf.MONO_VLSB), W, H, True)
    journal = Journal(root)

    def save(ev):
        if ev["ev"] == "round_start":
            journal.start_match(ev)
        else:
            journal.append(ev)

    ui = Ui(1, save, PINS)
    gc.collect()
    base = gc.mem_alloc() - image_alloc        # the code (.mpy: bytecode in RAM) and buffers
    peak = 0
    frames = 0
    flash_until = 0
    f = open(plan_path)
    try:
        start = json.loads(f.readline())
        now = start["t"]
        ui.start_round(start)
        step = f.readline().split()
        while now <= end_ms:
            while step and int(step[0]) <= now:
                t = int(step[0])
                for intent in step[1:]:
                    ui.key(intent, t)
                step = f.readline().split()
            ui.tick(now)
            for kind, arg in ui.alerts:
                if kind == "flash":
                    flash_until = now + arg
            ui.alerts = []
            r.draw(build(ui, now, 1, None, now < flash_until and (now // 250) % 2 == 0))
            frames += 1
            if sample:
                gc.collect()
                used = gc.mem_alloc() - image_alloc
                if used > peak:
                    peak = used
            now += 1000
    finally:
        f.close()
    v = ui.match.verdict()
    print(json.dumps({"result": v["result"], "wins": v["wins"], "duels": v["duels"],
                      "phase": v["phase"], "frames": frames, "base": base, "peak": peak,
                      "image": image_alloc}))


main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1")
