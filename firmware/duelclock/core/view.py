# What each screen shows, independent of any display: a Screen built from the Ui's state.
# The view fills what every screen has (status, clock, banner, LP, turn); the frame on top
# of the Ui's stack fills its body and names its layout (screens.py: mode, show). Renderers
# (render_fb for framebuf, render_dio for displayio) lay a Screen out for their display
# size; they never look at the match themselves. Pure.
from .sheet import clock, LAST_MINUTES_MS, LONG_TURN_MS
from .ui import MESSAGE_MS

IDLE_DIM_MS = 120000            # dim after 2 minutes without a key (the clock stays readable)


class Screen:
    """The view model. Text is already in the table's language.
    mode     the top frame's layout: home | entry | menu | confirm | record | number | pin,
             or pre (home before a round)
    status   top line: table, round, sync ("synced", or how old the last one is), battery
    clock    round clock text; clock_style: normal | last5 | time | over
    banner   the state players must not miss (TIME, EXTRA TURN n/N, SUDDEN DEATH, result)
    lp, names, wins   per player, (A, B)
    turn     "Turn 5 B" and turn_clock "3:12"; turn_long past 3:00
    title, lines, cursor   the body of menus, the record, confirmations
    entry    the LP entry preview "B: 8000 - 1500 = 6500"
    message  a transient notice; flash (alert) and dim (idle) for the renderer"""

    def __init__(self):
        self.clear()

    def clear(self):
        """As made: build() fills a Screen again (the app keeps two, no new one a frame)."""
        self.mode = "home"
        self.status = ""
        self.clock = ""
        self.clock_style = "normal"
        self.banner = None
        self.lp = None
        self.names = ("A", "B")
        self.wins = (0, 0)
        self.turn = ""
        self.turn_clock = ""
        self.turn_long = False
        self.title = ""
        self.lines = ()
        self.cursor = -1
        self.entry = None
        self.message = None
        self.flash = False
        self.dim = False


FIELDS = ("mode", "status", "clock", "clock_style", "banner", "lp", "names", "wins", "turn",
          "turn_clock", "turn_long", "title", "lines", "cursor", "entry", "message", "flash",
          "dim")


def same(a, b):
    """Do Screens a and b show the same (b may be None)? The app draws no frame when so.
    Field by field: comparing the instances' dicts allocated about 0.8 KB a frame."""
    if b is None:
        return False
    for f in FIELDS:
        if getattr(a, f) != getattr(b, f):
            return False
    return True


def build(ui, now_ms, sync_age_s=None, battery_pct=None, flash=False, idle_dim_ms=IDLE_DIM_MS,
          into=None):
    """The Screen of `ui` at desk ms now_ms: a new one, or `into` cleared and filled."""
    s = Screen() if into is None else into
    if into is not None:
        s.clear()
    m = ui.match
    frame = ui.stack[-1]
    # "pre": home before a round (home is the bottom of the stack, never above it)
    s.mode = frame.mode if m is not None or len(ui.stack) > 1 else "pre"
    s.status = _status(ui, sync_age_s, battery_pct)
    s.names = ui.names
    s.message = ui.current_message(now_ms) or _standing_message(ui, m, now_ms)
    s.flash = flash
    s.dim = now_ms - ui.last_key_ms > idle_dim_ms and not flash
    if m is None:
        if len(ui.stack) > 1:           # a menu, the PIN or maintenance before any round
            frame.show(ui, s, m)
        else:
            s.banner = ui.text("waiting")
        if ui.pressing is not None:
            _pressing(ui, s, frame)
        return s
    _clock(s, ui, m, now_ms)
    s.banner = _banner(ui, m)
    s.wins = _pair(_WINS, m.wins["A"], m.wins["B"])
    s.lp = _pair(_LP, m.lp["A"], m.lp["B"])
    if m.in_duel:
        s.turn = _turn_text(ui, m)
        turn_ms = turn_shown_ms(m, now_ms)
        s.turn_clock = _clock_text(_TURN_CLOCK, "", turn_ms)
        s.turn_long = turn_ms > LONG_TURN_MS
    frame.show(ui, s, m)
    if ui.pressing is not None:
        _pressing(ui, s, frame)
    return s


_PRESSING = [None, None, None, None]    # lang, pressing, frame's HOLD -> "[A] hold: menu"


def _pressing(ui, s, frame):
    """A key held and not yet decided (Keys.waiting) shows at once on the LP path's frames
    (home: in the status line; the entry: in its title): "[A] hold: menu", what the hold
    will do there (the frame's HOLD: long intent -> text key). Both are fields the
    renderers draw alone. Other frames (menus) have no HOLD and show the outcome only."""
    hold = getattr(frame, "HOLD", None)
    if hold is None:
        return
    memo = _PRESSING
    if memo[0] != ui.lang or memo[1] is not ui.pressing or memo[2] is not hold:
        memo[0], memo[1], memo[2] = ui.lang, ui.pressing, hold
        name, long = ui.pressing
        text = ui.text("pressing", name)
        if long in hold:
            text += " " + ui.text(hold[long])
        memo[3] = text
    if s.mode == "home" or s.mode == "pre":
        s.status = memo[3]
    else:
        s.title = memo[3]


def turn_shown_ms(m, now_ms):
    """The turn clock as shown: the round clock's seconds since the edge of its nearest
    the turn's start, so its second turns at the round clock's (an idle screen changes once
    a second, not at two phases). Each second turns within half a second of the turn's own;
    0 at first."""
    left = m.remaining_ms(now_ms)
    return max(0, ((left + m.turn_ms(now_ms) - 500) // 1000 - left // 1000) * 1000)


def _standing_message(ui, m, now_ms):
    """What the message line says when nothing was said just now: a function of the time
    and the table's state, so a reboot shows the same. "5 MINUTES LEFT" for the few
    seconds after 5:00 left; a judge call until a judge's PIN clears it."""
    if m is not None and not m.over and not m.time_called:
        left = m.remaining_ms(now_ms)
        if LAST_MINUTES_MS - MESSAGE_MS < left <= LAST_MINUTES_MS:
            return ui.text("five_left")
    if ui.judge_called:
        return ui.text("judge_called")
    return None


# The last text made and what it was made from (language, then the values): a text is
# formatted again only when one of those changed, so a frame a second makes no new string
# for what did not change. Any Ui may ask: the values are the key.
_TURN = [None, None, None, None]        # lang, turn, player -> "Turn 3 B"
_HEAD = [None] * 8     # lang, table, round, ms given -> "T7 R2 +3:00 ", "sync %s",
                        # "... no sync", "... synced"
FRESH_S = 60            # a sync this recent shows as "synced": the status line changes only
                        # when the link has been quiet a minute, then once a minute


_WINS = [None]          # the last (A, B) pair made of each: the same values, the same tuple
_LP = [None]


def _pair(memo, a, b):
    p = memo[0]
    if p is None or p[0] != a or p[1] != b:
        p = memo[0] = (a, b)
    return p


def _turn_text(ui, m):
    memo = _TURN
    p = m.turn_player()
    if memo[0] != ui.lang or memo[1] != m.turn or memo[2] != p:
        memo[0], memo[1], memo[2] = ui.lang, m.turn, p
        memo[3] = ui.text("turn", m.turn, p)
    return memo[3]


def _status(ui, sync_age_s, battery_pct):
    m = ui.match
    rnd = None if m is None else m.round_no
    given = 0 if m is None else m.limit_ms - ui.limit0_ms   # time given this round, kept
    memo = _HEAD
    if memo[0] != ui.lang or memo[1] != ui.table_no or memo[2] != rnd or memo[3] != given:
        memo[0], memo[1], memo[2], memo[3] = ui.lang, ui.table_no, rnd, given
        head = "T%d" % ui.table_no
        if m is not None:
            head += " R%d" % rnd
            if given > 0:
                head += " +" + clock(given)
        memo[4] = head + " "
        memo[5] = ui.text("sync")
        memo[6] = memo[4] + ui.text("no_sync")
        memo[7] = memo[4] + ui.text("synced")
    if sync_age_s is None:
        text = memo[6]
    elif sync_age_s < FRESH_S:
        text = memo[7]
    else:
        text = memo[4] + memo[5] % _age(sync_age_s)
    if battery_pct is not None:
        text += " " + ui.text("battery", battery_pct)
    return text


def _age(s):
    return "%dm" % (s // 60) if s < 5400 else "%dh" % (s // 3600)


# The clocks' last texts: [prefix, second, text] each. A clock is formatted once a second
# it shows, not once a frame: a key's frame between two ticks makes no clock string.
_ROUND_CLOCK = [None, None, None]
_TURN_CLOCK = [None, None, None]


def _clock_text(memo, prefix, t_ms):
    """prefix + clock(t_ms): the text made last time when it shows the same second."""
    sec = (t_ms if t_ms >= 0 else -t_ms) // 1000 * 2 + (t_ms < 0)      # clock()'s own key
    if memo[0] != prefix or memo[1] != sec:
        memo[0], memo[1] = prefix, sec
        memo[2] = prefix + clock(t_ms) if prefix else clock(t_ms)
    return memo[2]


def _clock(s, ui, m, now_ms):
    left = m.remaining_ms(now_ms)
    if m.over:
        s.clock_style = "over"
        s.clock = _clock_text(_ROUND_CLOCK, "", max(0, left))
    elif m.time_called:
        s.clock_style = "time"
        s.clock = _clock_text(_ROUND_CLOCK, "+", -left)
    else:
        s.clock_style = "last5" if left <= LAST_MINUTES_MS else "normal"
        s.clock = _clock_text(_ROUND_CLOCK, "", max(0, left))


def _banner(ui, m):
    if m.paused_at is not None and not m.over:
        return ui.text("paused")
    phase = m.phase()
    if phase == "over":
        if m.result == "double_loss":
            return ui.text("double_loss")
        return ui.text("wins_match", ui.names[0 if m.result == "A" else 1])
    if phase == "time_turn":
        return ui.text("time_turn")
    if phase == "extra_turn":
        return ui.text("extra_turn", m.extra_turns - m.extra_left + 1, m.extra_turns)
    if phase == "sudden_death":
        return ui.text("sudden_death")
    if phase == "extra_duel":
        return ui.text("extra_duel", min(m.turn, 4))
    if phase == "interval":
        return ui.text("interval")
    if phase == "waiting":
        if not (m.seated["A"] and m.seated["B"]):
            return ui.text("check_in")
        return ui.text("pick_first")
    return None
