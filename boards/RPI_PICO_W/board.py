# Raspberry Pi Pico W + Pimoroni Pico Display Pack, MicroPython. Wiring only: the exported
# names are the same on every board (boards/README.md).
#
#   Display Pack          Pico W
#   LCD SCK ------------- GP18  SPI0 SCK    ST7789 240x135 IPS at 62.5 MHz; no reset line
#   LCD MOSI ------------ GP19  SPI0 TX
#   LCD CS -------------- GP17
#   LCD DC -------------- GP16
#   backlight ----------- GP20  PWM
#   buttons A B X Y ----- GP12 GP13 GP14 GP15  to GND: pull-ups, read 0 while held
#   RGB LED R G B ------- GP6 GP7 GP8  common anode: low lights it
#   (on the Pico W)       VSYS/3 on GP29 = ADC3, but GP29 is also the Wi-Fi chip's SPI
#                         clock and GP25 its chip select: see battery_pct
#
# Keys are read by a timer interrupt every KEY_SAMPLE_MS into an EdgeRing (core/keys.py):
# a press is counted whatever the loop is doing (a frame, a flash write).
# Keys: short press / long (held 700 ms, once) / hold (repeats every 150 ms after 700 ms)
#   A      a      menu   -          player A's key, OK in lists; long: the menu, and +/- in
#                                   LP entry, and submit on the PIN screen
#   B      b      turn   -          player B's key, leaves lists; long: turn end
#   X      up     -      up_fast    stepper +100; held: +1000 steps
#   Y      down   -      down_fast  stepper -100; held: -1000 steps
#   X+Y    back   undo   -          both at once: back (cancels a both-players confirmation);
#                                   held: undo
# There is no ok key: `a` is OK in lists and number screens, and a player's own key again
# confirms their LP entry. No buzzer: alerts flash the screen and the LED.
import sys
import time

import machine
from machine import ADC, PWM, SPI, Pin, Timer

from duelclock.core.keys import EdgeRing, Keys, buttons_mask
from duelclock.drivers.duplex import Duplex
from duelclock.drivers.st7789 import ST7789
from duelclock.drivers.wifi import connect as connect_wifi  # noqa: F401 (exported)
from duelclock.drivers.wifi import rssi as wifi_rssi  # noqa: F401 (exported)

BOARD = "RPI_PICO_W"
WIDTH = 240
HEIGHT = 135
renderer_kind = "fb"
mono = False
HAS_WIFI = True
FS_PREFIX = "/"

display = ST7789(SPI(0, baudrate=62500000, sck=Pin(18), mosi=Pin(19)),
                 Pin(17, Pin.OUT, value=1), Pin(16, Pin.OUT), WIDTH, HEIGHT,
                 x0=40, y0=53, madctl=0x70, bl=PWM(Pin(20), freq=1000, duty_u16=0))

KEYMAP = {
    "A": ("a", "menu", None),
    "B": ("b", "turn", None),
    "X": ("up", None, "up_fast"),
    "Y": ("down", None, "down_fast"),
    "X+Y": ("back", "undo", None),
}
KEY_SAMPLE_MS = 5               # 4 pin reads an interrupt (not timed on a board yet)
_GP = {"A": 12, "B": 13, "X": 14, "Y": 15}
_ring = EdgeRing(time.ticks_ms, time.ticks_diff)
keys = Keys(KEYMAP, _ring)
MAINTENANCE_KEYS = ("A", "B")           # held at power-on: the desk's code opens the REPL
reset = machine.reset
_BUTTONS = tuple((Pin(_GP[name], Pin.IN, Pin.PULL_UP).value, 0)
                 for name in keys.names[:keys.n_phys])
_ticks = time.ticks_ms


def _sample(timer):
    _ring.sample(_ticks(), buttons_mask(_BUTTONS))


_timer = Timer(-1, mode=Timer.PERIODIC, period=KEY_SAMPLE_MS, callback=_sample)

buzzer = None

_LED = (Pin(6, Pin.OUT, value=1), Pin(7, Pin.OUT, value=1), Pin(8, Pin.OUT, value=1))


def led(on):
    """The RGB LED, white or off: the visible flash beside the screen's."""
    for pin in _LED:
        pin.value(0 if on else 1)


def battery_pct():
    """VSYS read as one LiPo cell, linear from 3.3 V (0) to 4.2 V (100); on USB power VSYS
    is about 4.7-5 V and reads 100. GP29 is borrowed from the Wi-Fi chip with interrupts
    off (its driver polls from an interrupt): GP25 high deselects the chip and connects the
    VSYS divider, then GP29 goes back to the chip's PIO (alt 7, pull-down). Call it about
    once a minute, not per frame."""
    irq = machine.disable_irq()
    try:
        Pin(25, Pin.OUT, value=1)
        Pin(29, Pin.IN, pull=None)
        raw = ADC(Pin(29)).read_u16()
    finally:
        Pin(29, Pin.ALT, pull=Pin.PULL_DOWN, alt=7)
        machine.enable_irq(irq)
    mv = raw * 3 * 3300 // 65535
    return max(0, min(100, (mv - 3300) * 100 // 900))


def open_serial():
    """The desk link over USB CDC (the REPL's port)."""
    return Duplex(sys.stdin.buffer, sys.stdout.buffer)
