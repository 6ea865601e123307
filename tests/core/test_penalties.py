# Penalties, roles and escalation (rules.md section 5; ID A-F; KR penalty 1-2).
from dc import new, ok, no, v, MIN


def _warn(m, t, p, code, **kw):
    return ok(m, t, "penalty", p=p, kind="warning", code=code, **kw)


def test_third_same_warning_is_a_duel_loss_and_different_codes_do_not_add_up():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    _warn(m, 2 * MIN, "A", "slow_play")
    _warn(m, 3 * MIN, "A", "extra_draw")
    _warn(m, 4 * MIN, "A", "extra_draw")
    _warn(m, 5 * MIN, "B", "slow_play")
    assert v(m, "phase") == "duel"
    _warn(m, 6 * MIN, "A", "slow_play")
    _warn(m, 7 * MIN, "A", "slow_play")
    assert v(m, "penalties")[-1] == {"p": "A", "kind": "duel_loss", "code": "slow_play"}
    assert v(m, "duels") == [{"winner": "B", "by": "penalty"}]


def test_a_fourth_same_warning_is_a_duel_loss_again():
    m = new()
    for i in range(3):
        _warn(m, i, "B", "unsporting")
    assert v(m, "duels") == [{"winner": "A", "by": "penalty"}]
    _warn(m, 10, "B", "unsporting")
    assert v(m, "result") == "A"


def test_kr_rules_leave_escalation_and_roles_to_the_judge():
    m = new(rules="KR")
    ok(m, MIN, "duel_start", first="A")
    for i in range(3):
        _warn(m, 2 * MIN + i, "A", "slow_play")
    assert v(m, "duels") == [] and v(m, "penalties")[-1]["kind"] == "warning"
    ok(m, 3 * MIN, "penalty", p="A", kind="match_loss", code="stalling", judge="floor")
    assert v(m, "result") == "B"


def test_only_the_head_judge_gives_match_loss_and_dq_under_id():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    for kind in ("match_loss", "dq", "dq_prizes"):
        why = no(m, 2 * MIN, "penalty", p="A", kind=kind, code="stalling", judge="floor")
        assert why == "only the head judge may give " + kind
    ok(m, 2 * MIN, "penalty", p="A", kind="duel_loss", code="extra_draw", judge="floor")
    ok(m, 3 * MIN, "penalty", p="B", kind="match_loss", code="tardiness", judge="floor")
    assert v(m, "result") == "A"


def test_dq_ends_the_match_for_the_penalised_player():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    ok(m, 2 * MIN, "penalty", p="B", kind="dq_prizes", code="bribery", judge="head")
    assert v(m, "result") == "A" and v(m, "phase") == "over"


def test_a_duel_loss_between_duels_costs_the_next_duel_at_once():
    m = new()
    ok(m, MIN, "penalty", p="A", kind="duel_loss", code="deck_size")
    assert v(m, "duels") == [{"winner": "B", "by": "penalty"}]
    assert v(m, "phase") == "interval"
    ok(m, 2 * MIN, "duel_start", first="A")
    ok(m, 3 * MIN, "lp", B=-8000)
    assert v(m, "wins") == {"A": 1, "B": 1}


def test_caution_changes_nothing_but_the_record():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    ok(m, 2 * MIN, "penalty", p="A", kind="caution", code="rules_error")
    assert v(m, "phase") == "duel"
    assert v(m, "penalties") == [{"p": "A", "kind": "caution", "code": "rules_error"}]


def test_any_code_string_is_accepted():
    m = new()
    ok(m, MIN, "penalty", p="A", kind="caution", code="something_new")
    assert no(m, MIN, "penalty", p="A", kind="caution", code="") is not None
