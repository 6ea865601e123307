"""The `duelclock` commands against a desk running as its own process (socket:// link to
fake tables served by the test), and a desk restart: a new process, a new boot, the round,
records and seqs kept."""
import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from duelclock.core.wire import SEQ_BOOT
from duelclock_desk import cli
from duelclock_desk.broker import free_port
from tests.host.tables import SessionTable, StreamTables, short_match


def wait_for(cond, timeout_s=10.0, what="condition"):
    end = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.02)


class DeskProcess:
    def __init__(self, tmp_path, link):
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "duelclock_desk.cli", "desk", "--key", str(tmp_path / "key"),
             "--store", str(tmp_path / "desk.sqlite"), "--link", link, "--broker", "off",
             "--http-port", str(self.port), "--event", "cup"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wait_for(self._up, what="the desk's API")

    def _up(self):
        assert self.proc.poll() is None, self.proc.stdout.read()
        try:
            urllib.request.urlopen(self.url + "/api/status", timeout=1).read()
            return True
        except OSError:
            return False

    def status(self):
        return json.loads(urllib.request.urlopen(self.url + "/api/status").read())

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        out = self.proc.communicate(timeout=10)[0]
        assert self.proc.returncode == 0, out
        return out


def duelclock(capsys, *args):
    code = cli.main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def room(tmp_path):
    assert cli.main(["keygen", "--out", str(tmp_path / "key")]) == 0
    assert oct(os.stat(tmp_path / "key").st_mode & 0o777) == "0o600"
    key = bytes.fromhex((tmp_path / "key").read_text().strip())
    tables = [SessionTable(key, n) for n in (1, 2)]
    server = StreamTables.serve_tcp(tables)
    yield tables, server
    server.stop()


def test_the_commands_against_a_running_desk_and_a_restart(tmp_path, room, capsys):
    tables, server = room
    (tmp_path / "pairings.csv").write_text("table,player_a,player_b\n1,Kim Minsu,Budi Santoso\n"
                                           "2,Lee Jiwoo,Sari Dewi\n")
    desk = DeskProcess(tmp_path, server.url)
    d = ["--desk", desk.url]
    s = ["--store", tmp_path / "desk.sqlite"]
    try:
        wait_for(lambda: len(desk.status()["tables"]) == 2, what="both tables")
        code, out, _ = duelclock(capsys, "round", "start", "--round", 1, "--limit", "40m",
                                 "--pairings", tmp_path / "pairings.csv", "--rules", "KR", *d)
        assert code == 0 and "round 1 starts" in out
        wait_for(lambda: all(t.round for t in tables), what="the round on the tables")
        assert tables[0].round["names"] == {"A": "Kim Minsu", "B": "Budi Santoso"}
        assert tables[1].round["limit_s"] == 2400 and tables[1].rules == "KR"
        tables[0].play(short_match(), server.local_ms())
        wait_for(lambda: tables[0].acked, what="table 1's ack")

        code, out, _ = duelclock(capsys, "status", *d)
        rows = {line.split()[0]: line for line in out.split("\n\n")[0].splitlines()[3:]}
        assert code == 0 and "round 1 (swiss)" in out
        assert "2-0" in rows["1"] and "ok" in rows["1"] and "waiting" in rows["2"]
        code, out, _ = duelclock(capsys, "collect", *d)
        assert "ok          1: 1" in out and "no result   1: 2" in out
        code, _, err = duelclock(capsys, "export", "--csv", *s)   # table 2 plays on
        assert code == 1 and "no final result at table(s) 2 (no result)" in err
        code, out, _ = duelclock(capsys, "export", "--csv", "--force", *s)
        assert out.splitlines() == [
            "table,round,player_a,player_b,result,wins_a,wins_b,penalties,verified",
            "1,1,Kim Minsu,Budi Santoso,A,2,0,B warning slow_play,ok",
            "2,1,Lee Jiwoo,Sari Dewi,,,,,"]
        code, out, _ = duelclock(capsys, "sheet", "--table", 1, *s)
        assert code == 0 and "== Duel 2 - B goes first ==" in out and "rules KR" in out
        code, out, _ = duelclock(capsys, "sheet", "--table", 1, "--html", tmp_path / "s.html", *s)
        assert "Life-point record: round 1" in (tmp_path / "s.html").read_text()

        assert duelclock(capsys, "pause", "--tables", 2, *d)[0] == 0
        assert duelclock(capsys, "extend", "--table", 2, "--minutes", 3, *d)[0] == 0
        wait_for(lambda: tables[1].extended_ms == 180000, what="the extension")
        # each command once, to table 2 alone (signed with its key), the round with its names
        assert [m["k"] for m in tables[1].taken] == ["round", "pause", "extend"]
        code, _, err = duelclock(capsys, "extend", "--table", 9, "--minutes", 3, *d)
        assert code == 1 and "table 9 is not in round 1" in err
    finally:
        desk.stop()

    before = tables[1].dec.last_seq(0)
    desk = DeskProcess(tmp_path, server.url)
    try:
        st = desk.status()
        assert st["boot"] == 2 and st["round"]["round"] == 1 and st["event"] == "cup"
        assert duelclock(capsys, "resume", *d[:1], desk.url)[0] == 0
        wait_for(lambda: tables[1].taken[-1]["k"] == "resume", what="resume after restart")
        assert before < 2 * SEQ_BOOT <= tables[1].taken[-1]["seq"]
        wait_for(lambda: desk.status()["tables"][0]["verified"] == "ok", what="status")
    finally:
        desk.stop()
    code, out, _ = duelclock(capsys, "export", "--csv", "--force", *s)
    assert out.splitlines()[1] == "1,1,Kim Minsu,Budi Santoso,A,2,0,B warning slow_play,ok"


def test_a_missing_desk_or_store_is_said_plainly(tmp_path, capsys):
    code, _, err = duelclock(capsys, "status", "--desk", "http://127.0.0.1:%d" % free_port())
    assert code == 1 and "is `duelclock desk` running?" in err
    code, _, err = duelclock(capsys, "export", "--csv", "--store", tmp_path / "none.sqlite")
    assert code == 1 and "no store at" in err
    code, _, err = duelclock(capsys, "sheet")
    assert code == 1 and "sheet takes a FILE or --table N" in err


def test_argument_types(tmp_path):
    from duelclock_desk import client
    assert client.tables("1-3,7,9-10") == [1, 2, 3, 7, 9, 10] and client.tables("all") is None
    assert [client.duration_s(x) for x in ("45m", "90s", "1h", "45", "2.5m")] == \
        [2700, 90, 3600, 2700, 150]
    (tmp_path / "p.csv").write_text("3,Kim Minsu,Budi Santoso\n4, Ana , Bo\n")
    assert client.pairings(str(tmp_path / "p.csv")) == [[3, "Kim Minsu", "Budi Santoso"],
                                                        [4, "Ana", "Bo"]]
    (tmp_path / "bad.csv").write_text("table,a,b\n3,only one\n")
    for bad, fn in (("0-2", client.tables), ("x", client.tables), ("soon", client.duration_s),
                    (str(tmp_path / "bad.csv"), client.pairings)):
        with pytest.raises(argparse.ArgumentTypeError):
            fn(bad)


def test_the_desk_says_how_to_get_mosquitto_when_it_is_missing(tmp_path, capsys, monkeypatch):
    from duelclock_desk import broker
    monkeypatch.setattr(broker.shutil, "which", lambda name: None)
    monkeypatch.setattr(broker, "_sbin", lambda name: None)
    assert cli.main(["keygen", "--out", str(tmp_path / "key")]) == 0
    code, _, err = duelclock(capsys, "desk", "--key", tmp_path / "key", "--store",
                             tmp_path / "d.sqlite", "--http-port", free_port())
    assert code == 2 and "apt-get install -y mosquitto" in err and "--broker off" in err
    code, _, err = duelclock(capsys, "desk", "--key", tmp_path / "key", "--event", "a/b")
    assert code == 1 and "--event is 1 to 32 letters" in err


def test_hall_prints_a_bridged_broker_config_mosquitto_runs(tmp_path, capsys):
    assert cli.main(["hall", "--desk", "mqtt://desk.local:1883", "--event", "nats",
                     "--name", "hall2"]) == 0
    conf = capsys.readouterr().out
    assert "listener 1883 0.0.0.0\n" in conf and "address desk.local:1883\n" in conf
    assert "topic duelclock/nats/table/+/cmd in 1\n" in conf
    assert "topic duelclock/nats/table/+/state out 1\n" in conf
    assert "topic duelclock/nats/table/+/report out 1\n" in conf and "both" not in conf
    # mosquitto itself takes it (a loopback port here, the desk unreachable: it retries).
    path = tmp_path / "hall.conf"
    port = free_port()
    path.write_text(conf.replace("listener 1883 0.0.0.0", "listener %d 127.0.0.1" % port)
                    .replace("desk.local:1883", "127.0.0.1:%d" % free_port()))
    from duelclock_desk.broker import _sbin
    p = subprocess.Popen([_sbin("mosquitto") or "mosquitto", "-c", str(path)],
                         stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.0)
        assert p.poll() is None, p.stderr.read()
    finally:
        p.kill()
        p.wait()
        p.stderr.close()
    for bad in (["--desk", "desk:1883"], ["--desk", "mqtt://d:1", "--event", "a/b"]):
        argv = ["hall", "--desk", "mqtt://d:1", "--event", "e", "--name", "h"] + bad
        assert cli.main(argv) == 1


def test_the_head_judge_has_the_last_word_from_the_command_line(tmp_path, room, capsys):
    tables, server = room
    liar, dead = tables
    liar.lie = {"result": "B", "wins": {"A": 0, "B": 2}}
    (tmp_path / "pairings.csv").write_text("1,Kim Minsu,Budi Santoso\n2,Lee Jiwoo,Sari Dewi\n")
    desk = DeskProcess(tmp_path, server.url)
    d = ["--desk", desk.url]
    s = ["--store", tmp_path / "desk.sqlite"]
    try:
        wait_for(lambda: len(desk.status()["tables"]) == 2, what="both tables")
        assert duelclock(capsys, "round", "start", "--pairings", tmp_path / "pairings.csv",
                         *d)[2] == "round: round start needs --round N\n"
        assert duelclock(capsys, "round", "start", "--round", 1, "--pairings",
                         tmp_path / "pairings.csv", *d)[0] == 0
        wait_for(lambda: all(t.round for t in tables), what="the round on the tables")
        # A fire alarm: every table of the round 5 more minutes, each its own command.
        code, out, _ = duelclock(capsys, "extend", "--minutes", 5, *d)
        assert (code, out) == (0, "2 tables (1,2): 5:00 more each\n")
        wait_for(lambda: [t.extended_ms for t in tables] == [300000] * 2, what="extensions")
        assert duelclock(capsys, "extend", "--tables", "2", "--minutes", 1, *d)[1] == \
            "1 tables (2): 1:00 more each\n"
        wait_for(lambda: dead.extended_ms == 360000, what="table 2's second extension")
        server.tables.remove(dead)                       # table 2's board dies
        liar.play(short_match(), server.local_ms())
        wait_for(lambda: "mismatch" in duelclock(capsys, "status", *d)[1], what="mismatch")

        code, _, err = duelclock(capsys, "round", "close", *d)
        assert code == 1 and err == (
            "round: desk refused: round 1 is not done: unfinished: tables 2; flagged: 1 "
            "(mismatch); --force closes it anyway\n")
        code, _, err = duelclock(capsys, "export", "--csv", *s)
        assert code == 1 and "table(s) 1 (mismatch), 2 (no result)" in err and "--force" in err
        code, _, err = duelclock(capsys, "result", "--table", 1, "--result", "A", "--reason",
                                 "x", *d)
        assert code == 1 and "--result and --wins go together" in err
        code, out, _ = duelclock(capsys, "result", "--table", 1, "--take", "table", "--reason",
                                 "both players signed B 0-2 on the sheet", *d)
        assert out == ("table 1 round 1: B 0-2, overridden (the table's verdict): both players "
                       "signed B 0-2 on the sheet\n")
        wait_for(lambda: liar.acked == (1, len(liar.record)), what="table 1 acked once settled")
        code, out, _ = duelclock(capsys, "result", "--table", 2, "--result", "B", "--wins",
                                 "1-2", "--reason", "board died; paper sheet", *d)
        assert out == ("table 2 round 1: B 1-2, entered by the head judge (typed in): board "
                       "died; paper sheet\n")
        code, out, _ = duelclock(capsys, "round", "close", *d)
        assert code == 0 and out.startswith("round 1 closed at desk time ") and \
            out.endswith("(nothing open)\n")
        out = duelclock(capsys, "status", *d)[1]
        assert "unfinished: 0" in out and ", closed at " in out.splitlines()[0]
        assert "overridden" in out and "entered" in out
    finally:
        desk.stop()
    code, out, _ = duelclock(capsys, "export", "--csv", *s)
    assert out.splitlines()[1:] == [
        "1,1,Kim Minsu,Budi Santoso,B,0,2,B warning slow_play,overridden: both players "
        "signed B 0-2 on the sheet",
        "2,1,Lee Jiwoo,Sari Dewi,B,1,2,,entered by the head judge: board died; paper sheet"]
    code, out, _ = duelclock(capsys, "sheet", "--table", 2, *s)
    assert code == 0 and out.startswith("table 2, round 1: no record stored\n")
    assert "Result entered by the head judge: B 1-2 (typed in from the paper sheet)" in out
    assert ": board died; paper sheet" in out
    duelclock(capsys, "sheet", "--table", 2, "--html", tmp_path / "t2.html", *s)
    page = (tmp_path / "t2.html").read_text()
    assert "No record stored." in page and 'data-how="entered"' in page
    assert "by " in page and ": board died; paper sheet</p>" in page
    code, out, _ = duelclock(capsys, "sheet", "--table", 1, "--html", tmp_path / "t1.html", *s)
    page = (tmp_path / "t1.html").read_text()
    assert "Result overridden by the head judge: B 0-2 (the table&#x27;s verdict)" in page


def test_round_close_without_a_desk_and_bad_wins(tmp_path, capsys):
    code, _, err = duelclock(capsys, "round", "close", "--desk",
                             "http://127.0.0.1:%d" % free_port())
    assert code == 1 and "is `duelclock desk` running?" in err
    with pytest.raises(SystemExit) as e:
        cli.main(["result", "--table", "1", "--result", "A", "--wins", "x", "--reason", "r"])
    assert e.value.code == 2 and "wins are A-B, as 2-1: 'x'" in capsys.readouterr().err
