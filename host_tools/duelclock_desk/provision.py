"""`duelclock provision`: a room's boards in one run. Each board found gets the next free
table number of --tables, then `duelclock deploy`'s steps with that table's config and its
own key (deploy.install, deploy.check): what differs is copied (sha256 per file), then every
file is hashed on the board and the firmware imported from where it went.

Boards: every --port given, all at once (--jobs at a time); without --port, each MicroPython
board that appears on USB (USB_VIDS, the vendor ids `mpremote connect list` shows), one
plugged in after another or a hub's all at once, until every table has its board (Ctrl-C
ends the wait). Progress: a tqdm bar per board (bytes) and one for the room (tables done),
on standard error when it is a terminal; a line per board on standard output; at the end a
table of every board: its id, table, firmware, check, self-test.

Once the files check, the board runs its self-test (firmware/duelclock/selftest.py: keys,
screen, Wi-Fi, battery, free flash); a board is done when both pass.

The state file (--state, JSON: {"boards": {unique id: {"table", "board", "done", "firmware",
"check", "selftest"}}}) says which board (machine.unique_id()) got which table. It is replaced whole
(write, then rename) when a board gets its table and when it is done, so a run cut short
anywhere is resumed by running it again: each board keeps its table, files already on it
are not copied again, and the PINs it holds are kept when they are the ones given (their
hashes are salted: new hashes would be a new config). A state file that cannot be read is
an error and is left as it is.
"""
import argparse
import json
import os
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from tqdm import tqdm

from duelclock import VERSION
from duelclock.core.sign import pin_matches
from duelclock_desk import deploy
from duelclock_desk.client import CliError

# USB vendor ids of the serial ports MicroPython boards show (`mpremote connect list`)
USB_VIDS = {0x2E8A: "Raspberry Pi (RP2040: the Pico W's own USB)",
            0xF055: "MicroPython (pid.codes)",
            0x303A: "Espressif (ESP32-S3's own USB)",
            0x10C4: "Silicon Labs CP210x (ESP32 DevKit)",
            0x1A86: "WCH CH340 (ESP32 DevKit)"}
USB_POLL_S = 0.5                        # how often the USB ports are listed while waiting

# Printed by the board: (its unique id in hex, sys.implementation._machine). MicroPython:
# machine.unique_id(); CircuitPython: microcontroller.cpu.uid; SIM: board.unique_id().
ID_SCRIPT = """
import sys, binascii
try:
    from machine import unique_id
    _u = unique_id()
except ImportError:
    try:
        from microcontroller import cpu
        _u = cpu.uid
    except ImportError:
        from board import unique_id
        _u = unique_id()
print(repr((binascii.hexlify(_u).decode(), sys.implementation._machine)))
"""


# Prints the board's self-test (firmware/duelclock/selftest.py) with the config deployed.
SELFTEST_SCRIPT = """
import json, board
from duelclock import selftest
with open(%r) as _f:
    _cfg = json.load(_f)
print(repr(selftest.run(board, _cfg, %r)))
"""


def selftest_text(results):
    """'ok', or what failed: 'flash: 40 KB free; keys: held: a'."""
    failed = ["%s: %s" % (name, detail) for name, ok, detail in results if not ok]
    return "; ".join(failed) or "ok"


class State:
    """The state file: which board holds which table. Thread-safe; saved on every change."""

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.boards = {}
        try:
            with open(path) as f:
                data = json.load(f)
        except FileNotFoundError:
            return
        except (OSError, ValueError) as e:
            raise CliError("--state %s: unreadable (%s); it is left as it is: move it away "
                           "to start afresh" % (path, e))
        boards = data.get("boards") if isinstance(data, dict) else None
        if not isinstance(boards, dict) or not all(
                isinstance(b, dict) and isinstance(b.get("table"), int) for b in boards.values()):
            raise CliError("--state %s: not a provisioning state file; it is left as it is: "
                           "move it away to start afresh" % path)
        self.boards = boards

    def claim(self, uid, tables, name):
        """uid's table: the one it holds already, else the lowest of `tables` no board holds;
        None when none is left."""
        with self.lock:
            if uid in self.boards:
                return self.boards[uid]["table"]
            held = {b["table"] for b in self.boards.values()}
            free = [t for t in tables if t not in held]
            if not free:
                return None
            self.boards[uid] = {"table": free[0], "board": name, "done": False}
            self._save()
            return free[0]

    def finish(self, uid, ok, check, selftest):
        with self.lock:
            self.boards[uid].update(done=ok, firmware=VERSION, check=check, selftest=selftest)
            self._save()

    def done_tables(self):
        with self.lock:
            return {b["table"] for b in self.boards.values() if b.get("done")}

    def _save(self):
        folder = os.path.dirname(os.path.abspath(self.path))
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".provision-")
        with os.fdopen(fd, "w") as f:
            json.dump({"boards": self.boards}, f, indent=1, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)


class Room:
    """What every board gets, checked before any board is touched: the firmware's files,
    the config but for the table, its key and PINs, the event key, the PINs in clear."""

    def __init__(self, a):
        self.name = a.board
        self.info = deploy.board_info(a.board)
        if a.mpy and self.info["port"] == "circuitpython":
            raise CliError("--mpy: CircuitPython loads .mpy files of its own version only")
        self.key_hex = deploy.read_key(a.key)
        deploy.parse_pins(a.pins)                       # its errors, before any board
        self.pins = dict(zip(("floor", "head"), a.pins.split(":")))
        self.base = deploy.given_config(argparse.Namespace(
            table=a.tables[0], lang=a.lang, link=None, broker=a.broker, ca=a.ca, wifi=a.wifi,
            key=None, pins=None, event=a.event))
        self.tables = a.tables
        self.at = deploy.Layout(a.board)
        with tempfile.TemporaryDirectory() as tmp:
            self.fw = deploy.firmware_files(deploy.MARCH[self.info["mcu"]] if a.mpy else None,
                                            tmp, a.board)

    def config(self, table, old):
        """Table `table`'s config; the PINs `old` (the board's config) holds if they are
        the ones given."""
        old_pins = old.get("pins") if isinstance(old.get("pins"), dict) else {}
        same = all(isinstance(old_pins.get(r), str) and "$" in old_pins[r]
                   and pin_matches(p, old_pins[r]) for r, p in self.pins.items())
        return dict(self.base, table=table, key=deploy.table_secret(self.key_hex, table),
                    pins={r: old_pins[r] for r in self.pins} if same
                    else deploy.hash_pins(self.pins))


class Run:
    """One provisioning run: the room's bar, the bars' rows on the terminal, the results."""

    def __init__(self, room, state):
        self.room, self.state = room, state
        self.rows = []
        self.lock = threading.Lock()
        self.free_rows = []
        self.next_row = 1
        self.bar = tqdm(total=len(room.tables), initial=len(room.tables) - len(self.left()),
                        desc="room", unit="table", disable=None, file=sys.stderr,
                        dynamic_ncols=True)

    def left(self):
        """The tables of --tables no board is done for."""
        return set(self.room.tables) - self.state.done_tables()

    def _row(self, give=None):
        with self.lock:
            if give is not None:
                self.free_rows.append(give)
                return None
            if self.free_rows:
                return self.free_rows.pop()
            self.next_row += 1
            return self.next_row - 1

    def board(self, port):
        """Provision the board on `port`; its row of the final table."""
        started = time.monotonic()
        row = {"port": port, "board": "-", "table": "-", "firmware": "-", "check": "",
               "self-test": "-"}
        try:
            b = deploy.Board(port, self.room.name)
        except CliError as e:
            row["check"] = str(e)
            return self._end(row, None, [str(e)], started)
        at = self._row()
        bar = tqdm(total=0, desc=port, unit="B", unit_scale=True, unit_divisor=1024,
                   leave=False, disable=None, file=sys.stderr, dynamic_ncols=True, position=at)
        uid, problems, copied = None, [], []
        try:
            uid, machine = b.run(ID_SCRIPT, "reading the board's id")
            row["board"] = uid
            if self.room.info["mcu"] != "host" and self.room.info["mcu"] not in machine:
                raise CliError("it is a %s, not a %s (--board)" % (machine, self.room.name))
            table = self.state.claim(uid, self.room.tables, self.room.name)
            if table is None:
                raise CliError("no table of --tables is left for it")
            row["table"] = table
            try:
                old = json.loads(b.read(self.room.at.config) or b"{}")
            except ValueError:
                old = {}
            cfg = self.room.config(table, old if isinstance(old, dict) else {})
            want = deploy.wanted(self.room.fw, self.room.at, self.room.name, self.room.info, cfg)
            copied, _ = deploy.install(b, want, self.room.at, bar, lambda path: None,
                                       "table %d: " % table)
            problems = deploy.check(b, want, self.room.at, table,
                                    deploy.requirements(self.room.info, cfg["link"]))
            row["firmware"] = VERSION + (" copied" if any(
                p.startswith(self.room.at.tree) for p in copied) else " already there")
            if not problems:
                bar.set_description("table %d: self-test" % table)
                row["self-test"] = selftest_text(b.run(SELFTEST_SCRIPT % (
                    self.room.at.config, self.room.at.root or "/"), "the self-test"))
        except CliError as e:
            problems = [str(e)]
        finally:
            b.close()
            bar.close()
            self._row(give=at)
        return self._end(row, uid, problems, started, len(copied))

    def _end(self, row, uid, problems, started, copied=0):
        row["check"] = "ok" if not problems else problems[0] + (
            " (and %d more)" % (len(problems) - 1) if len(problems) > 1 else "")
        ok = not problems and row["self-test"] == "ok"
        if uid is not None and row["table"] != "-":
            self.state.finish(uid, ok, row["check"], row["self-test"])
            with self.lock:                 # done already before this run: counted already
                self.bar.n = len(self.room.tables) - len(self.left())
                self.bar.refresh()
        self.bar.write("table %s  board %s  %s: %d files copied, check %s, self-test %s"
                       "  (%.1f s)" % (row["table"], row["board"], row["port"], copied,
                                       row["check"], row["self-test"],
                                       time.monotonic() - started), file=sys.stdout)
        sys.stdout.flush()
        with self.lock:
            self.rows.append(row)
        return row


def usb_boards():
    """The serial ports of MicroPython boards on USB now."""
    from serial.tools.list_ports import comports
    return {p.device for p in comports() if p.vid in USB_VIDS}


def watch(run, pool):
    """Submit each board that appears on USB until every table is done or one is left for
    no board; a port seen again after it went away is a new board."""
    seen, running = set(), []
    while run.left():
        now = usb_boards()
        running = [f for f in running if not f.done()]
        if not running:
            run.bar.set_description("room: plug in boards (%d tables left)" % len(run.left()))
        for port in sorted(now - seen):
            running.append(pool.submit(run.board, port))
        seen = now
        time.sleep(USB_POLL_S)
    for f in running:
        f.result()


def table_text(rows):
    head = ("table", "board", "port", "firmware", "check", "self-test")
    lines = [head] + [tuple(str(r[k]) for k in head) for r in sorted(
        rows, key=lambda r: (not isinstance(r["table"], int), r["table"] if isinstance(
            r["table"], int) else 0, r["port"]))]
    widths = [max(len(line[i]) for line in lines) for i in range(len(head) - 1)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)) + "  " + line[-1]
                     for line in lines)


def run(a):
    """Ctrl-C: the boards being written are finished, the rest wait for the next run."""
    room = Room(a)
    state = State(a.state)
    r = Run(room, state)
    pool = ThreadPoolExecutor(a.jobs)
    interrupted = False
    try:
        if a.port:
            list(pool.map(r.board, a.port))
        else:
            watch(r, pool)
    except KeyboardInterrupt:
        interrupted = True
        r.bar.write("interrupted: finishing the boards being written; what is done stays "
                    "done in %s, run this again to go on" % a.state, file=sys.stdout)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        r.bar.close()
    print(table_text(r.rows))
    print("%d of %d tables done; state in %s" % (
        len(room.tables) - len(r.left()), len(room.tables), a.state))
    if interrupted:
        return 130
    return 0 if all(row["check"] == row["self-test"] == "ok" for row in r.rows) else 1
