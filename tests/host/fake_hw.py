"""Stand-in hardware for importing boards/<BOARD>/board.py under CPython.

install(monkeypatch) puts fake modules into sys.modules -- machine, framebuf, ssd1306, network
(MicroPython) and board, digitalio, usb_cdc, wifi, adafruit_max1704x (CircuitPython) -- and
returns the World they share: the electrical facts a board file has to get right.

A button joins a pin to GND or to 3V3; a keypad key joins a row pin to a column pin. An input
reads what its wiring and its pull make it: a held button to GND reads 0, to 3V3 reads 1; a
column reads 0 where a held key meets a row driven low; otherwise the pull decides, and an
input without one is floating, which raises. Two held keys joining a row driven high to a row
driven low (push-pull rows) is a short, which raises too.
"""
import sys
import time
import types


class Floating(AssertionError):
    pass


class Short(AssertionError):
    pass


class World:
    def __init__(self):
        self.pins = {}          # pin id -> the latest fake pin made for it
        self.to_gnd = {}        # pin id -> button name
        self.to_vcc = {}
        self.keys = {}          # key name -> (row pin id, column pin id)
        self.held = set()       # names of the buttons and keys held now
        self.log = []           # ("spi", {pin id: output level}, bytes) / ("pwm", pin id, duty)
        self.adc_u16 = {}       # pin id -> what read_u16 returns
        self.adc_uv = {}
        self.adc_reads = []     # (pin id, interrupts off?, {pin id: (mode, level, alt)}) per read
        self.irq_off = 0
        self.slept = []
        self.gauge_pct = 50.0
        self.wifi_polls = 0     # isconnected() calls before the station is up; -1: never
        self.wifi_ok = True     # CircuitPython's wifi.radio.connect succeeds
        self.resets = 0         # machine.reset / microcontroller.reset calls

    def reset(self):
        self.resets += 1

    def button(self, name, pin_id, to):
        (self.to_gnd if to == "gnd" else self.to_vcc)[pin_id] = name

    def key(self, name, row, col):
        self.keys[name] = (row, col)

    def outputs(self):
        return {i: p.out for i, p in self.pins.items() if getattr(p, "mode", None) == Pin.OUT}

    def level(self, pin_id, pull):
        """What an input pin reads now; pull is "up", "down" or None."""
        if self.to_gnd.get(pin_id) in self.held:
            return 0
        if self.to_vcc.get(pin_id) in self.held:
            return 1
        rows = [self.pins.get(r) for k, (r, c) in self.keys.items()
                if c == pin_id and k in self.held]
        low = [p for p in rows if p is not None and p.drives_low()]
        high = [p for p in rows if p is not None and p.drives_high()]
        if low and high:
            raise Short("column %s joins a row driven high to one driven low" % pin_id)
        if low:
            return 0
        if pull == "up":
            return 1
        if pull == "down":
            return 0
        raise Floating("pin %s read with no pull" % pin_id)


# --- MicroPython ---------------------------------------------------------------------------

class Pin:
    IN, OUT, OPEN_DRAIN, ALT = 0, 1, 2, 3
    PULL_UP, PULL_DOWN = 1, 2
    world = None

    def __init__(self, id, mode=-1, pull=-1, *, value=None, alt=-1):
        old = self.world.pins.get(id)
        if mode == -1 and old is not None:      # Pin(n) alone keeps the pin as it is
            self.__dict__.update(old.__dict__)
            return
        self.id = id
        self.mode = mode
        self.pull = {1: "up", 2: "down"}.get(pull)
        self.alt = alt
        self.out = 0 if value is None else int(bool(value))
        self.world.pins[id] = self

    def value(self, v=None):
        if v is not None:
            self.out = int(bool(v))
            return None
        if self.mode == Pin.OUT:
            return self.out
        if self.mode == Pin.OPEN_DRAIN and self.out == 0:
            return 0
        return self.world.level(self.id, self.pull)

    __call__ = value

    def drives_low(self):
        return self.mode in (Pin.OUT, Pin.OPEN_DRAIN) and self.out == 0

    def drives_high(self):
        return self.mode == Pin.OUT and self.out == 1


class SPI:
    world = None

    def __init__(self, id, baudrate=1000000, *, sck=None, mosi=None, miso=None, polarity=0,
                 phase=0):
        self.id, self.baudrate, self.sck, self.mosi = id, baudrate, sck, mosi

    def write(self, buf):
        self.world.log.append(("spi", self.world.outputs(), bytes(buf)))


class I2C:
    def __init__(self, id, *, sda=None, scl=None, freq=400000):
        self.id, self.sda, self.scl, self.freq = id, sda, scl, freq


class PWM:
    world = None

    def __init__(self, pin, *, freq=None, duty_u16=None):
        self.pin = pin
        self._freq = freq
        if duty_u16 is not None:
            self.duty_u16(duty_u16)

    def freq(self, f=None):
        if f is None:
            return self._freq
        self._freq = f

    def duty_u16(self, d=None):
        if d is None:
            return self._duty
        self._duty = d
        self.world.log.append(("pwm", self.pin.id, d))


class ADC:
    ATTN_0DB, ATTN_2_5DB, ATTN_6DB, ATTN_11DB = 0, 1, 2, 3
    world = None

    def __init__(self, src, *, atten=None):
        self.id = src.id if isinstance(src, Pin) else src
        self.atten = atten

    def _snap(self):
        w = self.world
        w.adc_reads.append((self.id, w.irq_off > 0,
                            {i: (p.mode, p.out, p.alt) for i, p in w.pins.items()
                             if isinstance(p, Pin)}))

    def read_u16(self):
        self._snap()
        return self.world.adc_u16[self.id]

    def read_uv(self):
        self._snap()
        return self.world.adc_uv[self.id]


class FrameBuffer:
    def __init__(self, buf, width, height, format, stride=None):
        self.buf, self.width, self.height, self.format = buf, width, height, format

    def fill(self, c):
        pass


class SSD1306_I2C(FrameBuffer):
    def __init__(self, width, height, i2c, addr=0x3C, external_vcc=False):
        super().__init__(bytearray(width * height // 8), width, height, 0)
        self.i2c, self.addr = i2c, addr
        self.shown = 0
        self.contrast_level = None

    def show(self):
        self.shown += 1

    def contrast(self, c):
        self.contrast_level = c


class WLAN:
    world = None

    def __init__(self, interface):
        self.on = False
        self.polls = 0

    def active(self, on=None):
        if on is not None:
            self.on = on
        return self.on

    def connect(self, ssid, password):
        self.ssid = ssid

    def isconnected(self):
        self.polls += 1
        need = self.world.wifi_polls
        return need >= 0 and self.polls > need


# --- CircuitPython ------------------------------------------------------------------------

class CPin:
    def __init__(self, name):
        self.name = name


class DigitalInOut:
    world = None

    def __init__(self, pin):
        self.id = pin.name
        self.mode = None
        self.pull = None
        self.out = 0
        self.world.pins[self.id] = self

    def switch_to_input(self, pull=None):
        self.mode, self.pull = "in", pull

    def switch_to_output(self, value=False, drive_mode=None):
        self.mode, self.out = "out", value

    @property
    def value(self):
        if self.mode == "out":
            return self.out
        if self.mode is None:
            raise AssertionError("%s read before it was made an input" % self.id)
        return bool(self.world.level(self.id, self.pull))

    @value.setter
    def value(self, v):
        if self.mode != "out":
            raise AssertionError("%s written while not an output" % self.id)
        self.out = v

    def drives_low(self):
        return False

    def drives_high(self):
        return False

    def deinit(self):
        pass


class Display:
    def __init__(self, width, height):
        self.width, self.height = width, height
        self.brightness = 1.0


class Serial:
    def __init__(self):
        self.timeout = 1.0
        self.sent = b""

    def read(self, n):
        return b""

    def write(self, b):
        self.sent += b
        return len(b)


class MAX17048:
    world = None

    def __init__(self, i2c):
        assert isinstance(i2c, I2C)
        self.i2c = i2c

    @property
    def cell_percent(self):
        return self.world.gauge_pct


def _module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    return m


def install(monkeypatch):
    """Fresh fakes in sys.modules (restored when the test ends); the World they share."""
    world = World()
    for cls in (Pin, SPI, PWM, ADC, WLAN, DigitalInOut, MAX17048):
        monkeypatch.setattr(cls, "world", world)

    def disable_irq():
        world.irq_off += 1
        return 0x5A

    def enable_irq(state):
        assert state == 0x5A
        world.irq_off -= 1

    def connect(ssid, password, timeout=None):
        if not world.wifi_ok:
            raise ConnectionError("no network")

    mods = {
        "machine": _module("machine", Pin=Pin, SPI=SPI, I2C=I2C, PWM=PWM, ADC=ADC,
                           disable_irq=disable_irq, enable_irq=enable_irq, reset=world.reset),
        "microcontroller": _module("microcontroller", reset=world.reset),
        "framebuf": _module("framebuf", FrameBuffer=FrameBuffer, MONO_VLSB=0, RGB565=1,
                            GS4_HMSB=2, MONO_HLSB=3, MONO_HMSB=4, GS2_HMSB=5, GS8=6),
        "ssd1306": _module("ssd1306", SSD1306_I2C=SSD1306_I2C),
        "network": _module("network", WLAN=WLAN, STA_IF=0, AP_IF=1),
        "board": _module("board", D0=CPin("D0"), D1=CPin("D1"), D2=CPin("D2"), LED=CPin("LED"),
                         DISPLAY=Display(240, 135), I2C=lambda: I2C(0)),
        "digitalio": _module("digitalio", DigitalInOut=DigitalInOut,
                             Pull=types.SimpleNamespace(UP="up", DOWN="down"),
                             Direction=types.SimpleNamespace(INPUT="in", OUTPUT="out")),
        "usb_cdc": _module("usb_cdc", data=Serial(), console=Serial()),
        "wifi": _module("wifi", radio=types.SimpleNamespace(connect=connect)),
        "adafruit_max1704x": _module("adafruit_max1704x", MAX17048=MAX17048),
    }
    for name, mod in mods.items():
        monkeypatch.setitem(sys.modules, name, mod)
    monkeypatch.setattr(time, "sleep", world.slept.append)
    return world
