# The rules engine: docs/rules.md over the events of docs/record.md.
#
# Pure: desk-time ms come in with the events, the verdict and sheet notes go out.
# `Match.apply(ev)` takes one well-formed event and returns None (applied) or a reason
# (rejected). Time passes whether or not the event is accepted: a rejected event is a
# `tick` at its `t` (events.md). It changes nothing of its own, but the time-based
# transitions due by its `t` stand, so a record replays to the same verdict as the same
# record with every rejected event replaced by a tick at the same `t`.
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
#   over --penalty--> over   (recorded with after_match; it changes nothing else)
#
# Match time, beside the phases (events.md "Match time"; the organiser's, not play):
#
#   running --pause--> paused --resume--> running     (extend: the limit moves; not once
#                                                      time has been called)
#
#   While paused no time-based transition fires; other events apply as usual.
#
# Time-based transitions (tardiness at 5:00/10:00, time at limit, double loss at
# limit + cap, all in match time) fire at their own instant, before any event stamped at or after it;
# several due at one instant fire in that order: tardiness, time called, the cap.
from .record import PLAYERS
from .rules import START_LP, NORMAL, SUDDEN, other, ab
from .judgements import TimeRules
from .handlers import EventRules


class Match(TimeRules, EventRules):
    def __init__(self, start, on_note=None):
        """`start` is a checked round_start event (record.check_event). `on_note(note)`
        receives what the written record shows, only for applied events (_note)."""
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
        self.now_ms = None
        # Match time (events.md): desk time since the round start less the time paused.
        self.paused_at = None           # desk ms the match time stopped at, or None
        self.paused_ms = 0              # desk ms spent paused before paused_at
        self.over = False
        self.result = None
        self.time_called = False
        self.decide_first_win = False   # elimination, J1/J2 with no duel won: first duel won decides
        self.in_duel = False
        self.is_extra = False
        self.dstate = NORMAL
        self.extra_left = 0
        self.lp = ab(START_LP, START_LP)
        self.first = None
        self.turn = 0
        self.turn_start_ms = 0          # match time the current turn began at
        self.lp_changed = False         # any LP change in the current turn (sudden death)
        self.undo_to = None             # (lp before the last lp entry, lp_changed before)
        self.wins = ab(0, 0)
        self.duels = []                 # {"winner", "by"}; items replaced, never mutated
        self.penalties = []             # {"p","kind","code","t","auto"[,"escalated","after_match"]}; same
        self.seated = ab(not self.seating, not self.seating)
        self.tardy = ab(0, 0)          # 0 none, 1 warning, 2 duel_loss, 3 match_loss
        self.excused = ab(False, False)

    # --- the one entry point -----------------------------------------------------

    def apply(self, ev):
        """Apply one checked event. None if applied, else the reason it was refused.
        Either way (unless `t` is out of order) the clock moves to `t` and the time-based
        transitions due by then fire: a refused event is a tick. Handlers validate before
        they change anything, so a refused event leaves no trace of its own."""
        return self._take(ev, True)

    def check(self, ev):
        """Would `ev` be applied now? The reason it would not, or None. Changes nothing: the
        board asks first, journals the event, and only then applies it. The match must
        have been brought to `ev`'s time first (advance_to): a transition still due by
        then would change the answer, so that is a refusal here."""
        return self._take(ev, False)

    def _take(self, ev, do):
        t = ev["t"]
        if self.now_ms is not None and t < self.now_ms:
            return "out of time order"
        if do:
            self._advance(t)
            self.now_ms = t
        elif self.next_deadline_ms() <= t:
            return "time has moved on since the last look"
        name = ev["ev"]
        if self.over and name != "tick" and name != "penalty":
            return "the match is over"
        return getattr(self, "_ev_" + name)(ev, t, do)

    def advance_to(self, t):
        """Let time pass to `t` without an event: what applying a `tick` does, with no event
        made (a board's frame calls it every second). False if t is in the past."""
        if self.now_ms is not None and t < self.now_ms:
            return False
        self._advance(t)
        self.now_ms = t
        return True

    # --- what the match looks like ------------------------------------------------

    def match_ms(self, t):
        """Match time at desk time `t` (not before the last event): what the rules measure."""
        if self.paused_at is not None and t > self.paused_at:
            t = self.paused_at
        return t - self.paused_ms

    def remaining_ms(self, t):
        """Match time left before the limit at desk time `t` (negative once past it)."""
        return self.limit_ms - self.match_ms(t)

    def turn_ms(self, t):
        """How long the current turn has run at desk time `t`, in match time."""
        return self.match_ms(t) - self.turn_start_ms

    def phase(self):
        if self.over:
            return "over"
        if self.in_duel:
            if self.dstate != NORMAL:
                return self.dstate
            return "extra_duel" if self.is_extra else "duel"
        return "interval" if self.duels else "waiting"

    def surrender_refusal(self, p):
        """Why `p` may not surrender now (KR 2.D), or None."""
        o = other(p)
        if self.wins[o] + 1 >= 2 or self.decide_first_win:
            return "surrender would decide the match"
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
        if self.over:
            pen["after_match"] = True     # given after the match: changes nothing in it
        if kind == "duel_loss":
            pen["duel_ix"] = len(self.duels)   # the duel it costs (played or not)
        self.penalties = self.penalties + [pen]
        self._note(t, "penalty", pen=pen)

    def _unwin(self, t, p):
        """Void p's penalty duel loss: the duel lost without play goes back (or, where both
        players lost it, is now lost by the other player only)."""
        last = self.duels[-1]
        if last["winner"] == "none":
            self.duels = self.duels[:-1] + [{"winner": p, "by": "penalty"}]
            self.wins = dict(self.wins)
            self.wins[p] += 1
            self._settle(t, p)
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
            self._note(t, "sudden_death")
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
        self._note(t, "duel_over", winner=winner, by=by)
        self._settle(t, winner)

    def _settle(self, t, winner):
        # A duel won (in play, without play, or given back by a void) may decide the match.
        if winner in PLAYERS and (self.wins[winner] >= 2 or self.decide_first_win):
            self._match_over(t, winner)

    def _match_over(self, t, result):
        self.over = True
        self.result = result
        self.in_duel = False
        self.dstate = NORMAL
        self._note(t, "match_over", result=result)

    # A note: what the written record shows of an applied event, the engine's only output
    # besides its state (on_note; the sheet and the table's alerts read it). A dict, as an
    # event is, made only while someone listens (not in check) and not kept. Every note has
    # "t" (desk ms), "kind", "turn" and "turn_player": the turn of the duel in play when it
    # was made and whose it is (the last duel's between duels; 0 and None before the
    # first). Its other keys, by kind (this table lists every kind):
    #
    #   kind          keys                  made when
    #   seated        p                     a player checks in
    #   duel          no, first, extra      a duel starts (no from 1; extra: an extra duel)
    #   lp            ev, lp                an LP entry: ev the lp event as applied (its A,
    #                                       B, by, cost), lp the LP after it
    #   undo          lp                    the last entry taken back: lp as before it
    #   turn_end      turn_ms               a turn ends (turn: the one ending; turn_ms: its
    #                                       length in match time)
    #   fix           p, before, after      a judge sets p's LP from before to after
    #   extra_turn    no, total             extra turn `no` of `total` begins
    #   time                                time is called
    #   sudden_death                        sudden death begins
    #   cap                                 the cap is reached
    #   extend        ms                    the limit moves by ms
    #   pause                               the match time stops
    #   resume        since                 it runs again (since: the pause's desk ms)
    #   penalty       pen                   a penalty, as `penalties` lists it
    #   void          pen                   an automatic penalty voided (the one removed)
    #   duel_over     winner, by            a duel ends (winner A B draw none; by as in the
    #                                       verdict's duels)
    #   match_over    result                the match ends (the verdict's result)

    def _note(self, t, kind, **note):
        if self.on_note is not None:
            note["t"] = t
            note["kind"] = kind
            note["turn"] = self.turn
            note["turn_player"] = self.turn_player()
            self.on_note(note)

    # --- verdict -----------------------------------------------------------------------

    def verdict(self):
        """The verdict of events.md as a plain dict (see replay.dumps_verdict for JSON)."""
        return {
            "result": self.result if self.over else "pending",
            "wins": dict(self.wins),
            "duels": [dict(d) for d in self.duels],
            "phase": self.phase(),
            "lp": dict(self.lp),
            "penalties": [_listed(x) for x in self.penalties],
        }


def _listed(pen):
    # A penalty as the verdict lists it; after_match only where it is true (events.md).
    e = {"p": pen["p"], "kind": pen["kind"], "code": pen["code"]}
    if "after_match" in pen:
        e["after_match"] = True
    return e
