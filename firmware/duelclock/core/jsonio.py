# JSON text both ways, the same bytes on MicroPython and CPython. Pure.
#   strict_json: does a line hold exactly one RFC 8259 JSON text? (checked before decoding)
#   dumps_*: JSON out with a fixed key order and CPython's escaping, written by hand because
#   MicroPython dicts do not keep insertion order and its json.dumps escapes differently.
import json

from . import const

MAX_DEPTH = 8                  # JSON nesting a line may have (an event is flat)


# --- strict JSON ----------------------------------------------------------------------
# MicroPython's json.loads takes what RFC 8259 refuses (trailing commas, leading zeros, raw
# control characters) and CPython's takes NaN; both would then replay a line the other
# rejects. So a line must first pass this validator, the same code on both, and only then
# is it decoded. It also bounds nesting (no RecursionError) and refuses \uD800-\uDFFF
# escapes, which the two decoders read differently (raw UTF-8 text is fine).
#
# It reads bytes (items are ints), never the characters of a str: MicroPython interns each
# character taken out of a str by index or iteration as a qstr, never freed, so replaying a
# record full of distinct characters would fill a 64 KB heap (a 3.6 KB qstr pool at a time).

_WS = b" \t\n\r"
_DIGITS = b"0123456789"
# What the validator expects next: a value; a value or "]"; after a value ("," or a close);
# a key; a key or "}"; nothing (the top value is complete).
_VALUE = const(0)
_VALUE_OR_END = const(1)
_AFTER = const(2)
_KEY = const(3)
_KEY_OR_END = const(4)
_DONE = const(5)


def _string(s, i):
    # s[i] is '"': the index after the closing quote, or -1.
    j = i + 1
    while True:
        q = s.find(b'"', j)
        if q < 0:
            return -1
        b = s.find(b"\\", j, q)
        for c in s[j:q if b < 0 else b]:
            if c < 32:                            # a raw control character
                return -1
        if b < 0:
            return q + 1
        e = s[b + 1:b + 2]
        if e == b"u":
            h = s[b + 2:b + 6].lower()
            if len(h) != 4 or not all(c in b"0123456789abcdef" for c in h) or b"d800" <= h <= b"dfff":
                return -1
            j = b + 6
        elif e and e in b'"\\/bfnrt':
            j = b + 2
        else:
            return -1


def _number(s, i, n):
    # The index after the number starting at s[i], or -1.
    if s[i] == 45:                                # "-"
        i += 1
    j = i
    while j < n and s[j] in _DIGITS:
        j += 1
    if j == i or (s[i] == 48 and j > i + 1):      # "0" leading another digit
        return -1
    if j < n and s[j] == 46:                      # "."
        k = j + 1
        while k < n and s[k] in _DIGITS:
            k += 1
        if k == j + 1:
            return -1
        j = k
    if j < n and s[j] in b"eE":
        k = j + 1
        if k < n and s[k] in b"+-":
            k += 1
        e = k
        while e < n and s[e] in _DIGITS:
            e += 1
        if e == k:
            return -1
        j = e
    return j


def strict_json(s):
    """True if `s` (UTF-8 bytes; a str is encoded first) is exactly one RFC 8259 JSON text
    (nesting up to MAX_DEPTH). One loop with an explicit stack, few calls: it runs on every
    record line on a board. A byte is an int: `c == 44` is `c == ","` (ASCII codes)."""
    if type(s) is str:
        s = s.encode()
    n = len(s)
    i = 0
    stack = []                                    # the closers of the open containers
    want = _VALUE
    while True:
        while i < n and s[i] in _WS:
            i += 1
        if i >= n:
            return want == _DONE
        c = s[i]
        if want == _AFTER:
            if c == 44:                           # ","
                i += 1
                want = _KEY if stack[-1] == 125 else _VALUE      # "}"
                continue
            if c != stack[-1]:
                return False
            stack.pop()
            i += 1
        elif want == _KEY or want == _KEY_OR_END:
            if c == 125 and want == _KEY_OR_END:  # "}"
                stack.pop()
                i += 1
            else:
                if c != 34:                       # '"'
                    return False
                i = _string(s, i)
                if i < 0:
                    return False
                while i < n and s[i] in _WS:
                    i += 1
                if i >= n or s[i] != 58:          # ":"
                    return False
                i += 1
                want = _VALUE
                continue
        elif want == _DONE:
            return False
        elif c == 93 and want == _VALUE_OR_END:   # "]"
            stack.pop()
            i += 1
        elif c in b"{[":
            if len(stack) >= MAX_DEPTH:
                return False
            stack.append(c + 2)                   # "}" and "]" are "{" and "[" + 2 in ASCII
            i += 1
            want = _KEY_OR_END if c == 123 else _VALUE_OR_END   # "{"
            continue
        elif c == 34:                             # '"'
            i = _string(s, i)
        elif c in b"tfn":
            for word in (b"true", b"false", b"null"):
                if s.startswith(word, i):
                    i += len(word)
                    break
            else:
                return False
        elif c == 45 or c in _DIGITS:             # "-"
            i = _number(s, i, n)
        else:
            return False
        if i < 0:
            return False
        want = _AFTER if stack else _DONE


# Bytes that JSON writes as a two-character escape (CPython's json.dumps).
_ESCAPES = {34: '\\"', 92: "\\\\", 10: "\\n", 13: "\\r", 9: "\\t", 8: "\\b", 12: "\\f"}


def quote(s):
    """A JSON string exactly as CPython's json.dumps writes it (ensure_ascii). Not
    json.dumps itself: MicroPython's leaves non-ASCII raw and writes other escapes. Reads
    the UTF-8 bytes, decoding each code point by hand (no str characters: see above)."""
    b = s.encode()
    for c in b:
        if c < 32 or c > 126 or c in b'"\\':
            break
    else:
        return '"' + s + '"'
    parts = ['"']
    i, n = 0, len(b)
    while i < n:
        c = b[i]
        k = 1 if c < 0x80 else 2 if c < 0xE0 else 3 if c < 0xF0 else 4    # UTF-8 length
        if k > 1:
            c &= 0x7F >> k
            for j in range(i + 1, i + k):
                c = (c << 6) | (b[j] & 0x3F)
        if c in _ESCAPES:
            parts.append(_ESCAPES[c])
        elif c < 0x20 or 0x7e < c < 0x10000:
            parts.append("\\u%04x" % c)
        elif c >= 0x10000:
            c -= 0x10000
            parts.append("\\u%04x\\u%04x" % (0xD800 + (c >> 10), 0xDC00 + (c & 0x3FF)))
        else:
            parts.append(b[i:i + 1].decode())     # printable ASCII
        i += k
    parts.append('"')
    return "".join(parts)


def dumps_obj(pairs):
    """JSON object from (key, already-encoded value) pairs, in that order."""
    return "{" + ", ".join(quote(k) + ": " + v for k, v in pairs) + "}"


def dumps_event(ev):
    """An event in the interchange form: t and ev first, then the other keys sorted."""
    pairs = [("t", str(ev["t"])), ("ev", quote(ev["ev"]))]
    for k in sorted(ev):
        if k != "t" and k != "ev":
            v = ev[k]
            t = type(v)         # an int as str() writes it: json.dumps's bytes, less work
            pairs.append((k, quote(v) if t is str else str(v) if t is int else json.dumps(v)))
    return dumps_obj(pairs)
