# Match shape and a duel in normal time (rules.md sections 1-2).
from dc import new, ok, no, win_duel, v, MIN


def test_two_wins_end_the_match():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    win_duel(m, 5 * MIN, "A")
    assert v(m, "phase") == "interval" and v(m, "result") == "pending"
    ok(m, 6 * MIN, "duel_start", first="B")
    win_duel(m, 9 * MIN, "A")
    assert v(m, "result") == "A" and v(m, "phase") == "over"
    assert v(m, "wins") == {"A": 2, "B": 0}


def test_every_duel_starts_at_8000_and_lp_never_below_zero():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    ok(m, MIN + 1, "lp", A=-1000, B=500)
    assert v(m, "lp") == {"A": 7000, "B": 8500}
    ok(m, MIN + 2, "lp", B=-9000)
    assert v(m, "lp") == {"A": 7000, "B": 0}
    assert v(m, "duels") == [{"winner": "A", "by": "lp"}]
    ok(m, 2 * MIN, "duel_start", first="B")
    assert v(m, "lp") == {"A": 8000, "B": 8000}


def test_both_at_zero_in_one_change_is_a_draw():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    ok(m, 2 * MIN, "lp", A=-8000, B=-9000)
    assert v(m, "duels") == [{"winner": "draw", "by": "lp"}]
    assert v(m, "wins") == {"A": 0, "B": 0}


def test_duel_end_is_a_game_win():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    ok(m, 2 * MIN, "duel_end", winner="B")
    ok(m, 3 * MIN, "duel_start", first="A")
    ok(m, 4 * MIN, "duel_end", winner="draw")
    assert v(m, "duels") == [{"winner": "B", "by": "game"}, {"winner": "draw", "by": "game"}]


def test_after_three_duels_without_a_winner_the_next_is_an_extra_duel():
    m = new()
    for i, w in enumerate(("A", "draw", "B")):
        ok(m, (i * 10 + 1) * MIN, "duel_start", first="A")
        ok(m, (i * 10 + 5) * MIN, "duel_end", winner=w)
    ok(m, 31 * MIN, "duel_start", first="B")
    assert v(m, "phase") == "extra_duel"
    for k in range(3):
        ok(m, 32 * MIN + k, "turn_end")
    ok(m, 33 * MIN, "lp", A=-100)
    ok(m, 34 * MIN, "turn_end")
    assert v(m, "result") == "B"
    assert v(m, "duels")[-1] == {"winner": "B", "by": "time_lp"}


def test_events_that_need_a_duel_are_refused_outside_one():
    m = new()
    for name, keys in (("lp", {"A": -1}), ("undo", {}), ("turn_end", {}),
                       ("duel_end", {"winner": "A"}), ("surrender", {"p": "A"}),
                       ("judge_fix", {"p": "A", "lp": 1})):
        assert no(m, MIN, name, **keys) == "no duel in progress"
    ok(m, MIN, "duel_start", first="A")
    assert no(m, MIN, "duel_start", first="B") == "a duel is in progress"


def test_a_second_round_start_is_refused():
    m = new()
    assert no(m, 1, "round_start", round=2, kind="swiss") == "the round has already started"


def test_events_out_of_time_order_are_refused():
    m = new()
    ok(m, 5 * MIN, "duel_start", first="A")
    assert no(m, 4 * MIN, "lp", A=-100) == "out of time order"
    ok(m, 5 * MIN, "lp", A=-100)


def test_everything_but_tick_and_penalty_is_refused_once_over():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    win_duel(m, 2 * MIN, "A")
    ok(m, 3 * MIN, "duel_start", first="B")
    win_duel(m, 4 * MIN, "A")
    for name, keys in (("duel_start", {"first": "A"}), ("lp", {"A": -1}), ("turn_end", {}),
                       ("surrender", {"p": "A"}), ("duel_end", {"winner": "B"}),
                       ("judge_fix", {"p": "A", "lp": 1}), ("extend", {"ms": 60000}),
                       ("judge_void", {"p": "A", "code": "tardiness"})):
        assert no(m, 5 * MIN, name, **keys) == "the match is over"
    ok(m, 99 * MIN, "tick")
    assert v(m, "result") == "A"


def test_turns_alternate_from_the_first_player():
    m = new()
    ok(m, MIN, "duel_start", first="B")
    assert m.turn == 1 and m.turn_player() == "B"
    ok(m, 2 * MIN, "turn_end")
    assert m.turn == 2 and m.turn_player() == "A"
    ok(m, 3 * MIN, "turn_end")
    assert m.turn_player() == "B"
