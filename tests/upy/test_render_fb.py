# The framebuf renderer (firmware/duelclock/render_fb.py) and its text writer, under the
# MicroPython unix port (framebuf is not on CPython: there pytest collects no tests here).
#   MICROPYPATH=firmware:tests/upy:.frozen .venv/bin/micropython tests/upy_run.py tests/upy test_render_fb
# As a script it draws every state of screens.py on both display sizes, writes the raw
# framebuffers for tests/host/test_golden_fb.py and prints the median draw time:
#   MICROPYPATH=firmware:tests/upy:.frozen .venv/bin/micropython tests/upy/test_render_fb.py OUT_DIR
try:
    import framebuf
except ImportError:
    framebuf = None

# (width, height, mono): the Pico Display Pack / Feather TFT, and an SSD1306
SIZES = ((240, 135, False), (128, 64, True))


def framebuffer(w, h, mono):
    """A buffer and its FrameBuffer for one display size, as the boards make them."""
    if mono:
        buf = bytearray(w * ((h + 7) // 8))
        return buf, framebuf.FrameBuffer(buf, w, h, framebuf.MONO_VLSB)
    buf = bytearray(w * h * 2)
    return buf, framebuf.FrameBuffer(buf, w, h, framebuf.RGB565)


def screen(w, h, mono):
    """A buffer, its FrameBuffer and a renderer for one display size."""
    from duelclock.render_fb import FbRenderer
    buf, fb = framebuffer(w, h, mono)
    return buf, fb, FbRenderer(fb, w, h, mono)


def _mono8():
    buf = bytearray(32 * 16 // 8)
    return buf, framebuf.FrameBuffer(buf, 32, 16, framebuf.MONO_HLSB)


if framebuf is not None:
    from duelclock.writer import Writer
    from duelclock import font_ko
    import screens

    def test_every_state_draws_on_both_sizes():
        for w, h, mono in SIZES:
            buf, fb, r = screen(w, h, mono)
            bg = 0
            for name, make in screens.STATES:
                s = make()
                r.draw(s)
                if s.flash:
                    continue
                ink = 0
                for i in range(0, len(buf), 2 if not mono else 1):
                    if buf[i] != bg:
                        ink += 1
                assert ink > len(buf) // 200, "%s %dx%d is nearly blank" % (name, w, h)

    def test_flash_inverts_every_pixel():
        for w, h, mono in SIZES:
            buf, fb, r = screen(w, h, mono)
            s = screens.sudden_death()
            r.draw(s)
            plain = bytes(buf)
            s.flash = True
            r.draw(s)
            for i in range(len(buf)):
                assert buf[i] == plain[i] ^ 0xff

    def test_scaled_ascii_is_the_8x8_font_in_pixel_blocks():
        small, fs = _mono8()
        big = bytearray(48 * 24 // 8)
        fbig = framebuf.FrameBuffer(big, 48, 24, framebuf.MONO_HLSB)
        Writer(fs).text("8:", 0, 0, 1, 1)
        Writer(fbig).text("8:", 0, 0, 3, 1)
        for y in range(8):
            for x in range(16):
                for dy in range(3):
                    for dx in range(3):
                        assert fbig.pixel(3 * x + dx, 3 * y + dy) == fs.pixel(x, y)

    def test_hangul_comes_from_the_generated_font():
        buf, fb = _mono8()
        wr = Writer(fb, font_ko)
        assert wr.width("가A", 1) == 24 and wr.height("가", 1) == 16 and wr.height("A", 1) == 8
        assert wr.width("가", 2) == 16 and wr.width("가", 4) == 32
        wr.text("가", 0, 0, 1, 1)
        # unifont's 가: the vertical stroke of ㅏ in column 11, rows 2..14
        assert fb.pixel(11, 2) == 1 and fb.pixel(11, 14) == 1 and fb.pixel(0, 0) == 0

    def test_a_glyph_missing_from_the_font_is_a_box():
        buf, fb = _mono8()
        wr = Writer(fb, font_ko)
        assert wr.width("\u263a", 1) == 16
        wr.text("\u263a", 0, 0, 1, 1)
        assert fb.pixel(1, 2) == 1 and fb.pixel(14, 13) == 1 and fb.pixel(7, 7) == 0

    def test_text_is_cut_at_max_w_and_fit_picks_the_largest_scale():
        buf, fb = _mono8()
        wr = Writer(fb)
        assert wr.text("ABCDEFG", 0, 0, 1, 1, 20) == 16          # two whole cells
        assert wr.fit("35:00", 5, 240) == 5 and wr.fit("+12:34", 5, 240) == 5
        assert wr.fit("+12:34", 5, 200) == 4 and wr.fit("x" * 40, 3, 100) == 1

    def test_menu_cursor_line_is_inverted_and_shows_the_whole_label():
        w, h, mono = SIZES[1]
        buf, fb, r = screen(w, h, mono)
        s = screens.penalty_menu()
        s.cursor = 1                                    # "4+ copies of a card": 19 cells > 16
        r.draw(s)
        run = best = 0
        for y in range(h):
            run = run + 1 if fb.pixel(w - 1, y) else 0  # the bar reaches the right edge
            best = max(best, run)
        assert best >= 2 * 9, "the cursor bar should hold two 1x lines, got %d rows" % best


    def test_drawing_state_after_state_composes_what_a_full_draw_paints():
        # Partial drawing: from every golden state to every other, the buffer must hold
        # exactly what painting the second state's every op in order gives.
        shots = [(name, make()) for name, make in screens.STATES]
        for w, h, mono in SIZES:
            ref_buf, _, ref = screen(w, h, mono)
            buf, _, r = screen(w, h, mono)
            partial = 0
            want = bytearray(len(ref_buf))                  # one copy, made once: the heap
            for name, s in shots:                           # has no room for one a state
                ref.plan(s)                                 # the whole screen in one window:
                ref.paint((0, 0, w, h))                     # every op in order
                want[:] = ref_buf
                for before, b in shots:
                    r.draw(b)
                    if 0 < _area(r.draw(s)) < w * h:
                        partial += 1
                    assert buf == want, "%s after %s at %dx%d" % (name, before, w, h)
                assert r.draw(s) == []                      # nothing changed: nothing to send
            assert partial > 0, "no draw was partial at %dx%d" % (w, h)

    def test_a_screen_drawn_field_by_field_is_the_screen_drawn_whole():
        # On every golden: the values a tick or a key changes, changed (screens.ticked),
        # drawn into their fields alone, paint what a whole draw of the new screen does.
        for w, h, mono in SIZES:
            want_buf, _, want = screen(w, h, mono)
            buf, _, r = screen(w, h, mono)
            fast = []
            for name, make in screens.STATES:
                s = make()
                t = screens.ticked(s)
                r.draw(s)
                fields = r.layout.fields
                r.draw(t)
                if r.layout.fields is fields:       # no whole layout
                    fast.append(name)
                want.draw(t)
                assert buf == want_buf, "%s at %dx%d" % (name, w, h)
            for name in ("home", "turn_long", "last5", "time_turn", "lp_entry", "menu", "record"):
                assert name in fast, "%s was laid out whole at %dx%d" % (name, w, h)

    def test_a_held_keys_hint_comes_and_goes_in_its_field_alone():
        # Keys.waiting shown at the press: the status line (home) or the entry's title
        # redrawn alone, what a whole draw paints, and gone again the same way.
        states = dict((name, make) for name, make in screens.STATES)
        for w, h, mono in SIZES:
            want_buf, _, want = screen(w, h, mono)
            buf, _, r = screen(w, h, mono)
            for held, base in screens.HELD:
                for a, b in ((base, held), (held, base)):
                    r.draw(states[a]())
                    fields = r.layout.fields
                    windows = r.draw(states[b]())
                    assert r.layout.fields is fields, "%s -> %s laid out whole" % (a, b)
                    assert 0 < _area(windows) < w * h // 4, "%s -> %s: %s" % (a, b, windows)
                    want.draw(states[b]())
                    assert buf == want_buf, "%s -> %s at %dx%d" % (a, b, w, h)

    def test_a_clock_tick_repaints_and_sends_a_few_glyphs():
        for w, h, mono in SIZES:
            buf, fb, r = screen(w, h, mono)
            ui = screens._in_duel()
            t = 9 * screens.MIN + 12 * screens.SEC          # 35:48 left: one digit changes
            r.draw(screens.build(ui, t, screens.SYNC_S))
            windows = r.draw(screens.build(ui, t + screens.SEC, screens.SYNC_S + 1))
            assert 0 < _area(windows) < w * h // 10, "%dx%d: %s" % (w, h, windows)
            full = bytes(buf)
            r.__init__(fb, w, h, mono)
            r.draw(screens.build(ui, t + screens.SEC, screens.SYNC_S + 1))
            assert buf == full

    def test_a_clock_tick_sends_the_segments_that_changed():
        # The clocks' digits are seven segments (the round clock's at scale 6, the turn
        # clock's at 2): a digit changed for another sends each segment lit in one of the
        # two, and nothing else of it, as a window of that segment's box.
        buf, fb, r = screen(240, 135, False)
        ui = screens._in_duel()
        t = 9 * screens.MIN + 12 * screens.SEC
        r.draw(screens.build(ui, t, screens.SYNC_S))
        boxes = set()
        for scale in (6, 2):
            box = r.wr.segment_boxes(scale)
            for k in range(0, 28, 4):
                boxes.add((box[k + 2], box[k + 3]))
        sent = 0
        for i in range(1, 11):                          # every digit after every other
            windows = r.draw(screens.build(ui, t + i * screens.SEC, screens.SYNC_S + i))
            assert windows, i
            for x, y, w, h in windows:
                assert (w, h) in boxes, "tick %d: %s" % (i, windows)
            sent += _area(windows)
        assert sent < 10 * (5 * 6) * (7 * 6) // 2, sent    # half a 30 x 42 digit a tick
        want_buf, _, want = screen(240, 135, False)
        want.draw(screens.build(ui, t + 10 * screens.SEC, screens.SYNC_S + 10))
        assert buf == want_buf

    def test_the_op_store_grows_for_a_busy_screen():
        import duelclock.render_fb as rf
        keep = rf.OPS
        for w, h, mono in SIZES:
            want_buf, _, want = screen(w, h, mono)
            rf.OPS = 2                                  # room for 2 ops: grown on the way
            try:
                buf, _, r = screen(w, h, mono)
            finally:
                rf.OPS = keep
            for name, make in screens.STATES:
                s = make()
                want.draw(s)
                r.draw(s)
                assert r.n == want.n and buf == want_buf, name

    def test_windows_are_bands_the_loop_can_wait_between():
        from duelclock.render_fb import BAND_PX
        for w, h, mono in SIZES:
            buf, fb, r = screen(w, h, mono)
            windows = r.draw(screens.home())
            assert len(windows) > 2 and _area(windows) == w * h
            for x, y, ww, hh in windows:                # taller where a glyph would be cut
                assert ww * hh <= w * h // 2 and (ww * hh <= BAND_PX or hh > 8), windows


def _area(windows):
    a = 0
    for x, y, w, h in windows:
        a += w * h
    return a


def _median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def main(out_dir, repeat=15):
    """Draw every state on both sizes; write OUT/fb_WxH_STATE.raw; print the medians of
    drawing each state from the one before it (drawing a screen again changes nothing)."""
    import time
    import screens
    shots = [(name, make()) for name, make in screens.STATES]
    for w, h, mono in SIZES:
        buf, fb, r = screen(w, h, mono)
        times = []
        last = shots[-1][1]
        for name, s in shots:
            for i in range(repeat):
                r.draw(last)
                t0 = time.ticks_us()
                r.draw(s)
                times.append(time.ticks_diff(time.ticks_us(), t0))
            last = s
            with open("%s/fb_%dx%d_%s.raw" % (out_dir, w, h, name), "wb") as f:
                f.write(buf)
        print("draw_ms %dx%d median %.2f max %.2f" % (w, h, _median(times) / 1000, max(times) / 1000))


if __name__ == "__main__":
    import sys
    main(sys.argv[1])
