# Time-based transitions of the rules engine (a mixin of match.Match): tardiness at 5:00
# and 10:00 (KR penalty 5, ID Tardiness), time called at the limit (KR 2.C judgements 1-4),
# double loss at limit + cap. Each fires at its own instant, before any event stamped at or
# after it (Match.apply calls _advance). Every deadline is match time (events.md, "Match
# time"): while the match time is paused none is due, and at resume each still to come is
# that much later in desk time. Pure.
from .record import PLAYERS
from .rules import (TARDY_DUEL_LOSS_MS, TARDY_MATCH_LOSS_MS, NEVER, TIME_TURN,
                                  other)


class TimeRules:
    def next_is_extra(self):
        # KR J4, and the 1-1-1 reading of rules.md section 1.
        return self.time_called or len(self.duels) >= 3

    def next_deadline_ms(self):
        """Desk time of the next time-based transition (NEVER if none, or while paused)."""
        if self.over or self.paused_at is not None:
            return NEVER
        at = self.limit_ms + self.cap_ms
        if not self.time_called:
            at = self.limit_ms
        for p in PLAYERS:
            if not self.seated[p] and not self.excused[p]:
                due = TARDY_DUEL_LOSS_MS if self.tardy[p] < 2 else TARDY_MATCH_LOSS_MS
                if due < at:
                    at = due
        return at + self.paused_ms

    def _advance(self, t):
        while True:
            at = self.next_deadline_ms()
            if at > t:
                return
            self._fire(at)

    def _fire(self, at):
        # `at` is desk time; the deadline it stands for is match time.
        due = at - self.paused_ms
        late = [p for p in PLAYERS if not self.seated[p] and not self.excused[p]]
        if late and due == TARDY_DUEL_LOSS_MS and self.tardy[late[0]] < 2:
            for p in late:
                self.tardy[p] = 2
                self._add_penalty(at, p, "duel_loss", "tardiness", True)
            if len(late) == 2:
                self._duel_over(at, "none", "penalty")
            else:
                self._duel_over(at, other(late[0]), "penalty")
            return
        if late and due == TARDY_MATCH_LOSS_MS:
            for p in late:
                self.tardy[p] = 3
                self._add_penalty(at, p, "match_loss", "tardiness", True)
            self._match_over(at, "double_loss" if len(late) == 2 else other(late[0]))
            return
        if not self.time_called:
            self._call_time(at)
            return
        self._note(at, "cap")
        self._match_over(at, "double_loss")

    def _call_time(self, at):
        # KR 2.C judgements 1-4.
        self.time_called = True
        finished = len(self.duels)
        # J1 (in or before duel 1) and J2 (between duels 1 and 2) with no duel won yet,
        # elimination: the first duel won decides. Time in duel 2 or later is J3 whatever
        # the score (rules.md 3).
        if (self.kind == "elimination" and self.wins["A"] == 0 and self.wins["B"] == 0
                and (finished == 0 or (finished == 1 and not self.in_duel))):
            self.decide_first_win = True
        self._note(at, "time")
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
