"""The desk's Encoder: wire.Encoder's lines, byte for byte (tests/host/test_desk_wire.py),
built with CPython's C JSON writer. A round start signs one line for each of 2,000 tables on
the desk's loop thread; core/sign.py's pure-Python canonical JSON was most of it.

Not hmac.digest: OpenSSL's one-shot HMAC lets the GIL go, and the desk's loop thread then
waits behind the MQTT reader thread for it (160 us a line in the bridged round start, against
3 us alone). Copies of hashlib objects keyed once hash a line without letting it go.
"""
import hashlib
import json

from duelclock.core import sign
from duelclock.core.sign import Key, command_key, table_key
from duelclock.core.wire import MAX_LINE_BYTES, VERSION, Encoder, check


def canonical(msg):
    """sign.canonical(msg) for a message wire.check() passed (str keys; dict, list, str,
    int, bool only). json.dumps writes the same bytes unless it escaped something: its
    short escapes (\\n) are not canonical, so a line with a backslash is written by sign.py."""
    text = json.dumps(msg, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if "\\" in text:
        return sign.canonical(msg)
    return text.encode()


class _Key(Key):
    """sign.Key, its padded blocks hashed once: a MAC is two copies and two updates."""

    def __init__(self, key):
        super().__init__(key)
        self._inner_h = hashlib.sha256(self._inner)
        self._outer_h = hashlib.sha256(self._outer)

    def hexmac(self, data):
        h = self._inner_h.copy()
        h.update(data)
        out = self._outer_h.copy()
        out.update(h.digest())
        return out.hexdigest().encode()


class DeskEncoder(Encoder):
    """wire.Encoder at the desk (the event key; each build names its table)."""

    def __init__(self, key, boot):
        super().__init__(key, boot)
        self._macs = {}                  # tbl -> _Key of its command key

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
        key = self._macs.get(tbl)
        if key is None:
            key = self._macs[tbl] = _Key(command_key(table_key(self._event_key, tbl)))
        body = canonical(msg)
        sig = key.hexmac(body)
        line = body[:-1] + b',"sig":"' + sig + b'"}\n'
        if len(line) > MAX_LINE_BYTES + 1:
            raise ValueError("line of %d bytes" % len(line))
        self.seq += 1
        return line
