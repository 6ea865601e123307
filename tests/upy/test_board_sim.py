# boards/SIM/board.py under the MicroPython unix port: plain test_* functions, bare asserts.
#   MICROPYPATH=firmware:boards/SIM:tests/upy:.frozen .venv/bin/micropython tests/upy_run.py \
#       tests/upy test_board_sim
# tests/host/test_boards.py runs it so; pytest does not collect it itself (under CPython,
# `import board` would find Blinka's board module, and there is no framebuf).
import os
import socket
import sys

from duelclock.core.keys import INTENTS

__test__ = False

ENV = ("DUELCLOCK_SIM_SIZE", "DUELCLOCK_SIM_FB", "DUELCLOCK_SIM_KEYS", "DUELCLOCK_SIM_SERIAL",
       "DUELCLOCK_SIM_FS")
TMP = "/tmp/duelclock-simtest-" + "".join("%02x" % b for b in os.urandom(4))


def _board(**env):
    """A fresh import of the SIM board with exactly these DUELCLOCK_SIM_* settings."""
    for name in ENV:
        os.unsetenv(name)
    for name in env:
        os.putenv(name, env[name])
    if "board" in sys.modules:
        del sys.modules["board"]
    import board
    return board


def _read(path):
    f = open(path, "rb")
    try:
        return f.read()
    finally:
        f.close()


def _write(path, data, mode="wb"):
    f = open(path, mode)
    try:
        f.write(data)
    finally:
        f.close()


def _listener():
    """A listening socket on a free loopback port: (socket, port)."""
    for _ in range(50):
        port = 20000 + int.from_bytes(os.urandom(2), "big") % 20000
        s = socket.socket()
        try:
            s.bind(socket.getaddrinfo("127.0.0.1", port)[0][-1])
        except OSError:
            s.close()
            continue
        s.listen(2)
        return s, port
    raise OSError("no free port")


def test_exports_the_board_contract():
    import framebuf
    b = _board()
    assert b.BOARD == "SIM"
    assert (b.WIDTH, b.HEIGHT, b.mono, b.renderer_kind) == (240, 135, False, "fb")
    assert type(b.display.fb) is framebuf.FrameBuffer
    assert b.HAS_WIFI is True and b.connect_wifi("venue", "secret") is True
    assert b.FS_PREFIX == "./" and b.battery_pct is None
    assert sorted(b.KEYMAP) == sorted(INTENTS)
    for name in b.KEYMAP:
        assert b.KEYMAP[name] == (name, None, None)
    assert b.keys.scan(0) == []
    assert b.display.frames == 0
    b.display.show()                    # no frame file: counted only
    assert b.display.frames == 1
    b.display.backlight(0.25)
    assert b.display.level == 0.25
    assert _board(DUELCLOCK_SIM_FS="/tmp/table7/").FS_PREFIX == "/tmp/table7/"


def test_show_replaces_the_frame_file_in_panel_byte_order():
    path = TMP + ".fb"
    b = _board(DUELCLOCK_SIM_FB=path)
    d = b.display
    assert d.swap is True               # the renderer draws colours byte-swapped...
    d.fb.fill(0)
    d.fb.pixel(0, 0, _swapped(0xF800))  # red
    d.fb.pixel(1, 0, _swapped(0x001F))  # blue
    d.fb.pixel(239, 134, 0xFFFF)
    d.show()
    raw = _read(path)                   # ...so the file holds them high byte first
    assert len(raw) == 240 * 135 * 2
    assert raw[:4] == b"\xf8\x00\x00\x1f" and raw[-2:] == b"\xff\xff"
    d.fb.fill(_swapped(0x07E0))         # green
    d.show()
    assert _read(path)[:2] == b"\x07\xe0" and d.frames == 2
    assert not _exists(path + ".tmp")
    os.remove(path)


def _swapped(c):
    return (c & 255) << 8 | c >> 8


def _exists(path):
    try:
        os.stat(path)
        return True
    except OSError:
        return False


def test_mono_and_custom_sizes():
    path = TMP + ".mono"
    b = _board(DUELCLOCK_SIM_SIZE="128x64", DUELCLOCK_SIM_FB=path)
    assert (b.WIDTH, b.HEIGHT, b.mono) == (128, 64, True)
    d = b.display
    assert d.swap is False
    d.fb.fill(0)
    d.fb.pixel(0, 0, 1)
    d.fb.pixel(0, 9, 1)
    d.show()
    raw = _read(path)
    assert len(raw) == 128 * 64 // 8
    assert raw[0] == 0x01 and raw[128] == 0x02  # MONO_VLSB: a byte is 8 pixels down
    os.remove(path)
    b = _board(DUELCLOCK_SIM_SIZE="128x64:rgb")
    assert b.mono is False and len(b.display.buf) == 128 * 64 * 2
    b = _board(DUELCLOCK_SIM_SIZE="320x240")
    assert (b.WIDTH, b.HEIGHT, b.mono) == (320, 240, False)


def test_keys_from_a_file_whole_lines_known_intents_only():
    path = TMP + ".keys"
    _write(path, b"a\nup_fast\nbogus\n7\r\nup_f")
    b = _board(DUELCLOCK_SIM_KEYS=path)
    assert b.keys.scan(0) == ["a", "up_fast", "7"]
    assert b.keys.scan(10) == []                # the half line waits
    _write(path, b"ast\n", "ab")
    assert b.keys.scan(20) == ["up_fast"]
    b.keys.push("menu")
    b.keys.push("b")
    assert b.keys.scan(30) == ["menu", "b"]
    assert b.keys.scan(40) == []
    os.remove(path)


def test_keys_and_desk_link_over_sockets():
    srv, port = _listener()
    url = "socket://127.0.0.1:%d" % port
    try:
        b = _board(DUELCLOCK_SIM_KEYS=url, DUELCLOCK_SIM_SERIAL=url)
        keys_end = srv.accept()[0]          # the board connected for keys at import
        link = b.open_serial()
        desk_end = srv.accept()[0]
        assert b.keys.scan(0) == []         # nothing sent: no wait, no intents
        keys_end.write(b"turn\nundo\n")
        assert b.keys.scan(10) == ["turn", "undo"]
        link.write(b'{"m": "hello"}\n')
        assert desk_end.readline() == b'{"m": "hello"}\n'
        desk_end.write(b'{"m": "time"}\n')
        assert link.readline() == b'{"m": "time"}\n'
        keys_end.close()
        assert b.keys.scan(20) == []        # the simulator went away: still no wait
        desk_end.close()
        link.close()
    finally:
        srv.close()


def test_buzzer_and_led_are_counted():
    b = _board()
    b.buzzer.beep(2)
    b.buzzer.beep(1)
    assert b.buzzer.beeps == 3
    for on in (True, True, False, True, False):
        b.led(on)
    assert b.led.flashes == 2 and b.led.on is False
