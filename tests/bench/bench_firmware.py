# The firmware bench group (the board's memory and speed budgets), on the MicroPython unix port:
#
#   match_96k_ok            a full 75-minute match (MATCH_EVENTS events: time called, extra turn,
#                           sudden death, extra duel) played through key presses on core.ui.Ui,
#                           the journal writing every event, the clock ticking and a 128x64
#                           frame drawn every simulated second, with 96 KB of heap for the
#                           table: 1 when it ends with the planned verdict. The firmware runs
#                           from a ROMFS image (mpremote romfs build, mounted with vfs.VfsRom),
#                           bytecode in place as frozen or ROMFS code runs on a board; the
#                           unix port has no flash, so the image is read into the heap first
#                           and -X heapsize is 96k plus the image
#   match_heap_*_bytes      the same match: live heap (collected, the image left out) after
#                           import and set-up, its peak over the match, and the smallest heap
#                           beside the image the match completes in as the app runs it (no
#                           explicit gc.collect)
#   lp_entry_to_frame_ms    key press to drawn frame (Ui.key + view.build + FbRenderer.draw),
#                           median over the keys of LP entries, journal on a littlefs RAM disk
#   firmware_mpy_bytes      every firmware module, mpy-cross -O3 -march=armv6m, the generated
#                           Hangul font apart
#   font_mpy_bytes          the generated Hangul font (font_ko.py), compiled the same way
#   journal_append_ms       Journal.append (write, flush, close) on littlefs over a RAM disk
#
# The unix port is 64-bit: objects take about twice the bytes they take on an RP2040.
import json
import os
import shutil
import subprocess

from common import BenchError, MPREMOTE, ROOT, compile_mpy, metric, package_sources, run_upy
import gen_record
from duelclock_desk.deploy import not_shipped

MATCH_EVENTS = 400               # a long match: about 5 events a minute for 75 minutes
MATCH_END_MS = 4500000           # 45:00 + the 30:00 cap
MATCH_HEAP_KB = 96               # a whole match beside the firmware, in the 64-bit port
HEAP_MAX_KB = 512
HEAP_STEP_KB = 8
STABLE = 3                       # sizes above the answer that must work too
ENTRY_TARGET_MS = 2
MPY_TARGET_BYTES = 65536
FONT = os.path.join("duelclock", "font_ko.mpy")
SIZES = ((240, 135, False), (128, 64, True))
BOARDS = ("RPI_PICO_W", "ESP32_GENERIC", "ADAFRUIT_FEATHER_ESP32S3_REVERSE_TFT")


def _write_plan(path, events):
    """The key presses of simulator/player.py for `events`, in upy_match.py's format."""
    from simulator.player import plan
    with open(path, "w") as f:
        f.write(json.dumps(events[0]) + "\n")
        for t, keys in plan(events):
            f.write("%d %s\n" % (t, " ".join(keys)))


def _last_line(text):
    lines = text.strip().split("\n")
    return lines[-1] if lines else ""


def _upy_error(r):
    """The error of a failed micropython run and the module it came from (its traceback
    goes to stdout or stderr)."""
    lines = (r.stderr.strip() + "\n" + r.stdout.strip()).strip().split("\n")
    where = [x.strip() for x in lines if x.strip().startswith("File ")]
    why = lines[-1] if lines and lines[-1] else "exit %d" % r.returncode
    if where:
        why += " (in %s)" % where[-1].split('"')[1].split("/firmware/")[-1]
    return why


def _romfs_image(mpy_dir, out_dir):
    """A ROMFS image of the compiled firmware as a MicroPython board runs it (render_dio is
    the CircuitPython board's renderer), built by mpremote; its path."""
    tree = os.path.join(out_dir, "tree")
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(os.path.join(mpy_dir, "duelclock"), os.path.join(tree, "duelclock"),
                    ignore=shutil.ignore_patterns("render_dio.mpy"))
    image = os.path.join(out_dir, "firmware.romfs")
    r = subprocess.run([MPREMOTE, "romfs", "--output", image, "build", tree],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise BenchError("mpremote romfs build: " + (r.stderr or r.stdout).strip())
    return image


class MatchRun:
    """Runs upy_match.py on the compiled firmware; checks the verdict it prints."""

    def __init__(self, b):
        from simulator.build import compiled_firmware
        self.b = b
        self.path = ".frozen"
        self.image = _romfs_image(compiled_firmware(), b.path("romfs"))
        self.image_kb = -(-os.path.getsize(self.image) // 1024) + 1    # + the bytes object
        events, self.expect = gen_record.build(MATCH_EVENTS)
        self.plan = b.path("match_plan.txt")
        _write_plan(self.plan, events)

    def __call__(self, heap_kb, sample=False):
        """(output dict, None) when the match ended as planned with heap_kb beside the
        image, else (None, why)."""
        journal = self.b.path("match_journal")          # one path: the same allocations each run
        shutil.rmtree(journal, ignore_errors=True)
        r = run_upy([os.path.join(ROOT, "tests", "bench", "upy_match.py"), self.plan, journal,
                     str(MATCH_END_MS), "1" if sample else "0", self.image], path=self.path,
                    heap_kb=heap_kb + self.image_kb)
        if r.returncode != 0:
            return None, _upy_error(r)
        out = json.loads(_last_line(r.stdout))
        for k in ("result", "wins", "duels", "phase"):
            if out[k] != self.expect[k]:
                raise BenchError("the bench match ended with %s %s, planned %s" % (k, out[k], self.expect[k]))
        return out, None


def smallest_heap_kb(works, low_kb):
    """The smallest heap (a multiple of HEAP_STEP_KB, above low_kb) at which works(kb) and
    also at the STABLE sizes above it; None if HEAP_MAX_KB does not work. Fragmentation makes
    success not monotonic in the size (a MemoryError at 272k after a pass at 256k): bisect,
    then walk up past any failure just above."""
    lo = max(HEAP_STEP_KB, low_kb // HEAP_STEP_KB * HEAP_STEP_KB)     # assumed to fail
    hi = HEAP_MAX_KB
    if not works(hi):
        return None
    while hi - lo > HEAP_STEP_KB:
        mid = (lo + hi) // 2 // HEAP_STEP_KB * HEAP_STEP_KB
        if works(mid):
            hi = mid
        else:
            lo = mid
    above = 1
    while above <= STABLE and hi + above * HEAP_STEP_KB < HEAP_MAX_KB:
        if works(hi + above * HEAP_STEP_KB):
            above += 1
        else:
            hi, above = hi + (above + 1) * HEAP_STEP_KB, 1
    return hi


def upy_timing(args):
    path = ":".join((_compiled(), os.path.join(ROOT, "tests", "upy"), ".frozen"))
    r = run_upy([os.path.join(ROOT, "tests", "bench", "upy_timing.py")] + [str(a) for a in args],
                path=path)
    if r.returncode != 0:
        raise BenchError("upy_timing.py %s: %s" % (" ".join(map(str, args)), _upy_error(r)))
    return json.loads(_last_line(r.stdout))


def _compiled():
    from simulator.build import compiled_firmware
    return compiled_firmware()


def bench_firmware(b):
    # Key press to frame, the cheapest: first, so a smoke run can stop after it.
    entries = max(4, 10 * b.repeat)
    for w, h, mono in SIZES:
        t = upy_timing(["entry", w, h, 1 if mono else 0, entries])
        suffix = "" if w == 240 else "_%dx%d" % (w, h)
        yield metric("lp_entry_to_frame%s_ms" % suffix, round(t["key_us"] / 1000, 3), "ms",
                     ENTRY_TARGET_MS, note="%dx%d %s, median of %d key presses" % (
                         w, h, "mono" if mono else "RGB565", t["keys"]))
        yield metric("lp_confirm_to_frame%s_ms" % suffix, round(t["ok_us"] / 1000, 3), "ms",
                     note="the ok key alone: check, journal append on littlefs, apply, frame")

    t = upy_timing(["journal", max(20, 20 * b.repeat)])
    yield metric("journal_append_ms", round(t["append_us"] / 1000, 3), "ms",
                 note="median of %d appends (write, flush, close), littlefs on a RAM disk"
                 % max(20, 20 * b.repeat))

    mpy_dir = b.path("mpy_fw")
    sources = package_sources("duelclock")
    font = [s for s in sources if s[1] == FONT]
    # What a board ships (deploy and its manifest leave out what it never imports,
    # firmware/not_shipped.json): the largest of the boards' sets.
    shipped = {}
    for board in BOARDS:
        skip = {p[:-3] + ".mpy" for p in not_shipped(board)} | {FONT}
        mods = [s for s in sources if s[1] not in skip]
        shipped[board] = (compile_mpy(mods, mpy_dir), len(mods))
    board = max(shipped, key=lambda k: shipped[k][0])
    yield metric("firmware_mpy_bytes", shipped[board][0], "bytes", MPY_TARGET_BYTES,
                 note="mpy-cross -O3 -march=armv6m as deploy ships them to %s, the largest, "
                 "%d modules, font apart (%s; every module: %d)" % (
                     board, shipped[board][1],
                     ", ".join("%s %d" % (k, shipped[k][0]) for k in BOARDS if k != board),
                     compile_mpy([s for s in sources if s[1] != FONT], mpy_dir)))
    yield metric("font_mpy_bytes", compile_mpy(font, mpy_dir), "bytes")

    match = MatchRun(b)
    out, why = match(MATCH_HEAP_KB)
    yield metric("match_96k_ok", 1 if out else 0, "bool", 1, exact=True,
                 note=None if out else "at -X heapsize=%dk: %s" % (MATCH_HEAP_KB, why))
    out, why = match(HEAP_MAX_KB, sample=True)
    if out is None:
        raise BenchError("the bench match failed even with %d KB: %s" % (HEAP_MAX_KB, why))
    note = "%d events, %d frames, firmware in a ROMFS image of %d bytes (left out)" % (
        MATCH_EVENTS, out["frames"], out["image"])
    yield metric("match_heap_base_bytes", out["base"], "bytes",
                 note="live after import and set-up, 128x64 framebuf included")
    yield metric("match_heap_peak_bytes", out["peak"], "bytes",
                 note=note + ", live (collected) after each frame")
    yield metric("match_heap_growth_bytes", out["peak"] - out["base"], "bytes",
                 note="peak - base: what the match adds to the loaded firmware")
    low = out["peak"] // 1024
    min_kb = smallest_heap_kb(lambda kb: match(kb)[0] is not None, low)
    yield metric("match_heap_min_bytes", min_kb and min_kb * 1024, "bytes",
                 note="smallest heap beside the image (%d KB steps, bisection from the live "
                 "peak, the %d sizes above passing too) the match completes in without "
                 "explicit gc.collect, as the app runs it" % (HEAP_STEP_KB, STABLE))
