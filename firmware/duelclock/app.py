# The table: asyncio tasks at the edges, the only code that reads ticks or touches I/O.
#
#   keys task     board.keys.scan -> Ui.key(intent, round ms) -> frame at once
#   frame task    Ui.tick -> view.build -> renderer.plan -> a window at a time: paint it,
#                 let the other tasks run; then display.show(windows) (a whole frame at
#                 62.5 MHz SPI: 8.3 ms); alerts -> buzzer. A frame when
#                 a key or a desk command came in, or when a clock's second turns
#                 (FLASH_MS while the screen flashes); none when the Screen is the same as
#                 the last one drawn.
#   link task     link.poll -> wire.Decoder -> commands (round, pause, resume, extend, rules,
#                 ack) and sync replies -> Clock.sample
#   report task   sync requests when the Clock asks; state on change and every STATE_MS;
#                 record chunks of what the desk has not acknowledged; the result at the end
#
# Time: `local_ms()` is the board's ticks, unwrapped; the Clock maps it to desk time, and a
# match's events are stamped with desk ms since its round started (round_start's start_ms).
# Before the first sync after a boot the table knows no desk time: it shows the match as it
# was and takes no entries until the desk answers.
#
# The USB port is a door (docs/protocol.md, "Threat model"). During play it is the desk link
# and nothing else: main() turns the REPL's interrupt character off (a Ctrl-C is a byte the
# link drops as junk) and never returns, so no REPL reads the port (a raw-REPL Ctrl-A is junk
# too). The REPL, and with it deploy and pull, opens only in maintenance: the board's
# MAINTENANCE_KEYS held at power-on, then the head judge's PIN on the screen.
import asyncio
import json
from binascii import unhexlify

from duelclock import VERSION
from duelclock.core.clock import Clock
from duelclock.core.record import parse_line
from duelclock.core.ui import Pin, Ui
from duelclock.core.view import build, same
from duelclock.core.wire import Encoder, Decoder
from duelclock.journal import Journal, JournalFull

KEY_SCAN_MS = 15
FRAME_MS = 1000               # the longest between two looks at the screen
FRAME_POLL_MS = 5             # the frame task's look for a key or command meanwhile
FLASH_MS = 250                # the flash alert's blink
STATE_MS = 5000
STATE_CHECK_MS = 250          # a state that changed by itself (time, lockout) is seen this soon;
                              # a dict each link tick was 120 KB/s of garbage at idle (issue 13)
LINK_MS = 20
SYNC_POLL_MS = 2              # while a sync reply is due: its arrival time is t4, keep it tight
# Change every ms, or with every line an attacker sends: not a "change", sent every STATE_MS.
RUNNING = ("remaining_ms", "sync_age_ms", "sync_err_ms", "drops")
RECORD_BATCH = 12             # events per record message: well inside 1024 bytes
RESEND_MS = 10000             # unacknowledged record: sent again after this long
BATTERY_MS = 30000            # battery read this often
DIM_LEVEL = 0.3               # backlight when idle
SERIAL_BUDGET_MS = 5
WIFI_BUDGET_MS = 20
MAINTENANCE_MS = 60000        # the head judge's PIN must come this soon after power-on


def load_config(root):
    with open(root + "/duelclock.json") as f:
        return json.load(f)


def next_boot(root):
    """The boot counter (wire seqs stay above all sent before): read, raise, write back.
    On a full flash the raised count still serves this boot (the write is retried next)."""
    path = root + "/boot"
    n = _read_small(path)
    boot = n[0] + 1 if n else 1
    _write_small(path, str(boot))
    return boot


class Table:
    def __init__(self, board, cfg, link, local_ms, root):
        self.board = board
        self.cfg = cfg
        self.link = link
        self.local_ms = local_ms
        self.root = root
        self.tbl = cfg["table"]
        key = unhexlify(cfg["key"])
        self.enc = Encoder(key, next_boot(root), self.tbl)
        self.dec = Decoder(key, self.tbl, seen=self._load_seen())
        wifi = cfg.get("link") == "mqtt"
        self.clock = Clock(WIFI_BUDGET_MS if wifi else SERIAL_BUDGET_MS,
                           drift_ppm=_load_drift(root))
        self.drift_saved = False      # this boot's drift is on flash (one write a boot)
        self.journal = Journal(root + "/journal")
        self.ui = Ui(self.tbl, self._save, cfg.get("pins"), cfg.get("lang", "en"))
        self.match_id = None
        self.start_ms = None          # desk time the current round started
        self.total = 0                # events in the current match (journal + unsaved)
        self.unsaved = []             # its newest events, in RAM only: the flash is full
        self.journal_full = False
        self.acked = 0                # events the desk holds
        self.sent = 0                 # events sent (acked <= sent <= total)
        self.sent_at = 0
        self.result_sent = False
        self.sync_seq = None
        self.state_due = 0
        self.state_check_at = 0       # local ms: look at the state again (0: at once)
        self.last_state = None
        self.flash_until = 0
        self.battery = None
        self.battery_due = 0
        self.dimmed = False
        self.shown = None             # the Screen on the display
        self.poked = False            # something came in: look at the screen now
        self.ui.at(local_ms())
        self._load_lock()
        self._recover()

    # --- boot -----------------------------------------------------------------------------

    def _recover(self):
        def on_line(line):
            ev, why = parse_line(line)
            if ev is None:
                return
            if ev["ev"] == "round_start":
                self.start_ms = ev.get("start_ms")
            self.ui.restore(ev)
            self.total += 1
        rec = self.journal.recover(on_line)
        self.match_id = rec.match_id
        if rec.dropped:
            self.ui.say("journal: %d record(s) dropped" % len(rec.dropped))

    def _seen_path(self):
        return self.root + "/seen"

    def _load_seen(self):
        n = _read_small(self._seen_path())
        return {0: n[0]} if n else None

    def _store_seen(self):
        seq = self.dec.last_seq(0)
        if seq is not None:
            _write_small(self._seen_path(), str(seq))

    # The judge PIN's lockout survives a reboot (3 guesses per power cycle would make the
    # lockout worthless): "wrong lockouts locked_ms", written when it changes.
    def _load_lock(self):
        n = _read_small(self.root + "/pinlock")
        wrong, lockouts, left_ms = n if n and len(n) == 3 else (0, 0, 0)
        self.ui.restore_lock(wrong, lockouts, left_ms)
        self.saved_lock = _lock_key(self.ui.lock_state())

    def _store_lock(self):
        state = self.ui.lock_state()
        if _lock_key(state) != self.saved_lock:
            _write_small(self.root + "/pinlock", "%d %d %d" % state)
            self.saved_lock = _lock_key(state)

    # --- time -----------------------------------------------------------------------------

    def round_ms(self):
        """Desk ms since the round started, or None (no sync yet, or no round)."""
        desk = self.clock.desk_now_ms(self.local_ms())
        if desk is None or self.start_ms is None:
            return None
        return desk - self.start_ms

    # --- the journal is the only way an event is confirmed --------------------------------
    #
    # Journal full (flash exhausted, nothing collected left to delete): the match goes on.
    # The event is confirmed and shown, but held in RAM (`unsaved`) after the journalled
    # ones: the screen keeps telling the players to keep a paper record (the rules' record
    # then) and to call a judge, the state report carries journal_full to the desk, and the
    # record messages carry the RAM events too, so the desk holds them. Each later event
    # first tries to write the held ones, oldest first. Nothing already on flash is touched
    # (the journal deletes collected matches only). A power cut while full loses what the
    # desk has not received: that is what the paper record is for.

    def _save(self, ev):
        if ev["ev"] == "round_start":
            self.match_id = None
            self.unsaved = []
            self.total, self.acked, self.sent = 0, 0, 0
            self.result_sent = False
        self.unsaved.append(dict(ev))
        self.total += 1
        try:
            self._write_unsaved()
        except OSError:                   # not JournalFull: the event is not confirmed
            self.unsaved.pop()
            self.total -= 1
            raise
        self.state_due = 0

    def _write_unsaved(self):
        """Journal the events held in RAM, oldest first, until done or the flash is full."""
        try:
            while self.unsaved:
                ev = self.unsaved[0]
                if self.match_id is None:
                    self.match_id = self.journal.start_match(ev)
                else:
                    self.journal.append(ev)
                self.unsaved.pop(0)
        except JournalFull:
            if not self.journal_full:
                self.journal_full = True
                self.ui.say(self.ui.text("flash_full"))
            return
        self.journal_full = False

    # --- commands from the desk -----------------------------------------------------------

    def handle(self, msg):
        k = msg["k"]
        self.poked = True
        self.state_check_at = 0                         # a command's effect: reported at once
        if k == "sync":
            if msg["re"] == self.sync_seq:
                self.clock.sample(msg["t1"], msg["t2"], msg["t3"], self.local_ms())
                self.sync_seq = None
                if self.clock.drift_settled and not self.drift_saved:
                    _write_small(self.root + "/drift", "%.1f" % self.clock.drift_ppm)
                    self.drift_saved = True
            return
        self._store_seen()
        getattr(self, "_cmd_" + k)(msg)

    def _cmd_round(self, msg):
        m = self.ui.match
        names = msg.get("names")
        if m is None or m.round_no != msg["round"] or self.start_ms != msg["start_ms"]:
            ev = {"t": 0, "ev": "round_start", "round": msg["round"], "kind": msg["kind"],
                  "limit_s": msg["limit_s"], "cap_s": msg["cap_s"],
                  "extra_turns": msg["extra_turns"], "seating": msg["seating"],
                  "rules": msg.get("rules", "ID"), "start_ms": msg["start_ms"]}
            self.start_ms = msg["start_ms"]
            try:
                self.ui.start_round(ev, (names["A"], names["B"]) if names else None, msg.get("lang"),
                                    self.ui.extend_ok)
            except OSError as e:
                self.ui.say("NOT SAVED: %s" % e)
        else:
            if names:
                self.ui.names = (names["A"], names["B"])
            if msg.get("lang"):
                self.ui.lang = msg["lang"]
        for pen in msg.get("pens", ()):
            self.ui.carry(pen, self.round_ms() or 0)

    def _cmd_pause(self, msg):
        if self.start_ms is not None:
            self.ui.pause(msg["at_ms"] - self.start_ms)

    def _cmd_resume(self, msg):
        if self.start_ms is not None:
            self.ui.resume(msg["at_ms"] - self.start_ms)

    def _cmd_extend(self, msg):
        t = self.round_ms()
        m = self.ui.match
        if t is not None and m is not None and m.round_no == msg["round"]:
            self.ui.given(t, msg["ms"])

    def _cmd_rules(self, msg):
        self.ui.extend_ok = msg["settings"].get("extend_ok") is True

    def _cmd_ack(self, msg):
        m = self.ui.match
        if m is None or m.round_no != msg["round"]:
            return
        self.acked = max(self.acked, min(msg["events"], self.total))
        if m.over and self.acked == self.total and self.match_id is not None \
                and not self.unsaved:
            try:
                self.journal.mark_collected(self.match_id)
            except OSError:
                pass          # flash full or failing: the mark waits for the next ack

    # --- reports --------------------------------------------------------------------------

    def _send(self, k, fields, kind="report"):
        return self.link.send(self.enc.build(k, fields), kind)

    def hello(self):
        fields = {"board": self.board.BOARD, "fw": VERSION}
        pct = self.board.battery_pct() if self.board.battery_pct else None
        if pct is not None:
            fields["battery"] = pct
        self._send("hello", fields)

    def state(self):
        m = self.ui.match
        now = self.local_ms()
        fields = {"round": 0, "phase": "waiting", "duel": 0, "wins": {"A": 0, "B": 0},
                  "lp": {"A": 8000, "B": 8000}, "turn": 0, "remaining_ms": 0}
        if m is not None:
            t = self.round_ms()
            fields = {"round": m.round_no, "phase": m.phase(),
                      "duel": len(m.duels) + (1 if m.in_duel else 0),
                      "wins": dict(m.wins), "lp": dict(m.lp), "turn": m.turn if m.in_duel else 0,
                      "remaining_ms": m.limit_ms - (t if t is not None else (m.now_ms or 0))}
        if self.ui.judge_called:
            fields["judge"] = True
        if self.ui.locked_ms():
            fields["locked"] = True
        drops = sum(self.dec.drops.values())
        if drops:
            fields["drops"] = drops
        if self.journal_full:
            fields["journal_full"] = True
        age = self.clock.age_ms(now)
        if age is not None:
            fields["sync_age_ms"] = max(0, age)
            fields["sync_err_ms"] = int(self.clock.error_ms(now) + 0.5)
        return fields

    def report(self):
        """One step of the report task: sync request, state, record, result."""
        now = self.local_ms()
        if self.clock.next_exchange_in_ms(now) == 0:
            self.sync_seq = self.enc.seq
            if self._send("sync", {"t1": now}):
                self.clock.sent(now)
        if now >= self.state_check_at or now >= self.state_due:
            self.state_check_at = now + STATE_CHECK_MS
            fields = self.state()
            if _changed(fields, self.last_state) or now >= self.state_due:
                if self._send("state", fields, "state"):
                    self.last_state = fields
                    self.state_due = now + STATE_MS
        m = self.ui.match
        if m is None or self.total == 0:
            return
        if self.sent > self.acked and now - self.sent_at > RESEND_MS:
            self.sent = self.acked                      # no ack came: send again,
            self.result_sent = False                    # the result too (the desk acks it)
        if self.sent < self.total:
            self._send_record(m.round_no, now)
        if m.over and not self.result_sent and self.sent >= self.total:
            self.result_sent = self._send("result", {"round": m.round_no, "result": m.result,
                                                     "wins": dict(m.wins), "events": self.total})

    def _events(self, first):
        """The current match's events from index `first` on: the journal's, then those
        held in RAM. Only those are parsed."""
        i = 0
        if self.match_id is not None:
            for line in self.journal.export(self.match_id):
                if i >= first:
                    yield json.loads(line)
                i += 1
        for ev in self.unsaved[max(0, first - i):]:
            yield ev

    def _send_record(self, round_no, now):
        batch = []
        for ev in self._events(self.sent):
            batch.append(ev)
            if len(batch) == RECORD_BATCH:
                break
        if not batch:
            return
        try:
            line = self.enc.build("record", {"round": round_no, "first": self.sent,
                                             "events": batch, "total": self.total})
        except ValueError:                              # too long: send fewer next time
            batch = batch[:1]
            line = self.enc.build("record", {"round": round_no, "first": self.sent,
                                             "events": batch, "total": self.total})
        if self.link.send(line, "report"):
            self.sent += len(batch)
            self.sent_at = now

    # --- the screen -----------------------------------------------------------------------

    def frame(self, renderer):
        """(wait, windows): plan the screen; the windows that changed, to paint and
        present, and the ms until it may change by itself (a clock's next second, or the
        flash's next blink)."""
        self.poked = False
        now = self.local_ms()
        self.ui.at(now)
        t = self.round_ms()
        if t is not None:
            self.ui.tick(t)
        for kind, arg in self.ui.alerts:
            if kind == "beep" and self.board.buzzer is not None:
                self.board.buzzer.beep(arg)
            elif kind == "flash":
                self.flash_until = now + arg
        self.ui.alerts = []
        if self.journal_full and self.ui.current_message(self.ui.now_ms) is None:
            self.ui.say(self.ui.text("flash_full"))
        age = self.clock.age_ms(now)
        if self.board.battery_pct is not None and now >= self.battery_due:
            self.battery = self.board.battery_pct()         # an ADC read: not every frame
            self.battery_due = now + BATTERY_MS
        screen = build(self.ui, t if t is not None else (self.ui.now_ms or 0),
                       None if age is None else age // 1000, self.battery,
                       now < self.flash_until and (now // FLASH_MS) % 2 == 0)
        windows = ()
        if not same(screen, self.shown):
            windows = renderer.plan(screen)
            self.shown = screen
        if self.board.led is not None:
            self.board.led(screen.flash)
        if screen.dim != self.dimmed:                       # idle: dim, the clock stays lit
            self.dimmed = screen.dim
            _dim(self.board.display, DIM_LEVEL if screen.dim else 1)
        if now < self.flash_until:
            return FLASH_MS - now % FLASH_MS, windows
        if t is None:
            return FRAME_MS - now % FRAME_MS, windows
        wait = (FRAME_MS + 1 - t % FRAME_MS) % FRAME_MS or FRAME_MS   # left's second: at t = k s + 1
        m = self.ui.match
        if m is not None and m.in_duel:                     # the turn clock's own seconds
            wait = min(wait, FRAME_MS - (t - m.turn_start_ms) % FRAME_MS)
        return wait, windows

    def _draw(self, renderer, present):
        # A frame at once, outside the frame task (the maintenance screen runs before it).
        windows = self.frame(renderer)[1]
        for w in windows:
            renderer.paint(w)
        if windows:
            present(windows)

    def maintenance(self, renderer, present):
        """The PIN screen of a power-on with MAINTENANCE_KEYS held: True once the head judge's
        PIN is in (the caller leaves the USB port to the REPL); False on back, a floor
        judge's PIN or MAINTENANCE_MS without one (the table plays, locked). Wrong PINs
        count towards the usual lockout, kept on flash."""
        import time
        roles = []
        pin = Pin(lambda ui, role: roles.append(role))
        self.ui.push(pin)
        self.ui.say("Maintenance: head PIN")
        end = self.local_ms() + MAINTENANCE_MS
        while self.ui.stack[-1] is pin and self.local_ms() < end:
            self.ui.at(self.local_ms())
            for intent in self.board.keys.scan(self.ui.up_ms):
                pin.key(self.ui, intent)
                self._store_lock()
            self._draw(renderer, present)
            time.sleep(KEY_SCAN_MS / 1000)      # CircuitPython has no sleep_ms
        self.ui.home()
        if roles == ["head"]:
            self.ui.say("USB REPL open")
            self._draw(renderer, present)
        return roles == ["head"]

    def key(self, intent):
        self.ui.at(self.local_ms())
        t = self.round_ms()
        if t is None and self.ui.match is not None:
            self.ui.say(self.ui.text("no_sync"))
            return
        self.ui.key(intent, t if t is not None else 0)
        self._store_lock()
        self.poked = True
        self.state_check_at = 0                         # a judge called, a PIN locked out


# --- tasks -------------------------------------------------------------------------------

async def keys_task(table, keys):
    while True:
        for intent in keys.scan(table.local_ms()):
            table.key(intent)
        await asyncio.sleep_ms(KEY_SCAN_MS)


async def frame_task(table, renderer, present):
    while True:
        wait, windows = table.frame(renderer)
        due = table.local_ms() + wait
        if windows:
            for w in windows:
                renderer.paint(w)
                await asyncio.sleep_ms(0)
            present(windows)
        while not table.poked and table.local_ms() < due:
            await asyncio.sleep_ms(FRAME_POLL_MS)


async def link_task(table):
    was_up = False
    while True:
        data = table.link.poll()
        if data:
            for msg in table.dec.feed(data):
                table.handle(msg)
        if table.link.up and not was_up:
            table.hello()
            table.sent = table.acked                    # the desk may have missed some
        was_up = table.link.up
        table.report()
        await asyncio.sleep_ms(SYNC_POLL_MS if table.sync_seq is not None else LINK_MS)


class Unwrap:
    """ticks_ms wraps (at 2**30 on boards); the Clock wants an ever-increasing int."""

    def __init__(self, ticks_ms, ticks_diff):
        self.ticks_ms, self.ticks_diff = ticks_ms, ticks_diff
        self.last = ticks_ms()
        self.total = 0

    def __call__(self):
        now = self.ticks_ms()
        self.total += self.ticks_diff(now, self.last)
        self.last = now
        return self.total


def _changed(fields, last):
    """A state worth sending now: anything but the running clocks differs (those go out
    every STATE_MS; sending on their change would be a message every few ms)."""
    if last is None:
        return True
    for k in fields:
        if k not in RUNNING and fields[k] != last.get(k):
            return True
    return len(fields) != len(last)


def _lock_key(state):
    """What makes the PIN lock state worth writing again: a guess, a lockout, its end."""
    return state[0], state[1], state[2] > 0


def _load_drift(root):
    """The crystal's drift (ppm) a clock learnt in an earlier boot, or None: the next
    clock starts from it (core/clock.py) instead of guessing 0."""
    n = _read_small(root + "/drift", float)
    return n[0] if n else None


def _read_small(path, number=int):
    """The numbers in a small state file (_write_small's), or None where it is absent,
    unreadable or torn: the caller's default then."""
    try:
        with open(path) as f:
            return [number(x) for x in f.read().split()]
    except (OSError, ValueError):
        return None


def _write_small(path, text):
    """A small state file (seen seq, PIN lockout). A full or failing flash costs only that
    state, never the table."""
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError:
        pass


def _dim(display, level):
    """framebuf boards: backlight(level); displayio: its brightness."""
    if hasattr(display, "backlight"):
        display.backlight(level)
    elif hasattr(display, "brightness"):
        display.brightness = level


def make_link(board, cfg, local_ms):
    from duelclock.link import StreamLink, MqttLink
    if cfg.get("link") != "mqtt":
        return StreamLink(board.open_serial())
    m = cfg["mqtt"]
    from umqtt.simple import MQTTClient

    def factory():
        return MQTTClient("duelclock-t%d" % cfg["table"], m["host"], m.get("port", 1883),
                          keepalive=m.get("keepalive_s", 30))
    return MqttLink(factory, cfg.get("event", "event"), cfg["table"], m.get("keepalive_s", 30), local_ms)


def make_renderer(board):
    """(renderer, present): present(windows) puts windows of a painted frame on the
    glass. The one branch on the board, on data it gives (boards/README.md)."""
    d = board.display
    if board.renderer_kind == "dio":
        from duelclock.render_dio import DioRenderer
        r = DioRenderer(board.WIDTH, board.HEIGHT)
        d.root_group = r.group
        return r, lambda windows: None          # displayio refreshes what changed by itself
    from duelclock.render_fb import FbRenderer
    return FbRenderer(d.fb, board.WIDTH, board.HEIGHT, board.mono, d.swap), d.show


def main(board=None, root=None):
    """Run the table. Returns only in maintenance, once the head judge's PIN is in (main.py
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
    if local_ms is None:
        import time
        local_ms = Unwrap(time.ticks_ms, time.ticks_diff)
    wifi = cfg.get("wifi")
    if cfg.get("link") == "mqtt" and wifi and board.connect_wifi is not None:
        board.connect_wifi(wifi["ssid"], wifi["pass"])
    link = make_link(board, cfg, local_ms)
    table = Table(board, cfg, link, local_ms, root)
    renderer, present = make_renderer(board)
    want = getattr(board, "MAINTENANCE_KEYS", ())
    if want and all(k in board.keys.pressed() for k in want):
        if table.maintenance(renderer, present):
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
        asyncio.create_task(keys_task(table, board.keys))
        asyncio.create_task(frame_task(table, renderer, present))
        await link_task(table)
    asyncio.run(run())
