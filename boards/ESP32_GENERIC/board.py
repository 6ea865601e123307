# ESP32 DevKit (ESP32-WROOM-32) + SSD1306 128x64 I2C OLED + 4x4 membrane keypad + passive
# buzzer, MicroPython. Wiring only: the exported names are the same on every board
# (boards/README.md). The SSD1306 driver is micropython-lib's `ssd1306` (frozen by
# manifest.py, or `mpremote mip install ssd1306`).
#
#   OLED SDA ----------- GPIO21   I2C0 at 400 kHz, address 0x3C
#   OLED SCL ----------- GPIO22
#   keypad rows 1-4 ---- GPIO13 12 14 27   open-drain: driven low one at a time
#   keypad cols 1-4 ---- GPIO26 25 33 32   inputs with pull-ups: low where a key meets the
#                                          low row
#   buzzer (passive) --- GPIO4    PWM, other leg to GND
#   battery + ---[100k]--+--[100k]--- GND  a 2:1 divider (LiPo 4.2 V -> 2.1 V)
#                        +----------- GPIO35  ADC1 (usable with Wi-Fi on; ADC2 is not), 11 dB
# GPIO12 is a boot strapping pin (flash voltage): as a row it is only driven after boot,
# and with no pull-ups on the columns until then, a key held at power-on cannot pull it up.
#
#   keypad    1 2 3 A
#             4 5 6 B
#             7 8 9 C
#             * 0 # D
#
# Keys are read by a timer interrupt every KEY_SAMPLE_MS into an EdgeRing (core/keys.py):
# a press is counted whatever the loop is doing (a frame, an I2C write, a flash write).
# Keys: short press / long (held 700 ms, once) / hold (repeats every 150 ms after 700 ms)
#   0-9    the digit on press
#   A      a      -      up         player A's key, OK in lists; held: up (scrolls)
#   B      b      -      down       player B's key, leaves lists; held: down
#   C      back   undo   -
#   D      turn   menu   -          turn end; long: the menu
#   *      00     000    -
#   #      ok     sign   -          confirm; long: +/- in LP entry
import sys
import time

from machine import ADC, I2C, PWM, Pin, Timer, reset

import ssd1306
from duelclock.core.keys import EdgeRing, Keys, matrix_mask
from duelclock.drivers.buzzer import Buzzer
from duelclock.drivers.duplex import Duplex
from duelclock.drivers.wifi import connect as connect_wifi  # noqa: F401 (exported)
from duelclock.drivers.wifi import rssi as wifi_rssi  # noqa: F401 (exported)

BOARD = "ESP32_GENERIC"
WIDTH = 128
HEIGHT = 64
renderer_kind = "fb"
mono = True
HAS_WIFI = True
FS_PREFIX = "/"


class _Oled:
    """micropython-lib's SSD1306 (itself a MONO_VLSB FrameBuffer) under the display names."""
    swap = False                        # 1-bit pixels: no byte order

    def __init__(self, oled):
        self.fb = oled

    def show(self, windows=None):
        """The frame, or only `windows` [(x, y, w, h)]: each the 8-row pages and columns it
        spans, a page's bytes a write (I2C at 400 kHz: 1,024 bytes take about 26 ms)."""
        oled = self.fb
        if windows is None:
            oled.show()
            return
        buf = memoryview(oled.buffer)
        for x, y, w, h in windows:
            p0 = y // 8
            p1 = (y + h - 1) // 8
            for cmd in (0x21, x, x + w - 1, 0x22, p0, p1):     # column, page address
                oled.write_cmd(cmd)
            for p in range(p0, p1 + 1):
                oled.write_data(buf[p * WIDTH + x:p * WIDTH + x + w])

    def backlight(self, level):
        # An OLED has no backlight: contrast dims it, and even 0 stays readable.
        self.fb.contrast(int(max(0, min(1, level)) * 255))


display = _Oled(ssd1306.SSD1306_I2C(WIDTH, HEIGHT, I2C(0, sda=Pin(21), scl=Pin(22),
                                                           freq=400000)))

KEYMAP = {
    "0": ("0", None, None), "1": ("1", None, None), "2": ("2", None, None),
    "3": ("3", None, None), "4": ("4", None, None), "5": ("5", None, None),
    "6": ("6", None, None), "7": ("7", None, None), "8": ("8", None, None),
    "9": ("9", None, None),
    "A": ("a", None, "up"),
    "B": ("b", None, "down"),
    "C": ("back", "undo", None),
    "D": ("turn", "menu", None),
    "*": ("00", "000", None),
    "#": ("ok", "sign", None),
}
LAYOUT = (("1", "2", "3", "A"), ("4", "5", "6", "B"), ("7", "8", "9", "C"), ("*", "0", "#", "D"))
_ROWS = tuple(Pin(gp, Pin.OPEN_DRAIN, value=1) for gp in (13, 12, 14, 27))
_COLS = tuple(Pin(gp, Pin.IN, Pin.PULL_UP) for gp in (26, 25, 33, 32))
KEY_SAMPLE_MS = 5               # 16 pin reads an interrupt (not timed on a board yet)
_ring = EdgeRing(time.ticks_ms, time.ticks_diff)
keys = Keys(KEYMAP, _ring)
MAINTENANCE_KEYS = ("C", "D")           # held at power-on: the desk's code opens the REPL
_BITS = tuple(tuple(1 << keys.names.index(k) for k in row) for row in LAYOUT)
_ticks = time.ticks_ms


def _sample(timer):
    _ring.sample(_ticks(), matrix_mask(_ROWS, _COLS, _BITS))


_timer = Timer(0, mode=Timer.PERIODIC, period=KEY_SAMPLE_MS, callback=_sample)

buzzer = Buzzer(PWM(Pin(4), freq=2700, duty_u16=0))
led = None

_VBAT = ADC(Pin(35), atten=ADC.ATTN_11DB)


def battery_pct():
    """The cell behind the 2:1 divider, linear from 3.3 V (0) to 4.2 V (100)."""
    mv = _VBAT.read_uv() * 2 // 1000
    return max(0, min(100, (mv - 3300) * 100 // 900))


def open_serial():
    """The desk link over the USB-UART bridge (UART0, the REPL's port)."""
    return Duplex(sys.stdin.buffer, sys.stdout.buffer)
