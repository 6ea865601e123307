# The desk<->table protocol (core/sign.py, core/wire.py, docs/protocol.md): signing,
# framing, drops.
# Desk and tables are joined by an in-memory link: bytes out of one Encoder, into a Decoder.
import binascii
import json
import hashlib

from duelclock.core import wire
from duelclock.core.clock import FIRST, Clock
from duelclock.core.sign import (canonical, command_key, hmac_sha256, pin_hash,
                                 pin_matches, table_key)
from dc import encode
from duelclock.core.wire import Decoder, Encoder

KEY = b"duelclock test event key"
ROUND = {"round": 2, "kind": "swiss", "start_ms": 123456, "limit_s": 2700, "cap_s": 1800,
         "extra_turns": 1, "seating": False}
EXTEND = {"v": 1, "k": "extend", "tbl": 17, "seq": 1, "round": 2, "ms": 9}
STATE = {"round": 2, "phase": "duel", "duel": 1, "wins": {"A": 0, "B": 0},
         "lp": {"A": 8000, "B": 7000}, "turn": 3, "remaining_ms": 1000}


def tk(tbl):
    """Table `tbl`'s own key: all a table holds (the event key stays at the desk)."""
    return table_key(KEY, tbl)


def with_(d, **more):
    out = dict(d)
    for k in more:
        out[k] = more[k]
    return out


def feed_bytewise(dec, data):
    out = []
    for i in range(len(data)):
        out += dec.feed(data[i:i + 1])
    return out


def only_drop(dec, reason, n=1):
    """The decoder dropped `n` lines, all for `reason`."""
    for r in wire.DROPS:
        assert dec.drops[r] == (n if r == reason else 0), (reason, dec.drops, dec.last_drop)


def raises(fn):
    try:
        fn()
    except ValueError:
        return True
    return False


# --- HMAC-SHA256 (RFC 4231) and the signed bytes ------------------------------------------

def test_hmac_sha256_rfc4231_vectors():
    h = lambda key, data: binascii.hexlify(hmac_sha256(key, data)).decode()
    assert h(b"\x0b" * 20, b"Hi There") == \
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"           # case 1
    assert h(b"Jefe", b"what do ya want for nothing?") == \
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"           # case 2
    assert h(b"\xaa" * 131, b"Test Using Larger Than Block-Size Key - Hash Key First") == \
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"           # case 6


def test_canonical_json_sorts_keys_and_escapes_only_what_json_needs():
    assert canonical({"b": [1, True, False], "a": {"z": "", "y": -3}, "c": "\u00e9\n\"\\"}) == \
        b'{"a":{"y":-3,"z":""},"b":[1,true,false],"c":"\xc3\xa9\\u000a\\"\\\\"}'
    assert canonical({}) == b"{}" and canonical([]) == b"[]"
    for bad in (1.5, None, {"a": 0.0}, {1: 2}, (1, 2)):
        assert raises(lambda: canonical(bad)), bad


def test_a_line_is_byte_identical_everywhere():
    # Golden bytes (the same under CPython and MicroPython); the sig is Python's hmac module's.
    line = encode({"v": 1, "k": "extend", "tbl": 17, "seq": 5, "round": 2, "ms": 180000}, KEY)
    assert line == (b'{"k":"extend","ms":180000,"round":2,"seq":5,"tbl":17,"v":1,"sig":"'
                    b'39588f0c71e738ffa4e244b8e4024c5cdf0465f252cba27913fb7a8b9e8f1742"}\n'), line


def test_table_keys_differ_per_table_direction_and_from_the_event_key():
    keys = [KEY] + [table_key(KEY, t) for t in (1, 2, 17, 170)]
    keys += [command_key(k) for k in keys[1:]]
    assert len(set(keys)) == 9 and len(keys[1]) == 32 and len(keys[-1]) == 32


def test_a_pin_is_stored_salted_and_iterated_and_one_in_clear_never_matches():
    stored = pin_hash("2468", b"salt", 50)
    h = hashlib.sha256(b"salt2468").digest()                # the documented construction
    for _ in range(49):
        h = hashlib.sha256(h + b"salt").digest()
    assert stored == "50$73616c74$" + binascii.hexlify(h).decode()
    assert pin_matches("2468", stored) and not pin_matches("2467", stored)
    assert pin_hash("2468", b"pepper", 50) != stored        # another table's salt
    for bad in ("2468", "", None, "50$zz$00", "0$73616c74$00", "x$y", "50$7$" + "0" * 64):
        assert not pin_matches("2468", bad), bad


# --- two peers over a fake link -------------------------------------------------------------

def test_desk_and_tables_talk_through_a_fake_link_byte_by_byte():
    desk_out = Encoder(KEY, boot=1)
    desk_in = Decoder(KEY)
    t17, t18 = Decoder(tk(17), tbl=17), Decoder(tk(18), tbl=18)
    t17_out = Encoder(tk(17), boot=4, tbl=17)
    names = {"A": "\uae40\ubbfc\uc218", "B": "Budi"}
    link = desk_out.build("round", with_(ROUND, names=names, lang="ko"), tbl=17)
    link += desk_out.build("pause", {"at_ms": 200000}, tbl=17)
    got = feed_bytewise(t17, link)
    assert [m["k"] for m in got] == ["round", "pause"]
    assert got[0]["names"] == names and got[0]["seq"] == wire.SEQ_BOOT and got[1]["tbl"] == 17
    assert "sig" not in got[0]
    assert feed_bytewise(t18, link) == []                       # both were 17's
    only_drop(t18, "table", 2)
    # The table's clock exchange, through the same link.
    clock = Clock()
    req = feed_bytewise(desk_in, t17_out.build("sync", {"t1": 1000}))[0]
    assert (req["k"], req["tbl"], req["t1"]) == ("sync", 17, 1000)
    reply = desk_out.build("sync", {"t1": req["t1"], "t2": 5000, "t3": 5002, "re": req["seq"]},
                           tbl=req["tbl"])
    rep = feed_bytewise(t17, reply)[0]
    assert rep["re"] == 4 * wire.SEQ_BOOT                   # the app takes only its request's reply
    for _ in range(FIRST):                                  # the clock's first exchanges
        assert clock.sample(rep["t1"], rep["t2"], rep["t3"], 1010) is None
    assert clock.desk_now_ms(1010) == 5006
    back = t17_out.build("state", STATE)
    seq = 4 * wire.SEQ_BOOT + 1
    assert feed_bytewise(desk_in, back) == [with_(STATE, v=1, k="state", tbl=17, seq=seq)]
    assert desk_in.last_seq(17) == seq and t17.last_seq(0) == wire.SEQ_BOOT + 1
    for d in (t17, desk_in):
        assert sum(d.drops.values()) == 0, d.drops


def test_any_chunking_gives_the_same_messages():
    enc = Encoder(KEY, boot=0)
    stream = b"".join(enc.build("extend", {"round": 1, "ms": 1000 * i}, tbl=3) for i in range(1, 6))
    stream = stream.replace(b"\n", b"\r\n", 1)          # a serial line ending is fine too
    for size in (1, 2, 3, 7, 64, 1000, len(stream)):
        dec = Decoder(tk(3), tbl=3)
        got = []
        for i in range(0, len(stream), size):
            got += dec.feed(stream[i:i + size])
        assert [m["ms"] for m in got] == [1000, 2000, 3000, 4000, 5000], size
        assert sum(dec.drops.values()) == 0


def test_every_message_type_round_trips():
    desk = {"round": ROUND, "pause": {"at_ms": 5}, "resume": {"at_ms": -5},
            "extend": {"round": 2, "ms": 60000, "at_ms": 70000}, "ack": {"round": 2, "events": 40},
            "sync": {"t1": 1, "t2": 2, "t3": 3, "re": 7}}
    table = {"hello": {"board": "RPI_PICO_W", "fw": "0.1.0", "battery": 80}, "state": STATE,
             "record": {"round": 2, "first": 0, "total": 2, "events": [
                 {"t": 0, "ev": "round_start", "round": 2, "kind": "swiss"},
                 {"t": 5, "ev": "lp", "A": -100, "cost": True}]},
             "result": {"round": 2, "result": "A", "wins": {"A": 2, "B": 0}, "events": 40},
             "sync": {"t1": 99}}
    desk_out, t1_in = Encoder(KEY, 0), Decoder(tk(1), tbl=1)
    for k in desk:
        got = t1_in.feed(desk_out.build(k, desk[k], tbl=1))
        assert got and got[0] == with_(desk[k], v=1, k=k, tbl=1, seq=got[0]["seq"]), k
    t1_out, desk_in = Encoder(tk(1), 0, tbl=1), Decoder(KEY)
    for k in table:
        got = desk_in.feed(t1_out.build(k, table[k]))
        assert got and got[0] == with_(table[k], v=1, k=k, tbl=1, seq=got[0]["seq"]), k


# --- what is dropped, and why ------------------------------------------------------------------

def test_forged_messages_are_dropped():
    line = Encoder(KEY, 0).build("extend", {"round": 2, "ms": 60000}, tbl=17)
    cases = (
        line.replace(b'"ms":60000', b'"ms":600000'),                    # changed after signing
        line.replace(b'"sig":"', b'"sig":"0')[:-3] + b'"}\n',            # sig edited
        encode(EXTEND, b"guessed key"),
        encode(EXTEND, KEY),                                            # the event key itself
        encode(EXTEND, tk(17)),                                         # the table's report key
        encode(EXTEND, command_key(tk(18))),                            # another table's
        line.replace(b'"sig":"', b'"sig":"X')[:-1],                      # not hex, wrong length
    )
    for bad in cases:
        dec = Decoder(tk(17), tbl=17)
        assert dec.feed(bad + (b"" if bad.endswith(b"\n") else b"\n")) == [], bad
        only_drop(dec, "sig")
    # A table's report signed with the event key, another table's key or a command key (a
    # command reflected as a report) is forged too.
    for key in (KEY, tk(18), command_key(tk(17))):
        dec = Decoder(KEY)
        assert dec.feed(encode(with_(STATE, v=1, k="state", tbl=17, seq=0), key)) == []
        only_drop(dec, "sig")


def test_a_line_is_checked_as_it_came_or_on_its_canonical_form():
    # signed_line's own bytes are checked as they came (no canonical JSON rebuilt); a line
    # written otherwise (keys in another order, spaces) is checked on its canonical form; a
    # sig that is no string, or one glued to bytes it was not made for, is a "sig" drop.
    line = Encoder(KEY, 0).build("extend", {"round": 2, "ms": 60000}, tbl=17)
    msg = json.loads(line)
    sig = msg.pop("sig")
    spaced = json.dumps(dict([("sig", sig)] + sorted(msg.items(), reverse=True))).encode()
    for ok in (line, spaced + b"\n"):
        dec = Decoder(tk(17), tbl=17)
        got = dec.feed(ok)
        assert [m["ms"] for m in got] == [60000], ok
    tail = b',"sig":"' + sig.encode() + b'"}\n'
    for bad in (line[:-len(tail)] + b',"sig":5}\n', line[:-len(tail)] + b',"sig":["x"]}\n',
                line[:-len(tail)] + b',"ms":1' + tail):
        dec = Decoder(tk(17), tbl=17)
        assert dec.feed(bad) == [], bad
        only_drop(dec, "sig")


def test_unsigned_messages_are_dropped():
    dec = Decoder(tk(17), tbl=17)
    assert dec.feed(canonical(EXTEND) + b"\n") == []
    only_drop(dec, "unsigned")


def test_replays_and_old_sequence_numbers_are_dropped():
    enc = Encoder(KEY, 0)
    first = enc.build("pause", {"at_ms": 1}, tbl=5)
    second = enc.build("resume", {"at_ms": 2}, tbl=5)
    dec = Decoder(tk(5), tbl=5)
    assert len(dec.feed(first + second)) == 2
    assert dec.feed(second) == [] and dec.feed(first) == []
    only_drop(dec, "replay", 2)
    # Commands must come in order: a held-back pause cannot land after the resume.
    dec = Decoder(tk(5), tbl=5)
    assert [m["k"] for m in dec.feed(second + first)] == ["resume"]
    only_drop(dec, "replay")


def test_sync_replies_are_a_stream_of_their_own():
    enc = Encoder(KEY, 0)
    pause = enc.build("pause", {"at_ms": 1}, tbl=5)
    reply = enc.build("sync", {"t1": 1, "t2": 2, "t3": 3, "re": 0}, tbl=5)
    resume = enc.build("resume", {"at_ms": 2}, tbl=5)
    dec = Decoder(tk(5), tbl=5)
    got = dec.feed(reply + pause + resume + reply + pause)
    assert [m["k"] for m in got] == ["sync", "pause", "resume"]
    only_drop(dec, "replay", 2)
    assert dec.last_seq(0) == 2                                 # commands only: what the app keeps


def test_the_desk_takes_reports_reordered_within_a_window_once_each():
    enc = Encoder(tk(9), 0, tbl=9)
    lines = [enc.build("sync", {"t1": i}) for i in range(wire.REPORT_WINDOW + 2)]
    dec = Decoder(KEY)
    assert len(dec.feed(lines[-1])) == 1
    assert len(dec.feed(lines[2])) == 1 and dec.feed(lines[2]) == []        # late, then again
    assert dec.feed(lines[1]) == [] and dec.feed(lines[0]) == []            # too late
    only_drop(dec, "replay", 3)


def test_restarts_continue_the_sequence():
    before = Encoder(KEY, boot=7).build("pause", {"at_ms": 1}, tbl=2)
    after = Encoder(KEY, boot=8).build("resume", {"at_ms": 2}, tbl=2)   # the desk restarted
    dec = Decoder(tk(2), tbl=2)
    assert len(dec.feed(before + after)) == 2
    seen = dec.last_seq(0)
    # The table restarts too: seeded with the seq it journalled, old lines stay dead.
    dec = Decoder(tk(2), tbl=2, seen={0: seen})
    assert dec.feed(before + after) == []
    only_drop(dec, "replay", 2)
    assert len(dec.feed(Encoder(KEY, boot=9).build("pause", {"at_ms": 3}, tbl=2))) == 1


def test_truncated_lines_are_dropped_and_the_next_line_is_read():
    line = Encoder(KEY, 0).build("round", ROUND, tbl=4)
    dec = Decoder(tk(4), tbl=4)
    assert dec.feed(line[:40] + b"\n" + line) != []
    only_drop(dec, "json")
    dec = Decoder(tk(4), tbl=4)
    assert dec.feed(line[:-5] + b"\n") == []                             # the sig cut short
    only_drop(dec, "json")


def test_a_megabyte_line_is_skipped_unbuffered_and_counted_once():
    dec = Decoder(tk(4), tbl=4)
    chunk = b'{"k":"round","pad":"' + b"x" * 4076
    for i in range(256):                                                # 1 MB, no newline
        assert dec.feed(chunk) == []
        assert dec._lines.part is None                                  # never held
    line = Encoder(KEY, 0).build("extend", {"round": 1, "ms": 5}, tbl=4)
    assert dec.feed(b"tail\n" + line) != []                            # next line is read
    only_drop(dec, "size")


def test_line_length_limit_is_exact():
    for size, reason in ((wire.MAX_LINE_BYTES, "json"), (wire.MAX_LINE_BYTES + 1, "size")):
        dec = Decoder(tk(4), tbl=4)
        assert dec.feed(b"x" * size + b"\n") == []
        only_drop(dec, reason)


def test_messages_for_other_tables_are_dropped():
    enc = Encoder(KEY, 0)
    dec = Decoder(tk(17), tbl=17)
    for18 = enc.build("extend", {"round": 1, "ms": 5}, tbl=18)
    assert dec.feed(for18) == []
    only_drop(dec, "table")
    # Readdressed to 17, 18's command fails 17's key: no line speaks to two tables.
    assert dec.feed(for18.replace(b'"tbl":18', b'"tbl":17')) == []
    assert dec.drops["sig"] == 1
    assert len(dec.feed(enc.build("resume", {"at_ms": 2}, tbl=17))) == 1


def test_malformed_messages_are_dropped_with_a_reason():
    ok = {"v": 1, "k": "extend", "tbl": 4, "seq": 1, "round": 2, "ms": 9}
    cases = (
        (with_(ok, v=2), "version"), (with_(ok, v=True), "version"),
        (with_(ok, k="teleport"), "type"), (with_(ok, k="state"), "type"),   # a report, to a table
        (with_(ok, k=["x"]), "field"), (with_(ok, tbl=0), "field"),          # extend needs a table
        (with_(ok, seq=-1), "field"), (with_(ok, ms=True), "field"), (with_(ok, ms="9"), "field"),
        (with_(ok, ms=2 ** 53), "field"), (with_(ok, extra=1), "field"),
        ({"v": 1, "k": "extend", "tbl": 4, "seq": 1, "ms": 9}, "field"),
        (with_(ROUND, v=1, k="round", tbl=4, seq=1, names={"A": "x", "B": "y", "C": "z"}), "field"),
        (with_(ROUND, v=1, k="round", tbl=4, seq=1, names={"A": "x", "B": ""}), "field"),
        (with_(ROUND, v=1, k="round", tbl=4, seq=1, lang="x" * 65), "field"),
        ({"v": 1, "k": "pause", "tbl": 0, "seq": 1, "at_ms": 1}, "field"),      # no "all tables"
        ({"v": 1, "k": "pause", "tbl": 4, "seq": 1, "at_ms": 1, "tables": [4]}, "field"),
        ({"v": 1, "k": "rules", "tbl": 4, "seq": 1, "name": "KR", "settings": {}}, "type"),
        (with_(ROUND, v=1, k="round", tbl=4, seq=1, judge_extend=1), "field"),
    )
    for msg, reason in cases:
        dec = Decoder(tk(4), tbl=4)
        assert dec.feed(encode(msg, KEY)) == [], msg
        only_drop(dec, reason)
    deep = b"[" * 512 + b"]" * 512                                      # 1024 bytes, valid JSON
    for bad in (b"[1, 2]", b"not json", b'{"v": 1.0}', b"\xff\xfe", b'{"v":1,"sig":"00"', deep,
                b"{" * 1024):
        dec = Decoder(tk(4), tbl=4)
        assert dec.feed(bad + b"\n") == []
        assert sum(dec.drops.values()) == 1 and dec.drops["json"] + dec.drops["version"] == 1, bad
    # Reports: tbl 0 is no table, and record events stay flat.
    rec = {"v": 1, "k": "record", "tbl": 3, "seq": 1, "round": 1, "first": 0, "total": 1,
           "events": [{"t": 0, "ev": "lp", "A": [1]}]}
    for msg in (with_(STATE, v=1, k="state", tbl=0, seq=1), rec):
        dec = Decoder(KEY)
        assert dec.feed(encode(msg, table_key(KEY, msg["tbl"]))) == []
        only_drop(dec, "field")


def test_a_lone_surrogate_is_dropped_on_every_platform():
    line = Encoder(KEY, 0).build("round", with_(ROUND, names={"A": "a", "B": "b"}), tbl=4)
    dec = Decoder(tk(4), tbl=4)
    assert dec.feed(line.replace(b'"A":"a"', b'"A":"\\ud800"')) == []
    assert sum(dec.drops.values()) == 1 and dec.drops["field"] + dec.drops["sig"] == 1


def test_random_bytes_never_raise_and_every_line_is_counted():
    x = 12345
    data = bytearray()
    for i in range(20000):
        x = (1103515245 * x + 12345) & 0x7FFFFFFF
        b = x >> 16 & 0xFF
        data.append(b if b % 40 else 10)                        # a newline now and then
    data = bytes(data)
    lines = [l for l in data.split(b"\n")[:-1] if l.rstrip(b"\r")]
    for dec in (Decoder(tk(1), tbl=1), Decoder(KEY)):
        for i in range(0, len(data), 97):
            assert dec.feed(data[i:i + 97]) == []
        assert sum(dec.drops.values()) == len(lines), (dec.drops, len(lines))


# --- the Encoder only builds what a Decoder takes ------------------------------------------------

def test_the_encoder_refuses_what_the_receiver_would_drop():
    desk, table = Encoder(KEY, 0), Encoder(tk(3), 0, tbl=3)
    assert raises(lambda: desk.build("extend", {"round": 1, "ms": 5}))             # no table
    assert raises(lambda: desk.build("pause", {"at_ms": 1}, tbl=0))                # nor "all"
    assert raises(lambda: table.build("state", STATE, tbl=3))                      # table is fixed
    assert raises(lambda: desk.build("extend", {"round": 1, "ms": -5}, tbl=3))
    assert raises(lambda: desk.build("extend", {"round": 1, "ms": 5, "seq": 9}, tbl=3))
    assert raises(lambda: desk.build("state", STATE, tbl=3))                       # a report
    events = [{"t": i, "ev": "lp", "A": -100, "by": "A"} for i in range(40)]
    record = {"round": 1, "first": 0, "total": 40, "events": events}
    assert raises(lambda: table.build("record", record))                           # > 1024 bytes
    assert desk.seq == 0 and table.seq == 0                                        # none spent
    desk.seq = wire.SEQ_BOOT - 1
    assert desk.build("resume", {"at_ms": 1}, tbl=3)
    assert raises(lambda: desk.build("resume", {"at_ms": 1}, tbl=3))          # next boot, please


def test_a_record_of_ready_event_bytes_is_the_record_of_its_events():
    # A table's record message may carry its events as canonical JSON made before
    # (event_bytes, or flatjson.canonical_flat of journal lines): the line, seq and all, is
    # byte for byte the one built from the event dicts, and the desk takes it.
    from duelclock.core.flatjson import canonical_flat
    from duelclock.core.jsonio import dumps_event
    events = [dict(ROUND, t=0, ev="round_start", names={"A": "Kim", "B": "Lee"}),
              {"t": 91000, "ev": "lp", "B": -1200, "cost": True, "by": "A"},
              {"t": 95000, "ev": "penalty", "p": "B", "kind": "warning", "code": "slow_play",
               "judge": "J\u00fcrgen \"JJ\""}]
    fields = {"round": 2, "first": 7, "total": 10}
    ready = [wire.event_bytes(ev) for ev in events]
    flat = [canonical_flat(dumps_event(ev).encode(), 16, wire.MAX_STR) for ev in events]
    assert flat[0] is None and flat[2] is None and flat[1] == ready[1]
    for evs in (ready, [ready[0], flat[1], ready[2]], []):
        a, b = Encoder(tk(3), 5, tbl=3), Encoder(tk(3), 5, tbl=3)
        n = len(evs)
        line = b.build("record", fields, events=evs)
        assert line == a.build("record", dict(fields, events=events[:n] if n else []))
        assert Decoder(KEY).feed(line)[0]["events"] == (events if n else [])
    table = Encoder(tk(3), 0, tbl=3)
    assert raises(lambda: wire.event_bytes({"t": 1, "ev": "x", "n": [1]}))  # not flat
    assert raises(lambda: table.build("record", dict(fields, events=[]), events=ready))
    assert raises(lambda: table.build("record", fields, events=[ready[1]] * 65))
    assert raises(lambda: table.build("record", fields, events=[ready[1]] * 40))  # > 1024
    assert table.seq == 0
