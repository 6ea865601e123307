# When time runs out: KR 2.C judgements 1-4 and the 30:00 cap (rules.md section 3).
from dc import new, ok, no, win_duel, v, MIN

LIMIT = 45 * MIN


def _one_nil(kind="swiss", **opts):
    m = new(kind, **opts)
    ok(m, MIN, "duel_start", first="A")
    win_duel(m, 10 * MIN, "A")
    ok(m, 12 * MIN, "duel_start", first="B")
    return m


def test_j1_swiss_time_in_duel_1_is_a_double_loss_at_the_instant():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    ok(m, LIMIT - 1, "tick")
    assert v(m, "phase") == "duel"
    ok(m, LIMIT, "tick")
    assert v(m, "result") == "double_loss" and v(m, "duels") == []


def test_j1_swiss_before_duel_1_started():
    m = new()
    ok(m, LIMIT, "tick")
    assert v(m, "result") == "double_loss"


def test_j1_elimination_duel_1_is_finished_and_its_winner_wins_the_match():
    m = new("elimination")
    ok(m, MIN, "duel_start", first="A")
    ok(m, 30 * MIN, "lp", A=-500)
    ok(m, LIMIT + 1, "tick")
    assert v(m, "phase") == "time_turn"
    ok(m, LIMIT + MIN, "turn_end")
    assert v(m, "phase") == "extra_turn"
    ok(m, LIMIT + 2 * MIN, "turn_end")
    assert v(m, "result") == "B" and v(m, "wins") == {"A": 0, "B": 1}
    assert v(m, "duels") == [{"winner": "B", "by": "time_lp"}]


def test_j1_elimination_surrender_would_decide_and_is_refused():
    m = new("elimination")
    ok(m, MIN, "duel_start", first="A")
    ok(m, LIMIT, "tick")
    assert no(m, LIMIT + 1, "surrender", p="A") == "surrender would decide the match"


def test_j1_elimination_drawn_duel_1_then_an_extra_duel_decides():
    m = new("elimination")
    ok(m, MIN, "duel_start", first="A")
    ok(m, LIMIT + 1, "lp", A=-8000, B=-8000)
    assert v(m, "phase") == "interval"
    ok(m, LIMIT + MIN, "duel_start", first="B")
    assert v(m, "phase") == "extra_duel"
    win_duel(m, LIMIT + 2 * MIN, "B")
    assert v(m, "result") == "B" and v(m, "wins") == {"A": 0, "B": 1}


def test_j3_whatever_the_score_in_elimination_after_a_drawn_duel_1():
    # Time in duel 2: J3, not the J1/J2 shortcut. A won duel 2 under J3: 1-0, so J4
    # follows (an extra duel), and surrender is what it would be at 1-0.
    m = new("elimination")
    ok(m, MIN, "duel_start", first="A")
    ok(m, 10 * MIN, "duel_end", winner="draw")
    ok(m, 12 * MIN, "duel_start", first="B")
    ok(m, 20 * MIN, "lp", B=-3000)
    ok(m, LIMIT, "tick")
    assert v(m, "phase") == "time_turn" and not m.decide_first_win
    assert m.surrender_refusal("A") is None
    ok(m, LIMIT + 1, "turn_end")
    ok(m, LIMIT + 2, "turn_end")
    assert v(m, "duels")[-1] == {"winner": "A", "by": "time_lp"}
    assert v(m, "result") == "pending" and v(m, "phase") == "interval"
    ok(m, LIMIT + MIN, "duel_start", first="B")
    assert v(m, "phase") == "extra_duel"
    win_duel(m, LIMIT + 2 * MIN, "B")
    assert v(m, "result") == "pending" and v(m, "wins") == {"A": 1, "B": 1}
    ok(m, LIMIT + 3 * MIN, "duel_start", first="A")
    win_duel(m, LIMIT + 4 * MIN, "A")
    assert v(m, "result") == "A"


def test_j3_in_elimination_after_a_duel_1_lost_by_both():
    m = new("elimination")
    ok(m, MIN, "penalty", p="both", kind="duel_loss", code="deck_size")
    ok(m, 2 * MIN, "duel_start", first="A")
    ok(m, LIMIT, "tick")
    assert not m.decide_first_win
    ok(m, LIMIT + 1, "turn_end")
    ok(m, LIMIT + 2, "lp", A=-100)
    ok(m, LIMIT + 3, "turn_end")
    assert v(m, "result") == "pending" and v(m, "wins") == {"A": 0, "B": 1}


def test_j2_elimination_after_a_drawn_duel_1_the_first_duel_won_decides():
    m = new("elimination")
    ok(m, MIN, "duel_start", first="A")
    ok(m, 10 * MIN, "duel_end", winner="draw")
    ok(m, LIMIT, "tick")
    assert m.decide_first_win
    ok(m, LIMIT + MIN, "duel_start", first="A")
    assert v(m, "phase") == "extra_duel"
    win_duel(m, LIMIT + 2 * MIN, "B")
    assert v(m, "result") == "B" and v(m, "wins") == {"A": 0, "B": 1}


def test_j2_swiss_is_a_double_loss():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    win_duel(m, 40 * MIN, "A")
    ok(m, LIMIT, "tick")
    assert v(m, "result") == "double_loss" and v(m, "wins") == {"A": 1, "B": 0}


def test_j2_elimination_duel_1_winner_wins_at_once():
    m = new("elimination")
    ok(m, MIN, "duel_start", first="A")
    win_duel(m, 40 * MIN, "B")
    ok(m, LIMIT, "tick")
    assert v(m, "result") == "B"


def test_j3_extra_turn_even_when_one_player_leads():
    m = _one_nil()
    ok(m, 20 * MIN, "lp", B=-3000)
    ok(m, LIMIT + 10, "tick")
    assert v(m, "phase") == "time_turn"
    ok(m, LIMIT + MIN, "turn_end")
    assert v(m, "phase") == "extra_turn" and v(m, "result") == "pending"
    ok(m, LIMIT + 2 * MIN, "turn_end")
    assert v(m, "result") == "A" and v(m, "duels")[-1] == {"winner": "A", "by": "time_lp"}


def test_j3_duel_that_ends_normally_in_the_extra_turn():
    m = _one_nil()
    ok(m, LIMIT, "tick")
    ok(m, LIMIT + MIN, "turn_end")
    win_duel(m, LIMIT + 90000, "B")
    assert v(m, "duels")[-1] == {"winner": "B", "by": "lp"}
    assert v(m, "phase") == "interval"
    ok(m, LIMIT + 2 * MIN, "duel_start", first="A")
    assert v(m, "phase") == "extra_duel"


def test_j3_extra_turns_setting_counts_turns():
    m = _one_nil(extra_turns=3)
    ok(m, LIMIT, "tick")
    ok(m, LIMIT + 1, "turn_end")
    notes = [n for n in m.notes if n["kind"] == "extra_turn"]
    assert (notes[-1]["no"], notes[-1]["total"]) == (1, 3)
    ok(m, LIMIT + 2, "turn_end")
    ok(m, LIMIT + 3, "turn_end")
    assert v(m, "phase") == "extra_turn"
    ok(m, LIMIT + 4, "lp", A=-1)
    ok(m, LIMIT + 5, "turn_end")
    assert v(m, "result") == "pending" and v(m, "duels")[-1] == {"winner": "B", "by": "time_lp"}
    assert v(m, "wins") == {"A": 1, "B": 1}


def test_j3_zero_extra_turns_compares_at_the_end_of_the_time_turn():
    m = _one_nil(extra_turns=0)
    ok(m, 20 * MIN, "lp", A=-10)
    ok(m, LIMIT, "tick")
    ok(m, LIMIT + 1, "turn_end")
    assert v(m, "duels")[-1] == {"winner": "B", "by": "time_lp"}


def test_sudden_death_judges_only_turns_with_an_lp_change_and_costs_count():
    m = _one_nil()
    ok(m, LIMIT, "tick")
    ok(m, LIMIT + 1, "turn_end")
    ok(m, LIMIT + 2, "turn_end")
    assert v(m, "phase") == "sudden_death"
    ok(m, LIMIT + 3, "turn_end")            # no LP change: no judgement
    ok(m, LIMIT + 4, "lp", A=-1000)
    ok(m, LIMIT + 5, "lp", B=-1000)
    ok(m, LIMIT + 6, "turn_end")            # changed, but equal: play on
    assert v(m, "phase") == "sudden_death"
    ok(m, LIMIT + 7, "lp", B=-100, cost=True)
    ok(m, LIMIT + 8, "turn_end")
    assert v(m, "duels")[-1] == {"winner": "A", "by": "sudden_death"}
    assert v(m, "result") == "A"


def test_j3_without_a_match_winner_goes_to_an_extra_duel_of_four_turns():
    m = _one_nil()
    ok(m, LIMIT, "tick")
    ok(m, LIMIT + 1, "turn_end")
    ok(m, LIMIT + 2, "lp", A=-100)
    ok(m, LIMIT + 3, "turn_end")
    assert v(m, "wins") == {"A": 1, "B": 1}
    ok(m, LIMIT + MIN, "duel_start", first="A")
    assert v(m, "phase") == "extra_duel"
    for k in range(3):
        ok(m, LIMIT + MIN + k + 1, "turn_end")
        assert v(m, "phase") == "extra_duel"
    ok(m, LIMIT + 2 * MIN, "turn_end")
    assert v(m, "phase") == "sudden_death"
    ok(m, LIMIT + 2 * MIN + 1, "lp", B=-50)
    ok(m, LIMIT + 2 * MIN + 2, "turn_end")
    assert v(m, "result") == "A" and v(m, "duels")[-1]["by"] == "sudden_death"


def test_j4_again_after_a_drawn_extra_duel():
    m = _one_nil()
    win_duel(m, 20 * MIN, "B")
    ok(m, LIMIT, "tick")                    # J4: time called in the interval after duel 2
    ok(m, LIMIT + MIN, "duel_start", first="A")
    assert v(m, "phase") == "extra_duel"
    ok(m, LIMIT + 2 * MIN, "lp", A=-8000, B=-8000)
    ok(m, LIMIT + 3 * MIN, "duel_start", first="B")
    assert v(m, "phase") == "extra_duel"
    win_duel(m, LIMIT + 4 * MIN, "A")
    assert v(m, "result") == "A" and v(m, "wins") == {"A": 2, "B": 1}


def test_cap_ends_everything_as_a_double_loss():
    m = _one_nil()
    ok(m, LIMIT, "tick")
    ok(m, LIMIT + 1, "turn_end")
    ok(m, LIMIT + 2, "turn_end")
    assert v(m, "phase") == "sudden_death"
    ok(m, LIMIT + 30 * MIN - 1, "turn_end")
    assert v(m, "phase") == "sudden_death"
    ok(m, LIMIT + 30 * MIN, "tick")
    assert v(m, "result") == "double_loss" and v(m, "phase") == "over"


def test_custom_limit_and_cap():
    m = new(limit_s=600, cap_s=60)
    ok(m, MIN, "duel_start", first="A")
    win_duel(m, 2 * MIN, "A")
    ok(m, 3 * MIN, "duel_start", first="A")
    ok(m, 10 * MIN, "tick")
    assert v(m, "phase") == "time_turn"
    ok(m, 11 * MIN - 1, "tick")
    assert v(m, "phase") == "time_turn"
    assert no(m, 11 * MIN, "lp", A=-5) == "the match is over"
    assert v(m, "result") == "double_loss" and v(m, "lp") == {"A": 8000, "B": 8000}


# events.md: a rejected event is a tick at its t; the transitions due by then stand.

def test_a_refused_event_is_a_tick_at_its_t():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    assert no(m, LIMIT + 5, "duel_start", first="A") == "the match is over"
    assert v(m, "result") == "double_loss" and m.now_ms == LIMIT + 5
    assert no(m, LIMIT + 4, "tick") == "out of time order"


def test_a_lethal_at_exactly_the_limit_of_a_swiss_duel_1_is_a_double_loss():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    assert no(m, LIMIT, "lp", B=-8000) == "the match is over"
    assert v(m, "result") == "double_loss" and v(m, "duels") == []


def test_a_lethal_at_exactly_the_cap_is_a_double_loss():
    m = _one_nil()
    ok(m, LIMIT, "tick")
    ok(m, LIMIT + 1, "turn_end")
    ok(m, LIMIT + 2, "turn_end")
    assert v(m, "phase") == "sudden_death"
    assert no(m, LIMIT + 30 * MIN, "lp", A=-8000) == "the match is over"
    assert v(m, "result") == "double_loss" and v(m, "wins") == {"A": 1, "B": 0}


def test_a_refused_event_after_the_limit_still_calls_time():
    m = _one_nil()
    assert no(m, LIMIT + 1, "duel_start", first="A") == "a duel is in progress"
    assert v(m, "phase") == "time_turn" and m.time_called


# events.md: transitions due at one instant fire as tardiness, time called, the cap.

def test_tardiness_fires_before_time_called_at_the_same_instant():
    # Limit 5:00: B absent loses duel 1 first, so time is called between duels 1 and 2
    # (J2): swiss, a double loss; elimination, A wins the match with that duel.
    m = new(seating=True, limit_s=300)
    ok(m, 0, "seated", p="A")
    ok(m, 5 * MIN, "tick")
    assert v(m, "duels") == [{"winner": "A", "by": "penalty"}]
    assert v(m, "result") == "double_loss"
    m = new("elimination", seating=True, limit_s=300)
    ok(m, 0, "seated", p="A")
    ok(m, 5 * MIN, "tick")
    assert v(m, "result") == "A" and v(m, "wins") == {"A": 1, "B": 0}


def test_tardiness_match_loss_fires_before_the_cap_at_the_same_instant():
    # Limit 5:00 and cap 5:00: both absent at 5:00 lose duel 1 (time called after it,
    # elimination: the next duel won decides); A arrives; at 10:00 B's match loss for
    # tardiness comes before the cap's double loss.
    m = new("elimination", seating=True, limit_s=300, cap_s=300)
    ok(m, 5 * MIN, "tick")
    assert v(m, "duels") == [{"winner": "none", "by": "penalty"}] and m.time_called
    ok(m, 7 * MIN, "seated", p="A")
    ok(m, 10 * MIN, "tick")
    assert v(m, "result") == "A"
    assert v(m, "penalties")[-1] == {"p": "B", "kind": "match_loss", "code": "tardiness"}
    m = new("elimination", seating=True, limit_s=300, cap_s=300)
    ok(m, 10 * MIN, "tick")                 # both still absent: match loss for both
    assert v(m, "result") == "double_loss"
    assert [x["kind"] for x in v(m, "penalties")] == ["duel_loss"] * 2 + ["match_loss"] * 2


def test_time_called_fires_before_the_cap_at_the_same_instant():
    # cap_s 0: in an elimination duel 1 time is called (J1: the duel goes on) and the cap
    # ends it at the same instant, a double loss.
    m = new("elimination", cap_s=0)
    ok(m, MIN, "duel_start", first="A")
    ok(m, LIMIT, "tick")
    assert v(m, "result") == "double_loss"
    assert [n["kind"] for n in m.notes[-3:]] == ["time", "cap", "match_over"]


def test_an_extra_duel_started_before_time_keeps_its_four_turns():
    m = new()
    for i, w in enumerate(("A", "draw", "B")):
        ok(m, (i * 10 + 1) * MIN, "duel_start", first="A")
        ok(m, (i * 10 + 5) * MIN, "duel_end", winner=w)
    ok(m, 42 * MIN, "duel_start", first="B")
    ok(m, LIMIT + 1, "turn_end")
    assert v(m, "phase") == "extra_duel"


def test_an_extension_moves_the_limit_until_time_is_called():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    ok(m, 10 * MIN, "extend", ms=3 * MIN)
    ok(m, LIMIT + MIN, "tick")
    assert v(m, "phase") == "duel"
    ok(m, LIMIT + 3 * MIN, "tick")
    assert v(m, "result") == "double_loss"
    m = new()
    ok(m, LIMIT, "tick")
    assert no(m, LIMIT, "extend", ms=60000) == "the match is over"


def test_check_answers_without_changing_anything():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    # A transition due by the event's t (time, here) would change the answer: check does
    # not play it out, it says so; once time has passed to t, it answers.
    assert m.check({"t": LIMIT, "ev": "lp", "A": -1}) == "time has moved on since the last look"
    assert m.check({"t": 2 * MIN, "ev": "lp", "A": -1}) is None
    assert m.check({"t": 2 * MIN, "ev": "undo"}) == "only the last LP entry of this turn can be taken back"
    assert v(m, "lp") == {"A": 8000, "B": 8000} and m.now_ms == MIN and m.notes[-1]["kind"] == "duel"
    m.advance_to(LIMIT)
    assert m.check({"t": LIMIT, "ev": "lp", "A": -1}) == "the match is over"
