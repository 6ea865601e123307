"""What the network fault tests share: a TCP proxy that can be cut (a table's Wi-Fi, the
desk's way to the broker) and can filter what it forwards, and the journal read back from a
simulated table's flash image with the real firmware's Journal under MicroPython."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time

from simulator import build

READ_BYTES = 65536
PIECE_GAP_S = 0.01            # between the pieces a filter cut a read into


class Proxy:
    """127.0.0.1:port (0: a free one) -> target (host, port), one thread pair per connection.

    cut()      every connection closes at once (an access point drops the table) and new
               ones are refused (accepted and closed) until restore()
    filters    None, or called once per connection: (up, down), each f(bytes) -> bytes,
               None, or a list of pieces sent PIECE_GAP_S apart: what goes client -> target
               (up) and target -> client (down)."""

    def __init__(self, target, filters=None, port=0):
        self.target = target
        self.filters = filters
        self.connections = 0
        self._cut = False
        self._conns = set()
        self._lock = threading.Lock()
        self._srv = socket.socket()
        self._srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._srv.bind(("127.0.0.1", port))
        self._srv.listen(16)
        self.port = self._srv.getsockname()[1]
        self.url = "mqtt://127.0.0.1:%d" % self.port
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self._srv.accept()
            except OSError:
                return
            if self._cut:
                c.close()
                continue
            try:
                u = socket.create_connection(self.target, 2)
            except OSError:                  # the broker is down: so is this connection
                c.close()
                continue
            for s in (c, u):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._conns.update((c, u))
                self.connections += 1
            up, down = self.filters() if self.filters else (None, None)
            threading.Thread(target=self._pump, args=(c, u, up), daemon=True).start()
            threading.Thread(target=self._pump, args=(u, c, down), daemon=True).start()

    def _pump(self, src, dst, f):
        try:
            while True:
                data = src.recv(READ_BYTES)
                if not data:
                    break
                if f is not None:
                    data = f(data)
                if isinstance(data, list):          # pieces, each its own segment
                    for piece in data:
                        dst.sendall(piece)
                        time.sleep(PIECE_GAP_S)
                elif data:
                    dst.sendall(data)
        except OSError:
            pass
        self._close(src, dst)

    def _close(self, *socks):
        for s in socks:
            with self._lock:
                self._conns.discard(s)
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def cut(self):
        self._cut = True
        with self._lock:
            conns = list(self._conns)
        self._close(*conns)

    def restore(self):
        self._cut = False

    def stop(self):
        self.cut()
        try:
            self._srv.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._srv.close()


class MqttPackets:
    """Bytes of one MQTT stream in, whole packets out (the fixed header's remaining length
    says where each ends): for a proxy filter that looks at packets, not reads."""

    def __init__(self):
        self._buf = b""

    def feed(self, data):
        self._buf += data
        out = []
        while len(self._buf) >= 2:
            size, mult, i = 0, 1, 1
            while i < len(self._buf):
                b = self._buf[i]
                size += (b & 0x7F) * mult
                mult *= 128
                i += 1
                if not b & 0x80:
                    break
            else:
                return out                   # the length itself is not all here yet
            if len(self._buf) < i + size:
                return out
            out.append(self._buf[:i + size])
            self._buf = self._buf[i + size:]
        return out


# Runs under MicroPython: mounts a copy of the image (littlefs, as boards/SIM does) and
# prints the current (highest) match of /flash/journal as the firmware's Journal exports it.
_DUMP = """
import os, sys
from duelclock.journal import Journal
class Disk:
    def __init__(self, path):
        self.f = open(path, "rb")
        self.n = os.stat(path)[6] // 4096
    def readblocks(self, block, buf, offset=0):
        self.f.seek(block * 4096 + offset)
        self.f.readinto(buf)
    def writeblocks(self, block, buf, offset=0):
        raise OSError(30)
    def ioctl(self, op, arg):
        if op == 4:
            return self.n
        if op == 5:
            return 4096
        return 0 if op == 6 else None
os.mount(os.VfsLfs2(Disk(sys.argv[1]), progsize=256), "/flash", readonly=True)
j = Journal("/flash/journal")
ids = [m[0] for m in j.matches()]
if ids:
    for line in j.export(ids[-1]):
        print(line.decode())
"""


def read_journal(flash_path):
    """The events (dicts) of the current match in a table's flash image, in journal order.
    Read from a copy, so a running table is read as a power cut would leave it."""
    tmp = tempfile.mkdtemp(prefix="duelclock-flash-")
    try:
        img = os.path.join(tmp, "flash.img")
        shutil.copyfile(flash_path, img)
        env = dict(os.environ, MICROPYPATH=":".join((build.compiled_firmware(), ".frozen")))
        r = subprocess.run([build.UPY, "-X", "heapsize=256k", "-c", _DUMP, img],
                           capture_output=True, text=True, env=env, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("reading %s: %s" % (flash_path, r.stderr.strip()))
        return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def compare_records(journal, stored):
    """(lost, duplicated): journal events (in order) against the store's rows for the same
    record as {idx: event}. An event is kept when the store holds it at its index; every
    other journal event is lost, every other stored row is a duplicate (or an intruder)."""
    kept = sum(1 for i, ev in enumerate(journal) if stored.get(i) == ev)
    return len(journal) - kept, len(stored) - kept


def stored_rows(store_path, tbl, round_no):
    """{idx: event} of every record row the store holds for tbl's round (gaps and all)."""
    import sqlite3
    db = sqlite3.connect("file:%s?mode=ro" % store_path, uri=True)
    try:
        return {idx: json.loads(text) for idx, text in db.execute(
            "SELECT idx, event FROM records WHERE tbl = ? AND round = ? ORDER BY idx",
            (tbl, round_no))}
    finally:
        db.close()
