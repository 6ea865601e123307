# `micropython -m duelclock.replay FILE` (and `duelclock replay FILE` on the desk):
# print the verdict of a match record. Exit 0 with a verdict whatever was rejected;
# exit 2 with one line on stderr when the input is not a match record.
import sys

from duelclock.core.record import MAX_LINE_BYTES, RecordError
from duelclock.core.replay import Replay

CHUNK_BYTES = 512


def read_lines(f):
    """Yield each line of binary file `f` as bytes, or None for a line longer than
    MAX_LINE_BYTES, which is skipped without holding it in memory (a 64 KB heap)."""
    part = b""
    too_long = False
    while True:
        chunk = f.read(CHUNK_BYTES)
        if not chunk:
            break
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                break
            if too_long:
                yield None
            else:
                yield part + chunk[start:nl]
            part = b""
            too_long = False
            start = nl + 1
        if not too_long:
            part += chunk[start:]
            if len(part) > MAX_LINE_BYTES:
                part = b""
                too_long = True
    if too_long:
        yield None
    elif part:
        yield part


def replay_file(path, with_sheet=False):
    """The finished Replay of the record at `path` (RecordError if it is not one)."""
    r = Replay(with_sheet)
    with open(path, "rb") as f:
        for line in read_lines(f):
            r.feed(line)
    r.verdict_json()          # raises RecordError for an empty file
    return r


def main(argv):
    if len(argv) != 1:
        sys.stderr.write("usage: replay FILE\n")
        return 2
    try:
        r = replay_file(argv[0])
    except RecordError as e:
        sys.stderr.write("replay: %s\n" % e)
        return 2
    except OSError as e:
        sys.stderr.write("replay: cannot read %s: %s\n" % (argv[0], e))
        return 2
    print(r.verdict_json())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
