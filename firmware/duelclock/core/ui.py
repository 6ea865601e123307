# The table's state, between the app and the screens: the match (once the desk started a
# round) and its sheet, messages, alerts, the judge PIN lockout, the screen stack. Key
# intents in, match events out. Pure. The match (its journal) holds everything the rules
# see, the organiser's pause and extensions and the players' names included; the Session
# keeps the rest that must outlive a power cut (language, judge call) in its settings.
#
# Boards map their buttons to intents (boards/<BOARD>/board.py KEYMAP); the app passes each
# intent here with the table's desk-time estimate, and the top frame of the stack takes it
# (screens.py: the frames and the menu flows). An event is recorded in three steps: the
# rules engine is asked (Match.check), the `save` callable the app gave us writes it to
# flash (raises on failure), and only then is it applied and the screen confirms it.
#
# Intents: a b 0-9 00 000 sign ok back undo turn menu up down up_fast down_fast
#
# Two clocks: `now_ms` is desk time (the app's estimate, set by key, tick and the desk's
# commands), `up_ms` board time (ms since boot, set by at(); the PIN lockout runs on it).
from . import catalogue, const
from .lang import tr, LANGS
from .match import Match
from .record import check_event
from .screens import Home, Unlock  # noqa: F401 (Unlock: the app's maintenance screen)
from .sheet import LAST_MINUTES_MS, Sheet, clock
from .sign import pin_matches, same

PIN_TRIES = 3                   # wrong PINs before a lockout
LOCKOUT_MS = 60000              # first lockout; each further one doubles
MESSAGE_MS = const(2500)        # how long a refusal or notice stays on screen
_GIVEN_MS = const(6000)         # how long "+3:00 from the desk" stays on screen
_CARRIED_MS = const(60000)      # how long a penalty carried from the last match stays on screen
_SHEET_ROWS = const(60)         # rows of the current duel kept for the record view


class Ui:
    """The table's state: the match (once the desk started a round) and the screens.
    `save(ev)` writes one event to the journal and raises if it could not."""

    def __init__(self, table_no, save, pins=None, lang="en"):
        self.table_no = table_no
        self.save = save
        self.pins = pins or {}          # {"floor": pin_hash, "head": pin_hash} (sign.py)
        self.lang = lang
        self.names = ("A", "B")
        self.match = None
        self.sheet = None
        self.stack = [Home()]
        self.message = None             # (text, until_ms)
        self.alerts = []                # ("beep", n) / ("flash", ms): the app drains them
        self.last_key_ms = 0
        self.pressing = None            # Keys.waiting: (key name, long intent) shown as held
        self.left_ms = None             # match time left at the last tick (the 5:00 notice's edge)
        self.judge_extend = False       # the round lets the head judge extend at the table
        self.judge_called = False       # a player asked for a judge; a judge's PIN clears it
        # The board, for the judge menu's self-test (the app's; screens.SelfTest): its
        # physical keys [(name, intents)] and probe() -> [(check, ok, detail)]
        self.board_keys = ()
        self.probe = None
        # PIN lockouts run on board time (up_ms, kept by at()): round time stands still
        # before a round and starts again at each. The app keeps lock_state() on flash, so
        # pulling the power gives no fresh tries.
        self.up_ms = 0
        self.pin_wrong = 0
        self.locked_until = 0
        self.lockouts = 0
        self.now_ms = 0
        self.texts = [None, None]       # text(): the language, {key: its text without args}

    # --- from the app -------------------------------------------------------------------

    def at(self, up_ms):
        """The board's clock (ms since boot) reads up_ms: call it before keys and frames."""
        self.up_ms = up_ms

    def start_round(self, start):
        """A round pushed by the desk: journal its round_start (names in it) and begin."""
        self.save(start)
        self._begin(start)

    def restore(self, ev):
        """Re-apply one journalled event on boot (no save, no alerts). What the players saw
        of it stays on screen for as long as it would have: a carried penalty's banner,
        the desk's extension."""
        if ev["ev"] == "round_start":
            self._begin(ev)
            return None
        if self.match is None:
            return "no round"
        m = self.match
        why = m.apply(ev)
        self.alerts = []
        self.left_ms = m.remaining_ms(m.now_ms)
        if why is None:
            self._said(ev)
        return why

    def _begin(self, start):
        self.sheet = Sheet(start, keep=1, max_rows=_SHEET_ROWS)
        self.match = Match(start, self._on_note)
        self.limit0_ms = self.match.limit_ms        # the view marks what was given since
        names = start.get("names")
        self.names = (names["A"], names["B"]) if names else ("A", "B")
        self.judge_extend = start.get("judge_extend") is True
        self.stack = [Home()]
        self.left_ms = self.match.limit_ms

    def key(self, intent, now_ms):
        m = self.match
        if m is not None and m.now_ms is not None and now_ms < m.now_ms:
            now_ms = m.now_ms           # the clock estimate stepped back: keep stamps in order
        self.now_ms = now_ms
        self.last_key_ms = now_ms
        self.tick(now_ms)
        self.stack[-1].key(self, intent)

    def tick(self, now_ms):
        """Let time pass: time-based rules fire, alerts are raised. Call it often."""
        self.now_ms = now_ms
        m = self.match
        if m is None:
            return
        if m.now_ms is not None and now_ms < m.now_ms:
            return                      # the clock estimate stepped back: wait for it
        before = m.next_deadline_ms()
        m.advance_to(now_ms)
        if m.next_deadline_ms() != before:
            # Time called, the cap, tardiness: the record must show that time passed, or its
            # replay at the desk would stop short of what the table decided.
            try:
                self.save({"t": now_ms, "ev": "tick"})
            except Exception as e:
                self.say(self.text("not_saved", str(e) or type(e).__name__))
        # 5:00 left: beeps as the edge is crossed (once: a reboot starts from the journal's
        # last instant), the notice while it is fresh (view.build: a function of the time).
        left = m.remaining_ms(now_ms)
        if self.left_ms is not None and left <= LAST_MINUTES_MS < self.left_ms and left > 0 \
                and not m.over:
            self.alert(2, 1500)
        self.left_ms = left

    def carry(self, pen, now_ms):
        """A penalty the desk carries from a player's last match ({p, kind, code}, protocol.md):
        recorded now as the head judge's (marked carried), unless the match is over or lists
        a penalty of that player, kind and code already (a round sent again); shown for
        _CARRIED_MS."""
        m = self.match
        if m is None or m.over or (pen.get("p"), pen.get("kind"), pen.get("code")) in \
                [(x["p"], x["kind"], x["code"]) for x in m.penalties]:
            return
        ev = dict(pen, ev="penalty", judge="head", carried=True)
        ev["t"] = self.now_ms = max(now_ms, m.now_ms or now_ms)
        why = check_event(ev)
        if why:
            self.say(self.text("refused", why))
        elif self.record(ev):
            self._said(ev)

    def organiser(self, ev):
        """The desk's pause, resume or extension, as the event at its instant (`t`; never
        before the match's last event: the journal stays in time order). True once
        journalled and applied. One the match refuses (a pause sent again, an extension
        after time was called) changes nothing and is said only if it was an extension."""
        m = self.match
        if m is None:
            return False
        if m.now_ms is not None and ev["t"] < m.now_ms:
            ev["t"] = m.now_ms
        self.now_ms = max(self.now_ms, ev["t"])
        self.tick(ev["t"])
        if ev["ev"] != "extend" and m.check(ev) is not None:
            return False
        if self.record(ev):
            self._said(ev)
            return True
        return False

    def _said(self, ev):
        # What an event from the desk puts on screen, until its time is up (also after a
        # reboot: the message runs on desk time from the event's t).
        k = ev["ev"]
        if k == "extend":
            self.message = (self.text("given", clock(ev["ms"])), ev["t"] + _GIVEN_MS)
        elif k == "penalty" and ev.get("carried") is True:
            self.message = (self.text("carried", ev["p"],
                                      catalogue.kind_name(ev["kind"], self.lang)),
                            ev["t"] + _CARRIED_MS)

    def set_lang(self, lang):
        """The screen's language, if it is one the table speaks (lang.LANGS)."""
        if lang in LANGS:
            self.lang = lang

    # --- recording --------------------------------------------------------------------

    def record(self, ev):
        """Check, save, apply. True when the event is on flash and applied. The event is
        stamped now, when it is confirmed (a frame holds an event unstamped meanwhile: the
        clock ticks on between the keys of a confirmation)."""
        if "t" not in ev:
            ev = dict(ev)
            ev["t"] = self.now_ms
        if self.match is None:
            self.say(self.text("waiting"))
            return False
        self.tick(ev["t"])              # what is due by then fires first (and is journalled)
        why = self.match.check(ev)
        if why is not None:
            self.say(self.text("refused", why))
            self.alert(1, 0)
            return False
        try:
            self.save(ev)
        except Exception as e:      # the journal said no: nothing is applied or confirmed
            self.say(self.text("not_saved", str(e) or type(e).__name__))
            self.alert(3, 0)
            return False
        self.match.apply(ev)
        return True

    def _on_note(self, n):
        self.sheet.note(n)
        kind = n["kind"]
        if kind in ("time", "extra_turn", "sudden_death", "match_over", "cap"):
            self.alert(3 if kind in ("time", "match_over") else 2, 2000)
        elif kind == "duel_over":
            self.alert(1, 800)

    def alert(self, beeps, flash_ms):
        if beeps:
            self.alerts.append(("beep", beeps))
        if flash_ms:
            self.alerts.append(("flash", flash_ms))

    def take_alerts(self):
        """The alerts raised since the last call, for the board to sound and show (a
        frame asks every second: no new list when there were none)."""
        got = self.alerts
        if got:
            self.alerts = []
        return got

    def say(self, text, ms=MESSAGE_MS):
        self.message = (text, self.now_ms + ms)

    def current_message(self, now_ms):
        if self.message is not None and now_ms < self.message[1]:
            return self.message[0]
        return None

    def push(self, frame):
        self.stack.append(frame)

    def pop(self):
        if len(self.stack) > 1:
            self.stack.pop()

    def home(self):
        self.stack = self.stack[:1]

    def text(self, key, *args):
        """The screen text `key` in the table's language (lang.tr), formatted with args.
        Looked up once a language (a search of the whole table of texts): a text without
        args is then shown again without a new string, one with args is one format."""
        texts = self.texts
        if texts[0] != self.lang:
            texts[0] = self.lang
            texts[1] = {}
        got = texts[1].get(key)
        if got is None:
            got = texts[1][key] = tr(key, self.lang)
        return got % args if args else got

    # --- judge credentials ------------------------------------------------------------

    def locked_ms(self):
        """How long the judge PIN stays locked, in ms (0: open)."""
        return self.locked_until - self.up_ms if self.up_ms < self.locked_until else 0

    def lock_state(self):
        """(wrong PINs since the last lockout, lockouts so far, ms still locked)."""
        return self.pin_wrong, self.lockouts, self.locked_ms()

    def restore_lock(self, wrong, lockouts, locked_ms):
        """lock_state() as saved before a reboot: the lockout runs on from now."""
        self.pin_wrong, self.lockouts = wrong, lockouts
        self.locked_until = self.up_ms + locked_ms

    def check_pin(self, pin):
        """'head', 'floor' or None (said on screen: tries left, or the lockout). Wrong PINs
        count towards a lockout that doubles."""
        if self.locked_ms():
            return None
        for role in ("head", "floor"):
            if self.pins.get(role) and pin_matches(pin, self.pins[role]):
                self.pin_wrong = 0
                self.judge_called = False
                return role
        self.wrong_try(False)
        return None

    def check_unlock(self, code, want):
        """Whether `code` is the maintenance code `want` (sign.unlock_code); a wrong one
        counts towards the PIN lockout (said on screen). False while locked."""
        if self.locked_ms():
            return False
        if same(code.encode(), want.encode()):
            self.pin_wrong = 0
            return True
        self.wrong_try(True)
        return False

    def wrong_try(self, code):
        """A wrong PIN (or, with `code`, a wrong maintenance code): the tries left on screen,
        or the lockout once PIN_TRIES were wrong; each lockout is twice the last."""
        self.pin_wrong += 1
        if self.pin_wrong >= PIN_TRIES:
            self.pin_wrong = 0
            self.locked_until = self.up_ms + (LOCKOUT_MS << self.lockouts)
            self.lockouts += 1
            self.say(self.text("locked", self.locked_ms() // 1000))
        else:
            self.say(self.text("code_wrong" if code else "pin_wrong", PIN_TRIES - self.pin_wrong))
        self.alert(1, 0)
