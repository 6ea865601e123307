# Desk time on a table: NTP-style sync math. Pure: the app passes its ticks in, gets ms out.
#
# The table starts every exchange (wire.py `sync` messages); the desk stamps it:
#
#   table t1 --sync{t1}------------> desk t2 (received)
#   table t4 <--sync{t1,t2,t3}------ desk t3 (sent)
#
#   delay  = (t4 - t1) - (t3 - t2)        time on the wire, both legs
#   t2 - t1 = offset + leg out            each exchange bounds the offset from both sides:
#   t3 - t4 = offset - leg back           offset in [t3 - t4, t2 - t1] (legs are >= 0)
#
# Local times are the app's ticks_ms UNWRAPPED into an ever-increasing int (ticks_ms wraps
# at 2**30 on MicroPython: the app keeps local += ticks_diff(now, prev)). Desk times are the
# desk's ms (docs/protocol.md). Big numbers stay ints (kept relative to the first sample, so
# small ints on a board); floats only hold small differences (ms within the window, ppm).
# A sample is kept as ints (local ms doubled, its two offset bounds in us), and a refit
# makes a float only where one is a result (a weight, a sum, a bound): every float is an
# allocation on a board, and a refit runs at every exchange. So the fit's weighted moments
# are kept between refits and moved: a new exchange adds its terms, one leaving takes its
# own out, and the moments are shifted to the new exchange (a handful of floats, not 12 a
# sample). They are summed again from the samples when the weights change (a new lowest
# delay, finer stamps) and every FULL_EVERY exchanges, so rounding never adds up.
#
# The model: desk(local) = local + off + frac + drift * (local - ref), from the last KEEP
# exchanges (none older than SPAN_MS):
# - the drift is a least-squares slope through their offsets, each weighted by its delay
#   (1 / (QUANT_MS^2 + ((delay - floor) / 2)^2): an offset can be off by half the delay's
#   excess over the legs' floor, and the lowest delay kept is itself above that floor by
#   about QUANT_MS + lowest / SLACK_PART: a ms on USB, where a 4-ms hiccup then weighs 17
#   times less than a good exchange, 6 on Wi-Fi), with a prior: the drift kept on flash
#   (+/-FLASH_PPM) or 0 (+/-2 MAX_PPM), so a span too short for the noise claims little;
# - the offset now is the middle of the band between the lowest "offset + leg out" line and
#   the highest "offset - leg back" line of that slope, each exchange's bound loosened by
#   what WIDEN standard deviations of drift move it over its age (the older, the looser).
#   Only the exchanges nearest the legs' floors set the band: a held packet or a slow one
#   (far above the lowest delay) never does, and an old one counts only once the drift is
#   known well enough to carry it. Unequal floors (asymmetric paths) stay invisible, as to
#   any 2-way sync.
# The clock gives no desk time before FIRST exchanges, 0.1 s apart: a second after power-on
# (one exchange on Wi-Fi may be 10 ms lopsided, or held; the band of eight comes from their
# best legs: 5 ms at worst over 100 simulated tables, against 9 with two). While young (YOUNG
# exchanges) every new fit is taken at once; later a move of the time shown of at most
# jump_ms is slewed in at SLEW_RATE and a bigger one jumps. Without a link the model runs on
# its drift, and error_ms grows with the drift's uncertainty.
#
# Exchanges: FIRST at FIRST_PERIOD_MS, the rest of BURST at BURST_PERIOD_MS, then BURST at
# twice that, and so on up to MAX_PERIOD_MS (sooner if error_ms would pass budget_ms / 2),
# less a varying part of up to a quarter: 64 exchanges in the first two minutes, 80 in four,
# then one every 10.5 to 14 s (13.8 messages a minute with the replies over 30 minutes, of
# the 15 allowed). The young drift is what limits the first minutes: more exchanges then.
# The first request of a clock that never synced waits a part of START_SPREAD_MS drawn from
# the seed the app gives (a table's number and boot): tables switched on together, or
# linked together when the broker comes up, do not ask in the same instant.
# Back-off: a reply over LATE_MS after its request, or a request left unanswered, says the
# desk or the network is behind: each one doubles the periods and the retry (up to
# BACKOFF_SHIFTS doublings, none past MAX_PERIOD_MS) and the clock asks no sooner for its
# error; each prompt reply halves them again. A desk behind on its queue is asked less, not
# more, and catches up. A new link starts without back-off.
SERIAL_BUDGET_MS = 5
WIFI_BUDGET_MS = 20
KEEP = 64                 # exchanges kept, newest last
SPAN_MS = 1200000         # and none older than this (local ms): drift wanders with temperature
FIRST = 8                 # exchanges before the clock gives desk time
MAX_PPM = 100             # crystals are off by tens of ppm, rarely more than this
FLASH_PPM = 10            # a drift kept on flash is this good (temperature, ageing)
FIT_PPM = 500             # a fitted drift beyond this is clipped (outliers, not crystals)
FLOOR_PPM = 1             # drift wander (temperature) no fit can rule out
WIDEN = 1                 # standard deviations of drift an old exchange's bound is widened by
QUANT_US = 500            # 1-ms stamps: no offset is known better than this (us)
QUANT_US_US = 50          # us stamps: the same (a stamp is taken some us off its event)
QUANT_MS = QUANT_US / 1000
SLACK_PART = 4            # the lowest delay kept is above the legs' floor by ~1/this of it
NEAR = 3                  # the NEAR-th lowest delay over the lowest: how loose the band is
MIN_DELAY_MS = -2         # below this a sample is absurd (ms stamps can make 0 look like -2)
MAX_DELAY_MS = 1000       # above this a sample is worthless
SLEW_RATE = 0.005         # ms per ms: 5 ms per second (a shown second lasts 995 to 1005 ms)
YOUNG = 16                # exchanges before corrections are slewed rather than taken at once
BURST = 16                # exchanges per period step
FIRST_PERIOD_MS = 100     # the FIRST exchanges' period: desk time a second after power-on
BURST_PERIOD_MS = 500     # then this period; every BURST exchanges it doubles
MAX_PERIOD_MS = 14000     # the settled period, less up to a quarter (next_exchange_in_ms)
SHIFTS = 5                # period doublings at most (BURST_PERIOD_MS << SHIFTS >= MAX_PERIOD_MS)
RETRY_MS = 2000           # no reply to a request: ask again this much later (or sooner)
FULL_EVERY = 16           # exchanges between two sums of the moments from the samples
_FIT = FIT_PPM * 1e-6
_FLOOR = FLOOR_PPM * 1e-6
_K_SHIFT = 20             # the band's slopes as ints: K / 2^_K_SHIFT us per doubled ms
START_SPREAD_MS = 200     # a never-synced clock's first request waits up to this (its seed)
LATE_MS = 300             # a reply that came over this long after its request is late: back
                          # off (a Wi-Fi packet held 200 ms is not)
BACKOFF_SHIFTS = 3        # doublings of the periods and the retry at most while backing off


class Clock:
    """Offset and drift of desk time against local ticks (both ms, ints).

    The app: when next_exchange_in_ms(now) is 0, sends sync{t1=now} and calls sent(t1),
    t1 read again once the request is built, as it is written (its building is no part of
    the leg out); on the desk's reply calls sample(t1, t2, t3, now). desk_now_ms(local) is
    then desk time (None before FIRST exchanges); age_ms and error_ms say how much to trust
    it.
    `drift_ppm`: the drift (desk - local slope, ppm) kept from an earlier boot, or None.
    `seed`: an int that differs between tables and boots (the app's table number and boot),
    from which the first request's wait is drawn; None: no wait (0).
    budget_ms, max_delay_ms (MAX_DELAY_MS), retry_ms (RETRY_MS), late_ms (LATE_MS) and
    spread_ms (the first request's wait) are in local ms."""

    def __init__(self, budget_ms=SERIAL_BUDGET_MS, jump_ms=None, drift_ppm=None, scale=1,
                 seed=None):
        # scale: local ms per real ms (a simulated board's faster clock, its LOCAL_PER_REAL):
        # what is about the link's real delays (the budget, the longest delay, the retry,
        # a late reply, the first request's wait) is that many local ms, so a simulated
        # table syncs as a board on the same link. The back-off stops at MAX_PERIOD_MS of
        # local ms (the settled period: the drift's reach), whatever the scale.
        budget_ms *= scale
        self.max_delay_ms = MAX_DELAY_MS * scale
        self.retry_ms = RETRY_MS * scale
        self.late_ms = LATE_MS * scale
        # A multiplicative hash of the seed (Knuth's), so tables numbered 1, 2, 3 ... wait
        # for parts of the spread far apart; computed once (a big int on a board).
        self.spread_ms = 0 if seed is None else \
            int((seed * 2654435761 & 0xFFFFFFFF) * START_SPREAD_MS // 4294967296 * scale)
        self._backoff = 0         # doublings of the periods and the retry now (back-off)
        self._wait_from = None    # local ms of the first look at a first request (spread_ms
                                  # counts from it), None: not looked at since the last link
        self.budget_ms = budget_ms
        self.jump_ms = budget_ms if jump_ms is None else jump_ms
        self._samples = []        # (t1 + t4 ms, t2 - t1 us, t3 - t4 us) less _base: ints,
                                  # oldest first
        self._low = [0] * (NEAR + 1)    # a refit's lowest delays (us), lowest first
        # The weighted moments of the samples (sw, sx, sy, sxx, sxy, syy; x = X - _ox, y =
        # Y - _oy, see _refit) with the weights of floor _wfloor and 4 quant^2 _wq4 (us, us^2);
        # _wfloor None: none kept. _moved: exchanges since they were summed from the samples.
        self._mom = [0.0] * 6
        self._wfloor = None
        self._wq4 = 0
        self._ox = self._oy = 0
        self._moved = 0
        self._base = None         # (t1 + t4, t2 - t1) of the first exchange
        self._count = 0           # exchanges taken since start
        self._last = None         # t4 of the last exchange taken
        self._sent = None         # t1 of the last request
        self._ref = 0             # model: local ms where the line is anchored
        self._off = 0             #   int ms, and
        self._frac = 0.0          #   float ms: desk - local at _ref
        self._prior = 0.0 if drift_ppm is None else drift_ppm * 1e-6
        self._prior_sd = (2 * MAX_PPM if drift_ppm is None else FLASH_PPM) * 1e-6
        self._drift = self._prior  # ms per local ms (ppm / 1e6)
        self._drift_err = self._prior_sd
        self._quant = QUANT_US    # us: the stamps' rounding (QUANT_US_US once us come)
        self._noise = QUANT_MS    # ms: what the offset now may be off by
        self._scale = 1.0         # weighted residuals' variance per unit weight, last fit
        self._slew = 0.0          # ms still to slew in (model - shown) at _slew_at
        self._slew_at = 0
        self._slew_end = 0        # local ms from which nothing is left to slew
        # desk_now_ms(l, since) is l + _memo_rel for since == _memo_since and l in
        # [_memo_from, _memo_to): the model's rounded offset moves by 1 ms every 1 / drift ms
        self._memo_since = None
        self._memo_from = self._memo_to = self._memo_rel = 0

    @property
    def synced(self):
        return self._count >= FIRST

    @property
    def drift_ppm(self):
        return self._drift * 1e6

    @property
    def drift_settled(self):
        """The drift is known to FLASH_PPM (one sd): worth keeping for the next boot."""
        return self._count > YOUNG and self._drift_err < 2 * FLASH_PPM * 1e-6

    def sent(self, local_ms):
        """A sync request left with t1 = local_ms (or was refused by the link then: it counts
        as lost); None: none is out (a new link, where an old request's reply is lost): the
        back-off ends, and a clock never synced waits its spread_ms again. A request sent
        while the last one is unanswered (lost, refused, or its reply refused as too late)
        backs off."""
        if local_ms is None:
            self._backoff = 0
            self._wait_from = None
        elif self._out():
            self._backoff = min(BACKOFF_SHIFTS, self._backoff + 1)
        self._sent = local_ms

    def _out(self):
        # A request left after the last exchange taken, unanswered (or its reply refused).
        return self._sent is not None and (self._last is None or self._sent > self._last)

    def sample(self, t1, t2, t3, t4, us=None):
        """Take one exchange (local t1, t4; desk t2, t3: int ms). `us`: (u1, u2, u3, u4), the
        us past each stamp's ms (ints 0..999) where both ends stamp finer than 1 ms, else
        None. None if taken (it counts for age_ms and refits), else why not: "order" (a stamp
        before its predecessor) or "delay" (below MIN_DELAY_MS, above MAX_DELAY_MS)."""
        out = back = 0                                  # the us parts of t2 - t1 and t3 - t4
        if us is not None:
            out, back = us[1] - us[0], us[2] - us[3]
            self._quant = QUANT_US_US
        if t4 < t1 or t3 < t2:
            return "order"
        delay = ((t4 - t1) - (t3 - t2)) * 1000 - out - back          # us
        if delay < MIN_DELAY_MS * 1000 or delay > self.max_delay_ms * 1000:
            return "delay"
        if t4 - t1 > self.late_ms:
            # The round trip, not the delay: a desk behind on its queue stamps t2 on arrival
            # and t3 when it answers, so its wait is in neither leg.
            self._backoff = min(BACKOFF_SHIFTS, self._backoff + 1)
        elif self._backoff:
            self._backoff -= 1
        if self._base is None:
            self._base = (t1 + t4, t2 - t1)
        bx, by = self._base
        self._count += 1
        self._last = t4
        ss = self._samples
        ss.append((t1 + t4 - bx, (t2 - t1 - by) * 1000 + out, (t3 - t4 - by) * 1000 + back))
        while len(ss) > KEEP or ss[-1][0] - ss[0][0] > 2 * SPAN_MS:
            if self._wfloor is not None:
                self._put(ss[0], -1)
            ss.pop(0)
        self._refit(t4)
        return None

    def _refit(self, now):
        # In the loops: X local ms doubled and Y the offset doubled (us), both from the last
        # exchange's (ints); f, b its bounds (us, from y0), D its delay (us). A weight w' is
        # the model's weight (ms) over 4e6, so sums over w' give the ms sums with a constant
        # factor, taken out where the prior joins them.
        ss = self._samples
        n = len(ss)
        lx, lf, lb = ss[-1]
        bx, by = self._base
        x0 = (lx + bx) // 2                             # the last exchange's local ms
        odd = (lx + bx) & 1                             # and the half ms it lost
        ry = (lf + lb) // 2000                          # its offset, less by (ms)
        ry2 = 2000 * ry
        y0 = ry + by
        low = self._low                                 # the NEAR + 1 lowest delays
        for j in range(NEAR + 1):
            low[j] = 1 << 29
        for s in ss:
            d = s[1] - s[2]
            if d < low[NEAR]:
                j = NEAR
                while j and low[j - 1] > d:
                    low[j] = low[j - 1]
                    j -= 1
                low[j] = d
        lowest = low[0]
        # The drift: least squares through the offsets weighted by their delays, with the
        # prior; the weights are scaled by the last fit's residuals (how good a weight-1
        # sample really is).
        q = self._quant
        q4 = 4 * q * q
        floor = lowest - q - lowest // SLACK_PART       # the legs' floor, about (us)
        # The moments about the last exchange (small: it is near their middle, even in
        # single precision floats): moved there, or summed again.
        m = self._mom
        if floor == self._wfloor and q4 == self._wq4 and self._moved < FULL_EVERY:
            self._shift(lx - odd, ry2)
            self._put(ss[-1], 1)
            self._moved += 1
        else:
            for j in range(6):
                m[j] = 0.0
            self._wfloor, self._wq4, self._ox, self._oy = floor, q4, lx - odd, ry2
            for s in ss:
                self._put(s, 1)
            self._moved = 0
        sw, sx, sy, sxx, sxy, syy = m
        sxx -= sx * sx / sw                             # centred
        sxy -= sx * sy / sw
        syy -= sy * sy / sw
        p = self._scale / (self._prior_sd * self._prior_sd)
        drift = (1000 * sxy + p * self._prior) / (1e6 * sxx + p)     # weights in ms
        drift = max(-_FIT, min(_FIT, drift))
        if n >= 3:
            # the weighted residuals: sum of w' (y - ym - 1000 drift (x - xm))^2
            k = 1000 * drift
            r2 = syy - 2 * k * sxy + k * k * sxx
            self._scale = max(1.0, r2 / (n - 2))
        sxx *= 1e6                                      # ms^2, weights in ms
        sd = (self._scale / (sxx + p)) ** 0.5
        # The offset now: the middle of the band between the lowest outbound line and the
        # highest return line of that slope. Held packets only lengthen legs, so they never
        # set the band. A bound loosens by what WIDEN sd of drift moves it over its age
        # (X <= 0: an upper bound rises with a steeper slope, a lower one falls).
        # In ints, so the loop makes no float: the slopes (us per doubled ms, under 0.35:
        # drift within FIT_PPM, sd within the prior's) as K / 2^_K_SHIFT, and a sample's
        # age A = -X (under 2^22: the span) cut at 2^10, so every product stays a small
        # int on a board. A bound is off by under 3 us.
        wide = WIDEN * sd
        ku = round((drift + wide) * (500 << _K_SHIFT))
        kd = round((drift - wide) * (500 << _K_SHIFT))
        lo = _K_SHIFT - 10
        r0 = ry * 1000
        up = down = None
        for s in ss:
            a = lx - odd - s[0]
            ah = a >> 10
            al = a & 1023
            u = s[1] - r0 + (ku * ah >> lo) + (ku * al >> _K_SHIFT)
            if up is None or u < up:
                up = u
            d = s[2] - r0 + (kd * ah >> lo) + (kd * al >> _K_SHIFT)
            if down is None or d > down:
                down = d
        frac = (up + down) / 2000                       # ms
        if n >= 3:
            # How far the band's edges may sit from the legs' floors: the NEAR-th lowest
            # delay's excess, and the lowest delay over the count (unequal floors are
            # invisible to any 2-way sync).
            noise = q + (low[min(NEAR, n - 1)] - lowest) / 2 + lowest / (2 * n)
        else:
            noise = lowest / 2 + 2 * q                  # one leg may have taken it all
        noise /= 1000
        if self._count > 1:
            # The move of the time shown now; ints apart from floats (y0 may be ~1e9 ms).
            move = (y0 - self._off) + frac + drift * (now - x0) - self._shown(now)
            young = self._count <= YOUNG
            self._slew = move if abs(move) <= self.jump_ms and not young else 0.0
        self._slew_at = now
        self._slew_end = now + int(abs(self._slew) / SLEW_RATE) + 1
        self._memo_to = 0
        self._ref, self._off, self._frac, self._drift = x0, y0, frac, drift
        self._noise = max(q / 1000, noise)
        self._drift_err = 2 * sd + _FLOOR

    def _put(self, s, sign):
        # Add (sign 1) or take out (-1) sample s's terms in the moments, with their weights
        # and origin.
        e = s[1] - s[2] - self._wfloor
        w = sign / (self._wq4 + e * e)
        x = s[0] - self._ox
        y = s[1] + s[2] - self._oy
        wx = w * x
        wy = w * y
        m = self._mom
        m[0] += w
        m[1] += wx
        m[2] += wy
        m[3] += wx * x
        m[4] += wx * y
        m[5] += wy * y

    def _shift(self, ox, oy):
        # The moments about (ox, oy): x' = x - d, y' = y - e.
        d = ox - self._ox
        e = oy - self._oy
        m = self._mom
        sw, sx, sy = m[0], m[1], m[2]
        if d:
            m[3] -= d * (2 * sx - d * sw)
            m[1] = sx - d * sw
        if e:
            m[5] -= e * (2 * sy - e * sw)
            m[2] = sy - e * sw
        if d or e:
            m[4] -= d * sy + e * (sx - d * sw)
        self._ox, self._oy = ox, oy

    def _pending(self, local_ms):
        # What is still to slew in at local_ms (ms, same sign as _slew, shrinking to 0). Once
        # it is all in, an int compare: the time shown is read every frame (floats allocate).
        if local_ms >= self._slew_end:
            return 0.0
        left = abs(self._slew) - SLEW_RATE * (local_ms - self._slew_at)
        if left <= 0:
            return 0.0
        return left if self._slew > 0 else -left

    def _shown(self, local_ms):
        # Desk - local as shown at local_ms, minus the int part _off (a small float).
        v = self._frac + self._drift * (local_ms - self._ref)
        p = self._pending(local_ms)
        return v - p if p else v

    def offset_ms(self, local_ms):
        """Desk - local (float ms) as shown at local_ms, None before FIRST exchanges: what
        desk_now_ms rounds (a float near 1e12 keeps ~0.1 ms on CPython, not on a board)."""
        if not self.synced:
            return None
        return self._off + self._shown(local_ms)

    def desk_now_ms(self, local_ms, since_ms=0):
        """Desk time (int ms) at local tick `local_ms`, less `since_ms` (a desk time: a
        round's start keeps the answer a small int on a board), None before FIRST exchanges.
        Never goes back (bar 1 ms of rounding at a new fit), except at a jump (a correction
        over jump_ms, or any while young): the app keeps journal stamps in order itself.
        Read every frame: once nothing is left to slew, the rounded offset is kept for as
        long as the drift takes to move it by half a ms, and reading it costs no float."""
        if not self.synced:
            return None
        if self._memo_from <= local_ms < self._memo_to and since_ms == self._memo_since:
            return local_ms + self._memo_rel
        v = self._shown(local_ms)
        r = int(round(v))
        rel = self._off - since_ms + r
        if local_ms >= self._slew_end:
            rate = abs(self._drift)
            left = (0.5 - abs(v - r)) * 0.9         # ms the shown offset may still move
            self._memo_since, self._memo_rel, self._memo_from = since_ms, rel, local_ms
            self._memo_to = local_ms + (int(left / rate) if rate * 60000 > left else 60000)
        return local_ms + rel

    def age_ms(self, local_ms):
        """Ms since the last exchange was taken, None before FIRST."""
        return local_ms - self._last if self.synced else None

    def error_ms(self, local_ms):
        """Estimated |desk_now_ms - desk time| (float ms), None before FIRST exchanges:
        the band's looseness, plus the drift's uncertainty times the time since the last
        exchange, plus what is still being slewed in. Path asymmetry is not in it (no
        2-way sync can see it)."""
        if not self.synced:
            return None
        return (self._noise + self._drift_err * abs(local_ms - self._ref)
                + abs(self._pending(local_ms)))

    def next_exchange_in_ms(self, local_ms):
        """Ms until the app should send the next sync request (0: now): FIRST_PERIOD_MS apart
        until the clock gives desk time, then BURST_PERIOD_MS apart for BURST exchanges,
        doubling every BURST up to MAX_PERIOD_MS, and
        sooner (not under BURST_PERIOD_MS) if error_ms would pass budget_ms / 2 first. A
        request left after the last exchange and unanswered is asked again RETRY_MS after it
        left, or the period if shorter, but not before MAX_DELAY_MS: a new request makes the
        reply to the old one worthless, and a slow link (a held packet, a desk behind) must
        still get its answers in. A clock that never synced sends its first request
        spread_ms after its first look since the last link came up. While backing off, the
        period and the retry are doubled that many times (never past MAX_PERIOD_MS, or their
        own length if longer), and nothing comes sooner."""
        first = self._count < FIRST
        period = FIRST_PERIOD_MS if first else BURST_PERIOD_MS << min(SHIFTS,
                                                                      self._count // BURST)
        if period >= MAX_PERIOD_MS:
            # Up to a quarter shorter, varying: a drift times a fixed period that is a whole
            # number of ms would meet the desk's ms at the same phase every time, and 1-ms
            # stamps would never average out.
            period = MAX_PERIOD_MS - self._count * 7919 % (MAX_PERIOD_MS // 4)
        retry = self.retry_ms
        backoff = self._backoff
        if backoff:
            period = min(period << backoff, max(period, MAX_PERIOD_MS))
            retry = min(retry * (1 << backoff), max(retry, MAX_PERIOD_MS))
        due = local_ms
        if self._last is not None:
            due = self._last + period
            if not first and not backoff:
                spare = self.budget_ms / 2 - self._noise
                reach = self._ref + int(spare / self._drift_err) if spare > 0 else self._last
                due = max(min(due, reach), self._last + BURST_PERIOD_MS)
        elif self._sent is None:
            if self._wait_from is None:
                self._wait_from = local_ms
            due = self._wait_from + self.spread_ms
        if self._out():
            due = max(due, self._sent + min(max(period, self.max_delay_ms), retry))
        return max(0, due - local_ms)
