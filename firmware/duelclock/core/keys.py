# Physical keys in, UI intents out. Pure: the caller passes now_ms, a millisecond count that
# only grows (the app's own clock, not a raw ticks_ms that wraps after 2**30 ms).
#
# A board gives its KEYMAP: name -> (short, long or None, hold or None), and an EdgeRing
# that its key reading fills. A name "X+Y" is a chord: X and Y held together. A key is down
# once its press has read down for press_ms (5: a spark or a bounce shorter is nothing, and
# it is less than a scan period, so a press waits for no more than the next scan) and up
# once its release has read up for debounce_ms (a bounce on the release is no second
# press). Times count from the first reading of the new level. Each key (and each chord)
# then runs this machine:
#
#   UP --press--> PENDING --release--> short ------------------------------------> UP
#                    |--held long_ms--> long (or the first hold) --> HELD --release--> UP
#                    |--another key pressed--> short now (rollover) --> SPENT --release--> UP
#                    +--completes a chord with keys all PENDING--> SPENT (the chord runs)
#   HELD --every repeat_ms--> hold (repeats missed while nobody scanned are dropped)
#
# While a key with a long is PENDING, `waiting` names it and its long: the screen shows the
# press at once, and what holding it will do, before the release or the hold decides.
#
# A key with neither long nor hold that is in no chord skips PENDING: short on press. A key
# (not a chord) whose hold is a faster form of its press (a hold, no long: X up / up_fast)
# acts on the press too, and repeats its hold from long_ms on while held:
#
#   UP --press--> short --> HELD (hold from long_ms) --release--> UP
#
# Such a key in a chord acts on its press all the same when its short can be taken back
# (TAKEBACK): if the chord's other keys land within chord_ms, the takeback comes out, then
# the chord runs. One whose short cannot be taken back waits: PENDING until chord_ms passed
# with no chord made, or its release, whichever comes first, then short --> HELD.
#
# The rollover rule keeps typing order when a finger lands before the previous one lifts. A
# chord releases when any of its parts does; the parts stay SPENT until they are released.
# After disarm() (the app's, when keys are held at power-on: the maintenance keys) no key
# gives anything until a scan ends with every key up (`armed` again): a held key's long
# press is no intent for the screen it opens on, nor is a key pressed while one is held.
#
# Sampled on time (design decision 9): the key levels are read by a timer interrupt every
# few ms whatever the loop is doing (EdgeRing.sample: a change of the bit mask is stored
# with its ticks_ms, allocation-free; buttons_mask and matrix_mask read the pins), or come
# timestamped from CircuitPython's keypad, and scan() replays the stored edges at their own
# times before the present: a 60 ms press that came and went while a frame was drawn is
# debounced and counted as if it had been polled.
#
# scan() is called every 10-20 ms on a board and allocates nothing while at most 4 intents
# come out of one scan (measured under micropython.heap_lock in tests/core/test_keys.py):
# per-key state lives in preallocated lists, and the returned list is reused, so the caller
# consumes it before the next scan. Lists are emptied by pop(): clear() and del l[:]
# allocate (a slice, a shrink), pop() does not while the list is at its minimum size.
# Measured on the unix port (x86-64): an idle scan takes 6 us with the ESP32 keypad's 16 keys,
# 2 us with the Pico's 4 keys and a chord (not measured on a board yet).

# The intent vocabulary of core/ui.py (its header lists the same names).
INTENTS = ("a", "b", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "00", "000", "sign",
           "ok", "back", "undo", "turn", "menu", "up", "down", "up_fast", "down_fast")

# A press-acting key's short -> the intent that undoes it: the UI's steps and cursors go
# both ways (core/screens.py STEPS, menus, the PIN digit). Where a step was clamped (an
# amount at 0 stepped down) the takeback leaves it one step up: the chord (back) clears it.
TAKEBACK = {"up": "down", "down": "up"}

UP = 0
PENDING = 1     # down; short, long or a chord still possible
HELD = 2        # long or hold fired: only hold repeats follow
SPENT = 3       # taken by a chord or by rollover: nothing more until released


class EdgeRing:
    """Key edges stamped by an interrupt. sample(ticks, mask) is the interrupt's body: the
    held keys as a bit mask (bit i: Keys.names[i]) and the ticks_ms it was read at; a
    change is stored in `size` - 1 slots; when they are full, changes are counted in `lost`
    and the level they end at is stored once there is room. Ints
    into preallocated lists: no allocation, so it may run as a hard interrupt. `ticks`
    and `diff` are the board's time.ticks_ms and time.ticks_diff."""

    def __init__(self, ticks, diff, size=32):
        self.ticks = ticks
        self.diff = diff
        self.size = size
        self.t = [0] * size         # small ints into list slots: no allocation
        self.m = [0] * size
        self.head = 0               # next slot to write (the interrupt's)
        self.tail = 0               # next slot to read (scan's)
        self.mask = 0               # the newest mask stored
        self.seen = 0               # the newest mask read
        self.lost = 0               # edges not stored: the ring was full

    def sample(self, ticks, mask):
        if mask == self.mask and mask == self.seen:
            return
        edge = mask != self.seen
        self.seen = mask
        nxt = (self.head + 1) % self.size
        if nxt == self.tail:            # full: the level is stored once there is room
            if edge:
                self.lost += 1
            return
        if mask != self.mask:
            self.t[self.head] = ticks
            self.m[self.head] = mask
            self.mask = mask
            self.head = nxt


class Keys:
    def __init__(self, keymap, ring, long_ms=700, repeat_ms=150, debounce_ms=20, chord_ms=50,
                 press_ms=5):
        self.ring = ring
        self.long_ms = long_ms
        self.repeat_ms = repeat_ms
        self.debounce_ms = debounce_ms
        self.press_ms = press_ms
        self.chord_ms = chord_ms
        names = sorted(keymap)          # a fixed order: MicroPython dicts keep none
        phys = [n for n in names if "+" not in n]
        chords = [n for n in names if "+" in n]
        self.names = phys + chords
        self.n_phys = n_phys = len(phys)
        total = len(self.names)
        self.short = []
        self.long = []
        self.hold = []
        for name in self.names:
            short, long, hold = keymap[name]
            self.short.append(short)
            self.long.append(long)
            self.hold.append(hold)
        self.parts = [()] * total       # chord -> indices of its keys
        chords_of = [[] for _ in range(n_phys)]
        for c in range(n_phys, total):
            parts = []
            for p in self.names[c].split("+"):
                if p not in phys:
                    raise ValueError("chord %s: no key %s in the keymap" % (self.names[c], p))
                parts.append(phys.index(p))
                chords_of[phys.index(p)].append(c)
            self.parts[c] = tuple(parts)
        self.chords_of = [tuple(c) for c in chords_of]
        self.immediate = [i < n_phys and not chords_of[i] and self.long[i] is None
                          and self.hold[i] is None for i in range(total)]
        # acts on the press, then repeats its hold: the chord_ms a partner may take first
        # (-1: not such a key; 0: at once, taken back if a chord follows)
        self.press_wait = [-1 if i >= n_phys or self.long[i] is not None or self.hold[i] is None
                           else (chord_ms if chords_of[i] and self.short[i] not in TAKEBACK
                                 else 0) for i in range(total)]
        self.level = [False] * n_phys   # debounced level
        self.raw = [False] * n_phys     # last reading
        self.raw_ms = [0] * n_phys      # when the reading last changed
        self.raw_mask = 0               # the last reading, bit i: key i
        self.edge = [0] * n_phys        # this scan: 1 pressed, -1 released
        self.state = [UP] * total
        self.t0 = [0] * total           # press (or chord) time
        self.next_ms = [0] * total      # next hold repeat
        self.scan_no = 0
        self.born = [0] * total         # scan_no of the press: same-scan presses are one chord
        self.armed = True               # False from disarm() until a scan ends with all keys up
        self.out = []
        # The press that waits on its release or its hold, for the screen to show at once:
        # (name, long intent) of the key or chord PENDING with a long, else None. One tuple
        # per key, made here: waiting changes without allocating.
        self.waiting = None
        self.waiting_k = -1
        self.wait_info = [None if self.long[i] is None else (self.names[i], self.long[i])
                          for i in range(total)]

    def disarm(self):
        """Give no intent until a scan ends with every key up (keys held at power-on)."""
        self.armed = False

    def pressed(self):
        """The names of the physical keys held at the ring's newest sample (the maintenance
        keys at power-on: the board's interrupt samples from its import on)."""
        m = self.ring.seen
        return [self.names[i] for i in range(self.n_phys) if m >> i & 1]

    def scan(self, now_ms):
        """The intents since the last scan, in order (a reused list: read it before the
        next scan)."""
        out = self.out
        _empty(out)
        self.scan_no += 1
        ring = self.ring
        now_ticks = ring.ticks()
        while ring.tail != ring.head:
            i = ring.tail
            t = now_ms - ring.diff(now_ticks, ring.t[i])
            self._step(t, self.raw_mask)          # time passes with the old levels
            self._step(t, ring.m[i])              # then the edge
            ring.tail = (i + 1) % ring.size
        self._step(now_ms, self.raw_mask)
        if not self.armed and self.raw_mask == 0 and True not in self.level:
            self.armed = True           # intents count from the next scan on
        return out

    def _step(self, now_ms, mask):
        """Key levels `mask` read at now_ms: debounce, then releases, presses, timers."""
        self.raw_mask = mask
        n = self.n_phys
        level = self.level
        given = len(self.out)
        raw = self.raw
        edge = self.edge
        for i in range(n):
            r = mask >> i & 1 == 1
            if r != raw[i]:
                raw[i] = r
                self.raw_ms[i] = now_ms
            if r != level[i] and now_ms - self.raw_ms[i] >= (self.press_ms if r else self.debounce_ms):
                level[i] = r
                edge[i] = 1 if r else -1
            else:
                edge[i] = 0
        for i in range(n):
            if edge[i] < 0:
                for c in self.chords_of[i]:
                    self._release(c)
                self._release(i)
        for i in range(n):
            if edge[i] > 0 and self.state[i] == UP:
                self._press(i)
        self._timers(now_ms)
        if self.waiting is not None and (self.state[self.waiting_k] != PENDING or not self.armed):
            self.waiting = None
        if not self.armed:              # disarmed: nothing counts until all keys are up
            while len(self.out) > given:
                self.out.pop()

    def _release(self, k):
        if self.state[k] == PENDING:
            self.out.append(self.short[k])
        self.state[k] = UP

    def _press(self, i):
        t = self.raw_ms[i]
        state = self.state
        for c in self.chords_of[i]:
            if self._chord_ready(c, i, t):
                for p in self.parts[c]:
                    if state[p] == HELD:        # it acted on its press: take that back
                        self.out.append(TAKEBACK[self.short[p]])
                    state[p] = SPENT
                    if self.raw_ms[p] > t:      # a chord is down once its last key is
                        t = self.raw_ms[p]
                self._start(c, t)
                return
        for k in range(len(state)):     # rollover: earlier presses give their short now
            if state[k] == PENDING and self.born[k] != self.scan_no:
                self.out.append(self.short[k])
                state[k] = SPENT
        self._start(i, t)

    def _chord_ready(self, c, i, t):
        """Are chord c's keys other than i down and free at i's press (time t)? Free: its
        press still pending, accepted in this step, or acted on less than chord_ms ago
        (press_wait 0: its short has a takeback)."""
        for p in self.parts[c]:
            if p == i:
                continue
            s = self.state[p]
            if not self.level[p] or not (s == PENDING or (s == UP and self.edge[p] > 0) or (
                    s == HELD and self.press_wait[p] == 0 and t - self.t0[p] <= self.chord_ms)):
                return False
        return True

    def _start(self, k, t):
        self.born[k] = self.scan_no
        if self.immediate[k]:
            self.out.append(self.short[k])
            self.state[k] = SPENT
        else:
            self.state[k] = PENDING
            self.t0[k] = t
            if self.press_wait[k] == 0:
                self._repeat(k)
            elif self.wait_info[k] is not None:
                self.waiting = self.wait_info[k]
                self.waiting_k = k

    def _repeat(self, k):
        """A press-acting key's short, then HELD: its hold from long_ms after the press."""
        self.out.append(self.short[k])
        self.state[k] = HELD
        self.next_ms[k] = self.t0[k] + self.long_ms

    def _timers(self, now_ms):
        state = self.state
        for k in range(len(state)):
            if state[k] == PENDING and self.press_wait[k] > 0:
                if now_ms - self.t0[k] >= self.press_ms + self.press_wait[k]:
                    self._repeat(k)         # no chord came: the press acts
            elif state[k] == PENDING:
                if now_ms - self.t0[k] >= self.long_ms and (self.long[k] is not None or
                                                             self.hold[k] is not None):
                    self.out.append(self.long[k] if self.long[k] is not None else self.hold[k])
                    state[k] = HELD
                    self.next_ms[k] = self.t0[k] + self.long_ms + self.repeat_ms
            elif state[k] == HELD and self.hold[k] is not None and now_ms >= self.next_ms[k]:
                self.out.append(self.hold[k])
                nxt = self.next_ms[k] + self.repeat_ms
                self.next_ms[k] = nxt if nxt > now_ms else now_ms + self.repeat_ms


def board_keys(keys):
    """[(name, intents)] of a board's physical keys, for the self-test to ask for each (a
    keymap's short, long and hold intents all count); () for keys with no names (SIM's) or
    none."""
    names = getattr(keys, "names", None)
    if not names:
        return ()
    return [(names[i].upper(), tuple(x for x in (keys.short[i], keys.long[i], keys.hold[i])
                                     if x)) for i in range(keys.n_phys)]


def matrix_mask(rows, cols, bits):
    """The held keys on a key matrix as a bit mask: each row pin is driven low in turn and
    the column pins (inputs with pull-ups) read low where a key joins them. Rows should be
    open-drain (or inputs between scans) so two keys in one column never short a high row
    to a low one. bits[r][c] is the bit of the key at row r, column c (0: none; tuples).
    Without diodes, three keys on a rectangle also report the fourth corner.
    Allocation-free: an interrupt may call it."""
    m = 0
    for r in range(len(rows)):
        row = rows[r]
        row.value(0)
        b = bits[r]
        for c in range(len(cols)):
            if not cols[c].value():
                m |= b[c]
        row.value(1)
    return m


def buttons_mask(buttons):
    """The held keys among plain buttons as a bit mask (bit i: buttons[i]), for
    EdgeRing.sample: `buttons` holds (level, active) in Keys.names order, level() reading
    the pin. Allocation-free: an interrupt may call it."""
    m = 0
    bit = 1
    for b in buttons:
        if b[0]() == b[1]:
            m |= bit
        bit <<= 1
    return m


def _empty(lst):
    while lst:
        lst.pop()
