# The table's state and its desk session, sans I/O: the one owner of what the table knows.
# Its entry points are key intents, the desk's bytes and ticks, each with the local ms; what
# they change goes to the journal, the settings files and the link it was given. Pure: the
# app (and the tests' tables, tests/host/tables.py) own the link, the flash and the ticks.
#
#   key(intent, local_ms)   a key, to the Ui at desk time; settings and PIN lockout written
#   feed(bytes, local_ms[, sub_us])  the desk's lines (any chunking): commands to the Ui, sync
#                           replies to the Clock; returns the messages taken (any: look at
#                           the screen). sub_us: the us past local_ms, where the app's ticks
#                           are that fine (then sync asks the desk for its us too)
#   tick(local_ms[, sub_us])  what is due: a sync request, the state, record, the result
#   hello(board, fw, pct, flash_kb, rssi_dbm)   a link came up: hello (the last three
#                           where known), and what the desk has not acked goes again
#   ui.save = save(ev)      the Ui confirms an event only once this returned: journalled
#                           (or held in RAM while the journal is full)
#
# The record cursor, over the current match's events (acked <= sent <= total):
#
#   0 ......... acked ......... sent ......... total
#   | the desk holds | sent, no ack | not sent yet |
#
#   save(ev)          total + 1; a round_start begins a new match: everything 0
#   tick, sent<total  a record message of up to _RECORD_BATCH events from `sent`, begun once
#                     the oldest unsent one has waited _LINGER_MS (a burst of entries is one
#                     message, and a round start's 2,000 records do not crowd its 2,000
#                     states), at once when a batch is full or the match is over; made in
#                     steps, one a tick (_send_record), it goes a few ticks later
#   tick, over        once sent == total: the result; again every _RESEND_MS until the
#                     final ack
#   _RESEND_MS after the last record without an ack: sent = acked (no lingering), the
#                     result again
#   ack{events, stored}  the desk committed events 0..events: acked = max(acked,
#                     min(events, total)); none of them goes again
#   ack{events}       the final ack (the desk verified the result, or a judge settled it):
#                     as above, and over and all held: the journal marks the match collected
#   hello             sent = acked (a new link: the desk may have missed some; no lingering)
#
# The state goes out when it changed (looked at once after a line from the desk or an
# event, or once state_check_at is set to 0; after a key and every _STATE_CHECK_MS when what
# no line or event moves did: the phase, a PIN lockout, the first sync, a judge call) and
# every _STATE_MS; RUNNING fields are no change. Those looks allocate nothing: the state's
# fields are built only when one of those moved.
#
# What it is given (duck-typed):
#   journal  start_match(round_start) -> id, append(ev): raise JournalFull (core/record.py)
#            when the flash is full, another OSError when it fails; read(id, pos,
#            max_bytes) -> ([(line, end)], pos_after, at_end), the match's good lines from
#            byte pos on (journal.py); mark_collected(id); recover(on_line) -> .match_id,
#            .dropped
#   files    read(name, number) -> [numbers] or None; text(name) -> str or None;
#            write(name, text), never raising: "seen" (the desk's last command seq), "drift"
#            (the settled ppm, once a boot), "pinlock" and "settings" (below)
#   send     send(line, kind) -> True once the link took it; kind "state" (latest wins),
#            "report" (delivered) or "sync" (worth nothing late: the clock asks again)
#   ticks    ticks() -> (local_ms, sub_us or None), now: read once a sync request is built,
#            its t1 (None: the tick's own time, for a send that only queues the line)
import json

from . import const
from .clock import Clock
from .lang import tr
from .flatjson import canonical_flat
from .record import JournalFull, parse_line
from .rules import START_LP
from .ui import Ui
from .wire import MAX_STR, Encoder, Decoder, event_bytes

# Private consts (compiled into the code, no module names on a board; the tests read them
# on CPython, tests/host/tables.py).
_STATE_MS = const(5000)
_STATE_CHECK_MS = const(250)    # a state that changed by itself (time, lockout) is seen this
                                # soon; a dict built each link tick would be 120 KB/s of garbage
_RECORD_BATCH = const(12)       # events per record message, at most
_EVENTS_BYTES = const(800)      # their canonical JSON, commas counted: with the rest of a
                                # record (at most ~190 bytes) inside wire's 1024
_READ_BYTES = const(1024)       # journal bytes one step reads, at most (a long line: to
                                # its end): 12 LP entries are ~700
_MAKE_EVENTS = const(6)         # events one step writes as canonical JSON, at most
_READY_SEQS = const(16)         # a record line the link refused goes as built while at most
                                # this many seqs went out after it (the desk takes a report
                                # up to wire.REPORT_WINDOW, 32, late); else it is built again
_RESEND_MS = const(10000)       # unacknowledged record: sent again after this long
_LINGER_MS = const(2000)        # an event waits this long for others to share its record
# Change every ms, or with every line an attacker sends: not a "change", sent every _STATE_MS.
RUNNING = ("remaining_ms", "sync_age_ms", "sync_err_ms", "drops")


class Session:
    """One table's side of docs/protocol.md. `key`: the table's own key (table_key), `boot`:
    its boot counter (seqs stay above every earlier boot's), `budget_ms`: the Clock's,
    `pins` and `lang`: the Ui's (the judges' PIN hashes, the first language), `scale`:
    the Clock's (a simulated board's local ms per real ms), `sync_seed`: the Clock's seed
    (the spread of its first sync request; None: asked at once); journal, files, send and
    ticks as above."""

    def __init__(self, key, tbl, boot, journal, files, send, budget_ms, pins, lang,
                 ticks=None, scale=1, sync_seed=None):
        self.journal = journal
        self.files = files
        self.send = send
        self.ticks = ticks
        self.enc = Encoder(key, boot, tbl)
        seen = files.read("seen", int)
        self.dec = Decoder(key, tbl, seen={0: seen[0]} if seen else None)
        drift = files.read("drift", float)
        self.clock = Clock(budget_ms, drift_ppm=drift[0] if drift else None, scale=scale,
                           seed=sync_seed)
        self.drift_saved = False      # this boot's drift is on flash (one write a boot)
        self.ui = Ui(tbl, self.save, pins, lang)
        self.settings = {}            # what the table shows that is no match event
        self._load_settings()
        # The judge PIN's lockout survives a reboot (3 guesses per power cycle would make the
        # lockout worthless): "wrong lockouts locked_ms", written when it changes.
        self.ui.at(ticks()[0] if ticks else 0)
        n = files.read("pinlock", int)
        self.ui.restore_lock(*(n if n and len(n) == 3 else (0, 0, 0)))
        self.saved_lock = _lock_key(self.ui.lock_state())
        self.match_id = None
        self.start_ms = None          # desk time the current round started
        self.total = 0                # events in the current match (journal + unsaved)
        self.unsaved = []             # its newest events, in RAM only: the flash is full
        self.journal_full = False
        self.acked = 0                # events the desk holds
        self.sent = 0                 # events sent (acked <= sent <= total)
        self.marks = [(0, 0)]         # journal places, see _send_record
        self._drop_batch()
        self.sent_at = 0
        self.unsent_at = None         # local ms the oldest unsent event was first seen
        self.result_at = None         # local ms the result last went (None: not since a
                                      # new event or a resend)
        self.settled = False          # the final ack came for the current match
        self.sync_at = 0              # local ms of the next sync request (0: ask the clock;
                                      # its answer moves only with an exchange or a request,
                                      # and working it out takes float arithmetic)
        self.sync_seq = None          # the sync request a reply is due for,
        self.sync_t1 = None           # the local ms it left at,
        self.sync_us = None           # and the us past them (None: not that fine)
        self.state_due = 0
        self.state_check_at = 0       # local ms: look at the state again (0: at once)
        self.last_state = None
        self.seen_phase = None        # _moved(): the phase and flags at the last look
        self.seen_flags = -1
        self._recover()

    def _recover(self):
        rec = self.journal.recover(self._restore)
        self.match_id = rec.match_id
        if rec.dropped:
            self.ui.say("journal: %d record(s) dropped" % len(rec.dropped))

    def _restore(self, line):
        ev = parse_line(line)[0]
        if ev is not None:
            if ev["ev"] == "round_start":
                self.start_ms = ev.get("start_ms")
            self.ui.restore(ev)
            self.total += 1

    # --- settings: what the players see that is not the match's (its journal holds that) ---
    #
    # One small JSON file: {"lang": the screen's language (the desk's or a player's pick),
    # "judge": a player called a judge (cleared by a judge's PIN)}. Written when it changes.

    def _load_settings(self):
        text = self.files.text("settings")
        try:
            got = json.loads(text) if text else {}
        except ValueError:
            got = {}
        if type(got) is dict:
            self.settings = got
        self.ui.set_lang(self.settings.get("lang"))
        self.ui.judge_called = self.settings.get("judge") is True

    def set_setting(self, key, value):
        if key == "lang":
            self.ui.set_lang(value)
            value = self.ui.lang
        if self.settings.get(key) != value:
            self.settings[key] = value
            self.files.write("settings", json.dumps(self.settings))

    def key(self, intent, local_ms):
        """A key intent at local ms (the board's clock), to the Ui at desk time: the one way
        keys reach the table's state. What it changed that must outlive a power cut is
        written; the state goes to the desk at once. Before the first sync after a boot
        the match takes no key (no desk time to stamp it with)."""
        ui = self.ui
        ui.at(local_ms)
        t = self.round_ms(local_ms)
        if t is None and ui.match is not None:
            ui.say(ui.text("no_sync"))
            return
        lang = ui.lang
        ui.key(intent, t if t is not None else local_ms)    # no round: board time
        if ui.lang != lang:
            self.set_setting("lang", ui.lang)
        self.persist()
        if self._moved(local_ms):               # a judge called, a PIN locked out: at once
            self.state_check_at = 0             # (an event is, by save(); a typed digit
                                                # moves nothing the state shows)

    def persist(self):
        """Write what a key may have changed outside the journal: the judge call, the PIN
        lockout (each only when it changed)."""
        ui = self.ui
        self.set_setting("judge", ui.judge_called)
        was = self.saved_lock           # compared field by field: no tuple made per key
        if was[0] != ui.pin_wrong or was[1] != ui.lockouts or was[2] != (ui.locked_ms() > 0):
            state = ui.lock_state()
            self.files.write("pinlock", "%d %d %d" % state)
            self.saved_lock = _lock_key(state)

    def round_ms(self, local_ms):
        """Desk ms since the round started, or None (no sync yet, or no round)."""
        if self.start_ms is None:
            return None
        return self.clock.desk_now_ms(local_ms, self.start_ms)

    # --- the journal is the only way an event is confirmed --------------------------------
    #
    # Journal full (flash exhausted, nothing collected left to delete): the match goes on.
    # The event is confirmed and shown, but held in RAM (`unsaved`) after the journalled
    # ones: the app keeps telling the players to keep a paper record (the rules' record
    # then) and to call a judge, the state report carries journal_full to the desk, and the
    # record messages carry the RAM events too, so the desk holds them. Each later event
    # first tries to write the held ones, oldest first. Nothing already on flash is touched
    # (the journal deletes collected matches only). A power cut while full loses what the
    # desk has not received: that is what the paper record is for.

    def save(self, ev):
        if ev["ev"] == "round_start":
            self.match_id = None
            self.unsaved = []
            self.total, self.acked, self.sent = 0, 0, 0
            self.marks = [(0, 0)]
            self._drop_batch()
            self.unsent_at = None
        self.unsaved.append(dict(ev))
        self.total += 1
        self.result_at = None                       # a penalty after the match: the result
        self.settled = False                        # goes again, to be verified with it
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
                self.ui.say(tr("flash_full", self.ui.lang))
            return
        self.journal_full = False

    # --- from the desk --------------------------------------------------------------------

    def feed(self, data, local_ms, sub_us=None):
        msgs = self.dec.feed(data)
        for msg in msgs:
            self.handle(msg, local_ms, sub_us)
        return msgs

    def handle(self, msg, local_ms, sub_us=None):
        k = msg["k"]
        if k == "sync":
            if msg["re"] == self.sync_seq:
                u2, u3 = msg.get("t2u"), msg.get("t3u")
                us = None
                if None not in (sub_us, self.sync_us, u2, u3):
                    us = (self.sync_us, u2, u3, sub_us)
                self.clock.sample(self.sync_t1, msg["t2"], msg["t3"], local_ms, us)
                self.sync_seq = None
                self.sync_at = 0
                if self.clock.drift_settled and not self.drift_saved:
                    self.files.write("drift", "%.1f" % self.clock.drift_ppm)
                    self.drift_saved = True
            return              # its age and error are running figures: nothing to report
        self.state_check_at = 0                         # a command's effect: reported at once
        seq = self.dec.last_seq(0)
        if seq is not None:
            self.files.write("seen", str(seq))
        getattr(self, "_cmd_" + k)(msg, local_ms)

    def _cmd_round(self, msg, local_ms):
        ui = self.ui
        m = ui.match
        if msg.get("lang"):
            self.set_setting("lang", msg["lang"])
        if m is None or m.round_no != msg["round"] or self.start_ms != msg["start_ms"]:
            ev = {"t": 0, "ev": "round_start", "round": msg["round"], "kind": msg["kind"],
                  "limit_s": msg["limit_s"], "cap_s": msg["cap_s"],
                  "extra_turns": msg["extra_turns"], "seating": msg["seating"],
                  "rules": msg.get("rules", "ID"), "start_ms": msg["start_ms"]}
            for key in ("names", "judge_extend"):     # the journal keeps them: shown after a reboot
                if key in msg:
                    ev[key] = msg[key]
            self.start_ms = msg["start_ms"]
            try:
                ui.start_round(ev)
            except OSError as e:
                ui.say(tr("not_saved", ui.lang, str(e)))
        for pen in msg.get("pens", ()):
            ui.carry(pen, self.round_ms(local_ms) or 0)

    # The organiser's pause, resume and extension: journalled events of the match at the
    # desk's instant (at_ms; an extension without one: now), so a reboot comes back with them.

    def _cmd_pause(self, msg, local_ms):
        self._organiser({"ev": "pause"}, msg["at_ms"])

    def _cmd_resume(self, msg, local_ms):
        self._organiser({"ev": "resume"}, msg["at_ms"])

    def _cmd_extend(self, msg, local_ms):
        m = self.ui.match
        if m is not None and m.round_no == msg["round"]:
            at = msg.get("at_ms")
            if at is None and self.start_ms is not None:
                t = self.round_ms(local_ms)
                at = None if t is None else self.start_ms + t
            self._organiser({"ev": "extend", "ms": msg["ms"]}, at)

    def _organiser(self, ev, at_ms):
        """`at_ms`: desk ms, or None (no desk time yet: at the match's last event)."""
        m = self.ui.match
        if m is None or self.start_ms is None:
            return
        ev["t"] = (m.now_ms or 0) if at_ms is None else at_ms - self.start_ms
        self.ui.organiser(ev)       # its journal write failing is said on screen

    def _cmd_ack(self, msg, local_ms):
        m = self.ui.match
        if m is None or m.round_no != msg["round"]:
            return
        self.acked = max(self.acked, min(msg["events"], self.total))
        if self.sent < self.acked:  # the desk holds more than this boot sent: none again
            self._resend_from_acked()
        self._forget_marks()
        if msg.get("stored"):
            return                  # held, not yet settled: the result still counts
        self.settled = True
        if m.over and self.acked == self.total and self.match_id is not None \
                and not self.unsaved:
            try:
                self.journal.mark_collected(self.match_id)
            except OSError:
                pass          # flash full or failing: the mark waits for the next ack

    # --- to the desk ----------------------------------------------------------------------

    def _send(self, k, fields, kind="report"):
        return self.send(self.enc.build(k, fields), kind)

    def hello(self, board, fw, battery_pct, flash_kb=None, rssi_dbm=None):
        fields = {"board": board, "fw": fw}
        for k, v in (("battery", battery_pct), ("flash_kb", flash_kb), ("rssi_dbm", rssi_dbm)):
            if v is not None:
                fields[k] = v
        self._send("hello", fields)
        self.sync_seq = None                            # a new link: ask for time at once
        self.clock.sent(None)
        self.sync_at = 0
        self._resend_from_acked()                       # the desk may have missed some:
        if self.sent < self.total:                      # old events, no lingering
            self.unsent_at = 0

    def reply_due(self, local_ms):
        """True while a sync reply is due and could still count (the clock takes none that
        took over its max_delay_ms): meanwhile the app polls its link tight, for t4."""
        return self.sync_seq is not None and local_ms - self.sync_t1 <= self.clock.max_delay_ms

    def state(self, local_ms):
        m = self.ui.match
        if m is None:
            fields = {"round": 0, "phase": "waiting", "duel": 0, "wins": {"A": 0, "B": 0},
                      "lp": {"A": START_LP, "B": START_LP}, "turn": 0, "remaining_ms": 0}
        else:
            t = self.round_ms(local_ms)
            fields = {"round": m.round_no, "phase": m.phase(),
                      "duel": len(m.duels) + (1 if m.in_duel else 0),
                      "wins": dict(m.wins), "lp": dict(m.lp), "turn": m.turn if m.in_duel else 0,
                      "remaining_ms": m.remaining_ms(t if t is not None else (m.now_ms or 0))}
        if self.ui.judge_called:
            fields["judge"] = True
        if self.ui.locked_ms():
            fields["locked"] = True
        drops = sum(self.dec.drops.values())
        if drops:
            fields["drops"] = drops
        if self.journal_full:
            fields["journal_full"] = True
        age = self.clock.age_ms(local_ms)
        if age is not None:
            fields["sync_age_ms"] = max(0, age)
            fields["sync_err_ms"] = int(self.clock.error_ms(local_ms) + 0.5)
        return fields

    def tick(self, now, sub_us=None):
        """What is due at local ms `now` (and sub_us past it, or None): sync request, state,
        record, result."""
        if now >= self.sync_at:
            self.sync_at = now + self.clock.next_exchange_in_ms(now)
        if now >= self.sync_at:
            self.sync_at = 0
            seq = self.enc.seq
            fields = {"t1": now}
            if sub_us is not None:
                fields["us"] = True
            line = self.enc.build("sync", fields)
            # t1 is read once the request is built and signed, as it is written, not the
            # `now` it carries: building and signing take a board ~3 ms (RP2040), which
            # every leg out would hold (desk time shown ~1.5 ms ahead), unlike any leg's
            # noise. Not after the write: a pause there (a GC, the OS) would make the leg
            # look shorter than it was, and the clock keeps the shortest legs. A stamp may
            # lengthen its leg, never shorten it.
            t1, t1_us = self.ticks() if self.ticks else (now, sub_us)
            # A request the link refused (down, or a report's PUBACK still due) is one lost:
            # the clock asks again after its retry, not at the next tick (a table off its
            # link built and signed a request every few ms, the loop's whole CPU).
            self.clock.sent(t1)
            self.sync_seq = None
            if self.send(line, "sync"):
                self.sync_seq = seq
                self.sync_t1, self.sync_us = t1, None if sub_us is None else t1_us
        moved = False
        if now >= self.state_check_at:          # a look every _STATE_CHECK_MS, not a tick
            moved = self.state_check_at == 0 or self._moved(now)
            self.state_check_at = now + _STATE_CHECK_MS
        if moved or now >= self.state_due:
            fields = self.state(now)
            if _changed(fields, self.last_state) or now >= self.state_due:
                if self._send("state", fields, "state"):
                    self.last_state = fields
                    self.state_due = now + _STATE_MS
                else:                                   # refused: again at the next look,
                    self.state_due = self.state_check_at    # not built at every tick
        m = self.ui.match
        if m is None or self.total == 0:
            return
        if self.sent > self.acked and now - self.sent_at > _RESEND_MS:
            self._resend_from_acked()                   # no ack came: send again, at once,
            self.unsent_at = 0
            self.result_at = None                       # the result too (the desk acks it)
        if self.sent < self.total:
            if self.unsent_at is None:
                self.unsent_at = now
            if m.over or now - self.unsent_at >= _LINGER_MS \
                    or self.total - self.sent >= _RECORD_BATCH:
                self._send_record(m.round_no, now)
        if self.sent == self.total:
            self.unsent_at = None
        if m.over and self.sent >= self.total and not self.settled and (
                self.result_at is None or now - self.result_at > _RESEND_MS):
            if self._send("result", {"round": m.round_no, "result": m.result,
                                     "wins": dict(m.wins), "events": self.total}):
                self.result_at = now

    def _moved(self, now):
        """Whether what the state shows moved with no line or event since the last look:
        the phase (time alone), a PIN lockout, the first sync, a judge call. Allocation-free."""
        m = self.ui.match
        phase = m.phase() if m is not None else None
        flags = (1 if self.ui.locked_ms() else 0) | (2 if self.clock.synced else 0) | (
            4 if self.ui.judge_called else 0)
        if phase == self.seen_phase and flags == self.seen_flags:
            return False
        self.seen_phase = phase
        self.seen_flags = flags
        return True

    # A record message is made in steps, one per tick it is due in, each a bounded piece of
    # work (a read of _READ_BYTES, _MAKE_EVENTS events written as canonical JSON, or the
    # message built, signed and sent), so that none holds the app's loop long: its events
    # from `sent` on are read from the journal where the last step left off, then taken
    # from RAM. Twelve lp entries take four steps at most: a read, two writes of six, the
    # send (what the last read left past a full batch may spare the next one its read).
    #
    # marks: [(index, pos)], index ascending: the match's event `index` is the first good
    # record at or after journal position `pos` (a place the journal's read returned; 0 is
    # the start). The first is at or before `acked` (a resend starts there), the last at
    # or before `sent`; between them, where each message since began. No message reads
    # the match again from its start.
    # The batch in the making: `pieces`, the canonical JSON of events sent, sent + 1, ...
    # (`piece_bytes` with a comma each); `full`, nothing more joins it; `lines`, records
    # read and not yet looked at, [(line, end)] (what a full batch left is the next one's);
    # `at` (index, pos), the event and journal place of lines[0], or after the last line
    # looked at; `read_end`, where the last read stopped; `dry` (events journalled, pos):
    # the journal's end as the last read found it (None: that read did not reach it);
    # `ready`, the message built that the link refused, sent as it is at the next step
    # while the desk still takes its seq (`ready_seq`).

    def _drop_batch(self):
        """Forget the batch in the making and the lines read (`sent` moved, a new match):
        the next step reads again from the last mark."""
        self._next_batch()
        self.lines = []
        self.at = self.marks[-1]
        self.read_end = self.at[1]
        self.dry = None

    def _next_batch(self):
        """An empty batch; the lines read and not yet looked at stay for it."""
        self.pieces = []
        self.piece_bytes = 0
        self.full = False
        self.ready = None
        self.ready_seq = 0

    def _forget_marks(self):
        """`acked` or `sent` moved: keep the last mark at or before acked and those after it
        that are at or before sent."""
        marks = self.marks
        while len(marks) > 1 and marks[1][0] <= self.acked:
            marks.pop(0)
        while len(marks) > 1 and marks[-1][0] > self.sent:
            marks.pop()

    def _resend_from_acked(self):
        """Send again from `acked` on (no ack came, a new link, or the desk holds more)."""
        if self.sent != self.acked:
            self.sent = self.acked
            self._forget_marks()
            self._drop_batch()

    def _mark(self, index, pos):
        if index > self.marks[-1][0]:
            self.marks.append((index, pos))

    def _take(self, piece):
        """Add an event's canonical JSON to the batch: False, the batch full, when it holds
        _RECORD_BATCH or the piece does not fit in _EVENTS_BYTES; full as soon as it holds
        _RECORD_BATCH."""
        if len(self.pieces) == _RECORD_BATCH or \
                self.pieces and self.piece_bytes + len(piece) > _EVENTS_BYTES:
            self.full = True
            return False
        self.pieces.append(piece)
        self.piece_bytes += len(piece) + 1
        if len(self.pieces) == _RECORD_BATCH:
            self.full = True
        return True

    def _make(self, nxt):
        """Up to _MAKE_EVENTS of the lines read into the batch, from event `nxt` (the next it
        needs) on, each written as canonical JSON from its bytes (flatjson.canonical_flat)
        or, where that cannot be sure, parsed and written; lines before `nxt` are passed
        over (a mark at each up to `sent`)."""
        lines = self.lines
        index = self.at[0]
        made = 0
        while lines and made < _MAKE_EVENTS and not self.full:
            line, end = lines[0]
            if index >= nxt:
                if not self._take(canonical_flat(line, 16, MAX_STR)
                                  or event_bytes(json.loads(line))):
                    return                      # lines[0] begins the next batch
                made += 1
            lines.pop(0)
            index += 1
            self.at = (index, end)
            if index <= self.sent:
                self._mark(index, end)
        if not lines:
            self.at = (index, self.read_end)    # past damaged lines after the last good

    def _send_record(self, round_no, now):
        """One step of the record message of events from `sent` on (up to _RECORD_BATCH,
        their canonical JSON within _EVENTS_BYTES): write up to _MAKE_EVENTS of the lines
        read into it; or read the journal on; or, once the journal has no more for it, write
        up to _MAKE_EVENTS of the events held in RAM; or, once it is full or nothing is
        left, build, sign and send it."""
        if not self.full:
            nxt = self.sent + len(self.pieces)
            if self.lines:
                self._make(nxt)
                return
            journalled = self.total - len(self.unsaved)
            if nxt < journalled:
                index, pos = self.at
                if self.match_id is not None and self.dry != (journalled, pos):
                    self.lines, self.read_end, at_end = self.journal.read(self.match_id, pos,
                                                                          _READ_BYTES)
                    self.dry = (journalled, self.read_end) if at_end else None
                    if not self.lines:          # damaged lines only: past them
                        self.at = (index, self.read_end)
                    return
            elif nxt < self.total:              # the journal's are in: those held in RAM
                i = nxt - journalled
                for ev in self.unsaved[i:i + _MAKE_EVENTS]:
                    if not self._take(event_bytes(ev)):
                        break
                return
        pieces = self.pieces
        if not pieces:
            return
        self.full = True
        line = self.ready
        if line is not None and self.enc.seq - self.ready_seq > _READY_SEQS:
            line = None                         # the desk would drop it as late: a new seq
        fields = {"round": round_no, "first": self.sent, "total": self.total}
        while line is None:
            self.ready_seq = self.enc.seq
            try:
                line = self.enc.build("record", fields, events=pieces)
            except ValueError:
                if len(pieces) == 1:
                    raise
                pieces.pop()                    # longer than _EVENTS_BYTES allowed for:
                self.lines = []                 # the next batch reads from its start
                self.at = self.marks[-1]
                self.dry = None
        self.ready = line
        if self.send(line, "report"):
            self.sent += len(pieces)
            self.sent_at = now
            self._next_batch()
            self._mark(self.at[0], self.at[1])


def _lock_key(state):
    """What makes the PIN lock state worth writing again: a guess, a lockout, its end."""
    return state[0], state[1], state[2] > 0


def _changed(fields, last):
    """A state worth sending now: anything but the running clocks differs (those go out
    every _STATE_MS; sending on their change would be a message every few ms)."""
    if last is None:
        return True
    for k in fields:
        if k not in RUNNING and fields[k] != last.get(k):
            return True
    return len(fields) != len(last)
