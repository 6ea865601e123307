# Helpers for the core tests (plain functions, MicroPython-compatible). A test builds a
# match with `new(...)` and plays it with `ok` (must be applied) and `no` (must be refused).
from duelclock.core.match import Match
from duelclock.core.record import check_event

MIN = 60000


def new(kind="swiss", **opts):
    ev = {"t": 0, "ev": "round_start", "round": 1, "kind": kind}
    for k in opts:
        ev[k] = opts[k]
    assert check_event(ev) is None, check_event(ev)
    notes = []
    m = Match(ev, notes.append)
    m.notes = notes                 # every note (Match._note), in order
    return m


def event(t, name, **keys):
    ev = {"t": t, "ev": name}
    for k in keys:
        ev[k] = keys[k]
    return ev


def ok(m, t, name, **keys):
    ev = event(t, name, **keys)
    why = check_event(ev) or m.apply(ev)
    assert why is None, "%s refused: %s" % (name, why)
    return m


def no(m, t, name, **keys):
    ev = event(t, name, **keys)
    why = check_event(ev) or m.apply(ev)
    assert why is not None, "%s was applied, expected a refusal" % name
    return why


def win_duel(m, t, winner):
    """The loser's LP to 0 at t."""
    loser = "B" if winner == "A" else "A"
    kw = {loser: -99999}
    return ok(m, t, "lp", **kw)


def v(m, key):
    return m.verdict()[key]


def encode(msg, key):
    """The signed line of `msg` (a dict without "sig") under `key` (bytes). Checks nothing:
    wire.Encoder.build is the checked way; this one also makes bad messages."""
    from duelclock.core.sign import Key, signed_line
    return signed_line(msg, Key(key))
