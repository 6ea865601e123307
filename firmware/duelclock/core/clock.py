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
# through the lowest-delay half of the last WINDOW samples. The drift is pulled toward 0 by a
# +/-MAX_PPM prior (PRIOR_SXX), so a short span cannot claim a big drift. When a new fit moves
# the time shown by at most jump_ms, the move is slewed in at SLEW_RATE (time shown never goes
# back); a bigger move (first sync, long loss) jumps. Without a link the model keeps running
# on its drift, and error_ms grows with the drift's uncertainty.
SERIAL_BUDGET_MS = 5
WIFI_BUDGET_MS = 20
WINDOW = 16               # samples kept (the last ones)
KEEP = 8                  # of which the lowest-delay ones make the fit
MAX_PPM = 100             # crystals are off by tens of ppm, rarely more than this
FIT_PPM = 500             # a fitted drift beyond this is clipped (outliers, not crystals)
PRIOR_SXX = 1e8           # (1 ms / MAX_PPM)**2: the prior's weight, as a sum of squared ms
FLOOR_PPM = 1             # drift wander (temperature) no fit can rule out
QUANT_MS = 1.0            # four 1-ms stamps: no estimate is better than this
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
        self._fit_err = 0.0       # ms: spread of the fit
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
        """Take one exchange. None if taken, else why not: "order" (a stamp before its
        predecessor) or "delay" (below MIN_DELAY_MS or above MAX_DELAY_MS)."""
        if t4 < t1 or t3 < t2:
            return "order"
        delay = (t4 - t1) - (t3 - t2)
        if delay < MIN_DELAY_MS or delay > MAX_DELAY_MS:
            return "delay"
        self._samples.append((t1 + t4, (t2 - t1) + (t3 - t4), max(delay, 0)))
        if len(self._samples) > WINDOW:
            self._samples.pop(0)
        self._count += 1
        self._last = t4
        self._refit(t4)
        return None

    def _refit(self, now):
        best = sorted(self._samples, key=lambda s: s[2])[:KEEP]
        mid2, off2 = self._samples[-1][0], self._samples[-1][1]
        ref, off = mid2 // 2, off2 // 2
        n = len(best)
        xs = [(s[0] - 2 * ref) / 2 for s in best]      # ms from ref
        ys = [(s[1] - 2 * off) / 2 for s in best]      # ms from off
        xm, ym = sum(xs) / n, sum(ys) / n
        sxx = sxy = 0.0
        for i in range(n):
            sxx += (xs[i] - xm) ** 2
            sxy += (xs[i] - xm) * (ys[i] - ym)
        drift = sxy / (sxx + PRIOR_SXX)
        drift = max(-FIT_PPM * 1e-6, min(FIT_PPM * 1e-6, drift))
        frac = ym - drift * xm
        if n >= 3:
            spread = (sum((ys[i] - frac - drift * xs[i]) ** 2 for i in range(n)) / n) ** 0.5
        else:
            spread = best[0][2] / 2                  # one leg could have taken it all
        fit_err = max(QUANT_MS, spread)
        if self._count > 1:
            # Move of the time shown now; ints apart from floats (off may be ~1e9 ms).
            move = (off - self._off) + frac + drift * (now - ref) - self._shown(now)
            self._slew = move if abs(move) <= self.jump_ms else 0.0
        self._slew_at = now
        self._ref, self._off, self._frac, self._drift = ref, off, frac, drift
        self._fit_err = fit_err
        d_err = 2 * fit_err / (sxx + PRIOR_SXX) ** 0.5
        self._drift_err = min(MAX_PPM * 1e-6, d_err) + FLOOR_PPM * 1e-6

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
        Never goes back, except by a jump (a correction over jump_ms)."""
        if self._last is None:
            return None
        return local_ms + self._off + int(round(self._shown(local_ms)))

    def age_ms(self, local_ms):
        """Ms since the last sample was taken, None before the first."""
        return None if self._last is None else local_ms - self._last

    def error_ms(self, local_ms):
        """Estimated |desk_now_ms - desk time| (float ms), None before the first sample:
        the fit's spread, plus the drift's uncertainty over the time since the fit, plus what
        is still being slewed in. Path asymmetry is not in it (no 2-way sync can see it)."""
        if self._last is None:
            return None
        return (self._fit_err + self._drift_err * abs(local_ms - self._ref)
                + abs(self._pending(local_ms)))

    def period_ms(self):
        """The time between exchanges that keeps error_ms under budget_ms / 2 (so a lost
        reply or two still stay inside the budget): BURST_PERIOD_MS while the first BURST
        samples come in, then from the drift's uncertainty, within MIN/MAX_PERIOD_MS."""
        if self._count < BURST:
            return BURST_PERIOD_MS
        spare = self.budget_ms / 2 - self._fit_err
        if spare <= 0:
            return MIN_PERIOD_MS
        return int(max(MIN_PERIOD_MS, min(MAX_PERIOD_MS, spare / self._drift_err)))

    def next_exchange_in_ms(self, local_ms):
        """Ms until the app should send the next sync request (0: now). A request left
        after the last sample and still unanswered is retried RETRY_MS after it left
        (BURST_PERIOD_MS in the burst)."""
        due = local_ms if self._last is None else self._last + self.period_ms()
        if self._sent is not None and (self._last is None or self._sent > self._last):
            retry = BURST_PERIOD_MS if self._count < BURST else RETRY_MS
            due = max(due, self._sent + retry)
        return max(0, due - local_ms)
