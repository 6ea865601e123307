"""Scripted players: a match script (the events of docs/record.md) turned into the
key presses two players and a judge would make on the table, at the right round times.

The keys are the SIM board's intents (every intent is its own key), and the menus are
reached as on a keypad board: `menu`, then the item's number. A script's `t` is when the
event should happen (round ms); the table stamps it when the confirming key lands, so the
journal differs from the script by the few ms key entry takes, never in its verdict (scripts
keep a margin around the round's time limits).
"""
from duelclock.core import catalogue
from duelclock.core.match import Match

JUDGE_PINS = {"floor": "1111", "head": "2222"}   # the simulator's tables' PINs


def digits(n):
    return list(str(n))


def _judge(m, role):
    """Open the judge menu with the role's PIN. The main menu's Judge item: 4th in a duel
    (Record, Duel over, Surrender), 3rd between duels with both seated (Record, Start duel),
    else 2nd (after the match too)."""
    both = m.seated["A"] and m.seated["B"] and not m.over
    item = "4" if m.in_duel else ("3" if both else "2")
    return ["menu", item] + digits(JUDGE_PINS[role]) + ["ok"]


def _menu_pick(index):
    """Keys to pick item `index` (0-based) of a list: its number up to 9, else down x index."""
    if index < 9:
        return [str(index + 1)]
    return ["down"] * index + ["a"]


def keys_for(ev, m):
    """The intents that make the table record `ev`, the match being `m` before it (its
    state decides which menu items exist)."""
    k = ev["ev"]
    if k == "seated":
        p = ev["p"].lower()
        return [p, p]
    if k == "duel_start":
        return ["a", ev["first"].lower()]
    if k == "lp":
        out = []
        by = ev.get("by") or ("A" if "A" in ev else "B")
        order = [by] + [p for p in ("A", "B") if p != by]
        for p in order:
            if p not in ev:
                continue
            out.append(p.lower())
            out += digits(abs(ev[p]))
            if ev[p] > 0:
                out.append("sign")
        return out + ["ok"]
    if k == "undo":
        return ["undo"]
    if k == "turn_end":
        return ["turn"]
    if k == "duel_end":
        w = ev["winner"]
        return ["menu", "2", "3" if w == "draw" else w.lower(), "a", "b"]
    if k == "surrender":
        return ["menu", "3", ev["p"].lower(), "a", "b"]
    if k in ("penalty", "judge_fix", "judge_void"):
        role = ev.get("judge", "head")
        rules = m.rules
        out = _judge(m, role)
        p = ev["p"].lower()
        if k == "penalty":
            codes = catalogue.codes(rules)
            out += ["1", p] + _menu_pick(codes.index(ev["code"]))
            kinds = list(catalogue.KINDS)                 # mildest first, as the table lists them
            if rules == "ID" and role != "head" and ev["code"] != "tardiness":
                kinds = [x for x in kinds if x not in ("match_loss", "dq", "dq_prizes")]
            return out + _menu_pick(kinds.index(ev["kind"])) + ["ok"]     # shown, then OK
        if k == "judge_fix":
            return out + ["2", p] + digits(ev["lp"]) + ["ok", "ok"]
        return out + ["3" if m.in_duel else "2", p, "ok"]
    return []                                   # tick: time passes by itself


def steps(events):
    """[(round ms, event, [intents])]: the events of a script (its round_start first, which
    the desk sends) that players make by keys, in order, each with its key presses."""
    m = Match(events[0])
    out = []
    for ev in events[1:]:
        keys = keys_for(ev, m)
        if m.apply(ev) is None and keys:
            out.append((ev["t"], ev, keys))
    return out


def plan(events):
    """[(round ms, [intents])] for a script: what the players press, and when."""
    return [(t, keys) for t, _, keys in steps(events)]
