# The written-style sheet (rules.md section 6).
from duelclock.core.replay import Replay
from duelclock.core.sheet import Sheet, clock, record_lines

RECORD = (
    '{"t":0,"ev":"round_start","round":4,"kind":"swiss","seating":true}',
    '{"t":-1000,"ev":"seated","p":"A"}',
    '{"t":61000,"ev":"seated","p":"B"}',
    '{"t":120000,"ev":"duel_start","first":"B"}',
    '{"t":130000,"ev":"lp","A":-1000,"by":"A"}',
    '{"t":140000,"ev":"lp","A":-500,"by":"A"}',
    '{"t":141000,"ev":"undo"}',
    '{"t":400000,"ev":"turn_end"}',
    '{"t":410000,"ev":"judge_fix","p":"A","lp":7200}',
    '{"t":420000,"ev":"lp","B":-7200,"cost":true,"by":"B"}',
    '{"t":430000,"ev":"lp","B":-800}',
)


def _sheet(lines, keep=0):
    r = Replay(with_sheet=True)
    for line in lines:
        r.feed(line)
    if keep:
        s = Sheet({"round": 4, "kind": "swiss"}, keep)
        return r, s
    return r, r.sheet


def test_rows_keep_amounts_totals_turns_and_who_entered_them():
    r, s = _sheet(RECORD)
    pre, duel = s.sections
    assert [row[0] for row in pre.rows] == ["seated", "seated", "penalty"]
    lp = [row for row in duel.rows if row[0] == "lp"]
    assert lp[0][:9] == ["lp", 130000, 1, "B", -1000, 0, 7000, 8000, "A"]
    assert lp[1][10] is True and lp[0][10] is False          # taken back, still there
    assert lp[2][9] is True                                    # paid as a cost
    kinds = [row[0] for row in duel.rows]
    assert kinds == ["lp", "lp", "turn", "fix", "lp", "lp", "end"]
    assert ("fix", 410000, 2, "A", "A", 7000, 7200) in duel.rows


# Time called in duel 2 (duel 1 lost without play): time, extra turn, sudden death.
TIME_RECORD = ('{"t":0,"ev":"round_start","round":1,"kind":"swiss"}',
               '{"t":1,"ev":"penalty","p":"A","kind":"duel_loss","code":"deck_size"}',
               '{"t":2,"ev":"duel_start","first":"A"}',
               '{"t":2700000,"ev":"turn_end"}',
               '{"t":2700001,"ev":"turn_end"}')


def test_time_markers_and_a_duel_lost_without_play():
    r, s = _sheet(TIME_RECORD)
    titles = [(sec.no, sec.played) for sec in s.sections]
    assert titles == [(0, True), (1, False), (2, True)]
    marks = [row[2] for row in s.sections[2].rows if row[0] == "mark"]
    assert marks == ["time", "extra_turn", "sudden_death"]


def test_a_board_keeps_only_the_last_sections():
    s = Sheet({"round": 1, "kind": "swiss"}, keep=1)
    s.note({"t": 1, "kind": "duel", "turn": 1, "turn_player": "A", "no": 1, "first": "A",
            "extra": False})
    s.note({"t": 2, "kind": "duel_over", "turn": 1, "turn_player": "A", "winner": "A",
            "by": "game"})
    s.note({"t": 3, "kind": "duel", "turn": 1, "turn_player": "B", "no": 2, "first": "B",
            "extra": False})
    assert len(s.sections) == 1 and s.sections[0].no == 2


def test_a_board_keeps_the_newest_rows_and_counts_the_rest():
    s = Sheet({"round": 1, "kind": "swiss"}, keep=1, max_rows=3)
    s.note({"t": 1, "kind": "duel", "turn": 1, "turn_player": "A", "no": 1, "first": "A",
            "extra": False})
    for i in range(5):
        s.note({"t": 10 + i, "kind": "turn_end", "turn": i + 1, "turn_player": "A",
                "turn_ms": 1000})
    sec = s.sections[-1]
    assert [row[2] for row in sec.rows] == [3, 4, 5] and sec.dropped == 2
    assert record_lines(s)[0] == "(2 earlier rows)" and len(record_lines(s)) == 4


def test_clock_format():
    assert clock(0) == "0:00" and clock(61999) == "1:01" and clock(-30000) == "-0:30"
    assert clock(75 * 60000) == "75:00"
