# The table's end of the desk link: the same lines over USB serial or MQTT (docs/protocol.md).
# I/O at the edge. Both links offer the same three calls, polled by the app's link task:
#   poll() -> bytes received since the last call (b"" when none; never blocks)
#   send(line, kind) -> True when handed to the link; kind is "state" (latest wins), "report"
#     (delivered) or "sync" (a sync request: useless late, so MQTT QoS 0)
#   up -> whether the link is believed to work
# make_link(board, cfg, local_ms) picks the one the table's config names.
import errno
import select

from .core import const

# Bytes a poll takes from a stream, at most: the USB port is anyone's, and a flood of junk
# must cost the key scan a bounded slice per poll. A stream read a byte at a time says how
# few it can afford in POLL_BYTES (drivers/duplex.py: USB CDC took 4 KB a poll byte by byte,
# 850 ms on an RP2040). What is left waits in the port's buffer and the host's: a flood
# slows the link, never the table.
POLL_BUDGET_BYTES = 4096
READ_BYTES = 512


class StreamLink:
    """Lines over a byte stream: USB CDC, a UART, or the simulator's socket. `stream` needs
    read/write (or recv/send for a socket) and works with select.poll."""

    def __init__(self, stream):
        self.stream = stream
        self._poll = select.poll()
        self._poll.register(stream, select.POLLIN)
        self._recv = getattr(stream, "recv", None)
        self._send = getattr(stream, "send", None) or stream.write
        self._budget = getattr(stream, "POLL_BYTES", POLL_BUDGET_BYTES)
        self.up = True

    def poll(self):
        """What has arrived, at most the stream's budget (above)."""
        out = b""
        while len(out) < self._budget:
            ready = self._poll.poll(0)
            if not ready:
                break
            if ready[0][1] & (select.POLLHUP | select.POLLERR):
                self.up = False
                break
            n = min(READ_BYTES, self._budget - len(out))
            try:
                data = self._recv(n) if self._recv else self.stream.read(n)
            except OSError:
                self.up = False
                break
            if not data:
                self.up = False                  # the far end closed: the app keeps time
                break
            self.up = True
            out += data
        return out

    def send(self, line, kind):
        try:
            n = self._send(line)
            while n is not None and n < len(line):   # a socket may take part of it
                line = line[n:]
                n = self._send(line)
            return True
        except OSError:
            self.up = False
            return False


# --- MQTT ----------------------------------------------------------------------------------
# umqtt.simple (micropython-lib) encodes and decodes every packet, but it was written for a
# loop that may wait: connect() reads the CONNACK, subscribe() the SUBACK and a QoS 1
# publish() its PUBACK from a socket with no timeout: a broker that stopped answering would
# hold the table's loop (and its clock) for as long as it kept quiet. Here umqtt.simple holds a
# _Stream, which never waits. A read is served from what has arrived; a read of more raises
# _Later, and MqttLink tries that call again from its start once more has arrived. The
# bytes the call wrote on an earlier try are not sent again (it writes the same ones: its
# packet id is put back), and the messages it handed over count only when it completes. So
# no poll() or send() waits on the network: each costs its own CPU, and a poll takes desk
# lines for _POLL_WORK_MS at most. Anything else the library raises (MQTTException for a
# refused login, OSError, an IndexError or AssertionError on garbage) is "link down": the
# link closes and tries again after a back-off, and the table keeps time meanwhile.

# The longest one poll() or send() may hold the table's loop, on the unix port: a clock's
# second then turns at most 1/20 s late, and keys wait at most three scans (they are
# sampled on time meanwhile). Nothing in either waits on the network; what they cost is
# their CPU: at most _POLL_WORK_MS of desk lines, or one step of a TLS handshake (mbedtls
# checks the broker's certificate chain and makes the key exchange in one call, 20-50 ms
# here, at this bound's edge; on an RP2040 far longer: docs/protocol.md). The bench
# measures both, on every fault (table_link_fault_hold_max_ms) and over TLS
# (table_tls_step_max_ms).
LINK_HOLD_MS = 50
# A poll takes received messages for this long at most and leaves the rest for the next
# one (the link task polls every 20 ms, the keys every 15 ms).
_POLL_WORK_MS = const(20)
# From the first TCP packet to the SUBACK (TLS handshake and CONNACK included): a broker that
# takes longer is treated as gone, and the link tries again after the back-off.
_CONNECT_TIMEOUT_MS = const(10000)
# A PUBACK, or the rest of a packet begun, that takes longer than this: the broker (or the
# way to it) is gone. A silent link with nothing due is found by the keepalive pings.
_REPLY_TIMEOUT_MS = const(10000)
_BACKOFF_MS = const(1000)       # the first retry after the link goes down; doubled each time
_BACKOFF_MAX_MS = const(30000)
# Received and not yet taken, or written and not yet taken by the socket: past this the
# broker floods or is not a broker (its packets are at most 4 KB: broker.MAX_PACKET_BYTES),
# or the way to it is jammed. The link goes down rather than grow the heap.
_BUFFER_LIMIT_BYTES = const(8192)
# A non-blocking socket's "not yet" (EWOULDBLOCK is EAGAIN): the port's own numbers (the
# ESP32's newlib has another EINPROGRESS than Linux and lwIP).
_WAIT = (errno.EAGAIN, errno.EINPROGRESS)
# Why MqttLink took the link down, for the traceback of someone debugging it (it catches
# them itself): Linux's numbers.
_ETIMEDOUT = const(110)         # the broker did not answer in time
_EPROTO = const(71)             # it answered what no one asked
_ENOBUFS = const(105)           # too much unread, or unsent
_ECONNRESET = const(104)        # it closed the connection
_ECONNREFUSED = const(111)


class _Later(Exception):
    """What umqtt.simple asked to read has not all arrived: try the call again later."""


class _Stream:
    """The socket umqtt.simple holds: `sock` (TCP, or TLS over it), non-blocking. Writes are
    queued and go out in one piece when MqttLink flushes (so no Nagle wait between a packet's
    small writes); reads come from what pull() took in. During a try (MqttLink._try) `at` is
    the read position in `rx` and the first `mute` bytes written are swallowed."""

    def __init__(self, sock, addr):
        self.sock = sock
        self.addr = addr
        self.rx = b""
        self.tx = b""
        self.at = 0
        self.mute = 0
        self.wrote = 0

    # What umqtt.simple calls. Its connect() opens its socket through its module's `socket`,
    # which is this stream for the call (MqttLink._mqtt_connect): socket() is the stream,
    # connected already, and getaddrinfo() its address. It never blocks, whatever is asked.
    def socket(self):
        return self

    def getaddrinfo(self, host, port):
        return [(0, 0, 0, "", self.addr)]

    def connect(self, *args):
        pass
    setblocking = settimeout = connect

    def read(self, n):
        if len(self.rx) - self.at < n:
            raise _Later()
        data = self.rx[self.at:self.at + n]
        self.at += n
        return data

    def write(self, buf, n=None):
        if isinstance(buf, str):                 # a client id or topic given as str
            buf = buf.encode()
        data = bytes(buf) if n is None else bytes(buf[:n])
        self.wrote += len(data)
        skip = min(self.mute, len(data))
        self.mute -= skip
        self.tx += data[skip:]
        return len(data)

    def close(self):
        self.sock.close()

    # MqttLink's
    def flush(self):
        while self.tx:
            try:
                n = self.sock.write(self.tx)
            except OSError as e:
                if e.args[0] not in _WAIT:
                    raise
                n = None
            if not n:
                break
            self.tx = self.tx[n:]
        if len(self.tx) > _BUFFER_LIMIT_BYTES:
            raise OSError(_ENOBUFS)

    def pull(self):
        """Take in what has arrived; True if anything did. The far end closed: OSError."""
        got = False
        while len(self.rx) <= _BUFFER_LIMIT_BYTES:
            try:
                data = self.sock.read(READ_BYTES)
            except OSError as e:
                if e.args[0] not in _WAIT:
                    raise
                data = None
            if data is None:
                return got
            if not data:
                raise OSError(_ECONNRESET)
            self.rx += data
            got = True
        raise OSError(_ENOBUFS)


class MqttLink:
    """Lines over MQTT with umqtt.simple (micropython-lib). Topics as in docs/protocol.md;
    the last will shows the desk a table gone. `client_factory` () -> a fresh
    umqtt.simple.MQTTClient for the broker (its server, port, user and password; never its
    own ssl); `tls`, an ssl.SSLContext for mqtts, wraps the TCP connection made here.
    umqtt.simple sends no keepalive by itself, so poll() pings after keepalive_s / 2 without
    a byte from the broker, and after keepalive_s without one the link is down."""

    def __init__(self, client_factory, event, tbl, keepalive_s=30, now_ms=None, tls=None):
        self.factory = client_factory
        self.base = "duelclock/%s/" % event
        self.tbl = tbl
        self.keepalive_s = keepalive_s
        self.now_ms = now_ms
        self.tls = tls
        self.client = None
        self.stream = None
        self.up = False
        self._rx = []
        self._held = []               # messages the call being tried delivered
        self._sock = None             # the TCP socket while it connects
        self._addr = None
        self._call = None             # (fn, args, done): a call waiting for its reply
        self._call_at = self._call_pid = self._call_sent = 0
        self._opened_at = self._rx_at = self._pinged_at = 0
        self._retry_at = 0
        self._backoff_ms = _BACKOFF_MS

    def _topic(self, leaf):
        return (self.base + "table/%d/%s" % (self.tbl, leaf)).encode()

    def _on_msg(self, topic, msg):
        self._held.append(bytes(msg) + b"\n")

    # --- connecting, in steps across polls --------------------------------------------------

    def _open(self, now):
        c = self.factory()
        c.set_callback(self._on_msg)
        c.set_last_will(self._topic("state"), b"offline", retain=True, qos=0)
        self.client = c
        self._opened_at = self._rx_at = self._pinged_at = now
        import socket                            # not on every port: only MQTT tables need it
        # a name is looked up here, and that may wait for the DNS: give the broker's address
        self._addr = socket.getaddrinfo(c.server, c.port)[0][-1]
        self._sock = s = socket.socket()
        s.setblocking(False)
        try:
            s.setsockopt(6, 1, 1)                # TCP_NODELAY (toolchain.md, the 44 ms trap)
        except OSError:
            pass
        try:
            s.connect(self._addr)
        except OSError as e:
            if e.args[0] not in _WAIT:
                raise

    def _connected(self):
        """The TCP connection is made: wrap it (TLS) and send the CONNECT."""
        p = select.poll()
        p.register(self._sock, select.POLLOUT)
        ready = p.poll(0)
        if not ready:
            return
        if ready[0][1] & (select.POLLERR | select.POLLHUP):
            raise OSError(_ECONNREFUSED)
        sock, self._sock = self._sock, None
        if self.tls is not None:                 # the handshake runs as the stream flushes
            sock = self.tls.wrap_socket(sock, server_hostname=self.client.server,
                                        do_handshake_on_connect=False)
        self.stream = _Stream(sock, self._addr)
        self._begin(self._mqtt_connect, (), self._subscribe)

    def _mqtt_connect(self):
        from umqtt import simple
        was = simple.socket
        simple.socket = self.stream             # its socket(): the stream connected here
        try:
            self.client.connect()
        finally:
            simple.socket = was

    def _subscribe(self):
        # all the desk sends comes on the table's own topic: none is for all tables
        self._begin(self.client.subscribe, (self._topic("cmd"), 1), self._joined)

    def _joined(self):
        self.up = True
        self._backoff_ms = _BACKOFF_MS

    # --- a call tried until its reply is in ---------------------------------------------------

    def _begin(self, fn, args, done=None):
        self._call = (fn, args, done)
        self._call_at = self.now_ms()
        self._call_pid = self.client.pid
        self._call_sent = 0
        self._try()

    def _try(self):
        """The waiting call once more, on what has arrived. True once it is done."""
        fn, args, done = self._call
        s = self.stream
        self.client.pid = self._call_pid
        s.at, s.mute, s.wrote = 0, self._call_sent, 0
        self._held = []
        try:
            fn(*args)
        except _Later:
            self._call_sent = max(self._call_sent, s.wrote)
            return False
        finally:
            s.mute = 0
            s.flush()
        self._commit()
        self._call = None
        if done is not None:
            done()
        return True

    def _commit(self):
        s = self.stream
        s.rx = s.rx[s.at:]
        s.at = 0
        self._rx.extend(self._held)
        self._held = []

    def _take(self, now):
        """Messages that have arrived, for _POLL_WORK_MS at most."""
        s, c = self.stream, self.client
        while s.rx and self.now_ms() - now < _POLL_WORK_MS:
            s.at = 0
            self._held = []
            try:
                op = c.check_msg()
            except _Later:                       # a packet's start: the rest is on its way
                s.at = 0
                if now - self._rx_at > _REPLY_TIMEOUT_MS:
                    raise OSError(_ETIMEDOUT)
                return
            finally:
                s.flush()                        # the PUBACK of a QoS 1 command
            self._commit()
            if op is not None and op & 0xF0 != 0x30:
                # a packet umqtt.simple leaves to its caller (PUBACK, SUBACK...) and none is
                # awaited: its body is still unread, so the stream is out of step
                raise OSError(_EPROTO)

    # --- the three calls ---------------------------------------------------------------------

    def poll(self):
        now = self.now_ms()
        if self.client is None:
            if now < self._retry_at:
                return b""
            try:
                self._open(now)
            except Exception:                    # no address, no socket: try again later
                self._down(now)
                return b""
        try:
            if self._sock is not None:
                self._connected()
            if self.stream is not None:
                s = self.stream
                s.flush()
                if s.pull():
                    self._rx_at = now
                if self._call is not None:
                    if not self._try() and now - self._call_at > _REPLY_TIMEOUT_MS:
                        raise OSError(_ETIMEDOUT)
                if self._call is None and self.up:
                    self._take(now)
            if not self.up:
                if now - self._opened_at > _CONNECT_TIMEOUT_MS:
                    raise OSError(_ETIMEDOUT)
            elif now - self._rx_at > self.keepalive_s * 1000:
                raise OSError(_ETIMEDOUT)   # not even a PINGRESP: the broker is gone
            elif now - max(self._rx_at, self._pinged_at) >= self.keepalive_s * 500 \
                    and self._call is None:
                self.client.ping()
                self.stream.flush()
                self._pinged_at = now
        except Exception:                        # whatever the library or the socket raised
            self._down(now)
        out = b"".join(self._rx)
        self._rx = []
        return out

    def send(self, line, kind):
        """kind "state" and "sync" go at QoS 0 (nothing to wait for; a sync request resent
        late is dropped anyway); a "report" at QoS 1: False while the last one's PUBACK is
        still to come (the session sends it again)."""
        report = kind == "report"
        if not self.up or (report and self._call is not None):
            return False
        try:
            args = (self._topic("state" if kind == "state" else "report"), line.rstrip(b"\n"),
                    kind == "state", 1 if report else 0)
            if report:
                self._begin(self.client.publish, args)
            else:
                self.client.publish(*args)
                self.stream.flush()
            return True
        except Exception:
            self._down(self.now_ms())
            return False

    def _down(self, now):
        self.up = False
        for s in (self._sock, self.stream):
            if s is not None:
                try:
                    s.close()
                except Exception:
                    pass
        self.client = self.stream = self._sock = self._call = None
        self._held = []
        self._retry_at = now + self._backoff_ms
        self._backoff_ms = min(self._backoff_ms * 2, _BACKOFF_MAX_MS)


def make_link(board, cfg, local_ms):
    """The desk link duelclock.json names: the USB port, or MQTT (Wi-Fi joined first).
    cfg["mqtt"]: host, port, keepalive_s; with "tls", the broker's CA ("ca": base64 DER,
    written by `duelclock deploy --ca`); "user" and "password" for a broker that asks."""
    if cfg.get("link") != "mqtt":
        return StreamLink(board.open_serial())
    wifi = cfg.get("wifi")
    if wifi and board.connect_wifi is not None:
        board.connect_wifi(wifi["ssid"], wifi["pass"])
    m = cfg["mqtt"]
    from umqtt.simple import MQTTClient
    keepalive_s = m.get("keepalive_s", 30)
    tls = None
    if m.get("tls"):                    # the broker's certificate checked, and its name
        import ssl
        from binascii import a2b_base64
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        tls.verify_mode = ssl.CERT_REQUIRED
        tls.load_verify_locations(cadata=a2b_base64(m["ca"]))   # DER: mbedtls reads it anywhere

    def factory():
        return MQTTClient("duelclock-t%d" % cfg["table"], m["host"], m.get("port", 1883),
                          m.get("user"), m.get("password"), keepalive_s)
    return MqttLink(factory, cfg.get("event", "event"), cfg["table"], keepalive_s, local_ms, tls)
