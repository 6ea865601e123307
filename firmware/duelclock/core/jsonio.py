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

_WS = " \t\n\r"
_DIGITS = "0123456789"
# What the validator expects next: a value; a value or "]"; after a value ("," or a close);
# a key; a key or "}"; nothing (the top value is complete).
_VALUE, _VALUE_OR_END, _AFTER, _KEY, _KEY_OR_END, _DONE = range(6)


def _string(s, i):
    # s[i] is '"': the index after the closing quote, or -1.
    j = i + 1
    while True:
        q = s.find('"', j)
        if q < 0:
            return -1
        b = s.find("\\", j, q)
        for c in s[j:q if b < 0 else b]:
            if c < " ":
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


def _number(s, i, n):
    # The index after the number starting at s[i], or -1.
    if s[i] == "-":
        i += 1
    j = i
    while j < n and s[j] in _DIGITS:
        j += 1
    if j == i or (s[i] == "0" and j > i + 1):
        return -1
    if j < n and s[j] == ".":
        k = j + 1
        while k < n and s[k] in _DIGITS:
            k += 1
        if k == j + 1:
            return -1
        j = k
    if j < n and s[j] in "eE":
        k = j + 1
        if k < n and s[k] in "+-":
            k += 1
        e = k
        while e < n and s[e] in _DIGITS:
            e += 1
        if e == k:
            return -1
        j = e
    return j


def strict_json(s):
    """True if str `s` is exactly one RFC 8259 JSON text (nesting up to MAX_DEPTH). One
    loop with an explicit stack, few calls: it runs on every record line on a board."""
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
            if c == ",":
                i += 1
                want = _KEY if stack[-1] == "}" else _VALUE
                continue
            if c != stack[-1]:
                return False
            stack.pop()
            i += 1
        elif want == _KEY or want == _KEY_OR_END:
            if c == "}" and want == _KEY_OR_END:
                stack.pop()
                i += 1
            else:
                if c != '"':
                    return False
                i = _string(s, i)
                if i < 0:
                    return False
                while i < n and s[i] in _WS:
                    i += 1
                if i >= n or s[i] != ":":
                    return False
                i += 1
                want = _VALUE
                continue
        elif want == _DONE:
            return False
        elif c == "]" and want == _VALUE_OR_END:
            stack.pop()
            i += 1
        elif c == "{" or c == "[":
            if len(stack) >= MAX_DEPTH:
                return False
            stack.append("}" if c == "{" else "]")
            i += 1
            want = _KEY_OR_END if c == "{" else _VALUE_OR_END
            continue
        elif c == '"':
            i = _string(s, i)
        elif c == "t" or c == "f" or c == "n":
            for word in ("true", "false", "null"):
                if s.startswith(word, i):
                    i += len(word)
                    break
            else:
                return False
        elif c == "-" or c in _DIGITS:
            i = _number(s, i, n)
        else:
            return False
        if i < 0:
            return False
        want = _AFTER if stack else _DONE


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
