# The table's real app loop (duelclock.app: its Table and its keys, frame and link tasks)
# under the MicroPython unix port, on a board whose display is as slow as the chip's, for
# the display bench (tests/bench/bench_display.py). MICROPYPATH: the firmware, tests/upy,
# .frozen.
#
#   micropython upy_loop.py typing     keys at fast-typing speed: the Pico W's keys (A, B, X,
#                                      Y; core.keys.Keys) pressed by a schedule of levels in
#                                      time; A opens LP entry, X (+100) 60 ms down / 60 ms up
#                                      ten times, A confirms; three times. Read as the Pico
#                                      W's board.py reads them: a timer interrupt every
#                                      KEY_SAMPLE_MS into an EdgeRing; here the interrupt is a
#                                      thread (the unix port has no machine.Timer), which
#                                      runs while the loop is held as an interrupt would
#   micropython upy_loop.py duel S K   a duel on (A goes first: both clocks run), then S
#                                      seconds with nobody at the keys at home; then LP
#                                      entry for A: K*KEY_EVERY_MS ms with nobody at the
#                                      keys, then K presses of X (+100), one every
#                                      KEY_EVERY_MS, for as long
#
# Both with the round running (the desk's round command at boot), the clock ticking and the
# link syncing (a desk on the link answers every sync request at once, with the us stamps
# a Pico W asks for), the journal on a RAM disk. duel measures the sync in its steady state: exchanges about MAX_PERIOD_MS apart
# (core/clock.py), as minutes after boot. The renderer stands
# in for the chip's: painting a window holds the loop DELAY_FULL_MS for a whole 240x135
# frame (what the emulated RP2040 shows for building, drawing and sending one) and the same
# per pixel for part of one. A task that asks to wake every ms measures the longest time the loop is held.
# Prints one JSON line: typing: {"pressed", "registered", "a_pressed", "a_shown" (presents
# while a held A was shown: its press before its release), "held_max_ms", "frames"};
# duel: {"idle": {"presents", "bytes", "alloc", "ms"}, "entry_idle": {...}, "keys": {...},
# "key_bytes": [bytes of each frame that followed a key], "registered", "held_max_ms"}
# (presents: present() calls with windows; alloc: bytes allocated, the collector off
# through each span).
import _thread
import asyncio
import gc
import json
import sys
import time

from ramdisk import RAMDisk
from duelclock import app
from duelclock.core.clock import BURST, FIRST, SHIFTS
from duelclock.core.keys import EdgeRing, Keys, buttons_mask
from duelclock.core.sign import table_key
from duelclock.core.wire import Encoder

KEY = b"bench-event-key-0123456789abcdef"
TBL = 7
W, H = 240, 135
DELAY_FULL_MS = 75
FULL_BYTES = W * H * 2
WINDOW_BYTES = 11               # a window's commands (drivers/st7789.py): CASET, RASET and
                                # RAMWR, and the 8 bytes of its columns and rows
KEYMAP = {"A": ("a", "menu", None), "B": ("b", "turn", None), "X": ("up", None, "up_fast"),
          "Y": ("down", None, "down_fast"), "X+Y": ("back", "undo", None)}
BURSTS = 3
PRESSES = 10
TYPE_DOWN_MS = 60
TYPE_UP_MS = 60
SLOW_MS = 200                   # A: down and up this long (opens and confirms the entry)
KEY_SAMPLE_MS = 5               # as boards/RPI_PICO_W
KEY_EVERY_MS = 300              # duel: an LP key this often (TYPE_DOWN_MS down)
SETTLE_MS = 1000                # duel: after a screen change, before a span is measured
IDLE_SETTLE_MS = 3000           # duel: the events of the duel's start sent (they linger 2 s)


class Clock:
    """The board's ms since boot (unwrapped), as app.unwrap gives it."""

    def __init__(self):
        self.t0 = time.ticks_ms()

    def __call__(self):
        return time.ticks_diff(time.ticks_ms(), self.t0)


class Panel:
    """A 240x135 RGB565 display; counts the bytes and windows sent (`shows`), the
    presents (show calls) and the frames (a plan with windows)."""
    swap = True

    def __init__(self):
        import framebuf
        self.buf = bytearray(FULL_BYTES)
        self.fb = framebuf.FrameBuffer(self.buf, W, H, framebuf.RGB565)
        self.frames = 0
        self.shows = 0
        self.presents = 0
        self.sent = 0

    def show(self, windows):
        self.presents += 1
        n = 0
        for x, y, w, h in windows:
            n += WINDOW_BYTES + 2 * w * h
        self.shows += len(windows)
        self.sent += n

    def backlight(self, level):
        pass


class Desk:
    """The link: the round command once the table says hello, an answer to every sync
    request as soon as it is sent (desk time = the table's clock), an ack to every record.
    `alloc`: the bytes its own answers allocated (a desk's, on another machine: the spans
    leave them out)."""

    def __init__(self, clock):
        self.clock = clock
        self.enc = Encoder(KEY, 1)
        self.rx = b""
        self.up = True
        self.syncs = 0
        self.started = False
        self.alloc = 0

    def send(self, line, kind):
        a0 = gc.mem_alloc()
        self._answer(line)
        self.alloc += gc.mem_alloc() - a0
        return True

    def poll(self):
        out = self.rx
        self.rx = b""
        return out

    def _answer(self, line):
        msg = json.loads(line)
        if msg["k"] == "hello" and not self.started:      # one round (hello again: the same)
            self.started = True
            self.rx += self.enc.build("round", {"round": 1, "kind": "swiss", "start_ms": self.clock(),
                                                "limit_s": 2700, "cap_s": 1800, "extra_turns": 1,
                                                "seating": False}, TBL)
        elif msg["k"] == "record":                        # held: as the desk, an ack
            self.rx += self.enc.build("ack", {"round": msg["round"],
                                              "events": msg["first"] + len(msg["events"])}, TBL)
        elif msg["k"] == "sync":
            t = self.clock()
            self.syncs += 1
            reply = {"t1": msg["t1"], "t2": t, "t3": t, "re": msg["seq"]}
            if msg.get("us"):                   # the table stamps us (as a Pico W does)
                reply["t2u"] = reply["t3u"] = 0
            self.rx += self.enc.build("sync", reply, TBL)


class Fingers:
    """Key levels from a schedule of presses: (down_ms, up_ms, key) in board ms."""

    def __init__(self, clock):
        self.clock = clock
        self.presses = []

    def press(self, at_ms, down_ms, key):
        self.presses.append((at_ms, at_ms + down_ms, key))
        return at_ms + down_ms

    def level(self, key):
        now = self.clock()
        for t0, t1, k in self.presses:
            if k == key and t0 <= now < t1:
                return 1
        return 0

    def end_ms(self):
        return max(p[1] for p in self.presses)


class Board:
    BOARD = "BENCH"
    WIDTH = W
    HEIGHT = H
    mono = False
    renderer_kind = "fb"
    buzzer = None
    led = None
    battery_pct = None

    def __init__(self, clock, fingers):
        self.display = Panel()
        ring = EdgeRing(time.ticks_ms, time.ticks_diff)
        self.keys = Keys(KEYMAP, ring)
        buttons = tuple(((lambda k=k: fingers.level(k)), 1) for k in self.keys.names[:self.keys.n_phys])
        self.sampling = True

        def timer():
            while self.sampling:
                ring.sample(time.ticks_ms(), buttons_mask(buttons))
                time.sleep_ms(KEY_SAMPLE_MS)
        _thread.start_new_thread(timer, ())


def table(clock, fingers):
    disk = RAMDisk(32)                  # 128 KB of flash: the journal of a short match
    disk.mount("/flash", format=True)
    with open("/flash/duelclock.json", "w") as f:
        f.write(json.dumps({"table": TBL, "key": "".join("%02x" % b for b in table_key(KEY, TBL))}))
    board = Board(clock, fingers)
    desk = Desk(clock)
    t = app.Table(board, app.load_config("/flash"), desk, clock, "/flash",
                  lambda: time.ticks_us() % 1000)        # us stamps, as app.unwrap's

    return board, desk, t


async def watch(held, since=None):
    """How late a 1 ms sleep wakes: the longest time anything held the loop (from
    since() on, when given)."""
    while True:
        t0 = time.ticks_ms()
        await asyncio.sleep_ms(1)
        late = time.ticks_diff(time.ticks_ms(), t0) - 1
        if late > held[0] and (since is None or since()):
            held[0] = late


def renderer_of(board):
    """The app's renderer and present, its plans counted (a frame: a plan with windows)
    and its painting as slow as the chip's."""
    renderer, present = app.make_renderer(board)
    plan = renderer.plan
    paint = renderer.paint

    def counted(screen):
        windows = plan(screen)
        if windows:
            board.display.frames += 1
        return windows

    def slow(window):
        paint(window)
        time.sleep_ms(DELAY_FULL_MS * window[2] * window[3] // (W * H))
    renderer.plan = counted
    renderer.paint = slow
    return renderer, present


async def run(board, t, screen, until, held, since=None):
    renderer, present = screen
    asyncio.create_task(app.screen_task(t, board.keys, renderer, present))
    asyncio.create_task(app.link_task(t))
    asyncio.create_task(watch(held, since))
    while not until():
        await asyncio.sleep_ms(50)


def typing():
    clock = Clock()
    fingers = Fingers(clock)
    board, desk, t = table(clock, fingers)
    got = []
    key = t.key

    def counted(intent):
        got.append(intent)
        key(intent)
    t.key = counted
    hints = [0]                         # presents made while a held A was shown (Ui.pressing)
    show = board.display.show

    def showing(windows):
        if t.ui.pressing is not None:
            hints[0] += 1
        show(windows)
    board.display.show = showing
    at = 1500                           # the round has started and synced by then
    at = fingers.press(at, SLOW_MS, "A") + SLOW_MS        # A: who goes first
    at = fingers.press(at, SLOW_MS, "A") + SLOW_MS        # A goes first
    for _ in range(BURSTS):
        at = fingers.press(at, SLOW_MS, "A") + SLOW_MS    # LP entry for A
        for _ in range(PRESSES):
            at = fingers.press(at, TYPE_DOWN_MS, "X") + TYPE_UP_MS
        at = fingers.press(at + 100, SLOW_MS, "A") + SLOW_MS     # confirm
    end = fingers.end_ms() + 500
    held = [0]
    typing_from = 1500
    asyncio.run(run(board, t, renderer_of(board), lambda: clock() > end, held,
                    lambda: clock() >= typing_from))     # the round's start (a new journal file) before
    board.sampling = False
    if desk.syncs == 0 or t.ui.match is None:
        raise SystemExit("no round or no sync: syncs %d" % desk.syncs)
    print(json.dumps({"pressed": BURSTS * PRESSES, "registered": got.count("up"),
                      "a_pressed": 2 + 2 * BURSTS, "a_shown": hints[0],
                      "lp_a": t.ui.match.lp["A"], "held_max_ms": held[0], "ring_lost": board.keys.ring.lost,
                      "frames": board.display.frames, "shows": board.display.shows,
                      "syncs": desk.syncs}))


class Span:
    """What the app did between start() and end(): presents, bytes sent, bytes allocated
    (the collector off meanwhile; the desk's answers left out) and those of them the link
    task's session calls allocated (link_alloc), ms."""

    def __init__(self, display, clock, desk, link):
        self.d = display
        self.clock = clock
        self.desk = desk
        self.link = link

    def start(self):
        gc.collect()
        gc.disable()
        self.t0 = self.clock()
        self.p0 = self.d.presents
        self.b0 = self.d.sent
        self.l0 = self.link[0]
        self.a0 = gc.mem_alloc() - self.desk.alloc

    def end(self):
        alloc = gc.mem_alloc() - self.desk.alloc - self.a0
        gc.enable()
        return {"presents": self.d.presents - self.p0, "bytes": self.d.sent - self.b0,
                "alloc": alloc, "link_alloc": self.link[0] - self.l0, "ms": self.clock() - self.t0}


def counted_link(session, link, desk):
    """session.feed and session.tick, what they allocate (less the desk's answers) added
    to link[0]."""
    feed, tick = session.feed, session.tick

    def fed(data, local_ms, sub_us=None):
        a0 = gc.mem_alloc()
        out = feed(data, local_ms, sub_us)
        link[0] += gc.mem_alloc() - a0
        return out

    def ticked(now, sub_us=None):
        a0 = gc.mem_alloc() - desk.alloc
        tick(now, sub_us)
        link[0] += gc.mem_alloc() - desk.alloc - a0
    session.feed, session.tick = fed, ticked


def duel(idle_s, keys):
    clock = Clock()
    fingers = Fingers(clock)
    at = fingers.press(1500, SLOW_MS, "A") + SLOW_MS          # who goes first
    at = fingers.press(at, SLOW_MS, "A") + SLOW_MS            # A: both clocks run
    idle_at = at + IDLE_SETTLE_MS
    entry_at = idle_at + 1000 * idle_s
    fingers.press(entry_at, SLOW_MS, "A")                     # LP entry for A
    still_at = entry_at + SLOW_MS + SETTLE_MS
    keys_at = still_at + keys * KEY_EVERY_MS
    for k in range(keys):
        fingers.press(keys_at + k * KEY_EVERY_MS, TYPE_DOWN_MS, "X")
    end_at = keys_at + keys * KEY_EVERY_MS
    board, desk, t = table(clock, fingers)
    d = board.display
    n = [0, 0]                          # "up" intents, key frames (counted, not listed:
    key_bytes = [0] * (keys + 8)        # no allocation in the measured spans)
    due = [False]                       # a key came in: the next frame is its frame
    key = t.key

    def counted(intent):
        if intent == "up":
            n[0] += 1
        due[0] = True
        key(intent)
    t.key = counted

    def shown(windows):
        sent = d.sent
        Panel.show(d, windows)
        if due[0] and n[1] < len(key_bytes):
            due[0] = False
            key_bytes[n[1]] = d.sent - sent
            n[1] += 1
    d.show = shown                      # the present make_renderer hands the screen task
    held = [0]
    out = {}
    link = [0]
    counted_link(t.session, link, desk)
    span = Span(d, clock, desk, link)

    async def script():
        asyncio.create_task(run(board, t, renderer_of(board), lambda: False, held,
                                lambda: clock() >= idle_at))
        for name, t0, t1 in (("idle", idle_at, entry_at), ("entry_idle", still_at, keys_at),
                             ("keys", keys_at, end_at)):
            while clock() < t0:
                await asyncio.sleep_ms(1)
            if name == "idle":
                # The steady state: the sync clock as minutes after boot, its exchanges
                # MAX_PERIOD_MS apart (less up to a quarter), not the start-up's bursts.
                c = t.session.clock
                c._count = max(c._count, FIRST + BURST * SHIFTS)
            if name == "keys":
                n[1] = 0
            span.start()
            while clock() < t1:
                await asyncio.sleep_ms(1)
            out[name] = span.end()
    asyncio.run(script())
    board.sampling = False
    if desk.syncs == 0 or t.ui.match is None or not t.ui.match.in_duel:
        raise SystemExit("no duel or no sync: syncs %d" % desk.syncs)
    out.update({"key_bytes": key_bytes[:n[1]], "registered": n[0], "pressed": keys,
                "held_max_ms": held[0], "syncs": desk.syncs})
    print(json.dumps(out))


if sys.argv[1] == "typing":
    typing()
else:
    duel(int(sys.argv[2]), int(sys.argv[3]))
