"""Fuzzing the table's input paths: the wire decoder (both ends), the record parser, the key
handler (core/keys.py) and the UI (core/ui.py). 0 crashes, 0 state corruption.

Generators (a seeded random.Random in, one input out) make arbitrary bytes, near-valid lines
(valid signed messages and events, mutated: flipped bytes, cuts, duplicated keys, huge numbers,
deep nesting, wrong types) and valid-but-hostile ones (well signed, extreme values). The
wire and record targets and their invariants are in upy_fuzz.py (they run under MicroPython
too); the key and UI targets are here:

  KeysTarget  random raw key levels at random scan times into Keys, for each board's KEYMAP:
              only the keymap's intents; no more shorts/longs than debounced presses; a hold
              only after long_ms down; after any input, a clean press gives exactly its short.
  UiTarget    random intents at random (even backward) times into Ui, with desk pause,
              resume and extend, and journal writes that fail: after each step LP >= 0, wins
              count the duels, each event was recorded on a key that confirms it (both
              players' keys where both must agree), and the journal replays (core.replay) to
              the state the table shows.

soak(minutes, scratch_dir) runs each target for its share of the time (the wire and record
targets under atheris, coverage-guided from a seed corpus, when it imports; else a random
loop); bench(scratch_dir) a short fixed-size run. Both yield tests/bench/common.py metrics,
and both run a fixed seeded corpus under the real MicroPython (upy_fuzz.py).

    python tests/faults/soak_fuzz.py [minutes]       # the soak, metrics as JSON lines
"""
import ast
import binascii
import glob
import json
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for _p in (os.path.join(ROOT, "firmware"), ROOT):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from duelclock.core import wire  # noqa: E402
from duelclock.core.jsonio import dumps_event  # noqa: E402
from duelclock.core.keys import Keys  # noqa: E402
from duelclock.core.replay import Replay  # noqa: E402
from duelclock.core.sign import encode, table_key  # noqa: E402
from duelclock.core.ui import Ui  # noqa: E402
from tests.bench.common import metric  # noqa: E402
from tests.faults import upy_fuzz  # noqa: E402
from tests.faults.upy_fuzz import KEY, TBL, Corrupt, run_one  # noqa: E402
from tests.host.upy import run_upy  # noqa: E402

SEQ_BOOT = wire.SEQ_BOOT
UPY_CORPUS = 2000            # inputs of the fixed corpus run under MicroPython


# --- inputs for the wire decoder ------------------------------------------------------------

def _pool():
    """Valid signed lines: every desk command (to table TBL, to all, to another table) and
    every table report (from TBL and from table 6)."""
    desk = wire.Encoder(KEY, 1)
    rnd = {"round": 3, "kind": "swiss", "start_ms": 120000, "limit_s": 2700, "cap_s": 1800,
           "extra_turns": 1, "seating": True}
    cmds = [desk.build("round", rnd, 0),
            desk.build("round", dict(rnd, names={"A": "Kim", "B": "Budi"}, lang="ko", rules="KR"), TBL),
            desk.build("pause", {"at_ms": 5000, "tables": [TBL, 7]}, 0),
            desk.build("resume", {"at_ms": 9000}, 0),
            desk.build("extend", {"round": 3, "ms": 60000}, TBL),
            desk.build("extend", {"round": 3, "ms": 60000}, 9),
            desk.build("rules", {"name": "KR", "settings": {"extend_ok": True, "n": 3}}, 0),
            desk.build("ack", {"round": 3, "events": 12}, TBL),
            desk.build("sync", {"t1": 100, "t2": 200, "t3": 201, "re": 7}, TBL)]
    reports = []
    for tbl in (TBL, 6):
        t = wire.Encoder(KEY, 1, tbl=tbl)
        reports += [t.build("hello", {"board": "SIM", "fw": "0.1", "battery": 80}),
                    t.build("state", {"round": 3, "phase": "duel", "duel": 1,
                                      "wins": {"A": 0, "B": 0}, "lp": {"A": 8000, "B": 6500},
                                      "turn": 2, "remaining_ms": 1000, "judge": True}),
                    t.build("record", {"round": 3, "first": 0, "total": 2, "events": [
                        {"t": 0, "ev": "round_start", "round": 3, "kind": "swiss"},
                        {"t": 90, "ev": "lp", "A": -500, "by": "A"}]}),
                    t.build("result", {"round": 3, "result": "A", "wins": {"A": 2, "B": 0},
                                       "events": 2}),
                    t.build("sync", {"t1": 55})]
    return cmds, reports


POOL = _pool()
FIELDS = ("v", "k", "tbl", "seq", "sig", "round", "ms", "at_ms", "tables", "names", "events",
          "wins", "lp", "settings", "t1", "re", "start_ms", "extra", "A")
HOSTILE = (2 ** 53, 2 ** 53 - 1, -2 ** 53 + 1, 10 ** 30, -10 ** 30, 2 ** 63, 1e308, 1.5, -0.0,
           True, False, None, "", "x" * 64, "x" * 65, "\u00e9" * 64, "\ud800", "\x00", [], {},
           [1] * 300, list(range(1, 70)), {"A": 1, "B": 2}, {"A": "x", "B": "y", "C": "z"},
           {"A": [1], "B": 2}, [{"t": 0, "ev": "x"}] * 65, 0, -1, 1, 9999, 10000, "state")


def _deep(rng):
    n = rng.choice((9, 64, 300, 600, 2000))
    o, c = rng.choice((("[", "]"), ('{"a":', "}")))
    return o * n + "1" + c * n


def _number_text(rng):
    return rng.choice(("1" + "0" * rng.randint(16, 400), "-" + "9" * rng.randint(16, 400),
                       "1e400", "-1e400", "NaN", "Infinity", "-0", "0.0", "00", "1.", "+1"))


def _bytes_mutate(rng, line):
    b = bytearray(line)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(8)
        i = rng.randrange(len(b) + 1)
        if op == 0 and b:
            b[min(i, len(b) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1 and b:
            b[min(i, len(b) - 1)] = rng.randrange(256)
        elif op == 2:
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 3:
            del b[i:i + rng.randint(1, 40)]
        elif op == 4:
            del b[i:]
        elif op == 5:
            j = rng.randrange(len(b) + 1)
            b[i:i] = b[min(i, j):max(i, j)][:600]
        elif op == 6:
            b[i:i] = rng.choice((b"\n", b"\r", b"\r\n", b"\\", b'"', b"\x00", b"\xff", b"\xc3"))
        else:
            b[i:i] = rng.choice((b" ", b"\t", b"{}", b"[]", b",", b":"))
    return bytes(b)


def _resign(rng, d, side, counter):
    """Text of dict `d` with a sig: the right key (a valid but hostile message), a wrong
    one, the other direction's, the old sig, none, or a sig that is not a hex string."""
    d = dict(d)
    old = d.pop("sig", None)
    how = rng.randrange(7)
    how = 0 if how > 4 else how                          # the right key: 3 in 7
    tbl = d.get("tbl")
    right = KEY if side == "t" else table_key(KEY, tbl if type(tbl) is int else 0)
    if how <= 2:
        if rng.random() < 0.7:
            d["seq"] = 2 * SEQ_BOOT + counter * 64        # fresh: not a replay
        key = (right, b"not the key", table_key(KEY, TBL) if side == "t" else KEY)[how]
        try:
            return encode(d, key).rstrip(b"\n")
        except (ValueError, UnicodeError, TypeError):    # floats, null, surrogates
            how = 3
    if how == 3:
        d["sig"] = old
    elif how == 4:
        d["sig"] = rng.choice((1, None, "zz" * 32, "0" * 63, "0" * 64, [old], str(old).upper()))
    return json.dumps(d, separators=rng.choice(((",", ":"), (", ", ": ")))).encode()


def _structural(rng, line, side, counter):
    d = json.loads(line)
    op = rng.randrange(6)
    key = rng.choice(FIELDS) if rng.random() < 0.5 else rng.choice(sorted(d))
    if op <= 1:
        val = rng.choice(HOSTILE)
        if key == "seq" and type(val) is int and val > 2 * SEQ_BOOT:
            val = -1                                     # keep the stream usable: see _probe
        d[key] = val
        return _resign(rng, d, side, counter)
    if op == 2:
        d.pop(key, None)
        return _resign(rng, d, side, counter)
    text = _resign(rng, d, side, counter)
    if op == 3:                                          # a key twice: the last one wins
        val = json.dumps(rng.choice(HOSTILE)).encode() if rng.random() < 0.7 else \
            json.dumps(d.get(key, 1)).encode()
        dup = b'"' + key.encode() + b'":' + val
        return (text[:-1] + b"," + dup + b"}") if rng.random() < 0.5 else (b"{" + dup + b"," + text[1:])
    if op == 4:
        return text[:-1] + b',"' + key.encode() + b'":' + _deep(rng).encode() + b"}"
    return text[:-1] + b',"' + key.encode() + b'":' + _number_text(rng).encode() + b"}"


def gen_wire(rng, side, counter=0):
    """One input for the Decoder of `side` ("t": a table's, "d": the desk's)."""
    cmds, reports = POOL
    mine, other = (cmds, reports) if side == "t" else (reports, cmds)
    pick = lambda: rng.choice(mine) if rng.random() < 0.85 else rng.choice(other)  # noqa: E731
    kind = rng.randrange(10)
    if kind == 0:
        n = rng.choice((0, 1, 8, 100, 1100, 3000))
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, n)))
    if kind <= 3:
        return _bytes_mutate(rng, pick().rstrip(b"\n"))
    if kind <= 7:
        line = pick().rstrip(b"\n")
        out = _structural(rng, line, side, counter)
        return _bytes_mutate(rng, out) if rng.random() < 0.15 else out
    if kind == 8:                                        # lines together: replays, splices
        parts = [pick().rstrip(b"\n") for _ in range(rng.randint(2, 5))]
        if rng.random() < 0.5:
            parts.append(parts[0])
        return rng.choice((b"\n", b"\r\n", b"\n\n")).join(parts)
    line = pick().rstrip(b"\n")                          # about MAX_LINE_BYTES long
    pad = wire.MAX_LINE_BYTES - len(line) + rng.randint(-3, 3)
    d = json.loads(line)
    d["pad"] = "x" * max(pad - 10, 1)
    return _resign(rng, d, side, counter)


# --- inputs for the record parser -----------------------------------------------------------

EVENTS = ({"ev": "lp", "A": -500}, {"ev": "lp", "B": -8000, "by": "B"}, {"ev": "lp", "A": 100, "cost": True},
          {"ev": "turn_end"}, {"ev": "undo"}, {"ev": "tick"}, {"ev": "duel_end", "winner": "A"},
          {"ev": "surrender", "p": "B"}, {"ev": "penalty", "p": "A", "kind": "warning", "code": "slow_play"},
          {"ev": "judge_fix", "p": "B", "lp": 4000}, {"ev": "judge_void", "p": "A", "code": "tardiness"},
          {"ev": "extend", "ms": 60000}, {"ev": "duel_start", "first": "B"}, {"ev": "seated", "p": "A"},
          {"ev": "round_start", "round": 4, "kind": "swiss"})
EV_KEYS = ("t", "ev", "A", "B", "p", "kind", "code", "lp", "ms", "first", "winner", "cost", "by",
           "round", "limit_s", "judge", "x")


def gen_record(rng, counter=0):
    """One record line (bytes, no newline)."""
    ev = dict(rng.choice(EVENTS), t=2000 + counter * 50 + rng.choice((0, 0, 1, -1, 500)))
    kind = rng.randrange(8)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, rng.choice((10, 200, 1100)))))
    line = json.dumps(ev, ensure_ascii=rng.random() < 0.5,
                      separators=rng.choice(((",", ":"), (", ", ": ")))).encode()
    if kind == 1:
        return line
    if kind == 2:
        return _bytes_mutate(rng, line)
    key = rng.choice(EV_KEYS)
    if kind == 3:
        ev[key] = rng.choice(HOSTILE)
        try:
            return json.dumps(ev).encode()
        except ValueError:
            return line
    if kind == 4:
        return line[:-1] + b', "' + key.encode() + b'": ' + json.dumps(rng.choice(HOSTILE)).encode() + b"}"
    if kind == 5:
        return line[:-1] + b', "' + key.encode() + b'": ' + _deep(rng).encode() + b"}"
    if kind == 6:
        return line[:-1] + b', "' + key.encode() + b'": ' + _number_text(rng).encode() + b"}"
    return rng.choice((b"\xef\xbb\xbf", b"", b" ")) + line + rng.choice(
        (b"\r", b",", b"}", b"\x00", b" ", b"\n{}", b"x" * rng.choice((1, 1100))))


def gen_input(rng, kind, counter=0):
    return gen_record(rng, counter) if kind == "p" else gen_wire(rng, kind, counter)


def corpus(seed, n):
    """A fixed sample: [(target, bytes)], the three targets in turn."""
    rng = random.Random(seed)
    return [("tdp"[i % 3], gen_input(rng, "tdp"[i % 3], i)) for i in range(n)]


# --- the key handler ------------------------------------------------------------------------

def board_keymaps():
    """Every board's KEYMAP, read from boards/*/board.py (they import hardware modules)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "boards", "*", "board.py"))):
        for node in ast.parse(open(path).read()).body:
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "KEYMAP":
                keymap = ast.literal_eval(node.value)
                if keymap:                        # SIM's is made at run time
                    out[os.path.basename(os.path.dirname(path))] = keymap
    return out


KEYMAPS = board_keymaps()


class KeysTarget:
    """One random session of raw key levels into Keys on a board's keymap."""

    def run(self, rng):
        name = rng.choice(sorted(KEYMAPS))
        keymap = KEYMAPS[name]
        phys = sorted(k for k in keymap if "+" not in k)
        debounce, long_ms = rng.choice((0, 5, 20, 50)), rng.choice((100, 700))
        held = []
        keys = Keys(lambda: held, keymap, long_ms=long_ms, repeat_ms=rng.choice((30, 150)),
                    debounce_ms=debounce)
        owner = {}                                   # intent -> the keymap entry giving it
        for k, acts in keymap.items():
            for a in acts:
                if a is not None:
                    owner[a] = k if a not in owner else None
        # The reference debouncer: a level counts once stable for debounce ms.
        raw = dict.fromkeys(phys, False)
        raw_ms = dict.fromkeys(phys, 0)
        level = dict.fromkeys(phys, False)
        down_since = {}
        presses = dict.fromkeys(keymap, 0)
        fired = dict.fromkeys(keymap, 0)
        t = 0
        for _ in range(rng.randint(1, 300)):
            t += rng.choice((0, 1, 3, 10, 15, 20, 40, 200, long_ms, 3 * long_ms))
            held[:] = [k for k in phys if rng.random() < 0.3] + (["??"] if rng.random() < 0.05 else [])
            new_down = []
            for k in phys:
                r = k in held
                if r != raw[k]:
                    raw[k], raw_ms[k] = r, t
                if r != level[k] and t - raw_ms[k] >= debounce:
                    level[k] = r
                    if r:
                        presses[k] += 1
                        down_since[k] = raw_ms[k]
                        new_down.append(k)
            for c in keymap:
                if "+" in c and all(level[p] for p in c.split("+")) and \
                        any(p in new_down for p in c.split("+")):
                    presses[c] += 1
            out = list(keys.scan(t))
            for intent in out:
                if intent not in owner:
                    raise Corrupt("%s: intent %r is not in the keymap" % (name, intent))
                k = owner[intent]
                if k is None:
                    continue
                short, long_, hold = keymap[k]
                if intent == hold and intent != long_:
                    parts = k.split("+")
                    if not all(level[p] and t - down_since[p] >= long_ms for p in parts):
                        raise Corrupt("%s: hold %r before %d ms down" % (name, intent, long_ms))
                else:
                    fired[k] += 1
                    if fired[k] > presses[k]:
                        raise Corrupt("%s: %r without a press of %s" % (name, intent, k))
        # After anything: everything released, then one clean press gives exactly its short.
        held[:] = []
        for _ in range(3):
            t += debounce + long_ms
            keys.scan(t)
        k = rng.choice([p for p in phys if keymap[p][0] is not None])
        held[:] = [k]
        got = []
        for step in (0, debounce, debounce + 5):
            got += keys.scan(t + step)
        held[:] = []
        for step in (debounce + 10, 2 * debounce + 20):
            got += keys.scan(t + step)
        if got != [keymap[k][0]]:
            raise Corrupt("%s: a clean press of %s gave %r" % (name, k, got))
        return name


# --- the UI ---------------------------------------------------------------------------------

INTENTS = ("a", "b", "ok", "back", "menu", "turn", "undo", "sign", "up", "down", "up_fast",
           "down_fast", "0", "1", "2", "3", "5", "9", "00", "000")
WEIGHTED = ("a", "b", "a", "b", "ok", "ok", "menu", "back", "1", "2", "down") + INTENTS
# The keys that may record each event (the key that completes it): a player's own key or ok
# confirms, a menu is picked with a/ok or a digit, turn and undo are their own keys.
CONFIRMS = {"lp": ("ok", "a", "b"), "turn_end": ("turn",), "undo": ("undo",),
            "duel_start": ("a", "b", "ok") + tuple("123456789"), "seated": ("a", "b"),
            "duel_end": ("a", "b"), "surrender": ("a", "b"),
            "penalty": ("a", "ok") + tuple("123456789"), "judge_fix": ("a", "ok"),
            "judge_void": ("a", "b", "ok") + tuple("123456789"), "extend": ("a", "ok")}
# What players do (check in, start, damage, turns, duel over, a judge's penalty), so that
# sessions get deep into a match between the random keys.
MACROS = (("a", "a"), ("b", "b"), ("a", "1", "000", "ok"), ("b", "5", "00", "b"), ("a", "8", "000", "ok"),
          ("turn",), ("menu", "down", "a", "a", "a", "b"), ("menu", "down", "a", "b", "b", "a"),
          ("menu", "3", "2", "2", "2", "2", "ok", "a", "b", "a", "a"), ("undo",))
STEPS_MS = (0, 0, 20, 50, 200, 400, 1000, 1500, 3000, 5000, -40, -2000)
BOTH = ("duel_end", "surrender")     # both players confirm with their own key


class UiTarget:
    """One random session at a table: intents, time, desk commands, failing journal writes."""

    def run(self, rng, steps=None):
        journal = []
        st = {"key": None, "fail": False, "since": set(), "bad": None}

        def save(ev):
            if st["fail"]:
                st["fail"] = False
                raise OSError(28, "no space")
            k = st["key"]
            if ev["ev"] not in ("round_start", "tick") and k != "desk":
                if k not in CONFIRMS.get(ev["ev"], ()):
                    st["bad"] = "%s recorded on key %r" % (ev["ev"], k)
                elif ev["ev"] in BOTH and not {"a", "b"} <= st["since"]:
                    st["bad"] = "%s without both players' keys" % ev["ev"]
                elif ev["ev"] == "seated" and k != ev["p"].lower():
                    st["bad"] = "seated %s on key %r" % (ev["p"], k)
                st["since"] = set()
            journal.append(dict(ev))

        ui = Ui(1, save, pins={"floor": "1111", "head": "2222"})
        start = {"t": 0, "ev": "round_start", "round": 1, "kind": rng.choice(("swiss", "elimination")),
                 "seating": rng.random() < 0.5, "limit_s": rng.choice((60, 600, 2700)),
                 "cap_s": rng.choice((0, 30, 1800)), "extra_turns": rng.choice((0, 1, 3)),
                 "rules": rng.choice(("ID", "KR"))}
        st["key"] = "desk"
        ui.start_round(start, extend_ok=rng.random() < 0.5)
        t = rng.choice((-60000, 0))
        for i in range(steps or rng.randint(1, 400)):
            t += rng.choice(STEPS_MS) if rng.random() < 0.97 else rng.choice((60000, 400000, -100000))
            what = rng.random()
            if what < 0.8:
                for k in rng.choice(MACROS) if rng.random() < 0.4 else (rng.choice(WEIGHTED),):
                    st["key"] = k
                    st["since"].add(k)
                    ui.key(k, t)
                    if st["bad"]:
                        break
            elif what < 0.88:
                st["key"] = "desk"
                ui.tick(t)
            elif what < 0.92:
                st["key"] = "desk"
                (ui.pause if ui.paused_at is None else ui.resume)(t)
            elif what < 0.95:
                st["key"] = "desk"
                ui.now_ms = max(t, ui.match.now_ms or t)
                ui.record({"t": ui.now_ms, "ev": "extend", "ms": rng.choice((1000, 60000, 3600000))})
            else:
                st["fail"] = True
            if st["bad"]:
                raise Corrupt(st["bad"])
            self.check(ui, journal, full=(i % 20 == 0))
        self.check(ui, journal, full=True)
        return len(journal)

    @staticmethod
    def check(ui, journal, full):
        m = ui.match
        v = m.verdict()
        for p in ("A", "B"):
            if m.lp[p] < 0:
                raise Corrupt("LP %s below 0: %d" % (p, m.lp[p]))
            if v["wins"][p] != sum(1 for d in v["duels"] if d["winner"] == p) or v["wins"][p] > 2:
                raise Corrupt("wins do not count the duels: %r" % v)
        if not full:
            return
        r = Replay()
        for ev in journal:
            r.feed(dumps_event(ev))
        if r.rejected:
            raise Corrupt("the journal replays with rejections: %r" % r.rejected[:3])
        if m.now_ms is not None and (r.match.now_ms is None or r.match.now_ms < m.now_ms):
            r.match.advance_to(m.now_ms)
        got = r.match.verdict()
        if got != v or r.match.turn != m.turn or r.match.in_duel != m.in_duel:
            raise Corrupt("the journal replays to another state:\n%r\n%r" % (got, v))


# --- loops, MicroPython, atheris --------------------------------------------------------------

class Tally:
    def __init__(self):
        self.execs = {}
        self.crashes = 0
        self.corruptions = 0
        self.failures = []                 # the first few, for the report

    def fail(self, what, text):
        if text.startswith("crash"):
            self.crashes += 1
        else:
            self.corruptions += 1
        if len(self.failures) < 20:
            self.failures.append("%s: %s" % (what, text))

    def count(self, target, n=1):
        self.execs[target] = self.execs.get(target, 0) + n


def random_loop(kind, seconds, seed, tally, max_execs=None):
    """Feed target `kind` (t, d, p, keys, ui) random inputs for `seconds` or max_execs."""
    rng = random.Random(seed)
    tgts = upy_fuzz.targets()
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end and (max_execs is None or n < max_execs):
        if kind in ("keys", "ui"):
            try:
                (KeysTarget() if kind == "keys" else UiTarget()).run(random.Random(rng.random()))
            except Corrupt as e:
                tally.fail(kind, "corrupt: %s" % e)
            except Exception as e:           # noqa: BLE001
                tally.fail(kind, "crash: %s: %s" % (type(e).__name__, e))
        else:
            _, fail = run_one(tgts, kind, gen_input(rng, kind, n))
            if fail:
                tally.fail(kind, fail)
                tgts = upy_fuzz.targets()
        n += 1
    tally.count(kind, n)


def run_corpus_upy(path_dir, seed=7, n=UPY_CORPUS):
    """The fixed corpus through CPython and MicroPython: (cpython outcomes, micropython
    outcomes, micropython summary (inputs, crashes, corruptions), stderr)."""
    items = corpus(seed, n)
    path = os.path.join(path_dir, "fuzz_corpus.txt")
    with open(path, "w") as f:
        for kind, data in items:
            f.write("%s %s\n" % (kind, binascii.hexlify(data).decode()))
    tgts = upy_fuzz.targets()
    mine = []
    for kind, data in items:
        outcome, fail = run_one(tgts, kind, data)
        if fail:
            tgts = upy_fuzz.targets()
            outcome = "FAIL " + fail
        mine.append(outcome)
    r = run_upy([os.path.join(HERE, "upy_fuzz.py"), path], timeout=600)
    theirs, summary = [], None
    for line in r.stdout.splitlines():
        parts = line.split()
        if parts and parts[0] == "done":
            summary = tuple(int(x) for x in parts[1:])
        elif len(parts) == 2:
            theirs.append(binascii.unhexlify(parts[1]).decode("utf-8", "surrogateescape"))
        elif len(parts) == 1:
            theirs.append("")
    return items, mine, theirs, summary, r.stderr


def upy_metrics(scratch):
    items, mine, theirs, summary, err = run_corpus_upy(scratch)
    crashes = (summary[1] if summary else len(items)) + sum(o.startswith("FAIL crash") for o in mine)
    corrupt = (summary[2] if summary else 0) + sum(o.startswith("FAIL corrupt") for o in mine)
    differ = sum(1 for a, b in zip(mine, theirs) if a != b) + abs(len(mine) - len(theirs))
    yield metric("fuzz_crashes_micropython", crashes, "crashes", 0, exact=True,
                 note="%d inputs (decoder x2, parser) under micropython and CPython" % len(items))
    yield metric("fuzz_state_corruptions_micropython", corrupt, "corruptions", 0, exact=True)
    yield metric("fuzz_outcomes_differing_micropython", differ, "inputs",
                 note="outcome per input, CPython vs MicroPython (see test_fuzz.py)")


ATHERIS_CHILD = os.path.abspath(__file__)


def atheris_available():
    try:
        import atheris  # noqa: F401
        return True
    except ImportError:
        return False


def run_atheris(kind, seconds, scratch, tally):
    """Coverage-guided: libFuzzer's loop over target `kind` ("wire" or "record") in a child
    process for `seconds`, from a seed corpus of valid lines. Failures are written by the
    child, one a line; execs come from libFuzzer's final stats."""
    corpus_dir = os.path.join(scratch, "atheris_" + kind)
    os.makedirs(corpus_dir, exist_ok=True)
    rng = random.Random(3)
    seeds = ([b"\x00" + l for l in POOL[0]] + [b"\x01" + l for l in POOL[1]] if kind == "wire"
             else [gen_record(rng, i) for i in range(64)])
    for i, s in enumerate(seeds):
        with open(os.path.join(corpus_dir, "seed%03d" % i), "wb") as f:
            f.write(s)
    fails = os.path.join(scratch, "atheris_%s_failures.txt" % kind)
    open(fails, "w").close()
    r = subprocess.run([sys.executable, ATHERIS_CHILD, "--atheris", kind, fails, corpus_dir,
                        "-max_total_time=%d" % max(1, int(seconds)), "-print_final_stats=1",
                        "-max_len=4096", "-timeout=20", "-rss_limit_mb=2048"],
                       capture_output=True, text=True, cwd=ROOT, timeout=seconds + 120)
    execs = 0
    for line in r.stderr.splitlines():
        if line.startswith("stat::number_of_executed_units:"):
            execs = int(line.split(":")[-1])
    tally.count("atheris_" + kind, execs)
    with open(fails) as f:
        for line in f:
            tally.fail("atheris_" + kind, line.strip())
    if execs == 0:                      # the child itself died: that is a crash too
        tally.fail("atheris_" + kind, "crash: fuzzer exited %d: %s" % (r.returncode, r.stderr[-500:]))


def _atheris_child(kind, fails_path, argv):
    import atheris
    with atheris.instrument_imports():
        from duelclock.core import jsonio, record, replay, sign  # noqa: F401
        from duelclock.core import wire as _w  # noqa: F401
    tgts = [upy_fuzz.targets()]

    def one(data):
        if kind == "wire":
            if not data:
                return
            which, data = "td"[data[0] & 1], data[1:]
        else:
            which = "p"
        _, fail = run_one(tgts[0], which, data)
        if fail:
            with open(fails_path, "a") as f:
                f.write("%s %s\n" % (fail.replace("\n", " ")[:300], binascii.hexlify(data[:200]).decode()))
            tgts[0] = upy_fuzz.targets()

    atheris.Setup([sys.argv[0]] + argv, one)
    atheris.Fuzz()


# --- soak and bench ---------------------------------------------------------------------------

SHARES = (("wire", 0.3), ("record", 0.3), ("keys", 0.15), ("ui", 0.25))


def _metrics(tally, seconds):
    total = sum(tally.execs.values())
    yield metric("fuzz_crashes", tally.crashes, "crashes", 0, exact=True,
                 note="; ".join(tally.failures[:3]) or None)
    yield metric("fuzz_state_corruptions", tally.corruptions, "corruptions", 0, exact=True)
    yield metric("fuzz_execs", total, "inputs", note="in %.0f s: %s" % (seconds, ", ".join(
        "%s %d" % kv for kv in sorted(tally.execs.items()))))
    for target, n in sorted(tally.execs.items()):
        yield metric("fuzz_execs_" + target, n, "inputs")


def soak(minutes, scratch_dir):
    """Each target for its share of `minutes`, then the MicroPython corpus."""
    os.makedirs(scratch_dir, exist_ok=True)
    tally = Tally()
    t0 = time.monotonic()
    budget_s = minutes * 60.0
    fuzzer = atheris_available()
    for target, share in SHARES:
        s = budget_s * share
        if target in ("wire", "record") and fuzzer:
            run_atheris(target, s, scratch_dir, tally)
        elif target == "wire":
            random_loop("t", s / 2, 1, tally)
            random_loop("d", s / 2, 2, tally)
        elif target == "record":
            random_loop("p", s, 3, tally)
        else:
            random_loop(target, s, 4, tally)
    yield from _metrics(tally, time.monotonic() - t0)
    yield from upy_metrics(scratch_dir)


def bench(scratch_dir):
    """A fixed-size run: 3,000 inputs for each decoder and the parser, 100 key and 60 UI
    sessions, and the MicroPython corpus."""
    os.makedirs(scratch_dir, exist_ok=True)
    tally = Tally()
    t0 = time.monotonic()
    for kind, n, seed in (("t", 3000, 11), ("d", 3000, 12), ("p", 3000, 13), ("keys", 100, 14),
                          ("ui", 60, 15)):
        random_loop(kind, 1e9, seed, tally, max_execs=n)
    yield from _metrics(tally, time.monotonic() - t0)
    yield from upy_metrics(scratch_dir)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--atheris"]:
        _atheris_child(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            for m in soak(float(sys.argv[1]) if len(sys.argv) > 1 else 60.0, d):
                print(json.dumps(m), flush=True)
