# Penalties, roles and escalation (rules.md section 5; ID A-F; KR penalty 1-2).
from dc import new, ok, no, win_duel, v, MIN


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
    assert no(m, MIN, "penalty", p="A", kind="caution", code="") == \
        "'code' must be a non-empty string"


# One penalty for both players (p "both", rules.md 5).

def test_a_duel_loss_for_both_before_the_match_costs_duel_1_for_both():
    m = new()
    ok(m, MIN, "penalty", p="both", kind="duel_loss", code="decklist_mismatch")
    assert v(m, "duels") == [{"winner": "none", "by": "penalty"}]
    assert v(m, "penalties") == [{"p": "A", "kind": "duel_loss", "code": "decklist_mismatch"},
                                 {"p": "B", "kind": "duel_loss", "code": "decklist_mismatch"}]
    assert v(m, "wins") == {"A": 0, "B": 0} and v(m, "phase") == "interval"
    ok(m, 2 * MIN, "duel_start", first="A")
    ok(m, 3 * MIN, "lp", B=-8000)
    ok(m, 4 * MIN, "duel_start", first="A")
    assert v(m, "result") == "pending" and v(m, "wins") == {"A": 1, "B": 0}


def test_a_duel_loss_for_both_in_a_duel_ends_it_lost_by_both():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    win_duel(m, 2 * MIN, "A")
    ok(m, 3 * MIN, "duel_start", first="B")
    ok(m, 4 * MIN, "penalty", p="both", kind="duel_loss", code="deck_copies")
    assert v(m, "duels")[-1] == {"winner": "none", "by": "penalty"}
    assert v(m, "wins") == {"A": 1, "B": 0} and v(m, "result") == "pending"


def test_a_match_loss_for_both_is_a_double_loss():
    for kind in ("match_loss", "dq", "dq_prizes"):
        m = new()
        ok(m, MIN, "duel_start", first="A")
        ok(m, 2 * MIN, "penalty", p="both", kind=kind, code="random_result", judge="head")
        assert v(m, "result") == "double_loss" and v(m, "phase") == "over"
        assert [x["p"] for x in v(m, "penalties")] == ["A", "B"]
    m = new()
    assert no(m, MIN, "penalty", p="both", kind="match_loss", code="stalling",
              judge="floor") == "only the head judge may give match_loss"


def test_warnings_for_both_escalate_per_player():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    ok(m, 2 * MIN, "penalty", p="A", kind="warning", code="rules_error")
    ok(m, 3 * MIN, "penalty", p="A", kind="warning", code="rules_error")
    ok(m, 4 * MIN, "penalty", p="both", kind="warning", code="rules_error")
    assert v(m, "penalties")[-2:] == [{"p": "A", "kind": "duel_loss", "code": "rules_error"},
                                      {"p": "B", "kind": "warning", "code": "rules_error"}]
    assert v(m, "duels") == [{"winner": "B", "by": "penalty"}]
    ok(m, 5 * MIN, "penalty", p="both", kind="caution", code="marked_cards")
    assert len(v(m, "duels")) == 1 and len(v(m, "penalties")) == 6


def test_both_is_only_for_penalties():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    for name, keys in (("surrender", {"p": "both"}), ("judge_fix", {"p": "both", "lp": 1}),
                       ("judge_void", {"p": "both", "code": "tardiness"})):
        assert no(m, 2 * MIN, name, **keys) == "'p' must be A or B"


# Penalties after the match (rules.md 5, events.md).

def test_a_penalty_after_the_match_is_recorded_and_changes_nothing_else():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    win_duel(m, 2 * MIN, "A")
    ok(m, 3 * MIN, "duel_start", first="B")
    win_duel(m, 4 * MIN, "A")
    before = m.verdict()
    ok(m, 5 * MIN, "penalty", p="A", kind="match_loss", code="unsporting", judge="head")
    ok(m, 6 * MIN, "penalty", p="both", kind="duel_loss", code="deck_size")
    after = m.verdict()
    assert after["penalties"] == [
        {"p": "A", "kind": "match_loss", "code": "unsporting", "after_match": True},
        {"p": "A", "kind": "duel_loss", "code": "deck_size", "after_match": True},
        {"p": "B", "kind": "duel_loss", "code": "deck_size", "after_match": True}]
    after["penalties"] = []
    assert after == before
    assert m.notes[-1]["kind"] == "penalty" and m.notes[-1]["pen"]["after_match"] is True


def test_after_the_match_the_same_checks_hold():
    m = new()
    ok(m, MIN, "penalty", p="A", kind="match_loss", code="stalling", judge="head")
    assert no(m, 2 * MIN, "penalty", p="B", kind="dq", code="bribery",
              judge="floor") == "only the head judge may give dq"
    for i in range(3):
        ok(m, 3 * MIN + i, "penalty", p="B", kind="warning", code="unsporting")
    assert v(m, "penalties")[-1] == {"p": "B", "kind": "duel_loss", "code": "unsporting",
                                     "after_match": True}
    assert v(m, "result") == "B" and v(m, "duels") == []


def test_a_penalty_at_the_instant_time_ends_the_match_comes_after_it():
    m = new()
    ok(m, MIN, "duel_start", first="A")
    ok(m, 45 * MIN, "penalty", p="A", kind="duel_loss", code="deck_size")
    assert v(m, "result") == "double_loss" and v(m, "duels") == []
    assert v(m, "penalties")[0]["after_match"] is True
