# What each screen shows, independent of any display: a Screen built from the Ui's state.
# Renderers (render_fb for framebuf, render_dio for displayio) lay a Screen out for their
# display size; they never look at the match themselves. Pure.
from duelclock.core.sheet import clock, LONG_TURN_MS

LAST_MINUTES_MS = 300000


class Screen:
    """The view model. Text is already in the table's language.
    mode     frame on top: pre | home | entry | menu | confirm | record | number | pin
    status   top line: table, round, sync age, battery
    clock    round clock text; clock_style: normal | last5 | time | over
    banner   the state players must not miss (TIME, EXTRA TURN n/N, SUDDEN DEATH, result)
    lp, names, wins   per player, (A, B)
    turn     "Turn 5 B" and turn_clock "3:12"; turn_long past 3:00
    title, lines, cursor   the body of menus, the record, confirmations
    entry    the LP entry preview "B: 8000 - 1500 = 6500"
    message  a transient notice; flash (alert) and dim (idle) for the renderer"""

    def __init__(self):
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
        self.lines = []
        self.cursor = -1
        self.entry = None
        self.message = None
        self.flash = False
        self.dim = False


def same(a, b):
    """Do Screens a and b show the same (b may be None)? The app draws no frame when so."""
    return b is not None and a.__dict__ == b.__dict__


def build(ui, now_ms, sync_age_s=None, battery_pct=None, flash=False, idle_dim_ms=120000):
    s = Screen()
    m = ui.match
    frame = ui.stack[-1]
    s.mode = frame.name if m is not None or frame.name != "home" else "pre"
    s.status = _status(ui, sync_age_s, battery_pct)
    s.names = ui.names
    s.message = ui.current_message(now_ms)
    s.flash = flash
    s.dim = now_ms - ui.last_key_ms > idle_dim_ms and not flash
    if m is None:
        s.banner = ui.t("waiting")
        return s
    _clock(s, ui, m, now_ms)
    s.banner = _banner(ui, m)
    s.wins = (m.wins["A"], m.wins["B"])
    s.lp = (m.lp["A"], m.lp["B"])
    if m.in_duel:
        s.turn = ui.t("turn", m.turn, m.turn_player())
        turn_ms = max(0, now_ms - m.turn_start_ms)
        s.turn_clock = clock(turn_ms)
        s.turn_long = turn_ms > LONG_TURN_MS
    _body(s, ui, m, frame, now_ms)
    return s


def _status(ui, sync_age_s, battery_pct):
    parts = ["T%d" % ui.table_no]
    if ui.start is not None:
        parts.append("R%d" % ui.start["round"])
        if ui.match.limit_ms > ui.limit0_ms:        # time given this round, kept to its end
            parts.append("+" + clock(ui.match.limit_ms - ui.limit0_ms))
    if sync_age_s is None:
        parts.append(ui.t("no_sync"))
    else:
        parts.append(ui.t("sync", _age(sync_age_s)))
    if battery_pct is not None:
        parts.append(ui.t("battery", battery_pct))
    return " ".join(parts)


def _age(s):
    return "%ds" % s if s < 120 else "%dm" % (s // 60)


def _clock(s, ui, m, now_ms):
    t = ui.paused_at if ui.paused_at is not None else now_ms
    left = m.limit_ms - t
    if m.over:
        s.clock_style = "over"
        s.clock = clock(max(0, left))
    elif m.time_called:
        s.clock_style = "time"
        s.clock = "+" + clock(-left)
    else:
        s.clock_style = "last5" if left <= LAST_MINUTES_MS else "normal"
        s.clock = clock(max(0, left))


def _banner(ui, m):
    if ui.paused_at is not None:
        return ui.t("paused")
    phase = m.phase()
    if phase == "over":
        if m.result == "double_loss":
            return ui.t("double_loss")
        return ui.t("wins_match", ui.names[0 if m.result == "A" else 1])
    if phase == "time_turn":
        return ui.t("time_turn")
    if phase == "extra_turn":
        return ui.t("extra_turn", m.extra_turns - m.extra_left + 1, m.extra_turns)
    if phase == "sudden_death":
        return ui.t("sudden_death")
    if phase == "extra_duel":
        return ui.t("extra_duel", min(m.turn, 4))
    if phase == "interval":
        return ui.t("interval")
    if phase == "waiting":
        if not (m.seated["A"] and m.seated["B"]):
            return ui.t("check_in")
        return ui.t("pick_first")
    return None


def _body(s, ui, m, frame, now_ms):
    name = frame.name
    if name == "home" and m.phase() == "waiting" and m.seating:
        s.lines = ["%s: %s" % (ui.names[i], ui.t("seated" if m.seated[p] else "absent"))
                   for i, p in enumerate(("A", "B"))]
    elif name == "entry":
        p = frame.p
        before = m.lp[p]
        d = frame.delta(p)
        s.entry = ui.t("entry", ui.names[0 if p == "A" else 1], before, "+" if d >= 0 else "-",
                       abs(d), max(0, before + d))
        o = "B" if p == "A" else "A"
        if frame.amount[o]:
            od = frame.delta(o)
            s.lines = ["%s: %+d = %d" % (ui.names[0 if o == "A" else 1], od, max(0, m.lp[o] + od))]
        s.title = ui.t("confirm_key")
    elif name == "menu":
        s.title = frame.title or ui.t("menu")
        s.lines = [label for label, _ in frame.items]
        s.cursor = frame.cursor
    elif name == "confirm":
        s.title = frame.title
        s.lines = ["%s: %s" % (p, ui.t("confirmed") if p in frame.done else "...") for p in frame.need]
    elif name == "record":
        s.title = ui.t("record")
        lines = record_lines(ui.sheet)
        s.lines = lines[:max(1, len(lines) - frame.scroll)]
    elif name == "number":
        s.title = frame.title
        s.lines = [str(frame.value)]
    elif name == "pin":
        locked = ui.locked_ms()
        s.title = ui.t("pin")
        s.lines = [ui.t("locked", locked // 1000) if locked else "*" * len(frame.digits) + "_",
                   "" if locked or frame.digits == "" and frame.cur == 0 else str(frame.cur)]


def record_lines(sheet):
    """Compact sheet lines (about 18 characters) for small displays: the last duel."""
    if sheet is None:
        return []
    sec = sheet.sections[-1]
    out = ["(%d earlier rows)" % sec.dropped] if sec.dropped else []
    for row in sec.rows:
        k = row[0]
        if k == "lp":
            _, t, turn, tp, da, db, la, lb, by, cost, undone = row
            cells = []
            if da:
                cells.append("A%+d=%d" % (da, la))
            if db:
                cells.append("B%+d=%d" % (db, lb))
            out.append("%s%d%s %s%s" % ("x" if undone else "", turn, tp, " ".join(cells), " c" if cost else ""))
        elif k == "turn":
            out.append("-- T%d %s%s" % (row[2], clock(row[4]), " !" if row[4] > LONG_TURN_MS else ""))
        elif k == "fix":
            out.append("FIX %s %d>%d" % (row[4], row[5], row[6]))
        elif k == "mark":
            out.append({"time": "TIME", "extra_turn": "EXTRA TURN", "sudden_death": "SUDDEN DEATH",
                        "cap": "CAP", "extend": "+TIME"}[row[2]])
        elif k == "penalty":
            out.append("PEN %s %s" % (row[2], row[3]))
        elif k == "end":
            out.append("END %s %s" % (row[2], row[3]))
        elif k == "result":
            out.append("MATCH %s" % row[2])
    return out
