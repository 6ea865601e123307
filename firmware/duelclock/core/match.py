# The rules engine: shared/spec/rules.md over the events of shared/spec/events.md.
#
# Pure: desk-time ms come in with the events, the verdict and sheet notes go out.
# `Match.apply(ev)` takes one well-formed event and returns None (applied) or a reason
# (rejected). A rejected event changes nothing at all, not even the clock: time-based
# transitions that the event's `t` would have fired are rolled back with it, so a
# record replays to the same verdict with or without its rejected events.
#
# A match, one duel at a time (phase names are the verdict's):
#
#   waiting --duel_start--> duel --(LP 0 | duel_end | surrender | duel_loss)--> interval
#      |                      |                                                   |
#      |                 time called                                        duel_start
#      |                      v                                                   v
#      |     time_turn --turn_end--> extra_turn --turn_end x extra_turns--> compare LP
#      |                                                          equal --> sudden_death
#      |                                                        unequal --> duel won (time_lp)
#      |     sudden_death --turn_end, LP changed this turn, unequal--> duel won (sudden_death)
#      |
#      +--(a duel starting after time is called, or after 3 duels without a match winner)
#             extra_duel --end of turn 4--> compare LP (equal --> sudden_death)
#
#   any phase --2 wins | match_loss/dq | time (J1/J2 swiss) | cap--> over
#
# Time-based transitions (tardiness at 5:00/10:00, time at limit, double loss at
# limit + cap) fire at their own instant, before any event stamped at or after it.
from duelclock.core.record import PLAYERS, MAX_AMOUNT

START_LP = 8000
TARDY_DUEL_LOSS_MS = 300000     # not seated at 5:00 (KR penalty 5; ID Tardiness)
TARDY_MATCH_LOSS_MS = 600000    # not seated at 10:00
EXTRA_DUEL_TURNS = 4            # KR J4
NEVER = 1 << 62
HEAD_ONLY = ("match_loss", "dq", "dq_prizes")   # ID C-F: head judge only (tardiness excepted)
MATCH_ENDING = HEAD_ONLY

# What a turn in a duel is, after time is called (dstate):
NORMAL = "normal"            # play as usual (an extra duel counts its turns here)
TIME_TURN = "time_turn"      # finishing the turn in which time was called
EXTRA_TURN = "extra_turn"    # the extra turn(s) of J3
SUDDEN = "sudden_death"


def other(p):
    return "B" if p == "A" else "A"


def _ab(a, b):
    return {"A": a, "B": b}


class Match:
    # Every attribute that an event may change. A snapshot copies these (containers
    # shallow-copied, their items are never mutated in place) so a rejected event
    # can be rolled back together with the time transitions it fired.
    _STATE = ("now_ms", "limit_ms", "over", "result", "time_called", "decide_first_win",
              "in_duel", "is_extra", "dstate", "extra_left", "lp", "first", "turn",
              "turn_start_ms", "lp_changed", "undo_to", "wins", "duels", "penalties",
              "seated", "tardy", "excused")

    def __init__(self, start, on_note=None):
        """`start` is a checked round_start event (record.check_event). `on_note(t,
        kind, data)` receives what the written record shows, only for applied events."""
        self.round_no = start["round"]
        self.kind = start["kind"]
        self.limit_ms = start.get("limit_s", 2700) * 1000
        self.cap_ms = start.get("cap_s", 1800) * 1000
        self.extra_turns = start.get("extra_turns", 1)
        self.seating = start.get("seating", False) is True
        # ID makes the 3rd same warning a duel loss and reserves match loss and DQ for the
        # head judge (ID B, D-F); KR leaves both to the judge's discretion (KR penalty 2).
        self.rules = start.get("rules", "ID")
        self.on_note = on_note
        self._notes = []
        self.now_ms = None
        self.over = False
        self.result = None
        self.time_called = False
        self.decide_first_win = False   # elimination, 0-0 at time: first duel won decides
        self.in_duel = False
        self.is_extra = False
        self.dstate = NORMAL
        self.extra_left = 0
        self.lp = _ab(START_LP, START_LP)
        self.first = None
        self.turn = 0
        self.turn_start_ms = 0
        self.lp_changed = False         # any LP change in the current turn (sudden death)
        self.undo_to = None             # (lp before the last lp entry, lp_changed before)
        self.wins = _ab(0, 0)
        self.duels = []                 # {"winner", "by"}; items replaced, never mutated
        self.penalties = []             # {"p","kind","code","t","auto"}; same
        self.seated = _ab(not self.seating, not self.seating)
        self.tardy = _ab(0, 0)          # 0 none, 1 warning, 2 duel_loss, 3 match_loss
        self.excused = _ab(False, False)

    # --- the one entry point -----------------------------------------------------

    def apply(self, ev):
        """Apply one checked event. None if applied, else the reason it was refused."""
        t = ev["t"]
        if self.now_ms is not None and t < self.now_ms:
            return "out of time order"
        saved = None
        if self.next_deadline_ms() <= t:
            saved = self._snapshot()
            self._advance(t)
        name = ev["ev"]
        if self.over and name != "tick":
            why = "the match is over"
        else:
            why = getattr(self, "_ev_" + name)(ev, t)
        if why is not None:
            if saved is not None:
                self._restore(saved)
            self._notes = []
            return why
        self.now_ms = t
        notes, self._notes = self._notes, []
        if self.on_note is not None:
            for n in notes:
                self.on_note(n[0], n[1], n[2])
        return None

    def check(self, ev):
        """Would `ev` be applied? The reason it would not, or None. Changes nothing: the
        board asks first, journals the event, and only then applies it."""
        saved, on_note = self._snapshot(), self.on_note
        self.on_note = None
        why = self.apply(ev)
        self._restore(saved)
        self.on_note = on_note
        self._notes = []
        return why

    def advance_to(self, t):
        """Let time pass to `t` without an event (a `tick`); False if t is in the past."""
        return self.apply({"t": t, "ev": "tick"}) is None

    # --- what the match looks like ------------------------------------------------

    def phase(self):
        if self.over:
            return "over"
        if self.in_duel:
            if self.dstate != NORMAL:
                return self.dstate
            return "extra_duel" if self.is_extra else "duel"
        return "interval" if self.duels else "waiting"

    def next_is_extra(self):
        # KR J4, and the 1-1-1 reading of rules.md section 1.
        return self.time_called or len(self.duels) >= 3

    def next_deadline_ms(self):
        """Desk time of the next time-based transition (NEVER if none)."""
        if self.over:
            return NEVER
        at = self.limit_ms + self.cap_ms
        if not self.time_called:
            at = self.limit_ms
        for p in PLAYERS:
            if not self.seated[p] and not self.excused[p]:
                due = TARDY_DUEL_LOSS_MS if self.tardy[p] < 2 else TARDY_MATCH_LOSS_MS
                if due < at:
                    at = due
        return at

    def remaining_ms(self, t):
        """Time left in the round at desk time t (negative once time is called)."""
        return self.limit_ms - t

    def surrender_refusal(self, p):
        """Why `p` may not surrender now (KR 2.D), or None."""
        o = other(p)
        if self.wins[o] + 1 >= 2 or self.decide_first_win:
            return "surrender would decide the match"
        return None

    # --- time ------------------------------------------------------------------------

    def _advance(self, t):
        while True:
            at = self.next_deadline_ms()
            if at > t:
                return
            self._fire(at)

    def _fire(self, at):
        late = [p for p in PLAYERS if not self.seated[p] and not self.excused[p]]
        if late and at == TARDY_DUEL_LOSS_MS and self.tardy[late[0]] < 2:
            for p in late:
                self.tardy[p] = 2
                self._add_penalty(at, p, "duel_loss", "tardiness", True)
            if len(late) == 2:
                self._duel_over(at, "none", "penalty")
            else:
                self._duel_over(at, other(late[0]), "penalty")
            return
        if late and at == TARDY_MATCH_LOSS_MS:
            for p in late:
                self.tardy[p] = 3
                self._add_penalty(at, p, "match_loss", "tardiness", True)
            self._match_over(at, "double_loss" if len(late) == 2 else other(late[0]))
            return
        if not self.time_called:
            self._call_time(at)
            return
        self._note(at, "cap", None)
        self._match_over(at, "double_loss")

    def _call_time(self, at):
        # KR 2.C judgements 1-4.
        self.time_called = True
        if self.kind == "elimination" and self.wins["A"] == 0 and self.wins["B"] == 0:
            self.decide_first_win = True
        self._note(at, "time", None)
        finished = len(self.duels)
        if self.in_duel:
            if self.is_extra:
                return                      # an extra duel keeps its own 4-turn limit
            if finished == 0 and self.kind == "swiss":
                self._match_over(at, "double_loss")   # J1 swiss
                return
            self.dstate = TIME_TURN         # J3 (and J1 elimination, by the spec's reading)
            return
        if finished <= 1 and self.kind == "swiss":
            self._match_over(at, "double_loss")       # J1 before duel 1, J2 swiss
            return
        if finished == 1:
            w = self.duels[0]["winner"]
            if w in PLAYERS:
                self._match_over(at, w)               # J2 elimination
        # otherwise J4: the next duel is an extra duel (next_is_extra)

    # --- event handlers: validate first, then change state; return a reason to refuse --

    def _ev_tick(self, ev, t):
        return None

    def _ev_round_start(self, ev, t):
        return "the round has already started"

    def _ev_extend(self, ev, t):
        # A time extension (desk command, or a pause given back at resume): the limit
        # moves, the cap stays counted from the new limit. Not once time has been called.
        if self.time_called:
            return "time has already been called"
        self.limit_ms += ev["ms"]
        self._note(t, "extend", ev["ms"])
        return None

    def _ev_seated(self, ev, t):
        p = ev["p"]
        if not self.seating:
            return "this round does not use check-in"
        if self.seated[p]:
            return "already seated"
        self.seated[p] = True
        self._note(t, "seated", p)
        self.undo_to = None
        if t > 0 and self.tardy[p] == 0 and not self.excused[p]:
            self.tardy[p] = 1
            self._add_penalty(t, p, "warning", "tardiness", True)
        return None

    def _ev_duel_start(self, ev, t):
        if self.in_duel:
            return "a duel is in progress"
        if not (self.seated["A"] and self.seated["B"]):
            return "both players must be seated"
        self.in_duel = True
        self.is_extra = self.next_is_extra()
        self.dstate = NORMAL
        self.lp = _ab(START_LP, START_LP)
        self.first = ev["first"]
        self.turn = 1
        self.turn_start_ms = t
        self.lp_changed = False
        self.undo_to = None
        self._note(t, "duel", (len(self.duels) + 1, self.first, self.is_extra))
        return None

    def _ev_lp(self, ev, t):
        if not self.in_duel:
            return "no duel in progress"
        before = self.lp
        self.undo_to = (before, self.lp_changed)
        self.lp = _ab(_clamp(before["A"] + ev.get("A", 0)), _clamp(before["B"] + ev.get("B", 0)))
        self.lp_changed = True
        self._note(t, "lp", (ev, self.lp, self.turn, self.turn_player()))
        self._check_zero(t)
        return None

    def _ev_undo(self, ev, t):
        if not self.in_duel:
            return "no duel in progress"
        if self.undo_to is None:
            return "only the last LP entry of this turn can be taken back"
        self.lp, self.lp_changed = self.undo_to
        self.undo_to = None
        self._note(t, "undo", self.lp)
        return None

    def _ev_turn_end(self, ev, t):
        if not self.in_duel:
            return "no duel in progress"
        ended, changed = self.turn, self.lp_changed
        self._note(t, "turn_end", (ended, self.turn_player(), t - self.turn_start_ms))
        self.turn += 1
        self.turn_start_ms = t
        self.lp_changed = False
        self.undo_to = None
        if self.dstate == TIME_TURN:
            self.dstate = EXTRA_TURN
            self.extra_left = self.extra_turns
            if self.extra_left == 0:
                self._compare(t, "time_lp")
            else:
                self._note(t, "extra_turn", (1, self.extra_turns))
        elif self.dstate == EXTRA_TURN:
            self.extra_left -= 1
            if self.extra_left == 0:
                self._compare(t, "time_lp")
            else:
                self._note(t, "extra_turn", (self.extra_turns - self.extra_left + 1, self.extra_turns))
        elif self.dstate == SUDDEN:
            if changed:
                self._compare(t, "sudden_death")
        elif self.is_extra and ended == EXTRA_DUEL_TURNS:
            self._compare(t, "time_lp")
        return None

    def _ev_duel_end(self, ev, t):
        if not self.in_duel:
            return "no duel in progress"
        self._duel_over(t, ev["winner"], "game")
        return None

    def _ev_surrender(self, ev, t):
        if not self.in_duel:
            return "no duel in progress"
        p = ev["p"]
        why = self.surrender_refusal(p)
        if why:
            return why
        self._duel_over(t, other(p), "surrender")
        return None

    def _ev_penalty(self, ev, t):
        p, kind, code = ev["p"], ev["kind"], ev["code"]
        head_only = self.rules == "ID" and kind in HEAD_ONLY and code != "tardiness"
        if head_only and ev.get("judge") == "floor":
            return "only the head judge may give " + kind
        if kind == "warning" and self.rules == "ID" and self.warnings(p, code) >= 2:
            kind = "duel_loss"                       # ID B: 3rd warning of the same code
        self.undo_to = None
        self._add_penalty(t, p, kind, code, False, ev["kind"] != kind)
        if kind == "duel_loss":
            self._duel_over(t, other(p), "penalty")
        elif kind in MATCH_ENDING:
            self._match_over(t, other(p))
        return None

    def _ev_judge_fix(self, ev, t):
        if not self.in_duel:
            return "no duel in progress"
        p, value = ev["p"], ev["lp"]
        before = self.lp[p]
        lp = dict(self.lp)
        lp[p] = value
        self.lp = lp
        if value != before:
            self.lp_changed = True
        self.undo_to = None
        self._note(t, "fix", (p, before, value, self.turn, self.turn_player()))
        self._check_zero(t)
        return None

    def _ev_judge_void(self, ev, t):
        p, code = ev["p"], ev["code"]
        i = len(self.penalties) - 1
        while i >= 0:
            pen = self.penalties[i]
            if pen["p"] == p and pen["code"] == code and pen["auto"]:
                break
            i -= 1
        if i < 0:
            return "no automatic penalty with that code for that player"
        pen = self.penalties[i]
        if pen["kind"] == "duel_loss":
            # Only a duel lost without play, and only while no duel has been played since.
            if self.in_duel or pen["duel_ix"] != len(self.duels) - 1:
                return "a duel has been played since that penalty"
            self._unwin(p)
        self.penalties = self.penalties[:i] + self.penalties[i + 1:]
        self.excused[p] = True
        self.undo_to = None
        self._note(t, "void", (p, pen["kind"], code))
        return None

    # --- shared steps ------------------------------------------------------------------

    def turn_player(self):
        if self.first is None:
            return None
        return self.first if self.turn % 2 == 1 else other(self.first)

    def warnings(self, p, code):
        n = 0
        for pen in self.penalties:
            if pen["p"] == p and pen["code"] == code and (pen["kind"] == "warning" or pen.get("escalated")):
                n += 1
        return n

    def _add_penalty(self, t, p, kind, code, auto, escalated=False):
        pen = {"p": p, "kind": kind, "code": code, "t": t, "auto": auto}
        if escalated:
            pen["escalated"] = True
        if kind == "duel_loss":
            pen["duel_ix"] = len(self.duels)   # the duel it costs (played or not)
        self.penalties = self.penalties + [pen]
        self._note(t, "penalty", pen)

    def _unwin(self, p):
        """Void p's penalty duel loss: the duel lost without play goes back (or, where both
        players lost it, is now lost by the other player only)."""
        last = self.duels[-1]
        if last["winner"] == "none":
            self.duels = self.duels[:-1] + [{"winner": p, "by": "penalty"}]
            self.wins = dict(self.wins)
            self.wins[p] += 1
        else:
            self.duels = self.duels[:-1]
            self.wins = dict(self.wins)
            self.wins[last["winner"]] -= 1

    def _check_zero(self, t):
        a, b = self.lp["A"] == 0, self.lp["B"] == 0
        if a and b:
            self._duel_over(t, "draw", "lp")
        elif a or b:
            self._duel_over(t, "B" if a else "A", "lp")

    def _compare(self, t, by):
        a, b = self.lp["A"], self.lp["B"]
        if a == b:
            self.dstate = SUDDEN
            self._note(t, "sudden_death", None)
        else:
            self._duel_over(t, "A" if a > b else "B", by)

    def _duel_over(self, t, winner, by):
        """Close the current duel, or record one lost without play, and settle the match."""
        self.in_duel = False
        self.dstate = NORMAL
        self.undo_to = None
        self.duels = self.duels + [{"winner": winner, "by": by}]
        if winner in PLAYERS:
            self.wins = dict(self.wins)
            self.wins[winner] += 1
        self._note(t, "duel_over", (winner, by))
        if winner in PLAYERS and (self.wins[winner] >= 2 or self.decide_first_win):
            self._match_over(t, winner)

    def _match_over(self, t, result):
        self.over = True
        self.result = result
        self.in_duel = False
        self.dstate = NORMAL
        self._note(t, "match_over", result)

    def _note(self, t, kind, data):
        if self.on_note is not None:
            self._notes.append((t, kind, data))

    # --- snapshot for rollback -------------------------------------------------------

    def _snapshot(self):
        out = []
        for k in self._STATE:
            v = getattr(self, k)
            if type(v) is dict:
                v = dict(v)
            out.append(v)
        return out

    def _restore(self, saved):
        for i in range(len(self._STATE)):
            setattr(self, self._STATE[i], saved[i])

    # --- verdict -----------------------------------------------------------------------

    def verdict(self):
        """The verdict of events.md as a plain dict (see record.dumps_verdict for JSON)."""
        return {
            "result": self.result if self.over else "pending",
            "wins": dict(self.wins),
            "duels": [dict(d) for d in self.duels],
            "phase": self.phase(),
            "lp": dict(self.lp),
            "penalties": [{"p": x["p"], "kind": x["kind"], "code": x["code"]} for x in self.penalties],
        }


def _clamp(v):
    if v < 0:
        return 0
    if v > MAX_AMOUNT:
        return MAX_AMOUNT
    return v
