"""Golden screens of the framebuf renderer: every state of tests/upy/screens.py drawn by
the real MicroPython unix port on 240x135 RGB565 and 128x64 mono, compared pixel for pixel
with tests/golden/fb_<size>_<state>.png. DUELCLOCK_UPDATE_GOLDEN=1 rewrites the goldens
(then look at them before committing)."""
import os

import pytest

from tests.host.golden import GOLDEN, compare, ensure_font
from tests.host.upy import run_upy
from simulator.screens import fb_to_image

SIZES = ((240, 135, False), (128, 64, True))


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    ensure_font()
    out = tmp_path_factory.mktemp("fb")
    r = run_upy(["tests/upy/test_render_fb.py", str(out)], extra_path=["tests/upy", "tests/core"])
    assert r.returncode == 0, r.stdout + r.stderr
    print(r.stdout)
    return out, r.stdout


def _states():
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(GOLDEN), "upy"))
    import screens
    return [name for name, _ in screens.STATES]


@pytest.mark.parametrize("w,h,mono", SIZES, ids=["240x135", "128x64"])
@pytest.mark.parametrize("state", _states())
def test_fb_screen_matches_golden(drawn, state, w, h, mono):
    out, _ = drawn
    with open(os.path.join(out, "fb_%dx%d_%s.raw" % (w, h, state)), "rb") as f:
        img = fb_to_image(f.read(), w, h, mono)
    compare(img, "fb_%dx%d_%s.png" % (w, h, state))


def test_draw_time_is_reported(drawn):
    _, stdout = drawn
    for size in ("240x135", "128x64"):
        line = [l for l in stdout.splitlines() if l.startswith("draw_ms %s" % size)]
        # a figure, not a bound: the time budget is the bench's (lp_entry_to_frame_ms)
        assert line and float(line[0].split()[3]) > 0, stdout


def test_render_fb_tests_under_micropython():
    # tests/upy/test_render_fb.py's own tests: the writer, flash, the menu cursor, and
    # partial drawing composing what a full draw paints, from every state to every other.
    r = run_upy(["tests/upy_run.py", "tests/upy", "test_render_fb"], extra_path=["tests/upy"])
    assert r.returncode == 0 and " 0 failed" in r.stdout, r.stdout + r.stderr
