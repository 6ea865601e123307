"""The desk's MQTT connection: paho-mqtt (MQTT 3.1.1, a persistent session, TLS) driven by
one network thread of ours through paho's external-loop calls (socket, loop_read,
loop_write, loop_misc), for what paho's own loop_start() does not give:

  receive: on_message(topic, payload, retained, rx), rx the `now()` taken when the socket
           read that brought the packet's last bytes returned: the network thread reads
           whole bursts (READ_BYTES) and paho parses its packets from them, so every packet of
           one read shares its stamp (a sync request's t2 is when the desk got it, not when
           the packets before it were handed on) and no byte is stamped before it came.
           A QoS 1 PUBLISH is acked after on_message returns (paho), so at least once.
  publish: from any thread; QoS 1 sends wait in paho's session until PUBACK, unlimited in
           flight (a round start's 2,000 commands at once, not paho's default of 20), and go
           again, flagged DUP, after a reconnect. paho writes a publish at once from the
           caller's thread (a sync reply leaves when its t3 is stamped, not a thread switch
           later), the network thread's too (a reply from on_message goes with the acks
           held so far, not after the read); one lock keeps writes whole and in order, and
           what the socket did not take is the network thread's, woken through a socket
           pair.
  connect: TCP without Nagle (a sync reply must not wait behind the packet before it), TLS
           with `ca` (a CA file, or the system's: the broker's certificate must chain to it
           and name the host), a user and password. A refused CONNACK, a TLS or socket
           error, EOF, bytes no broker sends, or KEEPALIVE_S x 2 without a byte (paho's
           keepalive) ->
           on_disconnect(reason) once, then a new connection after RETRY_S, doubling up to
           RETRY_MAX_S. `error` holds the last reason (None while connected).
  callbacks: run in the network thread; one that raises is said on stderr and the link
           lives on (a message that raised is acked all the same: else the broker would send
           it again at every reconnect).
"""
import select
import socket
import ssl
import sys
import threading
import time

import paho.mqtt.client as paho

KEEPALIVE_S = 30
RETRY_S = 1.0
RETRY_MAX_S = 5.0
CONNECT_TIMEOUT_S = 5.0
MISC_S = 1.0                    # paho's loop_misc (pings, keepalive) at least this often
READ_BYTES = 65536


class _Client(paho.Client):
    """paho's client with its writes under one lock: publish() writes from the desk's
    threads, the network thread writes acks and pings, and a packet half-written by one must
    not be interleaved with the other's. `wake` is called when bytes are left for select()."""

    def __init__(self, *args, wake, now, **kw):
        super().__init__(*args, **kw)
        self._write_lock = threading.Lock()
        self._wake_network = wake
        self._now = now
        self.network_thread = None
        self.rx = None                  # now() when the read that gave the last bytes returned
        self._inbuf, self._at = b"", 0  # that read's bytes, and how far paho has taken them
        self._batch = None              # in loop_write: the packets paho wrote, one send
        self._unsent = (None, b"")      # (socket, bytes) it did not take: before anything
        self._held = threading.local()  # .on: this thread's writes wait for release()

    def buffered(self):
        """Bytes read from the socket that paho has not parsed yet."""
        return self._at < len(self._inbuf)

    def reconnect(self):
        self._inbuf, self._at = b"", 0
        with self._write_lock:
            self._unsent = (None, b"")  # a packet's tail belongs to the connection it began on
        return super().reconnect()

    def _sock_recv(self, bufsize):
        # paho reads a packet in pieces (its first byte, its length, its body): they come
        # from whole reads of the socket, each stamped when it returned.
        if not self.buffered():
            data = super()._sock_recv(READ_BYTES)
            if not data:
                return data                      # EOF: paho drops the connection
            self.rx = self._now()
            self._inbuf, self._at = data, 0
        out = self._inbuf[self._at:self._at + bufsize]
        self._at += len(out)
        return out

    def hold(self):
        """This thread's publishes (and paho's acks, in the network thread) are queued, not
        written, until release(): many sends (a round start's 2,000 commands, the acks of one
        read) leave in one write, not one write each."""
        self._held.on = True

    def release(self):
        self._held.on = False
        return self.loop_write()

    def want_write(self):
        return bool(self._unsent[1]) or super().want_write()

    def _sock_send(self, buf):
        # In loop_write, paho's packets are gathered and sent in one call at its end (a
        # system call, and a turn of the interpreter's lock, per packet was most of the cost
        # of 2,000 sends at once).
        if self._batch is None:
            return super()._sock_send(buf)
        self._batch.append(bytes(buf))
        return len(buf)

    def _send_out(self, data):
        """Send what the socket takes of `data` (after the tail of the last write); keep the
        rest for the next loop_write. False: the connection failed."""
        sock, tail = self._unsent
        if tail and sock is self._sock:
            data = tail + data
        try:
            n = super()._sock_send(data) if data else 0
        except BlockingIOError:
            n = 0
        except OSError:
            self._unsent = (None, b"")
            return False
        self._unsent = (self._sock, data[n:])
        return True

    def loop_write(self):
        me = threading.get_ident()
        if getattr(self._held, "on", False):
            return paho.MQTT_ERR_SUCCESS
        network = self.network_thread is not None and me == self.network_thread.ident
        if not self._write_lock.acquire(blocking=network):
            # The network thread is writing: what was queued goes with its next write, not
            # after this thread waited for the lock (and then for the interpreter).
            self._wake_network()
            return paho.MQTT_ERR_SUCCESS
        try:
            rc = paho.MQTT_ERR_SUCCESS
            if self._sock is None:
                rc = paho.MQTT_ERR_NO_CONN
            elif not self._send_out(b""):
                rc = self._loop_rc_handle(paho.MQTT_ERR_CONN_LOST)
            elif not self._unsent[1]:
                self._batch = []
                try:
                    rc = super().loop_write()
                finally:
                    data, self._batch = b"".join(self._batch), None
                if data and self._sock is not None and not self._send_out(data):
                    rc = self._loop_rc_handle(paho.MQTT_ERR_CONN_LOST)
        finally:
            self._write_lock.release()
        if not network and self.want_write():
            self._wake_network()
        return rc


class Session:
    """One connection to (host, port) as client_id. auth (user, password) or None; ca: a CA
    file for TLS, True for TLS with the system's CAs, None for plain TCP; `now` stamps what
    arrives. Callbacks (network thread):
    on_connect(), on_disconnect(reason), on_message(topic, payload, retained, rx)."""

    def __init__(self, host, port, client_id, auth=None, ca=None, keepalive_s=KEEPALIVE_S,
                 now=time.monotonic):
        self.host, self.port, self.keepalive_s, self.now = host, port, keepalive_s, now
        self.client_id = client_id
        self.on_connect = lambda: None
        self.on_disconnect = lambda reason: None
        self.on_message = lambda topic, payload, retained, rx: None
        self.error = None
        c = _Client(paho.CallbackAPIVersion.VERSION2, client_id=client_id,
                    clean_session=False, protocol=paho.MQTTv311, wake=self._wake, now=now)
        c.max_inflight_messages_set(0)          # 0: no limit
        c.max_queued_messages_set(0)
        c.connect_timeout = CONNECT_TIMEOUT_S
        if auth:
            c.username_pw_set(auth[0], auth[1])
        if ca:
            c.tls_set(ca_certs=None if ca is True else ca, cert_reqs=ssl.CERT_REQUIRED)
        c.on_connect = self._connected
        c.on_disconnect = self._disconnected
        c.on_message = self._message
        c.on_socket_open = lambda client, userdata, sock: sock.setsockopt(
            socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        c.connect_async(host, port, keepalive_s)
        self._client = c
        self._up = self._was_up = False
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
        self._wake()
        if self._thread is not None:
            self._thread.join(5)
        self._wake_r.close()
        self._wake_w.close()

    def subscribe(self, topics):
        """[(filter, qos)]: asked once per connection (call it from on_connect)."""
        self._client.subscribe(topics)

    def publish(self, topic, payload, qos=1):
        """Send now, or as soon as the broker is back (QoS 1: until it acks). From the
        network thread too (a sync reply from on_message): written at once, with the acks
        of the read so far, not held till the read is done (its t3 is stamped now)."""
        c = self._client
        held = getattr(c._held, "on", False)
        c._held.on = False
        try:
            c.publish(topic, payload, qos)
        finally:
            c._held.on = held

    def publish_many(self, messages, qos=1):
        """[(topic, payload)], as many publish() calls in order, written at once."""
        c = self._client
        c.hold()
        try:
            for topic, payload in messages:
                c.publish(topic, payload, qos)
        finally:
            c.release()

    def inflight(self):
        """QoS 1 sends not acked yet."""
        return len(self._client._out_messages)

    # --- the network thread -----------------------------------------------------------------

    def _wake(self):
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass                              # already woken (buffer full) or stopped

    def _run(self):
        c = self._client
        c.network_thread = threading.current_thread()
        delay_s = RETRY_S
        while not self._stop.is_set():
            try:
                c.reconnect()
            except (OSError, ValueError) as e:        # ssl.SSLError is an OSError
                self._said(_reason(e))
                self._stop.wait(delay_s)
                delay_s = min(RETRY_MAX_S, delay_s * 2)
                continue
            self._was_up = False
            self._serve()
            delay_s = RETRY_S if self._was_up else min(RETRY_MAX_S, delay_s * 2)
            self._stop.wait(RETRY_S if self._was_up else delay_s)
        if c.socket() is not None:
            c.disconnect()
            c.loop_write()

    def _serve(self):
        # Until paho closes the socket (EOF, error, keepalive, refused CONNACK) or stop().
        c = self._client
        misc = time.monotonic()
        while not self._stop.is_set():
            sock = c.socket()
            if sock is None:
                return
            r, w, _ = select.select([sock, self._wake_r], [sock] if c.want_write() else [],
                                    [], MISC_S)
            if self._wake_r in r:
                try:
                    self._wake_r.recv(4096)
                except OSError:
                    pass
            if sock in r:
                c.hold()                      # the acks of one read: one write after it
                try:
                    while True:
                        c.loop_read()
                        if c.socket() is not sock:
                            break             # closed by paho: EOF, error, refused
                        if not c.buffered() and not getattr(sock, "pending", lambda: 0)():
                            break             # all read is parsed: select() again
                finally:
                    c._held.on = False
            if c.socket() is not None and c.want_write():
                c.loop_write()
            now = time.monotonic()
            if now - misc >= MISC_S:
                misc = now
                c.loop_misc()

    # --- paho's callbacks, in the network thread -----------------------------------------------

    def _connected(self, client, userdata, flags, reason, properties):
        if reason.is_failure:
            hint = " (the user and password: --user, --password-file)" \
                if reason.value in (4, 5, 134, 135) else ""
            self._said("the broker refused the connection: %s%s" % (reason, hint))
            return                            # paho closes it: _disconnected follows
        self._up = self._was_up = True
        self.error = None
        self._call(self.on_connect)

    def _disconnected(self, client, userdata, flags, reason, properties):
        if self.error is None:
            self.error = "the connection was lost" if reason == 0 else "disconnected: %s" % reason
        if self._up:
            self._up = False
            self._call(self.on_disconnect, self.error)

    def _message(self, client, userdata, msg):
        self._call(self.on_message, msg.topic, msg.payload, bool(msg.retain), client.rx)

    def _said(self, reason):
        if reason != self.error:
            sys.stderr.write("mqtt %s: %s:%d: %s\n" % (self.client_id, self.host, self.port,
                                                      reason))
        self.error = reason

    def _call(self, callback, *args):
        try:
            callback(*args)
        except Exception as e:
            sys.stderr.write("mqtt %s: %s failed: %r\n" % (self.client_id, callback.__name__, e))


def _reason(e):
    if isinstance(e, ssl.SSLCertVerificationError):
        return "TLS: the broker's certificate is not trusted (--ca): %s" % e.verify_message
    if isinstance(e, ssl.SSLError):
        return "TLS: %s" % (e.reason or e)
    return str(e) or type(e).__name__
