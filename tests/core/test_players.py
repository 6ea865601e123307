# Surrender, undo and judge fixes (rules.md section 2).
from dc import new, ok, no, win_duel, v, MIN

UNDO_REFUSED = "only the last LP entry of this turn can be taken back"

LIMIT = 45 * MIN


def test_surrender_concedes_the_duel_only():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    ok(m, 2 * MIN, "surrender", p="A")
    assert v(m, "duels") == [{"winner": "B", "by": "surrender"}]
    assert v(m, "result") == "pending"


def test_surrender_refused_when_the_opponent_has_a_win():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    win_duel(m, 2 * MIN, "A")
    ok(m, 3 * MIN, "duel_start", first="A")
    assert no(m, 4 * MIN, "surrender", p="B") == "surrender would decide the match"
    ok(m, 5 * MIN, "surrender", p="A")       # the leader may concede: 1-1
    assert v(m, "wins") == {"A": 1, "B": 1}
    ok(m, 6 * MIN, "duel_start", first="B")
    assert no(m, 7 * MIN, "surrender", p="A") == "surrender would decide the match"
    assert no(m, 7 * MIN, "surrender", p="B") == "surrender would decide the match"


def test_undo_takes_back_only_the_last_entry_of_the_turn():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    ok(m, MIN + 1, "lp", A=-100)
    ok(m, MIN + 2, "lp", A=-200)
    ok(m, MIN + 3, "undo")
    assert v(m, "lp")["A"] == 7900
    assert no(m, MIN + 4, "undo") == "only the last LP entry of this turn can be taken back"
    ok(m, MIN + 5, "lp", B=-300)
    ok(m, MIN + 6, "turn_end")
    assert no(m, MIN + 7, "undo") == UNDO_REFUSED
    assert v(m, "lp") == {"A": 7900, "B": 7700}


def test_undo_is_closed_by_any_other_record():
    for name, keys in (("penalty", {"p": "A", "kind": "caution", "code": "rules_error"}),
                       ("judge_fix", {"p": "B", "lp": 5000})):
        m = new()
        ok(m, MIN, "duel_start", first="A")
        ok(m, MIN + 1, "lp", A=-100)
        ok(m, MIN + 2, name, **keys)
        assert no(m, MIN + 3, "undo") == UNDO_REFUSED


def test_undo_survives_a_tick_and_a_refused_event():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    ok(m, MIN + 1, "lp", A=-100)
    ok(m, MIN + 2, "tick")
    no(m, MIN + 3, "duel_start", first="A")
    ok(m, MIN + 4, "undo")
    assert v(m, "lp")["A"] == 8000


def test_undo_in_sudden_death_forgets_the_lp_change():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    win_duel(m, 2 * MIN, "A")
    ok(m, 3 * MIN, "duel_start", first="B")
    ok(m, LIMIT, "turn_end")
    ok(m, LIMIT + 1, "turn_end")
    assert v(m, "phase") == "sudden_death"
    ok(m, LIMIT + 2, "lp", A=-100)
    ok(m, LIMIT + 3, "undo")
    ok(m, LIMIT + 4, "turn_end")
    assert v(m, "phase") == "sudden_death"


def test_judge_fix_sets_lp_and_zero_ends_the_duel():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    ok(m, MIN + 1, "lp", A=-1000)
    ok(m, MIN + 2, "judge_fix", p="A", lp=7500)
    assert v(m, "lp") == {"A": 7500, "B": 8000}
    fix = [n for n in m.notes if n["kind"] == "fix"][0]
    keys = ("p", "before", "after", "turn", "turn_player")
    assert [fix[k] for k in keys] == ["A", 7000, 7500, 1, "A"]
    ok(m, MIN + 3, "judge_fix", p="B", lp=0)
    assert v(m, "duels") == [{"winner": "A", "by": "lp"}]


def test_judge_fix_counts_as_an_lp_change_in_sudden_death():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    win_duel(m, 2 * MIN, "A")
    ok(m, 3 * MIN, "duel_start", first="B")
    ok(m, LIMIT, "turn_end")
    ok(m, LIMIT + 1, "turn_end")
    ok(m, LIMIT + 2, "judge_fix", p="B", lp=7000)
    ok(m, LIMIT + 3, "turn_end")
    assert v(m, "result") == "A"
