"""The desk's MQTT 3.1.1 client: one reader thread, QoS 0 and 1, a persistent session. It
replaces paho-mqtt at the desk, whose Python costs per message (a wake-up system call, a
condition object and a write per publish; a thread hop per packet read) were most of the
desk's CPU when 2,000 tables answered a round start (`make bench`, round_start_*).

  connect: TCP (no Nagle: a sync reply must not wait behind the packet before it), CONNECT
           with clean session 0, CONNACK 0 -> on_connect(); any other answer, a closed socket
           or KEEPALIVE_S x 1.5 without a byte from the broker -> on_disconnect() once, then
           a new connection after RETRY_S, doubling up to RETRY_MAX_S
  publish: QoS 1 sends wait in `_inflight` by packet id until PUBACK; after a reconnect they
           go again, flagged DUP (the broker kept the session: MQTT 3.1.1, 4.4). Sent from any
           thread: the bytes go straight to the socket; what it does not take waits for the
           reader thread, woken through a socket pair.
  receive: on_message(topic, payload, retained, rx) for every PUBLISH, rx the `now()` of the
           read that brought it (every packet of one read shares it: a sync request's t2 is
           when the desk got it, not when the packets before it were handed on); a QoS 1
           PUBLISH is acked after on_message returns (at least once, as paho did), the acks
           of one read in one write.
"""
import select
import socket
import struct
import sys
import threading
import time

KEEPALIVE_S = 30
RETRY_S = 1.0
RETRY_MAX_S = 5.0
CONNECT_TIMEOUT_S = 5.0
READ_BYTES = 65536
CONNECT, CONNACK, PUBLISH, PUBACK, SUBSCRIBE, SUBACK = 1, 2, 3, 4, 8, 9
PINGREQ, PINGRESP, DISCONNECT = 12, 13, 14


# The packets (MQTT 3.1.1, 2.2): also what the bench's light tables speak (mqtt_tables.py).

class MqttError(Exception):
    """The broker refused or broke the connection."""


def string(s):
    """An MQTT string: 2-byte length, UTF-8."""
    b = s.encode() if type(s) is str else s
    return struct.pack("!H", len(b)) + b


def packet(kind, flags, body):
    """Fixed header (kind, flags, remaining length) + body."""
    n, size = len(body), bytearray()
    while True:
        b, n = n & 0x7f, n >> 7
        size.append(b | (0x80 if n else 0))
        if not n:
            return bytes([kind << 4 | flags]) + bytes(size) + body


def parse(buf):
    """The whole packets at the start of buf: ([(kind, flags, body)], bytes used)."""
    out, at = [], 0
    while at + 2 <= len(buf):
        n, shift, i = 0, 0, at + 1
        while True:
            if i >= len(buf) or shift > 21:
                if shift > 21:
                    raise MqttError("a packet length over 4 bytes")
                return out, at
            b = buf[i]
            n |= (b & 0x7f) << shift
            shift += 7
            i += 1
            if not b & 0x80:
                break
        if i + n > len(buf):
            break
        out.append((buf[at] >> 4, buf[at] & 0x0f, bytes(buf[i:i + n])))
        at = i + n
    return out, at


class Client:
    """One connection to (host, port) as client_id; auth (user, password) or None; `now`
    stamps what arrives. Callbacks run in the reader thread: on_connect(), on_disconnect(),
    on_message(topic, payload, retained, rx)."""

    def __init__(self, host, port, client_id, auth=None, keepalive_s=KEEPALIVE_S,
                 now=time.monotonic):
        self.host, self.port, self.client_id = host, port, client_id
        self.auth, self.keepalive_s, self.now = auth, keepalive_s, now
        self.on_connect = self.on_disconnect = lambda: None
        self.on_message = lambda topic, payload, retained, rx: None
        self._sent_s = 0.0               # time.monotonic() of the last bytes written
        self._lock = threading.Lock()    # _sock, _out, _inflight, _pid
        self._sock = None
        self._out = bytearray()          # bytes the socket has not taken yet
        self._inflight = {}              # packet id -> PUBLISH bytes (QoS 1, no PUBACK yet)
        self._pid = 0
        self._stop = threading.Event()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._thread = None

    def start(self):
        self._thread = threading.Thread(target=self._run, name="mqtt " + self.client_id,
                                        daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        with self._lock:
            sock = self._sock
            if sock is not None:
                try:
                    sock.send(packet(DISCONNECT, 0, b""))
                except OSError:
                    pass
        self._wake()
        if self._thread is not None:
            self._thread.join(5)
        self._wake_r.close()
        self._wake_w.close()

    def subscribe(self, topics):
        """[(filter, qos)]: asked once per connection (call it from on_connect)."""
        with self._lock:
            pid = self._next_pid()
        body = struct.pack("!H", pid) + b"".join(string(t) + bytes([q]) for t, q in topics)
        self._write(packet(SUBSCRIBE, 2, body))

    def publish(self, topic, payload, qos=1):
        """Send now, or as soon as the broker is back (QoS 1: until it acks)."""
        self.publish_many([(topic, payload)], qos)

    def publish_many(self, messages, qos=1):
        """[(topic, payload)], as many publish() calls in order, in one write: a round
        start's 2,000 commands are one system call here and one read at the broker."""
        if qos:
            pkts = []
            with self._lock:
                for topic, payload in messages:
                    pid = self._next_pid()
                    pkt = packet(PUBLISH, 2, string(topic) + struct.pack("!H", pid) + payload)
                    self._inflight[pid] = pkt
                    pkts.append(pkt)
        else:
            pkts = [packet(PUBLISH, 0, string(topic) + payload) for topic, payload in messages]
        self._write(b"".join(pkts))

    # --- the socket -------------------------------------------------------------------------

    def _next_pid(self):
        # Under _lock: publish() runs in the desk's threads, subscribe() in the reader's.
        self._pid = self._pid % 65535 + 1     # a 65,536th unacked send replaces the oldest
        return self._pid

    def _write(self, data):
        with self._lock:
            self._sent_s = time.monotonic()
            if self._sock is None:
                return                        # QoS 1 waits in _inflight for the reconnect
            if not self._out:
                try:
                    n = self._sock.send(data)
                except (BlockingIOError, InterruptedError):
                    n = 0
                except OSError:
                    n = len(data)             # the reader sees the socket gone
                if n == len(data):
                    return
                data = data[n:]
            self._out += data
        self._wake()

    def _wake(self):
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass                              # already woken (buffer full) or stopped

    def _flush(self):
        with self._lock:
            if self._out and self._sock is not None:
                try:
                    n = self._sock.send(self._out)
                except (BlockingIOError, InterruptedError):
                    n = 0
                del self._out[:n]
            return bool(self._out)

    def _connect(self):
        sock = socket.create_connection((self.host, self.port), CONNECT_TIMEOUT_S)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        user, password = self.auth or (None, None)
        flags = (0x80 if user else 0) | (0x40 if user and password is not None else 0)
        body = string("MQTT") + bytes([4, flags]) + struct.pack("!H", self.keepalive_s)
        body += string(self.client_id)                       # clean session 0: flag bit 1 clear
        if flags & 0x80:
            body += string(user)
        if flags & 0x40:
            body += string(password)
        sock.sendall(packet(CONNECT, 0, body))
        buf = b""
        while len(buf) < 4:
            got = sock.recv(4 - len(buf))
            if not got:
                raise MqttError("the broker closed the connection before CONNACK")
            buf += got
        if buf[0] >> 4 != CONNACK or buf[3] != 0:
            raise MqttError("CONNACK refused: code %d" % buf[3])
        sock.setblocking(False)
        with self._lock:
            self._sock, self._out = sock, bytearray()
            for pkt in self._inflight.values():
                self._out += bytes([pkt[0] | 0x08]) + pkt[1:]     # DUP: a send again
        return sock

    def _run(self):
        delay_s = RETRY_S
        while not self._stop.is_set():
            try:
                sock = self._connect()
            except (OSError, MqttError):
                self._stop.wait(delay_s)
                delay_s = min(RETRY_MAX_S, delay_s * 2)
                continue
            delay_s = RETRY_S
            self._call(self.on_connect)
            try:
                self._serve(sock)
            except (OSError, MqttError):
                pass
            with self._lock:
                self._sock = None
            try:
                sock.close()
            except OSError:
                pass
            self._call(self.on_disconnect)
            if not self._stop.is_set():
                self._stop.wait(RETRY_S)

    def _serve(self, sock):
        buf = bytearray()
        heard = time.monotonic()
        while not self._stop.is_set():
            pending = self._flush()
            r, w, _ = select.select([sock, self._wake_r], [sock] if pending else [], [],
                                    min(1.0, self.keepalive_s / 2))
            rx = self.now()
            now = time.monotonic()
            if self._wake_r in r:
                try:
                    self._wake_r.recv(4096)
                except OSError:
                    pass
            if sock in r:
                data = sock.recv(READ_BYTES)
                if not data:
                    raise MqttError("the broker closed the connection")
                heard = now
                buf += data
                packets, used = parse(buf)
                del buf[:used]
                acks = []
                for kind, flags, body in packets:
                    self._take(kind, flags, body, rx, acks)
                if acks:
                    self._write(b"".join(acks))
            if now - heard > self.keepalive_s * 1.5:
                raise MqttError("the broker is silent")
            if now - self._sent_s > self.keepalive_s / 2:
                self._write(packet(PINGREQ, 0, b""))

    def _call(self, callback, *args):
        # A callback's bug is said and the link lives on: a dead reader thread would leave
        # the desk deaf, and a message that raises is acked all the same (else the broker
        # would send it again at every reconnect).
        try:
            callback(*args)
        except Exception as e:
            sys.stderr.write("mqtt %s: %s failed: %r\n" % (self.client_id, callback.__name__, e))

    def _take(self, kind, flags, body, rx, acks):
        # A QoS 1 PUBLISH's PUBACK goes in `acks`: the read's acks are one write.
        if kind == PUBLISH:
            qos = flags >> 1 & 3
            n = struct.unpack("!H", body[:2])[0]
            topic, at = body[2:2 + n].decode("utf-8", "replace"), 2 + n
            pid = body[at:at + 2] if qos else None
            self._call(self.on_message, topic, body[at + (2 if qos else 0):], bool(flags & 1),
                       rx)
            if pid is not None:
                acks.append(packet(PUBACK, 0, pid))
        elif kind == PUBACK:
            with self._lock:
                self._inflight.pop(struct.unpack("!H", body[:2])[0], None)
