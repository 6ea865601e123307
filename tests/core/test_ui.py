# The table's state (ui.py), its input flows (screens.py) and what the screens show (view.py).
from duelclock.core.ui import Ui, PIN_TRIES, MESSAGE_MS
from duelclock.core.view import build, same
from duelclock.core.record import check_event
from duelclock.core.sign import pin_hash

MIN = 60000
# As deploy stores them: hashed, never in clear (2 rounds: the test's speed, not a board's).
PINS = {"floor": pin_hash("1111", b"salt-7", 2), "head": pin_hash("2222", b"salt-7", 2)}


def _table(**start):
    saved = []
    ui = Ui(7, saved.append, pins=PINS)
    ev = {"t": 0, "ev": "round_start", "round": 2, "kind": "swiss",
          "names": {"A": "Kim", "B": "Budi"}}
    for k in start:
        ev[k] = start[k]
    ui.start_round(ev)
    return ui, saved


def _keys(ui, t, *keys):
    for k in keys:
        ui.key(k, t)


def test_fast_lp_entry_shows_the_new_total_before_confirming():
    ui, saved = _table()
    _keys(ui, MIN, "a", "a")                       # who goes first: A
    assert saved[-1]["ev"] == "duel_start" and saved[-1]["first"] == "A"
    _keys(ui, 2 * MIN, "b", "1", "5", "00")
    s = build(ui, 2 * MIN)
    assert s.mode == "entry" and s.entry == "Budi: 8000 - 1500 = 6500"
    assert saved[-1]["ev"] == "duel_start"         # nothing recorded yet
    _keys(ui, 2 * MIN, "ok")
    assert saved[-1] == {"t": 2 * MIN, "ev": "lp", "B": -1500, "by": "B"}
    assert build(ui, 2 * MIN).lp == (8000, 6500)


def test_damage_to_both_is_one_event_and_gain_with_sign():
    ui, saved = _table()
    _keys(ui, MIN, "b", "b")
    _keys(ui, MIN, "a", "5", "00", "b", "sign", "1", "000", "ok")
    assert saved[-1]["A"] == -500 and saved[-1]["B"] == 1000 and saved[-1]["by"] == "B"
    for ev in saved:
        assert check_event(ev) is None


def test_stepper_entry_and_same_key_confirms():
    ui, saved = _table()
    _keys(ui, MIN, "a", "a")
    _keys(ui, MIN, "a", "up_fast", "up", "up", "down", "a")
    assert saved[-1]["A"] == -1100


def test_back_clears_then_cancels_and_turn_never_confirms_an_entry():
    ui, saved = _table()
    _keys(ui, MIN, "a", "a")
    n = len(saved)
    _keys(ui, MIN, "a", "5", "back", "back")
    assert ui.stack[-1].mode == "home" and len(saved) == n
    _keys(ui, MIN, "a", "5", "turn")
    assert len(saved) == n and ui.stack[-1].mode == "home"


def test_undo_and_turn_end_and_refusal_message():
    ui, saved = _table()
    _keys(ui, MIN, "a", "a", "a", "1", "00", "ok", "undo")
    assert saved[-1]["ev"] == "undo"
    _keys(ui, MIN, "undo")
    assert saved[-1]["ev"] == "undo"
    assert build(ui, MIN).message.startswith("Refused: only the last LP entry")
    _keys(ui, MIN, "turn")
    assert saved[-1]["ev"] == "turn_end" and ui.match.turn == 2


def test_duel_over_needs_both_players():
    ui, saved = _table()
    _keys(ui, MIN, "a", "a")
    _keys(ui, MIN, "menu", "down", "a", "b", "a")   # menu: Record, Duel over; winner B; A confirms
    assert saved[-1]["ev"] == "duel_start"
    s = build(ui, MIN)
    assert s.mode == "confirm" and s.lines == ["A: confirmed", "B: ..."]
    _keys(ui, MIN, "b")
    assert saved[-1] == {"t": MIN, "ev": "duel_end", "winner": "B"}
    assert build(ui, MIN).banner == "Between duels"


def test_surrender_refused_with_the_rules_reason():
    ui, saved = _table()
    _keys(ui, MIN, "a", "a", "menu", "down", "a", "b", "a", "b")    # B wins duel 1
    _keys(ui, 2 * MIN, "a", "b")                                    # B goes first
    n = len(saved)
    _keys(ui, 3 * MIN, "menu", "down", "down", "a", "a")            # A would surrender
    assert len(saved) == n
    assert build(ui, 3 * MIN).message == "Refused: surrender would decide the match"


def test_check_in_flow_and_screen():
    ui, saved = _table(seating=True)
    s = build(ui, -MIN)
    assert s.lines == ["Kim: absent", "Budi: absent"]
    _keys(ui, -MIN, "a", "a")
    assert saved[-1] == {"t": -MIN, "ev": "seated", "p": "A"}
    _keys(ui, 2 * MIN, "b", "b")
    assert ui.match.verdict()["penalties"] == [{"p": "B", "kind": "warning", "code": "tardiness"}]


def test_judge_pin_roles_and_lockout():
    ui, saved = _table()
    _keys(ui, MIN, "a", "a")
    _keys(ui, MIN, "menu", "down", "down", "down", "a")   # Judge
    assert ui.stack[-1].mode == "pin"
    ui.at(5000)                                           # board time: the lockout's clock
    for i in range(PIN_TRIES):
        _keys(ui, MIN, "9", "9", "ok")
    assert ui.locked_ms() == 60000 and ui.lock_state() == (0, 1, 60000)
    ui.at(5001)
    _keys(ui, 2 * MIN + 1, "1", "1", "1", "1", "ok")      # right PIN, but locked: a minute of
    assert ui.stack[-1].mode == "pin"                     # round time does not count
    assert build(ui, MIN + 1).lines[0].startswith("Locked")
    ui.at(65001)
    _keys(ui, 2 * MIN + 1, "1", "1", "1", "1", "ok")      # floor judge
    s = build(ui, 2 * MIN + 1)
    assert s.title == "Floor judge" and s.lines[0] == "Penalty"
    _keys(ui, 2 * MIN + 1, "a", "b")                      # Penalty, player B
    assert ui.stack[-1].items[0][0] == "Deck size"
    _keys(ui, 2 * MIN + 1, "a")                           # deck_size -> kinds, mildest first
    labels = [item[0] for item in ui.stack[-1].items]
    assert labels == ["Caution", "Warning", "Duel loss *"]    # no match loss from a floor judge
    assert build(ui, 2 * MIN + 1).cursor == 0             # a duel loss is never pre-selected
    _keys(ui, 2 * MIN + 1, "down", "down", "a")           # the judge moves to it and picks it:
    s = build(ui, 2 * MIN + 1)                            # shown, not yet recorded
    assert s.mode == "confirm" and s.lines == ["Penalty B", "Deck size", "Duel loss"]
    assert saved[-1]["ev"] == "duel_start" and ui.match.phase() == "duel"
    _keys(ui, 2 * MIN + 1, "ok")
    assert saved[-1] == {"t": 2 * MIN + 1, "ev": "penalty", "p": "B", "kind": "duel_loss",
                         "code": "deck_size", "judge": "floor"}
    assert ui.match.phase() == "interval"
    assert ui.match.penalties[-1]["kind"] == "duel_loss" and ui.match.duels[-1] == {
        "winner": "A", "by": "penalty"}


def test_head_judge_fixes_lp():
    ui, saved = _table()
    _keys(ui, MIN, "a", "a", "menu", "down", "down", "down", "a", "2", "2", "2", "2", "ok")
    assert build(ui, MIN).title == "Head judge"
    _keys(ui, MIN, "down", "a", "a", "7", "5", "00", "ok")
    s = build(ui, MIN)                                 # shown before it is recorded
    assert s.mode == "confirm" and s.lines == ["LP fix A", "8000 > 7500"]
    assert saved[-1]["ev"] == "duel_start"
    _keys(ui, MIN, "ok")
    assert saved[-1] == {"t": MIN, "ev": "judge_fix", "p": "A", "lp": 7500}
    assert ui.match.lp["A"] == 7500 and ui.stack[-1].mode == "home"


def test_a_failed_save_confirms_nothing():
    def full(ev):
        raise OSError(28)
    ui, saved = _table()
    _keys(ui, MIN, "a", "a")
    ui.save = full
    _keys(ui, 2 * MIN, "b", "5", "00", "ok")
    assert ui.match.lp["B"] == 8000
    assert build(ui, 2 * MIN).message.startswith("NOT SAVED")
    assert ui.stack[-1].mode == "entry"               # the entry is still there to retry


def test_time_banners_and_alerts():
    ui, saved = _table(limit_s=600)
    _keys(ui, MIN, "a", "a", "menu", "down", "a", "b", "a", "b")
    _keys(ui, 2 * MIN, "a", "a")
    ui.tick(5 * MIN + 1)
    s = build(ui, 5 * MIN + 1)
    assert s.clock_style == "last5" and ("beep", 2) in ui.alerts
    ui.tick(10 * MIN)
    s = build(ui, 10 * MIN)
    assert s.banner == "TIME: finish this turn" and s.clock == "+0:00" and s.clock_style == "time"
    _keys(ui, 10 * MIN + 5000, "turn")
    assert build(ui, 10 * MIN + 5000).banner == "EXTRA TURN 1/1"
    _keys(ui, 10 * MIN + 6000, "turn")
    assert build(ui, 10 * MIN + 6000).banner == "SUDDEN DEATH"
    _keys(ui, 10 * MIN + 7000, "a", "1", "00", "ok", "turn")
    assert build(ui, 10 * MIN + 7000).banner == "Budi WINS THE MATCH"


def test_languages():
    ui, saved = _table()
    ui.lang = "ko"
    assert build(ui, 0).banner == "선공은?"
    ui.lang = "id"
    assert build(ui, 0).banner == "Siapa jalan dulu?"


def _desk(ui, t, ev, **keys):
    ev = dict(keys, t=t, ev=ev)
    return ui.organiser(ev)


def test_a_desk_pause_stops_match_time_and_is_journalled():
    ui, saved = _table()
    _keys(ui, MIN, "a", "a")
    assert _desk(ui, 10 * MIN, "pause")
    assert saved[-1] == {"t": 10 * MIN, "ev": "pause"}
    ui.tick(12 * MIN)
    s = build(ui, 12 * MIN)
    # the turn clock counts the round clock's seconds: the turn began on an edge (1:00),
    # so its 9th second comes with the round clock's 34:59, 1 ms past 35:00
    assert (s.banner, s.clock, s.turn_clock) == ("PAUSED", "35:00", "8:59")
    assert not _desk(ui, 12 * MIN, "pause")          # sent again: nothing more journalled
    assert saved[-1]["ev"] == "pause"
    assert _desk(ui, 13 * MIN, "resume")
    assert saved[-1] == {"t": 13 * MIN, "ev": "resume"}
    s = build(ui, 14 * MIN)
    assert (s.banner, s.clock, s.turn_clock) == (None, "34:00", "9:59")
    assert s.status == "T7 R2 no sync"               # no time was given: none is marked


def test_a_pause_across_the_limit_leaves_the_time_it_had():
    # Swiss duel 1, paused with 1:00 left, resumed 3 minutes later: play goes on with 1:00,
    # not a double loss.
    ui, saved = _table()
    _keys(ui, MIN, "a", "a")
    _desk(ui, 44 * MIN, "pause")
    ui.tick(46 * MIN)
    _desk(ui, 47 * MIN, "resume")
    assert not ui.match.over and build(ui, 47 * MIN).clock == "1:00"
    _keys(ui, 47 * MIN + 30000, "b", "8", "000", "ok")
    assert saved[-1]["ev"] == "lp" and ui.match.duels == [{"winner": "A", "by": "lp"}]
    ui.tick(48 * MIN)                                  # the limit, in match time
    assert ui.match.over and ui.match.result == "double_loss"


def test_time_the_desk_gives_is_said_for_a_few_seconds_and_marked_to_the_end():
    ui, saved = _table()
    assert build(ui, 10 * MIN).status == "T7 R2 no sync"
    _desk(ui, 10 * MIN, "extend", ms=3 * MIN)
    assert saved[-1] == {"t": 10 * MIN, "ev": "extend", "ms": 3 * MIN}
    s = build(ui, 10 * MIN + 5999)
    assert (s.message, s.status, s.clock) == ("+3:00 from the desk", "T7 R2 +3:00 no sync",
                                              "37:54")
    s = build(ui, 10 * MIN + 6000)              # the notice has gone, the mark stays
    assert (s.message, s.status) == (None, "T7 R2 +3:00 no sync")
    _desk(ui, 11 * MIN, "extend", ms=90000)
    assert build(ui, 11 * MIN).status == "T7 R2 +4:30 no sync"
    ui.lang = "ko"
    _desk(ui, 12 * MIN, "extend", ms=MIN)
    assert build(ui, 12 * MIN).message == "데스크 연장 +1:00"
    ui.lang = "id"
    _desk(ui, 12 * MIN, "extend", ms=MIN)
    assert build(ui, 12 * MIN).message == "+1:00 dari meja juri"
    ui.start_round({"t": 0, "ev": "round_start", "round": 3, "kind": "swiss"})
    assert build(ui, 0).status == "T7 R3 tanpa sinkron"     # a new round: no mark


def test_time_the_desk_gives_after_time_is_called_is_not_announced():
    ui, saved = _table(limit_s=600)
    _keys(ui, MIN, "a", "a")
    ui.tick(10 * MIN + 100)
    _desk(ui, 11 * MIN, "extend", ms=3 * MIN)
    s = build(ui, 11 * MIN)
    assert saved[-1]["ev"] != "extend" and s.message != "+3:00 from the desk"
    assert s.message == "Refused: the match is over"     # J1 swiss: a double loss at 10:00
    assert s.status == "T7 R2 no sync"


def test_time_based_decisions_reach_the_record():
    ui, saved = _table()
    _keys(ui, MIN, "a", "a")
    ui.tick(45 * MIN - 1)
    assert saved[-1]["ev"] == "duel_start"
    ui.tick(45 * MIN + 250)                 # J1 swiss: double loss, and the record says so
    assert saved[-1] == {"t": 45 * MIN + 250, "ev": "tick"}
    fresh = Ui(7, lambda ev: None)
    for ev in saved:
        fresh.restore(ev)
    assert fresh.match.verdict()["result"] == "double_loss"
    ui.tick(46 * MIN)
    assert saved[-1]["t"] == 45 * MIN + 250  # nothing new: one tick per decision


def test_a_confirmation_is_stamped_when_confirmed_not_when_opened():
    ui, saved = _table(seating=True)
    ui.key("a", -MIN)
    ui.tick(-MIN + 500)                         # the screen task ticks between the two keys
    ui.key("a", -MIN + 900)
    assert saved[-1] == {"t": -MIN + 900, "ev": "seated", "p": "A"}


def test_a_clock_that_steps_back_never_loses_an_entry():
    ui, saved = _table()
    _keys(ui, MIN, "a", "a")
    _keys(ui, MIN - 40, "b", "1", "00", "ok")   # a new sync fit moved desk time back 40 ms
    assert saved[-1] == {"t": MIN, "ev": "lp", "B": -100, "by": "B"}


def test_restore_rebuilds_the_same_state():
    ui, saved = _table()
    _keys(ui, MIN, "a", "a", "b", "1", "000", "ok", "turn", "a", "5", "00", "ok")
    fresh = Ui(7, lambda ev: None)
    for ev in saved:
        assert fresh.restore(ev) is None
    assert fresh.match.verdict() == ui.match.verdict()
    assert fresh.match.turn == ui.match.turn


def test_key_mashing_never_crashes_and_never_records_unconfirmed():
    # A small LCG: the same sequence under CPython and MicroPython.
    keys = ("a", "b", "0", "1", "5", "00", "000", "sign", "ok", "back", "undo", "turn",
            "menu", "up", "down", "up_fast", "down_fast")
    confirming = {"lp": ("ok", "a", "b"), "turn_end": ("turn",), "undo": ("undo",),
                  "duel_start": ("a", "b", "ok"), "duel_end": ("a", "b"), "surrender": ("a", "b"),
                  "seated": ("a", "b"), "penalty": ("ok", "menu"), "judge_fix": ("ok", "menu"),
                  "judge_void": ("ok", "menu"), "extend": ("ok", "menu")}   # a judge's: shown, OK
    state = {"key": None}
    bad = []
    saved = []

    def save(ev):
        saved.append(ev)
        if ev["ev"] in ("round_start", "tick"):
            return                      # the desk's round, and time passing: no key's doing
        if state["key"] not in confirming[ev["ev"]]:
            bad.append((state["key"], ev))

    def press(k, t):
        state["key"] = k
        ui.at(t + 2 * MIN)              # the board's own clock, which PIN lockouts run on
        ui.key(k, t)
        build(ui, t)

    ui = Ui(1, save, pins=PINS)
    ui.start_round({"t": 0, "ev": "round_start", "round": 1, "kind": "swiss", "seating": True})
    x = 12345
    t = -MIN
    for i in range(10000):
        x = (x * 1103515245 + 12345) & 0x7fffffff
        t += (x & 0x3ff)
        if i % 1000 == 999:
            # A floor judge between the mashing, a few minutes later (a lockout the mashing's
            # wrong PINs made is over): home, the menu's Judge (in the language the mashing
            # chose), the PIN, a penalty for B (the first infraction, a duel loss: two down
            # from the mildest), shown, then OK.
            t += 5 * MIN
            for k in ("back",) * 6 + ("menu",):
                press(k, t)
            labels = [item[0] for item in ui.stack[-1].items]
            for k in (str(labels.index(ui.text("judge")) + 1), "1", "1", "1", "1", "ok",
                      "a", "b", "a", "down", "down", "a", "ok"):
                press(k, t)
            continue
        press(keys[(x >> 16) % len(keys)], t)
    assert bad == []
    kinds = set(ev["ev"] for ev in saved)
    # the mashing reached every flow a player's keys record, and the judge's penalties
    assert kinds >= set(["seated", "duel_start", "lp", "undo", "turn_end", "penalty"]), kinds
    given = [ev for ev in saved if ev["ev"] == "penalty"]
    # (a visit can meet a lockout the mashing doubled: most get through, all as keyed)
    assert len(given) >= 5, given
    for ev in given:
        assert (ev["p"], ev["kind"], ev["code"], ev["judge"]) == ("B", "duel_loss", "deck_size",
                                                                  "floor"), ev
    # what the table shows is what its record says: replayed, every event is taken, and the
    # match is the same, the penalties in it (after the match too) included
    fresh = Ui(1, lambda ev: None)
    for ev in saved:
        assert fresh.restore(ev) is None, ev
    v = ui.match.verdict()
    assert fresh.match.verdict() == v
    assert len([p for p in v["penalties"] if p["code"] != "tardiness"]) == len(given)
    assert build(ui, t).lp == (v["lp"]["A"], v["lp"]["B"])


def test_a_player_calls_a_judge_until_a_pin_is_entered():
    ui, saved = _table()
    _keys(ui, MIN, "menu", "down", "down", "down", "down", "a")   # the last item
    assert ui.judge_called and build(ui, MIN).message == "JUDGE CALLED"
    _keys(ui, MIN, "menu", "3", "1", "1", "1", "1", "ok")   # between duels Judge is 3rd
    assert not ui.judge_called


def test_a_judge_is_offered_the_kinds_the_engine_would_take_from_that_judge():
    # ID: match loss and DQ are the head judge's (the floor judge's list is in the PIN test);
    # KR leaves them to any judge.
    for rules, pin, offered in (("ID", "2", True), ("KR", "1", True), ("ID", "1", False)):
        ui, saved = _table(rules=rules)
        _keys(ui, MIN, "a", "a", "menu", "down", "down", "down", "a", pin, pin, pin, pin, "ok")
        _keys(ui, MIN, "a", "b", "a")                     # Penalty, player B, the first code
        labels = [item[0] for item in ui.stack[-1].items]
        assert ("Match loss" in labels) is offered and ("Disqualified" in labels) is offered


def test_a_judge_gives_one_penalty_to_both_players():
    ui, saved = _table()
    _keys(ui, MIN, "a", "a", "menu", "down", "down", "down", "a", "1", "1", "1", "1", "ok", "a")
    assert [item[0] for item in ui.stack[-1].items] == ["A", "B", "Both"]
    _keys(ui, MIN, "down", "down", "menu")                # Both (a, b pick A, B; menu: ok)
    assert build(ui, MIN).title == "Penalty Both"
    _keys(ui, MIN, "a", "down", "down", "a")              # deck_size, duel loss (usual)
    assert build(ui, MIN).lines == ["Penalty Both", "Deck size", "Duel loss"]
    _keys(ui, MIN, "ok")
    assert saved[-1] == {"t": MIN, "ev": "penalty", "p": "both", "kind": "duel_loss",
                         "code": "deck_size", "judge": "floor"}
    assert ui.match.verdict()["duels"] == [{"winner": "none", "by": "penalty"}]


def test_the_judge_menu_stays_open_after_the_match():
    ui, saved = _table()
    _keys(ui, MIN, "a", "a", "b", "8", "000", "ok")       # duel 1 to A
    _keys(ui, 2 * MIN, "b", "b", "b", "8", "000", "ok")   # duel 2 to A: over
    assert ui.match.over
    _keys(ui, 3 * MIN, "menu")
    labels = [item[0] for item in ui.stack[-1].items]
    assert "Judge" in labels
    _keys(ui, 3 * MIN, str(labels.index("Judge") + 1), "2", "2", "2", "2", "ok", "a", "b")
    _keys(ui, 3 * MIN, "a", "down", "down", "a", "ok")    # deck_size, duel loss: carries on
    assert saved[-1]["ev"] == "penalty" and saved[-1]["p"] == "B"
    assert ui.match.verdict()["penalties"] == [
        {"p": "B", "kind": "duel_loss", "code": "deck_size", "after_match": True}]
    assert ui.match.verdict()["result"] == "A"
    assert ui.sheet.sections[-1].rows[-1][0] == "penalty"


def test_a_screen_is_the_same_until_a_second_or_a_key_changes_it():
    # The app draws no frame while same(): the view model must see every visible change.
    ui, _ = _table()
    _keys(ui, 60000, "a", "a")
    s = build(ui, 61001, 4)                             # 43:58 left, turn 0:01
    assert (s.clock, s.turn_clock) == ("43:58", "0:01")
    assert same(build(ui, 62000, 4), s) and not same(s, None)
    t = build(ui, 62001, 4)                             # both clocks' second, at once
    assert not same(t, s) and (t.clock, t.turn_clock) == ("43:57", "0:02")
    assert same(build(ui, 61001, 5), s)                 # synced: the age is not shown
    assert not same(build(ui, 61001, 60), s)            # a minute without a sync is
    ui.key("a", 61500)                                  # LP entry
    assert not same(build(ui, 61500, 4), s)


def test_the_status_line_says_synced_then_how_long_ago_in_minutes():
    ui, _ = _table()
    _keys(ui, 60000, "a", "a")
    assert build(ui, 61001, None).status.endswith("no sync")
    assert build(ui, 61001, 0).status.endswith(" synced")
    assert build(ui, 61001, 59).status.endswith(" synced")
    assert build(ui, 61001, 60).status.endswith(" sync 1m")
    assert build(ui, 61001, 5399).status.endswith(" sync 89m")
    assert build(ui, 61001, 7200).status.endswith(" sync 2h")


def test_the_turn_clock_turns_with_the_round_clock_within_half_a_second():
    # One present a second at idle: the turn clock counts the round clock's seconds since
    # the turn began, whatever ms the turn began at, and through a pause.
    ui, _ = _table()
    _keys(ui, 60000, "a", "a")
    _keys(ui, 75437, "turn")                            # turn 2 from 75.437 s
    last = build(ui, 75437, 4)
    assert last.turn_clock == "0:00"
    for t in range(75437, 79000, 7):
        s = build(ui, t, 4)
        if s.turn_clock != last.turn_clock:
            assert s.clock != last.clock, t             # never one clock alone
        shown = int(s.turn_clock.split(":")[1])
        e = t - 75437                                   # each second within half a second
        assert max(0, e - 501) // 1000 <= shown <= (e + 501) // 1000, (t, s.turn_clock)
        last = s


CARRIED = {"p": "B", "kind": "duel_loss", "code": "deck_size"}


def test_a_penalty_carried_from_the_last_match_is_recorded_before_duel_1_once():
    ui, saved = _table()
    ui.carry(CARRIED, -30000)                  # the round message, before the round starts
    assert saved[-1] == {"t": -30000, "ev": "penalty", "p": "B", "kind": "duel_loss",
                         "code": "deck_size", "judge": "head", "carried": True}
    v = ui.match.verdict()
    assert v["duels"] == [{"winner": "A", "by": "penalty"}] and v["wins"] == {"A": 1, "B": 0}
    assert "after_match" not in v["penalties"][0]
    assert build(ui, -30000).message == "Last match: B Duel loss"
    assert build(ui, 29000).message == "Last match: B Duel loss"        # shown a minute
    assert build(ui, 31000).message is None
    n = len(saved)
    ui.carry(CARRIED, MIN)                     # the round sent again: recorded once
    assert len(saved) == n


def test_a_carried_match_loss_ends_the_match_and_nothing_is_carried_into_an_over_one():
    ui, saved = _table(rules="KR")
    ui.lang = "ko"
    ui.carry({"p": "A", "kind": "match_loss", "code": "unsporting"}, 5000)
    assert ui.match.verdict()["result"] == "B"
    assert build(ui, 5000).message == "지난 매치: A 매치의 패배"
    n = len(saved)
    ui.carry(CARRIED, 6000)                    # over: never an after-match penalty again
    assert len(saved) == n


def test_a_malformed_carried_penalty_is_refused_on_screen_and_not_recorded():
    ui, saved = _table()
    n = len(saved)
    ui.carry({"p": "B", "kind": "scolding", "code": "x"}, 1000)
    assert len(saved) == n and build(ui, 1000).message.startswith("Refused: 'kind' must be")
    ui.carry({"p": "C", "kind": "warning", "code": "x"}, 1000)
    assert len(saved) == n and ui.match.penalties == []


def test_maintenance_opens_with_the_desks_code_for_the_challenge_shown_once():
    from duelclock.core.screens import Unlock
    from duelclock.core.sign import challenge, table_key, unlock_code
    tbl_key = table_key(bytes(range(32)), 7)
    draws = iter([b"\x01\x02\x03\x04\x05", b"\x09\x08\x07\x06\x05", b"\xff\x00\xff\x00\xff",
                  b"\x11\x22\x33\x44\x55"])
    opened = []
    ui = Ui(7, lambda ev: None)
    frame = Unlock(tbl_key, lambda: next(draws), lambda ui: opened.append(True))
    ui.push(frame)
    first = frame.challenge
    assert first == challenge(b"\x01\x02\x03\x04\x05") and len(first) == 8
    s = build(ui, 0)
    assert s.title == "Maintenance: desk code for" and s.lines[0] == "%s %s" % (
        first[:4], first[4:])
    code = unlock_code(tbl_key, first)
    assert code != unlock_code(table_key(bytes(range(32)), 8), first)   # not another table's
    _keys(ui, 0, *code[:3])
    assert build(ui, 0).lines[1] == "***_ 0"        # what is typed, masked; the digit up/down set
    _keys(ui, 0, "0", "0", "0", "ok")                       # wrong: a try, a new challenge
    assert ui.lock_state()[0] == 1 and frame.challenge != first and not opened
    assert build(ui, 0).message == "Wrong code (2 left)"
    assert build(ui, MESSAGE_MS).message is None
    _keys(ui, 0, *code, "ok")                            # the spent challenge's code
    assert not opened and ui.lock_state()[0] == 2
    _keys(ui, 0, *unlock_code(tbl_key, frame.challenge), "ok")
    assert opened == [True] and ui.stack[-1] is not frame and ui.lock_state()[0] == 0


def test_wrong_codes_lock_out_as_wrong_pins_do():
    from duelclock.core.screens import Unlock
    from duelclock.core.sign import table_key, unlock_code
    tbl_key = table_key(b"k", 1)
    ui = Ui(1, lambda ev: None)
    frame = Unlock(tbl_key, lambda: b"\x00\x00\x00\x00\x01", lambda ui: None)
    ui.push(frame)
    for _ in range(PIN_TRIES):
        _keys(ui, 0, "1", "ok")
    assert ui.locked_ms() == 60000
    _keys(ui, 0, *unlock_code(tbl_key, frame.challenge), "ok")
    assert ui.stack[-1] is frame and build(ui, 0).lines[1].startswith("Locked")


def test_a_text_without_args_is_looked_up_once_a_language():
    ui, _ = _table()
    assert ui.text("menu") == "Menu" and ui.text("menu") is ui.text("menu")
    ui.set_lang("ko")
    assert ui.text("menu") == "메뉴" and ui.text("turn", 3, "B") == "3턴 B"
    ui.set_lang("en")
    assert ui.text("paused") == "PAUSED"


def test_the_self_test_asks_each_key_shows_the_colours_then_the_boards_checks():
    ui, saved = _table()
    _keys(ui, MIN, "menu", "down", "down", "a")           # Judge (before a duel: 3rd item)
    _keys(ui, MIN, "1", "1", "1", "1", "ok")              # floor judge
    assert ui.text("self_test") not in build(ui, MIN).lines   # no board to test: not offered
    ui.home()
    ui.board_keys = [("A", ("a", "menu")), ("UP", ("up", "up_fast")), ("OK", ("ok",))]
    ui.probe = lambda: [("wifi", True, "hall -61 dBm"), ("battery", False, "9 %")]
    _keys(ui, MIN, "menu", "down", "down", "a", "1", "1", "1", "1", "ok")
    lines = build(ui, MIN).lines
    _keys(ui, MIN, *["down"] * lines.index("Self-test"), "a")
    assert build(ui, MIN).lines == ["Press A"]
    _keys(ui, MIN, "b", "up")                             # not A's: still asked for A
    assert build(ui, MIN).lines == ["Press A"]
    _keys(ui, MIN, "menu")                                # A's long press counts
    assert build(ui, MIN).lines == ["Press UP"]
    _keys(ui, MIN, "up_fast")
    assert build(ui, MIN).lines == ["Press OK"]
    ui.tick(MIN + 11000)                                  # OK never pressed: noted, on
    assert build(ui, MIN + 11000).mode == "pattern"
    _keys(ui, MIN + 11000, "b")                           # any key: the board's checks
    s = build(ui, MIN + 11000)
    assert s.title == "Self-test: FAILED" and s.lines == [
        "keys not pressed: OK", "wifi ok hall -61 dBm", "battery FAIL 9 %"]
    _keys(ui, MIN + 11000, "b")
    assert len(ui.stack) == 1 and saved[-1]["ev"] == "round_start"   # nothing recorded


def test_a_key_held_and_not_yet_decided_shows_at_once_with_what_its_hold_does():
    # Keys.waiting -> ui.pressing: home names it in the status line, other frames in the
    # title, each with what holding it does there; released, the screen is as before.
    ui, saved = _table()
    _keys(ui, MIN, "a", "a")                              # duel 1, A first
    home = build(ui, MIN, 4)
    ui.pressing = ("A", "menu")
    s = build(ui, MIN, 4)
    assert s.status == "[A] hold: menu" and not same(s, home)
    assert (s.clock, s.lp, s.mode) == (home.clock, home.lp, home.mode)
    ui.pressing = ("B", "turn")
    assert build(ui, MIN, 4).status == "[B] hold: end turn"
    ui.pressing = None
    assert same(build(ui, MIN, 4), home)
    _keys(ui, MIN, "a")                                   # A's entry
    entry = build(ui, MIN, 4)
    ui.pressing = ("A", "menu")
    s = build(ui, MIN, 4)
    assert s.title == "[A] hold: +/-" and s.entry == entry.entry
    ui.pressing = ("B", "turn")
    assert build(ui, MIN, 4).title == "[B] hold: cancel"
    ui.pressing = ("#", "000")                            # a hold this frame gives no meaning
    assert build(ui, MIN, 4).title == "[#]"
    ui.lang = "ko"
    ui.pressing = ("A", "menu")
    assert build(ui, MIN, 4).title == "[A] 길게: +/-"
    ui.lang = "en"
    ui.pressing = None
    _keys(ui, MIN, "back", "menu")                        # home, then the menu
    assert build(ui, MIN, 4).mode == "menu"
    menu = build(ui, MIN, 4)
    ui.pressing = ("A", "menu")
    assert same(build(ui, MIN, 4), menu)                  # a menu shows the outcome only
    assert saved[-1]["ev"] == "duel_start"                # a press shown records nothing


def test_the_self_test_shows_no_hint_over_its_steps():
    ui, _ = _table()
    ui.board_keys = [("A", ("a", "menu"))]
    ui.probe = lambda: []
    _keys(ui, MIN, "menu", "down", "down", "a", "1", "1", "1", "1", "ok")
    lines = build(ui, MIN).lines
    _keys(ui, MIN, *["down"] * lines.index("Self-test"), "a")
    before = build(ui, MIN)
    ui.pressing = ("A", "menu")
    assert same(build(ui, MIN), before)


def test_a_clock_shows_its_second_as_sheet_clock_does_and_is_made_once_a_second():
    from duelclock.core.sheet import clock
    from duelclock.core.view import _clock_text
    memo = [None, None, None]
    for t_ms in (0, 1, 999, 1000, 59999, 60000, -1, -999, -1000, -1001, 3599999, -60000):
        assert _clock_text(memo, "", t_ms) == clock(t_ms)
        assert _clock_text(memo, "+", t_ms) == "+" + clock(t_ms)
    first = _clock_text(memo, "", 42000)
    assert _clock_text(memo, "", 42999) is first         # the same second: the same text
    assert _clock_text(memo, "", 43000) == "0:43"
