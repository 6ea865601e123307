# Every screen a table shows, reached the way players reach them: a Ui driven by key intents
# and ticks, then core.view.build. Shared by the framebuf goldens (under MicroPython,
# tests/upy/test_render_fb.py) and the displayio goldens (CPython, tests/host/test_golden_dio.py).
# Pure: core imports only, so both interpreters build the very same Screens.
from duelclock.core.screens import Pin, SelfTest, Unlock
from duelclock.core.sign import pin_hash, table_key, unlock_code
from duelclock.core.ui import Ui
from duelclock.core.view import build

MIN = 60000
SEC = 1000
SYNC_S = 4                      # the sync age every status line shows


def table(lang="en", **start):
    pins = {"floor": pin_hash("1111", b"salt", 2), "head": pin_hash("2222", b"salt", 2)}
    ui = Ui(7, lambda ev: None, pins=pins, lang=lang)
    ev = {"t": 0, "ev": "round_start", "round": 2, "kind": "swiss",
          "names": {"A": "Kim", "B": "Budi"}}
    for k in start:
        ev[k] = start[k]
    ui.start_round(ev)
    return ui


def keys(ui, t, *ks):
    for k in ks:
        ui.key(k, t)


def idle_until(ui, t):
    """A key nobody's screen reacts to at home, so the screen is not dimmed at t."""
    keys(ui, t, "up")


def _duel_over(ui, t, winner):
    """Menu > Duel over > winner (A, B or the Draw item) > both players confirm."""
    keys(ui, t, "menu", "down", "a")
    if winner == "draw":
        keys(ui, t, "down", "down", "ok")
    else:
        keys(ui, t, winner.lower())
    keys(ui, t, "a", "b")


def _in_duel(lang="en", **start):
    """Duel 1 won by Kim, duel 2 under way (Budi first), a few LP entries and turns."""
    ui = table(lang, **start)
    keys(ui, MIN, "a", "a")                             # Kim goes first
    keys(ui, 3 * MIN, "b", "8", "000", "ok")            # Budi to 0: duel 1 to Kim
    keys(ui, 4 * MIN, "b", "b")                         # duel 2: Budi goes first
    keys(ui, 6 * MIN, "a", "1", "5", "00", "ok", "turn")
    keys(ui, 8 * MIN, "b", "2", "000", "ok", "a", "sign", "5", "00", "ok", "turn")
    return ui


def no_round():
    return build(Ui(7, lambda ev: None), 0)


def pre_round():
    return build(table(), 0, SYNC_S)


def check_in():
    ui = table(seating=True)
    keys(ui, -2 * MIN, "a", "a")
    return build(ui, -2 * MIN + 5 * SEC, SYNC_S)


def home():
    ui = _in_duel()
    return build(ui, 8 * MIN + 75 * SEC, SYNC_S, 80)


def turn_long():
    ui = _in_duel()
    idle_until(ui, 12 * MIN)
    return build(ui, 12 * MIN + 10 * SEC, SYNC_S)


def _short_round():
    """A 10-minute round: duel 1 to Budi, duel 2 started at 2:00 by Kim."""
    ui = table(limit_s=600)
    keys(ui, MIN, "a", "a")
    _duel_over(ui, MIN, "B")
    keys(ui, 2 * MIN, "a", "a")
    return ui


def last5():
    ui = _short_round()
    ui.tick(5 * MIN)                                    # the 5-minute notice, gone by 5:28
    idle_until(ui, 5 * MIN + 20 * SEC)
    return build(ui, 5 * MIN + 28 * SEC, SYNC_S)


def time_turn(lang="en"):
    ui = _short_round()
    ui.lang = lang
    idle_until(ui, 10 * MIN + 5 * SEC)
    return build(ui, 10 * MIN + 12 * SEC, SYNC_S)


def extra_turn():
    ui = _short_round()
    keys(ui, 10 * MIN + 40 * SEC, "turn")
    return build(ui, 10 * MIN + 50 * SEC, SYNC_S)


def _sudden_death():
    ui = _short_round()
    keys(ui, 10 * MIN + 40 * SEC, "turn")
    keys(ui, 11 * MIN + 30 * SEC, "turn")
    return ui


def sudden_death():
    return build(_sudden_death(), 11 * MIN + 45 * SEC, SYNC_S)


def flash():
    ui = _sudden_death()
    return build(ui, 11 * MIN + 30 * SEC, SYNC_S, None, True)


def extra_duel():
    """Duels A, draw, B: the fourth is an extra duel of four turns; now turn 3/4."""
    ui = table()
    for i, w in enumerate(("A", "draw", "B")):
        keys(ui, (i * 8 + 1) * MIN, "a", "a")
        _duel_over(ui, (i * 8 + 6) * MIN, w)
    keys(ui, 25 * MIN, "b", "b")
    keys(ui, 27 * MIN, "turn")
    keys(ui, 29 * MIN, "a", "1", "000", "ok", "turn")
    return build(ui, 29 * MIN + 30 * SEC, SYNC_S)


def double_loss():
    ui = table(limit_s=600)
    keys(ui, MIN, "a", "a", "b", "3", "000", "ok")
    idle_until(ui, 10 * MIN)
    return build(ui, 10 * MIN + 3 * SEC, SYNC_S)


def match_result():
    ui = _sudden_death()
    keys(ui, 11 * MIN + 50 * SEC, "a", "1", "00", "ok", "turn")
    return build(ui, 12 * MIN, SYNC_S)


def lp_entry(pressing=None):
    """Budi takes 500 and Kim 1000 in one entry, Kim's being typed."""
    ui = _in_duel()
    keys(ui, 9 * MIN, "b", "5", "00", "a", "1", "000")
    ui.pressing = pressing
    return build(ui, 9 * MIN, SYNC_S)


def home_held(lang="en"):
    """Home with A held, before its release (an entry) or its hold (the menu) decides."""
    ui = _in_duel(lang)
    ui.pressing = ("A", "menu")
    return build(ui, 8 * MIN + 75 * SEC, SYNC_S, 80)


# A held key's hint and the screen it shows over: the one is the other's fields redrawn
HELD = (("home_held", "home"), ("lp_entry_held", "lp_entry"))


def record():
    ui = _in_duel()
    keys(ui, 9 * MIN, "menu", "a")
    return build(ui, 9 * MIN, SYNC_S)


def menu():
    ui = _in_duel()
    keys(ui, 9 * MIN, "menu", "down")
    return build(ui, 9 * MIN, SYNC_S)


def confirm():
    ui = _in_duel()
    keys(ui, 9 * MIN, "menu", "down", "a", "b", "a")     # Budi won; Kim has confirmed
    return build(ui, 9 * MIN, SYNC_S)


def _pin(ui, t):
    keys(ui, t, "menu", "down", "down", "down", "a")     # Record, Duel over, Surrender, Judge


def pin():
    ui = _in_duel()
    _pin(ui, 9 * MIN)
    keys(ui, 9 * MIN, "1", "1", "up", "up", "up")
    return build(ui, 9 * MIN, SYNC_S)


def pin_locked():
    ui = _in_duel()
    _pin(ui, 9 * MIN)
    for i in range(3):
        keys(ui, 9 * MIN, "9", "9", "ok")
    ui.at(ui.up_ms + 3 * SEC)           # the lockout runs on board time
    return build(ui, 9 * MIN + 3 * SEC, SYNC_S)


def _maintenance(lang="en"):
    """A power-on with the maintenance keys held, no round on the table: the challenge,
    drawn from fixed bytes (the board's os.urandom)."""
    draws = [b"\x3a\x91\x07\xc4\x5e", b"\x82\x11\xf0\x09\x6d"]
    ui = Ui(7, lambda ev: None, lang=lang)
    frame = Unlock(table_key(bytes(range(32)), 7), lambda: draws.pop(0), lambda ui: ui.say(
        ui.text("repl_open")))
    ui.push(frame)
    return ui, frame


def maintenance(lang="en"):
    ui, frame = _maintenance(lang)
    keys(ui, 0, "4", "0", "2", "up", "up")
    return build(ui, 0)


def maintenance_wrong():
    ui, frame = _maintenance()
    keys(ui, 0, "1", "2", "3", "4", "5", "6", "ok")       # wrong: a new challenge
    return build(ui, SEC)


def unlocked():
    ui, frame = _maintenance()
    keys(ui, 0, *unlock_code(frame.key_bytes, frame.challenge))
    keys(ui, 0, "ok")
    ui.home()
    return build(ui, SEC)


def pin_no_round():
    """The judge PIN before any round (Menu > Judge): what is typed shows, masked."""
    ui = Ui(7, lambda ev: None, pins={"head": pin_hash("2222", b"salt", 2)})
    ui.push(Pin())
    keys(ui, 0, "2", "2", "down")
    return build(ui, 0, SYNC_S)


def penalty_menu(lang="en"):
    ui = _in_duel(lang)
    _pin(ui, 9 * MIN)
    keys(ui, 9 * MIN, "1", "1", "1", "1", "ok", "a", "b")   # floor judge: Penalty, player B
    keys(ui, 9 * MIN, "down", "down", "down", "down", "down", "down")
    return build(ui, 9 * MIN, SYNC_S)


def penalty_player(lang="en"):
    """A judge's penalty: A, B, or one penalty for both players; the cursor on Both."""
    ui = _in_duel(lang)
    _pin(ui, 9 * MIN)
    keys(ui, 9 * MIN, "1", "1", "1", "1", "ok", "a", "down", "down")
    return build(ui, 9 * MIN, SYNC_S)


def penalty_confirm(lang="en"):
    """A floor judge's penalty, picked and shown whole before OK records it."""
    ui = _in_duel(lang)
    _pin(ui, 9 * MIN)
    keys(ui, 9 * MIN, "1", "1", "1", "1", "ok", "a", "b", "a", "down", "down", "a")
    return build(ui, 9 * MIN, SYNC_S)


def paused(lang="en"):
    """The desk paused the room at 8:30 (a fire alarm): the clocks stand, the banner says so."""
    ui = _in_duel(lang)
    ui.organiser({"t": 8 * MIN + 30 * SEC, "ev": "pause"})
    ui.tick(11 * MIN)
    return build(ui, 11 * MIN, SYNC_S)


def after_match_judge(lang="en"):
    """The match is over (Budi won in sudden death) and the judge menu is still open: a
    penalty given now is recorded after the match."""
    ui = _sudden_death()
    keys(ui, 11 * MIN + 50 * SEC, "a", "1", "00", "ok", "turn")
    ui.lang = lang
    keys(ui, 12 * MIN, "menu", "down", "a", "2", "2", "2", "2", "ok")   # Record, Judge
    return build(ui, 12 * MIN, SYNC_S)


def message():
    """Kim may not surrender at 1-0 down... Budi leads 1-0: Kim's surrender is refused."""
    ui = table()
    keys(ui, MIN, "a", "a")
    _duel_over(ui, MIN, "B")
    keys(ui, 2 * MIN, "a", "b")
    keys(ui, 3 * MIN, "menu", "down", "down", "a", "a")
    return build(ui, 3 * MIN + SEC, SYNC_S)


def dim():
    ui = _in_duel()
    ui.tick(11 * MIN)
    return build(ui, 11 * MIN, SYNC_S)


def home_lang(lang):
    return build(_in_duel(lang), 8 * MIN + 75 * SEC, SYNC_S, 80)


def given(lang="en", shown_s=2):
    """The desk gave 3:00 at 8:30: its notice for a few seconds, then the mark on the
    status line above the clock for the rest of the round."""
    ui = _in_duel(lang)
    ui.organiser({"t": 8 * MIN + 30 * SEC, "ev": "extend", "ms": 3 * MIN})
    return build(ui, 8 * MIN + (30 + shown_s) * SEC, SYNC_S)


def carried(lang="en"):
    """The round pushed before its start with a penalty Kim carries from his last match (a
    match loss given after it): recorded at once, the match is Budi's, and the table says
    why for a minute."""
    ui = table(lang)
    ui.carry({"p": "A", "kind": "match_loss", "code": "unsporting"}, -40 * SEC)
    return build(ui, -30 * SEC, SYNC_S)


def _self_test(step):
    """The judge menu's self-test on a board of three keys: asking for UP (A was pressed),
    its colour pattern, or its outcome (OK never pressed, a low battery)."""
    ui = table()
    ui.board_keys = [("A", ("a", "menu")), ("UP", ("up", "up_fast")), ("OK", ("ok",))]
    ui.probe = lambda: [("wifi", True, "hall -61 dBm"), ("flash", True, "812 KB free"),
                        ("battery", False, "9 %")]
    ui.tick(MIN)
    ui.push(SelfTest(ui))
    build(ui, MIN, SYNC_S)
    keys(ui, MIN, "a")
    if step != "key":
        keys(ui, MIN, "up")
        ui.tick(MIN + 11 * SEC)
        build(ui, MIN + 11 * SEC, SYNC_S)       # OK not pressed within its 10 s
    if step == "result":
        keys(ui, MIN + 11 * SEC, "b")
    return build(ui, MIN + 11 * SEC, SYNC_S)


def _other_digits(text):
    out = ""
    for ch in text:
        out += chr(48 + (ord(ch) - 45) % 10) if "0" <= ch <= "9" else ch
    return out


def ticked(s):
    """A copy of Screen s with what a clock tick or an LP key changes changed: other digits
    in the round clock, the status line, the turn and its clock and the LP entry (the same
    shape of text), other LP. The renderers draw it field by field (layout.Layout.update)
    and must paint what a whole draw of it paints."""
    from duelclock.core.view import FIELDS, Screen
    t = Screen()
    for f in FIELDS:
        setattr(t, f, getattr(s, f))
    for f in ("clock", "status", "turn", "turn_clock", "entry"):
        if getattr(s, f):
            setattr(t, f, _other_digits(getattr(s, f)))
    if s.lp is not None:
        t.lp = (s.lp[0] - 300, s.lp[1] + 1250)
    return t


STATES = (
    ("no_round", no_round),
    ("pre_round", pre_round),
    ("check_in", check_in),
    ("home", home),
    ("turn_long", turn_long),
    ("last5", last5),
    ("time_turn", time_turn),
    ("extra_turn", extra_turn),
    ("sudden_death", sudden_death),
    ("flash", flash),
    ("extra_duel", extra_duel),
    ("double_loss", double_loss),
    ("match_result", match_result),
    ("lp_entry", lp_entry),
    ("lp_entry_held", lambda: lp_entry(("A", "menu"))),
    ("home_held", home_held),
    ("home_held_ko", lambda: home_held("ko")),
    ("record", record),
    ("menu", menu),
    ("confirm", confirm),
    ("pin", pin),
    ("pin_locked", pin_locked),
    ("penalty_menu", penalty_menu),
    ("message", message),
    ("dim", dim),
    ("home_ko", lambda: home_lang("ko")),
    ("home_id", lambda: home_lang("id")),
    ("time_turn_ko", lambda: time_turn("ko")),
    ("penalty_menu_ko", lambda: penalty_menu("ko")),
    ("given", given),
    ("given_ko", lambda: given("ko")),
    ("given_id", lambda: given("id")),
    ("given_later", lambda: given("en", 60)),
    ("penalty_player", penalty_player),
    ("penalty_player_ko", lambda: penalty_player("ko")),
    ("penalty_player_id", lambda: penalty_player("id")),
    ("after_match_judge", after_match_judge),
    ("after_match_judge_ko", lambda: after_match_judge("ko")),
    ("after_match_judge_id", lambda: after_match_judge("id")),
    ("penalty_confirm", penalty_confirm),
    ("penalty_confirm_ko", lambda: penalty_confirm("ko")),
    ("paused", paused),
    ("paused_id", lambda: paused("id")),
    ("carried", carried),
    ("carried_ko", lambda: carried("ko")),
    ("carried_id", lambda: carried("id")),
    ("maintenance", maintenance),
    ("maintenance_ko", lambda: maintenance("ko")),
    ("maintenance_wrong", maintenance_wrong),
    ("unlocked", unlocked),
    ("pin_no_round", pin_no_round),
    ("self_test_key", lambda: _self_test("key")),
    ("self_test_pattern", lambda: _self_test("pattern")),
    ("self_test_result", lambda: _self_test("result")),
)
