"""Verification: a table's reported result against its stored record replayed (core Replay),
and the one replay of stored events that the desk, `duelclock sheet --table` and the
dashboard's sheet share.

  events missing        -> "incomplete": checked again as records arrive
  same result and wins  -> "ok": penalties derived, the caller acks
  different             -> "mismatch": flagged for the head judge, never acked

Penalties carried to the player's next match (rules.md 5, protocol.md "Carried penalties"):
a replayed record's duel_loss or match_loss given after the match (a mismatched result
too: the penalty is in the record) becomes a carry of the player named in the pairings:
ready at once under ID rules, awaiting the head judge's `carry` command under KR rules.
Store-side only: nothing here sends.
"""
import json

from duelclock.core.replay import RecordError, Replay

CARRIED_KINDS = ("duel_loss", "match_loss")   # given after a match: to the player's next one


def replayed(events, with_sheet=False):
    """The core Replay fed a record given as event dicts (the store's rows, a pulled
    record); RecordError when they are no match record (none, or no round_start first)."""
    r = Replay(with_sheet=with_sheet)
    for ev in events:
        r.feed(json.dumps(ev))
    if r.match is None:
        raise RecordError("not a match record: no events")
    return r


def verify(store, tbl, round_no):
    """Replay table `tbl`'s stored record of `round_no` against its reported result and
    store the verdict, its penalties and carries; the number of events to ack, or None
    when the result is not (yet) "ok"."""
    r = store.result(tbl, round_no)
    n = r["events"]
    events = store.events(tbl, round_no, n)
    if len(events) < n:
        store.verify(tbl, round_no, "incomplete", "have %d of %d events" % (len(events), n),
                     None, ())
        return None
    reported = {"A": r["wins_a"], "B": r["wins_b"]}
    ok = False
    try:
        rep = replayed(events)
    except RecordError as e:
        verdict, note = None, str(e)
    else:
        verdict = rep.match.verdict()
        if rep.match.round_no != round_no:
            note = "the record is of round %d" % rep.match.round_no
        elif (verdict["result"], verdict["wins"]) != (r["result"], reported):
            note = "the record replays to %s %d-%d, the table reported %s %d-%d" % (
                verdict["result"], verdict["wins"]["A"], verdict["wins"]["B"],
                r["result"], reported["A"], reported["B"])
        else:
            ok, note = True, "%d events replayed, %d rejected" % (n, len(rep.rejected))
    kinds = [f[1] for f in store.flags(tbl, round_no)]
    if "changed" in kinds or "late" in kinds:
        note += "; %d event(s) changed on the table, %d reached the desk late: see the " \
                "sheet, confirm with the players" % (
                    kinds.count("changed"), kinds.count("late"))
    if "after_close" in kinds:
        note += "; %d event(s) reached the desk after the round was closed" \
                % kinds.count("after_close")
    store.verify(tbl, round_no, "ok" if ok else "mismatch", note, verdict,
                 verdict["penalties"] if verdict else ())
    if verdict:
        _carries_of(store, tbl, round_no, events[0].get("rules", "ID"), verdict["penalties"])
    return n if ok else None


def _carries_of(store, tbl, round_no, rules, penalties):
    # Each duel_loss/match_loss given after the match: a carry of the player the round's
    # pairings name on that side (none named: the desk cannot find the next match, and
    # status says so).
    names = store.pairings(round_no).get(tbl)
    for n, pen in enumerate(penalties):
        if pen.get("after_match") and pen["kind"] in CARRIED_KINDS:
            player = names["AB".index(pen["p"])] if names else None
            state = "unnamed" if player is None else ("confirm" if rules == "KR" else "ready")
            store.add_carry(round_no, tbl, n, player, pen["kind"], pen["code"], rules, state)
