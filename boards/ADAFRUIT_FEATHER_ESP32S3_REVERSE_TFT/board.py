# Adafruit Feather ESP32-S3 Reverse TFT, CircuitPython. Wiring only: the exported names are
# the same on every board (boards/README.md).
#
# On the device this file is /duelclock_board.py, not /board.py: `board` is CircuitPython's
# own built-in module (imported below), and built-in modules are found before files.
#
#   built in            pins
#   TFT 240x135 ------- board.DISPLAY: an ST7789 that CircuitPython sets up (displayio)
#   button D0 --------- board.D0   the BOOT button, to GND: pull-up, False while held
#   buttons D1, D2 ---- board.D1, board.D2   to 3V3: pull-down, True while held
#   red LED ----------- board.LED (D13)
#   MAX17048 gauge ---- board.I2C() at 0x36 (adafruit_max1704x): the LiPo's charge in %
#   no buzzer
# Keys: CircuitPython's keypad scans the buttons in the background (its own debounce, 20 ms)
# and queues timestamped events; each scan moves them into an EdgeRing (core/keys.py), so
# a press is counted whatever the loop was doing.
# D0 is also the ESP32-S3's BOOT strap: held at reset it starts the ROM bootloader.
# The desk link is the second USB CDC port, which boot.py turns on (usb_cdc.enable).
#
# Keys: short press / long (held 700 ms, once) / hold (repeats every 150 ms after 700 ms)
#   D0      a      menu   -          player A's key, OK in lists; long: the menu, and +/-
#                                    in LP entry, and submit on the PIN screen
#   D2      b      turn   -          player B's key, leaves lists; long: turn end
#   D1      up     -      up_fast    stepper +100; held: +1000 steps
#   D1+D2   down   -      down_fast  stepper -100; held: -1000 steps
#   D0+D1   back   undo   -          back (cancels a both-players confirmation); held: undo
# D0+D2 is no chord: both players press their own keys together to confirm a duel's end.
# There is no ok key: `a` is OK in lists and number screens, and a player's own key again
# confirms their LP entry.
import board
import digitalio
import keypad
import microcontroller
import supervisor
import usb_cdc
import wifi

import adafruit_max1704x
from duelclock.core.keys import EdgeRing, Keys

BOARD = "ADAFRUIT_FEATHER_ESP32S3_REVERSE_TFT"
display = board.DISPLAY
WIDTH = display.width
HEIGHT = display.height
renderer_kind = "dio"
mono = False
HAS_WIFI = True
FS_PREFIX = "/"


KEYMAP = {
    "D0": ("a", "menu", None),
    "D2": ("b", "turn", None),
    "D1": ("up", None, "up_fast"),
    "D1+D2": ("down", None, "down_fast"),
    "D0+D1": ("back", "undo", None),
}
_TICKS_HALF = 1 << 28           # supervisor.ticks_ms wraps at 2**29


def _ticks_diff(a, b):
    return ((a - b + _TICKS_HALF) & (2 * _TICKS_HALF - 1)) - _TICKS_HALF


def _unwrapped():
    at = [supervisor.ticks_ms(), 0]             # the last ticks, ms since the first

    def local_ms():
        now = supervisor.ticks_ms()
        at[1] += _ticks_diff(now, at[0])
        at[0] = now
        return at[1]
    return local_ms


# The table's ticks for app.py, which unwraps time.ticks_us on MicroPython: CircuitPython
# has no time.ticks_*. Whole ms: its sync asks the desk for no us.
local_ms = _unwrapped()


class _Keypad(Keys):
    """Keys whose ring keypad's events fill at each scan."""

    def __init__(self):
        Keys.__init__(self, KEYMAP, EdgeRing(supervisor.ticks_ms, _ticks_diff))
        bit = self.names.index
        # D0 to GND (pulled up), D1 and D2 to 3V3 (pulled down)
        self.pads = ((keypad.Keys((board.D0,), value_when_pressed=False, pull=True),
                      (1 << bit("D0"),)),
                     (keypad.Keys((board.D1, board.D2), value_when_pressed=True, pull=True),
                      (1 << bit("D1"), 1 << bit("D2"))))
        self.event = keypad.Event()
        self.mask = 0

    def _drain(self):
        ev = self.event
        for pad, bits in self.pads:
            while pad.events.get_into(ev):
                b = bits[ev.key_number]
                self.mask = self.mask | b if ev.pressed else self.mask & ~b
                self.ring.sample(ev.timestamp, self.mask)

    def scan(self, now_ms):
        self._drain()
        return Keys.scan(self, now_ms)

    def pressed(self):
        self._drain()
        return Keys.pressed(self)


keys = _Keypad()
# Held at power-on: boot.py leaves the USB console and drive to the computer, and the head
# judge's PIN keeps them so (anything else resets, and boot.py shuts them).
MAINTENANCE_KEYS = ("D0", "D2")
reset = microcontroller.reset

buzzer = None

_LED = digitalio.DigitalInOut(board.LED)
_LED.switch_to_output(value=False)


def led(on):
    """The red LED (D13): the visible flash beside the screen's."""
    _LED.value = bool(on)


_GAUGE = adafruit_max1704x.MAX17048(board.I2C())


def battery_pct():
    """The gauge's state of charge (it can read a little over 100 while charging)."""
    return max(0, min(100, int(_GAUGE.cell_percent)))


def open_serial():
    """The desk link over the second USB CDC port (boot.py enables it); with timeout 0,
    read(n) returns what has arrived."""
    usb_cdc.data.timeout = 0
    return usb_cdc.data


def connect_wifi(ssid, password, timeout_s=20):
    try:
        wifi.radio.connect(ssid, password, timeout=timeout_s)
    except ConnectionError:
        return False
    return True
