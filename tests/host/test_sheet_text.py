# The written-style sheet as the desk prints it (host_tools/duelclock_desk/sheet_text.py).
from duelclock_desk.sheet_text import render_text

from tests.core.test_sheet import RECORD, TIME_RECORD, _sheet


def test_text_sheet_marks_taken_back_lines_long_turns_and_fixes():
    r, s = _sheet(RECORD)
    text = render_text(s)
    assert "TAKEN BACK" in text
    undone = [l for l in text.split("\n") if "TAKEN BACK" in l][0]
    assert undone.startswith("x")
    assert "over 3:00" in text
    assert "JUDGE FIX A: 7000 -> 7200" in text
    assert "PENALTY B: warning, tardiness (by the clock)" in text
    assert "DUEL OVER: A wins (LP 0)" in text


def test_text_of_time_markers_and_a_duel_lost_without_play():
    r, s = _sheet(TIME_RECORD)
    text = render_text(s)
    assert "TIME CALLED" in text and "EXTRA TURN 1/1" in text and "SUDDEN DEATH" in text
    assert "Duel 1 - not played" in text


def test_text_sheet_names_the_event_table_and_players_and_ends_with_signatures():
    r, s = _sheet(RECORD)
    lines = render_text(s, event="cup", table=17, names=("Kim Minsu", "Budi Santoso")).split("\n")
    assert lines[1:3] == ["event cup  round %d  table 17" % s.round_no,
                          "A: Kim Minsu   B: Budi Santoso"]
    assert lines[-5:-1] == [
        "Signatures: the players agree this record; the judge checked it.",
        "  A     Kim Minsu             signature ____________________",
        "  B     Budi Santoso          signature ____________________",
        "  Judge ____________________  signature ____________________"]


def test_what_the_record_does_not_know_is_a_blank_to_fill_in():
    r, s = _sheet(RECORD)
    lines = render_text(s).split("\n")
    assert lines[1] == "event ____________________  round %d  table ____________________" % (
        s.round_no)
    assert lines[2] == "A: ____________________   B: ____________________"


def test_text_of_penalties_for_both_and_after_the_match():
    r, s = _sheet([
        '{"t":0,"ev":"round_start","round":1,"kind":"swiss"}',
        '{"t":1,"ev":"penalty","p":"both","kind":"duel_loss","code":"deck_size"}',
        '{"t":2,"ev":"duel_start","first":"A"}',
        '{"t":3,"ev":"lp","B":-8000}',
        '{"t":4,"ev":"duel_start","first":"A"}',
        '{"t":5,"ev":"lp","B":-8000}',
        '{"t":6,"ev":"penalty","p":"B","kind":"warning","code":"unsporting"}',
    ])
    text = render_text(s)
    assert "PENALTY A: duel loss, deck_size" in text and "PENALTY B: duel loss, deck_size" in text
    assert "DUEL OVER: lost by both (penalty)" in text
    lines = text.split("\n")
    over = [i for i, l in enumerate(lines) if "MATCH OVER: A wins the match" in l][0]
    assert "PENALTY B: warning, unsporting (after the match)" in "\n".join(lines[over:])
