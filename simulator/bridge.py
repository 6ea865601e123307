"""A simulated board as a serial port that real mpremote drives.

    mpremote --- socket://127.0.0.1:PORT --+
                                           +-- bridge --- pty --- micropython -i (board REPL)
    mpremote --- /dev/pts/N (host pty) ----+

Behind the port runs the MicroPython unix port's REPL with `boards/SIM` imported at start,
so the board's flash (DUELCLOCK_SIM_FLASH, a littlefs image) is mounted at /flash and is the
current directory, as `/` is on a board. The path is a board's with stock firmware: ''
(the flash) and /flash/lib, where `duelclock deploy` and `mpremote mip` put the firmware;
then the source tree, found when nothing was deployed.

Soft reset. A board that gets Ctrl-D at an empty prompt prints "MPY: soft reboot" and comes
back in the REPL mode it was in; the unix port exits instead. The bridge starts a new
process and plays the board's part:

    child output "raw REPL; CTRL-B to exit\\r\\n"         -> mode raw
    child output 'Type "help()" for more information.'   -> mode friendly
    child exits -> "MPY: soft reboot\\r\\n" to the host, new child;
        friendly: its banner and ">>> " go to the host
        raw:      the bridge sends it Ctrl-A and drops its output up to "raw REPL; ..."

Ctrl-C: a board's UART or USB stack turns the interrupt character into KeyboardInterrupt
in running code; the unix port runs raw-REPL code with its terminal in raw mode (no ISIG),
so the bridge does it. A Ctrl-C from the host goes to the child as a byte while the child is
waiting on stdin (/proc/PID/syscall: read on fd 0; then the REPL or input() takes it) or has
the interrupt character off (micropython.kbd_intr(-1), as the app during play), and as
SIGINT while it runs code. (A Ctrl-C that lands in the moment between a submitted line and
its execution ends the process: the host then sees a soft reset.) The child's terminal is
raw (OPOST off: bytes as they are).

One host at a time per way in: a new TCP connection replaces the previous one; mpremote can
open and close the host pty any number of times. Output goes to whoever is there, and is
dropped while nobody is (as a board's USB port drops it), so the next session starts clean.

    python -m simulator.bridge --flash table5.img [--tcp 0] [--pty]
        prints `socket://127.0.0.1:PORT` and/or the pty path, one per line, then serves until
        SIGTERM or SIGINT.
"""
import argparse
import ctypes
import errno
import os
import select
import signal
import socket
import subprocess
import sys
import termios
import threading
import time
import tty

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UPY = os.path.join(os.path.dirname(sys.executable), "micropython")
RAW_BANNER = b"raw REPL; CTRL-B to exit\r\n"
FRIENDLY_BANNER = b'Type "help()" for more information.\r\n'
SOFT_REBOOT = b"MPY: soft reboot\r\n"
CTRL_A = b"\x01"
CTRL_C = b"\x03"
# board.py imports duelclock.* before it mounts the flash, so from the source tree; those
# modules are forgotten, and the REPL imports the firmware from /flash/lib when it is there.
STARTUP = ("import board, os, sys\nos.chdir(board.FS_PREFIX)\n"
           "for k in [k for k in sys.modules if k.split('.')[0] == 'duelclock']:\n"
           "    del sys.modules[k]")
PR_SET_PDEATHSIG = 1
PTY_RECHECK_MS = 20                     # how soon an mpremote opening the host pty is seen
CLIENT_STALL_S = 5                      # a TCP host that takes no output this long is dropped
SETTLE_S = 0.05                         # Ctrl-C: how long a busy child may take to go idle
_TAIL = max(len(RAW_BANNER), len(FRIENDLY_BANNER))
_prctl = ctypes.CDLL(None, use_errno=True).prctl    # looked up here, not after fork


def _die_with_parent():
    """In the child before exec: SIGKILL when the thread that started it ends (prctl
    PR_SET_PDEATHSIG), so a killed bridge leaves no REPL behind."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class Child:
    """One micropython process on its own pty, in its own session; it dies with the bridge."""

    def __init__(self, flash, env=None):
        master, slave = os.openpty()
        tty.setraw(slave)
        full = dict(os.environ if env is None else env)
        full["DUELCLOCK_SIM_FLASH"] = os.path.abspath(flash)
        full["MICROPYPATH"] = ":".join(["/flash/lib", os.path.join(ROOT, "firmware"),
                                        os.path.join(ROOT, "boards", "SIM"), ".frozen"])
        try:
            self.proc = subprocess.Popen([UPY, "-i", "-c", STARTUP], stdin=slave, stdout=slave,
                                         stderr=slave, env=full, cwd=ROOT,
                                         start_new_session=True, preexec_fn=_die_with_parent)
        finally:
            os.close(slave)
        os.set_blocking(master, False)
        self.fd = master

    def reading_stdin(self):
        """True while blocked in read(0, ...) (x86_64 Linux: syscall 0; the unix port's
        wheels are x86_64 Linux only)."""
        try:
            with open("/proc/%d/syscall" % self.proc.pid) as f:
                return f.read().startswith("0 0x0 ")
        except OSError:
            return False

    def waits_for_input(self, settle_s):
        """Reading stdin now or within settle_s (it may still be echoing the last input)."""
        end = time.monotonic() + settle_s
        while not self.reading_stdin():
            if time.monotonic() >= end:
                return False
            time.sleep(0.002)
        return True

    def takes_interrupt(self):
        """Whether a Ctrl-C is a KeyboardInterrupt to the child now. The unix port catches
        SIGINT while its interrupt character is on and leaves it at SIG_DFL after
        micropython.kbd_intr(-1), where a board's USB stack passes 0x03 on as a byte: read
        from /proc/PID/status (SigCgt, the caught signals)."""
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith("SigCgt:"):
                        return int(line.split()[1], 16) >> (signal.SIGINT - 1) & 1 == 1
        except OSError:
            pass
        return False

    def interrupt(self):
        self.proc.send_signal(signal.SIGINT)

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        os.close(self.fd)


class Bridge:
    """The ports and the loop that joins them to the child (run in a thread by start())."""

    def __init__(self, flash, tcp_port=None, pty=False, env=None, host="127.0.0.1"):
        self.flash = flash
        self.env = env
        self.raw = False                # the child's REPL mode, from its output
        self.swallow = False            # raw restart: drop output up to RAW_BANNER
        self.tail = b""                 # last bytes of output, for banners split over reads
        self.restarts = 0
        self.child = Child(flash, env)
        self.child_pending = b""        # host input the child's pty has no room for yet
        self.listener = self.client = None
        self.url = self.pty_path = None
        if tcp_port is not None:
            self.listener = socket.create_server((host, tcp_port))
            self.url = "socket://%s:%d" % (host, self.listener.getsockname()[1])
        self.host_fd = None
        self.host_open = False          # someone has the host pty open (no POLLHUP)
        self.host_pending = b""         # output for that someone, not yet taken
        if pty:
            self.host_fd, slave = os.openpty()
            tty.setraw(slave)           # kept while the master lives, across opens
            self.pty_path = os.ttyname(slave)
            os.close(slave)
            os.set_blocking(self.host_fd, False)
        self.wake_r, self.wake_w = os.pipe()
        self.thread = None

    # --- lifecycle --------------------------------------------------------------------------

    def start(self):
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()
        return self

    def close(self):
        os.write(self.wake_w, b"x")
        if self.thread is not None:
            self.thread.join(5)
        self.child.kill()
        for s in (self.client, self.listener):
            if s is not None:
                s.close()
        for fd in (self.host_fd, self.wake_r, self.wake_w):
            if fd is not None:
                os.close(fd)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    # --- the loop ---------------------------------------------------------------------------

    def serve(self):
        while True:
            self._check_host_pty()
            p = select.poll()
            p.register(self.wake_r, select.POLLIN)
            p.register(self.child.fd, select.POLLIN | (select.POLLOUT if self.child_pending else 0))
            for s in (self.listener, self.client):
                if s is not None:
                    p.register(s, select.POLLIN)
            if self.host_open:
                p.register(self.host_fd,
                           select.POLLIN | (select.POLLOUT if self.host_pending else 0))
            # nobody on the host pty: it reports POLLHUP until someone opens it, so look again
            # every PTY_RECHECK_MS instead of polling it
            wait_ms = PTY_RECHECK_MS if self.host_fd is not None and not self.host_open else None
            events = dict(p.poll(wait_ms))
            if self.wake_r in events:
                return
            ev = events.get(self.child.fd, 0)
            if ev & select.POLLOUT:
                self._flush_child()
            if ev & (select.POLLIN | select.POLLHUP | select.POLLERR):
                self._from_child()
            if self.listener is not None and self.listener.fileno() in events:
                if self.client is not None:
                    self.client.close()
                self.client, _ = self.listener.accept()
                self.client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.client.settimeout(CLIENT_STALL_S)
            elif self.client is not None and self.client.fileno() in events:
                try:
                    data = self.client.recv(4096)
                except OSError:
                    data = b""
                if data:
                    self._from_host(data)
                else:
                    self.client.close()
                    self.client = None
            ev = events.get(self.host_fd, 0) if self.host_open else 0
            if ev & select.POLLOUT:
                self._flush_pty()
            if ev & select.POLLIN:
                try:
                    self._from_host(os.read(self.host_fd, 4096))
                except OSError:         # closed since the check: seen next time round
                    pass

    def _check_host_pty(self):
        if self.host_fd is None:
            return
        p = select.poll()
        p.register(self.host_fd, select.POLLIN)
        is_open = not any(ev & select.POLLHUP for _, ev in p.poll(0))
        if self.host_open and not is_open:
            # closed: what it did not take is dropped, as a board's USB port drops it
            self.host_pending = b""
            termios.tcflush(self.host_fd, termios.TCIOFLUSH)
        self.host_open = is_open

    def _from_host(self, data):
        while CTRL_C in data:
            head, _, data = data.partition(CTRL_C)
            self._to_child(head)
            if (self.child_pending or not self.child.takes_interrupt()
                    or self.child.waits_for_input(SETTLE_S)):
                self._to_child(CTRL_C)
            else:
                self.child.interrupt()
        self._to_child(data)

    def _to_child(self, data):
        self.child_pending += data
        self._flush_child()

    def _flush_child(self):
        try:
            n = os.write(self.child.fd, self.child_pending)
        except BlockingIOError:         # its pty is full: when it has room
            return
        except OSError:                 # exited (EIO): the read side restarts it
            n = len(self.child_pending)
        self.child_pending = self.child_pending[n:]

    def _from_child(self):
        try:
            data = os.read(self.child.fd, 4096)
        except BlockingIOError:
            return
        except OSError as e:
            if e.errno != errno.EIO:
                raise
            data = b""
        if not data:                    # the process exited: a soft reset on a board
            self._restart()
            return
        scan = self.tail + data
        raw_at, friendly_at = scan.rfind(RAW_BANNER), scan.rfind(FRIENDLY_BANNER)
        if raw_at != friendly_at:       # both -1 when neither is there
            self.raw = raw_at > friendly_at
        self.tail = scan[-_TAIL:]
        if self.swallow:
            if raw_at < 0:
                return
            self.swallow = False
            data = scan[raw_at:]
        self._to_host(data)

    def _restart(self):
        self.child.kill()
        self.restarts += 1
        self._to_host(SOFT_REBOOT)
        self.tail = b""
        self.child_pending = b""
        self.child = Child(self.flash, self.env)
        if self.raw:
            self.swallow = True
            self._to_child(CTRL_A)

    def _to_host(self, data):
        if self.client is not None:
            try:
                self.client.sendall(data)
            except OSError:
                self.client.close()
                self.client = None
        if self.host_open:
            self.host_pending += data
            self._flush_pty()

    def _flush_pty(self):
        try:
            n = os.write(self.host_fd, self.host_pending)
        except OSError:                 # full (EAGAIN) or just closed (EIO): later
            return
        self.host_pending = self.host_pending[n:]


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m simulator.bridge",
                                description=__doc__.split("\n")[0])
    p.add_argument("--flash", required=True, help="littlefs image file (made on first use)")
    p.add_argument("--tcp", type=int, metavar="PORT", help="listen on 127.0.0.1:PORT (0: any free)")
    p.add_argument("--pty", action="store_true", help="offer a pseudo-terminal")
    a = p.parse_args(argv)
    if a.tcp is None and not a.pty:
        p.error("give --tcp PORT, --pty or both")
    bridge = Bridge(a.flash, a.tcp, a.pty)
    for way in (bridge.url, bridge.pty_path):
        if way:
            print(way, flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    bridge.start()
    stop.wait()
    bridge.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
