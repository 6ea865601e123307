# The table's screens: frames on the Ui's stack, and the menu flows between them. Pure.
#
# The top frame takes the keys (`key(ui, k)`) and tells the view what its body shows
# (`show(ui, s, m)` fills title, lines, cursor, entry of a view.Screen while a round is on;
# `mode` is the layout the renderers draw it with). State that outlives a frame (the match,
# messages, alerts, PINs) is the Ui's: frames ask it and record through `ui.record`.
#
#   Home --a/b, in a duel--> Entry --ok / same key--> lp event --> Home
#     |  --a/b, no duel----> Pick "who goes first" --> duel_start
#     |  --a/b, not seated-> Confirm check-in --> seated
#     |  --turn--> turn_end      --undo--> undo
#     +--menu--> Menu: Record | Duel over | Surrender | Start duel | Judge | Language | Call
#                  Duel over --> Pick winner --> Both confirm --> duel_end
#                  Surrender --> Pick player --> Both confirm --> surrender (or the rule's reason)
#                  Judge --> Pin --(floor|head)--> Judge menu: Penalty | LP fix | Void | Extend
#                                                  Penalty --> A | B | Both --> code --> kind
#                                                  each --> JudgeConfirm (shown) --ok--> event
#
# Nothing is recorded that nobody confirmed: events leave only from frames reached by an
# explicit ok (or a player's own key). A judge's event is shown whole before its ok, and
# nothing match-ending is ever under the cursor first (penalty kinds list mildest first). A menu item is (label, action, arg): picking it calls
# action(ui, arg), a plain function of this module.
from . import catalogue
from .lang import LANGS
from .sheet import record_lines
from .sign import challenge, unlock_code

KEY_WAIT_MS = 10000             # the self-test: a key not pressed this long is noted missing

MAX_AMOUNT_DIGITS = 6
DIGITS = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "00", "000")
STEPS = {"up": 100, "down": -100, "up_fast": 1000, "down_fast": -1000}
AB = ("A", "B")


def _typed(value, k):
    """`value` with digit key `k` typed after it, or None past MAX_AMOUNT_DIGITS."""
    v = value * 10 + int(k) if len(k) == 1 else value * (10 ** len(k))
    return v if v < 10 ** MAX_AMOUNT_DIGITS else None


class Home:
    mode = "home"
    # What holding a key does here, shown while it is held (view._pressing): long -> text
    HOLD = {"menu": "hold_menu", "turn": "hold_turn", "undo": "hold_undo"}

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
                ui.push(Confirm(ui.text("check_in"), {"ev": "seated", "p": p}, (p,)))
            elif m.in_duel:
                ui.push(Entry(p))
            else:
                ui.push(pick_first(ui))
        elif k == "turn":
            ui.record({"ev": "turn_end"})
        elif k == "undo":
            ui.record({"ev": "undo"})
        elif k in DIGITS:
            ui.say(ui.text("pick_player"))

    def show(self, ui, s, m):
        if m.phase() == "waiting" and m.seating:
            s.lines = ["%s: %s" % (ui.names[i], ui.text("seated" if m.seated[AB[i]] else "absent"))
                       for i in (0, 1)]


class Entry:
    """An LP change being typed: amounts for one or both players, damage unless `sign`."""
    mode = "entry"
    HOLD = {"menu": "hold_sign", "sign": "hold_sign", "turn": "hold_cancel"}

    def __init__(self, p):
        self.p = p
        self.amount = {"A": 0, "B": 0}
        self.gain = {"A": False, "B": False}

    def delta(self, p):
        return self.amount[p] if self.gain[p] else -self.amount[p]

    def key(self, ui, k):
        p = self.p
        if k in DIGITS:
            a = _typed(self.amount[p], k)
            if a is not None:
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
        for q in AB:
            if self.amount[q]:
                ev[q] = self.delta(q)
        if len(ev) == 1:
            ui.pop()
            return
        ev["by"] = self.p
        if ui.record(ev):
            ui.pop()

    def show(self, ui, s, m):
        p = self.p
        before = m.lp[p]
        d = self.delta(p)
        s.entry = ui.text("entry", ui.names[AB.index(p)], before, "+" if d >= 0 else "-",
                          abs(d), max(0, before + d))
        o = "B" if p == "A" else "A"
        if self.amount[o]:
            od = self.delta(o)
            s.lines = ["%s: %+d = %d" % (ui.names[AB.index(o)], od, max(0, m.lp[o] + od))]
        s.title = ui.text("confirm_key")


class Menu:
    """A list to pick from: items are (label, action, arg). up/down move, a/ok pick,
    b/back leave, a digit picks that item."""
    mode = "menu"

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
            _act(ui, self.items[self.cursor])
        elif k in ("b", "back"):
            ui.pop()
        elif len(k) == 1 and k.isdigit() and 0 < int(k) <= len(self.items):
            self.cursor = int(k) - 1
            _act(ui, self.items[self.cursor])

    def show(self, ui, s, m):
        s.title = self.title or ui.text("menu")
        s.lines = [item[0] for item in self.items]
        s.cursor = self.cursor


def _act(ui, item):
    item[1](ui, item[2])


class PickAB(Menu):
    """A choice between A and B (and maybe more: Draw, Both): a and b pick directly; ok, or
    menu on boards without an ok key, picks the item under the cursor."""

    def key(self, ui, k):
        if k in ("a", "b"):
            for item in self.items:
                if item[0] == k.upper():
                    _act(ui, item)
                    return
        Menu.key(self, ui, "ok" if k == "menu" else k)


class Confirm:
    """An event that every player in `need` confirms with their own key; back cancels."""
    mode = "confirm"

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

    def show(self, ui, s, m):
        s.title = self.title
        s.lines = ["%s: %s" % (p, ui.text("confirmed") if p in self.done else "...")
                   for p in self.need]


class JudgeConfirm:
    """A judge's event shown before it is recorded (`lines` say what it does): ok, or menu
    on boards without an ok key, records it and goes home; back or b cancels."""
    mode = "confirm"

    def __init__(self, ev, lines):
        self.ev = ev
        self.lines = lines

    def key(self, ui, k):
        if k in ("ok", "menu"):
            _record_home(ui, self.ev)
        elif k in ("back", "b"):
            ui.pop()

    def show(self, ui, s, m):
        s.title = ui.text("judge_ok")
        s.lines = self.lines


class Record:
    """The written-style sheet of the current duel, scrollable."""
    mode = "record"

    def __init__(self):
        self.scroll = 0                 # lines up from the bottom

    def key(self, ui, k):
        if k in ("up", "up_fast"):
            self.scroll += 1 if k == "up" else 5
        elif k in ("down", "down_fast"):
            self.scroll = max(0, self.scroll - (1 if k == "down" else 5))
        elif k in ("back", "b", "ok", "a", "menu"):
            ui.pop()

    def show(self, ui, s, m):
        s.title = ui.text("record")
        lines = record_lines(ui.sheet)
        s.lines = lines[:max(1, len(lines) - self.scroll)]


class Number:
    """A number typed with digits or stepped: ok gives it to `done(ui, value, arg)`."""
    mode = "number"

    def __init__(self, title, value, step, done, arg=None):
        self.title = title
        self.value = value
        self.step = step
        self.done = done
        self.arg = arg
        self.typed = False

    def key(self, ui, k):
        if k in DIGITS:
            v = _typed(self.value if self.typed else 0, k)
            self.typed = True
            if v is not None:
                self.value = v
        elif k in STEPS:
            self.value = max(0, self.value + (self.step if STEPS[k] > 0 else -self.step) *
                             (10 if k.endswith("_fast") else 1))
        elif k in ("ok", "a"):
            self.done(ui, self.value, self.arg)
        elif k in ("back", "b"):
            ui.pop()

    def show(self, ui, s, m):
        s.title = self.title
        s.lines = [str(self.value)]


class Pin:
    """Judge PIN: digits on a keypad, or up/down to set a digit and `a` to add it; ok (or
    menu, on boards without an ok key) submits. A right PIN pops it and calls then(ui, role)
    (default: the judge menu)."""
    mode = "pin"

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
            self.submit(ui)
            self.digits = ""
            self.cur = 0
        elif k == "back" or k == "b":
            ui.pop()

    def submit(self, ui):
        role = ui.check_pin(self.digits)
        if role is not None:
            ui.pop()
            self.then(ui, role)

    def typed(self, ui, locked):
        """The line of what is typed (masked), or the lockout."""
        return ui.text("locked", locked // 1000) if locked else "*" * len(self.digits) + "_"

    def show(self, ui, s, m):
        locked = ui.locked_ms()
        s.title = ui.text("pin")
        s.lines = [self.typed(ui, locked),
                   "" if locked or self.digits == "" and self.cur == 0 else str(self.cur)]


class Unlock(Pin):
    """Maintenance: the desk's one-time code for the challenge shown (sign.unlock_code of
    the table's key). `draw()` gives fresh random bytes (the app's os.urandom: core stays
    pure); every try, right or wrong, draws a new challenge, so no code is taken twice. A
    wrong code counts towards the PIN lockout. The right one pops it and calls then(ui)."""

    def __init__(self, tbl_key, draw, then):
        Pin.__init__(self, then)
        self.key_bytes = tbl_key
        self.draw = draw
        self.challenge = challenge(draw())

    def submit(self, ui):
        want = unlock_code(self.key_bytes, self.challenge)
        self.challenge = challenge(self.draw())           # this one is spent
        if ui.check_unlock(self.digits, want):
            ui.pop()
            self.then(ui)

    def show(self, ui, s, m):
        # Two short lines, so the challenge fits the smallest screen too: the challenge (the
        # title says what it is for), then what is typed and the digit up/down set.
        locked = ui.locked_ms()
        c = self.challenge
        s.title = ui.text("maintenance")
        s.lines = [c[:4] + " " + c[4:], self.typed(ui, locked) + (
            "" if locked or self.digits == "" and self.cur == 0 else " " + str(self.cur))]


# --- flows: a menu item's action(ui, arg) -----------------------------------------------

def main_menu(ui):
    m = ui.match
    items = []
    if m is not None:
        items.append((ui.text("record"), _push, Record))
        if m.in_duel:
            items.append((ui.text("duel_over"), _push_made, pick_winner))
            items.append((ui.text("surrender"), _push_made, pick_surrender))
        elif not m.over and m.seated["A"] and m.seated["B"]:
            items.append((ui.text("start_duel"), _push_made, pick_first))
    items.append((ui.text("judge"), _push, Pin))
    items.append((ui.text("language"), _push_made, _languages))
    items.append((ui.text("call_judge"), _call_judge, None))
    return items


def _push(ui, frame_class):
    ui.push(frame_class())


def _push_made(ui, make):
    ui.push(make(ui))


def _home(ui, _):
    ui.home()


def _record_home(ui, ev):
    """Record `ev` (a copy: a menu may be picked again) and go home once it is."""
    if ui.record(dict(ev)):
        ui.home()


def _call_judge(ui, _):
    # Shown here (view.build) and on the desk's tile until a judge enters a PIN here.
    ui.judge_called = True
    ui.home()


def _languages(ui):
    return Menu([(lang, _set_lang, lang) for lang in LANGS], ui.text("language"))


def _set_lang(ui, lang):
    ui.lang = lang
    ui.home()


def pick_first(ui):
    return PickAB([(p, _record_home, {"ev": "duel_start", "first": p}) for p in AB],
                  ui.text("pick_first"))


def _both_confirm(ui, ev):
    ui.push(Confirm(ui.text("both_confirm"), ev, AB))


def pick_winner(ui):
    return PickAB([(w, _both_confirm, {"ev": "duel_end", "winner": w}) for w in AB] +
                  [(ui.text("draw"), _both_confirm, {"ev": "duel_end", "winner": "draw"})],
                  ui.text("who_won"))


def _surrender(ui, p):
    why = ui.match.surrender_refusal(p)
    if why:
        ui.say(ui.text("refused", why))    # the rule's reason: play on or call a judge
        ui.home()
        return
    _both_confirm(ui, {"ev": "surrender", "p": p})


def pick_surrender(ui):
    return PickAB([(p, _surrender, p) for p in AB], ui.text("who_surrenders"))


def _judge_menu(ui, role):
    # Open after the match too, until the next round starts: a penalty then is recorded
    # (after_match) and changes nothing else (rules.md 5).
    items = [(ui.text("penalty"), _pick_player, (_pick_code, role, True))]
    if ui.match is not None and ui.match.in_duel:
        items.append((ui.text("lp_fix"), _pick_player, (_fix_for, role, False)))
    items.append((ui.text("void"), _pick_player, (_void, role, False)))
    if ui.judge_extend and role == "head":
        items.append((ui.text("extend"), _push_made, _minutes))
    if ui.probe is not None:
        items.append((ui.text("self_test"), _push_made, SelfTest))
    items.append((ui.text("back"), _home, None))
    ui.push(Menu(items, ui.text("head_judge" if role == "head" else "floor_judge")))


def _pick_player(ui, how):
    """how = (then, role, both): a PickAB of A, B (and Both: one penalty for both players
    at once, p "both", rules.md 5) that calls then(ui, (role, p))."""
    then, role, both = how
    items = [(p, then, (role, p)) for p in AB]
    if both:
        items.append((ui.text("both"), then, (role, "both")))
    ui.push(PickAB(items, ui.text("which_player")))


def _rules(ui):
    return ui.match.rules if ui.match else "ID"


def _pick_code(ui, who):
    role, p = who
    items = [(catalogue.name(code, ui.lang), _pick_kind, (role, p, code))
             for code in catalogue.codes(_rules(ui))]
    ui.push(Menu(items, ui.text("penalty") + " " + (ui.text("both") if p == "both" else p)))


def _pick_kind(ui, what):
    # The kinds the engine would take from this judge now (Match.check: under ID a floor
    # judge gives no match loss or DQ), mildest first, the guideline's marked *. The cursor
    # starts on the mildest: the judge moves to a duel loss, it is never pre-selected.
    role, p, code = what
    m = ui.match
    usual = catalogue.guideline(code, _rules(ui)) or ()
    items = []
    for kind in catalogue.KINDS:
        ev = {"ev": "penalty", "p": p, "kind": kind, "code": code, "judge": role}
        if m is None or m.check(dict(ev, t=ui.now_ms)) is None:
            label = catalogue.kind_name(kind, ui.lang) + (" *" if kind in usual else "")
            items.append((label, _confirm, (ev, [
                ui.text("penalty") + " " + (ui.text("both") if p == "both" else p),
                catalogue.name(code, ui.lang), catalogue.kind_name(kind, ui.lang)])))
    ui.push(Menu(items, ui.text("kind")))


def _confirm(ui, what):
    ev, lines = what
    ui.push(JudgeConfirm(ev, lines))


def _fix_for(ui, who):
    p = who[1]
    ui.push(Number(ui.text("new_lp", p), ui.match.lp[p], 100, _fix, p))


def _fix(ui, value, p):
    _confirm(ui, ({"ev": "judge_fix", "p": p, "lp": value},
                  [ui.text("lp_fix") + " " + p, "%d > %d" % (ui.match.lp[p], value)]))


def _void(ui, who):
    _confirm(ui, ({"ev": "judge_void", "p": who[1], "code": "tardiness"},
                  [ui.text("void") + " " + who[1]]))


def _minutes(ui):
    return Number(ui.text("minutes"), 3, 1, _extend)


def _extend(ui, minutes, _):
    if minutes:
        _confirm(ui, ({"ev": "extend", "ms": minutes * 60000},
                      [ui.text("extend"), "+%d:00" % minutes]))


class SelfTest:
    """The board's self-test from the judge menu, in three steps:

      keys     each physical key asked for in turn (ui.board_keys: any of its intents
               counts); one not pressed within KEY_WAIT_MS is noted and the next asked
      pattern  every colour of the display's palette in bars, until a key
      checks   ui.probe()'s checks (Wi-Fi and its signal, battery, free flash) and the
               keys' outcome, under OK or FAILED, until a key (home)

    What provisioning checks over the REPL (selftest.py), with a judge's eyes and fingers."""
    mode = "menu"

    def __init__(self, ui):
        self.keys = ui.board_keys
        self.i = 0
        self.asked_at = None
        self.missed = []
        self.step = "keys" if self.keys else "pattern"
        self.results = None

    def key(self, ui, k):
        if self.step == "keys":
            if k in self.keys[self.i][1]:
                self._next(ui)
        elif self.step == "pattern":
            self.step = "checks"
            self.results = ui.probe()
        else:
            ui.home()

    def _next(self, ui):
        self.i += 1
        self.asked_at = ui.now_ms
        if self.i == len(self.keys):
            self.step = "pattern"

    def show(self, ui, s, m):
        s.title = ui.text("self_test")
        if self.step == "keys":
            if self.asked_at is None:
                self.asked_at = ui.now_ms
            elif ui.now_ms - self.asked_at > KEY_WAIT_MS:
                self.missed.append(self.keys[self.i][0])
                self._next(ui)
                return self.show(ui, s, m)
            s.lines = [ui.text("press_key", self.keys[self.i][0])]
        elif self.step == "pattern":
            s.mode = "pattern"
        else:
            lines = []
            if self.keys:
                lines.append(ui.text("keys_missed", " ".join(self.missed)) if self.missed
                             else ui.text("keys_ok", len(self.keys)))
            ok = not self.missed
            for name, good, detail in self.results:
                ok = ok and good
                lines.append("%s %s %s" % (name, "ok" if good else "FAIL", detail))
            s.title = ui.text("test_ok" if ok else "test_failed")
            s.lines = lines

