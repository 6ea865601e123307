# The infraction catalogue as data (shared/spec/infractions.md; both seeds).
from duelclock.core import catalogue


def test_guidelines_differ_per_rule_set_where_the_seeds_differ():
    assert catalogue.guideline("extra_draw", "KR") == ("warning",)
    assert catalogue.guideline("extra_draw", "ID") == ("warning", "duel_loss")
    assert catalogue.guideline("phone_use", "KR") is None
    assert catalogue.guideline("revealed_hidden", "ID") is None
    assert catalogue.guideline("nope") is None


def test_codes_per_rule_set_and_every_kind_is_known():
    kr, id_ = catalogue.codes("KR"), catalogue.codes("ID")
    assert "penalty_request" in kr and "penalty_request" not in id_
    assert "lp_not_written" in id_ and "lp_not_written" not in kr
    for row in catalogue.ROWS:
        for g in (row[1], row[2]):
            for kind in g or ():
                assert kind in catalogue.KINDS


def test_names_in_three_languages():
    assert catalogue.name("tardiness", "ko") == "지각"
    assert catalogue.name("tardiness", "id") == "Keterlambatan"
    assert catalogue.name("tardiness", "xx") == "Tardiness"
    assert catalogue.name("made_up") == "made_up"
    assert catalogue.kind_name("duel_loss", "id") == "Duel Forfeiture"
    for row in catalogue.ROWS:
        assert len(row[3]) == 3 and all(row[3])
