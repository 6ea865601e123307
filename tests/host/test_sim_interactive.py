"""`duelclock sim --interactive` in a real pseudo-terminal: a person's key presses reach the
table, the table's screen is drawn in the terminal, and the desk in a second process runs
the round."""
import json
import os
import pty
import re
import select
import subprocess
import sys
import threading
import time
import urllib.request

BIN = os.path.dirname(sys.executable)


def _read_until(fd, pattern, timeout_s):
    buf = b""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                buf += os.read(fd, 65536)
            except OSError:
                break
            if re.search(pattern, buf):
                return buf
    raise AssertionError("no %r in %r" % (pattern, buf[-500:]))


def _drain(fd):
    while True:
        try:
            if not os.read(fd, 65536):
                return
        except OSError:
            return


def test_a_person_plays_a_table_from_the_terminal(tmp_path):
    master, slave = pty.openpty()
    sim = subprocess.Popen([os.path.join(BIN, "duelclock"), "sim", "--tables", "1", "--interactive",
                            "--dir", str(tmp_path / "sim")], stdin=slave, stdout=slave,
                           stderr=slave, start_new_session=True)
    os.close(slave)
    desk = None
    try:
        out = _read_until(master, rb"round start --round 1", 60)
        cmd = re.search(rb"duelclock desk [^\r\n]+", out).group(0).decode().split()
        desk = subprocess.Popen([os.path.join(BIN, "duelclock")] + cmd[1:] + ["--http-port", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        api = "http://" + desk.stdout.readline().split("http://", 1)[1].split(",", 1)[0]
        subprocess.run([os.path.join(BIN, "duelclock"), "round", "start", "--round", "1",
                        "--desk", api], check=True, capture_output=True, timeout=60)
        time.sleep(2)
        _read_until(master, "\u2580".encode(), 20)          # the screen, in half blocks
        # From here on drain the terminal, as a terminal would: a full pty blocks the UI.
        threading.Thread(target=_drain, args=(master,), daemon=True).start()
        os.write(master, b"a")
        time.sleep(0.5)
        os.write(master, b"b")                              # B goes first
        end = time.monotonic() + 30
        phase = None
        while time.monotonic() < end and phase != "duel":
            with urllib.request.urlopen(api + "/api/status", timeout=10) as r:
                tables = json.loads(r.read())["tables"]
            phase = tables[0]["phase"] if tables else None
            last = tables
            time.sleep(0.5)
        assert phase == "duel", [(t["round"], t["phase"], t["sync_age_ms"], t["alerts"]) for t in last]
        os.write(master, b"q")
        assert sim.wait(30) == 0
    finally:
        for p in (sim, desk):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
        os.close(master)
