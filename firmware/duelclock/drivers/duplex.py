# The desk link as one non-blocking stream when a port gives it in two halves: USB CDC (or
# the REPL's UART) on MicroPython is sys.stdin.buffer to read and sys.stdout.buffer to
# write, and their read(n) waits for all n bytes. Duplex.read(n) returns what has arrived
# (up to n bytes; b"" at end of input), and select.poll can watch a Duplex (MicroPython calls
# ioctl for Python streams), so the app's link polls it like a socket.
#
# Cost: one poll and one read(1) per byte received (a JSON line of 200 bytes: 400 calls; not
# measured on a board): MicroPython's stdin gives no count of what has arrived, so the link
# takes at most POLL_BYTES a poll from a Duplex: a sync reply (< 256 bytes) in one poll, so
# its arrival time (t4) is not held back behind the budget; about 50 ms at the ~0.2 ms a
# byte USB CDC takes on an RP2040 read byte by byte, against 850 ms for its 4 KB. During play the app
# turns the REPL's interrupt character off (app._main): a 0x03 here is a byte like any other.
import io
import select

_POLL = 3                               # MP_STREAM_POLL: the ioctl select.poll makes


class Duplex(io.IOBase):
    POLL_BYTES = 256                    # link.StreamLink's budget for this stream
    def __init__(self, rx, tx):
        self.rx = rx
        self.tx = tx
        self._poll = select.poll()
        self._poll.register(rx, select.POLLIN)

    def _ready(self):
        """POLLIN (and POLLHUP/POLLERR) as rx reports them now."""
        ev = 0
        for _, flags in self._poll.poll(0):
            ev |= flags
        return ev

    def read(self, n):
        out = b""
        while len(out) < n and self._ready():
            c = self.rx.read(1)
            if not c:
                break
            out += c
        return out

    def write(self, buf):
        return self.tx.write(buf)

    def ioctl(self, req, arg):
        if req == _POLL:
            return (arg & select.POLLOUT) | (self._ready() & (select.POLLIN | select.POLLHUP |
                                                               select.POLLERR))
        return 0
