# The table's whole firmware stepped in virtual time, for counting its work in instructions
# (valgrind on the unix port: tests/bench/bench_work.py). Deterministic: no thread, no
# asyncio, no wall clock, so two runs that differ only in a span of keys or idle differ
# only in that span's work. MICROPYPATH: a firmware tree, tests/upy, .frozen. Works with
# older firmware trees too (the same Table, frame, key, session and renderer calls), so the
# bench can count a past commit's work beside this one's.
#
#   micropython upy_work.py KEYS IDLE_MS [mark]
#
# Boots app.Table on a board with a 240x135 RGB565 panel, the journal on a RAM disk and a
# desk on its link that starts the round at hello and answers every sync at once (us stamps,
# as a Pico W asks for them); plays
# until a duel is on (A goes first: both clocks run) and the sync is in its steady state;
# then presses KEYS keys of LP entries, one every KEY_EVERY_MS (A opens an entry for A, X
# steps it +100 STEPS times, A confirms), then IDLE_MS with nobody at the keys. Every
# LINK_MS of virtual time the link is polled and ticked (as app.link_task); every STEP_MS a
# frame is made when one is due or something came in, its windows painted and presented
# (as app.screen_task).
# With `mark`, each key's frame is made as soon as the key is in, and oct() is called
# before each key, after its frame, and after the last key's KEY_EVERY_MS: a C function
# the firmware never calls, where callgrind cuts its counts (bench_work.py). A key's frame
# is the first the press changes: for A on a firmware that shows a held key (Ui.pressing),
# the hint drawn at the press; its release, TAP_MS later, and that frame count with the
# rest of the key's KEY_EVERY_MS.
# Prints one JSON line: {"lp_a", "frames", "bytes"} (A's LP at the end: the keys counted).
import json
import sys

from ramdisk import RAMDisk
from duelclock import app
from duelclock.core.sign import table_key
from duelclock.core.wire import Encoder

KEY = b"bench-event-key-0123456789abcdef"
TBL = 7
W, H = 240, 135
STEP_MS = 5
LINK_MS = 20                    # app.py's _LINK_MS: the link task's look
KEY_EVERY_MS = 300
STEPS = 8                       # X presses in an entry: A, X * STEPS, A
TAP_MS = 100                    # A held this long: its press shown, then its release
STEADY = 8 + 16 * 5             # clock.FIRST + BURST * SHIFTS: exchanges MAX_PERIOD_MS apart


class Panel:
    swap = True

    def __init__(self):
        import framebuf
        self.buf = bytearray(W * H * 2)
        self.fb = framebuf.FrameBuffer(self.buf, W, H, framebuf.RGB565)
        self.frames = 0
        self.sent = 0

    def show(self, windows):
        self.frames += 1
        for x, y, w, h in windows:
            self.sent += 2 * w * h

    def backlight(self, level):
        pass


class Board:
    BOARD = "BENCH"
    WIDTH = W
    HEIGHT = H
    mono = False
    renderer_kind = "fb"
    buzzer = None
    led = None
    battery_pct = None
    keys = None

    def __init__(self):
        self.display = Panel()


class Desk:
    """The link: the round at hello, every sync answered at once, every record acked."""

    def __init__(self, clock):
        self.clock = clock
        self.enc = Encoder(KEY, 1)
        self.rx = b""
        self.up = True
        self.started = False

    def poll(self):
        out = self.rx
        self.rx = b""
        return out

    def send(self, line, kind):
        msg = json.loads(line)
        k = msg["k"]
        if k == "hello" and not self.started:
            self.started = True
            self.rx += self.enc.build("round", {"round": 1, "kind": "swiss", "start_ms": self.clock(),
                                                "limit_s": 2700, "cap_s": 1800, "extra_turns": 1,
                                                "seating": False}, TBL)
        elif k == "record":
            self.rx += self.enc.build("ack", {"round": msg["round"],
                                              "events": msg["first"] + len(msg["events"])}, TBL)
        elif k == "sync":
            t = self.clock()
            reply = {"t1": msg["t1"], "t2": t, "t3": t, "re": msg["seq"]}
            if msg.get("us"):                   # the table stamps us (as a Pico W does)
                reply["t2u"] = reply["t3u"] = 0
            self.rx += self.enc.build("sync", reply, TBL)
        return True


class Run:
    def __init__(self):
        self.now = 0
        disk = RAMDisk(16)
        disk.mount("/flash", format=True)
        with open("/flash/duelclock.json", "w") as f:
            f.write(json.dumps({"table": TBL, "key": "".join("%02x" % b for b in table_key(KEY, TBL))}))
        self.board = Board()
        self.desk = Desk(self.clock)
        # us stamps, as a Pico W's (app.unwrap): whole ms here, the us past them 0
        self.t = app.Table(self.board, app.load_config("/flash"), self.desk, self.clock, "/flash",
                           lambda: 0)
        self.renderer, self.present = app.make_renderer(self.board)
        self.due = 0
        self.link_due = 0
        self.greeted = False

    def clock(self):
        return self.now

    def step(self):
        """STEP_MS of the board: the link's look if due, then a frame if one is due."""
        self.now += STEP_MS
        t, s = self.t, self.t.session
        if self.now >= self.link_due:
            self.link_due = self.now + LINK_MS
            self.look(t, s)
        if t.poked or self.now >= self.due:
            self.frame()

    def frame(self):
        """A frame now: planned, its windows painted and presented (app.screen_task)."""
        t = self.t
        t.poked = False
        wait, windows = t.frame(self.renderer)
        self.due = self.now + wait
        for w in windows:
            self.renderer.paint(w)
        if windows:
            self.present(windows)

    def look(self, t, s):
        data = t.link.poll()
        if data and s.feed(data, self.now, 0):
            t.poked = True
        if not self.greeted:
            self.greeted = True
            try:
                s.hello("BENCH", "0", None, None, None)
            except TypeError:                   # an older session's hello
                s.hello("BENCH", "0", None)
        s.tick(self.now, 0)

    def run(self, ms):
        end = self.now + ms
        while self.now < end:
            self.step()

    def key(self, intent):
        self.t.key(intent)


def main(keys, idle_ms, mark):
    r = Run()
    r.run(2000)                         # the round, the first syncs
    r.key("a")                          # who goes first
    r.run(KEY_EVERY_MS)
    r.key("a")                          # A: the duel is on
    r.run(2000)
    c = r.t.session.clock
    c._count = max(c._count, STEADY)
    r.run(1000)
    lp0 = r.t.ui.match.lp["A"]
    held = hasattr(r.t.ui, "pressing")     # a firmware that shows A's press before its release
    for i in range(keys):
        k = i % (STEPS + 2)
        if mark:
            oct(0)
        if held and k in (0, STEPS + 1):
            r.t.ui.pressing = ("A", "menu")     # app.Table.scan: Keys.waiting at A's press
            r.t.poked = True
            if mark:
                r.frame()
                oct(1)
            r.run(TAP_MS)
            r.t.ui.pressing = None              # released: its short, then its frame
            r.key("a")
            r.run(KEY_EVERY_MS - TAP_MS)
            continue
        r.key("a" if k in (0, STEPS + 1) else "up")
        if mark:
            r.frame()                   # its frame at once, as the poked screen task does
            oct(1)
        r.run(KEY_EVERY_MS)
    if mark:
        oct(0)
    r.run(idle_ms)
    print(json.dumps({"lp_a": r.t.ui.match.lp["A"], "lp_a0": lp0, "frames": r.board.display.frames,
                      "bytes": r.board.display.sent}))


main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:] == ["mark"])
