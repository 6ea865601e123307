"""`duelclock desk --lan`: the desk's own broker open to the venue, never anonymously.

Beside the store, in STORE.venue/ (kept across restarts: the tables are deployed with it):

  tables.json    {"url", "user", "password", "ca"}: what a table needs to reach the broker
                 (the deploy step gives it to the tables); readable by this user only
  ca.crt ...     with --tls and no certificate given: a venue CA and the broker's server
                 certificate (ca.crt, ca.key, server.crt, server.key), made once

The tables log in as TABLE_USER with that password (given with --broker-password-file, or
made once); the desk logs in as DESK_USER with a password made at each start that never
leaves this machine. With TLS the venue's listener speaks TLS only; the desk itself uses a
plain listener on loopback (broker.Mosquitto).
"""
import json
import os
import secrets
import socket

from duelclock_desk import certs
from duelclock_desk.broker import BrokerError, Mosquitto

TABLE_USER = "table"
DESK_USER = "desk"
PORT, TLS_PORT = 1883, 8883
PASSWORD_BYTES = 18                  # token_urlsafe: 24 characters a judge can type


def state_dir(store_path):
    return os.path.abspath(store_path) + ".venue"


def lan_address():
    """This machine's address on its default route (no packet is sent), or None."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.1", 9))          # TEST-NET-1: routing only
        return s.getsockname()[0]
    except OSError:
        return None
    finally:
        s.close()


def start(store_path, port=0, tls=False, names=(), cert=None, ca=None, password_file=None):
    """The venue broker: (Mosquitto, the desk's (user, password), tables.json's dict).
    port 0: PORT, or TLS_PORT with tls. names: the host names and addresses the tables dial
    (default: this machine's LAN address and host name), for a made certificate. cert
    (cert, key) and ca: a certificate of the venue's own instead of a made one."""
    d = state_dir(store_path)
    os.makedirs(d, mode=0o700, exist_ok=True)
    path = os.path.join(d, "tables.json")
    old = _read(path)
    if password_file:
        with open(password_file) as f:
            password = f.read().strip()
        if not password:
            raise BrokerError("%s: the tables' broker password is empty" % password_file)
    else:
        password = old.get("password") or secrets.token_urlsafe(PASSWORD_BYTES)
    port = port or (TLS_PORT if tls else PORT)
    host = (list(names) or [lan_address() or socket.gethostname()])[0]
    files = None
    if tls:
        files = _tls_files(d, names or [n for n in (lan_address(), socket.gethostname(),
                                                    "127.0.0.1", "localhost") if n],
                           cert, ca)
    desk = (DESK_USER, secrets.token_urlsafe(PASSWORD_BYTES))
    broker = Mosquitto(port=port, lan=True, users={TABLE_USER: password, desk[0]: desk[1]},
                       tls=files)
    info = {"url": "%s://%s:%d" % ("mqtts" if tls else "mqtt", host, port),
            "user": TABLE_USER, "password": password, "ca": files[0] if files else None}
    _write(path, info)
    return broker, desk, info


def _tls_files(d, names, cert, ca):
    if cert:
        if not ca:
            raise BrokerError("--tls-cert needs --ca: the CA the tables will trust")
        return ca, cert[0], cert[1]
    ca_files = os.path.join(d, "ca.crt"), os.path.join(d, "ca.key")
    server = os.path.join(d, "server.crt"), os.path.join(d, "server.key")
    try:
        if not all(os.path.exists(p) for p in ca_files):
            certs.make_ca(d)
        if not all(os.path.exists(p) for p in server):
            certs.make_server_cert(d, ca_files, list(names))
    except certs.CertError as e:
        raise BrokerError(str(e))
    return ca_files[0], server[0], server[1]


def _read(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def _write(path, info):
    fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(info, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)
