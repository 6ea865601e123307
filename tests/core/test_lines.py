# core/record.py Lines: the one line splitter (wire decoder, journal, replay, desk links).
from duelclock.core.record import Lines


def test_lines_join_chunks_and_split_at_newlines():
    s = Lines(8)
    assert list(s.feed(b"ab")) == [] and s.part == b"ab"
    assert list(s.feed(b"c\nde")) == [b"abc"] and s.part == b"de"
    assert list(s.feed(b"\n\n")) == [b"de", b""] and s.part == b""


def test_a_long_line_comes_out_once_as_none_and_is_never_held():
    s = Lines(8)
    big = b"x" * 5000
    out = []
    for i in range(0, len(big), 700):
        out += list(s.feed(big[i:i + 700]))
        assert s.part is None
    assert out == []
    assert list(s.feed(b"tail\nok\n")) == [None, b"ok"] and s.part == b""


def test_the_limit_is_exact():
    assert list(Lines(8).feed(b"y" * 8 + b"\n")) == [b"y" * 8]
    assert list(Lines(8).feed(b"y" * 9 + b"\n")) == [None]
    s = Lines(8)
    list(s.feed(b"y" * 4))
    list(s.feed(b"y" * 4))
    assert s.part == b"y" * 8
    list(s.feed(b"y"))
    assert s.part is None


def test_only_the_first_end_bytes_of_a_buffer_are_read():
    s = Lines(8)
    buf = bytearray(b"ab\ncd\nzzzz")
    assert list(s.feed(buf, 5)) == [b"ab"] and s.part == b"cd"


def test_lines_are_bytes_whatever_the_buffer():
    s = Lines(8)
    lines = list(s.feed(bytearray(b"ab\ncd")))
    assert type(lines[0]) is bytes and type(s.part) is bytes


def test_a_flood_of_lines_is_handed_out_one_at_a_time():
    s = Lines(8)
    flood = s.feed(b"x\n" * 1000)
    assert next(flood) == b"x" and s.part == b""      # the rest is not split yet
