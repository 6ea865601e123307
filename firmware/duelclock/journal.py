# The table's journal: the match record on flash, one event per append, safe across
# power loss. I/O at the edge (files); the core never sees it. Runs on MicroPython
# (littlefs on a board, any filesystem on the unix port) and on CPython.
#
# Layout under `root` (the caller mounts the filesystem; the directory is the index,
# so there is no index file to tear):
#   m<id>.jsonl  one match; ids count up from 1 and the highest is the current match
#   m<id>.got    the desk has collected the first N bytes of m<id> (N in ASCII)
# A match is collected while its .got covers its whole file. The current match and
# every uncollected match are never deleted; the oldest collected ones are deleted
# when space runs low (start_match, or an append that hits ENOSPC).
#
# A record is the event in the interchange form, a tab, the CRC32 of those bytes as 8
# hex digits, and a newline:
#   {"t": 60000, "ev": "duel_start", "first": "A"}<TAB>5be9bd43
# The JSON never holds a raw tab or newline, so a record that is torn (no newline at the
# end of the file) or damaged (CRC wrong) is found by reading the line alone.
#
# Reading policy (recover, export): a torn record is dropped; a damaged record anywhere
# (a bit flip) is skipped, counted with its line number, and reading goes on, so one bad
# record never hides the ones after it. A record that follows a torn tail is written
# after a seal (a TAB "~" line end) so the torn bytes end as their own line, counted as
# torn, and the new record stays whole.
#
# Each append opens the file in append mode, writes, flushes (fsyncs where os has it)
# and closes it explicitly before returning: the caller confirms on screen only after
# append returned. littlefs commits a file at flush/close, so a power cut leaves the
# file as it was before or after the append. Files are never left to the garbage
# collector (toolchain.md, the littlefs trap); readers reopen the file for each chunk,
# so an abandoned export generator holds no file open.
import os
from binascii import crc32, hexlify
from micropython import const

from duelclock.core.jsonio import dumps_event
from duelclock.core.record import MAX_LINE_BYTES, JournalFull, Lines

_ENOSPC = const(28)             # POSIX and littlefs; MicroPython's errno lacks the name
_CHUNK_BYTES = const(512)
_TAIL_BYTES = const(10)         # TAB, 8 hex digits, newline
SEAL = b"\t~\n"                 # ends a torn line before the next record
SEALED = SEAL[:2]               # ...so the torn line reads as ending in this
_RESERVE_BYTES = const(49152)   # free space start_match makes room for (a long match ~ 40 KB)
_fsync = getattr(os, "fsync", None)


def free_bytes(root):
    """Free bytes on the filesystem of `root`, None where os has no statvfs. A littlefs
    that is full counts more blocks in use than it has (measured on a full 1 MB image:
    f_bavail 2**32 - 6): 0 then."""
    statvfs = getattr(os, "statvfs", None)
    if statvfs is None:
        return None
    s = statvfs(root)
    return s[1] * s[4] if s[4] <= s[2] else 0       # f_frsize * f_bavail; f_blocks


class Recovery:
    """What a read found: `good` records handed over, and `dropped` as (line number
    from 1, why) for each record left out; `torn` and `corrupt` count them by kind."""

    def __init__(self, match_id):
        self.match_id = match_id
        self.good = 0
        self.torn = 0
        self.corrupt = 0
        self.dropped = []

    def drop(self, line_no, why):
        if why == "torn":
            self.torn += 1
        else:
            self.corrupt += 1
        self.dropped.append((line_no, why))


def _hex8(crc):
    # crc as 8 lowercase hex digits, in C (a loop over its bytes here cost a record read
    # or an append more than the CRC); no arithmetic on a CRC above 2**30, a long int on a
    # 32-bit board.
    return hexlify(crc.to_bytes(4, "big"))


def _why_bad(line, ended):
    """None for a good record line (no newline), else why it is dropped."""
    if line is None:
        return "too long"
    if not ended or line.endswith(SEALED):
        return "torn"
    if len(line) <= 9 or line[-9] != 9:
        return "no crc"
    if not line.endswith(_hex8(crc32(line[:-9]))):
        return "crc mismatch"
    return None


def _read_lines(path, end):
    """Yield (line, ended) for the lines in the first `end` bytes of the file at `path`,
    without newlines; ended is False for an unterminated last line; line is None for a
    line longer than any record. The file is closed before each yield."""
    lines = Lines(MAX_LINE_BYTES + _TAIL_BYTES)
    pos = 0
    while pos < end:
        f = open(path, "rb")
        try:
            f.seek(pos)
            chunk = f.read(min(_CHUNK_BYTES, end - pos))
        finally:
            f.close()
        if not chunk:
            break
        pos += len(chunk)
        for line in lines.feed(chunk):
            yield line, True
    if lines.part != b"":
        yield lines.part, False


class Journal:
    def __init__(self, root, reserve_bytes=_RESERVE_BYTES):
        """`root`: a directory on a mounted filesystem (made if missing)."""
        self.root = root
        self.reserve_bytes = reserve_bytes
        self.current = None       # id of the match appends go to
        self._path = None
        self._size = 0            # bytes in the current match file
        self._torn = False        # the current file ends in a torn record
        self._tail = bytearray(b"\t00000000\n")
        try:
            os.mkdir(root)
        except OSError:
            pass                  # exists (a missing parent shows at first use)

    def _file(self, match_id, ext=".jsonl"):
        return "%s/m%d%s" % (self.root, match_id, ext)

    # --- the index -------------------------------------------------------------------

    def matches(self):
        """[(match_id, size_bytes, collected)] oldest first."""
        out = []
        for name in os.listdir(self.root):
            if name[0] == "m" and name.endswith(".jsonl") and name[1:-6].isdigit():
                mid = int(name[1:-6])
                size = self.size_bytes(mid)
                out.append((mid, size, self._got_bytes(mid) >= size))
        out.sort()
        return out

    def size_bytes(self, match_id):
        return os.stat(self._file(match_id))[6]

    def _got_bytes(self, match_id):
        # -1 when the desk has collected nothing (or the mark is unreadable).
        try:
            f = open(self._file(match_id, ".got"), "rb")
            try:
                return int(f.read(12))
            finally:
                f.close()
        except (OSError, ValueError):
            return -1

    def mark_collected(self, match_id, upto_bytes=None):
        """The desk holds the first `upto_bytes` (default: all) of the match. For the
        live match pass the size_bytes() read before export(), so an event appended
        meanwhile is not marked collected."""
        if upto_bytes is None:
            upto_bytes = self.size_bytes(match_id)
        f = open(self._file(match_id, ".got"), "wb")
        try:
            f.write(b"%d" % upto_bytes)
        finally:
            f.close()

    def free_bytes(self):
        """Free bytes on the journal's filesystem, None where os has no statvfs."""
        return free_bytes(self.root)

    def rotate(self, min_free_bytes):
        """Delete the oldest collected matches (not the current one) until
        `min_free_bytes` are free or none is left; returns how many were deleted."""
        deleted = 0
        while True:
            free = self.free_bytes()
            if free is None or free >= min_free_bytes or not self._drop_oldest_collected():
                return deleted
            deleted += 1

    def _drop_oldest_collected(self):
        index = self.matches()
        # The current match stays; with none (before recover), the newest stays, so
        # ids keep counting up.
        keep = self.current if self.current is not None or not index else index[-1][0]
        for mid, size, collected in index:
            if collected and mid != keep:
                # The mark goes first: a cut in between leaves an uncollected match, which
                # the desk collects again, never a mark that would cover a new file.
                os.remove(self._file(mid, ".got"))
                os.remove(self._file(mid))
                return True
        return False

    # --- writing ---------------------------------------------------------------------

    def start_match(self, round_start):
        """Open a new match whose first record is `round_start` (a checked event) and
        make it current; returns its id. Makes room first (rotate). An empty newest
        file (a start cut short by power loss) is reused. If the append fails, there
        is no current match (the error propagates)."""
        index = self.matches()
        mid = 1
        if index:
            mid = index[-1][0] + (0 if index[-1][1] == 0 else 1)
        self.rotate(self.reserve_bytes)
        self.current = mid
        self._path = self._file(mid)
        self._size = 0
        self._torn = False
        try:
            self.append(round_start)
        except Exception:
            self.current = None   # no match without its round_start: start again
            raise
        return mid

    def append(self, ev):
        """Write one checked event to the current match, durably, before returning.
        JournalFull when flash is exhausted and nothing collected is left to delete;
        the event is then not in the record (at most a torn piece, which reading
        drops, on a filesystem less atomic than littlefs). Other OSErrors propagate."""
        if self.current is None:
            raise ValueError("no current match: recover() or start_match() first")
        data = dumps_event(ev).encode()
        if len(data) > MAX_LINE_BYTES:
            raise ValueError("event longer than %d bytes" % MAX_LINE_BYTES)
        self._tail[1:9] = _hex8(crc32(data))
        while True:
            try:
                self._write(data)
                return
            except OSError as e:
                self._read_tail()     # what did the failed write leave behind?
                if e.errno != _ENOSPC:
                    raise
            if not self._drop_oldest_collected():
                raise JournalFull([m[0] for m in self.matches() if not m[2]])

    def _write(self, data):
        f = open(self._path, "ab")
        try:
            if self._torn:
                f.write(SEAL)
            f.write(data)
            f.write(self._tail)
            f.flush()
            if _fsync:
                _fsync(f.fileno())
        finally:
            f.close()
        self._size += len(data) + _TAIL_BYTES + (len(SEAL) if self._torn else 0)
        self._torn = False

    def _read_tail(self):
        # Size and torn state of the current file from the file itself.
        try:
            self._size = self.size_bytes(self.current)
        except OSError:
            self._size = 0        # not created: the next write starts it afresh
            self._torn = False
            return
        if self._size == 0:
            self._torn = False
            return
        f = open(self._path, "rb")
        try:
            f.seek(self._size - 1)
            self._torn = f.read(1) != b"\n"
        finally:
            f.close()

    # --- reading ---------------------------------------------------------------------

    def recover(self, on_line):
        """Boot: make the newest match current and hand each good record's interchange
        line (bytes, no newline) to `on_line` in order, e.g. Replay.feed. Returns a
        Recovery (match_id None when there is no match yet)."""
        index = self.matches()
        if not index:
            return Recovery(None)
        self.current = index[-1][0]
        self._path = self._file(self.current)
        self._read_tail()
        report = Recovery(self.current)
        for line in self._records(self._path, self._size, report):
            on_line(line)
        return report

    def export(self, match_id, upto_bytes=None, report=None):
        """Yield the interchange lines (bytes, no newline) of the match's good records
        in the first `upto_bytes` (default: all); a Recovery passed as `report` counts
        what was left out."""
        if upto_bytes is None:
            upto_bytes = self.size_bytes(match_id)
        return self._records(self._file(match_id), upto_bytes,
                             report if report is not None else Recovery(match_id))

    def read(self, match_id, pos, max_bytes=_CHUNK_BYTES):
        """The good records of the match from byte `pos` on (0, or a position this returned),
        for a reader that keeps its place (the session's record messages), in one open:
        (records, pos_after, at_end). records: [(line, end)] in order, each line in the
        interchange form (bytes, no newline), `end` the position after it; pos_after: after
        the last whole line read (torn and damaged ones are skipped, as export skips them);
        at_end: the file ends there, but for a torn tail (which the next append seals: it
        then reads as a torn line, skipped). Reads max_bytes, more only to end a line that
        began in them and is longer."""
        f = open(self._file(match_id), "rb")
        try:
            f.seek(pos)
            buf = f.read(max_bytes)
            at_end = len(buf) < max_bytes
            while not at_end and buf.find(b"\n") < 0:
                more = f.read(_CHUNK_BYTES)
                at_end = len(more) < _CHUNK_BYTES
                buf += more
        finally:
            f.close()
        out = []
        i = 0
        while True:
            nl = buf.find(b"\n", i)
            if nl < 0:
                return out, pos + i, at_end
            line = buf[i:nl] if nl - i <= MAX_LINE_BYTES + _TAIL_BYTES else None
            i = nl + 1
            if _why_bad(line, True) is None:
                out.append((line[:-9], pos + i))

    def _records(self, path, end, report):
        line_no = 0
        for line, ended in _read_lines(path, end):
            line_no += 1
            why = _why_bad(line, ended)
            if why is None:
                report.good += 1
                yield line[:-9]
            else:
                report.drop(line_no, why)

