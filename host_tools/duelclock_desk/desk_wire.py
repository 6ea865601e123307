"""The desk's Encoder: wire.Encoder's lines, byte for byte (tests/host/test_desk_wire.py),
signed with CPython's C JSON writer. A round start signs one line for each of 2,000 tables on
the desk's loop thread; core/sign.py's pure-Python canonical JSON was most of it. The bench's
protocol tables (tests/host/tables.py), the firmware's session on CPython, sign with
signed_line here for the same reason (their states are 2,000 lines at a round start too).

Not hmac.digest: OpenSSL's one-shot HMAC lets the GIL go, and the desk's loop thread then
waits behind the MQTT reader thread for it (160 us a line in the bridged round start, against
3 us alone). Copies of the key's pads, hashed once (PaddedKey), hash a line without letting
it go.
"""
import binascii
import hashlib
import json

from duelclock.core import sign
from duelclock.core.wire import Decoder, Encoder


def canonical(msg):
    """sign.canonical(msg) for a message wire.check() passed (str keys; dict, list, str,
    int, bool only). json.dumps writes the same bytes unless it escaped something: its
    short escapes (\\n) are not canonical, so a line with a backslash is written by sign.py."""
    text = json.dumps(msg, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if "\\" in text:
        return sign.canonical(msg)
    return text.encode()


def signed_line(msg, key):
    """sign.signed_line(msg, key), byte for byte, for a message wire.check() passed."""
    body = canonical(msg)
    return body[:-1] + b',"sig":"' + binascii.hexlify(key.mac(body)) + b'"}\n'


class PaddedKey(sign.Key):
    """sign.Key, its padded blocks hashed once: a MAC is two copies and two updates."""

    def __init__(self, key):
        super().__init__(key)
        self._inner_h = hashlib.sha256(self._inner)
        self._outer_h = hashlib.sha256(self._outer)

    def mac(self, data, more=None):
        inner = self._inner_h.copy()
        inner.update(data)
        if more:
            inner.update(more)
        outer = self._outer_h.copy()
        outer.update(inner.digest())
        return outer.digest()


class DeskEncoder(Encoder):
    """wire.Encoder at the desk (the event key; each build names its table), its lines
    signed here (signed_line, with PaddedKeys): what sign.signed_line writes. `keys`: the
    {tbl: key} cache of another DeskEncoder of the same event key to share (each table's
    command key is derived once, in pure Python: a round start's 2,000 are 0.1 s)."""

    _sign = staticmethod(signed_line)
    _key = PaddedKey

    def __init__(self, key, boot, keys=None):
        super().__init__(key, boot)
        if keys is not None:
            self._keys = keys


class DeskDecoder(Decoder):
    """wire.Decoder at the desk, which also says why it dropped the line it was last given:
    `dropped`, a reason of wire.DROPS (None: the caller sets it before each line). The desk
    counts each drop per link where the line is decoded, in the loop or a link's thread."""

    dropped = None

    def _drop(self, reason, key):
        self.dropped = reason
        return Decoder._drop(self, reason, key)
