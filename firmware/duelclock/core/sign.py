# The signed bytes of the desk<->table protocol (docs/protocol.md, "Signing").
#
# Pure and MicroPython-compatible. HMAC-SHA256 built on hashlib.sha256 (MicroPython has no
# hmac module; RFC 4231 vectors in tests/core/test_wire.py), the canonical JSON that is
# signed, and the signed line:
#   signed bytes = canonical(message without "sig")   (sorted keys, no spaces)
#   line         = signed bytes with ,"sig":"<hex HMAC>" put before the closing brace, + \n
# Split from wire.py so that each compiles from source in a small heap.
import binascii
from hashlib import sha256


# --- HMAC-SHA256 (RFC 2104) ----------------------------------------------------------------

class Key:
    """One HMAC key, its padded blocks computed once."""

    def __init__(self, key):
        if len(key) > 64:
            key = sha256(key).digest()
        key = key + bytes(64 - len(key))
        self._inner = bytes(b ^ 0x36 for b in key)
        self._outer = bytes(b ^ 0x5C for b in key)

    def mac(self, data):
        h = sha256(self._inner)
        h.update(data)
        h2 = sha256(self._outer)
        h2.update(h.digest())
        return h2.digest()


def hmac_sha256(key, data):
    return Key(key).mac(data)


def table_key(event_key, tbl):
    """Table `tbl`'s own key, derived at the desk: the only key the table holds (the event
    key never leaves the desk machine). The table signs its reports with it."""
    return hmac_sha256(event_key, b"table:" + str(tbl).encode())


def command_key(tbl_key):
    """The key the desk signs its commands to a table with, derived from that table's key:
    a table's report cannot pass as a command, and a table can forge commands to itself only."""
    return hmac_sha256(tbl_key, b"desk")


# Maintenance opens with a one-time code from the desk, never a secret the table holds in a
# form that could be searched offline: the table shows a fresh random challenge of
# CHALLENGE_DIGITS, the desk (holding the event key) derives that table's key and answers
# with UNLOCK_DIGITS of an HMAC over the challenge. A code opens that table for that
# challenge only; the table draws a new challenge for every try.
CHALLENGE_DIGITS = 8
UNLOCK_DIGITS = 6


def challenge(raw):
    """The CHALLENGE_DIGITS digits shown for `raw` (>= 5 random bytes: os.urandom's)."""
    n = 0
    for b in raw[:5]:
        n = n << 8 | b
    return "%08d" % (n % 10 ** CHALLENGE_DIGITS)


def unlock_code(tbl_key, chal):
    """The code that opens maintenance on the table holding `tbl_key` for challenge `chal`
    (its digits, str). The message starts "unlock:", which no signed JSON line does."""
    d = hmac_sha256(tbl_key, b"unlock:" + chal.encode())
    n = 0
    for b in d[:5]:
        n = n << 8 | b
    return "%06d" % (n % 10 ** UNLOCK_DIGITS)


# A judge PIN is stored only as "<rounds>$<salt hex>$<hash hex>": SHA-256 over salt + PIN,
# then `rounds` - 1 more times over the digest + salt. A 4-6 digit PIN is a small space: the
# lockout guards it on the table; the rounds make a search of a copied config cost
# rounds x 10**6 hashes per PIN, the salt keeps one search from serving every table.
PIN_ROUNDS = 2000


def pin_hash(pin, salt, rounds=PIN_ROUNDS):
    """The stored form of `pin` (str of digits) under `salt` (bytes)."""
    h = sha256(salt + pin.encode()).digest()
    for _ in range(rounds - 1):
        h = sha256(h + salt).digest()
    return "%d$%s$%s" % (rounds, binascii.hexlify(salt).decode(), binascii.hexlify(h).decode())


def pin_matches(pin, stored):
    """Whether `pin` is the PIN `stored` (a pin_hash) was made from; False for anything
    that is not a pin_hash (a PIN in clear is never compared)."""
    try:
        rounds, salt, _ = stored.split("$")
        return same(pin_hash(pin, binascii.unhexlify(salt), int(rounds)).encode(),
                    stored.encode())
    except (AttributeError, ValueError):
        return False


def same(a, b):
    """a == b (bytes) in time independent of where they differ: a SHA-256 of each is
    compared. That compare's time says at most how far the two hashes agree, and the hash of
    a secret is no help in finding it (a preimage); two C-speed hashes beat a Python loop."""
    return sha256(a).digest() == sha256(b).digest()


# --- canonical JSON ----------------------------------------------------------------------

def _quote(s):
    # The common case at C speed (min, in): nothing to escape; one string made.
    if not s or min(s) >= " " and '"' not in s and "\\" not in s:
        return '"%s"' % s
    out = ['"']
    for c in s:
        if c == '"' or c == "\\":
            out.append("\\" + c)
        elif c < " ":
            out.append("\\u%04x" % ord(c))
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


# Written into one buffer made once (_Out): a line makes no string per value, no list of
# pieces and no joined copies; what it allocates is its own bytes. Quoted keys ('"key":'),
# quoted string values and dicts' sorted key lists are kept once made: a protocol's keys,
# phases and players are few, and every message would make them again. Bounded: a forged
# line's keys and values fill them at most.
_KEYS = {}
_VALS = {}
_KEPT_MAX = 96
_ORDERS = []        # sorted key lists of the dicts written, a message kind's found again
_ORDERS_MAX = 24    # by its keys (no list made per dict)
_HEX = b"0123456789abcdef"
_SMALL = 0x3fffffff     # ints within +/- this are small on every port: written digit by digit


def _key(k):
    q = _KEYS.get(k)
    if q is None:
        if type(k) is not str:
            raise ValueError("key not a string")
        q = (_quote(k) + ":").encode()
        if len(_KEYS) < _KEPT_MAX:
            _KEYS[k] = q
    return q


def _val(v):
    q = _VALS.get(v)
    if q is None:
        q = _quote(v).encode()          # UnicodeError (a ValueError): a lone surrogate
        if len(_VALS) < _KEPT_MAX and len(v) <= 16:
            _VALS[v] = q
    return q


def _order(d):
    """d's keys sorted by code point: a list kept from a dict with the same keys, or made."""
    n = len(d)
    for keys in _ORDERS:
        if len(keys) == n:
            for k in keys:
                if k not in d:
                    break
            else:
                return keys
    keys = sorted(d)
    for k in keys:
        if type(k) is not str:
            raise ValueError("key not a string")
    if len(_ORDERS) < _ORDERS_MAX:
        _ORDERS.append(keys)
    return keys


class _Out:
    """A line's bytes: buf[:n]. The buffer grows (a new one) for a longer line."""

    def __init__(self):
        self.buf = bytearray(1280)
        self.n = 0

    def put(self, b):
        n = self.n
        m = n + len(b)
        if m > len(self.buf):
            self.buf = self.buf + bytes(m + 256)
        self.buf[n:m] = b
        self.n = m

    def byte(self, c):
        if self.n == len(self.buf):
            self.buf = self.buf + bytes(256)
        self.buf[self.n] = c
        self.n += 1

    def num(self, v):
        if v < -_SMALL or v > _SMALL:
            self.put(str(v).encode())
            return
        if v < 0:
            self.byte(45)
            v = -v
        d = 1
        while v // d >= 10:
            d *= 10
        while d:
            self.byte(48 + v // d % 10)
            d //= 10

    def hex(self, raw):
        for b in raw:
            self.byte(_HEX[b >> 4])
            self.byte(_HEX[b & 15])

    def done(self):
        """The line as bytes of its own."""
        return bytes(memoryview(self.buf)[:self.n])


def _canon(v, out):
    t = type(v)
    if t is int:
        out.num(v)
    elif t is str:
        out.put(_val(v))
    elif t is bool:
        out.put(b"true" if v else b"false")
    elif t is dict:
        sep = 123                                       # {
        for k in _order(v):
            out.byte(sep)
            out.put(_key(k))
            _canon(v[k], out)
            sep = 44                                    # ,
        if sep == 123:
            out.byte(123)
        out.byte(125)
    elif t is list:
        sep = 91                                        # [
        for x in v:
            out.byte(sep)
            _canon(x, out)
            sep = 44
        if sep == 91:
            out.byte(91)
        out.byte(93)
    else:
        raise ValueError("no canonical form for %s" % t)


_FREE = [_Out()]    # buffers not in use: a board has one; the desk's threads take their own


def _take():
    try:
        out = _FREE.pop()
    except IndexError:                  # another thread has it (the desk)
        out = _Out()
    out.n = 0
    return out


def canonical(v):
    """UTF-8 bytes of `v` as canonical JSON: object keys sorted by code point, no spaces,
    strings as is except \\" \\\\ and \\u00XX for controls; only dict, list, str, int, bool.
    ValueError for anything else (floats, null) or a string UTF-8 cannot carry."""
    out = _take()
    try:
        _canon(v, out)
        return out.done()
    finally:
        _FREE.append(out)


def signed_line(msg, key):
    """msg's canonical JSON with "sig" (the HMAC of that JSON, hex) as its last member,
    and a newline: the line as sent."""
    out = _take()
    try:
        _canon(msg, out)
        d = key.mac(memoryview(out.buf)[:out.n])
        out.n -= 1                                      # the closing brace: sig goes first
        out.put(b',"sig":"')
        out.hex(d)
        out.put(b'"}\n')
        return out.done()
    finally:
        _FREE.append(out)

