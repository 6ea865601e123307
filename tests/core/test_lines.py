# core/record.py split_lines: the one line splitter (wire decoder, journal, replay, desk links).
from duelclock.core.record import split_lines


def test_lines_join_chunks_and_split_at_newlines():
    lines, part = split_lines(b"ab", b"", 8)
    assert lines == [] and part == b"ab"
    lines, part = split_lines(b"c\nde", part, 8)
    assert lines == [b"abc"] and part == b"de"
    lines, part = split_lines(b"\n\n", part, 8)
    assert lines == [b"de", b""] and part == b""


def test_a_long_line_comes_out_once_as_none_and_is_never_held():
    big = b"x" * 5000
    part = b""
    out = []
    for i in range(0, len(big), 700):
        lines, part = split_lines(big[i:i + 700], part, 8)
        out += lines
        assert part is None
    assert out == []
    assert split_lines(b"tail\nok\n", part, 8) == ([None, b"ok"], b"")


def test_the_limit_is_exact():
    assert split_lines(b"y" * 8 + b"\n", b"", 8) == ([b"y" * 8], b"")
    assert split_lines(b"y" * 9 + b"\n", b"", 8) == ([None], b"")
    assert split_lines(b"y" * 4, b"y" * 4, 8) == ([], b"y" * 8)
    assert split_lines(b"y", b"y" * 8, 8) == ([], None)


def test_only_the_first_end_bytes_of_a_buffer_are_read():
    buf = bytearray(b"ab\ncd\nzzzz")
    assert split_lines(buf, b"", 8, 5) == ([b"ab"], b"cd")


def test_lines_are_bytes_whatever_the_buffer():
    lines, part = split_lines(bytearray(b"ab\ncd"), b"", 8)
    assert type(lines[0]) is bytes and type(part) is bytes
