# Lines out of bytes that come in any chunking: the one line splitter of the table and the
# desk (the wire Decoder, the journal's and the replay's readers, the desk's links).
#
#   Lines(max_bytes).feed(chunk) -> each line the chunk completes: bytes without b"\n",
#                                   or None for a line longer than max_bytes
#   .rest()                      -> the line begun and not ended (bytes, maybe b""; None if
#                                   too long), and a fresh start
#
# One buffer of max_bytes, allocated once: a longer line is counted, never held, so a 10 MB
# line costs nothing in a 64 KB heap. Pure and MicroPython-compatible. A module of its own
# (108 bytes of mpy more than inside wire.py): the replay must not load the wire's signing
# to read lines (it runs in a 64 KB heap).


class Lines:
    def __init__(self, max_bytes):
        self._buf = bytearray(max_bytes)
        self._mv = memoryview(self._buf)
        self._n = 0                  # bytes of the current line in _buf
        self._long = False           # the current line is over max_bytes: skipped to b"\n"

    def feed(self, data, end=None):
        """Yield the lines completed by data[:end] (default: all of it)."""
        n = len(data) if end is None else end
        view = memoryview(data)
        i = 0
        while i < n:
            nl = data.find(b"\n", i, n)
            stop = n if nl < 0 else nl
            if not self._long:
                if self._n + stop - i > len(self._buf):
                    self._long = True
                else:
                    self._mv[self._n:self._n + stop - i] = view[i:stop]
                    self._n += stop - i
            if nl < 0:
                return
            yield self.rest()
            i = nl + 1

    def rest(self):
        line = None if self._long else bytes(self._mv[:self._n])
        self._n = 0
        self._long = False
        return line

    def begun(self):
        """True while a line is begun and not ended."""
        return self._n > 0 or self._long
