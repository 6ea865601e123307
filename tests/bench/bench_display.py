# The display bench group (the table on its own chip): proxies measurable here for
# what the RP2040 shows (the unix port on x86 flatters the firmware about 100x: count what
# the work costs in presents, bytes and allocations, and slow the panel down as the chip's
# is). The figures on 240x135 come from the whole firmware (app.Table's keys, frame and
# link tasks, the session, the journal on a RAM disk, a desk answering on the link) with a
# duel on, so both the round clock and the turn clock run (upy_loop.py duel):
#
#   presents_per_idle_minute       frames put on the glass (present() calls) per minute
#                                  with nobody at the keys
#   display_bytes_per_clock_tick   bytes sent to the panel per second of that (each second
#                                  is one tick of the clocks), 240x135 RGB565: pixels and
#                                  each window's commands (11 bytes)
#   alloc_bytes_per_idle_s         bytes allocated per second of that, the collector off
#                                  (64-bit port: about twice a 32-bit board's)
#   display_bytes_per_lp_key       bytes sent for the frame after each key of an LP entry
#                                  (X: +100, a press every 300 ms; median)
#   alloc_bytes_per_lp_key         bytes allocated per such key: the span of the keys less
#                                  a span as long in the same screen with no key, the link
#                                  task's allocations (a sync exchange) left out of both
#   keys_lost_fast_typing          of 30 presses at 60 ms down / 60 ms up, through the real
#                                  app loop with the round running and the link syncing, the
#                                  renderer holding the loop 75 ms a whole frame, the keys
#                                  read as the Pico W reads them (upy_loop.py typing)
#   loop_held_max_ms               the longest the loop was held in such a run, from the first
#                                  key on (median of TYPING_RUNS runs: the shared machine's
#                                  load shows too)
#
# And from the core's Ui and the renderer alone (upy_frames.py), per frame:
#   fb_calls_per_lp_key            framebuf primitive calls (fill_rect, text, blit...) drawing
#                                  the frame after an LP key: the Python-level work a frame
#                                  costs a board; 240x135 and 128x64
#   fb_calls_per_clock_tick        the same for the frame after a clock tick
#   display_bytes_per_lp_key_128x64      bytes sent to the panel (128x64 mono: a byte per
#                                        column of each 8-row page) for an LP key's frame
#   display_bytes_per_clock_tick_128x64  the same for a clock tick's
import json
import os

from common import BenchError, ROOT, metric, run_upy

SIZES = ((240, 135, False), (128, 64, True))
# The targets on 240x135: the bytes of an LP key's frame under 8 KB, a clock tick's a
# kilobyte (the segments of the digits that changed), one present a second at idle, a few
# allocations at most per second and per key (none in steady state), an LP key's frame in
# a tenth of the framebuf calls a whole-frame repaint takes (164), no press lost, no step
# holding the loop more than a few ms.
LP_KEY_BYTES = 8192
TICK_BYTES = 1024
PRESENTS_PER_MIN = 62
IDLE_ALLOC_BYTES = 2048
LP_KEY_ALLOC_BYTES = 512
LP_KEY_CALLS = 16
HELD_MS = 10
IDLE_S = 60                     # four to six sync exchanges (10.5-14 s apart) fall in it
LP_KEYS = 10
TYPING_RUNS = 3
HEAP = "8m"                     # the collector stays off through the measured spans


def _upy(script, args):
    path = ":".join((os.path.join(ROOT, "firmware"), os.path.join(ROOT, "tests", "upy"), ".frozen"))
    r = run_upy(["-X", "heapsize=" + HEAP, os.path.join(ROOT, "tests", "bench", script)]
                + [str(a) for a in args], path=path)
    if r.returncode != 0:
        raise BenchError("%s %s: %s" % (script, " ".join(map(str, args)), (r.stderr or r.stdout).strip()))
    return json.loads(r.stdout.strip().split("\n")[-1])


def duel_metrics(d):
    """The whole-firmware figures from one `upy_loop.py duel` run's output."""
    idle, still, keys = d["idle"], d["entry_idle"], d["keys"]
    n = d["registered"]
    if n != d["pressed"] or not d["key_bytes"]:
        raise BenchError("upy_loop.py duel: %d of %d keys registered, %d key frames" % (
            n, d["pressed"], len(d["key_bytes"])))
    yield metric("presents_per_idle_minute", round(idle["presents"] * 60000 / idle["ms"], 1),
                 "presents", PRESENTS_PER_MIN,
                 note="%d presents in %d ms, a duel on" % (idle["presents"], idle["ms"]))
    yield metric("display_bytes_per_clock_tick", round(idle["bytes"] * 1000 / idle["ms"]), "bytes",
                 TICK_BYTES, note="%d bytes in %d ms" % (idle["bytes"], idle["ms"]))
    yield metric("alloc_bytes_per_idle_s", round(idle["alloc"] * 1000 / idle["ms"]), "bytes",
                 IDLE_ALLOC_BYTES, note="%d bytes in %d ms" % (idle["alloc"], idle["ms"]))
    kb = sorted(d["key_bytes"])
    yield metric("display_bytes_per_lp_key", kb[len(kb) // 2], "bytes", LP_KEY_BYTES,
                 note="median of %d key frames, from %d to %d bytes; a whole frame is 64800"
                 % (len(kb), kb[0], kb[-1]))
    # the link task's own work (a sync exchange falls in one span or the other) left out
    ka, sa = keys["alloc"] - keys["link_alloc"], still["alloc"] - still["link_alloc"]
    base = sa * keys["ms"] / still["ms"]
    yield metric("alloc_bytes_per_lp_key", max(0, round((ka - base) / n)), "bytes",
                 LP_KEY_ALLOC_BYTES, note="%d bytes in %d ms of %d keys, %d in %d ms without, "
                 "the link task's left out" % (ka, keys["ms"], n, sa, still["ms"]))


def bench_display(b):
    yield from duel_metrics(_upy("upy_loop.py", ["duel", IDLE_S, LP_KEYS]))
    for w, h, mono in SIZES:
        f = _upy("upy_frames.py", [w, h, 1 if mono else 0])
        suffix = "" if w == 240 else "_%dx%d" % (w, h)
        note = "%dx%d %s, median of %d frames" % (w, h, "mono" if mono else "RGB565",
                                                  f["lp_key"]["frames"])
        if mono:
            yield metric("display_bytes_per_lp_key" + suffix, f["lp_key"]["bytes"], "bytes",
                         note=note + "; a whole frame is %d bytes" % f["full_bytes"])
            yield metric("display_bytes_per_clock_tick" + suffix, f["clock_tick"]["bytes"], "bytes",
                         note="%d ticks" % f["clock_tick"]["frames"])
        yield metric("fb_calls_per_lp_key" + suffix, f["lp_key"]["calls"], "calls",
                     LP_KEY_CALLS if w == 240 else None, note=note)
        yield metric("fb_calls_per_clock_tick" + suffix, f["clock_tick"]["calls"], "calls")
    runs = [_upy("upy_loop.py", ["typing"]) for _ in range(TYPING_RUNS)]
    t = runs[0]
    yield metric("keys_lost_fast_typing", max(r["pressed"] - r["registered"] for r in runs), "presses",
                 0, exact=True,
                 note="the most of %d runs: %d presses of X (+100) at 60/60 ms in LP entry, %d "
                 "frames (%d windows), %d syncs, %d edges the key ring had no room for" % (
                     TYPING_RUNS, t["pressed"], t["frames"], t["shows"], t["syncs"], t["ring_lost"]))
    held = sorted(r["held_max_ms"] for r in runs)
    yield metric("loop_held_max_ms", held[len(held) // 2], "ms", HELD_MS,
                 note="median of %d runs' latest wake of a 1 ms sleep from the first key on (%s: the "
                 "machine's load shows here too); painting holds the loop 75 ms a whole frame"
                 % (TYPING_RUNS, held))
