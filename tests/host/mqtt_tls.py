"""A real mosquitto with a TLS listener and a password file on free loopback ports, and the
certificates it needs, made for the test in a temp dir (the `openssl` CLI, through
duelclock_desk.certs): for the desk's and the tables' TLS and password tests.

    with TlsBroker() as b:          # users {"desk": ..., "table": ...} by default
        b.port, b.ca                # the TLS listener (127.0.0.1) and the CA that signed it
        b.plain_port                # a plain listener, same password file (no TLS)
        b.users["desk"]             # a password
        b.other_ca                  # a CA that signed nothing here: a wrong --ca
        b.url("desk")               # mqtts://desk:PASSWORD@127.0.0.1:PORT
    b.kill() / b.stop()

The server certificate names 127.0.0.1 and localhost. Files stay readable by this process
(the broker gets its own copies: broker.Mosquitto).
"""
import os
import secrets
import shutil
import tempfile

from duelclock_desk import certs
from duelclock_desk.broker import Mosquitto

USERS = ("desk", "table")


class TlsBroker:
    def __init__(self, users=None, names=("127.0.0.1", "localhost")):
        self.users = dict(users) if users else {u: secrets.token_hex(8) for u in USERS}
        self.dir = tempfile.mkdtemp(prefix="duelclock-tls-")
        try:
            self.ca, self.ca_key = certs.make_ca(self.dir)
            self.cert, self.key = certs.make_server_cert(self.dir, (self.ca, self.ca_key), names)
            other = os.path.join(self.dir, "other")
            os.mkdir(other)
            self.other_ca = certs.make_ca(other, "some other CA")[0]
            self.broker = Mosquitto(users=self.users, tls=(self.ca, self.cert, self.key))
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        self.port = self.broker.port
        self.plain_port = self.broker.local_port

    def url(self, user=None, password=None, tls=True):
        """mqtts:// (or mqtt:// to the plain listener) with user:password@ when given."""
        cred = ""
        if user is not None:
            cred = "%s:%s@" % (user, self.users.get(user, "") if password is None else password)
        return "%s://%s127.0.0.1:%d" % ("mqtts" if tls else "mqtt", cred,
                                        self.port if tls else self.plain_port)

    def kill(self):
        self.broker.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def stop(self):
        self.broker.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
