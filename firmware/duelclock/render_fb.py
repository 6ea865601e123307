# Screens on a MicroPython framebuf.FrameBuffer: a core.view.Screen in, pixels out.
# layout.Layout decides where things go; this module is its canvas (the FrameBuffer plus
# writer.Writer for text: fonts stay apart from display drivers) and the sizes for small
# and large displays. The app owns the display and pushes the buffer after draw().
#
# Measured (unix port 1.28, x86-64; tests/upy/test_render_fb.py as a script, median over the
# 26 states of tests/upy/screens.py, 15 draws each): draw 0.5 ms at 240x135 RGB565, 0.3 ms at
# 128x64 MONO_VLSB. A draw allocates about 4 KB (64-bit port) of short strings and block
# lists, no buffers; the renderer itself 3.3 KB (glyph rows and run tables), font_ko 5.3 KB
# of bytes (in flash when frozen: font_ko.mpy is 5461 bytes).
from duelclock import font_ko
from duelclock.layout import Layout, RGB
from duelclock.writer import Writer


class _Big:
    """240x135 and larger, in 8x8-font scales: the clock 6x (48 px), LP 3x."""
    status = 1
    status_idle = 2             # before the duel, table and round larger
    clock = 6
    banner = 2
    banner_lines = 2
    names = 2
    lp = 3
    turn = 2
    header = 2
    body = 2
    body_big = 3                # PIN and number entry
    total = 4                   # the new LP total in the entry screen
    message = 2
    pad = 2
    pip = 8                     # one square per duel won
    shrink = ("status1", "clock", "clock", "status", "turn", "clock", "names", "banner1", "lines")


class _Small:
    """128x64: the clock 3x (24 px), LP 2x."""
    status = 1
    status_idle = 1
    clock = 3
    banner = 1
    banner_lines = 2
    names = 1
    lp = 2
    turn = 1
    header = 1
    body = 1
    body_big = 2
    total = 2
    message = 1
    pad = 0
    pip = 4
    shrink = ("status", "turn", "names", "clock", "banner1", "lines")


def rgb565(r, g, b, swap=False):
    c = (r & 0xf8) << 8 | (g & 0xfc) << 3 | b >> 3
    return (c >> 8 | (c & 0xff) << 8) if swap else c


class FbRenderer:
    """draw(screen) lays a Screen out on `fb` (width x height). mono: a 1-bit buffer
    (SSD1306 MONO_VLSB); else RGB565, byte-swapped when `swap` (for drivers that push the
    buffer to an ST7789 as it is)."""

    def __init__(self, fb, width, height, mono, swap=False):
        self.w = width
        self.h = height
        self.mono = mono
        wr = Writer(fb, font_ko)
        # the canvas: the FrameBuffer's own methods and the writer's, bound once
        self.fill = fb.fill
        self.fill_rect = fb.fill_rect
        self.rect = fb.rect
        self.hline = fb.hline
        self.text = wr.text
        self.width = wr.width
        self.height = wr.height
        self.fit = wr.fit
        if mono:
            palette, invert = (0, 1, 1, 1, 1, 1, 1, 1, 0), 1
        else:
            palette, invert = [rgb565(r, g, b, swap) for r, g, b in RGB], 0xffff
        self.layout = Layout(self, _Big if height >= 100 else _Small, palette, invert)
        self.draw = self.layout.draw
