"""A room of simulated tables and the real desk, time accelerated.

    room = Room(workdir, serial_tables=4, mqtt_tables=4, speed=30)
    room.start()                     # broker, desk (duelclock desk), tables (real firmware)
    room.wait_synced()               # every table knows the desk's time
    room.start_round(1, limit_s=..., at="+2m")
    room.play({1: events, 2: events, ...})   # scripted players press keys at the right times
    room.wait_results()              # the desk holds every result, verified
    room.stop()

The desk is the real `duelclock desk` process (its CLI and HTTP API); the tables are the
real firmware under the MicroPython unix port (simulator/table.py); MQTT tables go through
a real mosquitto. Every clock runs `speed` times real time; each table's crystal is off by up
to +/-ppm_spread.
"""
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.request

from duelclock_desk.broker import Mosquitto
from simulator.player import plan
from simulator.table import SimTable, wait_for

# How late (round ms) play() may begin on the scripts' first key: they keep a minute's
# margin around the round's instants (simulator/scripts.py), so this changes no verdict.
LATE_OK_MS = 30000

BIN = os.path.dirname(sys.executable)
DUELCLOCK = os.path.join(BIN, "duelclock")


def end_on_signals():
    """SIGTERM and SIGHUP (its terminal closed) end the program as Ctrl-C does: through its
    `finally`, which stops every table, broker and desk it started (the tables run in their
    own sessions: no signal of the terminal's reaches them). Call from the main thread."""
    def end(signum, frame):
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)          # the clean-up is not cut short
        raise SystemExit(128 + signum)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, end)


class Room:
    def __init__(self, workdir, serial_tables=8, mqtt_tables=0, speed=30.0, ppm_spread=100.0,
                 seed=1, size="240x135", event="sim"):
        self.dir = os.path.abspath(workdir)     # the desk and the tables run elsewhere
        os.makedirs(self.dir, exist_ok=True)
        self.speed = speed
        self.event = event
        self.key_file = os.path.join(self.dir, "event.key")
        self.store = os.path.join(self.dir, "desk.sqlite")
        self.broker = None
        self.desk = None
        self.api = None
        rng = random.Random(seed)
        self._plan = [(n, "serial" if n <= serial_tables else "mqtt",
                       rng.uniform(-ppm_spread, ppm_spread))
                      for n in range(1, serial_tables + mqtt_tables + 1)]
        self.size = size
        self.tables = {}

    # --- up and down --------------------------------------------------------------------

    def start(self):
        self.start_tables()
        self.start_desk()

    def start_tables(self):
        """Broker (if any table is on MQTT) and the tables, without a desk."""
        if not os.path.exists(self.key_file):
            subprocess.run([DUELCLOCK, "keygen", "--out", self.key_file], check=True,
                           capture_output=True)
        with open(self.key_file) as f:
            key_hex = f.read().strip()
        if any(link == "mqtt" for _, link, _ in self._plan):
            self.broker = Mosquitto()
        for n, link, ppm in self._plan:
            t = SimTable(n, self.dir, key_hex, speed=self.speed, ppm=ppm, link=link,
                         broker=self.table_broker(n) if self.broker else None,
                         event=self.event, size=self.size)
            t.start()
            self.tables[n] = t

    def start_desk(self):
        args = self.desk_command() + [
            "desk", "--key", self.key_file, "--store", self.store, "--event", self.event,
            "--http-port", "0", "--speed", repr(self.speed),
            "--broker", self.broker.url if self.broker else "off"]
        for t in self.tables.values():
            if t.link == "serial":
                args += ["--link", t.serial_url]
        log = open(os.path.join(self.dir, "desk.log"), "a")
        self.desk = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, text=True)
        line = self.desk.stdout.readline()          # "duelclock desk: ... http://127.0.0.1:PORT, ..."
        if "http://" not in line:
            raise RuntimeError("desk did not start: %s" % line)
        self.api = "http://" + line.split("http://", 1)[1].split(",", 1)[0]
        threading.Thread(target=self._drain, daemon=True).start()
        wait_for(lambda: len(self.status()["tables"]) == len(self.tables), 30)

    def _drain(self):
        for line in self.desk.stdout:
            pass

    def stop_tables(self):
        for t in self.tables.values():
            t.stop()
        if self.broker is not None:
            self.broker.stop()
            self.broker = None

    def stop(self):
        for t in self.tables.values():
            t.stop()
        if self.desk is not None and self.desk.poll() is None:
            self.desk.terminate()
            try:
                self.desk.wait(10)
            except subprocess.TimeoutExpired:
                self.desk.kill()
        if self.broker is not None:
            self.broker.stop()

    # --- fault hooks (tests/faults) ------------------------------------------------------

    def table_broker(self, n):
        """The broker URL table n connects to: the broker itself; a fault test may put a
        proxy in front of one table (its Wi-Fi)."""
        return self.broker.url

    def desk_command(self):
        """The program the desk runs as: `duelclock`; a fault test may wrap it."""
        return [DUELCLOCK]

    def kill_desk(self):
        """The desk machine's process dies (SIGKILL): no goodbye, no last commit."""
        self.desk.kill()
        self.desk.wait()

    def kill_broker(self):
        """mosquitto dies (SIGKILL): every MQTT client loses it at once."""
        self.broker.kill()

    def restart_broker(self):
        """mosquitto again on the same port (nothing persisted: retained and queued
        messages are gone, as after a crash)."""
        self.broker = Mosquitto(port=self.broker.port)

    # --- the desk -----------------------------------------------------------------------

    def cli(self, *args, store=False):
        """Run `duelclock ARGS` against this room's desk: through its API, or with `store`
        on its SQLite store (the read-only commands: export, sheet)."""
        where = ["--store", self.store] if store else ["--desk", self.api]
        r = subprocess.run([DUELCLOCK] + list(args) + where, capture_output=True,
                           text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("duelclock %s: %s" % (" ".join(args), r.stderr.strip()))
        return r.stdout

    def status(self):
        # 30 s: a desk answering 16 tables at 40x on a machine busy with other work can take
        # seconds; a desk that does not answer in 30 is a failure to report
        with urllib.request.urlopen(self.api + "/api/status", timeout=30) as r:
            return json.loads(r.read())

    def wait_synced(self, timeout_s=120):
        """Wait until every table knows the desk's time (its state carries a sync age): a
        round started after that reaches tables that can stamp keys. Raises naming the
        tables that do not by `timeout_s`."""
        self._wait_tables(lambda v: v["sync_age_ms"] is not None, timeout_s,
                          "have no desk time")

    def _wait_tables(self, ready, timeout_s, what):
        """Wait until ready(view) holds for every table's status view; else raise naming
        those it does not hold for: "tables [..] <what> after N s"."""
        def left():
            return [v["table"] for v in self.status()["tables"] if not ready(v)]
        if not wait_for(lambda: not left(), timeout_s, 0.1):
            raise RuntimeError("tables %s %s after %d s" % (left(), what, timeout_s))

    def start_round(self, round_no, **opts):
        args = ["round", "start", "--round", str(round_no)]
        for k, v in opts.items():
            flag = "--" + k.replace("_", "-")
            args += [flag] if v is True else [flag, str(v)]
        return self.cli(*args)

    def round_ms(self):
        """The round's ms now, from the desk's own clock."""
        s = self.status()
        return s["desk_ms"] - s["round"]["start_ms"]

    # --- players ------------------------------------------------------------------------

    def play(self, scripts, timeout_s=600):
        """Press each script's keys at its times. `scripts`: {table: [events]} (round_start
        first: the desk sent it, the script's settings must match the round's). Waits until
        every table holds the round and knows the desk's time (a key before the first sync
        is refused: nothing to stamp it with); start the round a little ahead (at="+2m") so
        that check-ins stamped before 0:00 happen before it starts."""
        round_no = self.status()["round"]["round"]
        self._wait_tables(lambda v: v["table"] not in scripts or (
            v["round"] == round_no and v["sync_age_ms"] is not None), 60,
            "do not hold round %d with the desk's time" % round_no)
        s = self.status()
        t0_real = time.monotonic()
        t0_round = s["desk_ms"] - s["round"]["start_ms"]
        steps = []
        for n, events in scripts.items():
            for t, keys in plan(events):
                steps.append((t, n, keys))
        steps.sort()
        if steps and t0_round - steps[0][0] > LATE_OK_MS:
            # keys pressed late are stamped late: a check-in after 5:00 is a penalty
            raise RuntimeError("round time %d ms is past the first key's %d ms: start the "
                               "round further ahead" % (t0_round, steps[0][0]))
        for t, n, keys in steps:
            due = t0_real + (t - t0_round) / 1000.0 / self.speed
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            if time.monotonic() - t0_real > timeout_s:
                raise TimeoutError("scripts ran past %d s" % timeout_s)
            self.tables[n].press(*keys)

    def wait_results(self, tables=None, timeout_s=120):
        """Wait until the desk holds a verified result of every table (or `tables`)."""
        want = set(tables or self.tables)

        def done():
            got = {v["table"] for v in self.status()["tables"] if v["verified"] == "ok"}
            return want <= got
        return wait_for(done, timeout_s, 0.5)
