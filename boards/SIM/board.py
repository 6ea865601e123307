# The simulator's table: the MicroPython unix port with simulated hardware. Wiring only: the
# exported names are the same on every board (boards/README.md); the simulator wires this
# one through environment variables, read at import:
#
#   DUELCLOCK_SIM_SIZE    WxH, or WxH:mono / WxH:rgb; default 240x135. Up to 128 pixels wide
#                         it is mono unless told (128x64 is the ESP32 board's OLED).
#   DUELCLOCK_SIM_FB      a file that each show() replaces (write, then rename) with the raw
#                         frame, no header: RGB565 high byte first as an ST7789 receives it,
#                         or MONO_VLSB as an SSD1306 receives it. Unset: frames are counted.
#   DUELCLOCK_SIM_KEYS    where key presses come from: lines of intent names (core/keys.py
#                         INTENTS; other lines are dropped), read without blocking at each
#                         scan. socket://HOST:PORT (connects to the simulator), fd:N (an
#                         inherited pipe) or a path (a FIFO, a file). Unset: only push().
#   DUELCLOCK_SIM_SERIAL  the desk link: socket://HOST:PORT, fd:N or a path (a pty).
#                         Unset: this process's stdin and stdout, as USB CDC on a board.
#   DUELCLOCK_SIM_FS      the directory for the journal; default: the current directory.
#   DUELCLOCK_SIM_FLASH   instead: a file-backed flash image (littlefs, as on a board),
#                         made on first use and mounted at /flash; it survives the process
#                         being killed mid-write, which is the simulator's power cut.
#   DUELCLOCK_SIM_CONFIG  a host file copied to the flash's duelclock.json at boot (what
#                         `duelclock deploy` writes on a real board)
#   DUELCLOCK_SIM_SPEED   how much faster than real time the table's clock runs (default 1;
#                         the desk runs at the same speed: duelclock desk --speed)
#   DUELCLOCK_SIM_PPM     the table crystal's error in parts per million (default 0)
#   DUELCLOCK_SIM_HELD    keys held at power-on, comma-separated (MAINTENANCE_KEYS: a, b),
#                         through core/keys.py as a Pico's keys until a "release" key line
#
# Keys: the simulator sends intents, so every intent is its own key (short only) and `keys`
# passes them through; push(intent) injects one from a script in this process.
# Buzzer, LED: counted (beeps, flashes). Battery: not measured.
# unique_id(): the unix port has no machine.unique_id(); the simulated chip's id is 8 bytes
# of the sha256 of its flash image's path (or its FS folder), so one image is one board.
import os
import select
import socket
import sys

import framebuf
import time

from duelclock.core.keys import INTENTS, EdgeRing, Keys
from duelclock.drivers.duplex import Duplex

BOARD = "SIM"
_size, _, _kind = (os.getenv("DUELCLOCK_SIM_SIZE") or "240x135").partition(":")
WIDTH, HEIGHT = [int(n) for n in _size.split("x")]
mono = _kind == "mono" if _kind else WIDTH <= 128
renderer_kind = "fb"
HAS_WIFI = True                         # the host's network: MQTT works as over Wi-Fi
FLASH_BLOCK_BYTES = 4096                # an RP2040's erase block
FLASH_BLOCKS = 256                      # 1 MB, what a Pico W gives its filesystem


class _FileDisk:
    """A flash chip in a host file, for os.VfsLfs2. Each block write goes to the file at
    once, so killing the process leaves the image as a power cut leaves a chip."""

    def __init__(self, path, blocks):
        try:
            self.f = open(path, "r+b")
        except OSError:
            self.f = open(path, "w+b")
            erased = b"\xff" * FLASH_BLOCK_BYTES
            for _ in range(blocks):
                self.f.write(erased)
            self.f.flush()
        self.blocks = blocks

    def readblocks(self, block, buf, offset=0):
        self.f.seek(block * FLASH_BLOCK_BYTES + offset)
        self.f.readinto(buf)

    def writeblocks(self, block, buf, offset=0):
        self.f.seek(block * FLASH_BLOCK_BYTES + offset)
        self.f.write(buf)
        self.f.flush()

    def ioctl(self, op, arg):
        if op == 4:                     # block count
            return self.blocks
        if op == 5:                     # block size
            return FLASH_BLOCK_BYTES
        if op == 6:                     # erase: littlefs needs no real erase here
            return 0
        return None


def _mount_flash(path):
    disk = _FileDisk(path, FLASH_BLOCKS)
    try:
        vfs = os.VfsLfs2(disk, progsize=256)
    except OSError:
        os.VfsLfs2.mkfs(disk, progsize=256)
        vfs = os.VfsLfs2(disk, progsize=256)
    os.mount(vfs, "/flash")
    return "/flash/"


def _seed_config(prefix, path):
    with open(path, "rb") as f:
        data = f.read()
    with open(prefix + "duelclock.json", "wb") as f:
        f.write(data)


if os.getenv("DUELCLOCK_SIM_FLASH"):
    FS_PREFIX = _mount_flash(os.getenv("DUELCLOCK_SIM_FLASH"))
else:
    FS_PREFIX = (os.getenv("DUELCLOCK_SIM_FS") or ".").rstrip("/") + "/"
if os.getenv("DUELCLOCK_SIM_CONFIG"):
    _seed_config(FS_PREFIX, os.getenv("DUELCLOCK_SIM_CONFIG"))


def _open(spec, mode):
    if spec.startswith("socket://"):
        host, port = spec[9:].rsplit(":", 1)
        s = socket.socket()
        s.connect(socket.getaddrinfo(host, int(port))[0][-1])
        s.setsockopt(6, 1, 1)           # TCP_NODELAY: no Nagle wait on small writes
        return s
    if spec.startswith("fd:"):
        return open(int(spec[3:]), mode)
    return open(spec, mode)


class _Screen:
    def __init__(self, width, height, mono, path):
        if mono:
            self.buf = bytearray(width * ((height + 7) // 8))
            self.fb = framebuf.FrameBuffer(self.buf, width, height, framebuf.MONO_VLSB)
        else:
            self.buf = bytearray(width * height * 2)
            self.fb = framebuf.FrameBuffer(self.buf, width, height, framebuf.RGB565)
        self.mono = mono
        self.swap = not mono            # RGB565 high byte first, as the ST7789 board's frame
        self.path = path
        self.level = 1                  # backlight, as last set
        self.frames = 0

    def show(self, windows=None):
        """The whole frame to the file whatever changed (the simulator shows whole frames)."""
        self.frames += 1
        if self.path:
            tmp = self.path + ".tmp"
            f = open(tmp, "wb")
            try:
                f.write(self.buf)
            finally:
                f.close()
            os.rename(tmp, self.path)

    def backlight(self, level):
        self.level = max(0, min(1, level))


display = _Screen(WIDTH, HEIGHT, mono, os.getenv("DUELCLOCK_SIM_FB"))

KEYMAP = {}
for _intent in INTENTS:
    KEYMAP[_intent] = (_intent, None, None)


class _HeldKeys:
    """The keys held at power-on (DUELCLOCK_SIM_HELD) as a board's physical keys: the real
    core.keys machine with the Pico's a and b (long: menu, turn), its levels fed as a
    board's interrupt would, held until a "release" line comes."""

    def __init__(self, names):
        self.names = sorted(names)
        self.ring = EdgeRing(time.ticks_ms, time.ticks_diff)
        self.keys = Keys(dict((n, (n, {"a": "menu", "b": "turn"}.get(n), None))
                              for n in self.names), self.ring)
        self.ring.sample(time.ticks_ms(), (1 << len(self.names)) - 1)
        self.released = False

    def disarm(self):
        self.keys.disarm()

    def release(self):
        self.ring.sample(time.ticks_ms(), 0)
        self.released = True


class _VirtualKeys:
    waiting = None                      # core.keys.Keys.waiting: a virtual key is never held

    def __init__(self, stream):
        self.held = _HeldKeys(_held_at_boot) if _held_at_boot else None
        self.stream = stream
        self.poller = None
        if stream is not None:
            self.poller = select.poll()
            self.poller.register(stream, select.POLLIN)
        self.line = b""
        self.queue = []
        self.out = []

    def push(self, intent):
        self.queue.append(intent)

    def disarm(self):
        """As core.keys.Keys.disarm: the held keys, and keys pressed while they are held,
        give nothing until they are let go."""
        if self.held is not None:
            self.held.disarm()

    def pressed(self):
        """The keys held at power-on (virtual keys are never held later)."""
        return _held_at_boot

    def scan(self, now_ms):
        """The intents since the last scan (a reused list, as core.keys.Keys.scan)."""
        out = self.out
        while out:
            out.pop()
        # Once the held keys are let go, what comes after waits in the stream until their
        # release is debounced (keys pressed while one is held count for nothing).
        while self.poller is not None and self.poller.poll(0) and (
                self.held is None or self.held.keys.armed or not self.held.released):
            c = self.stream.read(1)
            if not c:                   # end of file: nothing more for now
                break
            if c != b"\n":
                self.line += c
                continue
            name = self.line.decode().strip()
            self.line = b""
            if name == "release" and self.held is not None:
                self.held.release()
            elif name in KEYMAP:
                self.queue.append(name)
        if self.held is not None:
            for intent in self.held.keys.scan(now_ms):
                out.append(intent)
            if not self.held.keys.armed:        # pressed while the held keys are down
                while self.queue:
                    self.queue.pop()
        while self.queue:
            out.append(self.queue.pop(0))
        return out


_held_at_boot = [k for k in (os.getenv("DUELCLOCK_SIM_HELD") or "").split(",") if k]
MAINTENANCE_KEYS = ("a", "b")
reset = None                            # the unix port: a power-on is the simulator's business
_keys_from = os.getenv("DUELCLOCK_SIM_KEYS")
keys = _VirtualKeys(_open(_keys_from, "rb") if _keys_from else None)


class _Buzzer:
    def __init__(self):
        self.beeps = 0

    def beep(self, count):
        self.beeps += count


class _Led:
    def __init__(self):
        self.on = False
        self.flashes = 0

    def __call__(self, on):
        if on and not self.on:
            self.flashes += 1
        self.on = bool(on)


buzzer = _Buzzer()
led = _Led()
battery_pct = None


def open_serial():
    """A socket as it is (the link uses recv/send); files and stdio through Duplex, whose
    read(n) does not wait for n bytes."""
    spec = os.getenv("DUELCLOCK_SIM_SERIAL")
    if not spec:
        return Duplex(sys.stdin.buffer, sys.stdout.buffer)
    s = _open(spec, "r+b")
    return s if spec.startswith("socket://") else Duplex(s, s)


class _LocalClock:
    """The table's ticks, unwrapped: real us x speed x (1 + ppm / 1e6), from 0 at boot, in
    ms; sub_us() the us past the ms the last call gave (as app.unwrap on a board). A crystal
    off by `ppm` is what the desk's clock sync has to find and follow."""

    def __init__(self, speed, ppm):
        self.rate = speed * (1 + ppm / 1e6) / 1000
        self.last = time.ticks_us()
        self.real_us = 0
        self.us = 0

    def __call__(self):
        now = time.ticks_us()
        self.real_us += time.ticks_diff(now, self.last)
        self.last = now
        ms = self.real_us * self.rate
        self.us = int((ms - int(ms)) * 1000)
        return int(ms)

    def sub_us(self):
        return self.us


LOCAL_PER_REAL = float(os.getenv("DUELCLOCK_SIM_SPEED") or 1)
local_ms = _LocalClock(LOCAL_PER_REAL, float(os.getenv("DUELCLOCK_SIM_PPM") or 0))
sub_us = local_ms.sub_us


def unique_id():
    import hashlib
    where = os.getenv("DUELCLOCK_SIM_FLASH") or FS_PREFIX
    return hashlib.sha256(where.encode()).digest()[:8]


def connect_wifi(ssid, password, timeout_s=20):
    """The host's network is up already."""
    return True
