"""`duelclock deploy` and the simulator's serial bridge, driven by the real mpremote.

Each test gets a bridge (simulator/bridge.py) over a fresh littlefs flash image: the
MicroPython unix port's REPL with boards/SIM, offered as socket://127.0.0.1:PORT and as a
pty. mpremote and `duelclock deploy` run as subprocesses, as an operator runs them."""
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from simulator.bridge import Bridge
from duelclock.core.sign import pin_matches
from duelclock_desk import deploy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEY = "5e" * 32


@pytest.fixture
def bridge(tmp_path):
    b = Bridge(str(tmp_path / "flash.img"), tcp_port=0, pty=True).start()
    try:
        yield b
    finally:
        b.close()
    assert b.child.proc.poll() is not None


@pytest.fixture
def keyfile(tmp_path):
    path = tmp_path / "event.key"
    path.write_text(KEY + "\n")
    return str(path)


def mpremote(port, *args, timeout=30):
    return subprocess.run([sys.executable, "-m", "mpremote", "connect", port] + list(args),
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def duelclock(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "duelclock_desk.cli"] + list(args),
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def device_json(port, path):
    r = mpremote(port, "fs", "cat", ":" + path)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def device_sha256(port, paths):
    """{path: hex} from `mpremote fs sha256sum`, which hashes on the board."""
    r = mpremote(port, "fs", "sha256sum", *[":" + p for p in paths])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split()
    out = {}
    for i, word in enumerate(lines):
        if word == "sha256sum":
            out[lines[i + 1][1:]] = lines[i + 2]
    return out


def test_real_mpremote_through_the_bridge(bridge):
    for port in (bridge.url, bridge.pty_path):
        r = mpremote(port, "exec", "print(1+1)")
        assert (r.returncode, r.stdout.strip()) == (0, "2"), r.stderr
    # mpremote soft-resets when it enters the raw REPL: the process was restarted
    assert bridge.restarts >= 2
    r = mpremote(bridge.url, "exec", "import os; print(os.getcwd())")
    assert r.stdout.strip() == "/flash"


def test_files_and_ctrl_c_through_the_bridge(bridge, tmp_path):
    data = os.urandom(20000)                    # binary, several raw-paste windows
    (tmp_path / "blob").write_bytes(data)
    r = mpremote(bridge.pty_path, "fs", "cp", str(tmp_path / "blob"), ":blob", "+",
                 "fs", "ls", ":/flash")
    assert r.returncode == 0 and "20000 blob" in r.stdout, r.stderr
    assert device_sha256(bridge.url, ["/flash/blob"]) == {
        "/flash/blob": hashlib.sha256(data).hexdigest()}
    # code left running is interrupted by the next session's Ctrl-C, as on a board
    assert mpremote(bridge.url, "exec", "--no-follow", "while 1: pass").returncode == 0
    r = mpremote(bridge.pty_path, "resume", "exec", "print(3)")
    assert (r.returncode, r.stdout.strip()) == (0, "3"), r.stderr


def test_deploy_writes_checks_and_updates(bridge, keyfile):
    fw = deploy.firmware_files(None, None, "SIM")        # what the SIM board imports
    t0 = time.monotonic()
    r = duelclock("deploy", "--port", bridge.url, "--board", "SIM", "--table", "5",
                  "--key", keyfile, "--pins", "2468:1357", "--lang", "ko")
    first_s = time.monotonic() - t0
    assert r.returncode == 0, r.stdout + r.stderr
    # the firmware, main.py, board.py and duelclock.json
    assert "check ok" in r.stdout and "%d copied" % (len(fw) + 3) in r.stdout
    assert KEY not in r.stdout + r.stderr
    cfg = device_json(bridge.pty_path, "/flash/duelclock.json")
    # The table's own key, never the event key; the PINs hashed, never in clear.
    pins = cfg.pop("pins")
    assert cfg == {"table": 5, "key": deploy.table_secret(KEY, 5), "lang": "ko", "link": "serial"}
    assert cfg["key"] != KEY
    assert pin_matches("2468", pins["floor"]) and pin_matches("1357", pins["head"])
    assert not pin_matches("1357", pins["floor"]) and "2468" not in pins["floor"].split("$")
    want = {"/flash/lib/" + p: hashlib.sha256(d).hexdigest() for p, d in fw.items()}
    want["/flash/main.py"] = hashlib.sha256(deploy.MAIN_PY).hexdigest()
    with open(os.path.join(ROOT, "boards", "SIM", "board.py"), "rb") as f:
        want["/flash/board.py"] = hashlib.sha256(f.read()).hexdigest()
    assert device_sha256(bridge.pty_path, sorted(want)) == want

    # update: compiled firmware; the key and PINs stay as the board has them
    t0 = time.monotonic()
    r = duelclock("deploy", "--port", bridge.pty_path, "--board", "SIM", "--table", "5", "--mpy")
    update_s = time.monotonic() - t0
    assert r.returncode == 0, r.stdout + r.stderr
    assert "key kept from the board" in r.stdout and "%d removed" % len(fw) in r.stdout
    cfg = device_json(bridge.url, "/flash/duelclock.json")
    assert (cfg["table"], cfg["key"], cfg["pins"]) == (5, deploy.table_secret(KEY, 5), pins)
    # another table number: table 5's key is no key for it
    r = duelclock("deploy", "--port", bridge.pty_path, "--board", "SIM", "--table", "7", "--mpy")
    assert r.returncode == 1 and "no key for table 7" in r.stderr, r.stdout + r.stderr
    r = mpremote(bridge.url, "fs", "ls", ":/flash/lib/duelclock/core")
    assert "match.mpy" in r.stdout and ".py\n" not in r.stdout
    # the deployed, compiled firmware is what the board imports
    r = mpremote(bridge.url, "exec", "from duelclock.core import match; print(match.__file__)")
    assert r.stdout.strip() == "/flash/lib/duelclock/core/match.mpy", r.stderr
    print("deploy to SIM: first %.1f s (socket), update with --mpy %.1f s (pty)"
          % (first_s, update_s))


def test_deploy_check_fails_on_a_broken_file(bridge, keyfile):
    assert duelclock("deploy", "--port", bridge.pty_path, "--board", "SIM", "--table", "2",
                     "--key", keyfile).returncode == 0
    r = mpremote(bridge.url, "exec",
                 "with open('/flash/lib/duelclock/core/match.py', 'w') as f:\n f.write('1/0')")
    assert r.returncode == 0, r.stderr
    board = deploy.Board(bridge.url, "SIM")
    try:
        want = {"/flash/lib/" + p: d for p, d in deploy.firmware_files(None, None, "SIM").items()}
        problems = deploy.check(board, want, deploy.Layout("SIM"), 2, ["umqtt.simple"])
    finally:
        board.close()
    assert "/flash/lib/duelclock/core/match.py differs (sha256)" in problems
    assert any("ZeroDivisionError" in p for p in problems), problems
    assert "the board lacks umqtt.simple" in problems[-1]


def test_deploy_mqtt_config_and_requirements(bridge, keyfile, tmp_path):
    args = ["deploy", "--port", bridge.pty_path, "--board", "SIM", "--table", "9", "--key", keyfile,
            "--broker", "mqtt://10.0.0.2:1883", "--wifi", "venue:s3cret-pass", "--event", "ycs"]
    r = duelclock(*args)
    # SIM's Python has no umqtt: the check says so
    assert r.returncode == 1 and "the board lacks umqtt.simple" in r.stdout, r.stdout
    assert "s3cret-pass" not in r.stdout + r.stderr and KEY not in r.stdout + r.stderr
    cfg = device_json(bridge.url, "/flash/duelclock.json")
    assert cfg["link"] == "mqtt" and cfg["mqtt"] == {"host": "10.0.0.2", "port": 1883}
    assert cfg["wifi"] == {"ssid": "venue", "pass": "s3cret-pass"} and cfg["event"] == "ycs"
    # once umqtt is on the board (a stand-in here), the same deploy passes
    (tmp_path / "simple.py").write_text("class MQTTClient:\n    pass\n")
    r = mpremote(bridge.url, "fs", "mkdir", ":/flash/lib/umqtt", "+",
                 "fs", "cp", str(tmp_path / "simple.py"), ":/flash/lib/umqtt/simple.py")
    assert r.returncode == 0, r.stderr
    r = duelclock(*args)
    assert r.returncode == 0 and "0 copied" in r.stdout, r.stdout


def test_deploy_errors_are_clear(bridge, keyfile, tmp_path):
    t0 = time.monotonic()
    r = duelclock("deploy", "--port", "socket://127.0.0.1:1", "--board", "SIM", "--table", "5",
                  "--key", keyfile)
    assert r.returncode != 0 and "cannot open socket://127.0.0.1:1" in r.stderr
    assert time.monotonic() - t0 < 10
    # a board never deployed to has no key to keep
    r = duelclock("deploy", "--port", bridge.url, "--board", "SIM", "--table", "5")
    assert r.returncode == 1 and "no key for table 5" in r.stderr
    (tmp_path / "short.key").write_text("abcd\n")
    for extra, msg in ((["--key", str(tmp_path / "short.key")], "too short"),
                       (["--key", keyfile, "--pins", "12:12"], "must differ"),
                       (["--key", keyfile, "--link", "mqtt"], "needs --broker"),
                       (["--key", keyfile, "--broker", "tcp://x:1", "--wifi", "a:b"], "mqtt://"),
                       (["--key", keyfile, "--board", "NOPE"], "unknown board")):
        r = duelclock("deploy", "--port", bridge.url, "--board", "SIM", "--table", "5", *extra)
        assert r.returncode == 1 and msg in r.stderr, (extra, r.stderr)


def test_mip_installs_package_json_from_a_local_index(bridge, tmp_path):
    """firmware/package.json through `mpremote mip install`: its files, and its dependency
    from an index (a local folder standing in for micropython-lib, umqtt a stand-in)."""
    pkg = tmp_path / "index" / "package" / "py" / "umqtt.simple"
    pkg.mkdir(parents=True)
    (pkg / "latest.json").write_text(json.dumps({"urls": [["umqtt/simple.py", "simple.py"]],
                                                 "version": "0"}))
    (pkg / "simple.py").write_text("class MQTTClient:\n    pass\n")
    r = mpremote(bridge.pty_path, "mip", "install", "--no-mpy", "--target", "/flash/lib",
                 "--index", str(tmp_path / "index"), "firmware/package.json")
    assert r.returncode == 0 and "Installing: /flash/lib/umqtt/simple.py" in r.stdout, r.stdout
    # the app and everything it imports, from the installed files alone
    r = mpremote(bridge.pty_path, "exec", "import sys\nsys.path[:] = ['/flash/lib', '.frozen']\n"
                 "import duelclock.app, duelclock.link, umqtt.simple\n"
                 "print(duelclock.app.__file__, duelclock.link.__file__)")
    assert r.stdout.split() == ["/flash/lib/duelclock/app.py",
                                "/flash/lib/duelclock/link.py"], r.stderr


def test_bridge_command_prints_its_ports_and_cleans_up(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "simulator.bridge", "--flash",
                             str(tmp_path / "f.img"), "--tcp", "0", "--pty"],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT, start_new_session=True)
    try:
        url, pty = proc.stdout.readline().strip(), proc.stdout.readline().strip()
        assert url.startswith("socket://127.0.0.1:") and pty.startswith("/dev/pts/")
        r = mpremote(url, "exec", "print(1+1)")
        assert r.stdout.strip() == "2", r.stderr
        children = []
        for task in os.listdir("/proc/%d/task" % proc.pid):
            with open("/proc/%d/task/%s/children" % (proc.pid, task)) as f:
                children += [int(p) for p in f.read().split()]
        assert len(children) == 1           # the REPL, restarted by mpremote's soft reset
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        assert not os.path.exists("/proc/%d" % children[0])
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_an_update_hashes_pins_an_older_deploy_left_in_clear_and_keeps_the_key_per_table():
    old = {"table": 5, "key": deploy.table_secret(KEY, 5), "pins": {"floor": "2468", "head": "1357"}}
    cfg = deploy.merge_config({"table": 5, "lang": "en", "link": "serial"}, old)
    assert cfg["key"] == old["key"]
    assert pin_matches("2468", cfg["pins"]["floor"]) and pin_matches("1357", cfg["pins"]["head"])
    assert cfg["pins"]["floor"] != "2468"
    with pytest.raises(deploy.CliError, match="no key for table 6"):
        deploy.merge_config({"table": 6, "lang": "en", "link": "serial"}, old)


def test_broker_urls_with_tls_and_a_password(tmp_path):
    import base64
    import ssl
    from duelclock_desk import certs
    pem = certs.make_ca(str(tmp_path))[0]
    with open(pem) as f:
        der = ssl.PEM_cert_to_DER_cert(f.read())
    (tmp_path / "ca.der").write_bytes(der)
    want = {"host": "10.0.0.2", "port": 8883, "user": "table", "password": "p:w@d",
            "tls": True, "ca": base64.b64encode(der).decode()}
    for ca in (pem, str(tmp_path / "ca.der")):                  # PEM or DER
        assert deploy.parse_broker("mqtts://table:p:w@d@10.0.0.2:8883", ca) == want
    assert deploy.parse_broker("mqtt://u:x@h:1883") == {"host": "h", "port": 1883,
                                                        "user": "u", "password": "x"}
    line = deploy.describe({"table": 3, "link": "mqtt", "lang": "en", "mqtt": want}, "kept")
    assert "mqtts://10.0.0.2:8883 as table" in line and "p:w@d" not in line
    (tmp_path / "junk").write_text("not a certificate\n")
    for url, ca, msg in (("mqtts://h:8883", None, "needs --ca"),
                         ("mqtt://h:1883", str(tmp_path / "ca.der"), "--ca is for an mqtts://"),
                         ("mqtts://h:8883", str(tmp_path / "junk"), "not a certificate"),
                         ("mqtts://h:8883", str(tmp_path / "none"), "No such file"),
                         ("mqtt://nopass@h:1883", None, "USER:PASS@"),
                         ("mqtt://h", None, "HOST:PORT")):
        with pytest.raises(deploy.CliError, match=msg):
            deploy.parse_broker(url, ca)


def test_deploy_shows_each_file_as_it_copies_it(bridge, keyfile):
    from tests.host.test_pull import on_a_terminal
    rc, out, shown = on_a_terminal([sys.executable, "-m", "duelclock_desk.cli", "deploy",
                                    "--port", bridge.url, "--board", "SIM", "--table", "5",
                                    "--key", keyfile, "--pins", "2468:1357"])
    assert rc == 0, out + shown
    copied = [l.split()[1] for l in out.splitlines() if l.startswith("  copied  ")]
    n = len(copied)
    assert n == len(deploy.firmware_files(None, None, "SIM")) + 3
    # the terminal's bar names each file with its count, in the order copied, with a rate
    named = re.findall(r"(\d+)/%d (\S+?):" % n, shown)
    firsts = []
    for i, name in named:
        if not firsts or firsts[-1] != (int(i), name):
            firsts.append((int(i), name))
    assert [i for i, _ in firsts] == list(range(1, n + 1)), shown[-2000:]
    assert [name for _, name in firsts] == [os.path.basename(p) for p in copied]
    assert "B/s" in shown and KEY not in out + shown
