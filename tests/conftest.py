import importlib.util
import os
import shutil
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("DUELCLOCK_SHARED") or os.path.join(os.path.dirname(ROOT), "shared")
# The core tests import their helpers as top-level modules, as they do under MicroPython.
sys.path.insert(0, os.path.join(ROOT, "tests", "core"))
sys.path.insert(0, os.path.join(ROOT, "firmware"))

# Where Debian puts the daemons; SBIN, like CHROMIUM (tests/host/browser.py), can point
# elsewhere to play a machine without them, as for host_tools/check_setup.sh.
SBIN = os.environ.get("SBIN", "/usr/sbin")


def _chromium():
    from tests.host.browser import CHROMIUM
    return CHROMIUM


def _unifont():
    from duelclock_desk.mkfont import PCF
    return PCF


def _program(name):
    return shutil.which(name) is not None or os.access(os.path.join(SBIN, name), os.X_OK)


# What `make setup` installs that a suite needs, how to find it (where the code that uses it
# looks), and what brings it. A test marked @pytest.mark.needs(NAME) fails, never skips,
# when it is missing: a suite that quietly does not run reads as a suite that passed.
NEEDS = {
    "mosquitto": (lambda: _program("mosquitto"), "the MQTT broker mosquitto (Debian's mosquitto)"),
    "chromium": (lambda: os.access(_chromium(), os.X_OK),
                 "the browser for the dashboard tests (Debian's chromium)"),
    "playwright": (lambda: importlib.util.find_spec("playwright") is not None,
                   "Playwright in the venv (pyproject.toml's dev extra)"),
    "unifont": (lambda: os.path.exists(_unifont()),
                "the unifont bitmaps the board's Hangul font is built from (Debian's xfonts-unifont)"),
}


def missing(names):
    """The descriptions of NEEDS entries `names` that this machine lacks."""
    return [NEEDS[n][1] for n in names if not NEEDS[n][0]()]


def pytest_configure(config):
    config.addinivalue_line("markers", "needs(*names): fails with 'run make setup' when a "
                            "named part of the set-up (tests/conftest.py NEEDS) is missing")


def pytest_runtest_setup(item):
    names = [n for mark in item.iter_markers("needs") for n in mark.args]
    unknown = [n for n in names if n not in NEEDS]
    if unknown:
        pytest.fail("unknown needs(%s): tests/conftest.py NEEDS lists %s"
                    % (", ".join(unknown), ", ".join(sorted(NEEDS))), pytrace=False)
    lacking = missing(names)
    if lacking:
        pytest.fail("missing %s: run make setup" % "; ".join(lacking), pytrace=False)
