"""The desk's Encoder: wire.Encoder's lines, byte for byte (tests/host/test_desk_wire.py),
built with CPython's C JSON writer and HMAC. A round start signs one line for each of 2,000
tables on the desk's loop thread; core/sign.py's pure-Python canonical JSON was most of it.
"""
import hmac
import json

from duelclock.core import sign
from duelclock.core.sign import command_key, table_key
from duelclock.core.wire import MAX_LINE_BYTES, VERSION, Encoder, check


def canonical(msg):
    """sign.canonical(msg) for a message wire.check() passed (str keys; dict, list, str,
    int, bool only). json.dumps writes the same bytes unless it escaped something: its
    short escapes (\\n) are not canonical, so a line with a backslash is written by sign.py."""
    text = json.dumps(msg, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if "\\" in text:
        return sign.canonical(msg)
    return text.encode()


class DeskEncoder(Encoder):
    """wire.Encoder at the desk (the event key; each build names its table)."""

    def __init__(self, key, boot):
        super().__init__(key, boot)
        self._raw = {}                   # tbl -> its command key (bytes)

    def build(self, k, fields, tbl=None):
        if tbl is None:
            raise ValueError("tbl is given at the desk, and only there")
        msg = dict(fields)
        size = len(msg)
        msg["v"], msg["k"], msg["seq"], msg["tbl"] = VERSION, k, self.seq, tbl
        if len(msg) != size + 4:
            raise ValueError("fields may not set v, k, seq or tbl")
        why = check(self._types, msg)
        if why:
            raise ValueError("%s: %s" % why)
        if self.seq >= self._end:
            raise ValueError("no seq left in this boot")
        key = self._raw.get(tbl)
        if key is None:
            key = self._raw[tbl] = command_key(table_key(self._event_key, tbl))
        body = canonical(msg)
        sig = hmac.digest(key, body, "sha256").hex().encode()
        line = body[:-1] + b',"sig":"' + sig + b'"}\n'
        if len(line) > MAX_LINE_BYTES + 1:
            raise ValueError("line of %d bytes" % len(line))
        self.seq += 1
        return line
