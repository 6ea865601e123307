# A journal line's canonical JSON (core/sign.py: keys sorted, no spaces) made from its bytes,
# without parsing it: each event a record message carries is written this way. Pure.
# Apart from jsonio.py so that the replay, which never needs it, compiles from source in a
# 64 KB heap.


def canonical_flat(line, max_keys, max_str):
    """The canonical JSON of core/sign.py (keys sorted, no spaces) of a line dumps_event
    wrote (`{"t": 1, "ev": "x", "k": v, ...}`: a dict's pairs, each key once), made from its
    bytes, not parsed: canonical(json.loads(line)) exactly, with every key and string of 1 to
    `max_str` chars, every int under 2**53, at most `max_keys` keys. None where that is not
    sure from the bytes: an escape (the two forms escape differently; dumps_event escapes
    every byte outside printable ASCII), a raw tab, a space or "!" but between the pairs (in
    a key it would sort otherwise as a piece), a value other than an int, true, false or a
    string, an empty string, a key or string over max_str, more keys, an int of 16 digits
    or more. The caller then parses the line.
    Each piece between ', "' must be one pair, `key": value`, with no other '"' than the
    key's end and a string's ends (none is escaped), and the line's spaces must be the one
    after each key and each ', "': the line is then exactly those pairs. Work in C (bytes
    methods, one sort) but for a short look at each pair: it runs for every event a record
    message carries (a min() or `in` with an int walks the bytes in Python objects: not
    here)."""
    if len(line) < 2 or not line.startswith(b'{"') or line[-1] != 125 \
            or b"\\" in line or b"\t" in line or b"!" in line:
        return None
    parts = line[2:-1].split(b', "')
    if len(parts) > max_keys or line.count(b" ") != 2 * len(parts) - 1:
        return None
    for p in parts:
        k = p.find(b'"')                          # the key's end
        n = len(p) - k - 3                        # the value's bytes
        if k < 1 or k > max_str or n < 1 or not p.startswith(b'": ', k):
            return None
        c = p[k + 3]
        if c == 34:                               # '"': one string, its ends the only '"'
            if n < 3 or n > max_str + 2 or p[-1] != 34 or p.find(b'"', k + 4) != len(p) - 1:
                return None
        elif not (n == 4 and p.endswith(b"true") or n == 5 and p.endswith(b"false")):
            d = p[k + 4 if c == 45 else k + 3:]   # an int: no leading 0, no "-0"
            if not 0 < len(d) < 16 or not d.isdigit() or d[0] == 48 and (len(d) > 1 or c == 45):
                return None
    parts = line.replace(b'": ', b'":')[2:-1].split(b', "')
    parts.sort()
    return b'{"' + b',"'.join(parts) + b"}"
