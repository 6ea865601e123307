# A realistic match record of exactly N events (docs/record.md), for the bench
# and for tests. Deterministic: the same (n_events, seed) gives the same lines on every
# Python. `build` also returns the verdict the record must replay to, so a caller can
# check that the replay ran the whole record rather than stopping at an early 'over':
#
#   python tests/bench/gen_record.py 2000 [SEED] > record.jsonl
#
# The match (swiss, check-in, 45:00 + 30:00 cap, 1 extra turn), whatever N is:
#
#   B checks in late ---------------------------------------> tardiness warning (auto)
#   duel 1: A first, 10 turns; B warned (extra_draw); a double undo (2nd one rejected);
#           B's LP reach 0 in turn 10 ---------------------------> A 1-0 (lp)
#   duel 2: B first; A cautioned; B tries to surrender (rejected: it would decide the
#           match); a judge fixes A's LP; time is called in turn 7 (J3)
#           -> end of turn 7 -> extra turn 8 ends with LP equal -> sudden death:
#           turn 9 no LP change, turn 10 equal damage, turn 11 A falls behind -> 1-1
#   extra duel (J4): A first, 4 turns, LP equal at the end of turn 4 -> sudden death:
#           turn 5 B falls behind -----------------------------> A 2-1, over (last event)
#
# N - MIN_EVENTS filler events (LP changes, a few undos) are spread over the turns.
# Filler keeps every player's LP at 1000 or more, so only the planned events end a duel.
import json
import sys

LIMIT_MS = 2700000
PRE_TIME_SPAN_MS = (150000, 2690000)     # duel 1 start .. last event before time is called
POST_TIME_SPAN_MS = (2705000, 4300000)   # first event after time .. last event (cap: 4500000)
MIN_LP = 1000                            # filler floor
MAX_LP = 12000                           # filler gains stop here
INTERVAL_WEIGHT = 30                     # an interval between duels, in ordinary event gaps

# Filler share of each turn, in order: (duel, turn, weight). Duel 2 turn 7 is split by the
# time call; ("2", 8) is the extra turn; "x" is the extra duel.
BUCKETS = ([("1", t, 10) for t in range(1, 11)]
           + [("2", t, 10) for t in range(1, 7)]
           + [("2", "7pre", 5), ("2", "7post", 5), ("2", 8, 8)]
           + [("x", t, 8) for t in range(1, 5)])


class Rng:
    """A small LCG: the same numbers on CPython and MicroPython, whatever the version."""

    def __init__(self, seed):
        self.x = (seed * 2654435761 + 1) & 0x7fffffff

    def below(self, n):
        self.x = (self.x * 1103515245 + 12345) & 0x7fffffff
        return (self.x >> 8) % n


def other(p):
    return "B" if p == "A" else "A"


class Writer:
    """Appends events and tracks what the rules engine will make of them (LP, whether an
    undo is allowed), so the filler never ends a duel by accident."""

    def __init__(self, seed):
        self.rng = Rng(seed)
        self.events = []          # (gap weight, event without t, pre_time)
        self.rejected = []        # indexes the rules must refuse
        self.lp = {"A": 8000, "B": 8000}
        self.undo_to = None
        self.pre_time = True

    def add(self, ev, gap=1, rejected=False):
        if rejected:
            self.rejected.append(len(self.events))
        else:
            self.undo_to = None
        self.events.append((gap, ev, self.pre_time))

    def lp_change(self, change, cost=False):
        ev = {"ev": "lp"}
        ev.update(change)
        if cost:
            ev["cost"] = True
        before = dict(self.lp)
        self.add(ev)
        for p in change:
            self.lp[p] = max(0, self.lp[p] + change[p])
        self.undo_to = before

    def undo(self, rejected=False):
        if rejected:
            self.add({"ev": "undo"}, rejected=True)
            return
        back = self.undo_to
        self.add({"ev": "undo"})
        self.lp = back

    def filler(self, turn_player):
        """One filler event in `turn_player`'s turn."""
        p, o = turn_player, other(turn_player)
        roll = self.rng.below(100)
        if self.undo_to is not None and roll < 6:
            self.undo()
            return
        amount = 100 * (1 + self.rng.below(20))
        if roll < 12 and self.lp[p] - 500 >= MIN_LP:
            self.lp_change({p: -500}, cost=True)
        elif roll < 18 and min(self.lp.values()) - 300 >= MIN_LP:
            self.lp_change({"A": -300, "B": -300})
        elif roll < 26 and self.lp[p] + amount <= MAX_LP:
            self.lp_change({p: amount})
        elif self.lp[o] - amount >= MIN_LP:
            self.lp_change({o: -amount})
        else:
            self.lp_change({o: amount})          # o < MIN_LP + 2000: o gains instead

    def fill(self, count, turn_player):
        for _ in range(count):
            self.filler(turn_player)

    def equalize(self):
        """One LP event that leaves both players on the same LP (and changes LP)."""
        a, b = self.lp["A"], self.lp["B"]
        if a == b:
            self.lp_change({"A": -100, "B": -100})
        elif a > b:
            self.lp_change({"A": b - a})
        else:
            self.lp_change({"B": a - b})


def split(total, weights):
    """`total` split in proportion to `weights`, exactly (largest remainders first)."""
    whole = sum(weights)
    shares = [total * w // whole for w in weights]
    rest = total - sum(shares)
    order = sorted(range(len(weights)), key=lambda i: (-(total * weights[i] % whole), i))
    for i in order[:rest]:
        shares[i] += 1
    return shares


def _script(w, fill):
    """Every event of the match; fill(duel, turn, turn_player) adds that turn's filler."""
    w.add({"ev": "round_start", "round": 3, "kind": "swiss", "limit_s": 2700,
           "cap_s": 1800, "extra_turns": 1, "seating": True})
    w.add({"ev": "seated", "p": "A"})
    w.add({"ev": "seated", "p": "B"})        # at 1:15: a tardiness warning

    # Duel 1: A first (odd turns are A's).
    w.add({"ev": "duel_start", "first": "A"})
    w.lp = {"A": 8000, "B": 8000}
    for turn in range(1, 11):
        p = "A" if turn % 2 else "B"
        if turn == 4:
            w.add({"ev": "penalty", "p": "B", "kind": "warning", "code": "extra_draw",
                   "judge": "floor"})
        if turn == 6:
            w.lp_change({p: 500})           # a mistyped gain, taken back; the second
            w.undo()                        # press of undo is refused
            w.undo(rejected=True)
        fill("1", turn, p)
        if turn == 10:
            w.lp_change({"B": -w.lp["B"]})  # A wins duel 1 on LP
        else:
            w.add({"ev": "turn_end"})

    # Duel 2: B first (odd turns are B's).
    w.add({"ev": "duel_start", "first": "B"}, gap=INTERVAL_WEIGHT)
    w.lp = {"A": 8000, "B": 8000}
    for turn in range(1, 7):
        p = "B" if turn % 2 else "A"
        if turn == 2:
            w.add({"ev": "penalty", "p": "A", "kind": "caution", "code": "rules_error",
                   "judge": "floor"})
        if turn == 3:
            w.add({"ev": "surrender", "p": "B"}, rejected=True)
        if turn == 5:
            w.lp["A"] += 200
            w.add({"ev": "judge_fix", "p": "A", "lp": w.lp["A"]})
        fill("2", turn, p)
        w.add({"ev": "turn_end"})
    fill("2", "7pre", "B")
    w.pre_time = False                      # time is called here (J3)
    fill("2", "7post", "B")
    w.add({"ev": "turn_end"})               # end of the turn time was called in
    fill("2", 8, "A")                       # the extra turn
    w.equalize()
    w.add({"ev": "turn_end"})               # LP equal: sudden death
    w.add({"ev": "turn_end"})               # turn 9: no LP change, no judgement
    w.lp_change({"A": -500, "B": -500})
    w.add({"ev": "turn_end"})               # turn 10: still equal
    w.lp_change({"A": -200})
    w.add({"ev": "turn_end"})               # turn 11: B wins duel 2 (sudden_death)

    # Extra duel (J4): A first.
    w.add({"ev": "duel_start", "first": "A"}, gap=INTERVAL_WEIGHT // 3)
    w.lp = {"A": 8000, "B": 8000}
    for turn in range(1, 5):
        fill("x", turn, "A" if turn % 2 else "B")
        if turn == 4:
            w.equalize()
        w.add({"ev": "turn_end"})           # after turn 4, LP equal: sudden death
    w.lp_change({"B": -300})
    w.add({"ev": "turn_end"})               # turn 5: A wins the extra duel and the match


def _count_structure():
    w = Writer(0)
    _script(w, lambda duel, turn, p: None)
    return len(w.events)


MIN_EVENTS = _count_structure()


def _stamp(entries):
    """Desk times: round start and check-ins fixed, the rest spread over the two spans in
    proportion to their gap weights (the time call falls between the spans)."""
    fixed = [-90000, -60000, 75000]          # round_start, A seated, B seated (late)
    out = []
    for pre in (True, False):
        part = [(gap, ev) for i, (gap, ev, p) in enumerate(entries) if p == pre and i >= len(fixed)]
        lo, hi = PRE_TIME_SPAN_MS if pre else POST_TIME_SPAN_MS
        whole = sum(gap for gap, _ in part[1:]) or 1
        at = 0
        for i, (gap, ev) in enumerate(part):
            if i:
                at += gap
            out.append((lo + (hi - lo) * at // whole, ev))
    events = []
    for i in range(len(fixed)):
        events.append(_with_t(fixed[i], entries[i][1]))
    for t, ev in out:
        events.append(_with_t(t, ev))
    return events


def _with_t(t, ev):
    out = {"t": t, "ev": ev["ev"]}
    for k in sorted(ev):
        if k != "ev":
            out[k] = ev[k]
    return out


def build(n_events, seed=1):
    """(events, expect): exactly n_events event dicts in record order, and what their
    replay must give: the verdict's result, wins, duels, phase, lp and penalties as
    events.md prints them, plus `rejected_indexes` (the planned refusals)."""
    if n_events < MIN_EVENTS:
        raise ValueError("a record needs at least %d events" % MIN_EVENTS)
    shares = split(n_events - MIN_EVENTS, [b[2] for b in BUCKETS])
    per_turn = {}
    for (duel, turn, _), n in zip(BUCKETS, shares):
        per_turn[(duel, turn)] = n
    w = Writer(seed)
    _script(w, lambda duel, turn, p: w.fill(per_turn[(duel, turn)], p))
    events = _stamp(w.events)
    assert len(events) == n_events
    expect = {
        "result": "A",
        "wins": {"A": 2, "B": 1},
        "duels": [{"winner": "A", "by": "lp"}, {"winner": "B", "by": "sudden_death"},
                  {"winner": "A", "by": "sudden_death"}],
        "phase": "over",
        "lp": dict(w.lp),
        "penalties": [{"p": "B", "kind": "warning", "code": "tardiness"},
                      {"p": "B", "kind": "warning", "code": "extra_draw"},
                      {"p": "A", "kind": "caution", "code": "rules_error"}],
        "rejected_indexes": list(w.rejected),
    }
    return events, expect


def dumps(ev):
    """One record line: compact JSON, t and ev first."""
    return json.dumps(ev, separators=(",", ":"))


def write(f, n_events, seed=1):
    """Write the record to text file `f`; return build()'s expect."""
    events, expect = build(n_events, seed)
    for ev in events:
        f.write(dumps(ev) + "\n")
    return expect


def main(argv):
    if len(argv) not in (1, 2):
        sys.stderr.write("usage: gen_record.py N_EVENTS [SEED]  (N_EVENTS >= %d)\n" % MIN_EVENTS)
        return 2
    try:
        write(sys.stdout, int(argv[0]), int(argv[1]) if len(argv) > 1 else 1)
    except ValueError as e:
        sys.stderr.write("gen_record: %s\n" % e)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
