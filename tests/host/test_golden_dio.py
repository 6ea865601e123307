"""Golden screens of the displayio renderer (render_dio) on CPython through Blinka: every
state of tests/upy/screens.py on a 240x135 display, captured through the real refresh path
(simulator/dio_capture.py) and compared pixel for pixel with
tests/golden/dio_240x135_<state>.png. DUELCLOCK_UPDATE_GOLDEN=1 rewrites the goldens."""
import os
import subprocess
import sys

import pytest

from tests.host.golden import GOLDEN, ROOT, UPDATE, compare, ensure_font

sys.path.insert(0, os.path.join(ROOT, "tests", "upy"))
import screens  # noqa: E402  (tests/upy/screens.py, shared with the framebuf goldens)

W, H = 240, 135


@pytest.fixture(scope="module")
def dio():
    ensure_font()
    from adafruit_bitmap_font import bitmap_font
    from duelclock import render_dio
    from simulator import dio_capture
    font = bitmap_font.load_font(render_dio.font_path())
    return render_dio, dio_capture, font


def _name(state):
    return "dio_%dx%d_%s.png" % (W, H, state)


@pytest.mark.parametrize("state,make", screens.STATES, ids=[n for n, _ in screens.STATES])
def test_dio_screen_matches_golden(dio, state, make):
    render_dio, cap, font = dio
    display = cap.capture_display(W, H)
    r = render_dio.DioRenderer(W, H, font)
    display.root_group = r.draw(make())
    compare(cap.screenshot(display), _name(state))


@pytest.mark.skipif(UPDATE, reason="compares with the goldens")
def test_one_display_redrawn_state_after_state_matches_every_golden(dio):
    # The renderer reuses its labels and rectangles and displayio refreshes only what
    # changed: nothing of an earlier screen may survive into the next.
    render_dio, cap, font = dio
    display = cap.capture_display(W, H)
    r = render_dio.DioRenderer(W, H, font)
    display.root_group = r.group
    for state, make in screens.STATES + screens.STATES[:3]:
        r.draw(make())
        compare(cap.screenshot(display), _name(state))


def test_a_screen_drawn_field_by_field_is_the_screen_drawn_whole(dio):
    # On every golden: the values a tick or a key changes, changed (screens.ticked), set
    # in their fields' labels alone, show what a whole draw of the new screen shows.
    render_dio, cap, font = dio
    display = cap.capture_display(W, H)
    r = render_dio.DioRenderer(W, H, font)
    fast = []
    for state, make in screens.STATES:
        s = make()
        t = screens.ticked(s)
        display.root_group = r.draw(s)
        cap.screenshot(display)
        fields = r.layout.fields
        r.plan(t)
        if r.layout.fields is fields:
            fast.append(state)
        by_field = cap.screenshot(display).tobytes()
        display.root_group = render_dio.DioRenderer(W, H, font).draw(t)
        assert by_field == cap.screenshot(display).tobytes(), state
    for state in ("home", "turn_long", "last5", "time_turn", "lp_entry", "menu", "record"):
        assert state in fast, state


def test_a_held_keys_hint_comes_and_goes_in_its_field_alone(dio):
    # Keys.waiting shown at the press: the status line (home) or the entry's title set
    # alone, what a whole draw shows, and gone again the same way.
    render_dio, cap, font = dio
    display = cap.capture_display(W, H)
    states = dict(screens.STATES)
    for held, base in screens.HELD:
        for a, b in ((base, held), (held, base)):
            r = render_dio.DioRenderer(W, H, font)
            display.root_group = r.draw(states[a]())
            cap.screenshot(display)
            fields = r.layout.fields
            r.plan(states[b]())
            assert r.layout.fields is fields, "%s -> %s laid out whole" % (a, b)
            by_field = cap.screenshot(display).tobytes()
            display.root_group = render_dio.DioRenderer(W, H, font).draw(states[b]())
            assert by_field == cap.screenshot(display).tobytes(), "%s -> %s" % (a, b)


def test_missing_glyph_is_a_box_and_long_text_is_cut(dio):
    render_dio, cap, font = dio
    r = render_dio.DioRenderer(W, H, font)
    assert r.width("\u263a", 1) == r.width(render_dio.BOX, 1) > 0
    assert r.text("ABCDEFGH", 0, 0, 2, 0xffffff, 40) == 32           # two 16-px cells fit
    assert r._labels[0].text == "AB"                                # the label it took


def test_render_dio_imports_without_displayio():
    code = ("import sys\n"
            "for m in ('displayio', 'vectorio', 'adafruit_display_text', 'adafruit_bitmap_font'):\n"
            "    sys.modules[m] = None\n"
            "import duelclock.render_dio, duelclock.layout\n"
            "print(duelclock.render_dio._Big.clock)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "firmware")))
    assert r.returncode == 0 and r.stdout.strip() == "3", r.stderr


def test_every_state_has_goldens():
    names = set(os.listdir(GOLDEN))
    for state, _ in screens.STATES:
        for prefix in ("dio_240x135", "fb_240x135", "fb_128x64"):
            assert "%s_%s.png" % (prefix, state) in names


@pytest.mark.skipif(UPDATE, reason="compares with the goldens")
def test_a_clock_tick_refreshes_the_clock_not_the_screen(dio):
    render_dio, cap, font = dio
    display = cap.capture_display(W, H)
    r = render_dio.DioRenderer(W, H, font)
    display.root_group = r.group
    ui = screens._in_duel()
    t = 9 * screens.MIN + 12 * screens.SEC                  # 35:48 left: one digit changes
    bus = display.bus
    for _ in range(2):                  # Blinka's first refresh after the first leaves some
        r.draw(screens.build(ui, t, screens.SYNC_S))        # areas dirty: then steady
        cap.screenshot(display)
    bus.written = 0
    r.draw(screens.build(ui, t, screens.SYNC_S))
    cap.screenshot(display)
    assert bus.written == 0                                 # nothing changed: nothing sent
    r.draw(screens.build(ui, t + screens.SEC, screens.SYNC_S))
    shot = cap.screenshot(display)
    assert 0 < bus.written < W * H * 2 // 4, bus.written     # the clock's label (14 KB)
    full = cap.capture_display(W, H)
    fresh = render_dio.DioRenderer(W, H, font)
    full.root_group = fresh.draw(screens.build(ui, t + screens.SEC, screens.SYNC_S))
    assert list(cap.screenshot(full).getdata()) == list(shot.getdata())


def test_pools_grow_when_a_screen_needs_more(dio, monkeypatch):
    render_dio, cap, font = dio
    monkeypatch.setattr(render_dio, "LABELS", 1)
    monkeypatch.setattr(render_dio, "RECTS", 1)
    display = cap.capture_display(W, H)
    r = render_dio.DioRenderer(W, H, font)
    display.root_group = r.draw(screens.message())
    compare(cap.screenshot(display), _name("message"))
