"""`duelclock provision`: several simulated boards (simulator/bridge.py) in one run, over the
real mpremote transport, as `duelclock deploy` is tested; a run killed halfway and run again;
what it refuses; the wait for boards on USB."""
import json
import os
import re
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from simulator.bridge import Bridge
from duelclock.core.sign import pin_matches
from duelclock_desk import cli, deploy, provision
from tests.host.test_deploy import KEY, device_json

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def boards(tmp_path):
    """Three simulated boards, each with its own flash image (its own unique id)."""
    bs = [Bridge(str(tmp_path / ("board%d.img" % i)), tcp_port=0).start() for i in range(3)]
    try:
        yield bs
    finally:
        for b in bs:
            b.close()


@pytest.fixture
def keyfile(tmp_path):
    path = tmp_path / "event.key"
    path.write_text(KEY + "\n")
    return str(path)


def args(keyfile, state, *more):
    return ["provision", "--tables", "1-40", "--key", keyfile, "--pins", "2468:1357",
            "--board", "SIM", "--state", str(state)] + list(more)


def ports(bs):
    return [w for b in bs for w in ("--port", b.url)]


def duelclock(argv, timeout=120):
    return subprocess.run([sys.executable, "-m", "duelclock_desk.cli"] + argv,
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def table_rows(out):
    """The final table: {table: (board, firmware, check, self-test)}."""
    lines = out.split("table  board")[1].splitlines()[1:]
    rows = {}
    for line in lines:
        if " tables done" in line:
            break
        cells = re.split(r"\s{2,}", line)
        rows[cells[0]] = (cells[1], cells[3], cells[4], cells[5])
    return rows


def on_board(b):
    cfg = device_json(b.url, "/flash/duelclock.json")
    return cfg["table"], cfg


def test_several_boards_in_one_run_then_again_copies_nothing(boards, keyfile, tmp_path):
    state = tmp_path / "state.json"
    r = duelclock(args(keyfile, state) + ports(boards))
    assert r.returncode == 0, r.stdout + r.stderr
    assert KEY not in r.stdout + r.stderr and "2468" not in r.stdout + r.stderr
    rows = table_rows(r.stdout)
    assert sorted(rows) == ["1", "2", "3"], r.stdout
    assert all(row[1:] == ("0.1.0 copied", "ok", "ok") for row in rows.values()), rows
    saved = json.loads(state.read_text())["boards"]
    assert {uid: (b["table"], b["done"]) for uid, b in saved.items()} == {
        uid: (int(t), True) for t, (uid, _, _, _) in rows.items()}
    pins = {}
    for b in boards:
        table, cfg = on_board(b)
        # each board its own table's key, never the event key; the PINs hashed
        assert cfg["key"] == deploy.table_secret(KEY, table) and cfg["key"] != KEY
        assert pin_matches("2468", cfg["pins"]["floor"])
        assert pin_matches("1357", cfg["pins"]["head"])
        pins[table] = cfg["pins"]
    assert len({p["floor"] for p in pins.values()}) == 3            # a salt each

    # again, the same boards on other ports: same tables, nothing copied, PINs kept
    for i, b in enumerate(boards):
        b.close()
        boards[i] = Bridge(b.flash, tcp_port=0).start()         # the fixture closes it
    r = duelclock(args(keyfile, state) + ports(reversed(boards)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert table_rows(r.stdout) == {t: (uid, "0.1.0 already there", "ok", "ok")
                                    for t, (uid, _, _, _) in rows.items()}
    assert r.stdout.count(": 0 files copied, check ok, self-test ok") == 3, r.stdout
    assert {on_board(b)[0]: on_board(b)[1]["pins"] for b in boards} == pins


def test_a_run_killed_halfway_resumes_where_it_was(boards, keyfile, tmp_path):
    state = tmp_path / "state.json"
    p = subprocess.Popen([sys.executable, "-m", "duelclock_desk.cli"]
                         + args(keyfile, state, "--jobs", "1") + ports(boards),
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # killed (a laptop's power cut) once the second board has its table
        end = time.monotonic() + 60
        while time.monotonic() < end:
            try:
                saved = json.loads(state.read_text())["boards"]
            except (OSError, ValueError):
                saved = {}
            if len(saved) == 2:
                break
            time.sleep(0.01)
        p.send_signal(signal.SIGKILL)
    finally:
        p.wait(10)
    assert sorted((b["table"], b["done"]) for b in saved.values()) == [(1, True), (2, False)]
    first = on_board(boards[0])[1]

    # run again, the ports in another order: the boards keep their tables, the third gets 3
    r = duelclock(args(keyfile, state, "--jobs", "1") + ports(reversed(boards)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert [on_board(b)[0] for b in boards] == [1, 2, 3]
    assert on_board(boards[0])[1] == first                         # done stays done
    lines = {line.split()[1]: line for line in r.stdout.splitlines() if line.startswith("table ")
             and "copied" in line}
    assert ": 0 files copied, check ok, self-test ok" in lines["1"], lines
    assert "3 of 40 tables done" in r.stdout
    saved = json.loads(state.read_text())["boards"]
    assert sorted((b["table"], b["done"]) for b in saved.values()) == [(1, True), (2, True),
                                                                        (3, True)]


def test_ctrl_c_finishes_the_board_being_written_and_leaves_the_rest(boards, keyfile, tmp_path):
    state = tmp_path / "state.json"
    p = subprocess.Popen([sys.executable, "-m", "duelclock_desk.cli"]
                         + args(keyfile, state, "--jobs", "1") + ports(boards),
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end and not state.exists():    # the first board's table
            time.sleep(0.01)
        p.send_signal(signal.SIGINT)                    # while the first board is written
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, out + err
    assert "interrupted: finishing the boards being written" in out
    saved = json.loads(state.read_text())["boards"]
    assert [(b["table"], b["done"]) for b in saved.values()] == [(1, True)], (saved, out)
    assert "1 of 40 tables done" in out


def test_bad_input_is_refused_and_loses_nothing(boards, keyfile, tmp_path):
    state = tmp_path / "state.json"
    state.write_text("{not json")
    r = duelclock(args(keyfile, state) + ports(boards[:1]))
    assert r.returncode == 1 and "unreadable" in r.stderr and "left as it is" in r.stderr
    assert state.read_text() == "{not json"
    state.write_text('{"boards": {"ab": {"table": "one"}}}')
    r = duelclock(args(keyfile, state) + ports(boards[:1]))
    assert r.returncode == 1 and "not a provisioning state file" in r.stderr
    state.unlink()
    for argv, msg in ((["--pins", "12:12"], "must differ"),
                      (["--broker", "tcp://x:1", "--wifi", "a:b"], "mqtt://"),
                      (["--board", "NOPE"], "unknown board"),
                      (["--tables", "0-3"], "numbered from 1"),
                      (["--jobs", "0"], "--jobs is 1 or more")):
        r = duelclock(args(keyfile, state) + argv + ports(boards[:1]))
        assert r.returncode != 0 and msg in r.stderr, (argv, r.stderr)
    assert not state.exists()                       # no board was touched
    # a port with no board: its row says so, the others are provisioned
    r = duelclock(args(keyfile, state, "--tables", "7-8") + ports(boards[:1])
                  + ["--port", "socket://127.0.0.1:1"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "cannot open socket://127.0.0.1:1" in r.stdout and on_board(boards[0])[0] == 7
    # no table left for a board: said, and nothing written to it
    r = duelclock(args(keyfile, state, "--tables", "7") + ports(boards[1:2]))
    assert r.returncode == 1 and "no table of --tables is left for it" in r.stdout
    assert deploy.Board(boards[1].url, "SIM").read("/flash/duelclock.json") is None


def test_it_waits_for_boards_on_usb_until_every_table_has_one(boards, keyfile, tmp_path,
                                                              monkeypatch, capsys):
    # two boards plugged in one after the other; the first unplugged once done
    plugged = iter([set(), {boards[0].url}, {boards[0].url}, {boards[0].url, boards[1].url}])
    monkeypatch.setattr(provision, "usb_boards", lambda: next(plugged, {boards[1].url}))
    monkeypatch.setattr(provision, "USB_POLL_S", 0.05)
    a = cli.parser().parse_args(args(keyfile, tmp_path / "state.json", "--tables", "4,9"))
    assert provision.run(a) == 0
    assert [on_board(b)[0] for b in boards[:2]] == [4, 9]
    assert "2 of 2 tables done" in capsys.readouterr().out


def test_usb_ports_are_those_of_micropython_boards(monkeypatch):
    import serial.tools.list_ports
    found = [SimpleNamespace(device="/dev/ttyACM0", vid=0x2E8A, pid=0x0005),
             SimpleNamespace(device="/dev/ttyUSB0", vid=0x10C4, pid=0xEA60),
             SimpleNamespace(device="/dev/ttyACM1", vid=0x046D, pid=0xC52B),   # a mouse's
             SimpleNamespace(device="/dev/ttyS0", vid=None, pid=None)]
    monkeypatch.setattr(serial.tools.list_ports, "comports", lambda: found)
    assert provision.usb_boards() == {"/dev/ttyACM0", "/dev/ttyUSB0"}


def test_a_bar_per_board_and_one_for_the_room_on_a_terminal(boards, keyfile, tmp_path):
    from tests.host.test_pull import on_a_terminal
    argv = [sys.executable, "-m", "duelclock_desk.cli"] + args(
        keyfile, tmp_path / "state.json", "--tables", "1-2") + ports(boards[:2])
    rc, out, shown = on_a_terminal(argv)
    assert rc == 0, out + shown
    assert "room:" in shown and "2/2 [" in shown, shown[-2000:]
    for t in (1, 2):
        assert "table %d: " % t in shown and "B/s" in shown, shown[-2000:]
    # again: the room's bar starts at 2/2 and stays there (done tables count once)
    rc, out, shown = on_a_terminal(argv)
    # (past its total tqdm drops the total: "room: 4table")
    assert rc == 0 and "2/2 [" in shown and not re.search(r"room: \d+table", shown), shown


def test_a_board_failing_its_self_test_is_not_done_until_it_passes(boards, keyfile, tmp_path):
    from tests.host.test_deploy import mpremote
    state = tmp_path / "state.json"
    assert duelclock(args(keyfile, state) + ports(boards[:1])).returncode == 0
    # its flash nearly full (a journal left from elsewhere, say): the self-test says so
    fill = ("import os\nn = 0\ntry:\n while True:\n  with open('/flash/junk%d' % n, 'wb')"
            " as f:\n   f.write(bytes(8192))\n  n += 1\nexcept OSError:\n pass\nprint(n)")
    r = mpremote(boards[0].url, "exec", fill)
    assert r.returncode == 0, r.stderr
    files = int(r.stdout) + 1                   # the last one cut short by the full flash
    r = duelclock(args(keyfile, state) + ports(boards[:1]))
    assert r.returncode == 1, r.stdout + r.stderr
    (_, _, check, selftest), = table_rows(r.stdout).values()
    assert check == "ok" and re.fullmatch(r"flash: \d+ KB free", selftest), selftest
    assert json.loads(state.read_text())["boards"].popitem()[1]["done"] is False
    assert "0 of 40 tables done" in r.stdout
    # room made: the same command passes, same table
    assert mpremote(boards[0].url, "exec", "import os\nfor n in range(%d): os.remove("
                    "'/flash/junk%%d' %% n)" % files).returncode == 0
    r = duelclock(args(keyfile, state) + ports(boards[:1]))
    assert r.returncode == 0 and table_rows(r.stdout)["1"][1:] == (
        "0.1.0 already there", "ok", "ok"), r.stdout


def test_the_self_test_finds_a_stuck_key_and_a_dead_screen():
    from duelclock import selftest

    class Screen:
        fb = SimpleNamespace(fill=lambda colour: None)

        def show(self):
            raise OSError(5)                            # EIO: the SPI bus

    board = SimpleNamespace(keys=SimpleNamespace(pressed=lambda: ["a"]), display=Screen(),
                            renderer_kind="fb", WIDTH=240, HEIGHT=135, HAS_WIFI=True,
                            connect_wifi=lambda ssid, pw, timeout_s: False,
                            battery_pct=lambda: 9)
    got = {name: (ok, detail) for name, ok, detail in selftest.run(
        board, {"wifi": {"ssid": "venue", "pass": "x"}}, ROOT)}
    assert got["keys"] == (False, "held: a") and got["screen"] == (False, "OSError(5)")
    assert got["wifi"] == (False, "no association with venue")
    assert got["battery"] == (False, "9 %") and got["flash"][0] is True
