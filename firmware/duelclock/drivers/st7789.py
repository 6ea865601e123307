# ST7789 TFT over SPI, the smallest driver that works: init once, then show() sends the
# whole frame, or show(windows) only the parts of it that changed. The bus and pins come ready-made (cs and dc are machine.Pin, called to set
# them; bl is a machine.PWM or None). The frame is `fb`, a framebuf.FrameBuffer in RGB565
# that show() sends as it is. framebuf stores a pixel low byte first and the panel reads the
# high byte first, so colours are drawn byte-swapped (`swap`; render_fb's palette does it
# once) instead of swapping 64800 bytes per frame.
#
# Frame cost: width * height * 2 bytes per show(): 64800 B at 240x135, about 8.3 ms on the
# wire at 62.5 MHz SPI (not measured on a board yet). A window (x, y, w, h) is its own
# CASET/RASET/RAMWR, its rows copied into a SCRATCH_BYTES buffer by one blit (framebuf's C
# loop; a row at a time from the frame would be h SPI writes), in bands when larger: a
# clock digit's 36x48 window is 3456 B, 0.44 ms on the wire, plus 6 command writes.
#
# The panel's RAM is 240x320; a smaller glass shows a window of it at (x0, y0). MADCTL sets
# the scan direction: 0x70 (MX | MV | ML) with the window at x0 40, y0 53 is the Pimoroni
# Pico Display Pack in landscape, the way Pimoroni's own driver sets it up.
import time

import framebuf
from micropython import const

_SWRESET = const(0x01)
_SLPOUT = const(0x11)
_NORON = const(0x13)
_INVON = const(0x21)
_DISPON = const(0x29)
_CASET = const(0x2a)
_RASET = const(0x2b)
_RAMWR = const(0x2c)
_MADCTL = const(0x36)
_COLMOD = const(0x3a)
SCRATCH_BYTES = 8192            # a band of 17 full-width rows
_BANDS = const(24)              # window sizes whose band objects are kept (see _band)


class ST7789:
    swap = True                         # draw RGB565 colours with their two bytes swapped

    def __init__(self, spi, cs, dc, width, height, x0=0, y0=0, madctl=0x70, bl=None):
        self.buf = bytearray(width * height * 2)   # first: the biggest allocation
        self.fb = framebuf.FrameBuffer(self.buf, width, height, framebuf.RGB565)
        self.spi = spi
        self.cs = cs
        self.dc = dc
        self.bl = bl
        self.width = width
        self.height = height
        self.x0 = x0
        self.y0 = y0
        self.scratch = bytearray(SCRATCH_BYTES)
        self._bands = {}
        self._caset = bytearray(4)
        self._raset = bytearray(4)
        self._command = bytearray(1)    # the command byte _cmd sends
        cs(1)
        self.backlight(0)               # dark until the panel RAM holds a frame
        self._cmd(_SWRESET)
        time.sleep(0.15)                # datasheet: 120 ms after a reset before SLPOUT
        self._cmd(_SLPOUT)
        time.sleep(0.12)                # ...and after SLPOUT before the panel settles
        self._cmd(_COLMOD, b"\x55")     # 16 bits per pixel
        self._cmd(_MADCTL, bytes((madctl,)))
        self._cmd(_INVON)               # IPS glass: inverted is the right way round
        self._cmd(_NORON)
        self.show()                     # a blank frame instead of the RAM's noise
        self._cmd(_DISPON)
        self.backlight(1)

    def _cmd(self, cmd, data=None):
        self._command[0] = cmd
        self.cs(0)
        self.dc(0)
        self.spi.write(self._command)
        if data is not None:
            self.dc(1)
            self.spi.write(data)
        self.cs(1)

    def show(self, windows=None):
        """Send the frame, or only `windows`, [(x, y, w, h)] in frame pixels."""
        if windows is None:
            self._window(0, 0, self.width, self.height)
            self._cmd(_RAMWR, self.buf)
            return
        for x, y, w, h in windows:
            rows = max(1, SCRATCH_BYTES // (2 * w))
            while h > 0:
                n = min(rows, h)
                band = self._band(w, n)
                band[0].blit(self.fb, -x, -y)
                self._window(x, y, w, n)
                self._cmd(_RAMWR, band[1])
                y += n
                h -= n

    def _band(self, w, n):
        """A w x n FrameBuffer on the scratch and the view of its bytes, made once a size:
        a clock tick's windows come in a few sizes (its segments), so they make no garbage.
        Past _BANDS sizes the cache starts over."""
        key = w << 9 | n
        band = self._bands.get(key)
        if band is None:
            if len(self._bands) >= _BANDS:
                self._bands = {}
            band = self._bands[key] = (framebuf.FrameBuffer(self.scratch, w, n, framebuf.RGB565),
                                       memoryview(self.scratch)[:2 * w * n])
        return band

    def _window(self, x, y, w, h):
        _span(self._caset, self.x0 + x, w)
        _span(self._raset, self.y0 + y, h)
        self._cmd(_CASET, self._caset)
        self._cmd(_RASET, self._raset)

    def backlight(self, level):
        """0 (off) .. 1 (full); without a PWM backlight pin it stays on."""
        if self.bl is not None:
            self.bl.duty_u16(int(max(0, min(1, level)) * 65535))


def _span(buf, start, n):
    """CASET/RASET data: first and last address, big-endian."""
    end = start + n - 1
    buf[0] = start >> 8
    buf[1] = start & 255
    buf[2] = end >> 8
    buf[3] = end & 255
