# What the players and judges do at the table: key intents in, match events out. Pure.
#
# Boards map their buttons to intents (boards/<BOARD>/board.py KEYMAP); the app passes each
# intent here with the table's desk-time estimate. An event is recorded in three steps:
# the rules engine is asked (Match.check), the `save` callable the app gave us writes it to
# flash (raises on failure), and only then is it applied and the screen confirms it.
#
# Intents: a b 0-9 00 000 sign ok back undo turn menu up down up_fast down_fast
#
# Screens are frames on a stack; the top frame takes the keys:
#
#   Home --a/b, in a duel--> Entry --ok / same key--> lp event --> Home
#     |  --a/b, no duel----> Pick "who goes first" --> duel_start
#     |  --a/b, not seated-> Confirm check-in --> seated
#     |  --turn--> turn_end      --undo--> undo
#     +--menu--> Menu: Record | Duel over | Surrender | Start duel | Judge | Language
#                  Duel over --> Pick winner --> Both confirm --> duel_end
#                  Surrender --> Pick player --> Both confirm --> surrender (or the rule's reason)
#                  Judge --> Pin --(floor|head)--> Judge menu: Penalty | LP fix | Void | Extend
#                                                  Penalty --> A | B | Both --> code --> kind
#
# Nothing is recorded that nobody confirmed: every event leaves through `_record`, which only
# frames reached by an explicit ok (or a player's own key) call.
from duelclock.core import catalogue
from duelclock.core.lang import tr, LANGS
from duelclock.core.match import Match
from duelclock.core.record import check_event
from duelclock.core.sheet import Sheet, clock
from duelclock.core.sign import pin_matches

MAX_AMOUNT_DIGITS = 6
PIN_TRIES = 3                   # wrong PINs before a lockout
LOCKOUT_MS = 60000              # first lockout; each further one doubles
MESSAGE_MS = 2500               # how long a refusal or notice stays on screen
GIVEN_MS = 6000                 # how long "+3:00 from the desk" stays on screen
CARRIED_MS = 60000              # how long a penalty carried from the last match stays on screen
IDLE_DIM_MS = 120000            # dim after 2 minutes without a key (the clock stays readable)
FIVE_MIN_MS = 300000
SHEET_ROWS = 60                 # rows of the current duel kept for the record view


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
        self.start = None               # the round_start event
        self.stack = [Home()]
        self.message = None             # (text, until_ms)
        self.alerts = []                # ("beep", n) / ("flash", ms): the app drains them
        self.last_key_ms = 0
        self.warned_5min = False
        self.paused_at = None           # desk pause: when, or None
        self.extend_ok = False          # the organiser's rule set allows judge extensions
        self.judge_called = False       # a player asked for a judge; a judge's PIN clears it
        # PIN lockouts run on board time (ms since boot, `up_ms`, which the app keeps set):
        # round time stands still before a round and starts again at each. The app keeps
        # lock_state() on flash, so pulling the power gives no fresh tries.
        self.up_ms = 0
        self.pin_wrong = 0
        self.locked_until = 0
        self.lockouts = 0
        self.now_ms = 0

    # --- from the app -------------------------------------------------------------------

    def start_round(self, start, names=None, lang=None, extend_ok=False):
        """A round pushed by the desk: journal its round_start and begin."""
        if names:
            self.names = (names[0], names[1])
        if lang in LANGS:
            self.lang = lang
        self.extend_ok = extend_ok
        self.save(start)
        self._begin(start)

    def restore(self, ev):
        """Re-apply one journalled event on boot (no save, no alerts)."""
        if ev["ev"] == "round_start":
            self._begin(ev)
            return None
        if self.match is None:
            return "no round"
        why = self.match.apply(ev)
        self.alerts = []
        return why

    def _begin(self, start):
        self.start = start
        self.sheet = Sheet(start, keep=1, max_rows=SHEET_ROWS)
        self.match = Match(start, self._on_note)
        self.limit0_ms = self.match.limit_ms        # the view marks what was given since
        self.stack = [Home()]
        self.warned_5min = False

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
        if m is None or self.paused_at is not None:
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
                self.say(tr("not_saved", self.lang, str(e) or type(e).__name__))
        left = m.limit_ms - now_ms
        if not self.warned_5min and 0 < left <= FIVE_MIN_MS and not m.over:
            self.warned_5min = True
            self.alert(2, 1500)
            self.say(tr("five_left", self.lang))

    def carry(self, pen, now_ms):
        """A penalty the desk carries from a player's last match ({p, kind, code}, protocol.md):
        recorded now as the head judge's, unless the match is over or lists a penalty of that
        player, kind and code already (a round sent again); shown for CARRIED_MS."""
        m = self.match
        if m is None or m.over or (pen.get("p"), pen.get("kind"), pen.get("code")) in \
                [(x["p"], x["kind"], x["code"]) for x in m.penalties]:
            return
        ev = dict(pen, ev="penalty", judge="head")
        ev["t"] = self.now_ms = max(now_ms, m.now_ms or now_ms)
        why = check_event(ev)
        if why:
            self.say(self.t("refused", why))
        elif self.record(ev):
            self.say(self.t("carried", ev["p"], catalogue.kind_name(ev["kind"], self.lang)),
                     CARRIED_MS)

    def pause(self, now_ms):
        if self.paused_at is None:
            self.paused_at = now_ms

    def resume(self, now_ms):
        """End a pause: the paused span is given back as an extension."""
        if self.paused_at is None:
            return
        span = now_ms - self.paused_at
        self.paused_at = None
        if span >= 1000:
            self.given(now_ms, span)

    def given(self, now_ms, ms):
        """The desk gave the table `ms` (an extension, a pause given back): recorded, and
        said on screen for GIVEN_MS ("+3:00 from the desk")."""
        self.now_ms = now_ms
        if self.record({"t": now_ms, "ev": "extend", "ms": ms}):
            self.say(self.t("given", clock(ms)), GIVEN_MS)

    # --- recording --------------------------------------------------------------------

    def record(self, ev):
        """Check, save, apply. True when the event is on flash and applied. The event is
        stamped now, when it is confirmed (a frame holds an event unstamped meanwhile: the
        clock ticks on between the keys of a confirmation)."""
        if "t" not in ev:
            ev = dict(ev)
            ev["t"] = self.now_ms
        if self.match is None:
            self.say(tr("waiting", self.lang))
            return False
        why = self.match.check(ev)
        if why is not None:
            self.say(tr("refused", self.lang, why))
            self.alert(1, 0)
            return False
        try:
            self.save(ev)
        except Exception as e:      # the journal said no: nothing is applied or confirmed
            self.say(tr("not_saved", self.lang, str(e) or type(e).__name__))
            self.alert(3, 0)
            return False
        self.match.apply(ev)
        return True

    def _on_note(self, n):
        self.sheet.note(n)
        kind = n.kind
        if kind in ("time", "extra_turn", "sudden_death", "match_over", "cap"):
            self.alert(3 if kind in ("time", "match_over") else 2, 2000)
        elif kind == "duel_over":
            self.alert(1, 800)

    def alert(self, beeps, flash_ms):
        if beeps:
            self.alerts.append(("beep", beeps))
        if flash_ms:
            self.alerts.append(("flash", flash_ms))

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

    def t(self, key, *args):
        return tr(key, self.lang, *args)

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
        """'head', 'floor' or None. Wrong PINs count towards a lockout that doubles."""
        if self.locked_ms():
            return None
        for role in ("head", "floor"):
            if self.pins.get(role) and pin_matches(pin, self.pins[role]):
                self.pin_wrong = 0
                self.judge_called = False
                return role
        self.pin_wrong += 1
        if self.pin_wrong >= PIN_TRIES:
            self.pin_wrong = 0
            self.locked_until = self.up_ms + (LOCKOUT_MS << self.lockouts)
            self.lockouts += 1
        return None


# --- frames -------------------------------------------------------------------------

class Home:
    name = "home"

    def key(self, ui, k):
        m = ui.match
        if k == "menu":
            ui.push(Menu(main_menu(ui)))
            return
        if m is None or m.over:
            return
        if k in ("a", "b"):
            p = k.upper()
            if not m.seated[p]:
                ui.push(Confirm(ui.t("check_in"), {"ev": "seated", "p": p}, (p,)))
            elif m.in_duel:
                ui.push(Entry(p))
            else:
                ui.push(pick_first(ui))
        elif k == "turn":
            ui.record({"ev": "turn_end"})
        elif k == "undo":
            ui.record({"ev": "undo"})
        elif k in DIGITS:
            ui.say(ui.t("pick_player"))


DIGITS = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "00", "000")
STEPS = {"up": 100, "down": -100, "up_fast": 1000, "down_fast": -1000}


class Entry:
    """An LP change being typed: amounts for one or both players, damage unless `sign`."""
    name = "entry"

    def __init__(self, p):
        self.p = p
        self.amount = {"A": 0, "B": 0}
        self.gain = {"A": False, "B": False}

    def delta(self, p):
        return self.amount[p] if self.gain[p] else -self.amount[p]

    def key(self, ui, k):
        p = self.p
        if k in DIGITS:
            a = self.amount[p]
            a = a * 10 + int(k) if len(k) == 1 else a * (10 ** len(k))
            if a < 10 ** MAX_AMOUNT_DIGITS:
                self.amount[p] = a
        elif k in STEPS:
            self.amount[p] = max(0, min(self.amount[p] + STEPS[k], 10 ** MAX_AMOUNT_DIGITS - 1))
        elif k in ("sign", "menu"):
            self.gain[p] = not self.gain[p]
        elif k in ("a", "b"):
            if k.upper() == p:
                self.confirm(ui)
            else:
                self.p = k.upper()
        elif k == "ok":
            self.confirm(ui)
        elif k == "back":
            if self.amount[p]:
                self.amount[p] = 0
            else:
                ui.pop()
        elif k == "turn":
            ui.pop()                    # never a turn end with an entry half typed

    def confirm(self, ui):
        ev = {"ev": "lp"}
        for q in ("A", "B"):
            if self.amount[q]:
                ev[q] = self.delta(q)
        if len(ev) == 1:
            ui.pop()
            return
        ev["by"] = self.p
        if ui.record(ev):
            ui.pop()


class Menu:
    """A list to pick from: items are (label, action(ui)). up/down move, a/ok pick, b/back leave."""
    name = "menu"

    def __init__(self, items, title=""):
        self.items = items
        self.title = title
        self.cursor = 0

    def key(self, ui, k):
        if k in ("up", "up_fast"):
            self.cursor = (self.cursor - 1) % len(self.items)
        elif k in ("down", "down_fast"):
            self.cursor = (self.cursor + 1) % len(self.items)
        elif k in ("a", "ok"):
            self.items[self.cursor][1](ui)
        elif k in ("b", "back"):
            ui.pop()
        elif len(k) == 1 and k.isdigit() and 0 < int(k) <= len(self.items):
            self.cursor = int(k) - 1
            self.items[self.cursor][1](ui)


class PickAB(Menu):
    """A choice between A and B (and maybe more: Draw, Both): a and b pick directly; ok, or
    menu on boards without an ok key, picks the item under the cursor."""

    def key(self, ui, k):
        if k in ("a", "b"):
            for label, action in self.items:
                if label == k.upper():
                    action(ui)
                    return
        Menu.key(self, ui, "ok" if k == "menu" else k)


class Confirm:
    """An event that every player in `need` confirms with their own key; back cancels."""
    name = "confirm"

    def __init__(self, title, ev, need):
        self.title = title
        self.ev = ev
        self.need = need
        self.done = []

    def key(self, ui, k):
        p = k.upper()
        if k in ("a", "b") and p in self.need and p not in self.done:
            self.done.append(p)
            if len(self.done) == len(self.need):
                if ui.record(self.ev):
                    ui.home()
                else:
                    ui.pop()
        elif k == "back":
            ui.pop()


class Record:
    """The written-style sheet of the current duel, scrollable."""
    name = "record"

    def __init__(self):
        self.scroll = 0                 # lines up from the bottom

    def key(self, ui, k):
        if k in ("up", "up_fast"):
            self.scroll += 1 if k == "up" else 5
        elif k in ("down", "down_fast"):
            self.scroll = max(0, self.scroll - (1 if k == "down" else 5))
        elif k in ("back", "b", "ok", "a", "menu"):
            ui.pop()


class Number:
    """A number typed with digits or stepped: ok gives it to `done(ui, value)`."""
    name = "number"

    def __init__(self, title, value, step, done):
        self.title = title
        self.value = value
        self.step = step
        self.done = done
        self.typed = False

    def key(self, ui, k):
        if k in DIGITS:
            base = 0 if not self.typed else self.value
            self.typed = True
            v = base * 10 + int(k) if len(k) == 1 else base * (10 ** len(k))
            if v < 10 ** MAX_AMOUNT_DIGITS:
                self.value = v
        elif k in STEPS:
            self.value = max(0, self.value + (self.step if STEPS[k] > 0 else -self.step) *
                             (10 if k.endswith("_fast") else 1))
        elif k in ("ok", "a"):
            self.done(ui, self.value)
        elif k in ("back", "b"):
            ui.pop()


class Pin:
    """Judge PIN: digits on a keypad, or up/down to set a digit and `a` to add it; ok (or
    menu, on boards without an ok key) submits. A right PIN pops it and calls then(ui, role)
    (default: the judge menu)."""
    name = "pin"

    def __init__(self, then=None):
        self.digits = ""
        self.cur = 0
        self.then = then or _judge_menu

    def key(self, ui, k):
        if ui.locked_ms():
            if k in ("back", "b"):
                ui.pop()
            return
        if len(k) == 1 and k.isdigit():
            self.digits += k
        elif k in ("up", "down"):
            self.cur = (self.cur + (1 if k == "up" else 9)) % 10
        elif k == "a":
            self.digits += str(self.cur)
            self.cur = 0
        elif k in ("ok", "menu"):
            role = ui.check_pin(self.digits)
            self.digits = ""
            if role is None:
                ui.say(ui.t("pin_wrong", PIN_TRIES - ui.pin_wrong) if not ui.locked_ms()
                       else ui.t("locked", ui.locked_ms() // 1000))
                ui.alert(1, 0)
                return
            ui.pop()
            self.then(ui, role)
        elif k == "back" or k == "b":
            ui.pop()


def _judge_menu(ui, role):
    ui.push(Menu(judge_menu(ui, role), ui.t("head_judge" if role == "head" else "floor_judge")))


# --- flows ----------------------------------------------------------------------------

def main_menu(ui):
    m = ui.match
    items = []
    if m is not None:
        items.append((ui.t("record"), lambda u: u.push(Record())))
        if m.in_duel:
            items.append((ui.t("duel_over"), lambda u: u.push(pick_winner(u))))
            items.append((ui.t("surrender"), lambda u: u.push(pick_surrender(u))))
        elif not m.over and m.seated["A"] and m.seated["B"]:
            items.append((ui.t("start_duel"), lambda u: u.push(pick_first(u))))
    items.append((ui.t("judge"), lambda u: u.push(Pin())))
    items.append((ui.t("language"), lambda u: u.push(Menu([(l, _set_lang(l)) for l in LANGS],
                                                          u.t("language")))))
    items.append((ui.t("call_judge"), _call_judge))
    return items


def _call_judge(ui):
    # Shown on the desk's tile until a judge enters a PIN here.
    ui.judge_called = True
    ui.say(ui.t("judge_called"))
    ui.home()


def _set_lang(lang):
    def act(ui):
        ui.lang = lang
        ui.home()
    return act


def _then_record(ev):
    def act(ui):
        if ui.record(dict(ev)):
            ui.home()
    return act


def pick_first(ui):
    return PickAB([(p, _then_record({"ev": "duel_start", "first": p})) for p in ("A", "B")],
                  ui.t("pick_first"))


def pick_winner(ui):
    def confirm(w):
        return lambda u: u.push(Confirm(u.t("both_confirm"), {"ev": "duel_end", "winner": w}, ("A", "B")))
    return PickAB([("A", confirm("A")), ("B", confirm("B")), (ui.t("draw"), confirm("draw"))],
                  ui.t("who_won"))


def pick_surrender(ui):
    def confirm(p):
        def act(u):
            why = u.match.surrender_refusal(p)
            if why:
                u.say(u.t("refused", why))   # the rule's reason: play on or call a judge
                u.home()
                return
            u.push(Confirm(u.t("both_confirm"), {"ev": "surrender", "p": p}, ("A", "B")))
        return act
    return PickAB([("A", confirm("A")), ("B", confirm("B"))], ui.t("who_surrenders"))


def judge_menu(ui, role):
    # Open after the match too, until the next round starts: a penalty then is recorded
    # (after_match) and changes nothing else (rules.md 5).
    items = [(ui.t("penalty"), lambda u: u.push(_pick_player(u, lambda u2, p: u2.push(_pick_code(u2, role, p)),
                                                             True)))]
    if ui.match is not None and ui.match.in_duel:
        items.append((ui.t("lp_fix"), lambda u: u.push(_pick_player(u, _fix_for))))
    items.append((ui.t("void"), lambda u: u.push(_pick_player(u, _void))))
    if ui.extend_ok and role == "head":
        items.append((ui.t("extend"), lambda u: u.push(Number(u.t("minutes"), 3, 1, _extend))))
    items.append((ui.t("back"), lambda u: u.home()))
    return items


def _pick_player(ui, then, both=False):
    items = [(p, (lambda q: lambda u: then(u, q))(p)) for p in ("A", "B")]
    if both:                    # one penalty for both players at once (p "both", rules.md 5)
        items.append((ui.t("both"), lambda u: then(u, "both")))
    return PickAB(items, ui.t("which_player"))


def _pick_code(ui, role, p):
    rules = ui.match.rules if ui.match else "ID"
    items = []
    for code in catalogue.codes(rules):
        items.append((catalogue.name(code, ui.lang), (lambda c: lambda u: u.push(_pick_kind(u, role, p, c)))(code)))
    return Menu(items, ui.t("penalty") + " " + (ui.t("both") if p == "both" else p))


def _pick_kind(ui, role, p, code):
    rules = ui.match.rules if ui.match else "ID"
    usual = catalogue.guideline(code, rules) or ()
    kinds = list(usual) + [k for k in catalogue.KINDS if k not in usual]
    if rules == "ID" and role != "head" and code != "tardiness":
        kinds = [k for k in kinds if k not in ("match_loss", "dq", "dq_prizes")]
    items = []
    for kind in kinds:
        label = catalogue.kind_name(kind, ui.lang) + (" *" if kind in usual else "")
        ev = {"ev": "penalty", "p": p, "kind": kind, "code": code, "judge": role}
        items.append((label, _then_record(ev)))
    return Menu(items, ui.t("kind"))


def _fix_for(ui, p):
    def done(u, value):
        if u.record({"ev": "judge_fix", "p": p, "lp": value}):
            u.home()
    ui.push(Number(ui.t("new_lp", p), ui.match.lp[p], 100, done))


def _void(ui, p):
    if ui.record({"ev": "judge_void", "p": p, "code": "tardiness"}):
        ui.home()


def _extend(ui, minutes):
    if minutes and ui.record({"ev": "extend", "ms": minutes * 60000}):
        ui.home()
