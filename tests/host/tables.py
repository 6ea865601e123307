"""Duel tables at protocol level for the desk's tests, the simulator and the benches: the
firmware's own session (duelclock/core/session.py, with the real Ui, rules engine, wire and
clock) with a list for a journal, driven in-process. This module adds only transport and
scripted play; it never answers the desk itself. The caller passes local ms (a table's own
ticks, drift and all) to every call: an int, or a float to feed and tick where the ticks go
to the us (a board's ticks_us: its sync then asks the desk for the us too).

    table.feed(bytes, local_ms)   desk -> table bytes (any chunking)
    table.tick(local_ms)          what is due: sync request, state, record, result, resends
    table.play(events, local_ms)  scripted match events (t: ms since the round start),
                                  recorded through the Ui as confirmed entries
    table.take()                  [(k, line)] to send to the desk, oldest first
    table.hello(battery, flash_kb, rssi_dbm)   a link came up

Drivers put tables on a wire:
    Room          desk + tables through an in-memory link on one simulated clock (no threads)
    StreamTables  tables on a byte stream (TCP socket server, pty master) in real time
    MqttTables    tables as MQTT clients (one client each, last will "offline")
"""
import json
import os
import select
import socket
import threading
import time

from paho.mqtt import client as mqtt

from duelclock import VERSION
from duelclock.core.clock import SERIAL_BUDGET_MS
from duelclock.core.record import Lines
from duelclock.core.record import check_event
from duelclock.core.session import Session
# The session's timing: private consts there (compiled away on a board), read on CPython.
from duelclock.core.session import _RESEND_MS as RESEND_MS, _STATE_MS as STATE_MS  # noqa: F401
from duelclock.core.sign import Key, signed_line, table_key
from duelclock.core.wire import MAX_LINE_BYTES
from duelclock_desk import desk_wire
from duelclock_desk.desk import Desk, fingerprint
from duelclock_desk.links import Link
from duelclock_desk.store import Store
from tests.core.ramstore import ListJournal, MemFiles


def short_match(first="A"):
    """Events of a quick 2-0 for A (after round_start): two duels won on LP, a warning."""
    other = "B" if first == "A" else "A"
    return [
        {"t": 60000, "ev": "duel_start", "first": first},
        {"t": 90000, "ev": "lp", "B": -3000, "by": "A"},
        {"t": 95000, "ev": "penalty", "p": "B", "kind": "warning", "code": "slow_play"},
        {"t": 120000, "ev": "lp", "B": -5000, "by": "A"},
        {"t": 300000, "ev": "duel_start", "first": other},
        {"t": 320000, "ev": "turn_end"},
        {"t": 360000, "ev": "lp", "B": -8000, "by": "A"},
    ]


TOO_LONG = b"\0" * (MAX_LINE_BYTES + 1)      # what a table is fed for a line over the limit


def _split(local_ms):
    """(int ms, us past it or None): a session's local stamp from an int or a float."""
    if isinstance(local_ms, float):
        ms = int(local_ms // 1)
        return ms, int((local_ms - ms) * 1000)
    return local_ms, None


def _addressee(line):
    """The table a desk line is for, or None (not a desk line: every table gets it). The
    drivers hand each table only its own lines, as its own port or topic would."""
    if line is None:
        return None
    try:
        return json.loads(line).get("tbl")
    except ValueError:
        return None


def _kind(line):
    at = line.index(b'"k":"') + 5
    return line[at:line.index(b'"', at)].decode()


class SessionTable:
    """One table: a core Session on a ListJournal and MemFiles, its lines queued for take().
    Thread-safe (a lock per table), so a driver thread and a test can share it. `key` is the
    event key: the table keeps only its own, table_key(key, tbl), as deploy gives a board.
    `seen` ({0: seq}) is the desk's last command seq a table kept from an earlier boot.
    What the test reads (taken, round, rules, acked, sync_replies) is watched on the way in.
    `lie` ({"result", "wins"}): its result lines are rewritten so and signed again with its
    key, a table reporting a result its record does not give."""

    def __init__(self, key, tbl, boot=1, seen=None, budget_ms=SERIAL_BUDGET_MS,
                 board="FAKE", fw=VERSION):
        self.tbl = tbl
        self.board, self.fw = board, fw
        self.key = table_key(key, tbl)
        self.boot, self.budget_ms = boot, budget_ms
        self.journal = ListJournal()
        self.files = MemFiles()
        if seen:
            self.files.write("seen", str(seen[0]))
        self.lie = None
        self.sync_replies = 0
        self._out = []
        self._lock = threading.RLock()
        self._start()

    def _start(self):
        """Power on: a new session from what the journal and the files hold."""
        self.taken = []           # desk commands taken (not sync), as received
        self.stamps = []          # the sync exchanges its clock took: (t1, t2, t3, t4[, us])
        s = self.session = Session(self.key, self.tbl, self.boot, self.journal, self.files,
                                   self._queue, self.budget_ms, None, "en")
        sample, handle = s.clock.sample, s.handle

        def counted(*stamps):
            self.sync_replies += 1
            if sample(*stamps) is None:
                self.stamps.append(stamps)

        def watched(msg, local_ms, sub_us=None):
            if msg["k"] != "sync":
                self.taken.append(msg)
            handle(msg, local_ms, sub_us)
        s.clock.sample, s.handle = counted, watched
        # Its lines, byte for byte, with CPython's C JSON writer (a bench runs 2,000 of these).
        s.enc._sign = desk_wire.signed_line

    def reboot(self, journal=None):
        """Power off and on (boot + 1), with `journal` in place of the old one if given."""
        with self._lock:
            self.boot += 1
            if journal is not None:
                self.journal = journal
            self._start()

    def _queue(self, line, kind):
        k = _kind(line)
        if k == "result" and self.lie:
            msg = json.loads(line)
            del msg["sig"]
            msg.update(self.lie)
            line = signed_line(msg, Key(self.key))
        self._out.append((k, line))
        return True

    # --- the session's calls ----------------------------------------------------------------

    def take(self):
        with self._lock:
            out, self._out = self._out, []
            return out

    def hello(self, battery=None, flash_kb=None, rssi_dbm=None):
        with self._lock:
            self.session.hello(self.board, self.fw, battery, flash_kb, rssi_dbm)

    def feed(self, data, local_ms):
        """local_ms: int ms, or a float for ticks to the us (a board's ticks_us)."""
        with self._lock:
            self.session.feed(data, *_split(local_ms))

    def tick(self, local_ms):
        with self._lock:
            self.session.tick(*_split(local_ms))

    def play(self, events, local_ms=0):
        """Scripted entries, each confirmed through the Ui (checked, journalled, applied) as
        its keys would; those the rules refuse are left out, as on a board, and returned as
        [(event, why)]. Then what is due at local_ms goes out."""
        refused = []
        with self._lock:
            ui = self.session.ui
            for ev in events:
                if type(ev.get("t")) is int:
                    ui.tick(ev["t"])            # time passes to the key, as on a board
                why = check_event(ev) or ui.match.check(ev)
                if why is None:
                    assert ui.record(ev), ui.message
                else:
                    refused.append((ev, why))
            self.session.state_check_at = 0
            self.session.tick(local_ms)
        return refused

    # --- what a test reads --------------------------------------------------------------------

    @property
    def ui(self):
        return self.session.ui

    @property
    def match(self):
        return self.session.ui.match

    @property
    def clock(self):
        return self.session.clock

    @property
    def enc(self):
        return self.session.enc

    @property
    def dec(self):
        return self.session.dec

    def desk_ms(self, local_ms):
        return self.session.clock.desk_now_ms(local_ms)

    @property
    def record(self):
        """The current match's events, round_start first."""
        return self.journal.current()

    @property
    def result(self):
        """{"result", "wins"} once the match is over (what the table reports), else None."""
        m = self.match
        return None if m is None or not m.over else {"result": m.result, "wins": dict(m.wins)}

    @property
    def extended_ms(self):
        """Time the desk gave this match (its extensions), as recorded."""
        return sum(ev["ms"] for ev in self.record if ev["ev"] == "extend")

    def _last(self, k, stored=None):
        for msg in reversed(self.taken):
            if msg["k"] == k and (stored is None or bool(msg.get("stored")) == stored):
                return msg
        return None

    @property
    def round(self):
        """The last round message taken (its fields), or None."""
        msg = self._last("round")
        return None if msg is None else {k: v for k, v in msg.items()
                                         if k not in ("v", "k", "seq", "tbl")}

    @property
    def rules(self):
        """The rule set the match runs under (its round_start's), or None before a round."""
        m = self.match
        return None if m is None else m.rules

    @property
    def acked(self):
        """(round, events) of the desk's last final ack (the result settled), or None."""
        msg = self._last("ack", stored=False)
        return None if msg is None else (msg["round"], msg["events"])

    @property
    def held(self):
        """(round, events) of the desk's last "stored" ack (events it committed), or None."""
        msg = self._last("ack", stored=True)
        return None if msg is None else (msg["round"], msg["events"])


# --- an in-memory room: the desk and tables on one simulated clock -------------------------

class MemoryLink(Link):
    """The desk's end of an in-memory wire: what the desk sends waits in `to_tables`."""

    def __init__(self, url="memory://"):
        super().__init__(url)
        self.to_tables = []

    def send(self, line, tbl, kind="cmd"):
        self.to_tables.append(line)


class Room:
    """A Desk (real store in `path`) and SessionTables on one in-memory link, simulated time:
    `t` is desk ms; table n's local ms = t * (1 + ppm[n] / 1e6) + offset[n].
    `to_desk(lines)` may drop, reorder or duplicate what the tables send (default: as is)."""

    def __init__(self, path, key, tables, name="test", ppm=None, offset_ms=None):
        self.t = 0
        self.key = key
        self.tables = {t.tbl: t for t in tables}
        self.ppm = ppm or {}
        self.offset_ms = offset_ms or {}
        self.link = MemoryLink()
        self.to_desk = lambda lines: lines
        self.store = Store(path)
        event = self.store.start_desk(name, fingerprint(key), 1700000000000)
        self.desk = Desk(self.store, key, event, lambda: self.t, [self.link])
        self.link.start(self.desk)

    def local(self, tbl):
        return int(self.t * (1 + self.ppm.get(tbl, 0) / 1e6)) + self.offset_ms.get(tbl, 0)

    def pump(self):
        """Deliver until both ways are quiet."""
        for _ in range(1000):
            down, self.link.to_tables = self.link.to_tables, []
            for line in down:
                to = _addressee(line)
                for t in self.tables.values():
                    if to is None or to == t.tbl:
                        t.feed(line, self.local(t.tbl))
            up = []
            for t in self.tables.values():
                up += [line for _, line in t.take()]
            up = self.to_desk(up)
            if up:
                self.link.receive(b"".join(up))
                self.desk.flush()         # as the desk's service after each batch taken
            if not down and not up:
                return
        raise AssertionError("the room never went quiet")

    def run(self, ms, step_ms=100):
        """Let `ms` of desk time pass: tables tick every step_ms, everything delivered."""
        end = self.t + ms
        while True:
            for t in self.tables.values():
                t.tick(self.local(t.tbl))
            self.pump()
            if self.t >= end:
                return
            self.t = min(end, self.t + step_ms)


# --- real-time drivers ----------------------------------------------------------------------

class _Clocked:
    def __init__(self, ppm=0, offset_ms=0):
        self._t0 = time.monotonic()
        self.ppm, self.offset_ms = ppm, offset_ms

    def local_ms(self):
        return int((time.monotonic() - self._t0) * 1000 * (1 + self.ppm / 1e6)) + self.offset_ms


class StreamTables(_Clocked):
    """SessionTables on one byte stream (each fed only its own lines), in a thread: a TCP
    server (`serve_tcp`, the desk connects with socket://127.0.0.1:PORT and may reconnect)
    or a pty (`on_pty`, the desk opens `path`). Each table says hello when the desk
    connects."""

    TICK_S = 0.005

    def __init__(self, tables, ppm=0, offset_ms=0):
        super().__init__(ppm, offset_ms)
        self.tables = list(tables)
        self.url = self.path = None
        self.connections = 0
        self.pumps = 0                # rounds of feed, tick and write done (a test's wait)
        self._lines = Lines(MAX_LINE_BYTES)
        self._stop = threading.Event()
        self._thread = None

    @classmethod
    def serve_tcp(cls, tables, **kw):
        self = cls(tables, **kw)
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(self.TICK_S)
        self.url = "socket://127.0.0.1:%d" % self._server.getsockname()[1]
        self._start(self._tcp)
        return self

    @classmethod
    def on_pty(cls, tables, **kw):
        import tty
        self = cls(tables, **kw)
        self._master, slave = os.openpty()
        tty.setraw(slave)
        self.path = self.url = os.ttyname(slave)
        self._slave = slave
        self._start(self._pty)
        return self

    def _start(self, target):
        self._thread = threading.Thread(target=target, daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join(5)

    def _hello(self):
        self.connections += 1
        for t in self.tables:
            t.hello()

    def _pump(self, data, write):
        local = self.local_ms()
        for line in self._lines.feed(data) if data else ():
            to = _addressee(line)
            for t in self.tables:
                if to is None or to == t.tbl:
                    t.feed((TOO_LONG if line is None else line) + b"\n", local)
        for t in self.tables:
            t.tick(local)
        out = b"".join(line for t in self.tables for _, line in t.take())
        if out:
            write(out)
        self.pumps += 1

    def _tcp(self):
        while not self._stop.is_set():
            try:
                conn, _ = self._server.accept()
            except socket.timeout:
                continue
            conn.settimeout(self.TICK_S)
            self._hello()
            try:
                while not self._stop.is_set():
                    try:
                        data = conn.recv(65536)
                        if not data:
                            break
                    except socket.timeout:
                        data = b""
                    self._pump(data, conn.sendall)
            except OSError:
                pass
            conn.close()
        self._server.close()

    def _pty(self):
        self._hello()
        while not self._stop.is_set():
            ready = select.select([self._master], [], [], self.TICK_S)[0]
            data = os.read(self._master, 65536) if ready else b""
            self._pump(data, lambda b: os.write(self._master, b))
        os.close(self._master)
        os.close(self._slave)


class MqttTables(_Clocked):
    """SessionTables as MQTT clients of `url` (mqtt://host:port), one client each with the last
    will "offline" on its state topic; a thread ticks them all. auth (user, password) and
    ca (TLS: the CA file) for a venue broker."""

    TICK_S = 0.005

    def __init__(self, url, event, tables, ppm=0, offset_ms=0, auth=None, ca=None):
        super().__init__(ppm, offset_ms)
        host, port = url.split("://")[1].split(":")
        self.base = "duelclock/%s/" % event
        self.tables = list(tables)
        self.clients = {}
        self._connected = set()
        for t in self.tables:
            c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="table-%d" % t.tbl)
            c.will_set(self._topic(t.tbl, "state"), b"offline", 0, retain=True)
            if auth:
                c.username_pw_set(*auth)
            if ca:
                c.tls_set(ca_certs=ca)
            c.on_connect = self._on_connect
            c.on_message = self._on_message
            c.user_data_set(t)
            c.connect_async(host, int(port), 30)
            c.loop_start()
            self.clients[t.tbl] = c
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True)
        self._thread.start()

    def _topic(self, tbl, what):
        return self.base + "table/%d/%s" % (tbl, what)

    def _on_connect(self, client, table, flags, reason, props):
        if reason.is_failure:
            return
        client.subscribe([(self._topic(table.tbl, "cmd"), 1)])
        table.hello()
        self._connected.add(table.tbl)

    def _on_message(self, client, table, msg):
        payload = msg.payload if msg.payload.endswith(b"\n") else msg.payload + b"\n"
        table.feed(payload, self.local_ms())

    def all_connected(self):
        return len(self._connected) == len(self.tables)

    def _tick(self):
        while not self._stop.wait(self.TICK_S):
            local = self.local_ms()
            for t in self.tables:
                t.tick(local)
                for k, line in t.take():
                    if k == "state":
                        self.clients[t.tbl].publish(self._topic(t.tbl, "state"), line, 0, True)
                    else:
                        self.clients[t.tbl].publish(self._topic(t.tbl, "report"), line, 1)

    def crash(self, tbl):
        """Drop table tbl's connection without a DISCONNECT: the broker sends its will."""
        c = self.clients[tbl]
        c.loop_stop()
        c.socket().close()

    def stop(self):
        self._stop.set()
        self._thread.join(5)
        for tbl, c in self.clients.items():
            if c.socket() is not None:
                c.disconnect()
            c.loop_stop()
