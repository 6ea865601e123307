# The display bench group (the table on its own chip): proxies measurable here for
# what the RP2040 shows (the unix port on x86 flatters the firmware about 100x: count what a
# frame costs in calls and bytes, and slow the panel down as the chip's is):
#
#   display_bytes_per_lp_key       bytes sent to the panel for the frame after a key of an LP
#                                  entry (median; upy_frames.py), 240x135 RGB565 and 128x64
#   display_bytes_per_clock_tick   the same for the frame after the clock's second changed
#   fb_calls_per_lp_key            framebuf primitive calls (fill_rect, text, blit...) drawing
#                                  the frame after an LP key: the Python-level work a frame
#                                  costs a board
#   fb_calls_per_clock_tick        the same for the frame after a clock tick
#   keys_lost_fast_typing          of 30 presses at 60 ms down / 60 ms up, through the real
#                                  app loop with the round running and the link syncing, the
#                                  renderer holding the loop 75 ms a whole frame, the keys
#                                  read as the Pico W reads them (upy_loop.py)
#   loop_held_max_ms               the longest the loop was held in such a run, from the first
#                                  key on (median of TYPING_RUNS runs: the shared machine's
#                                  load shows too)
#   frames_per_idle_minute         frames the app made with nobody at the keys (the round
#                                  running), from IDLE_S seconds
#   display_bytes_per_idle_s       bytes sent to the panel per second of that
#   alloc_bytes_per_idle_s         bytes allocated per second of that (64-bit port: about
#                                  twice a 32-bit board's)
import json
import os

from common import BenchError, ROOT, metric, run_upy

SIZES = ((240, 135, False), (128, 64, True))
# The targets on 240x135: the bytes of an LP key's frame under 8 KB, a clock tick's a few
# hundred, an LP key's frame in a tenth of the framebuf calls a whole-frame repaint takes
# (164), no press lost, no step holding the loop more than a few ms.
LP_KEY_BYTES = 8192
TICK_BYTES = 999
LP_KEY_CALLS = 16
HELD_MS = 10
IDLE_S = 6
TYPING_RUNS = 3
HEAP = "8m"                     # the collector stays off through the idle run's count


def _upy(script, args):
    path = ":".join((os.path.join(ROOT, "firmware"), os.path.join(ROOT, "tests", "upy"), ".frozen"))
    r = run_upy(["-X", "heapsize=" + HEAP, os.path.join(ROOT, "tests", "bench", script)]
                + [str(a) for a in args], path=path)
    if r.returncode != 0:
        raise BenchError("%s %s: %s" % (script, " ".join(map(str, args)), (r.stderr or r.stdout).strip()))
    return json.loads(r.stdout.strip().split("\n")[-1])


def bench_display(b):
    for w, h, mono in SIZES:
        f = _upy("upy_frames.py", [w, h, 1 if mono else 0])
        suffix = "" if w == 240 else "_%dx%d" % (w, h)
        note = "%dx%d %s, median of %d frames; a whole frame is %d bytes" % (
            w, h, "mono" if mono else "RGB565", f["lp_key"]["frames"], f["full_bytes"])
        yield metric("display_bytes_per_lp_key" + suffix, f["lp_key"]["bytes"], "bytes",
                     LP_KEY_BYTES if w == 240 else None, note=note)
        yield metric("display_bytes_per_clock_tick" + suffix, f["clock_tick"]["bytes"], "bytes",
                     TICK_BYTES if w == 240 else None, note="%d ticks" % f["clock_tick"]["frames"])
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
    i = _upy("upy_loop.py", ["idle", IDLE_S])
    yield metric("frames_per_idle_minute", i["frames"] * 60 // i["seconds"], "frames",
                 note="%d frames in %d s, the round running" % (i["frames"], i["seconds"]))
    yield metric("display_bytes_per_idle_s", i["bytes"] // i["seconds"], "bytes")
    yield metric("alloc_bytes_per_idle_s", i["alloc"] // i["seconds"], "bytes",
                 note="64-bit unix port; idle loop held at most %d ms" % i["held_max_ms"])
