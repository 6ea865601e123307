# The table: asyncio tasks at the edges, the only code that reads ticks or touches I/O.
#
#   screen task   every KEY_SCAN_MS: board.keys.scan -> Ui.key(intent, round ms); then a
#                 frame at once if a key or a desk command came in (Table.poke), or when
#                 the clocks' second turns (_FLASH_MS while the screen flashes): Ui.tick ->
#                 view.build -> renderer.plan -> a window at a time: paint it, let the
#                 link task run, read the keys; then display.show(windows) (a whole frame
#                 at 62.5 MHz SPI: 8.3 ms); alerts -> buzzer. None when the Screen is the
#                 same as the last one drawn. One task: a key wakes no other (no cancel,
#                 no exception object a key).
#   link task     link.poll -> Session.feed (commands, sync replies); Session.tick (sync
#                 requests, state, record, result: core/session.py) -> link.send
#
# Time: `local_ms()` is the board's ticks, unwrapped (`sub_us()`: the us past the ms it last
# returned, None where the board gives only ms); the Clock maps it to desk time, and a
# match's events are stamped with desk ms since its round started (round_start's start_ms).
# Before the first sync after a boot the table knows no desk time: it shows the match as it
# was and takes no entries until the desk answers.
#
# The USB port is a door (docs/protocol.md, "Threat model"). During play it is the desk link
# and nothing else: main() turns the REPL's interrupt character off (a Ctrl-C is a byte the
# link drops as junk) and never returns, so no REPL reads the port (a raw-REPL Ctrl-A is junk
# too). The REPL, and with it deploy and pull, opens only in maintenance (maintenance.py).
import asyncio
import json
from binascii import unhexlify
from micropython import const

from . import VERSION
from duelclock.core.clock import SERIAL_BUDGET_MS, WIFI_BUDGET_MS
from duelclock.core.keys import board_keys
from duelclock.core.session import Session
from duelclock.core.view import build, same
from .files import Files
from .journal import Journal
from .link import make_link

KEY_SCAN_MS = const(15)
_FRAME_MS = const(1000)         # the longest between two looks at the screen
_FLASH_MS = const(250)          # the flash alert's blink
_LINK_MS = const(20)
_SYNC_POLL_MS = const(2)        # while a sync reply is due: its arrival time is t4, keep it tight
_BATTERY_MS = const(30000)      # battery read this often
DIM_LEVEL = 0.3                 # backlight when idle
_POWER_ON_MS = const(4000)      # the table number, firmware and link shown at power-on


def load_config(root):
    with open(root + "/duelclock.json") as f:
        return json.load(f)


class Table:
    """The session (core/session.py) on the board's link, flash, keys and display."""

    def __init__(self, board, cfg, link, local_ms, root, sub_us=lambda: None):
        self.board = board
        self.link = link
        self.local_ms = local_ms
        self.local_per_real = getattr(board, "LOCAL_PER_REAL", 1)   # a simulated board's speed
        self.sub_us = sub_us
        self.files = files = Files(root)
        boot = files.next_boot()        # with the table, the clock's seed: tables on together
        self.session = s = Session(
            unhexlify(cfg["key"]), cfg["table"], boot, Journal(root + "/journal"),
            files, link.send, WIFI_BUDGET_MS if cfg.get("link") == "mqtt" else SERIAL_BUDGET_MS,
            cfg.get("pins"), cfg.get("lang", "en"), lambda: (local_ms(), sub_us()),
            self.local_per_real, cfg["table"] * 65536 + boot)     # ask for time apart
        self.ui = s.ui
        self.ui.board_keys = board_keys(getattr(board, "keys", None))
        self.ui.probe = lambda: _probe(board, cfg, root)
        self.flash_until = self.battery_due = 0
        self.battery = None
        self.dimmed = False
        self.shown = self.spare = None  # the Screen on the display, the next one's
        self.poked = False            # something came in: look at the screen now
        # said at the first frame, whatever it shows: which table this board is, on what
        self.power_on = self.ui.text("power_on", cfg["table"], VERSION,
                                     "Wi-Fi" if cfg.get("link") == "mqtt" else "USB")

    # --- the screen -----------------------------------------------------------------------

    def frame(self, renderer):
        """(wait, windows): plan the screen; the windows that changed, to paint and
        present, and the ms until it may change by itself (a clock's next second, or the
        flash's next blink)."""
        self.poked = False
        now = self.local_ms()
        ui = self.ui
        ui.at(now)
        t = self.session.round_ms(now)
        if t is not None:
            ui.tick(t)
        elif ui.match is None:
            ui.now_ms = now             # no round: the Ui's time is the board's (messages)
        if self.power_on is not None and ui.now_ms is not None:
            ui.say(self.power_on, _POWER_ON_MS)
            self.power_on = None
        for kind, arg in ui.take_alerts():
            if kind == "beep" and self.board.buzzer is not None:
                self.board.buzzer.beep(arg)
            elif kind == "flash":
                self.flash_until = now + arg
        if self.session.journal_full and ui.current_message(ui.now_ms) is None:
            ui.say(ui.text("flash_full"))
        age = self.session.clock.age_ms(now)
        if self.board.battery_pct is not None and now >= self.battery_due:
            self.battery = self.board.battery_pct()         # an ADC read: not every frame
            self.battery_due = now + _BATTERY_MS
        screen = build(ui, t if t is not None else (ui.now_ms or 0),
                       None if age is None else age // 1000, self.battery,
                       now < self.flash_until and (now // _FLASH_MS) % 2 == 0, into=self.spare)
        windows = ()
        self.spare = screen
        if not same(screen, self.shown):
            windows = renderer.plan(screen)     # laid out now: the renderer keeps no Screen
            self.spare, self.shown = self.shown, screen
        if self.board.led is not None:
            self.board.led(screen.flash)
        if screen.dim != self.dimmed:                       # idle: dim, the clock stays lit
            self.dimmed = screen.dim
            d, level = self.board.display, DIM_LEVEL if screen.dim else 1
            if hasattr(d, "backlight"):                     # framebuf boards
                d.backlight(level)
            elif hasattr(d, "brightness"):                  # displayio
                d.brightness = level
        if now < self.flash_until:
            return _FLASH_MS - now % _FLASH_MS, windows
        if t is None:
            return _FRAME_MS - now % _FRAME_MS, windows
        # left's second: at match time k s + 1, the turn clock's too (view.turn_shown_ms),
        # so an idle screen changes once a second (paused: only a key or the desk changes it)
        m = ui.match
        mt = m.match_ms(t) if m is not None else t
        return (_FRAME_MS + 1 - mt % _FRAME_MS) % _FRAME_MS or _FRAME_MS, windows

    def key(self, intent):
        self.session.key(intent, self.local_ms())
        self.poke()

    def poke(self):
        """Something came in (a key, a desk command): the screen task plans a frame at its
        next step (within KEY_SCAN_MS)."""
        self.poked = True

    def scan(self, keys):
        """The keys read at local ms now: their intents taken; a key held and not yet
        decided (Keys.waiting) shown. Returns now."""
        now = self.local_ms()
        for intent in keys.scan(now):
            self.key(intent)
        ui = self.ui
        if keys.waiting is not ui.pressing:     # a key held, release or hold not yet: shown
            ui.pressing = keys.waiting
            self.poked = True
        return now


# --- tasks -------------------------------------------------------------------------------

async def screen_task(table, keys, renderer, present):
    due = 0                             # local ms of the screen's next change by itself
    while True:
        now = table.scan(keys)
        if table.poked or now - due >= 0:
            wait, windows = table.frame(renderer)
            due = table.local_ms() + wait
            if windows:
                for w in windows:
                    renderer.paint(w)
                    await asyncio.sleep_ms(0)
                    table.scan(keys)        # a press waits one window, not a whole frame
                present(windows)
            if table.poked:
                continue
            now = table.local_ms()
        left_ms = due - now
        if table.local_per_real != 1:           # a simulated board's faster clock
            left_ms = int(left_ms / table.local_per_real) + 1
        await asyncio.sleep_ms(max(0, min(KEY_SCAN_MS, left_ms)))


async def link_task(table):
    s = table.session
    was_up = False
    while True:
        data = table.link.poll()
        if data:
            for msg in s.feed(data, table.local_ms(), table.sub_us()):
                if msg["k"] != "sync":      # a sync reply's new age waits for the second
                    table.poke()
        if table.link.up and not was_up:
            # the board's health for the desk: battery, free flash (KB), Wi-Fi signal
            b = table.board
            pct, rssi = b.battery_pct, getattr(b, "wifi_rssi", None)
            free = s.journal.free_bytes()
            s.hello(b.BOARD, VERSION, pct() if pct else None, free and free >> 10,
                    rssi and rssi())
        was_up = table.link.up
        s.tick(table.local_ms(), table.sub_us())
        await asyncio.sleep_ms(_SYNC_POLL_MS if s.reply_due(table.local_ms()) else _LINK_MS)


def _probe(board, cfg, root):
    from .selftest import checks        # imported when a judge runs it: RAM till then
    return checks(board, cfg, root)


def unwrap(ticks_us, ticks_diff):
    """(local_ms, sub_us): ticks_us wraps (at 2**30 on boards, 18 minutes; local_ms() must run
    more often than every 9); the Clock wants an ever-increasing int of ms, and sync stamps
    the us past it (sub_us(): those of the last local_ms())."""
    at = [ticks_us(), 0, 0]             # the last ticks, ms since the first, us past that ms

    def local_ms():
        now = ticks_us()
        us = at[2] + ticks_diff(now, at[0])
        at[0] = now
        at[1] += us // 1000
        at[2] = us % 1000
        return at[1]
    return local_ms, lambda: at[2]


def make_renderer(board):
    """(renderer, present): present(windows) puts windows of a painted frame on the
    glass. The one branch on the board, on data it gives (boards/README.md)."""
    d = board.display
    if board.renderer_kind == "dio":
        from .render_dio import DioRenderer
        r = DioRenderer(board.WIDTH, board.HEIGHT)
        d.root_group = r.group
        return r, lambda windows: None          # displayio refreshes what changed by itself
    from .render_fb import FbRenderer
    return FbRenderer(d.fb, board.WIDTH, board.HEIGHT, board.mono, d.swap), d.show


def main(board=None, root=None):
    """Run the table. Returns only in maintenance, once the desk's code is in (main.py
    then ends at the REPL). Anything else that would end main.py (a crash, a refused
    maintenance) resets the board instead (board.reset; None on SIM: it raises), so the
    USB port never falls to the REPL."""
    if board is None:
        import board
    reset = getattr(board, "reset", None)
    try:
        if _main(board, root):
            return
    except BaseException:       # CircuitPython in maintenance: a Ctrl-C at the PIN screen too
        if not reset:
            raise
    reset()


def _main(board, root):
    root = root or getattr(board, "FS_PREFIX", "").rstrip("/") or "."
    cfg = load_config(root)
    local_ms = getattr(board, "local_ms", None)
    sub_us = getattr(board, "sub_us", lambda: None)
    if local_ms is None:
        import time
        local_ms, sub_us = unwrap(time.ticks_us, time.ticks_diff)
    link = make_link(board, cfg, local_ms)
    table = Table(board, cfg, link, local_ms, root, sub_us)
    renderer, present = make_renderer(board)
    want = getattr(board, "MAINTENANCE_KEYS", ())
    held = board.keys.pressed()
    if held:                            # held at power-on: no intent until all are let go
        board.keys.disarm()
    if want and all(k in held for k in want):
        from os import urandom
        from .maintenance import maintenance    # loaded only for it: RAM in play
        if maintenance(table, renderer, present, unhexlify(cfg["key"]), lambda: urandom(5)):
            return True
        if getattr(board, "reset", None):
            return False                # CircuitPython: boot.py opened the console for it
    # The REPL's interrupt character off: a Ctrl-C on the USB port is a byte for the link
    # (deploy's main.py does it first thing too, before any import can be interrupted).
    # CircuitPython has none: its boot.py keeps the console off the USB port instead.
    try:
        from micropython import kbd_intr
        kbd_intr(-1)
    except ImportError:
        pass

    async def run():
        asyncio.create_task(screen_task(table, board.keys, renderer, present))
        await link_task(table)
    asyncio.run(run())
