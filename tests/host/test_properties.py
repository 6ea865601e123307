"""Properties of the rules engine and replay over generated match records.

The generator writes plausible records (docs/record.md): a round_start with a random
round shape, then events at non-decreasing desk times that mix ordinary play with events the
rules refuse and lines that are not events at all. Small clocks and the odd long pause make
time get called, the cap pass and tardiness fire inside a record of a few dozen lines.
"""
import contextlib
import copy
import io
import json
import os
import tempfile

from hypothesis import HealthCheck, example, given, settings, strategies as st

from duelclock import replay as replay_cli
from duelclock.core.record import MAX_AMOUNT, check_event, parse_line, read_line
from duelclock.core.replay import Replay
from tests.host.upy import run_upy

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

PLAYER = st.sampled_from(["A", "B"])
# Penalty codes: canonical ones, and any text a judge may type (Hangul, say).
CODES = st.one_of(st.sampled_from(["tardiness", "tardiness", "slow_play", "marked_cards"]),
                  st.text(min_size=1, max_size=6))
PENALTY_KINDS = st.sampled_from(["warning"] * 8 + ["caution"] * 4 + ["duel_loss"] * 2
                                + ["match_loss", "dq", "dq_prizes"])
# LP changes: mostly damage in hundreds, some gains, some that end a duel, some out of range.
AMOUNTS = st.one_of(
    st.integers(-80, -5).map(lambda n: n * 100),
    st.integers(-80, -5).map(lambda n: n * 100),
    st.integers(1, 20).map(lambda n: n * 100),
    st.sampled_from([-8000, -4000, -1, 1, MAX_AMOUNT, -MAX_AMOUNT]),
)
# ms from one event to the next: mostly seconds, sometimes a long pause (tardiness at 5:00
# and 10:00, a 45:00 limit), rarely a step back in time (refused: out of time order).
STEP_KINDS = ["same"] * 2 + ["short"] * 8 + ["long"] * 2 + ["pause"] + ["back"]
CHECK_IN_STEP_KINDS = ["short"] * 4 + ["long"] * 2 + ["pause"] * 2     # waiting for a late player
STEPS = {
    "same": st.just(0),
    "short": st.integers(1, 3000),
    "long": st.integers(3000, 60000),
    "pause": st.integers(60000, 900000),
    "back": st.integers(-2000, -1),
}
# Event kinds, weighted towards what a real table records in and out of a duel; every kind
# stays possible in both, so the rules get to refuse the ones that make no sense there.
IN_DUEL_KINDS = (["lp"] * 10 + ["turn_end"] * 8 + ["undo"] * 2 + ["tick"] * 3 + ["malformed"] * 3
                 + ["surrender", "penalty", "duel_end", "judge_fix", "judge_void", "extend",
                    "duel_start", "seated", "pause", "resume"])
OUT_OF_DUEL_KINDS = (["duel_start"] * 6 + ["tick"] * 3 + ["judge_void"] * 2 + ["malformed"] * 2
                     + ["seated", "penalty", "extend", "lp", "undo", "turn_end", "surrender", "duel_end",
                        "judge_fix", "pause", "resume"])
CHECK_IN_KINDS = (["seated"] * 4 + ["tick"] * 2
                  + ["penalty", "judge_void", "extend", "duel_start", "malformed", "pause",
                     "resume"])
TAIL_AFTER_OVER = 5     # events generated after the match is over


@st.composite
def round_starts(draw):
    ev = {"t": draw(st.sampled_from([0, 0, -60000])), "ev": "round_start",
          "round": draw(st.integers(0, 12)), "kind": draw(st.sampled_from(["swiss", "elimination"]))}
    seating = draw(st.sampled_from([None, False, True, True]))
    if seating is not None:
        ev["seating"] = seating
    if draw(st.booleans()):
        ev["rules"] = draw(st.sampled_from(["ID", "KR"]))
    if draw(st.booleans()):
        ev["extra_turns"] = draw(st.integers(0, 3))
    if draw(st.booleans()):
        ev["limit_s"] = draw(st.integers(1, 150))
        ev["cap_s"] = draw(st.integers(0, 60))
    return ev


def _lp_event(draw, t):
    ev = {"t": t, "ev": "lp"}
    who = draw(st.sampled_from(["A", "B", "AB", "same"]))
    if who == "same":           # the same damage to both: LP stay level (sudden death)
        ev["A"] = ev["B"] = draw(AMOUNTS)
    else:
        for p in who:
            ev[p] = draw(AMOUNTS)
    if draw(st.integers(0, 4)) == 0:
        ev["cost"] = True
    return ev


def _event(draw, kind, t):
    if kind == "lp":
        return _lp_event(draw, t)
    ev = {"t": t, "ev": kind}
    if kind in ("seated", "surrender"):
        ev["p"] = draw(PLAYER)
    elif kind == "duel_start":
        ev["first"] = draw(PLAYER)
    elif kind == "duel_end":
        ev["winner"] = draw(st.sampled_from(["A", "B", "draw"]))
    elif kind == "penalty":
        ev.update(p=draw(st.sampled_from(["A", "B", "A", "B", "both"])), kind=draw(PENALTY_KINDS),
                  code=draw(CODES))
        if draw(st.booleans()):
            ev["judge"] = draw(st.sampled_from(["head", "floor"]))
    elif kind == "judge_fix":
        ev.update(p=draw(PLAYER), lp=draw(st.sampled_from([0, 100, 4000, 8000, MAX_AMOUNT])))
    elif kind == "judge_void":          # only automatic (tardiness) penalties can be voided
        ev.update(p=draw(PLAYER), code=draw(st.sampled_from(["tardiness"] * 3 + ["slow_play"])))
    elif kind == "extend":
        ev["ms"] = draw(st.sampled_from([1000, 60000, 300000]))
    return ev


def _malformed(draw, t):
    """A line that is not a well-formed event: replay must reject it and go on."""
    shape = draw(st.integers(0, 11))
    if shape == 0:
        return draw(st.sampled_from(["not json", "{", "null", "[]", "42", '"tick"', "{}"]))
    if shape == 1:
        return json.dumps({"t": draw(st.sampled_from([t + 0.5, str(t), True, None, 10 ** 30])), "ev": "tick"})
    if shape == 2:
        return json.dumps({"t": t, "ev": "lp", "A": draw(st.sampled_from([True, "-100", 1.5, 0, -10 ** 30]))})
    if shape == 3:
        return json.dumps({"t": t, "ev": draw(st.text(max_size=8))})
    if shape == 4:
        return json.dumps({"t": t, "ev": "duel_start", "first": draw(st.sampled_from(["C", "a", 1, ""]))})
    if shape == 5:
        return json.dumps({"t": t, "ev": "penalty", "p": draw(PLAYER), "kind": "yellow_card", "code": "x"})
    if shape == 6:
        lp = draw(st.sampled_from([-1, 8000.0, "8000", None]))
        return json.dumps({"t": t, "ev": "judge_fix", "p": draw(PLAYER), "lp": lp})
    if shape == 7:
        return json.dumps({"t": t, "ev": "round_start", "round": 2, "kind": "swiss"})
    if shape == 8:
        return json.dumps({"t": t, "ev": "tick", "pad": "x" * 5000})
    if shape == 9:
        # JSON near-misses that strict parsers refuse: trailing comma, NaN, leading zero.
        return draw(st.sampled_from(['{"t": %d, "ev": "tick",}' % t, '{"t": NaN, "ev": "tick"}',
                                     '{"t": 0%d, "ev": "tick"}' % abs(t)]))
    if shape == 10:
        return draw(st.sampled_from(["", "   ", "\t"]))        # blank: not an event at all
    return json.dumps({"t": t, "ev": "seated"})                # a required key missing


# Many-refusal records (records(junk=True)): lines that are not events, and events out of
# place, weigh as much as the rest together.
JUNK_KINDS = ["malformed"] * 12 + ["surrender", "undo", "judge_void", "duel_end", "seated", "extend"]


@st.composite
def records(draw, max_events=80, junk=False):
    """A match record as a list of lines (str, no newline). The record is replayed as it
    grows only to weight the next event kind by the phase; any kind can still come."""
    start = draw(round_starts())
    lines = [json.dumps(start)]
    r = Replay()
    r.feed(lines[0])
    t = start["t"]
    if draw(st.booleans()):
        # Fast forward: duel 1 is over and the clock is near the limit, so that time gets
        # called in duel 2 (J3) or between duels (J2, J4) within the record.
        loser = draw(PLAYER)
        lines += ['{"t": -1000, "ev": "seated", "p": "A"}', '{"t": -1000, "ev": "seated", "p": "B"}',
                  '{"t": 1000, "ev": "duel_start", "first": "A"}',
                  '{"t": 2000, "ev": "lp", "%s": -8000}' % loser]
        for line in lines[1:]:
            r.feed(line)
        t = max(2000, r.match.limit_ms - draw(st.integers(0, 120000)))
    n = len(lines) + draw(st.integers(0, max_events))
    cut = False
    while len(lines) < n:
        if r.match.over and not cut:
            n = min(n, len(lines) + draw(st.integers(0, TAIL_AFTER_OVER)))
            cut = True
            continue
        m = r.match
        step_kinds = STEP_KINDS
        if m.in_duel:
            kinds = IN_DUEL_KINDS
        elif m.seated["A"] and m.seated["B"]:
            kinds = OUT_OF_DUEL_KINDS
        else:
            kinds, step_kinds = CHECK_IN_KINDS, CHECK_IN_STEP_KINDS
        if m.over:
            kinds = kinds + ["penalty"] * 6         # a judge's penalty after the match
        if junk:
            kinds = kinds + JUNK_KINDS
        late = [x["p"] for x in m.verdict()["penalties"] if x["code"] == "tardiness"]
        if late and not m.in_duel:
            kinds = kinds + ["judge_void"] * 4      # a judge excuses a late player
        t += draw(STEPS[draw(st.sampled_from(step_kinds))])
        kind = draw(st.sampled_from(kinds))
        if kind == "malformed":
            line = _malformed(draw, t)
        else:
            ev = _event(draw, kind, t)
            if kind == "judge_void" and late and draw(st.booleans()):
                ev["p"] = draw(st.sampled_from(late))
            line = json.dumps(ev, ensure_ascii=draw(st.booleans()))
        lines.append(line)
        r.feed(line)
    return lines


# --- helpers ---------------------------------------------------------------------------

def replay(lines, with_sheet=False):
    r = Replay(with_sheet)
    for line in lines:
        r.feed(line.encode("utf-8"))
    return r


def steps(lines):
    """Replay line by line, yielding (replay, line, rejected_now) after each line but the first."""
    r = Replay()
    r.feed(lines[0].encode("utf-8"))
    for line in lines[1:]:
        before = len(r.rejected)
        r.feed(line.encode("utf-8"))
        yield r, line, len(r.rejected) > before


def internals(match):
    return copy.deepcopy({k: v for k, v in vars(match).items() if k != "on_note"})


def events_only(lines):
    # Replay counts events, not lines: blank lines get no index.
    return [line for line in lines if line.strip()]


# --- properties ------------------------------------------------------------------------

@SETTINGS
@given(records())
def test_replay_is_deterministic(lines):
    first = replay(lines).verdict_json()
    assert replay(lines).verdict_json() == first
    assert replay(lines, with_sheet=True).verdict_json() == first     # the sheet only listens


def _but_penalties(v):
    return {k: v[k] for k in v if k != "penalties"}


@SETTINGS
@given(records())
def test_a_match_once_over_never_changes_but_for_penalties_after_it(lines):
    # events.md: once over, every event but tick and penalty is rejected; a penalty then is
    # listed with after_match and changes nothing else.
    frozen = None
    for r, line, rejected_now in steps(lines):
        v = r.match.verdict()
        if frozen is not None:
            assert _but_penalties(v) == frozen
            ev, _ = parse_line(line)
            if ev and ev["ev"] == "penalty" and not rejected_now:
                added = v["penalties"][len(pens):]
                assert len(added) == (2 if ev["p"] == "both" else 1)
                assert all(x["after_match"] is True for x in added)
            elif line.strip() and not (ev and ev["ev"] == "tick"):
                assert rejected_now, "an event after the match was over was applied: " + line
            assert v["penalties"][:len(pens)] == pens
            pens = v["penalties"]
        elif v["phase"] == "over":
            assert v["result"] in ("A", "B", "double_loss")
            after = [x for x in v["penalties"] if "after_match" in x]
            if after:       # time ended the match at the instant of this penalty, before it
                assert parse_line(line)[0]["ev"] == "penalty"
                assert v["penalties"][-len(after):] == after
            frozen, pens = _but_penalties(v), v["penalties"]


@SETTINGS
@given(records())
def test_wins_count_the_duels_and_lp_stay_in_range(lines):
    for r, _, _ in steps(lines):
        v = r.match.verdict()
        for p in ("A", "B"):
            assert v["wins"][p] == sum(1 for d in v["duels"] if d["winner"] == p)
            assert 0 <= v["lp"][p] <= MAX_AMOUNT
            assert 0 <= r.match.lp[p] <= MAX_AMOUNT
        assert all(d["winner"] in ("A", "B", "draw", "none") for d in v["duels"])


# A duel lost by both players to tardiness, voided for A, becomes A's second win.
VOID_GIVES_SECOND_WIN = [
    '{"t": 0, "ev": "round_start", "round": 1, "kind": "swiss", "seating": true}',
    '{"t": 1000, "ev": "penalty", "p": "B", "kind": "duel_loss", "code": "x"}',
    '{"t": 300000, "ev": "tick"}',
    '{"t": 310000, "ev": "seated", "p": "A"}',
    '{"t": 320000, "ev": "judge_void", "p": "A", "code": "tardiness"}',
]


@SETTINGS
@given(records())
@example(VOID_GIVES_SECOND_WIN)
def test_two_wins_end_the_match(lines):
    for r, line, _ in steps(lines):
        v = r.match.verdict()
        for p in ("A", "B"):
            assert v["wins"][p] <= 2
            if v["wins"][p] == 2:
                assert (v["phase"], v["result"]) == ("over", p), "after " + line


def test_voided_tardiness_win_after_time_decides_an_elimination_match():
    # Elimination, time called at 0-0 (limit 60 s): the first duel won decides the match
    # (rules.md 3 J1). Both players late at 5:00 lose duel 1; the void gives it to A.
    lines = [
        '{"t": 0, "ev": "round_start", "round": 1, "kind": "elimination", "seating": true, "limit_s": 60}',
        '{"t": 300000, "ev": "tick"}',
        '{"t": 310000, "ev": "seated", "p": "A"}',
        '{"t": 320000, "ev": "judge_void", "p": "A", "code": "tardiness"}',
    ]
    v = replay(lines).match.verdict()
    assert v["duels"] == [{"winner": "A", "by": "penalty"}]
    assert (v["phase"], v["result"]) == ("over", "A")


def tick_at(line):
    """The tick a rejected line counts as (events.md): at its t, when it has a valid one."""
    v, _ = read_line(line.encode("utf-8"))
    tick = {"t": v.get("t"), "ev": "tick"} if type(v) is dict else None
    return tick if tick is not None and check_event(tick) is None else None


@SETTINGS
@given(records(junk=True))
def test_a_rejected_event_changes_only_what_a_tick_at_its_t_changes(lines):
    r, twin = Replay(), Replay()
    r.feed(lines[0].encode("utf-8"))
    twin.feed(lines[0].encode("utf-8"))
    for line in lines[1:]:
        rejected = len(r.rejected)
        r.feed(line.encode("utf-8"))
        if len(r.rejected) > rejected:
            tick = tick_at(line)
            if tick is not None:
                twin.match.apply(tick)
            assert internals(r.match) == internals(twin.match), "rejected, but not a tick: " + line
        else:
            twin.feed(line.encode("utf-8"))


@SETTINGS
@given(records())
def test_check_predicts_apply_and_changes_nothing(lines):
    r = Replay()
    r.feed(lines[0].encode("utf-8"))
    for line in lines[1:]:
        ev, _ = parse_line(line.encode("utf-8"))
        if ev is None:
            continue
        if r.match.now_ms is None or ev["t"] >= r.match.now_ms:
            r.match.advance_to(ev["t"])        # check's contract: time has passed to t first
        before = internals(r.match)
        why = r.match.check(ev)
        assert internals(r.match) == before, "check changed the match: " + line
        assert r.match.apply(ev) == why, line


@SETTINGS
@given(records(junk=True))
def test_the_verdict_is_that_with_every_rejected_event_a_tick_at_its_t(lines):
    # events.md: "the verdict of a record equals the verdict of the same record with every
    # rejected event replaced by a tick at the same t" (a line with no valid t: dropped).
    full = replay(lines)
    drop = set(i for i, _ in full.rejected)
    kept = []
    for i, line in enumerate(events_only(lines)):
        if i not in drop:
            kept.append(line)
        elif tick_at(line) is not None:
            kept.append(json.dumps(tick_at(line)))
    clean = replay(kept)
    assert clean.match.verdict() == full.match.verdict()
    assert clean.match.now_ms == full.match.now_ms
    # the ticks are refused only where the event was out of time order
    assert all(w == "out of time order" for _, w in clean.rejected)


def _noted(lines):
    r = Replay()
    r.feed(lines[0].encode("utf-8"))
    notes = []
    r.match.on_note = notes.append
    for line in lines[1:]:
        r.feed(line.encode("utf-8"))
    return r, notes


# Round shapes where 5:00 and 10:00 meet the limit or the cap.
COINCIDING = st.fixed_dictionaries({
    "t": st.just(0), "ev": st.just("round_start"), "round": st.just(1),
    "kind": st.sampled_from(["swiss", "elimination"]), "seating": st.just(True),
    "limit_s": st.sampled_from([300, 600]), "cap_s": st.sampled_from([0, 300, 600])})


@SETTINGS
@given(records(), COINCIDING, st.booleans())
def test_transitions_at_one_instant_fire_as_tardiness_time_cap(lines, start, coincide):
    # events.md: transitions due at the same instant take effect in this order:
    # tardiness, time called, the cap.
    if coincide:
        lines = [json.dumps(start)] + lines[1:]
    _, notes = _noted(lines)
    rank = {"tardiness": 0, "time": 1, "cap": 2}
    at = {}
    for n in notes:
        kind = n["kind"]
        if kind == "penalty" and n["pen"]["auto"]:
            kind = "tardiness"
        if kind in rank:
            at.setdefault(n["t"], []).append(rank[kind])
    for t in at:
        assert at[t] == sorted(at[t]), (t, at[t])


BOTH_LOSE_TWO_DUELS = [
    '{"t": 0, "ev": "round_start", "round": 1, "kind": "swiss"}',
    '{"t": 1000, "ev": "penalty", "p": "both", "kind": "duel_loss", "code": "deck_size"}',
    '{"t": 2000, "ev": "duel_start", "first": "A"}',
    '{"t": 3000, "ev": "penalty", "p": "both", "kind": "warning", "code": "x"}',
    '{"t": 4000, "ev": "penalty", "p": "both", "kind": "duel_loss", "code": "x"}',
    '{"t": 5000, "ev": "penalty", "p": "both", "kind": "dq", "code": "bribery"}',
]


@SETTINGS
@given(records())
@example(BOTH_LOSE_TWO_DUELS)
def test_a_penalty_for_both_is_one_entry_each_and_one_duel_at_most(lines):
    # rules.md 5: one penalty to both players; a duel_loss for both loses one duel for both,
    # a match-ending one is a double loss. Compared with the same record and a tick at the
    # penalty's t instead (the time transitions due then come first either way).
    for n, (r, line, rejected_now) in enumerate(steps(lines)):
        ev, _ = parse_line(line)
        if rejected_now or not ev or ev["ev"] != "penalty" or ev["p"] != "both":
            continue
        v = r.match.verdict()
        before = replay(lines[:n + 1] + [json.dumps({"t": ev["t"], "ev": "tick"})]).match.verdict()
        added = v["penalties"][len(before["penalties"]):]
        assert [x["p"] for x in added] == ["A", "B"]
        assert _but_penalties(v) == _but_penalties(before) or before["result"] == "pending"
        if before["result"] != "pending":
            continue                        # after the match: nothing else changes
        kinds = [x["kind"] for x in added]
        assert len(v["duels"]) - len(before["duels"]) == (1 if "duel_loss" in kinds else 0) or \
            ev["kind"] in ("match_loss", "dq", "dq_prizes")
        if ev["kind"] in ("match_loss", "dq", "dq_prizes"):
            assert v["result"] == "double_loss"
        elif kinds == ["duel_loss", "duel_loss"]:
            assert v["duels"][-1] == {"winner": "none", "by": "penalty"}
            assert v["wins"] == before["wins"]


# 30 records; one subprocess per record, so shrinking a failure stays under ~20 s only
# when Hypothesis stops at the first bug.
@settings(max_examples=30, deadline=None, report_multiple_bugs=False,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(records(), records(junk=True)))
def test_cpython_and_micropython_print_the_same_verdict(lines):
    # CPython in-process (the same main() as `duelclock replay`: keeps shrinking fast),
    # MicroPython as the device runs it. tests/host/test_bad_input.py runs both CLIs.
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(("\n".join(lines) + "\n").encode("utf-8"))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = replay_cli.main([path])
        up = run_upy(["-m", "duelclock.replay", path], heap="64k", encoding="utf-8",
                     errors="surrogateescape")
    finally:
        os.unlink(path)
    assert code == 0 and up.returncode == 0, up.stderr
    assert up.stdout.encode("utf-8", "surrogateescape") == out.getvalue().encode("utf-8")
