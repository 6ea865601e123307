# `micropython -m duelclock.replay FILE` (and `duelclock replay FILE` on the desk):
# print the verdict of a match record. Exit 0 with a verdict whatever was rejected;
# exit 2 with one line on stderr when the input is not a match record.
import gc
import os
import sys

# MicroPython: collect after every 4 KB allocated, and after each module of the rules engine
# is compiled. Compiling from source leaves the compiler's garbage between live bytecode, and
# a 64 KB heap then lacks a free 2 KB block (`make bench` replay_heap_from_source_bytes).
if hasattr(gc, "threshold"):
    gc.threshold(4096)
for _name in ("record", "rules", "judgements", "handlers", "match"):
    __import__("duelclock.core." + _name)
    gc.collect()

from duelclock.core.record import MAX_LINE_BYTES, Lines
from duelclock.core.replay import RecordError, Replay, write_verdict

CHUNK_BYTES = 512
KEPT_REJECTIONS = 64     # held from the first pass; more are found again by a second


def read_lines(f):
    """Yield each line of binary file `f` as bytes, or None for a line longer than
    MAX_LINE_BYTES, which is skipped without holding it in memory (core/record.py Lines): one
    chunk buffer and the line begun, so a 10 MB line costs nothing in a 64 KB heap."""
    lines = Lines(MAX_LINE_BYTES)
    chunk = bytearray(CHUNK_BYTES)
    while True:
        got = f.readinto(chunk)
        if not got:
            break
        for line in lines.feed(chunk, got):
            yield line
    if lines.part != b"":
        yield lines.part


def _fed(path, r):
    """Feed the record at `path` to Replay `r`, yielding after each line."""
    with open(path, "rb") as f:
        for line in read_lines(f):
            r.feed(line)
            yield


def replay_file(path, with_sheet=False):
    """The finished Replay of the record at `path` (RecordError if it is not one)."""
    r = Replay(with_sheet)
    for _ in _fed(path, r):
        pass
    if r.match is None:
        raise RecordError("not a match record: no events")
    return r


def _rereadable(path):
    # A regular file can be read a second time; a pipe (/dev/stdin, <(...)) cannot.
    try:
        return os.stat(path)[0] & 0xF000 == 0x8000
    except OSError:
        return False


def _rejections(path):
    # The record's rejections, (index, why), found by a second replay one at a time.
    r = Replay()
    for _ in _fed(path, r):
        if r.rejected:
            yield r.rejected.pop()


def main(argv):
    if len(argv) != 1:
        sys.stderr.write("usage: replay FILE\n")
        return 2
    r = Replay()
    many = False              # more rejections than KEPT_REJECTIONS: let go, found again
    keep = KEPT_REJECTIONS if _rereadable(argv[0]) else -1    # -1: hold them all
    try:
        for _ in _fed(argv[0], r):
            if 0 <= keep < len(r.rejected):
                r.rejected = []
                many = True
        if r.match is None:
            raise RecordError("not a match record: no events")
    except RecordError as e:
        sys.stderr.write("replay: %s\n" % e)
        return 2
    except OSError as e:
        sys.stderr.write("replay: cannot read %s: %s\n" % (argv[0], e))
        return 2
    v, rejected = r.match.verdict(), r.rejected
    r = None
    gc.collect()
    # Written in pieces, the rejections of a long list as a second replay finds them: the
    # verdict is never held whole, nor a long list, so any number of them fits a 64 KB heap
    # (held whole, 300 short ones did not). Few, or a pipe: held, no second pass.
    write_verdict(sys.stdout.write, v, _rejections(argv[0]) if many else rejected)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
