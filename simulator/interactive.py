"""`duelclock sim --tables 4 --interactive`: a person plays simulated tables from the
keyboard and sees the table's screen in the terminal; a second terminal runs the desk.

The screen is the table's real framebuffer, drawn with half-block characters in 24-bit
colour (two pixel rows per character, every second pixel column). Keys, as on the keypad
board: a b (players), 0-9, z = 00, x = 000, Enter = ok, Backspace = back, s = +/-, u = undo,
t = turn end, m = menu, arrows = up/down, PgUp/PgDn = fast. Tab: next table. q: quit.
"""
import os
import select
import sys
import termios
import time
import tty

from simulator.room import Room, end_on_signals
from simulator.screens import fb_to_image

KEYS = {"a": "a", "b": "b", "z": "00", "x": "000", "\r": "ok", "\n": "ok", "\x7f": "back",
        "\x08": "back", "s": "sign", "u": "undo", "t": "turn", "m": "menu",
        "\x1b[A": "up", "\x1b[B": "down", "\x1b[5~": "up_fast", "\x1b[6~": "down_fast"}
KEYS.update({str(d): str(d) for d in range(10)})
HELP = ("a/b player  0-9 z=00 x=000  Enter ok  Bksp back  s +/-  u undo  t turn  m menu  "
        "arrows  Tab next table  q quit")


def frame_text(img, step=2):
    """A Pillow RGB image as ANSI half blocks: a pixel row pair per line, every `step`-th."""
    w, h = img.size
    px = img.load()
    lines = []
    for y in range(0, h - 1, 2 * step):
        cells = []
        for x in range(0, w, step):
            t, b = px[x, y], px[x, min(h - 1, y + step)]
            cells.append("\x1b[38;2;%d;%d;%dm\x1b[48;2;%d;%d;%dm\u2580" % (t + b))
        lines.append("".join(cells) + "\x1b[0m")
    return lines


def read_key(fd):
    data = os.read(fd, 8).decode("latin-1")
    return KEYS.get(data, data if data in ("q", "\t") else None)


def run(tables, workdir, speed=1.0, mqtt=0):
    room = Room(workdir, serial_tables=tables - mqtt, mqtt_tables=mqtt, speed=speed,
                ppm_spread=50.0)
    end_on_signals()
    fd = sys.stdin.fileno()
    tty_mode = termios.tcgetattr(fd) if os.isatty(fd) else None
    try:
        room.start_tables()
        links = " ".join("--link " + t.serial_url for t in room.tables.values()
                         if t.link == "serial")
        broker = " --broker " + room.broker.url if room.broker else " --broker off"
        print("tables are up. In a second terminal run the desk:\n  duelclock desk --key %s "
              "--store %s %s%s\nthen: duelclock round start --round 1" % (
                  room.key_file, room.store, links, broker), flush=True)
        current = min(room.tables)
        if tty_mode:
            tty.setcbreak(fd)
        while True:
            table = room.tables[current]
            out = ["\x1b[H\x1b[2J", "table %d  (%s)   %s" % (current, table.link, HELP)]
            if not table.alive:
                out.append("table %d has stopped: %s" % (current, table.why()))
            if os.path.exists(table.fb):
                with open(table.fb, "rb") as f:
                    raw = f.read()
                w, h = 240, 135
                if len(raw) == w * h * 2:
                    out += frame_text(fb_to_image(raw, w, h, False, swapped=True))
            sys.stdout.write("\r\n".join(out) + "\r\n")
            sys.stdout.flush()
            ready, _, _ = select.select([fd], [], [], 0.25)
            if not ready:
                continue
            key = read_key(fd)
            if key == "q":
                return 0
            if key == "\t":
                order = sorted(room.tables)
                current = order[(order.index(current) + 1) % len(order)]
            elif key and table.alive:
                table.press(key)
            time.sleep(0.02)
    finally:
        if tty_mode:
            termios.tcsetattr(fd, termios.TCSADRAIN, tty_mode)
        room.stop_tables()
