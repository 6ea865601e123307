"""The USB port is a door: the real firmware in the MicroPython unix port on
boards/SIM, its stdin and stdout a real pseudo-terminal as USB CDC is a board's REPL stdio,
behind simulator/bridge.py (which plays a board's USB stack: a Ctrl-C is a KeyboardInterrupt
only while the interpreter's interrupt character is on). The test holds the host end of the
pty, plays the desk on it (signed lines) and presses the SIM's keys through a FIFO.

  - during play, Ctrl-C, raw-REPL entry (by hand and by real mpremote), Ctrl-D and a flood of
    junk change nothing: no REPL, no restart, commands still taken, every key press kept,
    the junk counted in the table's state;
  - maintenance: the keys held at power-on (held past a long press, then let go: no try
    spent) and the desk's code for the challenge shown (`duelclock unlock`) leave the REPL
    to mpremote; a wrong code, or the code of a spent challenge, does not, and backing out
    plays;
  - the link takes a bounded number of bytes a poll, whatever waits on the port (what keeps
    a flood from starving a board's key scan; the SIM's keys arrive queued, so the flood test
    checks that nothing is lost or broken, not the scan's timing).
"""
import json
import os
import random
import re
import select
import socket
import subprocess
import sys
import time
import tty

import pytest

from duelclock.core.sign import pin_hash, table_key
from duelclock.core.wire import Decoder, Encoder
from duelclock.drivers.duplex import Duplex
from duelclock.link import POLL_BUDGET_BYTES, StreamLink
from simulator.bridge import Bridge
from simulator.player import steps

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEY = bytes(range(32))
TBL = 3
ROUND = {"round": 5, "kind": "swiss", "start_ms": 0, "limit_s": 2700, "cap_s": 1800,
         "extra_turns": 1, "seating": False}


class Table:
    """The SIM table behind a bridge; `port` is the host end of its USB pty."""

    def __init__(self, tmp_path, held=""):
        self.dir = tmp_path
        cfg = {"table": TBL, "key": table_key(KEY, TBL).hex(), "lang": "en", "link": "serial",
               "pins": {"floor": pin_hash("1111", b"salt", 2), "head": pin_hash("2222", b"salt", 2)}}
        (tmp_path / "duelclock.json").write_text(json.dumps(cfg))
        fifo = str(tmp_path / "keys")
        os.mkfifo(fifo)
        self.keys_fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)    # the board opens it to read
        self.fb = str(tmp_path / "fb.raw")             # the screen, as each show() leaves it
        env = dict(os.environ, DUELCLOCK_SIM_CONFIG=str(tmp_path / "duelclock.json"),
                   DUELCLOCK_SIM_KEYS=fifo, DUELCLOCK_SIM_HELD=held, DUELCLOCK_SIM_FB=self.fb)
        self.bridge = Bridge(str(tmp_path / "flash.img"), tcp_port=0, pty=True, env=env).start()
        self.port = os.open(self.bridge.pty_path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(self.port)
        self.out = b""                   # everything the port gave, since the app started
        self.desk = Encoder(KEY, 1)
        self.reports = Decoder(KEY)
        self.msgs = []
        self.t0 = time.monotonic()
        time.sleep(0.2)                  # the banner went to nobody: ask for a prompt
        self.send(b"\r")
        self._expect(b">>> ", 20)
        self.send(b"from duelclock import app\r")
        self._expect(b"app\r\n>>> ", 20)
        self.send(b"app.main(board)\r")
        self._expect(b"app.main(board)\r\n", 20)
        self.out = self.out.split(b"app.main(board)\r\n", 1)[1]     # the app's, from here

    def close(self):
        os.close(self.port)
        os.close(self.keys_fd)
        self.bridge.close()

    def send(self, data):
        view = memoryview(data)
        while view:
            select.select([], [self.port], [], 5)
            try:
                view = view[os.write(self.port, view):]
            except BlockingIOError:
                pass

    def press(self, *intents):
        os.write(self.keys_fd, "".join(i + "\n" for i in intents).encode())

    def read(self, wait_s=0.05):
        if select.select([self.port], [], [], wait_s)[0]:
            try:
                data = os.read(self.port, 65536)
            except (BlockingIOError, OSError):
                return
            self.out += data
            for msg in self.reports.feed(data):
                self.msgs.append(msg)
                if msg["k"] == "sync":            # the desk answers at once
                    now = int((time.monotonic() - self.t0) * 1000)
                    self.send(self.desk.build("sync", {"t1": msg["t1"], "t2": now, "t3": now,
                                                       "re": msg["seq"]}, TBL))

    def _expect(self, needle, timeout_s):
        end = time.monotonic() + timeout_s
        while needle not in self.out:
            assert time.monotonic() < end, (needle, self.out[-400:])
            self.read()

    def until(self, pred, timeout_s, what):
        end = time.monotonic() + timeout_s
        while not pred():
            assert time.monotonic() < end, (what, self.out[-600:])
            self.read()

    def state(self):
        states = [m for m in self.msgs if m["k"] == "state"]
        return states[-1] if states else {}

    def command(self, k, fields):
        # "\n" first: junk left without one would spoil the line (the desk re-pushes then)
        self.send(b"\n" + self.desk.build(k, fields, TBL))


@pytest.fixture
def table(tmp_path):
    made = []

    def make(held=""):
        folder = tmp_path / ("table%d" % len(made))
        folder.mkdir()
        made.append(Table(folder, held))
        return made[-1]
    yield make
    for t in made:
        t.close()


def mpremote(url, *args, timeout=60):
    return subprocess.run([sys.executable, "-m", "mpremote", "connect", url] + list(args),
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def test_ctrl_c_and_raw_repl_entry_during_a_round_change_nothing(table):
    t = table(held="a,b")
    # Maintenance asked, but a wrong code and then back: the table plays.
    t.press("release", "9", "9", "9", "9", "ok", "back")
    t.until(lambda: any(m["k"] == "hello" for m in t.msgs), 30, "hello")
    t.command("round", ROUND)
    t.until(lambda: t.state().get("round") == 5, 20, "round 5")
    for attack in (b"\r\x03\x03", b"\r\x01", b"\x04", b"\x03" * 20, b"\r\x02\n"):
        t.send(attack)
        time.sleep(0.2)
    # Real mpremote: its raw-REPL entry finds no REPL behind the port.
    r = mpremote(t.bridge.url, "exec", "print(6 * 7)")
    assert r.returncode != 0 and "could not enter raw repl" in r.stderr, r.stderr[-500:]
    # `duelclock pull` (and deploy, the same transport) says how to get in.
    r = subprocess.run([sys.executable, "-m", "duelclock_desk.cli", "pull", "--port",
                        t.bridge.url, "--board", "SIM", "--out", str(t.dir)],
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 1 and "holding a + b, let go, enter the code" in r.stderr, r.stderr
    t.command("round", dict(ROUND, round=6))
    t.until(lambda: t.state().get("round") == 6, 20, "round 6 after the attacks")
    assert t.bridge.restarts == 0 and t.bridge.child.proc.poll() is None
    for banner in (b"raw REPL", b">>>", b"Traceback", b"KeyboardInterrupt", b"soft reboot"):
        assert banner not in t.out, banner
    # The junk is counted in the table's state (a line's worth each: by hand, mpremote's)
    t.until(lambda: t.state().get("drops", 0) >= 2, 20, "drops in the state %s" % t.state())


def challenges(t, n, timeout_s=30):
    """The first n challenges the table wrote on its port in maintenance."""
    t.until(lambda: len(re.findall(rb"challenge (\d{8})", t.out)) >= n, timeout_s,
            "challenge %d" % n)
    return [c.decode() for c in re.findall(rb"challenge (\d{8})", t.out)]


def screen(t):
    with open(t.fb, "rb") as f:
        return f.read()


def unlock(tmp_path, challenge, tbl=TBL):
    """`duelclock unlock --table N --key FILE CHALLENGE`: the code it prints."""
    key = tmp_path / "event.key"
    key.write_text(KEY.hex() + "\n")
    r = subprocess.run([sys.executable, "-m", "duelclock_desk.cli", "unlock", "--table",
                        str(tbl), "--key", str(key), "--audit", str(tmp_path / "unlocks.log"),
                        challenge], capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_maintenance_opens_with_the_desks_code_and_held_keys_spend_no_try(table, tmp_path):
    t = table(held="a,b")
    first = challenges(t, 1)[0]
    time.sleep(1.5)                     # a and b held past a long press (a's is menu)
    t.press("9", "9", "ok")             # typed while they are held: nothing
    time.sleep(0.3)
    assert challenges(t, 1) == [first]  # no try made
    # Each key redraws the screen (what is typed, masked), before any round.
    t.press("release")
    for digit in "000000":
        before = screen(t)
        t.press(digit)
        t.until(lambda: screen(t) != before, 10, "the screen after %s" % digit)
    t.press("ok")                                                   # wrong: try 1
    second = challenges(t, 2)[1]
    assert second != first
    time.sleep(0.3)
    said = screen(t)                    # "Wrong code (2 left)": gone on board time, no key
    t.until(lambda: screen(t) != said, 10, "the refusal expired")
    t.press(*unlock(tmp_path, first), "ok")     # the spent challenge's code: try 2
    third = challenges(t, 3)[2]
    assert not any(m["k"] == "hello" for m in t.msgs) and b">>> " not in t.out
    # Another table's code for this challenge is no code here (nor a try: the third would
    # lock the table out; the held keys had made one, this right code would be refused).
    assert unlock(tmp_path, third, tbl=TBL + 1) != unlock(tmp_path, third)
    t.press(*unlock(tmp_path, third), "ok")
    t.until(lambda: b">>> " in t.out, 30, "the REPL")
    assert not any(m["k"] == "hello" for m in t.msgs)               # the app never played
    r = mpremote(t.bridge.url, "exec", "print(6 * 7)")
    assert (r.returncode, r.stdout.strip()) == (0, "42"), r.stderr
    log = [json.loads(l) for l in (tmp_path / "unlocks.log").read_text().splitlines()]
    assert [(e["table"], e["challenge"]) for e in log] == \
        [(TBL, first), (TBL + 1, third), (TBL, third), (TBL, third)]


def test_backing_out_of_maintenance_plays(table):
    t = table(held="a,b")
    t.press("release", "back")
    t.until(lambda: any(m["k"] == "hello" for m in t.msgs), 30, "play after back")
    assert b">>>" not in t.out


def test_a_flood_of_junk_loses_no_key_press_and_is_counted(table):
    t = table()
    t.until(lambda: any(m["k"] == "hello" for m in t.msgs), 30, "hello")
    t.command("round", ROUND)
    t.until(lambda: t.state().get("round") == 5 and "sync_age_ms" in t.state(), 30, "synced")
    script = [dict(ROUND, t=0, ev="round_start"), {"t": 1, "ev": "duel_start", "first": "A"}]
    script += [{"t": 2 + i, "ev": "lp", "B": -100 * (i + 1), "by": "B"} for i in range(6)]
    rng = random.Random(15)
    junk = bytes(rng.choice(b"{}x\":,0\x03\x01\x04\xff \r\n" + bytes(range(32, 127)))
                 for _ in range(16000))
    for i, (_, ev, keys) in enumerate(steps(script)):
        t.send(junk[i * 2000:(i + 1) * 2000])
        t.press(*keys)
    t.send(junk[14000:] + b"\n")
    want = [{k: v for k, v in ev.items() if k != "t"} for ev in script[1:]]

    def recorded():
        events = {}
        for m in t.msgs:
            if m["k"] == "record" and m["round"] == 5:
                for i, ev in enumerate(m["events"]):
                    events[m["first"] + i] = ev
        got = [events.get(i) for i in range(1, len(script))]
        return [{k: v for k, v in ev.items() if k != "t"} for ev in got if ev]
    t.until(lambda: recorded() == want, 60, "every key press in the record")
    t.command("round", dict(ROUND, round=6))
    t.until(lambda: t.state().get("round") == 6, 60, "a command after the flood")
    assert t.state().get("drops", 0) >= 10 and t.bridge.restarts == 0


UPY_POLLS = """
import sys
from duelclock.drivers.duplex import Duplex
from duelclock.link import StreamLink
link = StreamLink(Duplex(sys.stdin.buffer, sys.stdout.buffer))
sizes = []
while sum(sizes) < 3000:
    sizes.append(len(link.poll()))
print("polls", sizes[0], max(sizes), sum(sizes))
"""


def test_the_link_takes_a_bounded_read_a_poll_whatever_waits():
    # USB CDC under MicroPython (stdin on a real pty, byte by byte): Duplex.POLL_BYTES a poll.
    master, slave = os.openpty()
    tty.setraw(slave)
    try:
        os.write(master, b"x" * 3000)
        env = dict(os.environ, MICROPYPATH=os.path.join(ROOT, "firmware") + ":.frozen")
        r = subprocess.run([os.path.join(os.path.dirname(sys.executable), "micropython"), "-c",
                            UPY_POLLS], stdin=slave, capture_output=True, text=True, timeout=30,
                           env=env)
    finally:
        os.close(master)
        os.close(slave)
    assert r.stdout.split() == ["polls", str(Duplex.POLL_BYTES), str(Duplex.POLL_BYTES), "3000"], \
        r.stdout + r.stderr
    # A socket (the simulator's serial link): reads of what has arrived, POLL_BUDGET_BYTES
    # at most.
    a, b = socket.socketpair()
    try:
        a.sendall(b"y" * 10000)
        link = StreamLink(b)
        sizes = [len(link.poll())]
        while sum(sizes) < 10000:
            sizes.append(len(link.poll()))
        assert sizes[0] == max(sizes) == POLL_BUDGET_BYTES and link.up
    finally:
        a.close()
        b.close()
