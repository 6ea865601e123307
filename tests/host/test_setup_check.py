"""`make setup` ends with host_tools/check_setup.sh: on a machine without the Debian pieces it
names each one and fails. A bare machine is played without purging packages (other work on
this machine needs them): PATH holds only the shell tools the check uses, SBIN, CHROMIUM,
UNIFONT and DIGITS_TTF point at nothing, and fontconfig reads a configuration with no font
directory."""
import os
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(ROOT, "host_tools", "check_setup.sh")


def _run(env):
    return subprocess.run(["/bin/sh", CHECK], env=env, capture_output=True, text=True,
                          timeout=60)


def test_check_passes_where_make_setup_installed_everything():
    # `make test` runs `make setup` first, so on any machine that reaches this test the check
    # has the packages the Makefile installs.
    r = _run(dict(os.environ))
    assert (r.returncode, r.stdout) == (0, "setup check: ok\n"), r.stdout + r.stderr


def test_check_names_every_missing_piece_on_a_bare_machine(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("fc-list",):
        os.symlink(shutil.which(tool), bin_dir / tool)
    conf = tmp_path / "fonts.conf"
    conf.write_text('<?xml version="1.0"?><fontconfig><cachedir>%s</cachedir></fontconfig>'
                    % (tmp_path / "cache"))
    env = dict(os.environ, PATH=str(bin_dir), SBIN=str(tmp_path / "sbin"),
               CHROMIUM=str(tmp_path / "chromium"), UNIFONT=str(tmp_path / "unifont.pcf.gz"),
               DIGITS_TTF=str(tmp_path / "DejaVuSans-Bold.ttf"), FONTCONFIG_FILE=str(conf))
    r = _run(env)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    for package in ("fonts-nanum", "xfonts-unifont", "fonts-dejavu-core", "(mosquitto)",
                    "(chromium)", "(chrony)", "(poppler-utils)"):
        assert sum(package in line for line in lines) == 1, (package, r.stdout)
    assert len(lines) == 7 and "setup check: ok" not in r.stdout


def test_check_names_only_the_hangul_font_when_only_it_is_missing(tmp_path):
    conf = tmp_path / "fonts.conf"
    conf.write_text('<?xml version="1.0"?><fontconfig><cachedir>%s</cachedir></fontconfig>'
                    % (tmp_path / "cache"))
    r = _run(dict(os.environ, FONTCONFIG_FILE=str(conf)))
    assert r.returncode == 1
    assert r.stdout.splitlines() == [
        "setup check: missing a Hangul font for the dashboard's browser "
        "(fc-list :lang=ko is empty; fonts-nanum)"]


def test_suites_that_need_a_missing_piece_fail_and_say_run_make_setup(tmp_path):
    # Plain pytest on a machine without mosquitto or Chromium (PATH and SBIN without the
    # broker, CHROMIUM pointing at nothing): the MQTT, network, security and dashboard
    # suites fail with what is missing, none is skipped.
    import sys
    env = dict(os.environ, PATH=os.path.dirname(sys.executable), SBIN=str(tmp_path / "sbin"),
               CHROMIUM=str(tmp_path / "chromium"))
    suites = ["tests/host/test_desk_mqtt.py", "tests/faults/test_network.py",
              "tests/faults/test_security.py", "tests/host/test_dashboard.py"]
    # one test of each: the mark is the suite's, so its first test is enough
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "--co"] + suites, env=env, capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    firsts = {}
    for node in r.stdout.split():
        if "::" in node:
            firsts.setdefault(node.split("::")[0], node)
    assert sorted(firsts) == sorted(suites), r.stdout + r.stderr
    # -rN: no short summary, so each error's text is printed once, in its ERRORS entry (the
    # summary's copy is cut to the terminal's width, except under CI=true, where it is whole)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rN"]
                       + sorted(firsts.values()), env=env, capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert r.returncode != 0
    assert "4 errors" in r.stdout and "skipped" not in r.stdout, r.stdout[-3000:]
    assert r.stdout.count("missing the MQTT broker mosquitto (Debian's mosquitto): run make "
                          "setup") == 3, r.stdout[-3000:]
    assert r.stdout.count("missing the browser for the dashboard tests (Debian's chromium): "
                          "run make setup") == 1, r.stdout[-3000:]
