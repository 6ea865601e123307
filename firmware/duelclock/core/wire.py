# The desk<->table protocol (docs/protocol.md): signed JSON lines, sans-I/O.
#
# Pure and MicroPython-compatible: bytes in, messages out; messages in, bytes out. The
# caller owns the link (USB serial, MQTT) and the clock.
#
#   Encoder.build(k, fields) --line--> any link, any chunking --> Decoder.feed(bytes) --> [msg]
#
# A line is one JSON object and "\n". Every message has v (VERSION), k (type), tbl (the
# table addressed or sending), seq (sender's sequence number) and sig, the hex
# HMAC-SHA256 of its canonical JSON without sig (sign.py). Every message concerns one table
# and is signed with a key of that table only: its reports with table_key(event_key, tbl),
# the desk's commands to it with command_key(that key). A table holds its own key, never the
# event key. A receiver re-encodes what it parsed, so any JSON writer may produce the line.
#
# A Decoder never raises on input: every line comes out as a message (a dict without "sig")
# or is counted in `drops` under exactly one reason of DROPS, checked in this order:
#   size > json > version > type > field > table > unsigned > sig > replay
import binascii
import json

from .record import Lines
from .sign import Key, canonical, command_key, same, signed_body, signed_line, table_key

VERSION = 1
MAX_LINE_BYTES = 1024     # without the "\n"; a longer line is skipped, never buffered
MAX_TABLE = 9999
MAX_INT = 1 << 53         # every int field is within +/- 2**53 (exact in a double on the desk)
MAX_STR = 64              # chars in a string field
SEQ_BOOT = 1 << 24        # seq = boot * SEQ_BOOT + n, n < SEQ_BOOT messages per boot
REPORT_WINDOW = 32        # the desk accepts a report up to 32 seqs late (reordered by MQTT QoS)
DROPS = ("size", "json", "version", "type", "field", "table", "unsigned", "sig", "replay")


# --- fields of each message type ----------------------------------------------------------

def _uint(v):
    return type(v) is int and 0 <= v < MAX_INT


def _int(v):
    return type(v) is int and -MAX_INT < v < MAX_INT


def _str(v):
    return type(v) is str and 0 < len(v) <= MAX_STR


def _bool(v):
    return type(v) is bool


def _pct(v):
    return type(v) is int and 0 <= v <= 100


def _scalar(v):
    return _int(v) or _str(v) or type(v) is bool


def _ab(ok):
    def check(v):
        return type(v) is dict and len(v) == 2 and ok(v.get("A")) and ok(v.get("B"))
    return check


_ab_int = _ab(_int)
_ab_str = _ab(_str)


def _events(v):
    # Match-record events (docs/record.md): at most 16 keys each, scalars but for a
    # round_start's `names` (two strings), so the depth stays bounded; their rules are
    # replay's business.
    if type(v) is not list or len(v) > 64:
        return False
    for ev in v:
        if type(ev) is not dict or len(ev) > 16:
            return False
        for k in ev:
            if not _str(k) or not (_scalar(ev[k]) or k == "names" and _ab_str(ev[k])):
                return False
    return True


def event_bytes(ev):
    """A record event (a dict) as a record message carries it: its canonical JSON, for
    Encoder.build's `events`; ValueError where the receiver would refuse it (_events)."""
    if not _events([ev]):
        raise ValueError("field: events")
    return canonical(ev)

# k -> (required (key, check) pairs, optional pairs). Every message is for one table (a
# command) or from one table (a report): tbl 1..MAX_TABLE.
DESK_TYPES = {   # desk -> table
    "round": ((("round", _uint), ("kind", _str), ("start_ms", _int), ("limit_s", _uint),
               ("cap_s", _uint), ("extra_turns", _uint), ("seating", _bool)),
              (("names", _ab_str), ("lang", _str), ("rules", _str), ("pens", _events),
               ("judge_extend", _bool))),
    "pause": ((("at_ms", _int),), ()),
    "resume": ((("at_ms", _int),), ()),
    "extend": ((("round", _uint), ("ms", _uint)), (("at_ms", _int),)),
    # stored: the desk holds these events (no final ack: the result is still to settle)
    "ack": ((("round", _uint), ("events", _uint)), (("stored", _bool),)),
    # the request's t1 echoed, the desk's receive and send ms, re: the request's seq; t2u and
    # t3u: the us past t2 and t3, when the request asked for them
    "sync": ((("t1", _int), ("t2", _int), ("t3", _int), ("re", _uint)),
             (("t2u", _uint), ("t3u", _uint))),
}
# A state's optional `locked` is true while judge PIN entry is locked out (wrong PINs);
# `drops` counts the desk lines the table's Decoder dropped since it booted (forged,
# replayed, unsigned, garbled): both show at the desk what is tried at a table. A hello's
# optional `flash_kb` is the journal's free flash, `rssi_dbm` the Wi-Fi signal where the
# board measures it.
TABLE_TYPES = {  # table -> desk
    "hello": ((("board", _str), ("fw", _str)),
              (("battery", _pct), ("flash_kb", _uint), ("rssi_dbm", _int))),
    "state": ((("round", _uint), ("phase", _str), ("duel", _uint), ("wins", _ab_int),
               ("lp", _ab_int), ("turn", _uint), ("remaining_ms", _int)),
              (("sync_age_ms", _uint), ("sync_err_ms", _uint), ("battery", _pct), ("judge", _bool),
               ("journal_full", _bool), ("locked", _bool), ("drops", _uint))),
    "record": ((("round", _uint), ("first", _uint), ("events", _events), ("total", _uint)), ()),
    "result": ((("round", _uint), ("result", _str), ("wins", _ab_int), ("events", _uint)), ()),
    "sync": ((("t1", _int),), (("us", _bool),)),   # us: answer with t2u and t3u too
}


def check(types, msg):
    """None if `msg` (a dict, "sig" taken out) is a well-formed message of `types`
    (DESK_TYPES or TABLE_TYPES), else (drop reason, key at fault). Unknown keys are refused:
    a new field means a new VERSION."""
    v = msg.get("v")
    if type(v) is not int or v != VERSION:
        return "version", "v"
    k = msg.get("k")
    if type(k) is not str:
        return "field", "k"
    spec = types.get(k)
    if spec is None:
        return "type", k[:MAX_STR]
    tbl = msg.get("tbl")
    if type(tbl) is not int or not 1 <= tbl <= MAX_TABLE:
        return "field", "tbl"
    if not _uint(msg.get("seq")):
        return "field", "seq"
    n = 4
    for key, ok in spec[0]:
        if key not in msg or not ok(msg[key]):
            return "field", key
        n += 1
    for key, ok in spec[1]:
        if key in msg:
            if not ok(msg[key]):
                return "field", key
            n += 1
    if len(msg) != n:
        return "field", "unknown key"
    return None


# --- the two ends ---------------------------------------------------------------------------

class Encoder:
    """Checked, signed lines. On a table pass its `tbl` and its own key (table_key(event_key,
    tbl), all it holds): it stamps tbl and signs with that key. At the desk pass the event key
    and leave tbl None: each build names the table it addresses and signs with that table's
    command_key.
    `boot` is the sender's boot counter, persisted and raised by one at every start, so a
    restarted sender's seqs stay above all it sent before (seq = boot * SEQ_BOOT + n)."""

    _sign = staticmethod(signed_line)   # the desk's (desk_wire.py): CPython's C JSON
    _key = Key                          # the desk's: its pads hashed once

    def __init__(self, key, boot, tbl=None):
        self.tbl = tbl
        self._types = DESK_TYPES if tbl is None else TABLE_TYPES
        self._event_key = key if tbl is None else None          # the desk's only
        self._keys = {} if tbl is None else {tbl: Key(key)}    # tbl -> Key signing for it
        self.seq = boot * SEQ_BOOT
        self._end = self.seq + SEQ_BOOT

    def build(self, k, fields, tbl=None, events=None):
        """The line (bytes, with "\\n") of message `k`; ValueError if the receiver would drop it
        (bad field, over MAX_LINE_BYTES) or this boot's SEQ_BOOT seqs are used up (the sender
        persists boot + 1 and makes a new Encoder). `events`: a record's events, each as
        canonical JSON bytes a receiver takes (event_bytes, or flatjson.canonical_flat within
        _events' bounds), put in the line as they are (no event parsed or written again)."""
        if (tbl is None) == (self.tbl is None):
            raise ValueError("tbl is the desk's to give")
        msg = dict(fields)
        if events is not None:
            if "events" in msg or len(events) > 64:
                raise ValueError("field: events")
            msg["events"] = []
        size = len(msg)
        msg["v"], msg["k"], msg["seq"] = VERSION, k, self.seq
        t = msg["tbl"] = self.tbl if tbl is None else tbl
        if len(msg) != size + 4:
            raise ValueError("fields set v, k, seq or tbl")
        why = check(self._types, msg)
        if why:
            raise ValueError("%s: %s" % why)
        if self.seq >= self._end:
            raise ValueError("no seq left in this boot")
        key = self._keys.get(t)
        if key is None:
            key = self._keys[t] = self._key(command_key(table_key(self._event_key, t)))
        if events is None:
            line = self._sign(msg, key)
        else:
            # '"events":[]' is where canonical() wrote the empty list: a key, as no string
            # holds a raw '"'
            body = canonical(msg)
            at = body.find(b'"events":[]') + 10
            line = signed_body(b"".join((body[:at], b",".join(events), body[at:])), key)
        if len(line) > MAX_LINE_BYTES + 1:
            raise ValueError("line of %d bytes" % len(line))
        self.seq += 1
        return line


class Decoder:
    """Bytes in (any chunking), checked messages out. On a table pass its `tbl` and its own key:
    it takes desk commands addressed to tbl, signed with command_key(key), each seq above the
    last (sender 0, the desk). At the desk leave tbl None: it takes reports
    of any table, signed with that table's key, each seq once and at most REPORT_WINDOW late
    (sender = the table's id). A sender's sync messages are a stream of their own, so a sync
    overtaking a command (another MQTT topic or QoS) cannot get the command dropped.
    `seen` {sender: seq} continues the command streams from before a restart: the app
    persists last_seq(sender) with what it journals."""

    def __init__(self, key, tbl=None, seen=None):
        self.tbl = tbl
        self._types = TABLE_TYPES if tbl is None else DESK_TYPES
        self._event_key = key if tbl is None else None      # the desk's only
        self._keys = {}                      # sender -> Key
        if tbl is not None:
            self._keys[0] = Key(command_key(key))
        self._window = REPORT_WINDOW if tbl is None else 1
        self._seen = {}      # (sender, is sync) -> (highest seq, bit i: highest - i taken)
        for sender in seen or ():
            self._seen[(sender, False)] = (seen[sender], (1 << self._window) - 1)
        self._lines = Lines(MAX_LINE_BYTES)
        self.drops = {}
        for r in DROPS:
            self.drops[r] = 0
        self.last_drop = None                # "reason: key", for logs

    def _drop(self, reason, key):
        self.drops[reason] += 1
        self.last_drop = "%s: %s" % (reason, key)

    def last_seq(self, sender):
        """The highest seq of a command or report (not sync) taken from `sender` (0: the
        desk; n: table n), or None."""
        s = self._seen.get((sender, False))
        return s[0] if s else None

    def feed(self, data):
        """Take `data` (bytes or bytearray, any length); return the messages it completed."""
        out = []
        for line in self._lines.feed(data):
            msg = self.take(line)
            if msg is not None:
                out.append(msg)
        return out

    def take(self, line):
        """One whole line (bytes without "\\n"; None: it was over MAX_LINE_BYTES): the
        message, or None (a blank line, or a drop). A caller that splits lines itself (the
        desk: a splitter per link, one Decoder for all) calls this."""
        if line is None:
            return self._drop("size", "line over %d bytes" % MAX_LINE_BYTES)
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line:
            return None                      # a blank line keeps a link alive; not a drop
        try:
            msg = json.loads(line)
        except ValueError:                   # UnicodeError and JSONDecodeError included
            msg = None
        if type(msg) is not dict:
            return self._drop("json", "not a JSON object")
        sig = msg.pop("sig", None)
        why = check(self._types, msg)
        if why:
            return self._drop(why[0], why[1])
        tbl = msg["tbl"]
        if self.tbl is not None and tbl != self.tbl:
            return self._drop("table", str(tbl))
        if sig is None:
            return self._drop("unsigned", msg["k"])
        sender = 0 if self.tbl is not None else tbl
        key = self._keys.get(sender) or Key(table_key(self._event_key, tbl))
        # signed_line appends the sig to the canonical body: a line that ends so is checked
        # as it came, which parses to the message signed (rebuilding the canonical JSON is
        # most of a decode's cost on a board and at the desk).
        try:
            sig = sig.encode()
        except (AttributeError, UnicodeError):  # no string, or a lone surrogate (CPython)
            sig = None
        tail = b',"sig":"%s"}' % sig if sig else None
        close = None
        if tail and line.endswith(tail):     # the body is the line up to it, then "}":
            body = memoryview(line)[:len(line) - len(tail)]     # hashed where it lies
            close = b"}"
        else:
            try:
                body = canonical(msg)
            except ValueError:               # a lone surrogate in a string
                return self._drop("field", "not canonical")
        # Compared blinded (sign.same): the time it takes says nothing of where they differ.
        if sig is None or not same(sig, binascii.hexlify(key.mac(body, close))):
            return self._drop("sig", msg["k"])
        self._keys[sender] = key             # cached once a table has proved it holds it
        if not self._fresh((sender, msg["k"] == "sync"), msg["seq"]):
            return self._drop("replay", str(msg["seq"]))
        return msg

    def _fresh(self, stream, seq):
        # True (and remembered) if `seq` was never taken on `stream` and is less than
        # `_window` below the highest taken; a window of 1 means strictly increasing.
        top, bits = self._seen.get(stream, (-1, 0))
        if seq > top:
            shift = seq - top
            bits = ((bits << shift) | 1) & ((1 << self._window) - 1) if shift < self._window else 1
            top = seq
        else:
            back = top - seq
            if back >= self._window or (bits >> back) & 1:
                return False
            bits |= 1 << back
        self._seen[stream] = (top, bits)
        return True
