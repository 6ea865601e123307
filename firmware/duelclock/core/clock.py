# Desk time on a table: NTP-style sync math. Pure: the app passes its ticks in, gets ms out.
#
# The table starts every exchange (wire.py `sync` messages); the desk stamps it:
#
#   table t1 --sync{t1}------------> desk t2 (received)
#   table t4 <--sync{t1,t2,t3}------ desk t3 (sent)
#
#   delay  = (t4 - t1) - (t3 - t2)        time on the wire, both legs
#   offset = ((t2 - t1) + (t3 - t4)) / 2  desk - local at the midpoint; exact if both legs
#                                         take as long (asymmetry is invisible to any 2-way sync)
#
# Local times are the app's ticks_ms UNWRAPPED into an ever-increasing int (ticks_ms wraps
# at 2**30 on MicroPython: the app keeps local += ticks_diff(now, prev)). Desk times are the
# desk's ms (docs/protocol.md). Big numbers stay ints; floats only hold small differences
# (ms within the window, ppm), so boards with single-precision floats lose nothing.
#
# The model: desk(local) = local + off + frac + drift * (local - ref), a least-squares line
# through samples kept as the lowest-delay one per 16-s bucket over the last WINDOW buckets
# (a span that grows with time, not with the exchange rate), the KEEP lowest-delay of those
# fitted. The drift is pulled toward 0 by a +/-MAX_PPM prior, so a span too short for the
# noise cannot claim a big drift. A new fit that moves the time shown by at most jump_ms is
# slewed in at SLEW_RATE; a bigger move (first sync, long loss) jumps. Without a link the
# model runs on its drift, and error_ms grows with the drift's uncertainty.
SERIAL_BUDGET_MS = 5
WIFI_BUDGET_MS = 20
WINDOW = 16               # samples kept: the lowest-delay one of each of the last WINDOW
BUCKET2 = 2 * 16000       #   buckets of 16 s of local time (sample times are kept doubled)
KEEP = 8                  # of which the lowest-delay ones make the fit
MAX_PPM = 100             # crystals are off by tens of ppm, rarely more than this
FIT_PPM = 500             # a fitted drift beyond this is clipped (outliers, not crystals)
FLOOR_PPM = 1             # drift wander (temperature) no fit can rule out
QUANT_MS = 0.5            # 1-ms stamps: no offset is known better than this
MIN_DELAY_MS = -2         # below this a sample is absurd (ms stamps can make 0 look like -2)
MAX_DELAY_MS = 1000       # above this a sample is worthless
SLEW_RATE = 0.0005        # ms per ms: 0.5 ms per second
BURST = 8                 # the first BURST exchanges come BURST_PERIOD_MS apart
BURST_PERIOD_MS = 1000
MIN_PERIOD_MS = 2000
MAX_PERIOD_MS = 64000
RETRY_MS = 2000           # no reply to a request: ask again this much later


class Clock:
    """Offset and drift of desk time against local ticks (both ms, ints).

    The app: when next_exchange_in_ms(now) is 0, sends sync{t1=now} and calls sent(now);
    on the desk's reply calls sample(t1, t2, t3, now). desk_now_ms(local) is then desk time
    (None before the first sample); age_ms and error_ms say how much to trust it."""

    def __init__(self, budget_ms=SERIAL_BUDGET_MS, jump_ms=None):
        self.budget_ms = budget_ms
        self.jump_ms = budget_ms if jump_ms is None else jump_ms
        self._samples = []        # (t1 + t4, 2 * offset, delay): ints, oldest first
        self._count = 0           # samples taken since start
        self._last = None         # t4 of the last sample taken
        self._sent = None         # t1 of the last request
        self._ref = 0             # model: local ms where the line is anchored
        self._off = 0             #   int ms, and
        self._frac = 0.0          #   float ms: desk - local at _ref
        self._drift = 0.0         #   ms per local ms (ppm / 1e6)
        self._noise = QUANT_MS    # ms: spread of the samples about the fitted line
        self._drift_err = MAX_PPM * 1e-6
        self._slew = 0.0          # ms still to slew in (model - shown) at _slew_at
        self._slew_at = 0

    @property
    def synced(self):
        return self._last is not None

    @property
    def drift_ppm(self):
        return self._drift * 1e6

    def sent(self, local_ms):
        """A sync request left with t1 = local_ms."""
        self._sent = local_ms

    def sample(self, t1, t2, t3, t4):
        """Take one exchange (local t1, t4; desk t2, t3). None if taken (it counts for
        age_ms, and refits unless its bucket holds a lower-delay one), else why not: "order"
        (a stamp before its predecessor) or "delay" (below MIN_DELAY_MS, above MAX_DELAY_MS)."""
        if t4 < t1 or t3 < t2:
            return "order"
        delay = (t4 - t1) - (t3 - t2)
        if delay < MIN_DELAY_MS or delay > MAX_DELAY_MS:
            return "delay"
        s = (t1 + t4, (t2 - t1) + (t3 - t4), max(delay, 0))
        same = self._samples and self._samples[-1][0] // BUCKET2 == s[0] // BUCKET2
        self._count += 1
        self._last = t4
        if same and self._samples[-1][2] < s[2]:
            return None                              # its bucket has a better one
        if same:
            self._samples[-1] = s
        else:
            self._samples.append(s)
            if len(self._samples) > WINDOW:
                self._samples.pop(0)
        self._refit(t4)
        return None

    def _refit(self, now):
        best = sorted(self._samples, key=lambda s: (s[2], -s[0]))[:KEEP]   # ties: newest
        n = len(best)
        last = self._samples[-1]
        x0, y0 = last[0] // 2, last[1] // 2              # ints near every sample
        xs = [(s[0] - 2 * x0) / 2 for s in best]         # local ms from x0
        ys = [(s[1] - 2 * y0) / 2 for s in best]         # offset ms from y0
        xm, ym = sum(xs) / n, sum(ys) / n
        sxx = sxy = 0.0
        for i in range(n):
            sxx += (xs[i] - xm) ** 2
            sxy += (xs[i] - xm) * (ys[i] - ym)
        # Least squares with a prior: drift ~ N(0, MAX_PPM) seen through the noise of the
        # last fit, so a span too short for that noise keeps the drift near 0.
        prior = (self._noise / (MAX_PPM * 1e-6)) ** 2
        drift = max(-FIT_PPM * 1e-6, min(FIT_PPM * 1e-6, sxy / (sxx + prior)))
        if n >= 3:
            # Spread about the line, or half the delays' excess over the best one (what
            # unequal legs can hide), whichever is larger.
            spread = (sum((ys[i] - ym - drift * (xs[i] - xm)) ** 2 for i in range(n)) / n) ** 0.5
            spread = max(spread, sum(s[2] - best[0][2] for s in best) / (2 * n))
        else:
            spread = best[0][2] / 2 + 2 * QUANT_MS        # one leg may have taken it all
        ref = x0 + int(round(xm))                         # anchor the line at the centroid
        frac = ym + drift * (ref - x0 - xm)
        if self._count > 1:
            # The move of the time shown now; ints apart from floats (y0 may be ~1e9 ms).
            move = (y0 - self._off) + frac + drift * (now - ref) - self._shown(now)
            self._slew = move if abs(move) <= self.jump_ms else 0.0
        self._slew_at = now
        self._ref, self._off, self._frac, self._drift = ref, y0, frac, drift
        self._noise = max(QUANT_MS, spread)
        # Two posterior standard deviations of the drift, and the wander; MAX_PPM until KEEP
        # buckets are in (a spread from fewer points is itself too uncertain).
        sd = self._noise / (sxx + prior) ** 0.5
        sd = 2 * sd if n >= KEEP else MAX_PPM * 1e-6
        self._drift_err = min(MAX_PPM * 1e-6, sd) + FLOOR_PPM * 1e-6

    def _pending(self, local_ms):
        # What is still to slew in at local_ms (ms, same sign as _slew, shrinking to 0).
        left = abs(self._slew) - SLEW_RATE * (local_ms - self._slew_at)
        if left <= 0:
            return 0.0
        return left if self._slew > 0 else -left

    def _shown(self, local_ms):
        # Desk - local as shown at local_ms, minus the int part _off (a small float).
        return self._frac + self._drift * (local_ms - self._ref) - self._pending(local_ms)

    def desk_now_ms(self, local_ms):
        """Desk time (int ms) at local tick `local_ms`, None before the first sample.
        Never goes back (bar 1 ms of rounding at a new fit), except at a jump (a correction
        over jump_ms): the app keeps journal stamps in order itself."""
        if self._last is None:
            return None
        return local_ms + self._off + int(round(self._shown(local_ms)))

    def age_ms(self, local_ms):
        """Ms since the last sample was taken, None before the first."""
        return None if self._last is None else local_ms - self._last

    def error_ms(self, local_ms):
        """Estimated |desk_now_ms - desk time| (float ms), None before the first sample:
        the fit's spread, plus the drift's uncertainty times the distance from the fitted
        samples' centre, plus what is still being slewed in. Path asymmetry is not in it (no
        2-way sync can see it)."""
        if self._last is None:
            return None
        return (self._noise + self._drift_err * abs(local_ms - self._ref)
                + abs(self._pending(local_ms)))

    def next_exchange_in_ms(self, local_ms):
        """Ms until the app should send the next sync request (0: now): BURST_PERIOD_MS apart
        for the first BURST samples, then when error_ms would pass budget_ms / 2 (so a lost
        reply or two stay inside the budget), MIN_PERIOD_MS to MAX_PERIOD_MS after the last
        sample. A request left after the last sample and unanswered is retried RETRY_MS
        (BURST_PERIOD_MS in the burst) after it left."""
        burst = self._count < BURST
        if self._last is None:
            due = local_ms
        elif burst:
            due = self._last + BURST_PERIOD_MS
        else:
            spare = self.budget_ms / 2 - self._noise
            reach = self._ref + int(spare / self._drift_err) if spare > 0 else self._last
            due = min(max(reach, self._last + MIN_PERIOD_MS), self._last + MAX_PERIOD_MS)
        if self._sent is not None and (self._last is None or self._sent > self._last):
            due = max(due, self._sent + (BURST_PERIOD_MS if burst else RETRY_MS))
        return max(0, due - local_ms)
