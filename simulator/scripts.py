"""Match scripts for simulated rounds: whole matches as events (docs/record.md), one
per table, covering what a round throws at a judge: normal wins, a surrender, time in duel 1
(J1), extra turn and LP comparison (J3), sudden death then an extra duel (J4), a late check-in
with an undo and a judge's fix, escalated warnings, a player not seated at 5:00.

Every script is for the same round (swiss, check-in, 45:00 + 30:00) and keeps a margin of
a minute or more around the round's instants, so key entry times never change a verdict.
`expected(events)` is the verdict the script means, by the core's own replay."""
from duelclock.core.replay import Replay
from duelclock.core.jsonio import dumps_event

MIN = 60000
ROUND = {"t": 0, "ev": "round_start", "round": 1, "kind": "swiss", "limit_s": 2700,
         "cap_s": 1800, "extra_turns": 1, "seating": True, "rules": "ID"}


class Script:
    def __init__(self):
        self.events = [dict(ROUND)]

    def at(self, minutes, ev, **keys):
        e = {"t": int(minutes * MIN), "ev": ev}
        e.update(keys)
        self.events.append(e)
        return self

    def seated(self, a_min=-1.0, b_min=-0.5):
        return self.at(a_min, "seated", p="A").at(b_min, "seated", p="B")

    def ko(self, minutes, loser):
        return self.at(minutes, "lp", **{loser: -8000, "by": loser})


def normal_two_nil():
    s = Script().seated()
    s.at(1, "duel_start", first="A").at(3, "lp", B=-3000, by="B").at(4, "turn_end")
    s.at(6, "lp", A=-1200, by="A").at(7, "turn_end").ko(9, "B")
    s.at(11, "duel_start", first="B").at(13, "turn_end").at(15, "lp", B=-2500, by="B").ko(17, "B")
    return s.events


def surrender_and_decider():
    s = Script().seated()
    s.at(1, "duel_start", first="B").at(3, "lp", A=-2000, by="A").ko(6, "A")
    s.at(8, "duel_start", first="A").at(10, "surrender", p="B")
    s.at(12, "duel_start", first="B").at(14, "turn_end").at(16, "lp", A=-4000, by="A")
    s.at(18, "surrender", p="A")          # refused: it would decide the match; play goes on
    s.at(20, "turn_end").ko(23, "B")
    return s.events


def time_in_duel_one():
    s = Script().seated()
    s.at(2, "duel_start", first="A")
    for m in range(4, 44, 6):
        s.at(m, "turn_end")
    s.at(40, "lp", B=-1500, by="B")
    s.at(47, "tick")                       # J1 swiss: double loss at 45:00
    return s.events


def extra_turn_lp_compare():
    s = Script().seated()
    s.at(1, "duel_start", first="A").ko(12, "B")
    s.at(14, "duel_start", first="B").at(17, "turn_end").at(20, "lp", A=-3000, by="A")
    s.at(24, "turn_end").at(30, "lp", B=-5000, by="B").at(36, "turn_end")
    s.at(47, "turn_end")                   # the turn in which time was called ends
    s.at(49, "lp", A=-1000, by="A").at(51, "turn_end")    # the extra turn: A 4000 > B 3000
    return s.events


def sudden_death_then_extra_duel():
    s = Script().seated()
    s.at(1, "duel_start", first="A").ko(10, "B")
    s.at(12, "duel_start", first="B").at(15, "turn_end").at(18, "turn_end")
    s.at(22, "lp", A=-2000, by="A").at(25, "lp", B=-2000, by="B").at(28, "turn_end")
    s.at(35, "turn_end").at(47, "turn_end").at(49, "turn_end")   # time turn, extra turn: equal
    s.at(51, "turn_end")                   # sudden death, no LP change: play on
    s.at(53, "lp", A=-500, cost=True, by="A").at(55, "turn_end")  # B leads: B wins, 1-1
    s.at(57, "duel_start", first="A").at(58, "lp", B=-1000, by="B")
    for m in (59, 61, 63):
        s.at(m, "turn_end")
    s.at(64, "lp", A=-500, by="A").at(66, "turn_end")   # end of turn 4: A 7500 > B 7000
    return s.events


def late_check_in_fix_and_undo():
    s = Script().seated(-2, 3)             # B seated at 3:00: a warning
    s.at(5, "duel_start", first="B").at(7, "lp", A=-1500, by="A").at(8, "lp", A=-1800, by="A")
    s.at(9, "undo").at(10, "turn_end").at(12, "lp", B=-2100, by="B")
    s.at(14, "judge_fix", p="B", lp=6000, judge="floor").at(16, "turn_end").ko(19, "B")
    s.at(21, "duel_start", first="B").at(23, "lp", A=-8000, by="A")
    s.at(26, "duel_start", first="A").at(28, "turn_end").ko(31, "A")
    return s.events


def escalated_warnings():
    s = Script().seated()
    s.at(1, "duel_start", first="A")
    for m in (3, 6):
        s.at(m, "penalty", p="B", kind="warning", code="slow_play", judge="floor")
    s.at(8, "turn_end").at(10, "penalty", p="B", kind="warning", code="slow_play", judge="floor")
    s.at(13, "duel_start", first="B").at(15, "lp", B=-3000, by="B").ko(18, "B")   # 3rd: duel loss
    return s.events


def not_seated_at_five():
    s = Script()
    s.at(-1, "seated", p="A").at(7, "seated", p="B")      # B loses duel 1 at 5:00
    s.at(9, "duel_start", first="B").at(12, "lp", A=-3000, by="A").ko(16, "B")
    return s.events


SCRIPTS = (normal_two_nil, surrender_and_decider, time_in_duel_one, extra_turn_lp_compare,
           sudden_death_then_extra_duel, late_check_in_fix_and_undo, escalated_warnings,
           not_seated_at_five)


def room_scripts(tables):
    """{table: events}: the scripts dealt round-robin to tables 1..tables."""
    return {n: SCRIPTS[(n - 1) % len(SCRIPTS)]() for n in range(1, tables + 1)}


def expected(events):
    """The verdict (dict) the script means: the core's replay of it."""
    r = Replay()
    for ev in events:
        r.feed(dumps_event(ev))
    v = r.match.verdict()
    v["rejected"] = r.rejected
    return v
