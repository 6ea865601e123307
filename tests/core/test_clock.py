# Desk time on a table (core/clock.py): simulated drifting table clocks and links.
# A tiny LCG stands in for `random` so CPython and MicroPython draw the same delays.
import gc
from array import array

from duelclock.core import clock
from duelclock.core.clock import Clock, SERIAL_BUDGET_MS, WIFI_BUDGET_MS

DESK0_MS = 1764460800000       # desk time at the start: unix ms (big ints must stay exact)
LOCAL0_MS = (1 << 30) + 7777   # unwrapped ticks_ms, already past one ticks_ms wrap


class Lcg:
    def __init__(self, seed):
        self.x = seed

    def uniform(self, low, high):
        self.x = (1103515245 * self.x + 12345) & 0x7FFFFFFF
        return low + (high - low) * self.x / 2147483648.0


def serial_leg(rng):
    return rng.uniform(0.2, 1.2)              # USB CDC: about a ms, either way


def wifi_leg(rng):
    d = rng.uniform(10, 30)                   # 20 +/- 10 ms, and 1% of packets held 200 ms
    return d + 200 if rng.uniform(0, 1) < 0.01 else d


def _us(ms):
    """The us past the ms of a float ms."""
    return int((ms - int(ms)) * 1000)


class Sim:
    """A desk clock (true time + DESK0_MS, floored to ms) and a table clock running `ppm`
    fast, floored to ms; exchanges as the Clock asks for them, legs drawn by `leg`; `us`:
    both ends stamp to the us too (Clock.sample's us)."""

    def __init__(self, ppm, leg, budget_ms, seed, drift_ppm=None, us=False):
        self.rate = 1 + ppm * 1e-6
        self.us = us
        self.leg, self.rng = leg, Lcg(seed)
        self.c = Clock(budget_ms, drift_ppm=drift_ppm)
        self.t = 0.0                          # true ms since the start
        self.exchanges = 0

    def local(self, t):
        return LOCAL0_MS + int(t * self.rate)

    def desk(self, t):
        return DESK0_MS + int(t)

    def error_ms(self):
        """Desk time as the table shows it minus the desk's, at this instant (float ms, the
        model's own value: the ms floors of both clocks are not in it)."""
        x = self.t * self.rate                    # local ms since LOCAL0_MS, unfloored
        return self.c.offset_ms(LOCAL0_MS + x) - (DESK0_MS - LOCAL0_MS) - (self.t - x)

    def run(self, until_ms, link=True, check=None):
        """Run to true time `until_ms`, exchanging when due (replies lost if not `link`);
        call check() once a second."""
        next_check = self.t - self.t % 1000 + 1000
        while True:
            due = self.t + self.c.next_exchange_in_ms(self.local(self.t)) / self.rate
            if min(next_check, due) > until_ms:
                self.t = until_ms
                return
            if next_check <= due:
                self.t = next_check
                next_check += 1000
                if check and self.c.synced:
                    check()
                continue
            self.t = max(self.t, due)
            t1 = self.local(self.t)
            self.c.sent(t1)
            self.exchanges += 1
            d1, hold, d2 = self.leg(self.rng), self.rng.uniform(0, 0.5), self.leg(self.rng)
            if link:
                t2, t3, t4 = self.t + d1, self.t + d1 + hold, self.t + d1 + hold + d2
                us = None
                if self.us:
                    us = (_us(self.t * self.rate), _us(t2), _us(t3), _us(t4 * self.rate))
                self.c.sample(t1, self.desk(t2), self.desk(t3), self.local(t4), us)
            self.t += 0.01


def errors(ppm, leg, budget_ms, seed, minutes=30, drift_ppm=None, us=False):
    """([(true ms, |error| ms)] once a second from the first desk time on, the Sim)."""
    gc.collect()               # the last run's garbage, before this one makes its own (upy heap)
    sim = Sim(ppm, leg, budget_ms, seed, drift_ppm, us)
    out = Errs(minutes * 60 + 1)
    sim.run(minutes * 60000, check=lambda: out.add(sim.t, abs(sim.error_ms())))
    return out, sim


class Errs:
    """(true ms, |error| ms) pairs, kept in two float arrays made whole at the start:
    1,800 small tuples kept through a run lie all over the heap, and MicroPython's heap is
    never compacted (a 16 KB block was not to be had in 2 MB beside the last run's)."""

    def __init__(self, n):
        self.t = array("d", range(n))
        self.e = array("d", range(n))
        self.n = 0

    def add(self, t, e):
        self.t[self.n] = t
        self.e[self.n] = e
        self.n += 1

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.t[i], self.e[i]

    def __iter__(self):
        for i in range(self.n):
            yield self.t[i], self.e[i]


def worst(errs, start_ms=0, end_ms=1e12):
    return max(e for t, e in errs if start_ms <= t < end_ms)


def p95(errs):
    es = sorted(e for t, e in errs)
    return es[len(es) * 95 // 100]


def test_no_desk_time_before_the_first_exchanges():
    c = Clock()
    assert not c.synced and c.desk_now_ms(5) is None and c.offset_ms(5) is None
    assert c.error_ms(5) is None and c.age_ms(5) is None
    assert c.next_exchange_in_ms(5) == 0
    # 10 ms round trip, 2 ms at the desk: the reply took 4 ms, so at t4 the desk read 5006
    # (desk - local = 3996, the band's middle).
    for i in range(clock.FIRST):
        assert c.desk_now_ms(1010 + i) is None
        assert c.sample(1000 + i, 5000 + i, 5002 + i, 1010 + i) is None
    t4 = 1010 + clock.FIRST - 1
    assert c.synced and c.desk_now_ms(t4) == t4 + 3996 and c.desk_now_ms(t4 + 1000) == t4 + 4996
    assert c.age_ms(t4 + 500) == 500
    # FIRST equal exchanges: the stamps, and the 8-ms delay over their count (one leg may
    # have taken it all, as in each of them)
    assert abs(c.error_ms(t4) - (clock.QUANT_MS + 8 / (2 * clock.FIRST))) < 0.01


def test_serial_within_a_ms_from_the_first_desk_time_and_half_a_ms_after_a_minute():
    for ppm, seed in ((100, 1), (-100, 2), (37, 3), (-55, 4)):
        errs, sim = errors(ppm, serial_leg, SERIAL_BUDGET_MS, seed)
        assert errs[0][0] <= 2000                         # desk time within 2 s of power-on
        # main before the bound and weight fixes: 1.4 ms, and p95 0.6. The p95 depends on
        # how ppm x period meets the ms (stamps here are taken on a local ms edge): 0.25 to
        # 0.48 with 12-s periods, 0.23 to 0.40 with 16-s ones.
        assert worst(errs) <= 1.0, (ppm, worst(errs))
        assert worst(errs, 60000) <= 0.8 and p95(errs) <= 0.5, (ppm, worst(errs, 60000))
        assert abs(sim.c.drift_ppm + ppm) < 2, (ppm, sim.c.drift_ppm)   # desk - local slope


def test_serial_within_a_third_of_a_ms_with_us_stamps():
    # The same tables and legs as above with 1-ms stamps: 0.40 to 0.78 ms at worst, p95 0.24
    # to 0.38. The stamps' rounding was most of it.
    for ppm, seed in ((100, 1), (-100, 2), (37, 3), (-55, 4)):
        errs, sim = errors(ppm, serial_leg, SERIAL_BUDGET_MS, seed, us=True)
        assert errs[0][0] <= 2000
        assert worst(errs) <= 0.35 and worst(errs, 60000) <= 0.2, (ppm, worst(errs))
        assert p95(errs) <= 0.15, (ppm, p95(errs))
        assert sim.c.error_ms(sim.local(sim.t)) < 0.5    # 1-ms stamps: 1.0 (never under 0.5)


def test_wifi_within_a_few_ms_from_the_first_desk_time_with_held_packets():
    # The old clock (one best sample per 16 s, polled when its error reached 10 ms) was
    # 100 ms off in its first minutes and 15 ms later on this link. Us stamps change little
    # here (the legs' 20 ms of jitter is what limits it): both kinds must hold.
    for ppm, seed, us in ((100, 5, False), (-100, 6, True), (-55, 7, False), (37, 3, True),
                          (-55, 7, True)):
        errs, sim = errors(ppm, wifi_leg, WIFI_BUDGET_MS, seed, us=us)
        assert errs[0][0] <= 3000
        # worst after the first minute: 5.2 ms before the bound and weight fixes
        assert worst(errs, 0, 60000) <= 5.5 and worst(errs, 60000) <= 4.5, (ppm, worst(errs))
        assert p95(errs) <= 3.5, (ppm, p95(errs))


def test_at_most_15_messages_a_minute_more_while_young():
    errs, sim = errors(-80, wifi_leg, WIFI_BUDGET_MS, 12, minutes=2)
    young = sim.exchanges
    sim.run(30 * 60000)
    assert young >= 60, young                             # 128 messages in 2 minutes
    assert 2 * sim.exchanges <= 15 * 30, sim.exchanges    # requests and replies
    assert 2 * (sim.exchanges - young) <= 13 * 28, sim.exchanges   # then fewer than 15 a minute


def test_a_drift_kept_on_flash_helps_from_the_first_minute():
    fresh, _ = errors(-100, wifi_leg, WIFI_BUDGET_MS, 6, minutes=5)
    kept, sim = errors(-100, wifi_leg, WIFI_BUDGET_MS, 6, minutes=5, drift_ppm=97)
    assert worst(kept, 30000) < worst(fresh, 30000) - 1, (worst(kept, 30000), worst(fresh, 30000))
    assert sim.c.drift_settled and abs(sim.c.drift_ppm - 100) < clock.FLASH_PPM
    assert not Clock(drift_ppm=97).drift_settled                    # nothing learnt yet


def test_the_error_estimate_covers_the_error():
    # Within the ms floors of both clocks, and a few ms on Wi-Fi: unequal legs the delays
    # cannot show.
    for ppm, leg, budget, seed, slack in ((100, serial_leg, SERIAL_BUDGET_MS, 8, 0.3),
                                          (-90, wifi_leg, WIFI_BUDGET_MS, 9, 3.0)):
        sim = Sim(ppm, leg, budget, seed)
        over = [0]

        def check():
            if sim.t > 60000:
                e = abs(sim.error_ms()) - sim.c.error_ms(sim.local(sim.t))
                over[0] = max(over[0], e)
        sim.run(20 * 60000, check=check)
        assert over[0] <= slack, (ppm, over)


def test_five_minutes_without_a_link_run_on_the_drift():
    for ppm, leg, budget, seed in ((100, serial_leg, SERIAL_BUDGET_MS, 10),
                                   (-100, wifi_leg, WIFI_BUDGET_MS, 11)):
        sim = Sim(ppm, leg, budget, seed)
        sim.run(30 * 60000)
        start = sim.local(sim.t)
        err0 = sim.c.error_ms(start)
        e0 = abs(sim.error_ms())
        residual = abs(sim.c.drift_ppm + ppm) * 1e-6          # what the drift estimate missed
        seen = []

        def check():
            now = sim.local(sim.t)
            e = abs(sim.error_ms())
            assert e <= e0 + residual * (now - start) + 0.5, (ppm, e)
            assert e <= sim.c.error_ms(now) + 2, (ppm, e, sim.c.error_ms(now))
            seen.append(sim.c.age_ms(now))
        before = sim.exchanges
        sim.run(35 * 60000, link=False, check=check)
        assert seen[-1] >= 299000                             # age shows the loss
        assert sim.c.error_ms(sim.local(sim.t)) > err0        # and so does the estimate
        # Asked again meanwhile, backing off: RETRY_MS doubled per lost request, up to
        # MAX_PERIOD_MS (a desk or broker gone is not asked every 2 s by every table).
        asked = sim.exchanges - before
        settled_s = clock.MAX_PERIOD_MS / 1000
        assert 300 / settled_s <= asked <= 300 / settled_s + clock.BACKOFF_SHIFTS + 1, asked
        assert abs(sim.error_ms()) <= budget / 2
        sim.run(36 * 60000)                                   # the link is back
        assert sim.c.age_ms(sim.local(sim.t)) < 60000 and abs(sim.error_ms()) <= e0 + 2


def in_sync_clock(offset_ms, count=clock.YOUNG + 1):
    # `count` perfect exchanges a second apart; returns (clock, local).
    c = Clock(SERIAL_BUDGET_MS)
    local = 0
    for i in range(count):
        c.sent(local)
        c.sample(local, local + offset_ms, local + offset_ms, local)
        local += 1000
    assert c.desk_now_ms(local) == local + offset_ms
    return c, local


def test_absurd_samples_change_nothing():
    c, local = in_sync_clock(4000)
    age = c.age_ms(local)
    for t1, t2, t3, t4, why in ((1000, 5000, 5002, 999, "order"), (1000, 5003, 5002, 1010, "order"),
                                (1000, 5000, 5020, 1010, "delay"),   # -10 ms
                                (1000, 5000, 5000, 3000, "delay")):  # 2 s
        assert c.sample(t1 + local, t2 + local, t3 + local, t4 + local) == why
    assert c.desk_now_ms(local) == local + 4000 and c.age_ms(local) == age
    assert c.sample(local, local + 4000, local + 4002, local) is None   # -2 ms: 1-ms stamps


def test_held_replies_never_set_the_time():
    # One exchange in ten held 200 ms on its way back: the band's edges come from the others.
    c, local = in_sync_clock(4000)
    for i in range(40):
        back = 210 if i % 10 == 3 else 10
        c.sent(local)
        c.sample(local, local + 4010, local + 4010, local + 10 + back)
        local += 1000
    assert c.desk_now_ms(local) == local + 4000


def test_young_corrections_jump_later_small_ones_slew_and_big_ones_jump():
    c, local = in_sync_clock(1000, count=clock.FIRST)
    c.sample(local, local + 1004, local + 1004, local)     # young: taken at once
    assert c.desk_now_ms(local) > local + 1000
    c, local = in_sync_clock(1000)
    # The desk now reads 8 ms later: the band moves by 3 or 4 (the drift takes a little),
    # slewed in at 5 ms/s; the time shown never stalls.
    c.sample(local, local + 1008, local + 1008, local)
    prev = c.desk_now_ms(local)
    assert prev == local + 1000
    for ms in range(10, 2001, 10):
        now = c.desk_now_ms(local + ms)
        assert 10 <= now - prev <= 11, (ms, now - prev)
        prev = now
    assert 1003 <= c.desk_now_ms(local + 2000) - (local + 2000) <= 1004
    # 50 ms off: the band moves by 15 to 30, beyond the 5-ms budget (slewing would take
    # 4 s): a jump.
    c, local = in_sync_clock(1000)
    c.sample(local, local + 1050, local + 1050, local)
    assert 1015 <= c.desk_now_ms(local) - local <= 1030


def test_exchanges_burst_then_space_out_and_retry_lost_ones():
    c = Clock(SERIAL_BUDGET_MS)
    c.sent(0)                       # a first request is out: its reply may take MAX_DELAY_MS
    assert c.next_exchange_in_ms(0) == max(clock.BURST_PERIOD_MS, clock.MAX_DELAY_MS)
    c, local = Clock(SERIAL_BUDGET_MS), 0
    gaps = []
    for i in range(6 * clock.BURST):
        wait = c.next_exchange_in_ms(local)
        local += wait
        gaps.append(wait)
        c.sent(local)
        c.sample(local, local + 50, local + 50, local)
    b, f = clock.BURST, clock.FIRST
    assert gaps[1:f] == [clock.FIRST_PERIOD_MS] * (f - 1), gaps
    assert gaps[f:b] == [clock.BURST_PERIOD_MS] * (b - f), gaps
    assert gaps[b:2 * b] == [2 * clock.BURST_PERIOD_MS] * b, gaps
    # Settled: MAX_PERIOD_MS, less a varying part of up to a quarter (no fixed phase
    # against the desk's ms).
    settled = gaps[-10:]
    assert all(clock.MAX_PERIOD_MS * 3 // 4 < g <= clock.MAX_PERIOD_MS for g in settled), gaps
    assert len(set(settled)) > 5 and sorted(gaps[:4 * b]) == gaps[:4 * b], gaps
    local += c.next_exchange_in_ms(local)
    c.sent(local)                                                 # this one is lost
    assert c.next_exchange_in_ms(local) == clock.RETRY_MS


def test_an_old_lopsided_exchange_loosens_with_a_young_drift():
    # Desk = local + 4000. A minute-old exchange whose reply took 20 ms (its band [-20, 0]
    # about 4000), then FIRST - 1 with 1-ms legs: while the drift is known to ~100 ppm the old
    # bounds are worth +/-12 ms today, so the new exchanges set the time. Tightened by that
    # instead (a past bug) the old band crossed the new one and the time was 4.6 ms off.
    c = Clock()
    c.sample(0, 4000, 4000, 20)
    local = 60000
    for i in range(clock.FIRST - 1):
        c.sample(local, local + 4001, local + 4001, local + 2)
        local += 1000
    assert abs(c.offset_ms(local) - 4000) <= 0.5, c.offset_ms(local)


def test_a_simulated_board_at_speed_syncs_as_a_board_on_the_same_link():
    # A simulated table whose clock runs 40x real time (scale 40) sees every real delay of
    # its link 40 times longer in local ms: a 10 ms round trip (400 local ms) and a 2 ms
    # jitter are what a board's link gives, so they count as on a board.
    board, sim = Clock(SERIAL_BUDGET_MS), Clock(SERIAL_BUDGET_MS, scale=40)
    assert (sim.budget_ms, sim.max_delay_ms, sim.retry_ms) == (
        40 * SERIAL_BUDGET_MS, 40 * clock.MAX_DELAY_MS, 40 * clock.RETRY_MS)
    assert board.sample(0, 20000, 20000, 30000) == "delay"   # 30 s: worthless on a board
    assert sim.sample(0, 20000, 20000, 30000) is None         # 0.75 s real: still counts
    sim.sent(40000)                 # a request out: its reply may take 40 s of local time
    assert sim.next_exchange_in_ms(40000) == sim.max_delay_ms
    # Settled on a link with 1 real ms of noise (40 local ms): a board's period, not the
    # budget's half-second pace of a link 40 times worse.
    c, local = Clock(SERIAL_BUDGET_MS, scale=40), 0
    for i in range(8 * clock.BURST):
        local += c.next_exchange_in_ms(local)
        c.sent(local)
        jitter = 40 * (i % 3)
        c.sample(local, local + 400 + jitter, local + 400 + jitter, local + 800 + jitter)
    assert c.next_exchange_in_ms(local) > clock.MAX_PERIOD_MS // 2
    # Lost requests back off no further than MAX_PERIOD_MS of local time, which its wait
    # for a reply already passes: a simulated room's desk restart is re-synced as promptly
    # as before (a board's waits grow to the settled period)
    for i in range(4):
        local += c.next_exchange_in_ms(local)
        c.sent(local)
        assert c.next_exchange_in_ms(local) == c.max_delay_ms


def _summed(c):
    """The moments of c's samples summed afresh about its origin, with its weights."""
    m = [0.0] * 6
    for s in c._samples:
        e = s[1] - s[2] - c._wfloor
        w = 1 / (c._wq4 + e * e)
        x, y = s[0] - c._ox, s[1] + s[2] - c._oy
        for j, v in enumerate((w, w * x, w * y, w * x * x, w * x * y, w * y * y)):
            m[j] += v
    return m


def test_moments_kept_between_refits_equal_the_samples_summed_again():
    # Wi-Fi legs (a new lowest delay now and then: the weights change), held replies, and
    # a run past KEEP exchanges and past SPAN_MS (samples leave): after every exchange
    # the moments moved from the last refit equal those summed from the samples.
    checked = [0, 0]
    sim = Sim(-83, wifi_leg, WIFI_BUDGET_MS, 11)
    c = sim.c
    take = c.sample

    def sample(*a):
        why = take(*a)
        got, want = c._mom, _summed(c)
        for j in range(6):
            assert abs(got[j] - want[j]) <= 1e-9 * (abs(want[j]) + 1e-6 * abs(want[0])), (
                j, got, want)
        checked[0] += 1
        checked[1] += c._moved > 0
        return why
    c.sample = sample
    sim.run(40 * 60000)
    assert len(c._samples) == clock.KEEP and checked[0] > 2 * clock.KEEP
    assert checked[1] > checked[0] // 2          # most refits moved the moments, not summed


def test_desk_time_kept_between_reads_equals_the_model_rounded():
    # desk_now_ms keeps its rounded offset while the drift cannot have moved it: every
    # read, through exchanges, slews and jumps, equals the model rounded afresh, also
    # counted from a round's start.
    sim = Sim(97, wifi_leg, WIFI_BUDGET_MS, 5)
    c = sim.c
    start = DESK0_MS + 5000
    reads = [0, 0]                  # reads, and those answered from the kept offset

    def check():
        for since in (0, start):
            for step in range(0, 1000, 7):
                local = sim.local(sim.t) + step
                want = local + c._off + int(round(c._shown(local)))
                kept = c._memo_from <= local < c._memo_to and c._memo_since == since
                assert c.desk_now_ms(local, since) == want - since, (local, since, want)
                reads[0] += 1
                reads[1] += kept
    sim.run(20 * 60000, check=check)
    assert reads[0] > 20 * 60 * 200 and reads[1] > reads[0] // 2


def test_the_first_request_waits_a_spread_drawn_from_the_seed():
    assert Clock().next_exchange_in_ms(5) == 0                   # no seed: at once
    spreads = [Clock(seed=tbl * 65536 + 1).spread_ms for tbl in range(1, 201)]
    assert all(0 <= s < clock.START_SPREAD_MS for s in spreads), spreads
    # 200 tables switched on together: every tenth of the spread has some of them (the
    # same boot count, consecutive numbers), no instant has many
    tenths = [0] * 10
    for s in spreads:
        tenths[s * 10 // clock.START_SPREAD_MS] += 1
    assert min(tenths) >= 10 and max(tenths) <= 30, tenths
    assert Clock(seed=7 * 65536 + 1).spread_ms != Clock(seed=7 * 65536 + 2).spread_ms
    c = Clock(seed=2 * 65536 + 1)
    wait = c.spread_ms
    assert wait > 20
    # counted from the first look, not from each look
    assert c.next_exchange_in_ms(1000) == wait
    assert c.next_exchange_in_ms(1010) == wait - 10
    assert c.next_exchange_in_ms(1000 + wait) == 0
    # a new link (no reply came): the spread again, from the first look after it
    c.sent(None)
    assert c.next_exchange_in_ms(5000) == wait
    # at scale, the spread is in the board's faster ms (a real wait)
    assert Clock(seed=2 * 65536 + 1, scale=40).spread_ms // 40 in (wait - 1, wait)


def test_desk_time_about_a_second_after_power_on_with_the_spread():
    # The tables that wait longest: desk time within a second of power-on on a USB link
    for tbl in range(1, 101):
        c = Clock(SERIAL_BUDGET_MS, seed=tbl * 65536 + 1)
        local = 0
        while not c.synced:
            local += c.next_exchange_in_ms(local)
            c.sent(local)
            c.sample(local, local + 5001, local + 5001, local + 2)
            local += 2
        assert local <= 1000, (tbl, local)


def _young(clock_, desk_wait_ms, until_ms, leg_ms=20):
    """Exchanges of `clock_` until local ms `until_ms` against a desk that answers each
    request `desk_wait_ms` after it came (desk = local + 4000); the gaps between requests."""
    local = 0
    gaps = []
    while True:
        wait = clock_.next_exchange_in_ms(local)
        if local + wait > until_ms:
            return gaps
        local += wait
        gaps.append(wait)
        clock_.sent(local)
        t2 = local + leg_ms + 4000
        t3 = t2 + desk_wait_ms
        local = t3 - 4000 + leg_ms
        clock_.sample(local - 2 * leg_ms - desk_wait_ms, t2, t3, local)


def test_a_desk_behind_on_its_queue_is_asked_less_and_the_time_stays_good():
    # 2,000 tables in their first minute ask ~1,600 times a second; a desk (or broker) that
    # falls behind answers each after a wait. Its stamps keep the wait out of the legs, so
    # the time is as good; but the tables back off and ask less, so it catches up.
    prompt = _young(Clock(WIFI_BUDGET_MS), 1, 60000)
    behind = Clock(WIFI_BUDGET_MS)
    slow = _young(behind, 700, 60000)
    assert len(prompt) >= 45 and len(slow) * 2 <= len(prompt), (len(prompt), len(slow))
    assert behind.synced and abs(behind.offset_ms(60000) - 4000) <= 1
    # The desk answers promptly again: each prompt reply halves the back-off, and the
    # schedule is the young one again after BACKOFF_SHIFTS replies.
    local = 60000
    gaps = []
    for i in range(clock.BACKOFF_SHIFTS + 2):
        wait = behind.next_exchange_in_ms(local)
        gaps.append(wait)
        local += wait
        behind.sent(local)
        behind.sample(local, local + 4020, local + 4021, local + 41)
        local += 41
    # (the rest of the 8-s period it was waiting, then) 17 to 21 exchanges: the 1-s period
    assert len(slow) == clock.BURST + 1
    young = 2 * clock.BURST_PERIOD_MS
    assert gaps[1:] == [4 * young, 2 * young, young, young], gaps


def test_late_replies_back_off_and_prompt_ones_end_it():
    # In sync (17 exchanges: the 1-s period), then replies 400 ms after their requests
    # (over LATE_MS): each doubles the period, up to BACKOFF_SHIFTS doublings.
    c, local = in_sync_clock(4000)
    gaps = []
    for i in range(5):
        wait = c.next_exchange_in_ms(local)
        gaps.append(wait)
        local += wait
        c.sent(local)
        c.sample(local, local + 4010, local + 4390, local + 400)
        local += 400
    assert gaps == [0, 2000, 4000, 8000, 8000], gaps
    # Prompt replies: the period halves at each, back to 1 s
    gaps = []
    for i in range(5):
        wait = c.next_exchange_in_ms(local)
        gaps.append(wait)
        local += wait
        c.sent(local)
        c.sample(local, local + 4001, local + 4001, local + 2)
        local += 2
    assert gaps == [8000, 4000, 2000, 1000, 1000], gaps


def test_lost_requests_back_off_to_the_settled_period_and_a_new_link_ends_it():
    c, local = in_sync_clock(4000)
    gaps = []
    for i in range(6):
        wait = c.next_exchange_in_ms(local)
        gaps.append(wait)
        local += wait
        c.sent(local)                                    # never answered
    # The 1-s period, then each loss doubles the wait: the retry stays past MAX_DELAY_MS
    # (a reply may take that long) and goes no further than BACKOFF_SHIFTS doublings.
    assert gaps == [0, 1000, 2000, 4000, 8000, 8000], gaps
    # The settled period is backed off no further than MAX_PERIOD_MS
    s, local = in_sync_clock(4000, count=6 * clock.BURST)
    waits = []
    for i in range(6):
        local += s.next_exchange_in_ms(local)
        s.sent(local)
        waits.append(s.next_exchange_in_ms(local))
    assert waits[:2] == [clock.RETRY_MS, 2 * clock.RETRY_MS], waits
    assert waits[3:] == [clock.MAX_PERIOD_MS] * 3, waits
    # A new link: no back-off (the losses were the old link's)
    c.sent(None)
    assert c.next_exchange_in_ms(local) == 0
    c.sent(local)
    c.sample(local, local + 4001, local + 4001, local + 2)
    assert c.next_exchange_in_ms(local + 2) == 1000


def test_a_late_reply_asks_no_sooner_for_the_error():
    # Legs so uneven (1 to 140 ms each way, on a USB budget) that the error would pass half
    # the budget before the period ends: with prompt replies the clock asks sooner
    # (BURST_PERIOD_MS); with the same legs and a desk 400 ms behind it waits its
    # backed-off period.
    for desk_wait, low, high in ((0, clock.BURST_PERIOD_MS, clock.BURST_PERIOD_MS),
                                 (400, 8 * clock.BURST_PERIOD_MS, clock.MAX_PERIOD_MS)):
        c, local = Clock(SERIAL_BUDGET_MS), 0
        rng = Lcg(5)
        for i in range(2 * clock.BURST):
            local += c.next_exchange_in_ms(local)
            c.sent(local)
            out, back = rng.uniform(1, 140), rng.uniform(1, 140)
            t2 = local + 4000 + int(out)
            t4 = local + int(out + back) + desk_wait
            assert c.sample(local, t2, t2 + desk_wait, t4) is None
            local = t4
        assert c.error_ms(local + clock.BURST_PERIOD_MS) > SERIAL_BUDGET_MS / 2
        wait = c.next_exchange_in_ms(local)
        assert low <= wait <= high, (desk_wait, wait)
