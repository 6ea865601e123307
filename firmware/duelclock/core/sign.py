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

    def mac(self, data, more=None):
        """The HMAC of data, then `more` after it (bytes, or None)."""
        h = sha256(self._inner)
        h.update(data)
        if more:
            h.update(more)
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


# An object key as written, '"key":', kept once made: the protocol's keys are few, and each
# message would make them again. Bounded: a forged line's keys fill it at most.
_KEYS = {}
_VALS = {}          # and a short string value as written ('"duel"'), the same way,
_INTS = {}          # and a small int's digits
_KEYS_MAX = 96


def _key(k):
    q = _KEYS.get(k)
    if q is None:
        if type(k) is not str:
            raise ValueError("key not a string")
        q = _quote(k) + ":"
        if len(_KEYS) < _KEYS_MAX:
            _KEYS[k] = q
    return q


def _canon(v, out):
    # Ints first (the commonest), pieces appended, not concatenated: a sixth less time
    # than the first form under MicroPython. A list's items are joined one by one.
    t = type(v)
    if t is int:
        if 0 <= v < 10000:
            q = _INTS.get(v)
            if q is None:
                q = str(v)
                if len(_INTS) < _KEYS_MAX:
                    _INTS[v] = q            # an LP, a round, a count: made once
            out.append(q)
        else:
            out.append(str(v))
    elif t is str:
        q = _VALS.get(v)
        if q is None:
            q = _quote(v)
            if len(_VALS) < _KEYS_MAX and len(v) <= 16:
                _VALS[v] = q                # a phase, a player, a kind: made once
        out.append(q)
    elif t is bool:
        out.append("true" if v else "false")
    elif t is dict:
        sep = "{"
        for k in sorted(v):
            out.append(sep)
            out.append(_key(k))
            _canon(v[k], out)
            sep = ","
        out.append("}" if sep == "," else "{}")
    elif t is list:
        # Each item joined on its own: a record's 12 events in one list of pieces would
        # be ~500 of them, a 2-4 KB block that a fragmented heap may not have (a table
        # died of it); a line's largest block is now the line itself.
        items = []
        for x in v:
            part = []
            _canon(x, part)
            items.append("".join(part))
        out.append("[")
        out.append(",".join(items))
        out.append("]")
    else:
        raise ValueError("no canonical form for %s" % t)


_OUT = []           # canonical()'s pieces: one list, emptied after each use


def canonical(v):
    """UTF-8 bytes of `v` as canonical JSON: object keys sorted by code point, no spaces,
    strings as is except \\" \\\\ and \\u00XX for controls; only dict, list, str, int, bool.
    ValueError for anything else (floats, null) or a string UTF-8 cannot carry."""
    out = _OUT
    while out:                  # pop(): clear() and del out[:] would shrink it (allocate)
        out.pop()
    _canon(v, out)
    body = "".join(out).encode()
    while out:
        out.pop()
    return body


def signed_line(msg, key):
    return signed_body(canonical(msg), key)


def signed_body(body, key):
    """The line of signed bytes `body` (canonical JSON, made however): body with "sig" (the
    HMAC of body, hex) as its last member, and a newline."""
    sig = binascii.hexlify(key.mac(body))
    return b"".join((body[:-1], b',"sig":"', sig, b'"}\n'))      # one copy, not three

