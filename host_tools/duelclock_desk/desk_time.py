"""Desk time (ms since the event's epoch) and the wall clock it starts from."""
import time


def unix_ms():
    return time.time_ns() // 1000000


def stamp_of(now_ms):
    """The finest stamp of desk time `now_ms` offers: its exact() (float ms, the us a sync
    reply's t2u and t3u carry) if it has one, else itself (int ms)."""
    return getattr(now_ms, "exact", now_ms)


def machine_boot_id():
    """What names this boot of the machine (Linux), or None: the monotonic clock counts
    from the machine's boot, so a mark taken under the same boot id is still on it."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip() or None
    except OSError:
        return None


class DeskClock:
    """Desk time: ms since the event's epoch, on the monotonic clock (a wall-clock step
    during the event does not move it). Callable from any thread. `speed` > 1 only in
    simulation: desk time then runs that many times faster (the simulated tables' clocks
    run at the same speed).

    Desk time must not step when the desk restarts mid-round either: every table has synced
    to it. So the service keeps a mark (boot id, monotonic ms, desk ms) in the store every
    tick and a restarted desk resume()s from it:
      same machine boot -> desk time carries on along the monotonic clock from the mark
                           (a wall-clock step, NTP or a hand, between the two runs is ignored)
      machine rebooted  -> the wall clock again (nothing else survives), never below the mark
    """

    def __init__(self, epoch_unix_ms, speed=1.0):
        self.speed = speed
        self.boot_id = machine_boot_id()
        self._mono0 = time.monotonic_ns() // 1000000
        self._desk0 = unix_ms() - epoch_unix_ms

    def __call__(self):
        return self._desk0 + int((time.monotonic_ns() // 1000000 - self._mono0) * self.speed)

    def exact(self):
        """Desk time as a float ms, to the us: what a sync reply's stamps are taken with."""
        return self._desk0 + (time.monotonic_ns() / 1e6 - self._mono0) * self.speed

    def mark(self):
        """(boot id, monotonic ms, desk ms) now: what resume() takes after a restart."""
        mono = time.monotonic_ns() // 1000000
        return self.boot_id, mono, self._desk0 + int((mono - self._mono0) * self.speed)

    def resume(self, mark):
        """Continue desk time from a mark of an earlier run (None: first run)."""
        if mark is None:
            return
        boot_id, mono_ms, desk_ms = mark
        if boot_id is not None and boot_id == self.boot_id:
            self._mono0, self._desk0 = mono_ms, desk_ms
        else:
            self._desk0 += max(0, desk_ms - self())
