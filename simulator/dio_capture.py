"""Screenshots of CircuitPython displayio on CPython (Blinka), through the real refresh path.

Blinka's displayio has no render-to-image call. CaptureBus is a fourwire.FourWire that skips
its __init__ (no SPI, no pins) and plays the display controller instead: it decodes the
CASET (0x2A) / RASET (0x2B) / RAMWR (0x2C) traffic that busdisplay.BusDisplay sends on each
refresh into an RGB565 frame buffer, which image() turns into a Pillow image.

    display = capture_display(240, 135)
    display.root_group = group
    png = screenshot(display)           # refresh + Pillow image
"""
import struct

import busdisplay
import displayio
import fourwire
from displayio._constants import DISPLAY_COMMAND
from PIL import Image

CASET, RASET, RAMWR = 0x2A, 0x2B, 0x2C


class CaptureBus(fourwire.FourWire):
    """A display controller's RAM behind a fake four-wire bus."""

    def __init__(self, width, height):      # no super().__init__: there is no hardware
        self.width = width
        self.height = height
        self.ram = bytearray(width * height * 2)    # RGB565, big-endian as sent
        self._command = None
        self._cols = (0, width - 1)
        self._rows = (0, height - 1)
        self.written = 0                            # pixel bytes received (RAMWR)

    def reset(self):
        pass

    def _free(self):
        return True

    def _begin_transaction(self):
        return True

    def _end_transaction(self):
        pass

    def _release(self):
        pass

    def deinit(self):
        pass

    def _send(self, data_type, chip_select, data):
        if data_type == DISPLAY_COMMAND:
            self._command = data[0]
            data = bytes(data[1:])          # a command may carry its parameters
            if not data:
                return
        if self._command == CASET:
            self._cols = struct.unpack(">HH", bytes(data[:4]))
        elif self._command == RASET:
            self._rows = struct.unpack(">HH", bytes(data[:4]))
        elif self._command == RAMWR:
            self._write(bytes(data))

    def _write(self, pixels):
        self.written += len(pixels)
        x0, x1 = self._cols
        y0, y1 = self._rows
        row_bytes = (x1 - x0 + 1) * 2
        for i in range(min(y1 - y0 + 1, len(pixels) // row_bytes)):
            y = y0 + i
            if 0 <= y < self.height and 0 <= x0 and x1 < self.width:
                at = (y * self.width + x0) * 2
                self.ram[at:at + row_bytes] = pixels[i * row_bytes:(i + 1) * row_bytes]

    def image(self):
        img = Image.frombytes("RGB", (self.width, self.height), rgb888(self.ram))
        return img


def rgb888(ram):
    """Big-endian RGB565 bytes -> RGB888 bytes (each channel scaled to 0..255)."""
    out = bytearray(len(ram) // 2 * 3)
    for i in range(len(ram) // 2):
        c = ram[2 * i] << 8 | ram[2 * i + 1]
        r, g, b = c >> 11, (c >> 5) & 63, c & 31
        out[3 * i] = (r * 527 + 23) >> 6
        out[3 * i + 1] = (g * 259 + 33) >> 6
        out[3 * i + 2] = (b * 527 + 23) >> 6
    return bytes(out)


def capture_display(width, height):
    """A BusDisplay (RGB565, no init sequence, manual refresh) on a CaptureBus."""
    displayio.release_displays()
    bus = CaptureBus(width, height)
    return busdisplay.BusDisplay(bus, b"", width=width, height=height, auto_refresh=False)


def screenshot(display):
    """Refresh `display` through displayio and return what its controller now shows."""
    display.refresh()
    return display.bus.image()
