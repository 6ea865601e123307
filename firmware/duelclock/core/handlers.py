# Event handlers of the rules engine (a mixin of match.Match): one `_ev_<name>(ev, t, do)` per
# event of docs/record.md. Each validates first and returns the reason to refuse, or None;
# only with `do` true does it then change the state. So `Match.check` asks a handler with
# do=False and nothing needs rolling back. Pure.
from .rules import (START_LP, EXTRA_DUEL_TURNS, HEAD_ONLY, MATCH_ENDING, NORMAL,
                    TIME_TURN, EXTRA_TURN, SUDDEN, other, ab, clamp)


class EventRules:
    def _ev_tick(self, ev, t, do):
        return None

    def _ev_round_start(self, ev, t, do):
        return "the round has already started"

    # --- match time: the organiser's extend, pause and resume (events.md, "Match time") ----
    # None of them is play: they leave the undo of the last LP entry as it was.

    def _ev_extend(self, ev, t, do):
        # The limit moves, and the cap with it (it is counted from the limit).
        if self.time_called:
            return "time has already been called"
        if do:
            self.limit_ms += ev["ms"]
            self._note(t, "extend", ms=ev["ms"])
        return None

    def _ev_pause(self, ev, t, do):
        if self.paused_at is not None:
            return "the match time is already paused"
        if do:
            self.paused_at = t
            self._note(t, "pause")
        return None

    def _ev_resume(self, ev, t, do):
        if self.paused_at is None:
            return "the match time is not paused"
        if do:
            since = self.paused_at
            self.paused_ms += t - since
            self.paused_at = None
            self._note(t, "resume", since=since)
        return None

    # --- play ------------------------------------------------------------------------------

    def _ev_seated(self, ev, t, do):
        p = ev["p"]
        if not self.seating:
            return "this round does not use check-in"
        if self.seated[p]:
            return "already seated"
        if not do:
            return None
        self.seated[p] = True
        self._note(t, "seated", p=p)
        self.undo_to = None
        if self.match_ms(t) > 0 and self.tardy[p] == 0 and not self.excused[p]:
            self.tardy[p] = 1
            self._add_penalty(t, p, "warning", "tardiness", True)
        return None

    def _ev_duel_start(self, ev, t, do):
        if self.in_duel:
            return "a duel is in progress"
        if not (self.seated["A"] and self.seated["B"]):
            return "both players must be seated"
        if not do:
            return None
        self.in_duel = True
        self.is_extra = self.next_is_extra()
        self.dstate = NORMAL
        self.lp = ab(START_LP, START_LP)
        self.first = ev["first"]
        self.turn = 1
        self.turn_start_ms = self.match_ms(t)
        self.lp_changed = False
        self.undo_to = None
        self._note(t, "duel", no=len(self.duels) + 1, first=self.first, extra=self.is_extra)
        return None

    def _ev_lp(self, ev, t, do):
        if not self.in_duel:
            return "no duel in progress"
        if not do:
            return None
        before = self.lp
        self.undo_to = (before, self.lp_changed)
        self.lp = ab(clamp(before["A"] + ev.get("A", 0)), clamp(before["B"] + ev.get("B", 0)))
        self.lp_changed = True
        self._note(t, "lp", ev=ev, lp=self.lp)
        self._check_zero(t)
        return None

    def _ev_undo(self, ev, t, do):
        if not self.in_duel:
            return "no duel in progress"
        if self.undo_to is None:
            return "only the last LP entry of this turn can be taken back"
        if do:
            self.lp, self.lp_changed = self.undo_to
            self.undo_to = None
            self._note(t, "undo", lp=self.lp)
        return None

    def _ev_turn_end(self, ev, t, do):
        if not self.in_duel:
            return "no duel in progress"
        if not do:
            return None
        ended, changed = self.turn, self.lp_changed
        now = self.match_ms(t)
        self._note(t, "turn_end", turn_ms=now - self.turn_start_ms)
        self.turn += 1
        self.turn_start_ms = now
        self.lp_changed = False
        self.undo_to = None
        if self.dstate == TIME_TURN:
            self.dstate = EXTRA_TURN
            self.extra_left = self.extra_turns + 1     # the turn ending now is not one of them
        if self.dstate == EXTRA_TURN:
            self.extra_left -= 1
            if self.extra_left == 0:
                self._compare(t, "time_lp")
            else:
                self._note(t, "extra_turn", no=self.extra_turns - self.extra_left + 1,
                           total=self.extra_turns)
        elif self.dstate == SUDDEN:
            if changed:
                self._compare(t, "sudden_death")
        elif self.is_extra and ended == EXTRA_DUEL_TURNS:
            self._compare(t, "time_lp")
        return None

    def _ev_duel_end(self, ev, t, do):
        if not self.in_duel:
            return "no duel in progress"
        if do:
            self._duel_over(t, ev["winner"], "game")
        return None

    def _ev_surrender(self, ev, t, do):
        if not self.in_duel:
            return "no duel in progress"
        p = ev["p"]
        why = self.surrender_refusal(p)
        if why:
            return why
        if do:
            self._duel_over(t, other(p), "surrender")
        return None

    def _ev_penalty(self, ev, t, do):
        # p "both": one penalty to each player at once (rules.md 5). After the match it is
        # written into the record (after_match) and changes nothing else.
        p, kind, code = ev["p"], ev["kind"], ev["code"]
        head_only = self.rules == "ID" and kind in HEAD_ONLY and code != "tardiness"
        if head_only and ev.get("judge") == "floor":
            return "only the head judge may give " + kind
        if not do:
            return None
        self.undo_to = None
        losers = []
        for q in (("A", "B") if p == "both" else (p,)):
            k = kind
            if k == "warning" and self.rules == "ID" and self.warnings(q, code) >= 2:
                k = "duel_loss"                      # ID B: 3rd warning of the same code
            self._add_penalty(t, q, k, code, False, k != kind)
            if k == "duel_loss" or k in MATCH_ENDING:
                losers.append(q)
        if self.over or not losers:
            return None
        # Both lose: the duel (or, between duels, the next one) is lost by both, and a
        # match-ending penalty for both is a double loss.
        winner = "none" if len(losers) == 2 else other(losers[0])
        if kind in MATCH_ENDING:
            self._match_over(t, "double_loss" if winner == "none" else winner)
        else:
            self._duel_over(t, winner, "penalty")
        return None

    def _ev_judge_fix(self, ev, t, do):
        if not self.in_duel:
            return "no duel in progress"
        if not do:
            return None
        p, value = ev["p"], ev["lp"]
        before = self.lp[p]
        lp = dict(self.lp)
        lp[p] = value
        self.lp = lp
        if value != before:
            self.lp_changed = True
        self.undo_to = None
        self._note(t, "fix", p=p, before=before, after=value)
        self._check_zero(t)
        return None

    def _ev_judge_void(self, ev, t, do):
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
        # A duel loss only for a duel lost without play, while no duel has been played since.
        if pen["kind"] == "duel_loss" and (self.in_duel or pen["duel_ix"] != len(self.duels) - 1):
            return "a duel has been played since that penalty"
        if not do:
            return None
        self.penalties = self.penalties[:i] + self.penalties[i + 1:]
        self.excused[p] = True
        self.undo_to = None
        self._note(t, "void", pen=pen)
        if pen["kind"] == "duel_loss":
            self._unwin(t, p)
        return None
