# The ST7789 driver (firmware/duelclock/drivers/st7789.py) under the MicroPython unix port,
# on an SPI bus that decodes what it is sent back into the panel's RAM: the windows that
# show(windows) sends leave the panel holding the frame. tests/host/test_boards.py runs it:
#   MICROPYPATH=firmware:tests/upy:.frozen .venv/bin/micropython tests/upy_run.py tests/upy test_st7789
try:
    from duelclock.drivers.st7789 import ST7789
except ImportError:             # CPython has no framebuf: pytest collects nothing here
    ST7789 = None

__test__ = False

W, H = 240, 135
X0, Y0 = 40, 53


class Panel:
    """The controller's RAM (240x320 x 2 bytes), CS, DC and the commands that address it."""

    def __init__(self):
        self.ram = bytearray(240 * 320 * 2)
        self.dc = 0
        self.cmd = None
        self.data = bytearray()
        self.sent = 0

    def write(self, b):
        if self.dc == 0:
            self._end()
            self.cmd = b[0]
            self.data = bytearray()
        else:
            self.data += b
            if self.cmd == 0x2C:
                self.sent += len(b)

    def _end(self):
        d = self.data
        if self.cmd == 0x2A:
            self.xs, self.xe = d[0] << 8 | d[1], d[2] << 8 | d[3]
        elif self.cmd == 0x2B:
            self.ys, self.ye = d[0] << 8 | d[1], d[2] << 8 | d[3]
        elif self.cmd == 0x2C:
            i = 0
            for y in range(self.ys, self.ye + 1):
                for x in range(self.xs, self.xe + 1):
                    if i + 2 > len(d):
                        return
                    at = 2 * (y * 240 + x)
                    self.ram[at:at + 2] = d[i:i + 2]
                    i += 2

    def glass(self):
        """The frame's window of the RAM, as the frame buffer lays it out."""
        self._end()
        self.cmd = None
        out = bytearray()
        for y in range(Y0, Y0 + H):
            out += self.ram[2 * (y * 240 + X0):2 * (y * 240 + X0 + W)]
        return bytes(out)


def _display():
    panel = Panel()

    def dc(v):
        panel.dc = v
    return ST7789(panel, lambda v: None, dc, W, H, x0=X0, y0=Y0), panel     # 0.27 s: its reset


def test_windows_leave_the_panel_holding_the_frame():
    d, panel = _display()
    assert panel.glass() == bytes(d.buf)
    d.fb.fill_rect(10, 20, 36, 48, 0x1234)
    d.fb.fill_rect(0, 100, 240, 35, 0xf800)         # full width, 35 rows: two bands
    d.fb.pixel(239, 134, 0x07e0)
    panel.sent = 0
    d.show([(10, 20, 36, 48), (0, 100, 240, 35), (239, 134, 1, 1)])
    assert panel.sent == 2 * (36 * 48 + 240 * 35 + 1)
    assert panel.glass() == bytes(d.buf)


def test_show_without_windows_sends_the_whole_frame():
    d, panel = _display()
    d.fb.fill(0xabcd)
    panel.sent = 0
    d.show()
    assert panel.sent == W * H * 2 and panel.glass() == bytes(d.buf)


def test_windows_of_sizes_sent_before_make_no_garbage():
    # A clock tick sends a few small windows of the same sizes every second (its digits'
    # segments): the second time, show() allocates nothing, and the glass still follows.
    import gc

    class Bus:                      # counts what it is sent, keeps nothing: no allocation
        sent = 0

        def write(self, b):
            self.sent += len(b)
    d, panel = _display()
    bus = d.spi = Bus()
    ticks = ([(40, 30, 26, 5), (70, 35, 5, 18)], [(70, 35, 5, 18), (40, 62, 26, 5)])
    for windows in ticks:
        d.show(windows)
    for windows in ticks * 3:
        gc.collect()
        before = gc.mem_alloc()
        d.show(windows)
        assert gc.mem_alloc() - before == 0, windows
    assert bus.sent > 0
    d.spi = panel                   # and the windows still carry the frame
    for k, windows in enumerate(ticks):
        d.fb.fill_rect(40, 30, 40, 40, 0x1111 * (k + 1))
        d.show([(40, 30, 40, 40)] + windows)
        assert panel.glass() == bytes(d.buf)
