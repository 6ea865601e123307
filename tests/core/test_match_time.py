# Match time (events.md "Match time", rules.md 1): the organiser's pause, resume and extend
# are record events, and every time the rules measure is desk time less the time paused.
from dc import new, ok, no, v, MIN
from duelclock.core.replay import Replay
from duelclock.core.sheet import record_lines

LIMIT = 45 * MIN


def test_a_pause_with_a_minute_left_leaves_a_minute_to_play():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    ok(m, 44 * MIN, "pause")
    ok(m, 50 * MIN, "tick")                       # far past the limit in desk time
    assert v(m, "phase") == "duel" and not m.time_called
    ok(m, 53 * MIN, "resume")
    assert m.remaining_ms(53 * MIN) == MIN
    ok(m, 54 * MIN - 1, "tick")
    assert v(m, "phase") == "duel"
    ok(m, 54 * MIN, "tick")                       # the limit, moved by the 9 minutes paused
    assert v(m, "result") == "double_loss"


def test_events_apply_while_paused_and_the_pause_needs_running_time():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    assert no(m, 2 * MIN, "resume") == "the match time is not paused"
    ok(m, 3 * MIN, "pause")
    assert no(m, 3 * MIN, "pause") == "the match time is already paused"
    ok(m, 4 * MIN, "lp", B=-1000)                 # a ruling's fix during a pause: recorded
    assert v(m, "lp") == {"A": 8000, "B": 7000}
    ok(m, 5 * MIN, "extend", ms=MIN)              # given while paused: the limit moves
    ok(m, 6 * MIN, "resume")
    assert m.remaining_ms(6 * MIN) == LIMIT + MIN - 3 * MIN


def test_undo_looks_past_the_organisers_events():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    ok(m, 2 * MIN, "lp", A=-500)
    ok(m, 3 * MIN, "pause")
    ok(m, 4 * MIN, "resume")
    ok(m, 5 * MIN, "extend", ms=MIN)
    ok(m, 6 * MIN, "undo")
    assert v(m, "lp") == {"A": 8000, "B": 8000}


def test_a_transition_due_at_the_pause_takes_effect_first():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    assert no(m, LIMIT, "pause") == "the match is over"    # time is called before it
    assert v(m, "result") == "double_loss"
    m = new("elimination")
    ok(m, MIN, "duel_start", first="A")
    ok(m, LIMIT, "pause")
    assert v(m, "phase") == "time_turn" and m.paused_at == LIMIT
    assert no(m, LIMIT + MIN, "extend", ms=MIN) == "time has already been called"


def test_tardiness_and_turn_length_are_match_time():
    m = new(seating=True)
    ok(m, 4 * MIN, "pause")
    ok(m, 10 * MIN, "resume")
    ok(m, 10 * MIN + 1, "tick")                   # 4:00 of match time: no duel loss yet
    assert v(m, "penalties") == []
    ok(m, 11 * MIN, "tick")                       # 5:00 of match time
    assert [p["kind"] for p in v(m, "penalties")] == ["duel_loss", "duel_loss"]
    m = new()
    ok(m, MIN, "duel_start", first="A")
    ok(m, 2 * MIN, "pause")
    ok(m, 9 * MIN, "resume")
    assert m.turn_ms(10 * MIN) == 2 * MIN
    ok(m, 10 * MIN, "turn_end")
    assert m.notes[-1]["kind"] == "turn_end" and m.notes[-1]["turn_ms"] == 2 * MIN


def test_the_organisers_events_are_refused_once_the_match_is_over():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    ok(m, 2 * MIN, "penalty", p="A", kind="match_loss", code="unsporting")
    assert no(m, 3 * MIN, "pause") == "the match is over"
    assert no(m, 3 * MIN, "extend", ms=MIN) == "the match is over"


def test_the_sheet_shows_the_pause_and_the_extension():
    r = Replay(with_sheet=True)
    for line in ('{"t":0,"ev":"round_start","round":2,"kind":"swiss",'
                 '"names":{"A":"Kim Minsu","B":"Budi Santoso"}}',
                 '{"t":60000,"ev":"duel_start","first":"A"}',
                 '{"t":600000,"ev":"extend","ms":300000}',
                 '{"t":2640000,"ev":"pause"}',
                 '{"t":2820000,"ev":"resume"}'):
        r.feed(line)
    assert r.rejected == []
    lines = record_lines(r.sheet)
    assert lines == ["+5:00", "PAUSE 44:00-47:00"]
    pause = [row for row in r.sheet.sections[-1].rows if row[2] == "pause"][0]
    assert pause[:4] == ["mark", 2640000, "pause", 2820000]


def test_names_in_round_start_must_be_two_strings():
    r = Replay()
    r.feed('{"t":0,"ev":"round_start","round":1,"kind":"swiss","names":{"A":"x","B":"y"}}')
    for bad in ('{"A":"x"}', '{"A":"x","B":3}', '["x","y"]', '{"A":"","B":"y"}'):
        r2 = Replay()
        try:
            r2.feed('{"t":0,"ev":"round_start","round":1,"kind":"swiss","names":%s}' % bad)
        except Exception as e:
            assert "names" in str(e), e
        else:
            assert False, bad
