# The table's end of the desk link: the same lines over USB serial or MQTT (docs/protocol.md).
# I/O at the edge. Both links offer the same three calls, polled by the app's link task:
#   poll() -> bytes received since the last call (b"" when none; never blocks)
#   send(line, kind) -> True when handed to the link; kind is "state" (latest wins), "report"
#     (delivered) or "sync" (a sync request: useless late, so MQTT QoS 0)
#   up -> whether the link is believed to work
# make_link(board, cfg, local_ms) picks the one the table's config names.
import select

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


class MqttLink:
    """Lines over MQTT with umqtt.simple (micropython-lib). Topics as in docs/protocol.md;
    the last will shows the desk a table gone.
    umqtt.simple sends no keepalive by itself, so poll() pings every keepalive_s / 2."""

    def __init__(self, client_factory, event, tbl, keepalive_s=30, now_ms=None):
        self.factory = client_factory           # () -> a fresh umqtt.simple.MQTTClient
        self.base = "duelclock/%s/" % event
        self.tbl = tbl
        self.keepalive_s = keepalive_s
        self.now_ms = now_ms
        self.client = None
        self.up = False
        self._rx = []
        self._last_io = 0
        self._retry_at = 0
        self._backoff_ms = 1000

    def _topic(self, leaf):
        return (self.base + "table/%d/%s" % (self.tbl, leaf)).encode()

    def _connect(self, now):
        c = self.factory()
        c.set_callback(self._on_msg)
        c.set_last_will(self._topic("state"), b"offline", retain=True, qos=0)
        c.connect()
        try:                                     # the 44 ms Nagle trap (toolchain.md)
            c.sock.setsockopt(6, 1, 1)
        except (AttributeError, OSError):
            pass
        c.subscribe(self._topic("cmd"), 1)      # all the desk sends it: no topic for all
        self.client = c
        self.up = True
        self._last_io = now
        self._backoff_ms = 1000

    def _on_msg(self, topic, msg):
        self._rx.append(bytes(msg) + b"\n")

    def _down(self, now):
        self.up = False
        try:
            if self.client is not None:
                self.client.sock.close()
        except (AttributeError, OSError):
            pass
        self.client = None
        self._retry_at = now + self._backoff_ms
        self._backoff_ms = min(self._backoff_ms * 2, 30000)

    def poll(self):
        now = self.now_ms()
        if self.client is None:
            if now < self._retry_at:
                return b""
            try:
                self._connect(now)
            except (OSError, IndexError):        # refused, unreachable, broker gone
                self._down(now)
                return b""
        try:
            for _ in range(8):
                if self.client.check_msg() is None and not self._rx:
                    break
                self._last_io = now
                if len(self._rx) > 8:
                    break
            if now - self._last_io > self.keepalive_s * 500:
                self.client.ping()
                self._last_io = now
        except (OSError, IndexError):
            self._down(now)
        out = b"".join(self._rx)
        self._rx = []
        return out

    def send(self, line, kind):
        if self.client is None:
            return False
        try:
            if kind == "state":
                self.client.publish(self._topic("state"), line.rstrip(b"\n"), True, 0)
            else:
                # QoS 1 makes umqtt.simple wait for the PUBACK (a round trip of blocked keys),
                # and a sync request resent late is dropped anyway: the clock asks again.
                qos = 0 if kind == "sync" else 1
                self.client.publish(self._topic("report"), line.rstrip(b"\n"), False, qos)
            self._last_io = self.now_ms()
            return True
        except (OSError, IndexError):
            self._down(self.now_ms())
            return False


def make_link(board, cfg, local_ms):
    """The desk link duelclock.json names: the USB port, or MQTT (Wi-Fi joined first)."""
    if cfg.get("link") != "mqtt":
        return StreamLink(board.open_serial())
    wifi = cfg.get("wifi")
    if wifi and board.connect_wifi is not None:
        board.connect_wifi(wifi["ssid"], wifi["pass"])
    m = cfg["mqtt"]
    from umqtt.simple import MQTTClient

    def factory():
        return MQTTClient("duelclock-t%d" % cfg["table"], m["host"], m.get("port", 1883),
                          keepalive=m.get("keepalive_s", 30))
    return MqttLink(factory, cfg.get("event", "event"), cfg["table"], m.get("keepalive_s", 30),
                    local_ms)
