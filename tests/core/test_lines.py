# core/record.py Lines: the one line splitter (wire decoder, journal, replay, desk links).
from duelclock.core.record import Lines


def test_lines_join_chunks_and_split_at_newlines():
    s = Lines(8)
    assert list(s.feed(b"ab")) == [] and s.begun()
    assert list(s.feed(b"c\nde")) == [b"abc"]
    assert list(s.feed(b"\n\n")) == [b"de", b""]
    assert not s.begun() and s.rest() == b""


def test_a_long_line_comes_out_once_as_none_and_is_never_held():
    s = Lines(8)
    big = b"x" * 5000
    out = []
    for i in range(0, len(big), 700):
        out += list(s.feed(big[i:i + 700]))
        assert len(s._buf) == 8
    assert out == [] and s.begun()
    assert list(s.feed(b"tail\nok\n")) == [None, b"ok"]


def test_the_limit_is_exact():
    assert list(Lines(8).feed(b"y" * 8 + b"\n")) == [b"y" * 8]
    assert list(Lines(8).feed(b"y" * 9 + b"\n")) == [None]


def test_only_the_first_end_bytes_of_a_buffer_are_read():
    s = Lines(8)
    buf = bytearray(b"ab\ncd\nzzzz")
    assert list(s.feed(buf, 5)) == [b"ab"]
    assert s.rest() == b"cd" and not s.begun()


def test_rest_hands_over_an_unended_line_or_none():
    s = Lines(4)
    list(s.feed(b"abc"))
    assert s.rest() == b"abc"
    list(s.feed(b"abcdef"))
    assert s.rest() is None and not s.begun()
