"""One simulated duel table: the real firmware (duelclock.app on boards/SIM) in the
MicroPython unix port, with its hardware made of host things.

    flash    a file-backed littlefs image (DUELCLOCK_SIM_FLASH): a power cut is SIGKILL
    display  a raw framebuffer file the board rewrites at each frame -> screenshot() PNG
    keys     a TCP socket the board connects to; press() sends intent names
    serial   the board's stdin/stdout, relayed to a TCP port the desk opens as
             socket://127.0.0.1:<serial_port> (the relay outlives the table's power cuts,
             as a USB hub port outlives the board's reset)
    clock    DUELCLOCK_SIM_SPEED x real time, off by DUELCLOCK_SIM_PPM
"""
import json
import os
import signal
import socket
import subprocess
import threading
import time

from duelclock_desk.deploy import hash_pins, table_secret
from simulator import build
from simulator.screens import fb_to_image


# The 64-bit unix port needs about 300 KB for the app at 240x135: the 65 KB framebuffer, and
# the firmware's bytecode, which a board keeps in flash (frozen) but .mpy files load into RAM.
HEAP = "512k"
START_TIMEOUT_S = 20          # from the process's start to its keys' connection
TABLE_NICE = 5                # below the desk and the broker (start)
# main.py on a board; a crash's traceback (at import too) goes to stderr.log here, not into
# the serial stream.
BOOT = """import sys
try:
    import board
    from duelclock import app
    app.main(board)
except BaseException as e:
    sys.print_exception(e, sys.stderr)
    raise SystemExit(1)
"""


def _listener():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    return s


class SimTable:
    def __init__(self, number, workdir, key_hex, speed=1.0, ppm=0.0, link="serial",
                 broker=None, event="event", size="240x135", pins=None, lang="en"):
        self.number = number
        # absolute: the table runs in its own directory, the files are named from there
        self.dir = os.path.abspath(os.path.join(workdir, "table%02d" % number))
        os.makedirs(self.dir, exist_ok=True)
        self.speed, self.ppm, self.size = speed, ppm, size
        self.flash = os.path.join(self.dir, "flash.img")
        self.fb = os.path.join(self.dir, "fb.raw")
        self.config = os.path.join(self.dir, "duelclock.json")
        self.log = os.path.join(self.dir, "stderr.log")     # the firmware's stderr
        # What `duelclock deploy` writes: the table's own key and hashed PINs.
        cfg = {"table": number, "key": table_secret(key_hex, number), "lang": lang,
               "event": event, "pins": hash_pins(pins or {"floor": "1111", "head": "2222"}),
               "link": link}
        if link == "mqtt":
            host, port = broker.split("://", 1)[1].rsplit(":", 1)
            cfg["mqtt"] = {"host": host, "port": int(port), "keepalive_s": 30}
        with open(self.config, "w") as f:
            json.dump(cfg, f)
        self.link = link
        self.proc = None
        self._keys_srv = _listener()
        self._keys = None
        self._serial_srv = _listener() if link == "serial" else None
        self.serial_port = self._serial_srv.getsockname()[1] if self._serial_srv else None
        self._desk = None             # the desk's connection to our serial port
        self._lock = threading.Lock()
        self._stopping = False
        if self._serial_srv is not None:
            threading.Thread(target=self._accept_desk, daemon=True).start()

    @property
    def serial_url(self):
        return "socket://127.0.0.1:%d" % self.serial_port

    # --- power --------------------------------------------------------------------------

    def start(self):
        env = dict(os.environ, MICROPYPATH=build.table_path(), DUELCLOCK_SIM_FLASH=self.flash,
                   DUELCLOCK_SIM_CONFIG=self.config, DUELCLOCK_SIM_FB=self.fb,
                   DUELCLOCK_SIM_SIZE=self.size, DUELCLOCK_SIM_SPEED=repr(self.speed),
                   DUELCLOCK_SIM_PPM=repr(self.ppm),
                   DUELCLOCK_SIM_KEYS="socket://127.0.0.1:%d" % self._keys_srv.getsockname()[1])
        err = open(self.log, "ab")
        # Niced: each table is a chip of its own at a venue, the desk's machine never waits
        # for one. Here they share the host's cores with the desk and the broker, and a room
        # of them at speed would otherwise starve the desk (its queue seconds behind).
        self.proc = subprocess.Popen(
            [build.UPY, "-X", "heapsize=%s" % HEAP, "-c", BOOT],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env, cwd=self.dir,
            start_new_session=True, preexec_fn=lambda: os.nice(TABLE_NICE))
        err.close()
        # The board connects its keys once it is up; a table that dies first says why.
        self._keys_srv.settimeout(0.2)
        end = time.monotonic() + START_TIMEOUT_S
        while self._keys is None:
            try:
                self._keys, _ = self._keys_srv.accept()
            except socket.timeout:
                if self.proc.poll() is not None or time.monotonic() > end:
                    self.power_cut()
                    raise RuntimeError("table %d did not start: %s" % (self.number, self.why()))
        threading.Thread(target=self._pump_out, args=(self.proc,), daemon=True).start()

    def why(self):
        """What ended the table: the last line of its stderr.log (a traceback's last line),
        or its exit status."""
        try:
            with open(self.log, "rb") as f:
                lines = f.read().decode("utf-8", "replace").strip().splitlines()
        except OSError:
            lines = []
        code = self.proc.poll() if self.proc is not None else None
        said = lines[-1] if lines else "nothing in its log"
        return "%s (%s; %s)" % (said, "still running" if code is None else "exit %d" % code,
                                self.log)

    def power_cut(self):
        """Cut the power mid-whatever: SIGKILL, nothing flushed that was not."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        if self._keys is not None:
            self._keys.close()
            self._keys = None

    def stop(self):
        self._stopping = True
        self.power_cut()
        for s in (self._keys_srv, self._serial_srv, self._desk):
            if s is not None:
                s.close()

    @property
    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    # --- keys and screen ----------------------------------------------------------------

    def press(self, *intents):
        self._keys.sendall("".join(i + "\n" for i in intents).encode())

    def screenshot(self, path):
        mono = self.size.endswith(":mono") or int(self.size.split("x")[0]) <= 128
        w, h = [int(n) for n in self.size.split(":")[0].split("x")]
        with open(self.fb, "rb") as f:
            raw = f.read()
        fb_to_image(raw, w, h, mono, swapped=not mono).resize((w * 2, h * 2)).save(path)
        return path

    # --- the serial relay ---------------------------------------------------------------

    def _accept_desk(self):
        while not self._stopping:
            try:
                conn, _ = self._serial_srv.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                if self._desk is not None:
                    self._desk.close()
                self._desk = conn
            threading.Thread(target=self._pump_in, args=(conn,), daemon=True).start()

    def _pump_in(self, conn):
        # desk -> table stdin; lost while the table is off, as on a real wire
        while True:
            try:
                data = conn.recv(4096)
            except OSError:
                return
            if not data:
                return
            proc = self.proc
            if proc is not None and proc.poll() is None:
                try:
                    proc.stdin.write(data)
                    proc.stdin.flush()
                except (BrokenPipeError, OSError):
                    pass

    def _pump_out(self, proc):
        # table stdout -> desk
        fd = proc.stdout.fileno()
        while True:
            try:
                data = os.read(fd, 4096)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                desk = self._desk
            if desk is not None:
                try:
                    desk.sendall(data)
                except OSError:
                    pass

    # --- fault hooks (tests/faults) -------------------------------------------------------

    def cut_link(self):
        """Unplug the desk's cable: its connection closes and the port takes no new one
        until restore_link(). The table runs on; what it writes meanwhile is lost."""
        srv, self._serial_srv = self._serial_srv, None
        try:
            srv.shutdown(socket.SHUT_RDWR)      # wakes the accept() waiting on it (Linux)
        except OSError:
            pass
        srv.close()
        with self._lock:
            desk, self._desk = self._desk, None
        if desk is not None:
            try:
                desk.shutdown(socket.SHUT_RDWR)     # a FIN now, though _pump_in is in recv
            except OSError:
                pass
            desk.close()

    def restore_link(self):
        """Plug it back: the same port listens again for the desk."""
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", self.serial_port))
        srv.listen(1)
        self._serial_srv = srv
        threading.Thread(target=self._accept_desk, daemon=True).start()


def wait_for(predicate, timeout_s, step_s=0.05):
    """predicate()'s first true value within timeout_s, else its last (false) one."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        got = predicate()
        if got:
            return got
        time.sleep(step_s)
    return predicate()
