"""The desk's ways to the tables. Like mpremote's transports: a base class built on two
primitives, and one subclass per kind of link, picked by URL scheme from a table.

  desk --send(line, tbl)--> Link --> wire (USB serial, socket, MQTT topics)
  desk <--sink.lines(link, lines, rx_ms)-- Link.receive(bytes) <-- wire (reader thread)

`send(line, tbl)` takes one signed line (wire.Encoder) for table `tbl` (signed with that
table's key: there is no line for all tables); `send_many` a list of them at once.
Incoming bytes go to `receive`, which frames them per stream and hands whole lines (without
"\\n", each at most MAX_LINE_BYTES + 1 bytes: an oversized line arrives cut, so the desk's
Decoder counts it as `size`) to the sink, stamped with the desk time of receipt (a sync
reply's t2: sink.stamp_ms(), a float ms where the desk's clock gives us). The sink (the desk
service) is called from the link's own thread: it must be thread-safe. It also gets
`sink.link_status(link, tbl, online)`: tbl None for the whole link.
"""
import os
import select
import socket
import threading
from urllib.parse import urlsplit

import serial

from duelclock.core.record import Lines
from duelclock.core.wire import MAX_LINE_BYTES
from duelclock_desk import mqtt_session

RETRY_S = 1.0              # a lost serial port or socket is reopened this often
READ_TIMEOUT_S = 0.1       # a reader thread notices stop() within this
READ_BYTES = 65536
MQTT_KEEPALIVE_S = 30


class Link:
    """One link to some tables. Subclasses implement send() and call receive()."""

    def __init__(self, url):
        self.url = url
        self.sink = None
        self.up = False
        self._lines = Lines(MAX_LINE_BYTES)

    def start(self, sink):
        self.sink = sink

    def stop(self):
        pass

    def send(self, line, tbl, kind="cmd"):
        """Send one line to table tbl. kind "sync": a sync reply, worth nothing late (the
        table asks again), so a link may send it without delivery guarantees."""
        raise NotImplementedError

    def send_many(self, items):
        """[(line, tbl)], in order: as many send()s, unless the link can do better."""
        for line, tbl in items:
            self.send(line, tbl)

    def info(self):
        return {"url": self.url, "up": self.up}

    def receive(self, data, whole=False, retained=False, rx_ms=None):
        """Bytes from the wire. `whole`: `data` is a message of its own (an MQTT payload),
        framed apart from the stream; `retained`: a broker's retained copy, maybe old;
        rx_ms: when they were read (default: now)."""
        if rx_ms is None:
            rx_ms = self.sink.stamp_ms()
        split = Lines(MAX_LINE_BYTES).feed(data + b"\n") if whole else self._lines.feed(data)
        lines = [x for x in split if x is None or x.strip()]     # None: a line too long
        if lines:
            self.sink.lines(self, lines, rx_ms, retained)

    def _status(self, up):
        self.up = up
        self.sink.link_status(self, None, up)


class SerialLink(Link):
    """A USB CDC or UART port, or anything pyserial's serial_for_url opens: /dev/ttyACM0,
    socket://127.0.0.1:7001 (the simulator), loop://. A reader thread reopens a lost port
    every RETRY_S. One port may carry several tables; lines for others are dropped there."""

    BAUD = 115200

    def __init__(self, url, event=None):
        super().__init__(url)
        self._port = None
        self._wlock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None

    def start(self, sink):
        super().start(sink)
        self._thread = threading.Thread(target=self._run, name="link " + self.url, daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._close()
        if self._thread:
            self._thread.join(5)

    def send(self, line, tbl, kind="cmd"):
        with self._wlock:
            port = self._port
            if port is None:
                return
            try:
                port.write(line)
            except (serial.SerialException, OSError):
                pass                  # the reader thread sees the port gone and reopens it

    def _close(self):
        with self._wlock:
            port, self._port = self._port, None
        if port is not None:
            try:
                port.close()
            except (serial.SerialException, OSError):
                pass

    def _run(self):
        while not self._stop.is_set():
            try:
                port = serial.serial_for_url(self.url, baudrate=self.BAUD,
                                             timeout=READ_TIMEOUT_S, write_timeout=1)
            except (serial.SerialException, OSError, ValueError):
                self._stop.wait(RETRY_S)
                continue
            sock = getattr(port, "_socket", None)      # socket:// (pyserial's, private)
            if sock is not None:
                # Nagle + delayed ACK would hold a sync reply up to ~40 ms behind the packet
                # before it (shared/toolchain.md): its t3 would be that much wrong.
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._wlock:
                self._port = port
            self._status(True)
            try:
                read = _reader(port)
                while not self._stop.is_set():
                    data = read()
                    if data:
                        self.receive(data)
            except (serial.SerialException, OSError, TypeError, AttributeError, ValueError):
                pass                  # unplugged, socket closed, or closed by stop()
            self._close()
            self._lines = Lines(MAX_LINE_BYTES)
            self._status(False)
            self._stop.wait(RETRY_S)


def _reader(port):
    """A function that returns all the bytes waiting on `port`, as soon as any arrive (after
    at most READ_TIMEOUT_S): so a receive time is true to the ms, and a burst is one read.
    pyserial's socket:// says in_waiting is 1 whatever is there, so ports with a file
    descriptor (ttys, ptys, sockets) are polled with select, in non-blocking mode, and read
    with one os.read: pyserial's read selects again first, and every call that lets the GIL
    go may wait up to a switch interval (5 ms) to get it back from the desk's loop thread
    (a sync request's t2 that late is an offset error of half of it). The caller stamps after
    the read: no byte is stamped before it arrived."""
    try:
        fd = port.fileno()
    except (AttributeError, NotImplementedError, serial.SerialException):
        return lambda: port.read(port.in_waiting or 1)      # loop://: in_waiting is exact
    port.timeout = 0

    def read():
        if not select.select([fd], [], [], READ_TIMEOUT_S)[0]:
            return b""
        try:
            data = os.read(fd, READ_BYTES)
        except BlockingIOError:
            return b""
        if not data:       # ready but empty: unplugged (a socket: closed), as pyserial says
            raise serial.SerialException("the port is ready but gave no data")
        return data
    return read


class MqttLink(Link):
    """The tables over an MQTT broker (docs/protocol.md, "Links") through paho-mqtt
    (mqtt_session.py), a persistent session so QoS 1 reports wait at the broker while the
    desk restarts. mqtt://[USER:PASSWORD@]HOST[:1883], or mqtts://...[:8883] with TLS: `ca`,
    a CA file the broker's certificate chains to (None: the system's CAs); `auth` (user,
    password) when the URL names none.

      duelclock/<event>/table/<n>/cmd    desk -> n, QoS 1: everything for one table
      duelclock/<event>/table/<n>/state  n -> desk, QoS 0, retained; last will "offline"
      duelclock/<event>/table/<n>/report n -> desk, QoS 1: hello, record, result, sync

    The bare "offline" will is link status only, never match state (anyone on the broker
    can publish it). No desk topic is for all tables, and none is retained: a table that
    boots mid-round gets the round from the desk's re-push (protocol.py)."""

    def __init__(self, url, event, ca=None, auth=None):
        u = urlsplit(url)
        super().__init__(u._replace(netloc=u.netloc.rpartition("@")[2]).geturl())  # no password
        self.tls = u.scheme == "mqtts"
        self._host = u.hostname or "127.0.0.1"
        self._port = u.port or (8883 if self.tls else 1883)
        self._auth = (u.username, u.password or "") if u.username else auth
        self._ca = ca
        self.event = event
        self._base = "duelclock/%s/" % event
        self._client = None

    def start(self, sink):
        super().start(sink)
        c = mqtt_session.Session(self._host, self._port, "duelclock-desk-" + self.event,
                                 self._auth, (self._ca or True) if self.tls else None,
                                 MQTT_KEEPALIVE_S,
                                 now=sink.stamp_ms)
        c.on_connect = self._on_connect
        c.on_disconnect = lambda reason: self._status(False)
        c.on_message = self._on_message
        self._client = c                 # before start(): on_connect uses it
        c.start()

    def stop(self):
        if self._client:
            self._client.stop()

    def info(self):
        """The Link's, and why it is down when it is (a refused login, an untrusted CA)."""
        out = super().info()
        if self._client is not None and self._client.error and not self.up:
            out["error"] = self._client.error
        return out

    def send(self, line, tbl, kind="cmd"):
        # A sync reply at QoS 0, as the table's request: a PUBACK for it, and its resend
        # after a reconnect, would cost the desk, the broker and the table for a reply the
        # table no longer takes.
        self._client.publish(self._base + "table/%d/cmd" % tbl, line, 0 if kind == "sync" else 1)

    def send_many(self, items):
        self._client.publish_many([(self._base + "table/%d/cmd" % tbl, line)
                                   for line, tbl in items], 1)

    def _on_connect(self):
        b = self._base
        self._client.subscribe([(b + "table/+/state", 0), (b + "table/+/report", 1)])
        self._status(True)

    def _on_message(self, topic, payload, retained, rx_ms):
        rest = topic[len(self._base):] if topic.startswith(self._base) else ""
        parts = rest.split("/")
        if len(parts) != 3 or parts[0] != "table" or not parts[1].isdigit():
            return
        if parts[2] == "state" and payload.strip() == b"offline":
            self.sink.link_status(self, int(parts[1]), False)
        elif payload:
            self.receive(payload, whole=True, retained=retained, rx_ms=rx_ms)


# URL scheme -> link class; a bare path (/dev/ttyACM0, COM3) is a serial port.
SCHEMES = {
    "": SerialLink,
    "socket": SerialLink,
    "rfc2217": SerialLink,
    "loop": SerialLink,
    "mqtt": MqttLink,
    "mqtts": MqttLink,
}


def open_link(url, event, ca=None, auth=None):
    """The link for `url` (not started); ca and auth for MQTT (MqttLink). ValueError for a
    scheme no link speaks."""
    scheme = url.split("://", 1)[0] if "://" in url else ""
    cls = SCHEMES.get(scheme)
    if cls is None:
        raise ValueError("no link for %r (known: %s, or a device path)"
                         % (url, ", ".join(s + "://" for s in SCHEMES if s)))
    if cls is MqttLink:
        return cls(url, event, ca, auth)
    return cls(url, event)
