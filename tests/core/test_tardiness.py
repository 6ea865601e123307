# Check-in and tardiness by the clock (rules.md section 4; KR penalty 5; ID Tardiness).
from dc import new, ok, no, v, MIN

NOTHING_TO_VOID = "no automatic penalty with that code for that player"


def test_on_time_players_get_nothing():
    m = new(seating=True)
    ok(m, -MIN, "seated", p="A")
    ok(m, 0, "seated", p="B")
    ok(m, 1, "duel_start", first="A")
    assert v(m, "penalties") == []


def test_a_duel_cannot_start_until_both_are_seated():
    m = new(seating=True)
    ok(m, 0, "seated", p="A")
    assert no(m, MIN, "duel_start", first="A") == "both players must be seated"
    assert no(m, MIN, "seated", p="A") == "already seated"


def test_seated_is_refused_without_check_in():
    m = new()
    assert no(m, 0, "seated", p="A") == "this round does not use check-in"


def test_late_before_five_minutes_is_a_warning():
    m = new(seating=True)
    ok(m, 0, "seated", p="A")
    ok(m, 5 * MIN - 1, "seated", p="B")
    assert v(m, "penalties") == [{"p": "B", "kind": "warning", "code": "tardiness"}]


def test_not_seated_at_five_minutes_loses_duel_1_and_play_goes_on():
    m = new(seating=True)
    ok(m, 0, "seated", p="A")
    ok(m, 5 * MIN, "seated", p="B")         # the duel loss fired first, at 5:00
    assert v(m, "penalties") == [{"p": "B", "kind": "duel_loss", "code": "tardiness"}]
    assert v(m, "duels") == [{"winner": "A", "by": "penalty"}]
    assert v(m, "phase") == "interval"
    ok(m, 6 * MIN, "duel_start", first="B")
    assert len(m.duels) == 1 and m.phase() == "duel"


def test_not_seated_at_ten_minutes_loses_the_match():
    m = new(seating=True)
    ok(m, 0, "seated", p="A")
    ok(m, 10 * MIN, "tick")
    assert v(m, "result") == "A"
    kinds = [p["kind"] for p in v(m, "penalties")]
    assert kinds == ["duel_loss", "match_loss"]


def test_both_absent():
    m = new(seating=True)
    ok(m, 5 * MIN, "tick")
    assert v(m, "duels") == [{"winner": "none", "by": "penalty"}]
    assert v(m, "wins") == {"A": 0, "B": 0}
    ok(m, 10 * MIN, "tick")
    assert v(m, "result") == "double_loss"


def test_judge_void_of_a_tardiness_warning():
    m = new(seating=True)
    ok(m, 0, "seated", p="A")
    ok(m, 2 * MIN, "seated", p="B")
    ok(m, 3 * MIN, "judge_void", p="B", code="tardiness")
    assert v(m, "penalties") == []
    assert no(m, 4 * MIN, "judge_void", p="B", code="tardiness") == NOTHING_TO_VOID


def test_judge_void_of_a_duel_loss_gives_the_duel_back_and_excuses_the_player():
    m = new(seating=True)
    ok(m, 0, "seated", p="A")
    ok(m, 6 * MIN, "judge_void", p="B", code="tardiness")
    assert v(m, "duels") == [] and v(m, "wins") == {"A": 0, "B": 0}
    assert v(m, "phase") == "waiting"
    ok(m, 11 * MIN, "tick")                 # excused: no match loss at 10:00
    assert v(m, "result") == "pending"


def test_judge_void_after_a_duel_was_played_is_refused():
    m = new(seating=True)
    ok(m, 0, "seated", p="A")
    ok(m, 6 * MIN, "seated", p="B")
    ok(m, 7 * MIN, "duel_start", first="B")
    assert no(m, 8 * MIN, "judge_void", p="B", code="tardiness") == "a duel has been played since that penalty"


def test_judge_void_of_one_of_two_absent_players():
    m = new(seating=True)
    ok(m, 5 * MIN, "tick")
    ok(m, 5 * MIN + 1, "judge_void", p="A", code="tardiness")
    assert v(m, "duels") == [{"winner": "A", "by": "penalty"}]
    assert v(m, "wins") == {"A": 1, "B": 0}


def test_a_judges_penalty_is_not_voidable_as_automatic():
    m = new()
    ok(m, MIN, "penalty", p="A", kind="warning", code="tardiness")
    assert no(m, 2 * MIN, "judge_void", p="A", code="tardiness") == NOTHING_TO_VOID


def test_a_void_that_gives_the_second_win_ends_the_match():
    m = new(seating=True)
    ok(m, 1000, "penalty", p="B", kind="duel_loss", code="deck_size")
    ok(m, 5 * MIN, "tick")                  # nobody seated: duel 2 lost by both
    ok(m, 5 * MIN + 10000, "seated", p="A")
    ok(m, 5 * MIN + 20000, "judge_void", p="A", code="tardiness")
    assert v(m, "wins") == {"A": 2, "B": 0} and v(m, "result") == "A"


# events.md: a refused event is a tick at its t; the tardiness due by then stands.

def test_seated_at_exactly_ten_minutes_is_refused_and_the_match_loss_stands():
    m = new(seating=True)
    ok(m, 0, "seated", p="A")
    assert no(m, 10 * MIN, "seated", p="B") == "the match is over"
    assert v(m, "result") == "A"
    assert [x["kind"] for x in v(m, "penalties")] == ["duel_loss", "match_loss"]


def test_a_refused_line_just_after_five_minutes_keeps_the_duel_loss():
    m = new(seating=True)
    ok(m, 0, "seated", p="A")
    assert no(m, 5 * MIN + 1, "lp", A=-100) == "no duel in progress"
    assert v(m, "duels") == [{"winner": "A", "by": "penalty"}]
    assert v(m, "penalties") == [{"p": "B", "kind": "duel_loss", "code": "tardiness"}]
