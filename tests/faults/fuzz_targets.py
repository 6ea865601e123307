"""The key handler's and the UI's fuzz targets (the decoder and parser targets are in
upy_fuzz.py, which also runs under MicroPython):

  KeysTarget  random raw key levels at random scan times into Keys, for each board's KEYMAP:
              only the keymap's intents; no more shorts/longs than debounced presses; a hold
              only after long_ms down; after any input, a clean press gives exactly its short.
  UiTarget    random intents at random (even backward) times into Ui, with desk pause,
              resume and extend, and journal writes that fail: after each step LP >= 0, wins
              count the duels, each event was recorded on a key that confirms it (both
              players' keys where both must agree), and the journal replays (core.replay) to
              the state the table shows.
A broken invariant raises upy_fuzz.Corrupt; anything else raised is a crash."""
import ast
import glob
import os

from duelclock.core.jsonio import dumps_event
from duelclock.core.keys import TAKEBACK, EdgeRing, Keys
from duelclock.core.replay import Replay
from duelclock.core.sign import pin_hash
from duelclock.core.ui import Ui
from tests.faults.upy_fuzz import Corrupt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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
        press = rng.choice((0, 5, 20))
        held = []
        now = [0]
        ring = EdgeRing(lambda: now[0], lambda a, b: a - b)
        keys = Keys(keymap, ring, long_ms=long_ms, repeat_ms=rng.choice((30, 150)),
                    debounce_ms=debounce, press_ms=press)

        def scan(t):
            """The levels in `held` read at t (by the interrupt), then the scan at t."""
            now[0] = t
            mask = 0
            for i in range(keys.n_phys):
                if keys.names[i] in held:
                    mask |= 1 << i
            ring.sample(t, mask)
            return keys.scan(t)
        owner = {}                                   # intent -> the keymap entry giving it
        for k, acts in keymap.items():
            for a in acts:
                if a is not None:
                    owner[a] = k if a not in owner else None
        # The reference debouncer: a press counts once down for press ms, a release once up
        # for debounce ms. A takeback (core/keys.py TAKEBACK: a step undone when its key's
        # chord follows) is its partner key's intent, given while that partner is pressed.
        raw = dict.fromkeys(phys, False)
        raw_ms = dict.fromkeys(phys, 0)
        level = dict.fromkeys(phys, False)
        down_since = {}
        presses = dict.fromkeys(keymap, 0)
        fired = dict.fromkeys(keymap, 0)
        takebacks = {}                      # intent -> takebacks the chords so far may give
        t = 0
        for _ in range(rng.randint(1, 300)):
            t += rng.choice((0, 1, 3, 10, 15, 20, 40, 200, long_ms, 3 * long_ms))
            held[:] = [k for k in phys if rng.random() < 0.3] + (["??"] if rng.random() < 0.05 else [])
            long_ok = set()
            # Time passes to t with the old readings (the ring's edge comes at t), then the
            # new reading; a chord is pressed in either step (a press that counts as time
            # passes may be let go by the new reading).
            for reading in (dict(raw), dict((k, k in held) for k in phys)):
                new_down = []
                for k in phys:
                    r = reading[k]
                    if r != raw[k]:
                        raw[k], raw_ms[k] = r, t
                    if r != level[k] and t - raw_ms[k] >= (press if r else debounce):
                        level[k] = r
                        if r:
                            presses[k] += 1
                            down_since[k] = raw_ms[k]
                            new_down.append(k)
                for c in keymap:                     # held long enough for a hold at t
                    if all(level[p] and t - down_since[p] >= long_ms for p in c.split("+")):
                        long_ok.add(c)
                for c in keymap:
                    if "+" in c and all(level[p] for p in c.split("+")) and \
                            any(p in new_down for p in c.split("+")):
                        presses[c] += 1
                        for p in c.split("+"):          # a part that stepped at its press
                            short, long_, hold = keymap[p]
                            if short in TAKEBACK and long_ is None and hold is not None:
                                tb = TAKEBACK[short]
                                takebacks[tb] = takebacks.get(tb, 0) + 1
            out = list(scan(t))
            for intent in out:
                if intent not in owner:
                    raise Corrupt("%s: intent %r is not in the keymap" % (name, intent))
                k = owner[intent]
                if k is None:
                    continue
                short, long_, hold = keymap[k]
                if intent == hold and intent != long_:
                    if k not in long_ok:
                        raise Corrupt("%s: hold %r before %d ms down" % (name, intent, long_ms))
                else:
                    fired[k] += 1
                    if fired[k] > presses[k]:
                        if not takebacks.get(intent):
                            raise Corrupt("%s: %r without a press of %s" % (name, intent, k))
                        takebacks[intent] -= 1
                        fired[k] -= 1
        # After anything: everything released, then one clean press gives exactly its short.
        held[:] = []
        for _ in range(3):
            t += debounce + long_ms
            scan(t)
        k = rng.choice([p for p in phys if keymap[p][0] is not None])
        held[:] = [k]
        got = []
        p = max(press, debounce)
        for step in (0, p, p + 5):
            got += scan(t + step)
        held[:] = []
        for step in (p + 10, p + debounce + 20):
            got += scan(t + step)
        if got != [keymap[k][0]]:
            raise Corrupt("%s: a clean press of %s gave %r" % (name, k, got))
        return name


# --- the UI ---------------------------------------------------------------------------------

INTENTS = ("a", "b", "ok", "back", "menu", "turn", "undo", "sign", "up", "down", "up_fast",
           "down_fast", "0", "1", "2", "3", "5", "9", "00", "000")
WEIGHTED = ("a", "b", "a", "b", "ok", "ok", "menu", "back", "1", "2", "down") + INTENTS
# The keys that may record each event (the key that completes it): a player's own key or ok
# confirms, a menu is picked with a/ok or a digit (an A/B pick with menu too, on boards
# without ok), turn and undo are their own keys, and a judge's event is shown whole and
# recorded only by ok (menu on boards without it).
CONFIRMS = {"lp": ("ok", "a", "b"), "turn_end": ("turn",), "undo": ("undo",),
            "duel_start": ("a", "b", "ok", "menu") + tuple("123456789"), "seated": ("a", "b"),
            "duel_end": ("a", "b"), "surrender": ("a", "b"),
            "penalty": ("ok", "menu"), "judge_fix": ("ok", "menu"),
            "judge_void": ("ok", "menu"), "extend": ("ok", "menu")}   # a judge's: shown, then OK
# What players do (check in, start, damage, turns, duel over, a judge's penalty), so that
# sessions get deep into a match between the random keys.
MACROS = (("a", "a"), ("b", "b"), ("a", "1", "000", "ok"), ("b", "5", "00", "b"), ("a", "8", "000", "ok"),
          ("turn",), ("menu", "down", "a", "a", "a", "b"), ("menu", "down", "a", "b", "b", "a"),
          ("menu", "3", "2", "2", "2", "2", "ok", "a", "b", "a", "a", "ok"), ("undo",))
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

        ui = Ui(1, save, pins={"floor": pin_hash("1111", b"salt", 2),
                               "head": pin_hash("2222", b"salt", 2)})
        start = {"t": 0, "ev": "round_start", "round": 1, "kind": rng.choice(("swiss", "elimination")),
                 "seating": rng.random() < 0.5, "limit_s": rng.choice((60, 600, 2700)),
                 "cap_s": rng.choice((0, 30, 1800)), "extra_turns": rng.choice((0, 1, 3)),
                 "rules": rng.choice(("ID", "KR"))}
        st["key"] = "desk"
        start["judge_extend"] = rng.random() < 0.5
        ui.start_round(start)
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
                ui.organiser({"t": t, "ev": "pause" if ui.match.paused_at is None else "resume"})
            elif what < 0.95:
                st["key"] = "desk"
                ui.organiser({"t": t, "ev": "extend", "ms": rng.choice((1000, 60000, 3600000))})
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
