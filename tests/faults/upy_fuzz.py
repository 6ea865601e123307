# The fuzz targets that must hold on the board's Python too: the wire Decoder (both ends)
# and the record parser, each input checked for a crash and for state corruption. Pure and
# MicroPython-compatible: CPython imports the same classes (tests/faults/soak_fuzz.py), so
# both run one code over one corpus and print one outcome per input (test_fuzz.py compares).
#
#   MICROPYPATH=firmware:.frozen micropython tests/faults/upy_fuzz.py CORPUS
#
# CORPUS: one input a line, "<target> <hex bytes>", target t (a table's Decoder: desk
# commands), d (the desk's Decoder: table reports) or p (a record line). Output: one line an
# input, "<index> <hex of the outcome>", then "done <inputs> <crashes> <corruptions>".
# A crash is any exception out of a target (the contract: a Decoder never raises, parse_line
# returns a reason); a corruption is a broken invariant, named in the outcome.
import binascii
import json

from duelclock.core import wire
from duelclock.core.jsonio import dumps_event
from duelclock.core.record import check_event, parse_line, read_line, MAX_LINE_BYTES as RECORD_MAX
from duelclock.core.replay import Replay
from duelclock.core.sign import Key, canonical, command_key, table_key

KEY = bytes(range(32))
TBL = 4                                  # the table whose Decoder is fuzzed ("t")
PROBE_BOOT = 1 << 28                     # probes' Encoder: seq room up to 2**52 + 2**24


class Corrupt(Exception):
    """An invariant broke: the input left the target in a wrong state."""


def count_lines(data):
    """Lines a Decoder must account for (a message or one drop each) in `data`, which ends
    with "\\n": blank ones (nothing, or a lone "\\r") are neither."""
    n = 0
    for piece in data.split(b"\n")[:-1]:
        if len(piece) > wire.MAX_LINE_BYTES or (piece and piece != b"\r"):
            n += 1
    return n


def _signed_in(data, sig):
    # Some line of `data` is a JSON object whose "sig" is `sig`.
    for piece in data.split(b"\n"):
        try:
            obj = json.loads(piece)
        except Exception:                 # noqa: BLE001  not JSON (or not UTF-8): not it
            continue
        if type(obj) is dict and obj.get("sig") == sig:
            return True
    return False


class WireTarget:
    """One long-lived Decoder fed input after input. After each: every line was taken or
    dropped once (counters add up), each message taken is well formed, carries the sig its
    sender's key gives it and a fresh seq, and a valid message built now is taken as is."""

    def __init__(self, side):
        self.side = side
        if side == "t":
            self.dec = wire.Decoder(table_key(KEY, TBL), tbl=TBL)
            self.enc = wire.Encoder(KEY, PROBE_BOOT)
            self.types = wire.DESK_TYPES
        else:
            self.dec = wire.Decoder(KEY)
            self.enc = wire.Encoder(table_key(KEY, TBL), PROBE_BOOT, tbl=TBL)
            self.types = wire.TABLE_TYPES
        self.taken = {}                  # (sender, sync?) -> seqs taken (the desk's window)
        self.keys = {}

    def _key(self, sender):
        k = self.keys.get(sender)
        if k is None:
            k = self.keys[sender] = Key(command_key(table_key(KEY, TBL)) if self.side == "t"
                                        else table_key(KEY, sender))
        return k

    def run(self, data):
        before = dict(self.dec.drops)
        data = data + b"\n"
        step = 1 + len(data) % 97                      # chunking varies with the input
        out = []
        for i in range(0, len(data), step):
            out += self.dec.feed(data[i:i + step])
        delta = []
        total = len(out)
        for r in wire.DROPS:
            n = self.dec.drops[r] - before[r]
            if n < 0:
                raise Corrupt("drop counter %s went down" % r)
            if n:
                delta.append("%s=%d" % (r, n))
                total += n
        if total != count_lines(data):
            raise Corrupt("%d of %d lines accounted for" % (total, count_lines(data)))
        for m in out:
            self._check_taken(m, data)
        self._probe()
        return "m%d %s" % (len(out), ",".join(delta))

    def _check_taken(self, m, data):
        if "sig" in m or wire.check(self.types, m) is not None:
            raise Corrupt("took a malformed message")
        sender = 0 if self.side == "t" else m["tbl"]
        if self.side == "t" and m["tbl"] != TBL:
            raise Corrupt("took a message for table %d" % m["tbl"])
        sig = binascii.hexlify(self._key(sender).mac(canonical(m))).decode()
        if not _signed_in(data, sig):
            raise Corrupt("took a message nobody signed")
        stream = (sender, m["k"] == "sync")
        seqs = self.taken.setdefault(stream, [])
        if m["seq"] in seqs or (self.side == "t" and seqs and m["seq"] <= seqs[-1]):
            raise Corrupt("took seq %d twice or out of order" % m["seq"])
        seqs.append(m["seq"])
        if len(seqs) > 64:
            seqs.pop(0)

    def _probe(self):
        sender = 0 if self.side == "t" else TBL
        last = self.dec.last_seq(sender)
        self.enc.seq = max(self.enc.seq if self.enc.seq < PROBE_BOOT * wire.SEQ_BOOT else 0,
                           (last if last is not None else -1) + 1)
        if self.side == "t":
            fields = {"round": 3, "ms": 60000}
            line = self.enc.build("extend", fields, TBL)
        else:
            fields = {"board": "SIM", "fw": "1"}
            line = self.enc.build("hello", fields)
        got = self.dec.feed(line)
        if len(got) != 1 or got[0]["seq"] != self.enc.seq - 1 or \
                canonical(got[0]) != canonical(json.loads(line[:line.rfind(b',"sig"')] + b"}")):
            raise Corrupt("a valid message after the input was not taken: %s" % self.dec.last_drop)
        self.taken.setdefault((sender, False), []).append(self.enc.seq - 1)


START = b'{"t": 0, "ev": "round_start", "round": 3, "kind": "swiss"}'
DUEL = b'{"t": 1000, "ev": "duel_start", "first": "A"}'


def snapshot(match):
    """The match's state, deep-copied (its note hooks left out)."""
    out = {}
    for k in match.__dict__:
        if k != "on_note":
            out[k] = _copy(match.__dict__[k])
    return out


def _copy(v):
    if type(v) is dict:
        d = {}
        for k in v:
            d[k] = _copy(v[k])
        return d
    if type(v) is list or type(v) is tuple:
        return [_copy(x) for x in v]
    return v


class RecordTarget:
    """parse_line and a Replay in a duel, fed line after line. After each: parse_line gave
    an event that check_event passes and that survives dumps_event, or a reason; a line
    rejected changed the match as a tick at its t would, no more; a tick now is still taken."""

    def __init__(self):
        self.fresh()

    def fresh(self):
        self.r = Replay()
        self.r.feed(START)
        self.r.feed(DUEL)

    def run(self, line):
        ev, why = parse_line(line)
        if ev is None:
            if type(why) is not str or not why:
                raise Corrupt("no event and no reason")
            outcome = "no " + why
        else:
            if why is not None or check_event(ev) is not None:
                raise Corrupt("an event with a reason, or one check_event refuses")
            # The writer must give back what was read; a float can only be in a key the
            # events ignore (events.md), and 1e400 is valid JSON that no writer gives back.
            floats = [k for k in ev if type(ev[k]) is float]
            again, why2 = parse_line(dumps_event(ev)) if not floats else (ev, None)
            if again != ev:
                raise Corrupt("the event does not survive dumps_event: %s" % why2)
            outcome = "ev " + ev["ev"]
        if line.strip() and len(line) <= RECORD_MAX + 2:
            m = self.r.match
            before, n = self.as_a_tick(m, line), len(self.r.rejected)
            self.r.feed(line)
            if len(self.r.rejected) > n:
                if snapshot(m) != before:
                    raise Corrupt("a rejected line changed the match more than a tick at its t")
                outcome += " | refused " + self.r.rejected[-1][1]
            elif ev is None:
                raise Corrupt("replay took a line parse_line refused")
            n = len(self.r.rejected)
            self.r.feed('{"t": %d, "ev": "tick"}' % m.now_ms)
            if len(self.r.rejected) > n:
                raise Corrupt("a tick after the line was refused: " + self.r.rejected[-1][1])
            if m.over or len(self.r.rejected) > 200:
                self.fresh()
        return outcome


    @staticmethod
    def as_a_tick(m, line):
        """The match's state after `line` if it is rejected: a tick at its t (events.md),
        when it has a valid t; otherwise unchanged. Worked out on the match and undone."""
        v, _ = read_line(line)
        tick = {"t": v.get("t"), "ev": "tick"} if type(v) is dict else None
        if tick is None or check_event(tick) is not None:
            return snapshot(m)
        # The engine replaces its lists and dicts rather than change them in place (sheet
        # rows aside, and no sheet here): a shallow copy of each attribute puts it back.
        saved = [(k, dict(v) if type(v) is dict else v) for k, v in m.__dict__.items()]
        m.apply(tick)
        after = snapshot(m)
        for k, v in saved:
            setattr(m, k, v)
        return after


def targets():
    return {"t": WireTarget("t"), "d": WireTarget("d"), "p": RecordTarget()}


def run_one(tgts, kind, data):
    """(outcome, failure): failure is None, "crash: ..." or "corrupt: ..."."""
    try:
        return tgts[kind].run(data), None
    except Corrupt as e:
        return "", "corrupt: %s" % e
    except Exception as e:                 # noqa: BLE001  anything else is a crash
        return "", "crash: %s: %s" % (type(e).__name__, e)


def main(path):
    tgts = targets()
    n = crashes = corrupt = 0
    with open(path, "rb") as f:
        for line in f:
            kind, _, hexed = line.strip().partition(b" ")
            data = binascii.unhexlify(hexed)
            outcome, fail = run_one(tgts, kind.decode(), data)
            if fail:
                if fail.startswith("crash"):
                    crashes += 1
                else:
                    corrupt += 1
                tgts = targets()          # a broken target is not fed on
                outcome = "FAIL " + fail
            print(n, binascii.hexlify(outcome.encode()).decode())
            n += 1
    print("done", n, crashes, corrupt)


if __name__ == "__main__":
    import sys
    main(sys.argv[1])
