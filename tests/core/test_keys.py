# Raw key levels to intents (core/keys.py): debounce, short/long/hold, chords, rollover,
# matrix and button reads, the interrupt's EdgeRing. Plain test_* functions, bare asserts
# (pytest and micropython).
from duelclock.core.keys import EdgeRing, Keys, buttons_mask, matrix_mask

try:
    from micropython import heap_lock, heap_unlock
except ImportError:
    heap_lock = None

PICO = {"A": ("a", "menu", None), "B": ("b", "turn", None),
        "X": ("up", None, "up_fast"), "Y": ("down", None, "down_fast"),
        "X+Y": ("back", "undo", None)}


class Polled:
    """Keys whose levels, the names `held()` returns, are sampled into the ring at each
    scan, at the scan's time: the interrupt and the loop at once."""

    def __init__(self, held, keymap, **kw):
        self.held = held
        self.now = 0
        self.ring = EdgeRing(lambda: self.now, lambda a, b: a - b)
        self.keys = Keys(keymap, self.ring, **kw)

    def scan(self, t):
        self.now = t
        down = self.held()
        mask = 0
        for i in range(self.keys.n_phys):
            if self.keys.names[i] in down:
                mask |= 1 << i
        self.ring.sample(t, mask)
        return self.keys.scan(t)


class Rig:
    """Holds a set of keys for a while, scanning every step_ms; logs (t, intent)."""

    def __init__(self, keymap, step_ms=10, **kw):
        self.held = ()
        self.keys = Polled(lambda: self.held, keymap, **kw)
        self.t = 0
        self.step = step_ms
        self.log = []

    def run(self, held, ms):
        self.held = held
        end = self.t + ms
        while self.t < end:
            for intent in self.keys.scan(self.t):
                self.log.append((self.t, intent))
            self.t += self.step
        return self

    def intents(self):
        return [i for _, i in self.log]


def test_bounces_shorter_than_debounce_make_nothing():
    r = Rig({"1": ("1", None, None)}, step_ms=1)
    for _ in range(4):
        r.run(("1",), 4).run((), 3)
    assert r.intents() == []
    r.run(("1",), 40)
    assert r.log == [(28 + 5, "1")]         # fires on press, press_ms after the last bounce
    for _ in range(4):                       # bouncing on release: still one press
        r.run((), 3).run(("1",), 3)
    r.run((), 50)
    assert r.intents() == ["1"]


def test_short_on_release_before_long_ms():
    r = Rig(PICO).run(("A",), 300)
    assert r.intents() == []                 # could still become a long press
    r.run((), 100)
    assert r.log == [(320, "a")]


def test_long_fires_once_at_long_ms_then_nothing_on_release():
    r = Rig(PICO).run(("B",), 2000).run((), 100)
    assert r.log == [(700, "turn")]


def test_hold_repeats_every_repeat_ms_after_long_ms():
    # X acts at the first scan press_ms after its press (X+Y would take it back)
    r = Rig(PICO).run(("X",), 1250).run((), 100)   # the release counts 20 ms later
    assert r.log == [(10, "up"), (700, "up_fast"), (850, "up_fast"), (1000, "up_fast"),
                     (1150, "up_fast")]
    r.log = []
    r.run(("X",), 150)
    assert r.intents() == ["up"]             # a tap is one step, before its release
    r.run((), 100)
    assert r.intents() == ["up"]


def test_a_key_whose_hold_is_its_faster_press_acts_on_the_press():
    # At once, as its press is accepted; held, its hold repeats from long_ms.
    r = Rig({"X": ("up", None, "up_fast"), "A": ("a", "menu", None)}).run(("X",), 60)
    assert r.log == [(10, "up")]             # the press, not the release
    r.run(("X",), 800).run((), 100)
    assert [i for t, i in r.log] == ["up", "up_fast", "up_fast"] and r.log[1][0] == 700
    r = Rig({"X": ("up", None, "up_fast"), "A": ("a", "menu", None)}).run(("A",), 300)
    assert r.intents() == []                 # A's hold is the menu: it still waits
    # in a chord, its short taken back if the chord comes (TAKEBACK): at once too
    r = Rig(PICO).run(("X",), 40).run((), 100)
    assert r.log == [(10, "up")]
    # in a chord with a short nothing takes back: it waits chord_ms for the partner, or
    # acts at its release if that comes first
    keymap = {"X": ("a", None, "up"), "Y": ("b", None, None), "X+Y": ("back", None, None)}
    r = Rig(keymap).run(("X",), 40).run((), 100)
    assert r.log == [(60, "a")]
    r = Rig(keymap).run(("X",), 100).run((), 100)
    assert r.log == [(60, "a")]              # press_ms + chord_ms: no chord came
    r = Rig(keymap).run(("X",), 30).run(("X", "Y"), 100).run((), 100)
    assert r.intents() == ["back"]


def test_waiting_names_a_press_its_release_or_hold_will_decide():
    # A (menu on hold) shows from its accepted press until its release or its long;
    # X acts on its press and never waits; a chord with a long waits as one.
    r = Rig(PICO)
    r.run(("A",), 20)
    assert r.keys.keys.waiting == ("A", "menu") and r.intents() == []
    r.run(("A",), 300)
    assert r.keys.keys.waiting == ("A", "menu")
    r.run((), 40)
    assert r.keys.keys.waiting is None and r.intents() == ["a"]
    r.run(("B",), 400)
    assert r.keys.keys.waiting == ("B", "turn")
    r.run(("B",), 400)
    assert r.keys.keys.waiting is None and r.intents() == ["a", "turn"]   # the hold took over
    r.run((), 40).run(("X",), 100)
    assert r.keys.keys.waiting is None
    r.run((), 40).run(("X", "Y"), 100)
    assert r.keys.keys.waiting == ("X+Y", "undo")
    r.run((), 40)
    assert r.keys.keys.waiting is None and r.intents()[-1] == "back"
    # rolled over: the pending A gives its short at B's press, and B waits in its place
    r.run(("A",), 50).run(("A", "B"), 50)
    assert r.keys.keys.waiting == ("B", "turn") and r.intents()[-1] == "a"
    r.run((), 40)
    # disarmed (held at power-on): nothing waits until every key is up
    r = Rig(PICO)
    r.keys.keys.disarm()
    r.run(("A",), 100)
    assert r.keys.keys.waiting is None


def test_long_then_hold_on_one_key():
    r = Rig({"K": ("s", "l", "h")}, long_ms=500, repeat_ms=100).run(("K",), 760).run((), 50)
    assert r.log == [(500, "l"), (600, "h"), (700, "h")]


def test_repeats_missed_between_slow_scans_are_dropped_not_bunched():
    r = Rig(PICO, step_ms=400).run(("Y",), 2400)
    assert r.log == [(400, "down"), (800, "down_fast"), (1200, "down_fast"), (1600, "down_fast"),
                     (2000, "down_fast")]


def test_two_keys_pressed_together_give_both():
    r = Rig(PICO).run(("A", "B"), 100).run((), 100)
    assert sorted(r.intents()) == ["a", "b"]
    r = Rig(PICO).run(("A",), 900).run(("A", "B"), 100).run(("A",), 100).run((), 100)
    assert r.intents() == ["menu", "b"]      # A already long-pressed: B is on its own


def test_rollover_keeps_typing_order():
    keymap = {"5": ("5", None, None), "*": ("00", "000", None)}
    r = Rig(keymap).run(("*",), 50).run(("*", "5"), 50).run(("5",), 50).run((), 50)
    assert r.intents() == ["00", "5"]       # * waited for its release, 5 fired on press
    r = Rig(PICO).run(("X",), 60).run(("X", "A"), 60).run(("A",), 900).run((), 50)
    assert r.intents() == ["up", "menu"]     # the pending X is cut short, A goes on


def test_chord_short_and_long():
    r = Rig(PICO).run(("X",), 40).run(("X", "Y"), 200).run((), 50)
    assert r.intents() == ["up", "down", "back"]     # X acted, the chord took it back
    r = Rig(PICO).run(("X", "Y"), 200).run((), 50)
    assert r.intents() == ["back"]                  # both in one scan: the chord alone
    r = Rig(PICO).run(("Y", "X"), 1000).run(("X",), 1000).run((), 50)
    assert r.log == [(700, "undo")]          # X held on after the chord: spent


def test_a_chord_is_held_from_its_last_key_down():
    # Found by the soak's fuzzer: when both keys' presses were accepted in one scan, the
    # chord's long timer ran from the first key's, so a hold came before both keys had
    # been down long_ms.
    chords = {"X": ("up", None, None), "Y": ("down", None, None), "X+Y": ("both", None, "hold")}
    held = []
    keys = Polled(lambda: held, chords, long_ms=100, debounce_ms=50)
    held[:] = ["X"]
    assert list(keys.scan(0)) == []
    held[:] = ["X", "Y"]                                 # Y down 3 ms after X
    assert list(keys.scan(3)) == []
    assert list(keys.scan(60)) == []                     # both accepted here: the chord
    assert list(keys.scan(100)) == []                    # 97 ms since Y went down
    assert list(keys.scan(103)) == ["hold"]


def test_chord_needs_its_parts_fresh():
    r = Rig(PICO).run(("X",), 710).run(("X", "Y"), 100).run(("X",), 50).run((), 50)
    assert r.log == [(10, "up"), (700, "up_fast"), (720, "down"), (850, "up_fast")]
    r = Rig(PICO).run(("X", "Y"), 100).run(("X",), 50).run(("X", "Y"), 100).run((), 50)
    assert r.intents() == ["back", "down"]   # Y again, X spent: no second chord


def test_a_chord_part_that_is_not_in_the_keymap_is_refused():
    try:
        Keys({"X": ("up", None, None), "X+Z": ("back", None, None)}, None)
    except ValueError as e:
        assert "Z" in str(e)
    else:
        assert False, "chord of an unknown key accepted"


def test_keys_outside_the_keymap_are_ignored():
    r = Rig(PICO).run(("Q", "A"), 100).run(("Q",), 100)
    assert r.intents() == ["a"]


class Matrix:
    """A key matrix: rows are driven, columns read low where a held key meets a low row."""

    def __init__(self, n_rows, n_cols):
        self.held = []                       # (row, col)
        self.rows = [Row() for _ in range(n_rows)]
        self.cols = [Col(self, c) for c in range(n_cols)]


class Row:
    def __init__(self):
        self.level = 1

    def value(self, v):
        self.level = v


class Col:
    def __init__(self, m, c):
        self.m = m
        self.c = c

    def value(self):
        for r, c in self.m.held:
            if c == self.c and self.m.rows[r].level == 0:
                return 0
        return 1


LAYOUT = (("1", "2", "3", "A"), ("4", "5", "6", "B"), ("7", "8", "9", "C"), ("*", "0", "#", "D"))


BITS = tuple(tuple(1 << (4 * r + c) for c in range(4)) for r in range(4))


def test_matrix_mask_reads_each_key_and_leaves_rows_high():
    m = Matrix(4, 4)
    assert matrix_mask(m.rows, m.cols, BITS) == 0
    m.held = [(1, 1)]
    assert matrix_mask(m.rows, m.cols, BITS) == 1 << 5
    m.held = [(0, 3), (3, 0), (3, 3)]
    assert matrix_mask(m.rows, m.cols, BITS) == 1 << 3 | 1 << 12 | 1 << 15
    assert [r.level for r in m.rows] == [1, 1, 1, 1]


def test_matrix_through_keys():
    m = Matrix(4, 4)
    now = [0]
    ring = EdgeRing(lambda: now[0], lambda a, b: a - b)
    keys = Keys({"1": ("1", None, None), "2": ("2", None, None), "#": ("ok", "sign", None)}, ring)
    bits = tuple(tuple(1 << keys.names.index(k) if k in keys.names else 0 for k in row) for row in LAYOUT)
    got = []
    for t, held in ((0, [(0, 0)]), (30, []), (60, [(0, 1)]), (90, []), (120, [(3, 2)]),
                    (150, [(3, 2)]), (200, [])):
        m.held = held
        for dt in (0, 25):
            now[0] = t + dt
            ring.sample(t + dt, matrix_mask(m.rows, m.cols, bits))
            got.extend(keys.scan(t + dt))
    assert got == ["1", "2", "ok"]


# --- keys sampled by an interrupt into an EdgeRing ----------------------------------------

PERIOD = 1 << 30                # ticks_ms wraps here on every MicroPython port


def _ticks_diff(a, b):
    return ((a - b + PERIOD // 2) & (PERIOD - 1)) - PERIOD // 2


class Timed:
    """A board whose timer interrupt samples `held` every tick_ms into an EdgeRing, its
    ticks_ms starting at `ticks0` (and wrapping), while the loop scans only every scan_ms."""

    def __init__(self, keymap, ticks0=0, tick_ms=5, scan_ms=200, size=32):
        self.now = 0
        self.ticks0 = ticks0
        self.held = 0
        self.ring = EdgeRing(self.ticks, _ticks_diff, size)
        self.keys = Keys(keymap, self.ring)
        self.tick_ms = tick_ms
        self.scan_ms = scan_ms
        self.log = []

    def ticks(self):
        return (self.ticks0 + self.now) & (PERIOD - 1)

    def bit(self, name):
        return 1 << self.keys.names.index(name)

    def run(self, held, ms):
        """Hold the keys named in `held` for ms."""
        mask = 0
        for name in held:
            mask |= self.bit(name)
        end = self.now + ms
        while self.now < end:
            self.now += 1
            if self.now % self.tick_ms == 0:
                self.ring.sample(self.ticks(), mask)
            if self.now % self.scan_ms == 0:
                for intent in self.keys.scan(self.now):
                    self.log.append((self.now, intent))
        return self


def test_a_late_loop_loses_no_press_sampled_by_the_interrupt():
    # 10 presses of 60 ms, 60 ms apart, and the loop scans only every 200 ms (a frame, a
    # flash write): every press counts, in order, at the scan after it.
    timed = Timed(PICO, scan_ms=200)
    for _ in range(10):
        timed.run(("X",), 60).run((), 60)
    timed.run((), 400)
    assert [i for _, i in timed.log] == ["up"] * 10
    assert timed.ring.lost == 0


def test_ring_edges_keep_their_times_across_the_ticks_wrap():
    # ticks_ms wraps 300 ms in; A held 800 ms (long: menu), B tapped: the order and the
    # long press come out right although both are read in one late scan.
    r = Timed(PICO, ticks0=PERIOD - 300, scan_ms=2000)
    r.run((), 100).run(("A",), 800).run((), 100).run(("B",), 80).run((), 1000)
    assert r.log == [(2000, "menu"), (2000, "b")]


def test_ring_bounces_and_chords_from_timestamps():
    r = Timed(PICO, tick_ms=1, scan_ms=500)
    for _ in range(3):                              # bounces of 3 ms: nothing
        r.run(("A",), 3).run((), 3)
    r.run((), 100)
    r.run(("X",), 5).run(("X", "Y"), 300).run((), 200)      # X then Y within 5 ms: a chord
    assert [i for _, i in r.log] == ["up", "down", "back"]  # X's press, taken back


def test_a_full_ring_drops_the_newest_edges_and_counts_them():
    r = Timed({"1": ("1", None, None)}, tick_ms=1, scan_ms=10000, size=4)
    for _ in range(4):
        r.run(("1",), 30).run((), 30)
    assert r.ring.lost == 5                         # 8 edges, 3 slots
    r.run((), 10000)
    assert [i for _, i in r.log] == ["1", "1"]


def test_buttons_mask_reads_each_button_in_order():
    pins = {"a": 0, "b": 1, "c": 1}
    buttons = ((lambda: pins["a"], 0), (lambda: pins["b"], 0), (lambda: pins["c"], 1))
    assert buttons_mask(buttons) == 0b101
    pins["a"] = 1
    assert buttons_mask(buttons) == 0b100


if heap_lock is not None:
    def test_the_interrupts_sampling_allocates_nothing():
        ring = EdgeRing(lambda: 0, _ticks_diff, 8)
        pins = [1, 1]
        buttons = ((lambda: pins[0], 0), (lambda: pins[1], 0))
        heap_lock()
        try:
            for t in range(0, 400, 5):
                pins[0] = 0 if t % 120 < 60 else 1
                ring.sample(t, buttons_mask(buttons))
        finally:
            heap_unlock()
        assert ring.head == 7 and ring.lost == 0      # 7 edges stored, none lost

    def test_scan_allocates_nothing():
        m = Matrix(4, 4)
        now = [0]
        ring = EdgeRing(lambda: now[0], lambda a, b: a - b)
        keys = Keys({"5": ("5", None, None), "A": ("a", None, "up"), "B": ("b", None, None),
                     "A+B": ("back", None, None)}, ring)
        bits = tuple(tuple(1 << keys.names.index(k) if k in keys.names else 0 for k in row)
                     for row in LAYOUT)
        rows, cols = m.rows, m.cols
        script = ([(1, 1)], [(1, 1), (0, 3)], [(0, 3)], [(0, 3), (1, 3)], [],
                  [(0, 3), (1, 3)], [])
        got = []
        t = 0
        for held in script:                 # 600 ms each
            m.held = held
            for _ in range(60):
                now[0] = t
                heap_lock()
                try:
                    ring.sample(t, matrix_mask(rows, cols, bits))
                    intents = keys.scan(t)
                finally:
                    heap_unlock()
                got.extend(intents)
                t += 10
        assert got == ["5", "a"] + ["up"] * 8 + ["b", "back"], got   # A acts on its press


def test_disarmed_keys_give_nothing_until_every_key_is_up():
    # A+B held through power-on well past long_ms (the maintenance keys; the app disarms):
    # no menu, no turn; B let go first and A kept, then X pressed meanwhile: still nothing.
    # Once all are up, presses count.
    r = Rig(PICO)
    r.keys.keys.disarm()
    r.run(("A", "B"), 1500).run(("A",), 300).run(("A", "X"), 200).run((), 100)
    assert r.intents() == [] and r.keys.keys.armed
    r.run(("A",), 100).run((), 100).run(("X",), 50).run((), 50)
    assert r.intents() == ["a", "up"]


def test_disarmed_with_no_key_down_is_armed_at_the_next_scan():
    r = Rig(PICO)
    r.keys.keys.disarm()
    assert r.run((), 10).run(("B",), 100).run((), 50).intents() == ["b"]
