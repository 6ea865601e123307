# The desk-link bench group (clock sync and round start): the real desk (duelclock_desk.api.Service:
# links, Desk, SQLite store, HTTP API) against tables at protocol level (tests/host/
# tables.py SessionTable: the firmware's own session, core/session.py, with a list journal).
#
#   sync_error_serial_max_ms     SERIAL_TABLES tables, each on its own pseudo-terminal (the
#                                desk opens the slave paths as serial ports), crystals off by
#                                up to +/-100 ppm, SYNC_MINUTES of accelerated desk time; the
#                                max over every table from its first desk time (a table shows
#                                none before core/clock.py FIRST replies), and p95
#   sync_error_wifi_max_ms       the same with WIFI_TABLES tables as MQTT clients of mosquitto
#                                through wifi_proxy.py (20 +/- 10 ms each way, 1% of packets
#                                held 200 ms); the desk on the broker directly (wired); with
#   sync_error_wifi_p95_ms,      p95 over every (table, step),
#   ..._table_p50_max_ms         the median table's max over its first CHRONY_S s (the median
#                                chrony client is measured so: the max above is 100 tables'),
#   sync_converge_s              power-on (the run's start) until the error stays under 5 ms,
#                                the slowest table, and
#   table_skew_max_ms            the largest difference, at the same desk instant, between
#                                the desk times any two tables show
#   table_skew_exact_drift_...   beside it, the same for a filter that knew every crystal
#                                exactly, fed the same exchanges (Floors): how much of the
#                                skew is left with the drift known
#   sync_error_chrony_ms         CHRONY_CLIENTS chronyd clients (as many as the Wi-Fi tables)
#                                of one chronyd server (-x: no clock control, as nobody)
#                                through the UDP variant of the same proxy, the server's clock
#                                100 ppm off (its driftfile); real time, each client's first
#                                CHRONY_S seconds; the worst client's max, p95, the median
#                                client's max, messages a minute, and sync_wifi_vs_chrony_*
#                                (the ratios of the max and of the median figures: the figures
#                                to read, the machine is noisy)
#   sync_msgs_per_table_per_min  sync requests and replies per table per minute (Wi-Fi run)
#   round_start_1000_p100_ms     round start (HTTP API) to the desk holding a state of the new
#                                round from every one of 1,000 tables on mosquitto: ROUND_FW
#                                real firmware tables (simulator SimTable) and the rest in
#                                ROUND_PROCS processes of mqtt_tables.py
#   round_start_2000_p100_ms,    the same with HALL_TABLES tables on one broker, and on HALLS
#   round_start_2000_bridged_... halls' brokers bridged to the desk's (docs/protocol.md,
#                                "Several halls"), the tables split between the halls
#   fanout_2000_bare_p100_ms     beside them, in the same run: one message from a plain client
#                                to HALL_TABLES plain subscribers of one mosquitto
#                                (fanout_subs.py); the *_vs_bare_ratio figures are the ones to
#                                read (the machine is noisy)
#   fanout_2000_own_p100_ms      and a message to each of them on a topic of its own, in one
#                                write: a round start's shape (one signed command per table;
#                                no line is for all tables), with no Python at either end
#   round_start_2000_protocol_cpu_ms  a round start's protocol work, the desk's and HALL_TABLES
#                                tables' sessions, in one process with no I/O (protocol_cpu):
#                                over the cores, a floor under the round starts on this machine
#
# Accelerated time (the two sync runs): desk time is real time plus jumps (SkipClock, shared
# with the desk in desk_child.py, its own process), and every table's ticks are (desk time +
# its boot time) x (1 + ppm / 1e6). Each step of *_STEP_MS desk ms (FIRST_STEP_MS in the
# first FIRST_STEP_S s, YOUNG_STEP_MS in the first YOUNG_MIN minutes, when the tables
# exchange every 0.1 to 8 s) measures every table's error, ticks them SPREAD_S apart (sync
# requests go out when their Clock says so), waits for every reply, then jumps the rest of
# the step. No jump happens with an exchange in flight, so every stamp of an exchange is
# real time, and the desk stamps with the clock the errors are measured on.
# An error is the table's model (Clock.offset_ms at its exact, unfloored ticks) against the
# exact desk time: what the table would show with sub-ms digits.
import asyncio
import json
import mmap
import os
import random
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import tty
import urllib.request

from common import BenchError, ROOT, metric
from duelclock.core.clock import SERIAL_BUDGET_MS, WIFI_BUDGET_MS
from duelclock_desk import api
from duelclock_desk.broker import Mosquitto
from simulator.table import wait_for
from tests.host.tables import SessionTable
import mqtt_tables

PPM = 100.0
SYNC_MINUTES = 30
WARMUP_MIN = 5                   # the tables are on this long before a round starts
SERIAL_TABLES = 20
SERIAL_STEP_MS = 1000
TABLE_SWITCH_S = 0.0005          # the bench tables' GIL switch interval (run_accelerated)
WIFI_TABLES = 100
WIFI_STEP_MS = 2000
FIRST_STEP_MS = 100              # the first FIRST_STEP_S s: the first exchanges' period
FIRST_STEP_S = 5
YOUNG_STEP_MS = 500              # the first YOUNG_MIN minutes: the tables' burst periods
YOUNG_MIN = 2
SPREAD_S = 0.1                   # a step ticks its tables this far apart (real s), not all
                                 # at one instant: tables at a venue boot at their own times,
                                 # and 100 requests in one burst queue up at the desk (its
                                 # stamps then measure its queue, not the link)
CONVERGED_MS = 5                 # sync_converge_s: the error stays under this
SERIAL_MAX_MS = 0.5              # the target for sync_error_serial_max_ms
REPLY_WAIT_S = 3.0               # a step waits this long (real) for sync replies at most
MAX_LATE = 20                    # steps that may wait that long before the run is given up
CHRONY_S = 150                   # real seconds: chrony cannot be accelerated
CHRONY_CLIENTS = WIFI_TABLES     # as many clients as sync_wifi has tables
CHRONY_READ_S = 0.5              # each client's offset is read this often
CHRONY_SYNC_S = 30               # real seconds the clients may take to their first sync
CHRONY_POLL = (0, 4)             # minpoll, maxpoll: 1 s to 16 s
ROUND_TABLES = 1000
ROUND_FW = 10
ROUND_PROCS = 3
ROUND_SETTLE_S = 60.0            # after the last hello: the round starts a minute after the
                                 # tables were switched on (a venue's normal case: tables
                                 # go on a minute before their round), still in
                                 # their young sync schedule (core/clock.py: 64 exchanges in 2
                                 # minutes), one exchange every 4 s by then
ROUND_WAIT_S = 60.0
HALL_TABLES = 2000               # the several-halls round start, and the bare fan-out beside it
HALLS = 2
HALL_RATIO = 3.0                 # the bridged round start against 3 x the bare fan-out: a
                                 # reading beside protocol_cpu, no longer a target (on two
                                 # cores the simulated tables' own CPU is most of it)
ROUND_TARGET_MS = 1000           # round_start_1000_p100_ms, round_start_2000_bridged_p100_ms
FANOUT_WAIT_S = 6.0              # the bare fan-out: time given to deliver before counting
PROXY = os.path.join(ROOT, "tests", "bench", "wifi_proxy.py")
KEY = os.urandom(32)             # the event key of every run here
HOST_PY = os.path.join(ROOT, "tests", "bench", "mqtt_tables.py")
DESK_PY = os.path.join(ROOT, "tests", "bench", "desk_child.py")
FANOUT_PY = os.path.join(ROOT, "tests", "bench", "fanout_subs.py")


# --- desk time that can jump, and the desk on it -------------------------------------------

class SkipClock:
    """Desk ms: real ms (CLOCK_MONOTONIC, the same in every process) since creation plus the
    jumps made by advance(), which it also writes to `skip_file` for desk_child.py."""

    def __init__(self, skip_file):
        self.t0_ns = time.monotonic_ns()
        self.skip_ms = 0.0
        self.skip_file = skip_file
        with open(skip_file, "wb") as f:
            f.write(struct.pack("d", 0.0))
        self._f = open(skip_file, "r+b")
        self._map = mmap.mmap(self._f.fileno(), 8)

    def exact(self):
        return (time.monotonic_ns() - self.t0_ns) / 1e6 + self.skip_ms

    def __call__(self):
        return int(self.exact())

    def advance(self, ms):
        self.skip_ms += ms
        struct.pack_into("d", self._map, 0, self.skip_ms)

    def close(self):
        self._map.close()
        self._f.close()


class DeskChild:
    """desk_child.py: the real desk in its own process on `clock` (a SkipClock)."""

    def __init__(self, b, name, clock, links=(), broker="off"):
        args = [sys.executable, DESK_PY, "--store", b.path(name + ".sqlite"), "--key", KEY.hex(),
                "--event", name, "--broker", broker, "--skip-file", clock.skip_file,
                "--t0-ns", str(clock.t0_ns)]
        for url in links:
            args += ["--link", url]
        self.b = b
        self.log = open(b.path(name + ".desk.log"), "w")
        self.p = b.procs.start(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=self.log, text=True)
        line = self.p.stdout.readline()
        if not line.startswith("ready "):
            self.stop()
            raise BenchError("desk_child.py did not start (%s)" % b.path(name + ".desk.log"))
        self.url = line.split()[1]

    def status(self):
        with urllib.request.urlopen(self.url + "/api/status", timeout=30) as r:
            return json.loads(r.read())

    def links_up(self):
        return all(l["up"] for l in self.status()["links"])

    def stop(self):
        try:
            self.p.communicate(timeout=20)      # closes stdin: the desk stops
        except subprocess.TimeoutExpired:
            pass
        self.b.procs.end(self.p)
        self.log.close()


class DeskThread:
    """duelclock_desk.api.Service in its own asyncio loop thread, on its own clock (the
    round-start bench, which watches the Desk's changes from this process)."""

    def __init__(self, store_path, key, event, broker):
        self.service = api.Service(store_path, key, event, (), broker, http_port=0)
        self.loop = None
        self._thread = None

    def start(self):
        ready = threading.Event()
        failed = []

        def run():
            self.loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self.loop)
            try:
                self.loop.run_until_complete(self.service.start())
            except Exception as e:
                failed.append(e)
                ready.set()
                return
            ready.set()
            self.loop.run_forever()
            self.loop.run_until_complete(self.service.stop())
            self.loop.close()

        self._thread = threading.Thread(target=run, name="desk", daemon=True)
        self._thread.start()
        ready.wait(30)
        if failed or not ready.is_set():
            raise BenchError("the desk did not start: %s" % (failed[0] if failed else "timeout"))
        return self

    @property
    def desk(self):
        return self.service.desk

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.service.http_port

    def call(self, fn):
        """fn() run in the desk's loop thread (the Desk is not thread-safe); its result."""
        async def wrap():
            return fn()
        return asyncio.run_coroutine_threadsafe(wrap(), self.loop).result(30)

    def stop(self):
        if self.loop is not None and self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(20)


# --- tables on pseudo-terminals --------------------------------------------------------------

class PtyTables:
    """SessionTables, each on its own pty; `paths` are the slave ends the desk opens. A reader
    thread feeds what the desk writes, at the table's ticks when it arrives."""

    def __init__(self, tables, local_ms):
        self.tables = list(tables)
        self.local_ms = local_ms
        self.masters, self.slaves, self.paths = [], [], []
        for _ in self.tables:
            m, s = os.openpty()
            tty.setraw(s)
            self.masters.append(m)
            self.slaves.append(s)
            self.paths.append(os.ttyname(s))
        self.by_fd = dict(zip(self.masters, self.tables))
        self.fd_of = dict((t.tbl, m) for m, t in zip(self.masters, self.tables))
        self.syncs_sent = dict.fromkeys((t.tbl for t in self.tables), 0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name="pty tables", daemon=True)
        self._thread.start()

    def _read(self):
        # Every ready pty is read, and stamped with its table's ticks, before any table is
        # fed: a table's t4 does not wait for the others' verify and refit (each board has
        # its own CPU).
        while not self._stop.is_set():
            got = []
            for fd in select.select(self.masters, [], [], 0.05)[0]:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    continue
                t = self.by_fd[fd]
                got.append((t, data, self.local_ms(t.tbl, floor=False)))
            for t, data, at_ms in got:
                t.feed(data, at_ms)

    def hello(self):
        for t in self.tables:
            t.hello()
        self.tick_all()

    def tick_all(self, spread_s=0.0):
        for t in self.tables:
            t.tick(self.local_ms(t.tbl, floor=False))
            out = t.take()
            self.syncs_sent[t.tbl] += sum(1 for k, _ in out if k == "sync")
            if out:
                os.write(self.fd_of[t.tbl], b"".join(line for _, line in out))
            if spread_s:
                time.sleep(spread_s / len(self.tables))

    def outstanding(self):
        return any(self.syncs_sent[t.tbl] > t.sync_replies for t in self.tables)

    def close(self):
        self._stop.set()
        self._thread.join(5)
        for fd in self.masters + self.slaves:
            os.close(fd)


class MqttDriver:
    """mqtt_tables.Host driven by the bench: the same calls as PtyTables."""

    def __init__(self, url, event, tables, local_ms):
        self.tables = list(tables)
        self.host = mqtt_tables.Host(url, event, self.tables,
                                     lambda tbl: local_ms(tbl, floor=False), auto_tick=False).start()

    def syncs_sent(self):
        return self.host.counts.get("out_sync", 0)

    def ready(self):
        if self.host.error is not None:
            raise BenchError("MQTT tables: %s" % self.host.error)
        return self.host.ready()

    def tick_all(self, spread_s=0.0):
        self.host.tick_all(spread_s)

    def outstanding(self):
        if self.host.error is not None:
            raise BenchError("MQTT tables: %s" % self.host.error)
        return self.syncs_sent() > sum(t.sync_replies for t in self.tables)

    def close(self):
        self.host.close()


def _drift(n, seed):
    """{tbl: (rate, boot_ms)}: crystals spread over +/-PPM (the first two at the extremes),
    boots up to 10 minutes before the desk's clock started."""
    rng = random.Random(seed)
    out = {}
    for tbl in range(1, n + 1):
        ppm = PPM if tbl == 1 else -PPM if tbl == 2 else rng.uniform(-PPM, PPM)
        out[tbl] = (1 + ppm / 1e6, rng.uniform(0, 600000))
    return out


def _local(clock, drift):
    def local_ms(tbl, exact=None, floor=True):
        rate, boot = drift[tbl]
        x = ((clock.exact() if exact is None else exact) + boot) * rate
        return int(x) if floor else x
    return local_ms


def run_accelerated(clock, driver, drift, minutes, step_ms):
    """Steps of step_ms desk ms (YOUNG_STEP_MS at first) over `minutes`: measure, tick, wait
    for replies, jump. ([(desk ms since the start, {tbl: signed error ms of the tables
    showing desk time})] per step, the same for the exact-drift filter (Floors) at the same
    steps and tables, replies, steps that waited past REPLY_WAIT_S)."""
    # The tables' reader threads stamp t4 at once, as a board would, not after a switch
    # interval behind this thread's ticks. The desk in this process gets it too; the shipped
    # desk keeps CPython's 5 ms (at 0.5 ms its threads thrashed beside 16 simulated tables,
    # answered sync late and test_sim_room's players found tables without desk time).
    switch_s = sys.getswitchinterval()
    sys.setswitchinterval(TABLE_SWITCH_S)
    try:
        return _steps(clock, driver, drift, minutes, step_ms)
    finally:
        sys.setswitchinterval(switch_s)


def _steps(clock, driver, drift, minutes, step_ms):
    local_ms = _local(clock, drift)
    floors = {t.tbl: Floors(drift[t.tbl]) for t in driver.tables}
    steps, exact = [], []
    late = 0
    start = clock.exact()
    while clock.exact() - start < minutes * 60000:
        t0 = clock.exact()
        errs = {}
        for t in driver.tables:
            x = local_ms(t.tbl, t0, floor=False)
            off = t.clock.offset_ms(x)
            if off is not None:
                errs[t.tbl] = x + off - t0
        steps.append((t0 - start, errs))
        exact.append((t0 - start, {t.tbl: floors[t.tbl].error_ms(t.stamps)
                                   for t in driver.tables if t.tbl in errs}))
        at = t0 - start
        step = (FIRST_STEP_MS if at < FIRST_STEP_S * 1000 else
                YOUNG_STEP_MS if at < YOUNG_MIN * 60000 else step_ms)
        driver.tick_all(SPREAD_S)
        if not wait_for(lambda: not driver.outstanding(), REPLY_WAIT_S, 0.001):
            late += 1
            if late > MAX_LATE:
                raise BenchError("sync replies stopped coming (%d steps without)" % late)
        spent = clock.exact() - t0
        if spent < step:
            clock.advance(step - spent)
    replies = sum(t.sync_replies for t in driver.tables)
    return steps, exact, replies, late


class Floors:
    """What table_skew_max_ms is for the same exchanges with each crystal known exactly
    (legs' floors equal, as every 2-way sync assumes). Every exchange is put in true desk
    time, and the offset is the middle of the band between the lowest "offset + leg out"
    and the highest "offset - leg back" over every exchange so far; its error is (lowest
    leg out - lowest leg back) / 2. No drift to estimate, so no exchange ever ages out:
    core/clock.py's band with a perfect slope."""

    def __init__(self, crystal):
        self.rate, self.boot = crystal
        self.taken = 0
        self.out = self.back = float("inf")

    def error_ms(self, stamps):
        """From a SessionTable's stamps (the exchanges its clock took): signed error ms."""
        new = stamps[self.taken:]
        self.taken += len(new)
        for st in new:
            t1, t2, t3, t4 = st[:4]
            if len(st) > 4 and st[4] is not None:
                us = st[4]
                t1, t2, t3, t4 = (t1 + us[0] / 1000, t2 + us[1] / 1000, t3 + us[2] / 1000,
                                  t4 + us[3] / 1000)
            self.out = min(self.out, t2 - (t1 / self.rate - self.boot))
            self.back = min(self.back, (t4 / self.rate - self.boot) - t3)
        return (self.out - self.back) / 2


def _skew(steps, from_ms=0):
    """The largest spread of the errors at one step (ms, 2 decimals), from desk ms `from_ms`
    since the start on; None if no step then has any."""
    spreads = [max(errs.values()) - min(errs.values()) for at, errs in steps
               if errs and at >= from_ms]
    return round(max(spreads), 2) if spreads else None


def _figures(steps):
    """From run_accelerated's steps: (max |error| ms from each table's first desk time, p95
    of |error| over every (table, step), largest spread between two tables at one step ms,
    slowest table's s from the start until its error stays under CONVERGED_MS, max |error|
    from WARMUP_MIN on, the median table's max |error| over its first CHRONY_S s); None where
    no table showed desk time."""
    every = sorted(abs(e) for _, errs in steps for e in errs.values())
    if not every:
        return None, None, None, None, None, None
    skew = _skew(steps)
    last_bad = {}
    for at, errs in steps:
        for tbl, e in errs.items():
            if abs(e) >= CONVERGED_MS or tbl not in last_bad:
                last_bad[tbl] = at if abs(e) >= CONVERGED_MS else last_bad.get(tbl, at)
    converge = max(last_bad.values()) / 1000.0
    warm = [abs(e) for at, errs in steps if at >= WARMUP_MIN * 60000 for e in errs.values()]
    first, tops = {}, {}
    for at, errs in steps:
        for tbl, e in errs.items():
            if at - first.setdefault(tbl, at) <= CHRONY_S * 1000:
                tops[tbl] = max(tops.get(tbl, 0.0), abs(e))
    tops = sorted(tops.values())
    r = lambda x: round(x, 2)  # noqa: E731
    return (r(every[-1]), r(every[len(every) * 95 // 100]), skew, round(converge, 1),
            r(max(warm)) if warm else None, r(tops[len(tops) // 2]))


# --- the metrics -----------------------------------------------------------------------------

def sync_serial(b):
    clock = SkipClock(b.path("serial.skip"))
    drift = _drift(SERIAL_TABLES, 1)
    local_ms = _local(clock, drift)
    tables = [SessionTable(KEY, n, budget_ms=SERIAL_BUDGET_MS) for n in sorted(drift)]
    ptys = PtyTables(tables, local_ms)
    desk = None
    try:
        desk = DeskChild(b, "benchserial", clock, links=ptys.paths)
        if not wait_for(desk.links_up, 20, 0.2):
            raise BenchError("the desk did not open every pty")
        ptys.hello()
        steps, exact, replies, late = run_accelerated(clock, ptys, drift, SYNC_MINUTES,
                                                      SERIAL_STEP_MS)
    finally:
        if desk is not None:
            desk.stop()
        ptys.close()
        clock.close()
    note = ("%d SessionTables (core Clock, budget %d ms) on their own ptys, the real desk "
            "(Service, SerialLink), %d min of desk time in %d-ms steps, drift +/-%d ppm"
            % (SERIAL_TABLES, SERIAL_BUDGET_MS, SYNC_MINUTES, SERIAL_STEP_MS, PPM))
    if late:
        note += "; %d steps waited over %.0f s for a reply" % (late, REPLY_WAIT_S)
    sent = sum(ptys.syncs_sent.values())
    return _sync_metrics("serial", "_serial", steps, exact, SERIAL_BUDGET_MS, SERIAL_MAX_MS,
                         (sent + replies) / SERIAL_TABLES, note)


def _sync_metrics(link, suffix, steps, exact, budget_ms, max_target, msgs_per_table, note):
    """A sync run's figures (_figures) and sync messages per table per minute, with the
    exact-drift filter's max and skew beside them; `suffix` on the names that are not the
    link's own."""
    top, p95, skew, converge, warm, median_top = _figures(steps)
    floor_top, _, floor_skew, _, floor_warm, _ = _figures(exact)
    return [metric("sync_error_%s_max_ms" % link, top, "ms", max_target,
                   note=note + "; from each table's first desk time (budget %d ms)" % budget_ms),
            metric("sync_error_%s_p95_ms" % link, p95, "ms",
                   note="p95 of |error| over every (table, step) of the same run"),
            metric("sync_error_%s_max_after%d_ms" % (link, WARMUP_MIN), warm, "ms",
                   note="the same from minute %d on, once each table's drift is known" % WARMUP_MIN),
            metric("sync_error_%s_table_p50_max_ms" % link, median_top, "ms",
                   note="the median table's max |error| over its first %d s of desk time: "
                   "sync_error_chrony_client_p50_max_ms measures the median chrony client so "
                   "(the max above is the worst of every table)" % CHRONY_S),
            metric("sync_converge_s" + suffix, converge, "s",
                   note="the slowest table: power-on until its error stays under %d ms"
                   % CONVERGED_MS),
            metric("table_skew_max_ms" + suffix, skew, "ms", 2,
                   note="largest difference between two tables' desk times at one desk instant"),
            metric("table_skew_exact_drift_max_ms" + suffix, floor_skew, "ms",
                   note="the same from the same exchanges, at the same steps, for a filter "
                   "that knew each crystal exactly (bench_link.Floors: each leg's lowest over "
                   "every exchange so far); its max |error| %s ms; from minute %d on: its "
                   "max |error| %s ms and skew %s ms, the tables' %s and %s"
                   % (floor_top, WARMUP_MIN, floor_warm, _skew(exact, WARMUP_MIN * 60000),
                      warm, _skew(steps, WARMUP_MIN * 60000))),
            metric("sync_msgs_per_table_per_min" + suffix,
                   round(msgs_per_table / SYNC_MINUTES, 2), "msgs", 15,
                   note="requests and replies, %d min, the first sync burst included" % SYNC_MINUTES)]


class Proxy:
    """wifi_proxy.py in a child process; .port; stop() gives its counts."""

    def __init__(self, b, target_port, udp=False, seed=1):
        args = [sys.executable, PROXY, "--to", "127.0.0.1:%d" % target_port, "--seed", str(seed)]
        self.b = b
        self.log = open(b.path("proxy%s.log" % ("_udp" if udp else "")), "a")
        self.p = b.procs.start(args + (["--udp"] if udp else []), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.p.stdout.readline()
        if not line.startswith("listening "):
            b.procs.end(self.p)
            raise BenchError("wifi_proxy.py did not start: %r" % line)
        self.port = int(line.rsplit(":", 1)[1])

    def stop(self):
        try:
            out, _ = self.p.communicate(timeout=10)
            counts = json.loads(out.strip().split("\n")[-1])
        except Exception:
            counts = None
        self.b.procs.end(self.p)
        self.log.close()
        return counts


def sync_wifi(b):
    clock = SkipClock(b.path("wifi.skip"))
    drift = _drift(WIFI_TABLES, 2)
    local_ms = _local(clock, drift)
    tables = [SessionTable(KEY, n, budget_ms=WIFI_BUDGET_MS) for n in sorted(drift)]
    broker = Mosquitto()
    proxy = desk = driver = None
    try:
        proxy = Proxy(b, broker.port)
        desk = DeskChild(b, "benchwifi", clock, broker=broker.url)
        if not wait_for(desk.links_up, 20, 0.2):
            raise BenchError("the desk did not connect to mosquitto")
        driver = MqttDriver("mqtt://127.0.0.1:%d" % proxy.port, "benchwifi", tables, local_ms)
        if not wait_for(driver.ready, 60):
            raise BenchError("the MQTT tables did not all connect through the proxy")
        steps, exact, replies, late = run_accelerated(clock, driver, drift, SYNC_MINUTES,
                                                      WIFI_STEP_MS)
        sent = driver.syncs_sent()
    finally:
        if driver is not None:
            driver.close()
        if desk is not None:
            desk.stop()
        counts = proxy.stop() if proxy is not None else None
        broker.stop()
        clock.close()
    note = ("%d SessionTables (core Clock, budget %d ms) on mosquitto through wifi_proxy.py "
            "(20 +/- 10 ms each way, 1%% held 200 ms: %s), the real desk (Service, MqttLink), "
            "%d min of desk time in %d-ms steps, drift +/-%d ppm"
            % (WIFI_TABLES, WIFI_BUDGET_MS, counts and "%d of %d packets held" % (
                counts["held"], counts["packets"]), SYNC_MINUTES, WIFI_STEP_MS, PPM))
    if late:
        note += "; %d steps waited over %.0f s for a reply" % (late, REPLY_WAIT_S)
    return _sync_metrics("wifi", "", steps, exact, WIFI_BUDGET_MS, None,
                         (sent + replies) / WIFI_TABLES, note)


# --- chrony over the same emulated link ------------------------------------------------------

NTP_EPOCH_S = 2208988800
NTP_TRIES = 5                    # a chronyd's time is read up to this often per sample,
NTP_RTT_MS = 0.3                 # until a read's round trip on loopback is under this

CHRONY_SERVER = """\
port {port}
bindaddress 127.0.0.1
cmdport 0
local stratum 8
allow 127.0.0.1
driftfile {dir}/server.drift
pidfile {dir}/server.pid
"""
CHRONY_CLIENT = """\
server 127.0.0.1 port {proxy} minpoll {minpoll} maxpoll {maxpoll} iburst
port {port}
bindaddress 127.0.0.1
cmdport 0
allow 127.0.0.1
pidfile {dir}/{name}.pid
"""


def _free_udp_ports(n):
    """n distinct free loopback UDP ports (all held at once while chosen: one at a time, 101
    draws from the ephemeral range repeat a port one run in five)."""
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _ntp_offset_ms(port):
    """(offset ms of the NTP server on loopback `port` from this host's clock, synced): the
    offset of the fastest of up to NTP_TRIES reads, or of the first under NTP_RTT_MS (a read
    that waited for the CPU is off by half its wait: 100 chronyds share 2 cores)."""
    best = None
    for _ in range(NTP_TRIES):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(1.0)
        try:
            t1 = time.time()
            whole = int(t1)
            s.sendto(b"\x23" + bytes(39) + struct.pack("!II", whole + NTP_EPOCH_S,
                                                       int((t1 - whole) * 2 ** 32)),
                     ("127.0.0.1", port))
            data = s.recvfrom(512)[0]
            t4 = time.time()
        finally:
            s.close()
        t2, t3 = [a - NTP_EPOCH_S + f / 2 ** 32 for a, f in
                  (struct.unpack("!II", data[32:40]), struct.unpack("!II", data[40:48]))]
        rtt_ms = ((t4 - t1) - (t3 - t2)) * 1000
        synced = data[0] >> 6 != 3 and data[1] not in (0, 16)
        if best is None or rtt_ms < best[0]:
            best = (rtt_ms, ((t2 - t1) + (t3 - t4)) / 2 * 1000, synced)
        if rtt_ms < NTP_RTT_MS:
            break
    return best[1], best[2]


def _chronyd(b, as_nobody, chronyd, d, name, conf):
    """One chronyd -x in the foreground, as nobody where we are root, its config in d/name.conf
    and its log in d/name.log."""
    with open(os.path.join(d, name + ".conf"), "w") as f:
        f.write(conf)
    return b.procs.start(as_nobody + [chronyd, "-x", "-U", "-d", "-f",
                                      os.path.join(d, name + ".conf")],
                         stdout=open(os.path.join(d, name + ".log"), "w"),
                         stderr=subprocess.STDOUT)


def sync_chrony(b):
    """CHRONY_CLIENTS chronyd clients of one chronyd server, all through one wifi_proxy.py
    --udp: the same population as sync_wifi's tables (the max of 100 clients is not the max of
    one). Each is read by NTP on loopback every CHRONY_READ_S from its first sync."""
    chronyd = shutil.which("chronyd") or "/usr/sbin/chronyd"
    if not os.access(chronyd, os.X_OK):
        return [metric("sync_error_chrony_ms", None, "ms", WIFI_BUDGET_MS,
                       note="chronyd not installed (apt-get install -y chrony): not measured")]
    d = tempfile.mkdtemp(prefix="duelclock-chrony-")   # not in scratch: nobody must reach it
    proxy = server = None
    clients = []                  # (process, its NTP port), started
    errors = {}                   # client port -> [|client - server| ms]
    skew = 0.0                    # the largest spread of client - server in one sweep
    server_port, *client_ports = _free_udp_ports(CHRONY_CLIENTS + 1)
    try:
        as_nobody = []
        with open(os.path.join(d, "server.drift"), "w") as f:
            f.write("%.3f 0.000\n" % PPM)  # its clock runs PPM off the kernel's: the "crystal"
        if os.getuid() == 0 and shutil.which("setpriv"):
            for name in ("", "server.drift"):   # chronyd runs as nobody: unprivileged
                os.chown(os.path.join(d, name), 65534, 65534)
            as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        server = _chronyd(b, as_nobody, chronyd, d, "server",
                          CHRONY_SERVER.format(port=server_port, dir=d))
        proxy = Proxy(b, server_port, udp=True, seed=3)
        started = time.monotonic()
        for n, port in enumerate(client_ports):
            name = "client%d" % n
            clients.append((_chronyd(b, as_nobody, chronyd, d, name, CHRONY_CLIENT.format(
                proxy=proxy.port, port=port, dir=d, name=name, minpoll=CHRONY_POLL[0],
                maxpoll=CHRONY_POLL[1])), port))
        end = time.monotonic() + CHRONY_S + CHRONY_SYNC_S
        first = {}                                   # client port -> its first synced read
        while time.monotonic() < end and server.poll() is None:
            now = time.monotonic()
            if len(first) == len(clients) and all(now - t > CHRONY_S for t in first.values()):
                break
            if any(p.poll() is not None for p, _ in clients):
                break
            try:
                off_server, _ = _ntp_offset_ms(server_port)
            except OSError:
                continue
            sweep = []
            for _, port in clients:
                try:
                    off_client, synced = _ntp_offset_ms(port)
                except OSError:
                    continue
                now = time.monotonic()
                if synced and now - first.setdefault(port, now) <= CHRONY_S:
                    errors.setdefault(port, []).append(abs(off_client - off_server))
                    sweep.append(off_client - off_server)
            if sweep:
                skew = max(skew, max(sweep) - min(sweep))
            time.sleep(CHRONY_READ_S)
    finally:
        run_min = (time.monotonic() - started) / 60.0 if clients else None
        for p in [p for p, _ in clients] + [server]:
            if p is not None:
                b.procs.end(p)
        counts = proxy.stop() if proxy is not None else None
        logs = []
        quiet = [n for n, port in enumerate(client_ports) if port not in errors][:1]
        for name in ["server"] + ["client%d" % n for n in quiet or [0]]:
            if os.path.exists(os.path.join(d, name + ".log")):
                with open(os.path.join(d, name + ".log")) as f:
                    logs.append(name + ": " + f.read().strip().split("\n")[-1])
        shutil.rmtree(d, ignore_errors=True)
    unsynced = ""
    if len(errors) < CHRONY_CLIENTS:
        unsynced = ("%d of %d chronyd clients synchronised in %d s (the logs' last lines: %s)"
                    % (len(errors), CHRONY_CLIENTS, CHRONY_S + CHRONY_SYNC_S, " | ".join(logs)))
        if not errors:
            return [metric("sync_error_chrony_ms", None, "ms", WIFI_BUDGET_MS, note=unsynced)]
        unsynced = "; only " + unsynced + ": these figures are theirs alone"
    link = "?"
    if counts:
        link = "%d of %d packets held" % (counts["held"], counts["packets"])
    every = sorted(e for errs in errors.values() for e in errs)
    tops = sorted(max(errs) for errs in errors.values())
    r = lambda x: round(x, 2)  # noqa: E731
    return [metric("sync_error_chrony_ms", r(every[-1]), "ms", WIFI_BUDGET_MS,
                   note="%d chronyd -x clients of one server, as nobody, polling 2^%d..2^%d s "
                   "through one wifi_proxy.py --udp (%s), the server's clock %d ppm off; the max "
                   "|client - server| over every client's first %d s from its first sync, read "
                   "by NTP on loopback every %.1f s (%d reads)%s"
                   % (CHRONY_CLIENTS, CHRONY_POLL[0], CHRONY_POLL[1], link, PPM, CHRONY_S,
                      CHRONY_READ_S, len(every), unsynced)),
            metric("sync_error_chrony_p95_ms", r(every[len(every) * 95 // 100]), "ms",
                   note="p95 over every read of every client"),
            metric("table_skew_chrony_max_ms", r(skew), "ms",
                   note="the largest spread of the clients' offsets in one sweep of reads (a "
                   "sweep takes tens of ms): table_skew_max_ms's figure for chrony"),
            metric("sync_error_chrony_client_p50_max_ms", r(tops[len(tops) // 2]), "ms",
                   note="the median client's max: what one chrony client alone gives"),
            metric("sync_msgs_chrony_per_min",
                   round(counts["packets"] / run_min / CHRONY_CLIENTS, 1)
                   if counts else None, "msgs",
                   note="packets through the proxy per client, both ways: requests and replies")]


# --- a round start to 1,000 tables -----------------------------------------------------------

def _brokers(halls, event):
    """(desk's broker, [the brokers tables connect to]): one, or `halls` hall brokers
    bridged to the desk's (broker.BRIDGE)."""
    desk = Mosquitto()
    if not halls:
        return desk, [desk]
    try:
        return desk, [Mosquitto(bridge=(desk.url, event, "hall%d" % (h + 1)))
                      for h in range(halls)]
    except Exception:
        desk.stop()
        raise


def round_start(b, tables=ROUND_TABLES, halls=0, settle_s=ROUND_SETTLE_S):
    """Round start to every table's state of the new round at the desk (p100, p50 ms), the
    tables in `halls` halls (0: all on the desk's broker), settle_s after the last hello."""
    from simulator.table import SimTable
    event = "benchround"
    name = "round_start_%d%s" % (tables, "_bridged" if halls else "")
    broker, halls_at = _brokers(halls, event)
    desk = None
    sims, hosts = [], []
    acked = {}
    try:
        desk = DeskThread(b.path(name + ".sqlite"), KEY, event, broker.url).start()
        if not wait_for(lambda: all(l.up for l in desk.desk.links), 20):
            raise BenchError("the desk did not connect to mosquitto")
        rng = random.Random(4)
        for n in range(1, ROUND_FW + 1):
            t = SimTable(n, b.path(name + "_sim"), KEY.hex(), speed=1.0,
                         ppm=rng.uniform(-PPM, PPM), link="mqtt",
                         broker=halls_at[n % len(halls_at)].url, event=event, size="128x64")
            sims.append(t)
            t.start()
        procs = max(1, ROUND_PROCS * tables // ROUND_TABLES)
        per = -(-(tables - ROUND_FW) // procs)
        for i in range(procs):
            first = ROUND_FW + 1 + i * per
            count = min(per, tables + 1 - first)
            hosts.append(b.procs.start(
                [sys.executable, HOST_PY, "--broker", halls_at[i % len(halls_at)].url,
                 "--event", event, "--key", KEY.hex(), "--first", str(first), "--count",
                 str(count), "--seed", str(i + 1), "--connect-per-s", "150"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                text=True))
        for p in hosts:
            line = p.stdout.readline()
            if not line.startswith("ready"):
                raise BenchError("mqtt_tables.py did not get ready: %r" % line)
        known = lambda: desk.call(lambda: len(desk.desk.store.tables()))   # noqa: E731
        if not wait_for(lambda: known() >= tables, 60, 0.5):
            raise BenchError("the desk heard from %d of %d tables" % (known(), tables))
        time.sleep(settle_s)

        def on_change(kind, data, original=desk.desk.on_change):
            if kind == "table" and data.get("round") == 1 and data["table"] not in acked:
                acked[data["table"]] = time.monotonic()
            original(kind, data)
        desk.call(lambda: setattr(desk.desk, "on_change", on_change))
        t0 = time.monotonic()
        req = urllib.request.Request(desk.url + "/api/round/start",
                                     data=json.dumps({"round": 1, "who": "bench"}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            r.read()
        wait_for(lambda: len(acked) >= tables, ROUND_WAIT_S, 0.01)
        times = sorted((t - t0) * 1000 for t in acked.values())
        fw = sum(1 for n in acked if n <= ROUND_FW)
    finally:
        for t in sims:
            t.stop()
        for p in hosts:
            b.procs.end(p)
        if desk is not None:
            desk.stop()
        for x in halls_at + [broker] if halls else [broker]:
            x.stop()
    where = ("%d halls' mosquittos bridged to the desk's" % halls) if halls else "mosquitto"
    note = ("%d tables on %s: %d real firmware (SimTable, MQTT; %d acknowledged) and "
            "%d SessionTables in %d mqtt_tables.py processes; the desk in-process; from the HTTP "
            "round start to the desk's processing each table's state of the new round, %d s "
            "after the last table said hello" % (tables, where, ROUND_FW, fw, tables - ROUND_FW,
                                                 procs, settle_s))
    target = ROUND_TARGET_MS if (tables, bool(halls)) in ((ROUND_TABLES, False),
                                                         (HALL_TABLES, True)) else None
    if len(times) < tables:
        return [metric(name + "_p100_ms", None, "ms", target,
                       note=note + "; only %d acknowledged within %d s" % (len(times), ROUND_WAIT_S))]
    return [metric(name + "_p100_ms", round(times[-1], 1), "ms", target, note=note),
            metric(name + "_p50_ms", round(times[len(times) // 2], 1), "ms")]


def fanout_bare(b, subscribers=HALL_TABLES, own=False):
    """One retained QoS 1 message from a plain client to `subscribers` plain subscribers of
    one mosquitto (fanout_subs.py): publish to the last first receipt, ms. `own`: one message
    to each on a topic of its own, all at once (a round start's shape: a signed command
    per table), fanout_<n>_own_p100_ms."""
    broker = Mosquitto()
    subs = []
    topic = "bench/fanout"
    name = "fanout_%d_%s_p100_ms" % (subscribers, "own" if own else "bare")
    try:
        procs = ROUND_PROCS * subscribers // ROUND_TABLES
        per = -(-subscribers // procs)
        for i in range(procs):
            count = min(per, subscribers - i * per)
            subs.append(b.procs.start([sys.executable, FANOUT_PY, "--broker", broker.url,
                                       "--topic", topic, "--count", str(count),
                                       "--first", str(i * per)] + (["--own"] if own else []),
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
        for p in subs:
            line = p.stdout.readline()
            if not line.startswith("ready"):
                raise BenchError("fanout_subs.py did not get ready: %r" % line)
        pub = mqtt_tables.client("fanout-pub", "fanout/pubwill")
        pub.connect("127.0.0.1", broker.port, 60)
        pub.loop_start()
        t0 = time.monotonic()
        if own:
            for n in range(subscribers):
                pub.publish("%s/%d" % (topic, n), b"x" * 300, 1, True)
        else:
            pub.publish(topic, b"x" * 300, 1, True)
        time.sleep(FANOUT_WAIT_S)
        pub.loop_stop()
        pub.disconnect()
        got, last = 0, []
        for p in subs:
            out, _ = p.communicate(timeout=30)
            r = json.loads(out.strip().split("\n")[-1])
            got += r["got"]
            if r["last_s"] is not None:
                last.append(r["last_s"])
    finally:
        for p in subs:
            b.procs.end(p)
        broker.stop()
    note = ("%s to %d plain subscribers of mosquitto in %d fanout_subs.py processes; "
            "publish to the last first receipt"
            % ("a 300-byte retained QoS 1 message on its own topic, all at once (paho)," if own
               else "one 300-byte retained QoS 1 message", subscribers, procs))
    if got < subscribers:
        return metric(name, None, "ms", note=note + "; only %d received it" % got)
    return metric(name, round((max(last) - t0) * 1000, 1), "ms", note=note)


def bench_link(b):
    for m in sync_serial(b):
        yield m
    wifi = sync_wifi(b)
    for m in wifi:
        yield m
    chrony = sync_chrony(b)
    for m in chrony:
        yield m
    value = lambda ms, name: next((m["value"] for m in ms if m["metric"] == name), None)  # noqa
    for ours, theirs, name, note in (
            (wifi[0]["value"], chrony[0]["value"], "max",
             "sync_error_wifi_max_ms / sync_error_chrony_ms, both from this run: the worst of "
             "%d tables from their first desk time, the worst of %d chrony clients from their "
             "first sync" % (WIFI_TABLES, CHRONY_CLIENTS)),
            (value(wifi, "sync_error_wifi_table_p50_max_ms"),
             value(chrony, "sync_error_chrony_client_p50_max_ms"), "p50_max",
             "the median table's max over its first %d s / the median chrony client's max "
             "over its first %d s: one client against one client" % (CHRONY_S, CHRONY_S))):
        yield metric("sync_wifi_vs_chrony_%s_ratio" % name,
                     round(ours / theirs, 2) if ours is not None and theirs else None, "ratio",
                     1.0 if name == "max" else None, note=note)
    for m in round_start(b):
        yield m
    for m in bench_round(b):
        yield m


def bench_round(b):
    """The 2,000-table round starts (one broker, bridged halls) and the fan-outs they are
    read against: `run.py round`, the link group's long part alone."""
    bare = fanout_bare(b)
    yield bare
    yield fanout_bare(b, own=True)
    single = round_start(b, HALL_TABLES)
    for m in single:
        yield m
    bridged = round_start(b, HALL_TABLES, halls=HALLS)
    for m in bridged:
        yield m
    for m in (single[0], bridged[0]):
        ratio = None
        if m["value"] is not None and bare["value"]:
            ratio = round(m["value"] / bare["value"], 2)
        yield metric(m["metric"].replace("_p100_ms", "_vs_bare_ratio"), ratio, "ratio",
                     note="%s / %s, both from this run" % (m["metric"], bare["metric"]))
    yield protocol_cpu(bare)


def protocol_cpu(bare, tables=HALL_TABLES):
    """round_start_2000_protocol_cpu_ms: the CPU a round start's protocol work takes at both
    ends, in this process with no I/O: the real desk (Desk on an in-memory link, its SQLite
    store) builds and signs a round command for each of `tables` SessionTables, each table's
    session takes its own and writes its state, the desk takes every state. The bench's
    round starts put all of it on this machine's cores; a venue gives each table its CPU."""
    from tests.host.tables import Room, _addressee
    d = tempfile.mkdtemp(prefix="protocol-cpu-")
    room = None
    try:
        room = Room(os.path.join(d, "desk.db"), KEY, [
            SessionTable(KEY, n, budget_ms=WIFI_BUDGET_MS) for n in range(1, tables + 1)],
            name="protocol-cpu")
        desk, link, sessions = room.desk, room.link, room.tables
        for t in sessions.values():
            t.hello()
        link.receive(b"".join(line for t in sessions.values() for _, line in t.take()))
        desk.flush()
        link.to_tables = []
        drops = sum(desk.drops.values())
        cpu_s = time.process_time()
        desk.cmd_start_round(1)
        desk.flush()
        desk_s = time.process_time() - cpu_s
        down = [(_addressee(line), line) for line in link.to_tables]   # the broker's work
        cpu_s = time.process_time()
        for tbl, line in down:
            sessions[tbl].feed(line, 2000)
        up = []
        for t in sessions.values():
            t.tick(2300)
            up += [line for k, line in t.take() if k == "state"]
        tables_s = time.process_time() - cpu_s
        cpu_s = time.process_time()
        link.receive(b"".join(up))
        desk.flush()
        desk_s += time.process_time() - cpu_s
        took = sum(1 for t in sessions.values() if t.round is not None)
        if (len(down), len(up), took) != (tables,) * 3 or sum(desk.drops.values()) != drops:
            raise BenchError("a round start in memory: %d commands, %d states, %d tables took "
                             "it, desk drops %r" % (len(down), len(up), took, desk.drops))
    finally:
        if room is not None:
            room.store.close()
        shutil.rmtree(d, ignore_errors=True)
    cores = os.cpu_count() or 1
    cpu_ms = (desk_s + tables_s) * 1000
    note = ("%d SessionTables and the real desk (Desk, in-memory link, SQLite store), one "
            "process, no I/O: desk %.0f ms (sign %d commands, take %d states), tables %.0f "
            "ms; over this machine's %d cores at least %.0f ms of any round start here, "
            "before MQTT and brokers" % (tables, desk_s * 1000, tables, tables,
                                         tables_s * 1000, cores, cpu_ms / cores))
    if bare["value"]:
        note += "; %g x %s of this run is %.0f ms" % (HALL_RATIO, bare["metric"],
                                                     HALL_RATIO * bare["value"])
    return metric("round_start_%d_protocol_cpu_ms" % tables, round(cpu_ms, 1), "ms", note=note)
