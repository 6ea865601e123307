"""Every command the README gives, run: as written, typed into a shell in a directory laid out
as the repository (its firmware/, simulator/ and .venv/ linked in, so what a command writes
lands in the test's directory), with the venv's bin/ on PATH as the README says; or, where
this machine lacks what it needs (a board on /dev/ttyACM0, a whole round's minutes), with
the few words replaced that RUNS names (a simulated board's socket for the port, SIM for the
board, a part of the suite, a shorter demo). Each command belongs to one runner test here;
a runner fails unless it ran every command it owns, and a README command no runner owns
fails test_every_readme_command_has_a_runner.

Also here: however `duelclock sim` ends (a quit key, Ctrl-C, SIGTERM, SIGHUP, a table that
does not start), no process it started outlives it, and a table that dies says why."""
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from tests.host.tables import SessionTable, MqttTables, short_match

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
README = os.path.join(ROOT, "README.md")
REPLAY_FILE = "simulator/matches/timeout_extra_duel.jsonl"
DEPLOY = ("duelclock deploy --port /dev/ttyACM0 --board RPI_PICO_W --table 17 --key event.key "
          "--pins FLOOR:HEAD")
PULL = "duelclock pull --port /dev/ttyACM0 --board RPI_PICO_W --out pulled/ --import"
PROVISION = "duelclock provision --tables 1-40 --key event.key --pins FLOOR:HEAD"

# README command -> the runner test (below) that runs it.
RUNS = {
    "make setup": "test_make_as_written",
    "make test TESTS=tests/core": "test_make_as_written",
    "make test": "test_make_as_written",            # TESTS cut to one file: the suite is this
    "make bench": "test_make_as_written",           # one group, once, the page to tmp
    "make demo": "test_make_demo_shows_the_round_as_it_goes",   # 2 tables, 80x
    "duelclock replay " + REPLAY_FILE: "test_replay_and_sheet_as_written",
    "duelclock sheet " + REPLAY_FILE: "test_replay_and_sheet_as_written",
    "duelclock sim --tables 4 --interactive":
        "test_sim_interactive_as_written_with_the_desk_it_prints",
    "duelclock keygen --out event.key": "test_a_judges_round_as_written",
    "duelclock unlock --table 17 CHALLENGE --key event.key": "test_unlock_as_written",
    "duelclock desk --key event.key": "test_a_judges_round_as_written",
    "duelclock round start --round 3 --tables 1-40 --pairings round3.csv":
        "test_a_judges_round_as_written",
    "duelclock status": "test_a_judges_round_as_written",
    "duelclock extend --table 17 --minutes 3": "test_a_judges_round_as_written",
    "duelclock pause": "test_a_judges_round_as_written",
    "duelclock resume": "test_a_judges_round_as_written",
    "duelclock collect": "test_a_judges_round_as_written",
    "duelclock export --csv": "test_a_judges_round_as_written",
    "duelclock extend --minutes 5": "test_a_judges_round_as_written",
    "duelclock round close": "test_a_judges_round_as_written",
    'duelclock result --table 17 --take replay --reason "players confirm A 2-0"':
        "test_a_judges_round_as_written",
    'duelclock result --table 17 --result B --wins 1-2 --reason "board died; sheet signed"':
        "test_a_judges_round_as_written",
    "duelclock sheet --table 17 --html t17.html": "test_a_judges_round_as_written",
    DEPLOY: "test_deploy_and_pull_on_a_simulated_board",   # its socket, SIM
    PULL: "test_deploy_and_pull_on_a_simulated_board",
    PROVISION: "test_provision_as_written",                 # two simulated boards, SIM
}


def readme_commands():
    """The commands in README.md: `code` spans and indented lines that start with a program
    a reader types (make, duelclock, python, mpremote, MICROPYPATH=); comments cut."""
    with open(README, encoding="utf-8") as f:
        text = f.read()
    start = re.compile(r"(make|duelclock|python|mpremote)\s|MICROPYPATH=")
    found = set()
    for span in re.findall(r"`([^`]+)`", text):
        if start.match(span):
            found.add(" ".join(span.split()))
    for line in text.splitlines():
        if line.startswith("    ") and start.match(line.strip()):
            found.add(" ".join(line.split("#", 1)[0].split()))
    return found


def test_every_readme_command_has_a_runner():
    assert readme_commands() == set(RUNS)
    for runner in set(RUNS.values()):
        assert callable(globals().get(runner)), runner


class Ran:
    """What one runner ran of the README's commands; check() fails unless it ran them all. A
    command counts once a process was started for it (sh, popen, terminal): naming it is
    not running it."""

    def __init__(self, runner):
        self.runner = runner
        self.ran = set()

    def _as_run(self, command, replace, more):
        """`command` as the README writes it, and as it is run here: each (word, by) of
        `replace` replaced, `more` (make variables) after it."""
        assert command in readme_commands(), "not in the README: " + command
        for word, by in replace:
            assert word in command, (word, command)
            command = command.replace(word, by)
        return command + more

    def sh(self, command, cwd, replace=(), more="", **kw):
        """Run it in a shell (sh() below); its standard output."""
        out = sh(self._as_run(command, replace, more), cwd, **kw)
        self.ran.add(command)
        return out

    def popen(self, command, **kw):
        """Start it as the shell would split it, without the shell: a signal reaches it."""
        p = subprocess.Popen(self._as_run(command, (), "").split(), **kw)
        self.ran.add(command)
        return p

    def terminal(self, command, cwd):
        """Start it in a pseudo-terminal, as a person does (Terminal below)."""
        t = Terminal(self._as_run(command, (), ""), cwd)
        self.ran.add(command)
        return t

    def check(self):
        owned = set(c for c, r in RUNS.items() if r == self.runner)
        assert self.ran == owned, "%s did not run %s" % (self.runner, sorted(owned - self.ran))


@pytest.fixture
def ran(request):
    r = Ran(request.node.originalname)
    yield r
    r.check()


@pytest.fixture
def repo(tmp_path):
    """A directory that looks like the repository root to a command: what the commands read
    is linked in, what they write stays here."""
    for name in ("firmware", "simulator", ".venv"):
        os.symlink(os.path.join(ROOT, name), tmp_path / name)
    return tmp_path


def shell_env(**more):
    # A reader's fresh shell: not inside the make that may be running this suite (its
    # MAKEFLAGS would make a make typed here print "Entering directory" around its output).
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    return dict(env, PATH=BIN + os.pathsep + os.environ["PATH"], **more)


def sh(command, cwd, timeout=60, env=None):
    r = subprocess.run(command, shell=True, cwd=cwd, env=env or shell_env(),
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, (command, r.stdout[-3000:], r.stderr[-3000:])
    return r.stdout


def test_replay_and_sheet_as_written(repo, ran):
    on_cpython = ran.sh("duelclock replay " + REPLAY_FILE, repo)
    on_upy = sh("MICROPYPATH=firmware:.frozen .venv/bin/micropython -m duelclock.replay "
                + REPLAY_FILE, repo)
    assert on_cpython == on_upy and json.loads(on_cpython)["result"] == "B"
    text = ran.sh("duelclock sheet " + REPLAY_FILE, repo)
    assert text.startswith("ROUND 3") and "Extra duel" in text


def test_make_as_written(tmp_path, ran):
    out = ran.sh("make setup", ROOT, timeout=600)
    assert out.rstrip().endswith("setup check: ok"), out
    out = ran.sh("make test TESTS=tests/core", ROOT, timeout=600)
    assert re.search(r" \d{3} passed in ", out) and " failed" not in out, out[-2000:]
    out = ran.sh("make test", ROOT, more=" TESTS=tests/core/test_clock.py", timeout=600)
    assert re.search(r" \d+ passed in ", out) and " failed" not in out, out[-2000:]
    page = tmp_path / "performance.md"
    out = ran.sh("make bench", ROOT, more=' BENCH_ARGS="--repeat 1 core" PERF_PAGE=%s' % page,
                 timeout=900)
    lines = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    assert {m["group"] for m in lines} == {"core"} and len(lines) >= 10
    text = page.read_text()
    assert "- Machine: " in text and "`replay_2000_upy_ms`" in text


def test_make_demo_shows_the_round_as_it_goes(tmp_path, ran):
    out = ran.sh("make demo", ROOT, more=' DEMO_ARGS="--tables 2 --mqtt 1 --speed 80 --out %s"'
                 % (tmp_path / "demo"), timeout=600)
    lines = out.splitlines()
    # the round's clock as it runs, every 5 round minutes, and each match as it finishes
    clocks = [l for l in lines if re.match(r"round \d+:\d\d: \d of 2 matches finished$", l)]
    assert len(clocks) >= 9, out
    finished = [l for l in lines if re.match(r"  table [12]: (A|B) wins \d-\d at \d+:\d\d, "
                                             r"[12] of 2 finished$", l)]
    assert len(finished) == 2, out
    assert lines.index(finished[-1]) < lines.index(next(l for l in lines
                                                        if l.startswith("time called")))
    assert "alerts at the end: none" in lines
    assert sorted(os.listdir(tmp_path / "demo"))[:3] == ["pairings.csv", "results.csv", "room"]


def test_deploy_and_pull_on_a_simulated_board(repo, ran):
    # No board on /dev/ttyACM0 here: a simulated one (simulator/bridge.py, the unix port with
    # boards/SIM behind a socket, mpremote's transport as a board's USB gives it).
    from simulator.bridge import Bridge
    from tests.host.test_desk_cli import DeskProcess
    from tests.host.test_pull import MAKE_JOURNAL, MATCH
    from tests.host.upy import UPY, upy_path
    sh("duelclock keygen --out event.key", repo)
    b = Bridge(str(repo / "flash.img"), tcp_port=0).start()
    try:
        # FLOOR:HEAD stands for the judges' PINs
        out = ran.sh(DEPLOY, repo, replace=(("/dev/ttyACM0", b.url), ("RPI_PICO_W", "SIM"),
                                            ("FLOOR:HEAD", "2468:1357")), timeout=120)
        assert "check ok" in out and "table 17" in out, out
    finally:
        b.close()
    # the table then played round 3 and never sent its record: its journal says so
    r = subprocess.run([UPY, "-c", MAKE_JOURNAL % MATCH], capture_output=True, text=True,
                       cwd=ROOT, timeout=60, env=dict(os.environ, MICROPYPATH=upy_path(
                           "boards/SIM"), DUELCLOCK_SIM_FLASH=str(repo / "flash.img")))
    assert r.returncode == 0, r.stdout + r.stderr
    (repo / "key").write_bytes((repo / "event.key").read_bytes())
    desk = DeskProcess(repo, "socket://127.0.0.1:1")              # no table linked
    b = Bridge(str(repo / "flash.img"), tcp_port=0).start()
    try:
        sh("duelclock round start --round 3 --tables 17 --desk " + desk.url, repo)
        board = (("/dev/ttyACM0", b.url), ("RPI_PICO_W", "SIM"))
        out = ran.sh(PULL, repo, replace=board, timeout=120,
                     env=shell_env(DUELCLOCK_DESK=desk.url))
        assert "imported: the desk holds" in out and "marked collected on the table" in out, out
        assert os.listdir(repo / "pulled") == ["t17_r3_m1.jsonl"]
    finally:
        b.close()
        desk.stop()


def test_provision_as_written(repo, ran):
    # No boards on USB here: two simulated ones, given by their sockets (--port), SIM.
    from simulator.bridge import Bridge
    sh("duelclock keygen --out event.key", repo)
    bs = [Bridge(str(repo / ("flash%d.img" % i)), tcp_port=0).start() for i in range(2)]
    try:
        out = ran.sh(PROVISION, repo, replace=(("FLOOR:HEAD", "2468:1357"),), timeout=120,
                     more=" --board SIM --port %s --port %s" % (bs[0].url, bs[1].url))
    finally:
        for b in bs:
            b.close()
    assert out.count("check ok") == 2 and "2 of 40 tables done" in out, out
    saved = json.loads((repo / "duelclock-provision.json").read_text())["boards"]
    assert sorted(b["table"] for b in saved.values()) == [1, 2]


def test_a_halls_broker_config_as_written(repo):
    # mosquitto started with such a file: test_desk_cli.py (DESK here names no host).
    assert sh("duelclock hall --desk mqtt://DESK:1883 --event NAME --name hall2 > hall2.conf",
              repo) == ""
    conf = (repo / "hall2.conf").read_text().split("\n")
    for line in ("connection hall2", "address DESK:1883", "topic duelclock/NAME/table/+/cmd in 1",
                 "topic duelclock/NAME/table/+/state out 1"):
        assert line in conf, line


@pytest.mark.parametrize("command", ["replay", "sheet"])
def test_a_reader_that_goes_away_ends_the_cli_quietly(command):
    # `duelclock replay FILE | head`: the pipe's reader is gone before the CLI writes.
    p = subprocess.Popen([os.path.join(BIN, "duelclock"), command, REPLAY_FILE], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait(30) == 141 and err == b""


# --- the simulator: as written, and however it ends -------------------------------------------

def descendants(pid):
    """Every live process under pid, by the parent links in /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"     # a zombie is dead
    except OSError:
        return False


def _interactive_signals():
    # A terminal's shell starts its commands with Ctrl-C and Ctrl-\ live; a suite run as a
    # background job (`make test &` from a script) inherits them ignored, and so would every
    # command here, for which SIGINT then does nothing.
    for sig in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)


class Terminal:
    """A command in a pseudo-terminal, as a person starts it; `out` collects the screen."""

    def __init__(self, command, cwd):
        master, slave = pty.openpty()
        self.proc = subprocess.Popen(command, shell=True, cwd=cwd, env=shell_env(),
                                     stdin=slave, stdout=slave, stderr=slave,
                                     start_new_session=True, preexec_fn=_interactive_signals)
        os.close(slave)
        self.master = master
        self.out = b""
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self.out = (self.out + data)[-200000:]

    def wait_for(self, pattern, timeout_s):
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            with self._lock:
                m = re.search(pattern, self.out)
            if m:
                return m
            if self.proc.poll() is not None:
                time.sleep(0.3)         # the last of its output
                break
            time.sleep(0.1)
        raise AssertionError("no %r in %r" % (pattern, self.out[-1500:]))

    def cli_pid(self):
        """The duelclock process: the shell itself if it exec'd the command, else its child."""
        for pid in [self.proc.pid] + descendants(self.proc.pid):
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                if b"bin/duelclock\0sim" in f.read():
                    return pid
        raise AssertionError("no duelclock process under %d" % self.proc.pid)

    def close(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        os.close(self.master)


def test_sim_interactive_as_written_with_the_desk_it_prints(repo, ran):
    # The default --dir (out/sim) is relative: here, in the test's directory.
    term = ran.terminal("duelclock sim --tables 4 --interactive", repo)
    desk, pids = None, []
    try:
        m = term.wait_for(rb"(duelclock desk [^\r\n]+)\r?\n", 90)
        pids = descendants(term.proc.pid)
        assert len([p for p in pids if alive(p)]) >= 4
        assert sorted(os.listdir(repo / "out" / "sim")) == [
            "event.key", "table01", "table02", "table03", "table04"]
        desk = subprocess.Popen(m.group(1).decode(), shell=True, cwd=repo,
                                env=shell_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        api = "http://" + desk.stdout.readline().split("http://", 1)[1].split(",", 1)[0]
        end = time.monotonic() + 60
        while time.monotonic() < end:
            with urllib.request.urlopen(api + "/api/status", timeout=10) as r:
                tables = json.loads(r.read())["tables"]
            if len(tables) == 4 and all(t["online"] for t in tables):
                break
            time.sleep(0.5)
        assert [t["table"] for t in tables if t["online"]] == [1, 2, 3, 4]
        os.write(term.master, b"q")
        assert term.proc.wait(30) == 0
        assert [p for p in pids if alive(p)] == []
    finally:
        if desk is not None:
            os.killpg(desk.pid, signal.SIGTERM)
            desk.wait(10)
        term.close()
        for p in pids:
            if alive(p):
                os.kill(p, signal.SIGKILL)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_sim_ended_by_a_signal_leaves_no_table_or_broker_running(repo, sig):
    # SIGINT: Ctrl-C; SIGHUP: the terminal closed. The tables run in their own sessions, so
    # only the CLI can stop them; the MQTT table brings a mosquitto along.
    term = Terminal("duelclock sim --tables 2 --mqtt 1 --interactive", repo)
    try:
        pids = []
        term.wait_for(rb"round start --round 1", 90)
        pids = [p for p in descendants(term.proc.pid) if alive(p)]
        assert len(pids) >= 3                       # two tables and the broker
        cli = term.cli_pid()
        if sig == signal.SIGTERM:                   # `kill PID` of the CLI
            os.kill(cli, sig)
        else:                                       # from the terminal: its process group
            os.killpg(term.proc.pid, sig)
        _until(lambda: not alive(cli), "the CLI's end")
        assert [p for p in pids if alive(p)] == []
        assert b"Traceback" not in term.out
    finally:
        term.close()
        for p in pids:                  # a failure here leaves nothing running either
            if alive(p):
                os.kill(p, signal.SIGKILL)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_the_demo_ended_by_a_signal_leaves_no_table_broker_or_desk_running(tmp_path, sig):
    # `make demo`'s program, smaller: its desk is a process of its own too.
    term = Terminal("exec %s -m simulator.demo --tables 2 --mqtt 1 --out %s" % (
        sys.executable, tmp_path / "demo"), ROOT)
    pids = []
    try:
        term.wait_for(rb"round 1 starts at desk time", 120)
        pids = [p for p in descendants(term.proc.pid) if alive(p)]
        assert len(pids) >= 4                       # two tables, the broker, the desk
        os.kill(term.proc.pid, sig)
        assert term.proc.wait(60) == 128 + sig
        _until(lambda: not [p for p in pids if alive(p)], "every process the demo started")
    finally:
        term.close()
        for p in pids:
            if alive(p):
                os.kill(p, signal.SIGKILL)


def test_a_table_that_does_not_start_says_why_and_the_others_are_stopped(repo):
    # Table 2's flash image cannot be opened (a directory stands in its place).
    os.makedirs(repo / "out" / "sim" / "table02" / "flash.img")
    term = Terminal("duelclock sim --tables 2 --interactive", repo)
    try:
        term.wait_for(rb"sim: table 2 did not start: [^\r\n]*Error[^\r\n]*"
                      rb"exit 1; [^\r\n]*table02/stderr.log\)", 90)
        assert term.proc.wait(30) == 1
        assert [p for p in descendants(term.proc.pid) if alive(p)] == []
    finally:
        term.close()


# --- how a judge runs a round, as the README writes it ---------------------------------------

def test_a_judges_round_as_written(repo, ran):
    # The desk on its shipped defaults (API on 8765, its own mosquitto, the store in the
    # current directory); table 17 is a fake table on that broker (no boards here).
    ran.sh("duelclock keygen --out event.key", repo)
    (repo / "round3.csv").write_text("table,player_a,player_b\n17,Kim Minsu,Budi Santoso\n")
    # argv as the shell would make it, without the shell: SIGTERM reaches the desk itself
    desk = ran.popen("duelclock desk --key event.key", cwd=repo, env=shell_env(),
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                     start_new_session=True)
    tables = None
    try:
        line = desk.stdout.readline()
        assert "http://127.0.0.1:8765," in line, (line, desk.stderr.read()
                                                  if desk.poll() is not None else "")
        event = line.split("event ", 1)[1].split(",", 1)[0]
        broker = re.search(r"mqtt://[\d.]+:\d+", line).group(0)
        key = bytes.fromhex((repo / "event.key").read_text().strip())
        table = SessionTable(key, 17)
        tables = MqttTables(broker, event, [table])
        _until(tables.all_connected, "table 17 on the desk's broker")
        out = ran.sh("duelclock round start --round 3 --tables 1-40 --pairings round3.csv", repo)
        assert out.startswith("round 3 starts at desk time") and "40 tables" in out
        _until(lambda: table.round is not None, "the round at table 17")
        assert table.round["names"] == {"A": "Kim Minsu", "B": "Budi Santoso"}
        status = ran.sh("duelclock status", repo)
        assert re.search(r"\n\s+17 mqtt://\S+\s+\S+\s+waiting", status), status
        assert ran.sh("duelclock extend --table 17 --minutes 3", repo) == "table 17: 3:00 more\n"
        _until(lambda: table.extended_ms == 180000, "the extension")
        assert ran.sh("duelclock pause", repo).startswith("paused at desk time")
        assert ran.sh("duelclock resume", repo).startswith("resumed at desk time")
        assert ran.sh("duelclock extend --minutes 5", repo).endswith(": 5:00 more each\n")
        _until(lambda: table.extended_ms == 480000, "the room-wide extension")
        assert [ev["ev"] for ev in table.record[1:4]] == ["extend", "pause", "resume"]
        table.lie = {"result": "B", "wins": {"A": 0, "B": 2}}     # its report contradicts its record
        table.play(short_match(), tables.local_ms())
        _until(lambda: "mismatch" in ran.sh("duelclock collect", repo), "the mismatch")
        with pytest.raises(AssertionError, match="17"):       # refused: a mismatch is open
            ran.sh("duelclock round close", repo)
        out = ran.sh('duelclock result --table 17 --take replay --reason "players confirm A 2-0"',
                     repo)
        assert "A 2-0" in out, out
        _until(lambda: table.acked, "table 17's record acknowledged")
        assert ran.sh("duelclock export --csv", repo).splitlines()[1].startswith(
            "17,3,Kim Minsu,Budi Santoso,A,2,0,B warning slow_play,")
        out = ran.sh('duelclock result --table 17 --result B --wins 1-2 --reason '
                     '"board died; sheet signed"', repo)
        assert "B 1-2" in out, out
        row = ran.sh("duelclock export --csv", repo).splitlines()[1]
        assert row.startswith("17,3,Kim Minsu,Budi Santoso,B,1,2,") and "sheet signed" in row, row
        assert "closed" in ran.sh("duelclock round close", repo)
        assert ran.sh("duelclock sheet --table 17 --html t17.html", repo) == "wrote t17.html\n"
        page = (repo / "t17.html").read_text()
        assert "table 17" in page and "A: Kim Minsu &middot; B: Budi Santoso" in page
    finally:
        if tables is not None:
            tables.stop()
        os.killpg(desk.pid, signal.SIGTERM)
        desk.wait(15)
    assert desk.returncode == 0


def _until(cond, what, timeout_s=30):
    end = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < end, "timed out waiting for " + what
        time.sleep(0.05)


def test_unlock_as_written(repo, ran):
    # The code the desk gives for a table's challenge, from the event key alone (no desk
    # running): that table's own key and that challenge, six digits; another table's differs.
    from duelclock.core import sign
    sh("duelclock keygen --out event.key", repo)
    key = bytes.fromhex((repo / "event.key").read_text().strip())
    got = ran.sh("duelclock unlock --table 17 CHALLENGE --key event.key", repo,
                 replace=(("CHALLENGE", "40127733"),)).strip()
    assert got == sign.unlock_code(sign.table_key(key, 17), "40127733"), got
    assert len(got) == 6 and got.isdigit()
    assert got != sign.unlock_code(sign.table_key(key, 18), "40127733")
