# JSON text both ways, the same bytes on MicroPython and CPython. Pure.
#   strict_json: does a line hold exactly one RFC 8259 JSON text? (checked before decoding)
#   dumps_*: JSON out with a fixed key order and CPython's escaping, written by hand because
#   MicroPython dicts do not keep insertion order and its json.dumps escapes differently.
import json

MAX_DEPTH = 8                  # JSON nesting a line may have (an event is flat)


# --- strict JSON ----------------------------------------------------------------------
# MicroPython's json.loads takes what RFC 8259 refuses (trailing commas, leading zeros, raw
# control characters) and CPython's takes NaN; both would then replay a line the other
# rejects. So a line must first pass this validator, the same code on both, and only then
# is it decoded. It also bounds nesting (no RecursionError) and refuses \uD800-\uDFFF
# escapes, which the two decoders read differently (raw UTF-8 text is fine).

def _ws(s, i):
    n = len(s)
    while i < n and s[i] in " \t\n\r":
        i += 1
    return i


def _string(s, i):
    if s[i:i + 1] != '"':
        return -1
    j = i + 1
    while True:
        q = s.find('"', j)
        if q < 0:
            return -1
        b = s.find("\\", j, q)
        seg = s[j:q if b < 0 else b]
        if seg and min(seg) < " ":
            return -1
        if b < 0:
            return q + 1
        e = s[b + 1:b + 2]
        if e == "u":
            h = s[b + 2:b + 6].lower()
            if len(h) != 4 or not all(c in "0123456789abcdef" for c in h) or "d800" <= h <= "dfff":
                return -1
            j = b + 6
        elif e and e in '"\\/bfnrt':
            j = b + 2
        else:
            return -1


def _digits(s, i):
    j = i
    while j < len(s) and "0" <= s[j] <= "9":
        j += 1
    return j


def _number(s, i):
    if s[i:i + 1] == "-":
        i += 1
    j = _digits(s, i)
    if j == i or (s[i] == "0" and j > i + 1):
        return -1
    if s[j:j + 1] == ".":
        k = _digits(s, j + 1)
        if k == j + 1:
            return -1
        j = k
    if s[j:j + 1] in ("e", "E"):
        k = j + 1
        if s[k:k + 1] in ("+", "-"):
            k += 1
        e = _digits(s, k)
        if e == k:
            return -1
        j = e
    return j


def _value(s, i, depth):
    c = s[i:i + 1]
    if c == '"':
        return _string(s, i)
    if c == "{" or c == "[":
        if depth >= MAX_DEPTH:
            return -1
        close = "}" if c == "{" else "]"
        i = _ws(s, i + 1)
        if s[i:i + 1] == close:
            return i + 1
        while True:
            if c == "{":
                i = _string(s, i)
                if i < 0:
                    return -1
                i = _ws(s, i)
                if s[i:i + 1] != ":":
                    return -1
                i = _ws(s, i + 1)
            i = _value(s, i, depth + 1)
            if i < 0:
                return -1
            i = _ws(s, i)
            d = s[i:i + 1]
            if d == close:
                return i + 1
            if d != ",":
                return -1
            i = _ws(s, i + 1)
    for word in ("true", "false", "null"):
        if s.startswith(word, i):
            return i + len(word)
    if c == "-" or "0" <= c <= "9" and c:
        return _number(s, i)
    return -1


def strict_json(s):
    """True if str `s` is exactly one RFC 8259 JSON text (nesting up to MAX_DEPTH)."""
    i = _value(s, _ws(s, 0), 0)
    return i >= 0 and _ws(s, i) == len(s)


# --- JSON out, fixed key order -------------------------------------------------------

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b",
            "\f": "\\f"}


def _q(s):
    """A JSON string exactly as CPython's json.dumps writes it (ensure_ascii). Not
    json.dumps itself: MicroPython's leaves non-ASCII raw and writes other escapes."""
    for c in s:
        if c < " " or c > "~" or c == '"' or c == "\\":
            break
    else:
        return '"' + s + '"'
    parts = ['"']
    for c in s:
        n = ord(c)
        if c in _ESCAPES:
            parts.append(_ESCAPES[c])
        elif n < 0x20 or 0x7e < n < 0x10000:
            parts.append("\\u%04x" % n)
        elif n >= 0x10000:
            n -= 0x10000
            parts.append("\\u%04x\\u%04x" % (0xD800 + (n >> 10), 0xDC00 + (n & 0x3FF)))
        else:
            parts.append(c)
    parts.append('"')
    return "".join(parts)


def dumps_obj(pairs):
    """JSON object from (key, already-encoded value) pairs, in that order."""
    return "{" + ", ".join(_q(k) + ": " + v for k, v in pairs) + "}"


def dumps_list(items):
    return "[" + ", ".join(items) + "]"


def dumps_ab(d):
    return dumps_obj((("A", str(d["A"])), ("B", str(d["B"]))))


def dumps_event(ev):
    """An event in the interchange form: t and ev first, then the other keys sorted."""
    pairs = [("t", str(ev["t"])), ("ev", _q(ev["ev"]))]
    for k in sorted(ev):
        if k != "t" and k != "ev":
            v = ev[k]
            pairs.append((k, _q(v) if type(v) is str else json.dumps(v)))
    return dumps_obj(pairs)


def dumps_verdict(v, rejected):
    """The verdict of events.md as one JSON line. `v` is Match.verdict(); `rejected`
    a list of (index, why)."""
    duels = dumps_list([dumps_obj((("winner", _q(d["winner"])), ("by", _q(d["by"])))) for d in v["duels"]])
    pens = dumps_list([dumps_obj((("p", _q(x["p"])), ("kind", _q(x["kind"])), ("code", _q(x["code"]))))
                       for x in v["penalties"]])
    rej = dumps_list([dumps_obj((("index", str(i)), ("why", _q(w)))) for i, w in rejected])
    return dumps_obj((
        ("result", _q(v["result"])), ("wins", dumps_ab(v["wins"])), ("duels", duels),
        ("phase", _q(v["phase"])), ("lp", dumps_ab(v["lp"])), ("penalties", pens),
        ("rejected", rej)))
