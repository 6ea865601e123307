# The record format: event checks, line parsing, JSON out (docs/record.md).
from duelclock.core.record import check_event, parse_line, MAX_LINE_BYTES
from duelclock.core.jsonio import dumps_event
from duelclock.core.replay import dumps_verdict
from duelclock.core.replay import RecordError, Replay


def test_well_formed_events_pass():
    for ev in ({"t": 0, "ev": "round_start", "round": 3, "kind": "elimination", "limit_s": 2700,
                "cap_s": 1800, "extra_turns": 1, "seating": True, "rules": "KR"},
               {"t": -5, "ev": "seated", "p": "A"},
               {"t": 1, "ev": "lp", "A": -100, "B": 50, "cost": True, "by": "B", "extra": [1]},
               {"t": 1, "ev": "penalty", "p": "B", "kind": "dq", "code": "bribery", "judge": "head"},
               {"t": 1, "ev": "judge_fix", "p": "A", "lp": 0},
               {"t": 1, "ev": "tick"}):
        assert check_event(ev) is None, (ev, check_event(ev))


def test_malformed_events_have_reasons():
    cases = (
        ([1, 2], "not a JSON object"),
        ({"ev": "tick"}, "'t' must be an integer (ms)"),
        ({"t": True, "ev": "tick"}, "'t' must be an integer (ms)"),
        ({"t": 1.5, "ev": "tick"}, "'t' must be an integer (ms)"),
        ({"t": 10 ** 30, "ev": "tick"}, "'t' out of range"),
        ({"t": 1}, "missing 'ev'"),
        ({"t": 1, "ev": "teleport"}, "unknown event 'teleport'"),
        ({"t": 1, "ev": "lp"}, "lp needs 'A' and/or 'B'"),
        ({"t": 1, "ev": "lp", "A": 0}, "'A' must not be 0"),
        ({"t": 1, "ev": "lp", "A": "100"}, "'A' must be an integer"),
        ({"t": 1, "ev": "lp", "A": True}, "'A' must be an integer"),
        ({"t": 1, "ev": "lp", "A": 10 ** 30}, "'A' out of range"),
        ({"t": 1, "ev": "lp", "A": 1, "cost": 1}, "'cost' must be true or false"),
        ({"t": 1, "ev": "surrender", "p": "C"}, "'p' must be A or B"),
        ({"t": 1, "ev": "surrender"}, "missing 'p'"),
        ({"t": 1, "ev": "duel_end", "winner": "none"}, "'winner' must be A, B or draw"),
        ({"t": 1, "ev": "penalty", "p": "A", "kind": "ban", "code": "x"}, None),
        ({"t": 1, "ev": "penalty", "p": "A", "kind": "warning", "code": 5}, "'code' must be a non-empty string"),
        ({"t": 1, "ev": "judge_fix", "p": "A", "lp": -1}, "'lp' out of range"),
        ({"t": 0, "ev": "round_start", "round": 1, "kind": "open"}, "'kind' must be swiss or elimination"),
        ({"t": 0, "ev": "round_start", "round": 1, "kind": "swiss", "limit_s": 0}, None),
        ({"t": 0, "ev": "round_start", "round": 1, "kind": "swiss", "rules": "JP"}, "'rules' must be ID or KR"),
    )
    for ev, want in cases:
        got = check_event(ev)
        assert got is not None, ev
        if want is not None:
            assert got == want, (ev, got)


def test_parse_line_takes_bytes_or_text_and_refuses_long_lines():
    ev, why = parse_line(b'{"t": 5, "ev": "tick"}')
    assert why is None and ev["t"] == 5
    ev, why = parse_line('{"t": 5, "ev": "tick"')
    assert ev is None and why == "not JSON"
    ev, why = parse_line(b"x" * (MAX_LINE_BYTES + 1))
    assert why.startswith("line longer than")
    ev, why = parse_line(b"\xff\xfe{}")
    assert ev is None and why is not None


def test_dumps_event_has_a_fixed_key_order():
    line = dumps_event({"B": -5, "ev": "lp", "t": 7, "A": 3, "cost": True})
    assert line == '{"t": 7, "ev": "lp", "A": 3, "B": -5, "cost": true}'


def test_replay_reports_rejections_by_event_index_and_skips_blank_lines():
    r = Replay()
    for line in ('{"t":0,"ev":"round_start","round":1,"kind":"swiss"}', "", "  ",
                 '{"t":1,"ev":"lp","A":-5}', "garbage", '{"t":2,"ev":"duel_start","first":"A"}',
                 None):
        r.feed(line)
    assert r.rejected == [(1, "no duel in progress"), (2, "not JSON"), (4, "line too long")]
    assert r.match.phase() == "duel"


def test_replay_refuses_what_is_not_a_match_record():
    for first in ("nope", '{"t":0,"ev":"tick"}', '{"t":0,"ev":"round_start","round":1,"kind":"x"}', None):
        r = Replay()
        try:
            r.feed(first)
            assert False, "accepted %r" % first
        except RecordError as e:
            assert str(e).startswith("not a match record")
    try:
        Replay().verdict_json()
        assert False
    except RecordError:
        pass


def test_verdict_json_has_the_spec_key_order():
    r = Replay()
    r.feed('{"t":0,"ev":"round_start","round":1,"kind":"swiss"}')
    r.feed('{"t":5,"ev":"penalty","p":"A","kind":"caution","code":"x"}')
    line = r.verdict_json()
    assert line == ('{"result": "pending", "wins": {"A": 0, "B": 0}, "duels": [], "phase": "waiting", '
                    '"lp": {"A": 8000, "B": 8000}, "penalties": [{"p": "A", "kind": "caution", '
                    '"code": "x"}], "rejected": []}')
    assert dumps_verdict(r.match.verdict(), [(3, 'say "hi"')]).endswith(
        '"rejected": [{"index": 3, "why": "say \\"hi\\""}]}')


def test_non_ascii_text_is_escaped_the_same_everywhere():
    line = dumps_event({"t": 1, "ev": "penalty", "p": "A", "kind": "caution", "code": "지각 J\u00fcrgen \U0001F600"})
    assert line == ('{"t": 1, "ev": "penalty", "code": "\\uc9c0\\uac01 J\\u00fcrgen \\ud83d\\ude00", '
                    '"kind": "caution", "p": "A"}')


def test_strict_json_refuses_what_either_decoder_would_bend():
    from duelclock.core.jsonio import strict_json
    good = ('{"t": 1, "ev": "tick"}', '[]', '{}', ' {"a": [1, -2.5e+3, true, false, null, "x\\"\\\\\\u00e9"]} ',
            '"\\n"', '0', '-0.1', '{"k": "지각"}')
    bad = ('{"t": 1,}', '[1,]', '{"t" 1}', '{"t": 01}', '{"t": 1.}', '{"t": .5}', '{"t": NaN}',
           '{"t": Infinity}', '\ufeff{}', '{"a": "\x01"}', '{"a": "\\x"}', '{"a": "\\ud83d\\ude00"}',
           '{"a": 1} x', '', '[' * 9 + ']' * 9, '{"a": tru}', '{"a": "unterminated}', "{'a': 1}",
           '{"a": 1}\x00', '-', '1e', '{"a":[1 2]}')
    for s in good:
        assert strict_json(s), s
    for s in bad:
        assert not strict_json(s), repr(s)
    assert strict_json('[' * 8 + ']' * 8)
    assert parse_line(b'{"t":1,"ev":"duel_start","first":"A",}') == (None, "not JSON")
