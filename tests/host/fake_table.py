"""Duel tables at protocol level, for the desk's tests, the simulator and the benches.

A FakeTable speaks docs/protocol.md with the real core: wire.Encoder/Decoder, clock.Clock,
match.Match. It says hello, sends its state on change and every few seconds, syncs its
clock, takes the desk's commands, plays a scripted match, and at match end sends its record
and result, again and again until the desk acks them. It never reads a clock itself: the
caller passes local ms (a table's own ticks, drift and all) to every call.

    table.feed(bytes, local_ms)   desk -> table bytes (any chunking)
    table.tick(local_ms)          what is due: sync request, periodic state, resends
    table.play(events, local_ms)  scripted match events (t: ms since the round start)
    table.take()                  [(k, line)] to send to the desk, oldest first

Drivers put tables on a wire:
    Room          desk + tables through an in-memory link on one simulated clock (no threads)
    StreamTables  tables on a byte stream (TCP socket server, pty master) in real time
    MqttTables    tables as MQTT clients (one client each, last will "offline")
"""
import os
import select
import socket
import threading
import time

from paho.mqtt import client as mqtt

from duelclock.core.clock import SERIAL_BUDGET_MS, Clock
from duelclock.core.match import Match
from duelclock.core.record import RULE_SETS, check_event
from duelclock.core.sign import canonical, table_key
from duelclock.core.wire import MAX_LINE_BYTES, Decoder, Encoder
from duelclock_desk.desk import Desk, fingerprint
from duelclock_desk.links import Link
from duelclock_desk.store import Store

SIG_BYTES = len(',"sig":""') + 64 + 1       # what signing adds to the canonical body, "\n" in
COMMAND_KINDS = ("round", "pause", "resume", "extend", "rules", "ack")


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


class FakeTable:
    """One table. Thread-safe (a lock per table), so a driver thread and a test can share it.
    `lie` ({"result", "wins"}) makes it report a result its record does not give.
    `key` is the event key: the table keeps only its own, table_key(key, tbl), as deploy
    gives a board."""

    def __init__(self, key, tbl, boot=1, seen=None, budget_ms=SERIAL_BUDGET_MS,
                 state_every_ms=5000, resend_every_ms=3000, board="FAKE", fw="0.0-test"):
        self.tbl = tbl
        self.board, self.fw = board, fw
        own = table_key(key, tbl)
        self.enc = Encoder(own, boot, tbl)
        self.dec = Decoder(own, tbl, seen)
        self.clock = Clock(budget_ms)
        self.state_every_ms = state_every_ms
        self.resend_every_ms = resend_every_ms
        self.taken = []           # desk commands taken (not sync), as received
        self.round = None         # the last round message taken (fields)
        self.rules = None
        self.extended_ms = 0
        self.match = None
        self.record = []          # the match record: round_start first
        self.result = None        # (result, wins) reported
        self.acked = None         # (round, events) of the desk's last ack
        self.lie = None
        self.sync_replies = 0
        self._sync_seq = None     # seq of the outstanding sync request
        self._next_state = 0
        self._next_resend = None
        self._out = []
        self._lock = threading.RLock()

    # --- what the table says ----------------------------------------------------------------

    def _send(self, k, fields):
        self._out.append((k, self.enc.build(k, fields)))

    def take(self):
        with self._lock:
            out, self._out = self._out, []
            return out

    def hello(self, battery=None):
        with self._lock:
            fields = {"board": self.board, "fw": self.fw}
            if battery is not None:
                fields["battery"] = battery
            self._send("hello", fields)

    def desk_ms(self, local_ms):
        return self.clock.desk_now_ms(local_ms)

    def state_fields(self, local_ms):
        m = self.match
        fields = {"round": self.round["round"] if self.round else 0,
                  "phase": m.phase() if m else "waiting",
                  "duel": (len(m.duels) + (1 if m.in_duel else 0)) if m else 0,
                  "wins": dict(m.wins) if m else {"A": 0, "B": 0},
                  "lp": dict(m.lp) if m else {"A": 8000, "B": 8000},
                  "turn": m.turn if m else 0, "remaining_ms": self.remaining_ms(local_ms)}
        if self.clock.synced:
            # A driver thread may pass a local time read just before another thread took
            # a sync reply: never a negative age.
            fields["sync_age_ms"] = max(0, self.clock.age_ms(local_ms))
            fields["sync_err_ms"] = int(self.clock.error_ms(local_ms) + 0.5)
        return fields

    def remaining_ms(self, local_ms):
        if not self.round:
            return 0
        limit = self.round["limit_s"] * 1000 + self.extended_ms
        now = self.desk_ms(local_ms)
        return limit if now is None else limit - max(0, now - self.round["start_ms"])

    def tick(self, local_ms):
        """Send what is due at local_ms."""
        with self._lock:
            if self.clock.next_exchange_in_ms(local_ms) == 0:
                self._sync_seq = self.enc.seq
                self._send("sync", {"t1": local_ms})
                self.clock.sent(local_ms)
            if local_ms >= self._next_state:
                self._send("state", self.state_fields(local_ms))
                self._next_state = local_ms + self.state_every_ms
            if self._next_resend is not None and local_ms >= self._next_resend:
                self._send_record()
                self._next_resend = local_ms + self.resend_every_ms

    # --- what the desk says -----------------------------------------------------------------

    def feed(self, data, local_ms):
        with self._lock:
            for msg in self.dec.feed(data):
                self._take(msg, local_ms)

    def _take(self, msg, local_ms):
        k = msg["k"]
        if k == "sync":
            if msg["re"] == self._sync_seq:
                self._sync_seq = None
                self.clock.sample(msg["t1"], msg["t2"], msg["t3"], local_ms)
                self.sync_replies += 1
            return
        self.taken.append(msg)
        if k == "round":
            self._round(msg)
        elif k == "extend":
            self.extended_ms += msg["ms"]
        elif k == "rules":
            self.rules = msg["name"]
        elif k == "ack":
            self.acked = (msg["round"], msg["events"])
            if self.round and msg["round"] == self.round["round"] \
                    and msg["events"] == len(self.record):
                self._next_resend = None
        self._next_state = 0                        # a change: state at the next tick

    def _round(self, msg):
        fields = {k: v for k, v in msg.items() if k not in ("v", "k", "seq", "tbl")}
        same = self.round is not None and self.round["round"] == fields["round"]
        self.round = fields
        if same:
            return                                  # names or a late copy: the match goes on
        start = {"t": 0, "ev": "round_start"}
        for k in ("round", "kind", "limit_s", "cap_s", "extra_turns", "seating"):
            start[k] = fields[k]
        if self.rules in RULE_SETS:
            start["rules"] = self.rules
        self.record = [start]
        self.match = Match(start)
        self.result, self.extended_ms, self._next_resend = None, 0, None

    # --- the match --------------------------------------------------------------------------

    def play(self, events, local_ms=0):
        """Record and apply scripted events; those the rules refuse are left out of the
        record, as a board does, and returned as [(event, why)]. At match end send the
        record and the result (and again every resend_every_ms until acked)."""
        refused = []
        with self._lock:
            for ev in events:
                why = check_event(ev) or self.match.apply(ev)
                if why is None:
                    self.record.append(ev)
                else:
                    refused.append((ev, why))
            self._next_state = 0
            if self.match.over and self.result is None:
                v = self.match.verdict()
                self.result = self.lie or {"result": v["result"], "wins": v["wins"]}
                self._next_resend = local_ms
        return refused

    def _send_record(self):
        r, total = self.round["round"], len(self.record)
        for first, events in self.chunks():
            self._send("record", {"round": r, "first": first, "events": events, "total": total})
        self._send("result", {"round": r, "result": self.result["result"],
                              "wins": self.result["wins"], "events": total})

    def chunks(self):
        """[(first, events)] of the record, each as many events as fit one line."""
        out, i, total = [], 0, len(self.record)
        base = len(canonical({"v": 1, "k": "record", "tbl": self.tbl, "seq": self.enc.seq + total,
                              "round": self.round["round"], "first": total, "events": [],
                              "total": total})) + SIG_BYTES
        while i < total:
            size, n = base, 0
            while i + n < total and n < 64:
                grow = len(canonical(self.record[i + n])) + (1 if n else 0)
                if size + grow > MAX_LINE_BYTES + 1:
                    break
                size += grow
                n += 1
            out.append((i, self.record[i:i + n]))
            i += n
        return out


# --- an in-memory room: the desk and tables on one simulated clock -------------------------

class MemoryLink(Link):
    """The desk's end of an in-memory wire: what the desk sends waits in `to_tables`."""

    def __init__(self, url="memory://"):
        super().__init__(url)
        self.to_tables = []

    def send(self, line, tbl):
        self.to_tables.append(line)


class Room:
    """A Desk (real store in `path`) and FakeTables on one in-memory link, simulated time:
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
                for t in self.tables.values():
                    t.feed(line, self.local(t.tbl))
            up = []
            for t in self.tables.values():
                up += [line for _, line in t.take()]
            up = self.to_desk(up)
            if up:
                self.link.receive(b"".join(up))
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
    """FakeTables on one byte stream, in a thread: a TCP server (`serve_tcp`, the desk
    connects with socket://127.0.0.1:PORT and may reconnect) or a pty (`on_pty`, the desk
    opens `path`). Each table says hello when the desk connects."""

    TICK_S = 0.005

    def __init__(self, tables, ppm=0, offset_ms=0):
        super().__init__(ppm, offset_ms)
        self.tables = list(tables)
        self.url = self.path = None
        self.connections = 0
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
        for t in self.tables:
            if data:
                t.feed(data, local)
            t.tick(local)
        out = b"".join(line for t in self.tables for _, line in t.take())
        if out:
            write(out)

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
    """FakeTables as MQTT clients of `url` (mqtt://host:port), one client each with the last
    will "offline" on its state topic; a thread ticks them all."""

    TICK_S = 0.005

    def __init__(self, url, event, tables, ppm=0, offset_ms=0):
        super().__init__(ppm, offset_ms)
        host, port = url.split("://")[1].split(":")
        self.base = "duelclock/%s/" % event
        self.tables = list(tables)
        self.clients = {}
        self._connected = set()
        for t in self.tables:
            c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="table-%d" % t.tbl)
            c.will_set(self._topic(t.tbl, "state"), b"offline", 0, retain=True)
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
