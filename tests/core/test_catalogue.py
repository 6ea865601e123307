# The infraction catalogue as data (docs/rules.md, "Infractions"; both rule sets).
from duelclock.core import catalogue
from duelclock.core.lang import tr as lang_tr


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
    for rules, codes in (("KR", kr), ("ID", id_)):
        for code in codes:
            assert all(kind in catalogue.KINDS for kind in catalogue.guideline(code, rules))


def test_names_in_three_languages():
    assert catalogue.name("tardiness", "ko") == "지각"
    assert catalogue.name("tardiness", "id") == "Keterlambatan"
    assert catalogue.name("tardiness", "xx") == "Tardiness"
    assert catalogue.name("made_up") == "made_up"
    assert catalogue.kind_name("duel_loss", "id") == "Duel Forfeiture"
    assert catalogue.kind_name("warning", "id") == "Warning"             # as in English
    assert lang_tr("battery", "id", 80) == "bat 80%"
    for code in set(catalogue.codes("KR") + catalogue.codes("ID")):
        names = [catalogue.name(code, lang) for lang in ("en", "ko", "id")]
        assert all(names) and code not in names


def test_text_tables_are_well_formed():
    # One line per key, every field there, no key twice: a broken line would otherwise
    # show as a wrong column or the previous key's text. A translation is left empty
    # only where it is the English text (it reads as that).
    from duelclock.core import lang
    for text, fields in ((lang.TEXT, 4), (catalogue.ROWS, 6), (catalogue.KIND_NAMES, 4)):
        lines = text.strip().split("\n")
        keys = [line.split("|")[0] for line in lines]
        assert len(set(keys)) == len(keys)
        for line in lines:
            f = line.split("|")
            english = fields - 3
            assert len(f) == fields and all(f[:english + 1]), line
            assert all(x != f[english] for x in f[english + 1:]), line
    for line in catalogue.ROWS.strip().split("\n"):
        for g in line.split("|")[1:3]:
            assert g == "-" or all(a in catalogue.ABBR for a in g.split(" ")), line
    assert [lang.tr(k, "en") for k in ("waiting", "menu")] == ["Waiting for round", "Menu"]
    try:
        lang.tr("no_such_key", "en")
        assert False, "an unknown key must raise"
    except KeyError:
        pass
    assert catalogue.guideline("rules_error|C") is None
