"""The desk's own MQTT broker for a small venue: mosquitto, started and stopped with the desk.

Why mosquitto and not an embedded Python broker (amqtt):
- it is the broker the tables meet at a big venue too (design.md, decision 4): one broker,
  one behaviour to test; the tests start the same program;
- it is C, out of the desk's process: on a 2-core laptop the desk's Python (signing, SQLite,
  replay, HTTP) keeps its core while the broker fans out on the other; amqtt runs in the
  desk's own interpreter and is 2-3x slower on loopback (shared/toolchain.md);
- it is one Debian package (`apt-get install -y mosquitto`), maintained, with the limits a
  venue wants (max_packet_size, queue sizes) in four config lines.
The cost is a system package: without it the desk says so and how to get it, and
`--broker mqtt://host:port` (any broker) or `--broker off` (serial only) still work.

Open to the venue (lan) it never takes anonymous clients: `users` ({user: password}) go in
a password file, and with `tls` (ca, cert, key files) the venue's listener speaks TLS only;
the desk itself then connects through a second, plain listener on loopback (`url`), with a
password all the same.
"""
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time

START_TIMEOUT_S = 5.0
# Largest MQTT packet the broker takes: a protocol line is at most 1025 bytes, plus topic and
# header. A client sending more is disconnected by the broker (a 1 MB "report" never reaches
# the desk).
MAX_PACKET_BYTES = 4096

CONFIG = """\
set_tcp_nodelay true
persistence false
max_packet_size {max_packet}
max_queued_messages 20000
log_dest stderr
log_type error
log_type warning
"""
# A hall's broker, bridged to the desk's (docs/protocol.md, "Several halls"): the desk's
# commands come in, the tables' states and reports go out, each way at QoS 1 at most, with
# its retain flag (the tables' retained state; the desk retains nothing, a table that joins
# says hello and gets its round again). Never `#` both ways: the desk's broker would hand
# each hall every other hall's states and reports, which no one there reads (a round start's
# 2,000 states crossed two bridges instead of one).
# cleansession false: the desk's broker keeps the bridge's subscriptions and
# QoS 1 messages for it while the bridge is down; the hall queues the other way.
BRIDGE = """\
connection {name}
address {host}:{port}
topic duelclock/{event}/table/+/cmd in 1
topic duelclock/{event}/table/+/state out 1
topic duelclock/{event}/table/+/report out 1
cleansession false
remote_clientid duelclock-bridge-{name}
local_clientid duelclock-bridge-{name}-local
try_private true
notifications false
restart_timeout 1 5
keepalive_interval 10
"""


# Who may connect: everyone (loopback only), or the password file's users.
OPEN = "allow_anonymous true\n"
LOCKED = "allow_anonymous false\npassword_file {passwd}\n"
LISTENER = "listener {port} {host}\n"
TLS = "cafile {ca}\ncertfile {cert}\nkeyfile {key}\n"
# mosquitto started as root reads its password file and TLS key as this user (it drops to it)
BROKER_USER = "mosquitto"


class BrokerError(Exception):
    pass


def free_port(host="127.0.0.1"):
    s = socket.socket()
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Mosquitto:
    """A mosquitto process on `port` (0: a free one), on loopback or, with lan, on every
    interface. `url` is what clients on this machine connect to (mqtt://, loopback);
    `venue_url` what the tables dial (mqtts:// with tls). stop() ends it and removes its
    files. `bridge` (desk_url, event, name): a hall's broker, bridged to the desk's at
    desk_url. `users` {user: password}: no anonymous clients (required with lan); `tls`
    (ca, cert, key) paths: the `port` listener speaks TLS, and `url` is a plain loopback
    listener of its own."""

    def __init__(self, port=0, lan=False, bridge=None, users=None, tls=None):
        exe = shutil.which("mosquitto") or _sbin("mosquitto")
        if exe is None:
            raise BrokerError("mosquitto is not installed: `apt-get install -y mosquitto` (the "
                              "Makefile does it), or give --broker mqtt://HOST:PORT, or "
                              "--broker off for serial links only")
        if lan and not users:
            raise BrokerError("a broker open to the venue needs a user and password")
        self.port = port or free_port()
        self.local_port = free_port() if tls else self.port
        self.url = "mqtt://127.0.0.1:%d" % self.local_port
        self.venue_url = "%s://%s:%d" % ("mqtts" if tls else "mqtt",
                                         "0.0.0.0" if lan else "127.0.0.1", self.port)
        self._dir = tempfile.mkdtemp(prefix="duelclock-mosquitto-")
        passwd = None
        if users:
            from duelclock_desk.certs import CertError, password_file
            try:
                passwd = password_file(os.path.join(self._dir, "passwd"), users)
            except CertError as e:
                shutil.rmtree(self._dir, ignore_errors=True)
                raise BrokerError(str(e))
        if tls:
            copies = []
            for src, name in zip(tls, ("ca.crt", "server.crt", "server.key")):
                copies.append(os.path.join(self._dir, name))
                shutil.copyfile(src, copies[-1])
            tls = copies
        _give_to_broker_user(self._dir)
        conf = os.path.join(self._dir, "mosquitto.conf")
        with open(conf, "w") as f:
            f.write(config(self.port, lan, bridge, passwd, tls, self.local_port))
        self._log = open(os.path.join(self._dir, "mosquitto.log"), "w+")
        self.proc = subprocess.Popen([exe, "-c", conf], stdout=self._log, stderr=self._log,
                                     stdin=subprocess.DEVNULL)
        try:
            self._wait_ready()
        except BrokerError:
            self.stop()
            raise

    def _wait_ready(self):
        end = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                self._log.seek(0)
                raise BrokerError("mosquitto exited: " + self._log.read().strip())
            try:
                socket.create_connection(("127.0.0.1", self.local_port), 0.2).close()
                return
            except OSError:
                time.sleep(0.02)
        raise BrokerError("mosquitto did not listen on port %d" % self.port)

    def kill(self):
        """End it as a crash would (SIGKILL: no will, nothing flushed), then clean up."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.stop()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        shutil.rmtree(self._dir, ignore_errors=True)


def config(port, lan=False, bridge=None, passwd=None, tls=None, local_port=None):
    """mosquitto.conf text: the desk's broker, or with `bridge` (desk_url, event, name) a
    hall's (`duelclock hall` prints it for a hall machine). passwd: a password file (no
    anonymous clients); tls (ca, cert, key): `port` is TLS, `local_port` plain loopback."""
    if lan and passwd is None and bridge is None:
        raise BrokerError("a broker open to the venue needs a password file")
    text = CONFIG.format(max_packet=MAX_PACKET_BYTES)
    text += LOCKED.format(passwd=passwd) if passwd else OPEN
    text += LISTENER.format(port=port, host="0.0.0.0" if lan else "127.0.0.1")
    if tls:
        text += TLS.format(ca=tls[0], cert=tls[1], key=tls[2])
        text += LISTENER.format(port=local_port, host="127.0.0.1")
    if bridge is not None:
        url, event, name = bridge
        host, desk_port = url.split("://", 1)[1].rsplit(":", 1)
        text += BRIDGE.format(name=name, host=host, port=desk_port, event=event)
    return text


def _give_to_broker_user(directory):
    # Run as root, mosquitto reads the password file and the TLS key after it became
    # BROKER_USER: theirs, readable by no one else.
    if os.geteuid() != 0:
        return
    try:
        u = pwd.getpwnam(BROKER_USER)
    except KeyError:
        return
    for name in [""] + os.listdir(directory):
        os.chown(os.path.join(directory, name), u.pw_uid, u.pw_gid)


def _sbin(name):
    # Debian installs it in /usr/sbin, which a non-root PATH may lack.
    path = os.path.join("/usr/sbin", name)
    return path if os.access(path, os.X_OK) else None
