"""`duelclock pull`: a match the desk never collected, copied off a table's flash over the
real mpremote transport (simulator/bridge.py: the MicroPython unix port with boards/SIM
behind a socket, its littlefs flash image holding the journal)."""
import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios

import pytest

from simulator.bridge import Bridge
from tests.host.upy import ROOT, UPY, upy_path

MATCH = os.path.join(ROOT, "simulator", "matches", "timeout_extra_duel.jsonl")

# Run on the table's flash: match 1 the full record of MATCH, never collected; match 2 a
# short one the desk collected; the last record of match 1 is torn (a cut mid-append).
MAKE_JOURNAL = """
import json, board
from duelclock.journal import Journal
j = Journal(board.FS_PREFIX + 'journal')
lines = [json.loads(l) for l in open(%r) if l.strip()]
j.start_match(lines[0])
for ev in lines[1:]:
    j.append(ev)
f = open(board.FS_PREFIX + 'journal/m1.jsonl', 'ab')
f.write(b'{"t": 1, "ev": "tu')
f.close()
j.start_match({"t": 0, "ev": "round_start", "round": 9, "kind": "swiss"})
j.append({"t": 1000, "ev": "duel_start", "first": "A"})
j.mark_collected(2)
f = open(board.FS_PREFIX + 'duelclock.json', 'w')
f.write(json.dumps({"table": 17}))
f.close()
"""


@pytest.fixture
def table_flash(tmp_path):
    image = str(tmp_path / "flash.img")
    r = subprocess.run([UPY, "-c", MAKE_JOURNAL % MATCH], capture_output=True, text=True,
                       cwd=ROOT, timeout=60,
                       env=dict(os.environ, DUELCLOCK_SIM_FLASH=image,
                                MICROPYPATH=upy_path("boards/SIM")))
    assert r.returncode == 0, r.stdout + r.stderr
    return image


def pull(port, out, *more):
    return subprocess.run([sys.executable, "-m", "duelclock_desk.cli", "pull", "--port", port,
                           "--board", "SIM", "--out", out] + list(more),
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_pull_copies_the_uncollected_match_and_replays_it(table_flash, tmp_path):
    out = str(tmp_path / "pulled")
    b = Bridge(table_flash, tcp_port=0).start()
    try:
        r = pull(b.url, out)
        assert r.returncode == 0, r.stdout + r.stderr
        assert sorted(os.listdir(out)) == ["t17_r3_m1.jsonl"]
        with open(MATCH) as f:
            want = [json.loads(l) for l in f if l.strip()]
        with open(os.path.join(out, "t17_r3_m1.jsonl")) as f:
            got = [json.loads(l) for l in f]
        assert got == want                              # every event; the torn one left out
        assert "1 left out (line %d torn)" % (len(want) + 1) in r.stdout
        verdict = subprocess.run([sys.executable, "-m", "duelclock_desk.cli", "replay", MATCH],
                                 capture_output=True, text=True, cwd=ROOT).stdout.strip()
        assert "verdict " + verdict in r.stdout         # what `duelclock replay` prints

        r = pull(b.url, out, "--all")                   # the collected one too, when asked
        assert r.returncode == 0, r.stdout + r.stderr
        assert sorted(os.listdir(out)) == ["t17_r3_m1.jsonl", "t17_r9_m2.jsonl"]
        assert "(collected already)" in r.stdout
    finally:
        b.close()


def test_pull_from_a_board_without_a_journal_says_so(tmp_path):
    b = Bridge(str(tmp_path / "empty.img"), tcp_port=0).start()
    try:
        r = pull(b.url, str(tmp_path / "pulled"))
    finally:
        b.close()
    assert r.returncode != 0 and "no journal on the board" in r.stderr


def test_pull_import_hands_the_match_to_the_desk_and_marks_it_collected(table_flash, tmp_path):
    from duelclock_desk.broker import free_port
    from tests.host.test_desk_cli import DeskProcess
    key = subprocess.run([sys.executable, "-m", "duelclock_desk.cli", "keygen", "--out",
                          str(tmp_path / "key")], capture_output=True, text=True, cwd=ROOT)
    assert key.returncode == 0, key.stderr
    desk = DeskProcess(tmp_path, "socket://127.0.0.1:%d" % free_port())   # no table linked
    b = Bridge(table_flash, tcp_port=0).start()
    try:
        start = subprocess.run([sys.executable, "-m", "duelclock_desk.cli", "round", "start",
                                "--round", "3", "--tables", "17", "--desk", desk.url],
                               capture_output=True, text=True, cwd=ROOT)
        assert start.returncode == 0, start.stdout + start.stderr
        r = pull(b.url, str(tmp_path / "pulled"), "--import", "--desk", desk.url)
        assert r.returncode == 0, r.stdout + r.stderr
        with open(MATCH) as f:
            n = len([l for l in f if l.strip()])
        assert "imported: the desk holds %d events, result B, verified ok" % n in r.stdout
        assert "marked collected on the table" in r.stdout
        again = pull(b.url, str(tmp_path / "again"))     # nothing left the desk lacks
        assert "0 to pull" in again.stdout, again.stdout
        collect = subprocess.run([sys.executable, "-m", "duelclock_desk.cli", "collect",
                                  "--round", "3", "--desk", desk.url],
                                 capture_output=True, text=True, cwd=ROOT)
        assert "ok          1: 17" in collect.stdout, collect.stdout + collect.stderr
    finally:
        b.close()
        desk.stop()


def on_a_terminal(argv, timeout_s=120):
    """Run argv with its standard error on a pseudo-terminal, as a person's shell gives it:
    (returncode, stdout text, what the terminal showed)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))   # 100 columns
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=slave, cwd=ROOT)
    os.close(slave)
    shown = b""
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:                 # EIO: the child closed its end
            break
        if not data:
            break
        shown += data
    out = p.stdout.read().decode()
    os.close(master)
    return p.wait(timeout_s), out, shown.decode("utf-8", "replace")


def test_pull_shows_each_file_as_it_reads_it(table_flash, tmp_path):
    b = Bridge(table_flash, tcp_port=0).start()
    try:
        rc, out, shown = on_a_terminal([sys.executable, "-m", "duelclock_desk.cli", "pull",
                                        "--port", b.url, "--board", "SIM",
                                        "--out", str(tmp_path / "pulled")])
    finally:
        b.close()
    assert rc == 0, out + shown
    # on the terminal: a bar naming each file (its count of the journal's files), in bytes
    files = re.findall(r"(\d+)/(\d+) (m\d+\.(?:jsonl|got))", shown)
    assert {f[2] for f in files} == {"m1.jsonl", "m2.jsonl", "m2.got"}, shown
    assert {f[1] for f in files} == {"3"} and "B/s" in shown
    # on standard output, a line per file as it arrives, before the matches are shown
    lines = out.splitlines()
    assert [l.split()[1] for l in lines if l.startswith("  read ")] == [f[2] for f in
                                                                     _first_each(files)]
    assert lines.index(next(l for l in lines if l.startswith("  read "))) < lines.index(
        next(l for l in lines if l.startswith("table 17")))


def _first_each(files):
    seen, out = set(), []
    for f in files:
        if f[2] not in seen:
            seen.add(f[2])
            out.append(f)
    return out
