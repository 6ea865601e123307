"""Every command the README gives, run as written: typed into a shell in a directory laid out
as the repository (its firmware/, simulator/ and .venv/ linked in, so what a command writes
lands in the test's directory), with the venv's bin/ on PATH as the README says. A command
that needs what this machine lacks (a board on /dev/ttyACM0, hours) is run elsewhere in the
closest honest form: COVERED names that test and why. A README command with neither fails
test_every_readme_command_is_run_by_a_test.

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

# README command -> the test that runs it (here: None) or its closest honest form, and why.
COVERED = {
    "make demo": "tests/bench/bench_sim.py::demo_wall_s: the same program (simulator.demo, "
                 "a 2-minute round), timed by `make bench`; its room by test_sim_room.py",
    "make test": ".ci/run: CI runs it as written on a clean clone",
    "make setup": "tests/host/test_setup_check.py::test_check_passes_where_make_setup_installed_"
                  "everything: make test runs it first; its check on a bare machine there too",
    "make bench": "tests/host/test_bench_smoke.py::test_core_group_prints_one_metric_per_line",
    "make soak": "tests/faults/: its short form runs in make test; the long form takes 95 min",
    "duelclock replay simulator/matches/timeout_extra_duel.jsonl": None,
    "MICROPYPATH=firmware:.frozen .venv/bin/micropython -m duelclock.replay "
    "simulator/matches/timeout_extra_duel.jsonl": None,
    "duelclock sheet simulator/matches/timeout_extra_duel.jsonl": None,
    "duelclock sheet simulator/matches/timeout_extra_duel.jsonl --html sheet.html": None,
    "duelclock sim --tables 4 --interactive": None,
    "duelclock desk ...": None,          # what the sim prints: run as printed
    "duelclock unlock --table N CHALLENGE":
        "tests/host/test_usb_port.py::test_maintenance_opens_with_the_desks_code_and_held_keys_"
        "spend_no_try: with --key, the table's challenge and number; the desk's route in "
        "tests/host/test_desk_api.py::test_unlock_is_audited_and_refuses_what_is_no_challenge",
    "python -m simulator.bridge --flash IMG --tcp 0":
        "tests/host/test_deploy.py::test_bridge_command_prints_its_ports_and_cleans_up",
    "mpremote connect socket://127.0.0.1:PORT ...":
        "tests/host/test_deploy.py::test_real_mpremote_through_the_bridge",
    "duelclock deploy": "tests/host/test_deploy.py::test_deploy_writes_checks_and_updates",
    "duelclock keygen --out event.key": None,
    "duelclock desk --key event.key": None,
    "duelclock round start --round 3 --tables 1-40 --pairings round3.csv": None,
    "duelclock status": None,
    "duelclock extend --table 17 --minutes 3": None,
    "duelclock pause": None,
    "duelclock resume": None,
    "duelclock collect": None,
    "duelclock export --csv": None,
    "duelclock carry 3 --confirm": "tests/host/test_sim_room_carry.py::test_kr_waits_for_the_"
                                   "head_judge_and_then_carries_into_round_3: the same command "
                                   "on a carried penalty of a simulated room",
    "duelclock sheet --table 17 --html t17.html": None,
    "duelclock hall --desk mqtt://DESK:1883 --event NAME --name hall2 > hall2.conf": None,
    "duelclock pull --port /dev/ttyACM0 --board RPI_PICO_W --out pulled/ --import":
        "tests/host/test_pull.py::test_pull_import_hands_the_match_to_the_desk_and_marks_it_"
        "collected: the same command with --port socket:// (a simulated board; no board here)",
    "duelclock pull --import": "the command above",
    "duelclock sheet pulled/t17_r3_m4.jsonl":
        "tests/host/test_pull.py::test_pull_copies_the_uncollected_match_and_replays_it: "
        "`duelclock sheet` of a pulled file (named by its table, round and match)",
    "mpremote mip install umqtt.simple":
        "tests/host/test_deploy.py::test_mip_installs_package_json_from_a_local_index: mip "
        "from a local index (no network to micropython.org here)",
    "duelclock pull": "tests/host/test_usb_port.py::test_ctrl_c_and_raw_repl_entry_during_a_"
                      "round_change_nothing: pull against a table in play says how to get in",
    "duelclock deploy --port /dev/ttyACM0 --board RPI_PICO_W --table 17 --key event.key "
    "--pins FLOOR:HEAD [--wifi SSID:PASS]":
        "tests/host/test_deploy.py::test_deploy_writes_checks_and_updates: --port socket:// "
        "to a simulated board through the bridge (no board on /dev/ttyACM0 here)",
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


def test_every_readme_command_is_run_by_a_test():
    assert readme_commands() == set(COVERED)
    for where in filter(None, COVERED.values()):
        path, _, rest = where.partition("::")
        if os.path.exists(os.path.join(ROOT, path)) and rest:
            name = re.match(r"\w+", rest).group(0)
            with open(os.path.join(ROOT, path)) as f:
                assert re.search(r"\b%s\b" % name, f.read()), where


@pytest.fixture
def repo(tmp_path):
    """A directory that looks like the repository root to a command: what the commands read
    is linked in, what they write stays here."""
    for name in ("firmware", "simulator", ".venv"):
        os.symlink(os.path.join(ROOT, name), tmp_path / name)
    return tmp_path


def shell_env():
    return dict(os.environ, PATH=BIN + os.pathsep + os.environ["PATH"])


def sh(command, cwd, timeout=60):
    r = subprocess.run(command, shell=True, cwd=cwd, env=shell_env(), capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0, (command, r.stderr)
    return r.stdout


def test_replay_and_sheet_as_written(repo):
    on_cpython = sh("duelclock replay simulator/matches/timeout_extra_duel.jsonl", repo)
    on_upy = sh("MICROPYPATH=firmware:.frozen .venv/bin/micropython -m duelclock.replay "
                "simulator/matches/timeout_extra_duel.jsonl", repo)
    assert on_cpython == on_upy and json.loads(on_cpython)["result"] == "B"
    text = sh("duelclock sheet simulator/matches/timeout_extra_duel.jsonl", repo)
    assert text.startswith("ROUND 3") and "Extra duel" in text
    out = sh("duelclock sheet simulator/matches/timeout_extra_duel.jsonl --html sheet.html", repo)
    assert out == "wrote sheet.html\n" and "<table" in (repo / "sheet.html").read_text()


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


def test_sim_interactive_as_written_with_the_desk_it_prints(repo):
    # The default --dir (out/sim) is relative: here, in the test's directory.
    term = Terminal("duelclock sim --tables 4 --interactive", repo)
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

def test_a_judges_round_as_written(repo):
    # The desk on its shipped defaults (API on 8765, its own mosquitto, the store in the
    # current directory); table 17 is a fake table on that broker (no boards here).
    sh("duelclock keygen --out event.key", repo)
    (repo / "round3.csv").write_text("table,player_a,player_b\n17,Kim Minsu,Budi Santoso\n")
    # argv as the shell would make it, without the shell: SIGTERM reaches the desk itself
    desk = subprocess.Popen("duelclock desk --key event.key".split(), cwd=repo,
                            env=shell_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
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
        out = sh("duelclock round start --round 3 --tables 1-40 --pairings round3.csv", repo)
        assert out.startswith("round 3 starts at desk time") and "40 tables" in out
        _until(lambda: table.round is not None, "the round at table 17")
        assert table.round["names"] == {"A": "Kim Minsu", "B": "Budi Santoso"}
        status = sh("duelclock status", repo)
        assert re.search(r"\n\s+17 mqtt://\S+\s+\S+\s+waiting", status), status
        assert sh("duelclock extend --table 17 --minutes 3", repo) == "table 17: 3:00 more\n"
        _until(lambda: table.extended_ms == 180000, "the extension")
        assert sh("duelclock pause", repo).startswith("paused at desk time")
        assert sh("duelclock resume", repo).startswith("resumed at desk time")
        table.play(short_match(), tables.local_ms())
        _until(lambda: table.acked, "table 17's record acknowledged")
        _until(lambda: "ok" in sh("duelclock collect", repo), "the verified result")
        assert "ok          1: 17" in sh("duelclock collect", repo)
        assert sh("duelclock export --csv", repo).splitlines()[1:] == [
            "17,3,Kim Minsu,Budi Santoso,A,2,0,B warning slow_play,ok"]
        assert sh("duelclock sheet --table 17 --html t17.html", repo) == "wrote t17.html\n"
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
