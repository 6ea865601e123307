# Screens on a MicroPython framebuf.FrameBuffer: a core.view.Screen in, pixels out.
# layout.Layout decides where things go; this module is its canvas (the FrameBuffer plus
# writer.Writer for text: fonts stay apart from display drivers) and the sizes for small
# and large displays. The app owns the display and pushes the buffer after draw().
#
# A draw allocates short strings (the texts that changed) and no buffers: ops, dirty rects
# and windows live in storage made at start: two op lists of OPS 16-bit ops (2 KB each),
# a window's scratch (BAND_PX pixels) and the writer's glyph rows and run tables. font_ko's
# and font_digits' bytes stay in flash when frozen or in a ROMFS image.
# tests/upy/test_render_fb.py as a script prints the median time of a whole draw of each
# golden state from the one before it; make bench measures the app's frames.
from array import array

import framebuf
from micropython import const

from . import font_digits, font_ko
from .layout import CLOCK_FACE, Layout, RGB
from .writer import SEG, Writer


class _Big:
    """240x135 and larger, in 8x8-font scales: the clock 6x (48 px), LP 3x."""
    status = 1
    status_idle = 2             # before the duel, table and round larger
    clock = 6
    banner = 2
    names = 2
    lp = 3
    turn = 2
    header = 2
    body = 2
    body_big = 3                # PIN and number entry
    total = 4                   # the new LP total in the entry screen
    message = 2
    pad = 2
    pip = 8                     # one square per duel won
    shrink = ("status1", "clock", "clock", "status", "turn", "clock", "names", "banner1", "lines")


class _Small:
    """128x64: the clock 3x (24 px), LP 2x."""
    status = 1
    status_idle = 1
    clock = 3
    banner = 1
    names = 1
    lp = 2
    turn = 1
    header = 1
    body = 1
    body_big = 2
    total = 2
    message = 1
    pad = 0
    pip = 4
    shrink = ("status", "turn", "names", "clock", "banner1", "lines")


def rgb565(r, g, b, swap=False):
    c = (r & 0xf8) << 8 | (g & 0xfc) << 3 | b >> 3
    return (c >> 8 | (c & 0xff) << 8) if swap else c


def _int16(c):
    """A 16-bit colour as the signed value an op stores (framebuf keeps its low 16 bits)."""
    return c - 0x10000 if c & 0x8000 else c


_OP = const(8)                  # 16-bit ints an op: x, y, w, h, kind, a, b, color (signed:
                                # an RGB565 colour is kept as _int16 gives it)
OPS = const(128)                # ops room made up front, in each of the two lists (2 KB): the
                                # busiest screens with their fields' empty slots take about
                                # 100 on either display size. It grows if need be, but a
                                # grown array wants a block of its whole size, which a
                                # fragmented heap may not have (a board dies of it)
_FULL_PCT = const(50)           # a change over half the screen: paint and send it whole
_SLACK = const(4)               # empty ops after a field's: room for a longer value
_NOWHERE = const(-32768)        # an empty op's x: it touches no window
BAND_PX = const(2048)           # a window painted and sent in one step, the loop running
                                # between two: 4 KB of RGB565, 0.5 ms at 62.5 MHz SPI
_RECTS = const(24)              # dirty rects kept apart; past that a plan sends the screen
_PANES = (16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 200)    # scratch widths
                                # (and the screen's): a window is painted in the narrowest
                                # that holds it, as many rows as BAND_PX gives that width
_GAP_PX = const(16)             # dirty rects on common rows this near are one: a line of
                                # changed glyphs is one window, not one each (a window's
                                # paint walks every op: its Python work, not its bytes, costs)


class FbRenderer:
    """draw(screen) lays a Screen out on `fb` (width x height). mono: a 1-bit buffer
    (SSD1306 MONO_VLSB); else RGB565, byte-swapped when `swap` (for drivers that push the
    buffer to an ST7789 as it is).

    Only what changed is painted. The layout's drawing is kept as ops, each a box it
    paints nothing outside of: x, y, w, h, kind, a, b, color (_OP ints in a flat array,
    two arrays swapped each draw: no allocation per op), kind 0 a filled rectangle, else a
    glyph (writer.py). An op that differs from the op at the same place in the last
    draw's list marks its old and new boxes dirty (rects merged where they touch); the
    dirty rects are cut into bands of at most BAND_PX pixels, the windows. Rects and
    windows live in storage made once: a plan allocates nothing for them, and the
    windows it returns are good until the next plan. A window is painted in the
    narrowest of a few scratch FrameBuffers that holds it (made at start): the
    background, then every op touching it in order, offset, so framebuf clips glyphs and
    rectangles alike to its left and top; then its w x h pixels are copied into the
    frame (a blit from a list source: no object). Every pixel outside the windows has
    the same ops in the same order as before, so the buffer holds what a full draw would
    paint (tests/upy/test_render_fb.py checks it from every golden state to every other).
    The app plans a frame, then paints one window a step (app.screen_task); draw() does it
    all at once.

    A field of the layout (layout.Layout: the clock, LP...) owns a run of op slots, its ops
    and _SLACK empty ones after them. When only fields' values changed, plan() lays out
    nothing else and diffs nothing else: each such field's ops are made again into its
    slots (redo ... done) and an op that differs from the one it replaces marks both boxes
    dirty; a clock digit for another in its place (the same box: writer.SEG) marks only
    the boxes of the segments lit in one and not the other, each a window of its own, so a
    tick sends a few segments, not the digit."""

    def __init__(self, fb, width, height, mono, swap=False):
        self.fb = fb
        self.w = width
        self.h = height
        self.mono = mono
        self.wr = wr = Writer(fb, font_ko, font_digits)
        wr.record = self._op
        self.width = wr.width
        self.height = wr.height
        self.fit = wr.fit
        self.ops = array("h", range(_OP * OPS))     # no temporary buffer beside it; the
        self.old = array("h", range(_OP * OPS))     # contents count only below n
        self.n = 0                      # ops in self.ops
        self.old_n = 0
        self.bg = None
        self.old_bg = None
        self._rect = array("h", bytes(8 * _RECTS))     # this plan's dirty rects, x0 y0 x1 y1
        self._nrect = 0
        self._out = []              # the windows plan() returns: lists [x, y, w, h] of _pool
        self._pool = []
        self._slots = None          # the field's slots being drawn again (redo), else None
        self._at = 0                # the op count to go back to after it
        self._runs = None           # the texts of the field being drawn (see text)
        self._k = 0                 # the next of them when it is drawn again
        fmt = framebuf.MONO_VLSB if mono else framebuf.RGB565
        self._pane_w = tuple([p for p in _PANES if p < width] + [width])
        # a window's pixels: BAND_PX of RGB565, or the most a pane takes in 8-row pages
        self._scratch = bytearray(max([p * ((BAND_PX // p + 7) // 8) for p in self._pane_w])
                                  if mono else 2 * BAND_PX)
        self._panes = [framebuf.FrameBuffer(self._scratch, p, BAND_PX // p, fmt)
                       for p in self._pane_w]    # all made now: a window makes none
        self._src = [self._scratch, 0, 0, fmt, 0]   # a blit's source: a window's rows
        if mono:
            palette, invert = (0, 1, 1, 1, 1, 1, 1, 1, 0), 1
        else:
            palette, invert = [_int16(rgb565(r, g, b, swap)) for r, g, b in RGB], -1
        z = _Big if height >= 100 else _Small
        for scale in (z.lp, z.total):               # the digits' cells, made now: a key's
            wr.cells(scale)                         # frame (an entry's total) makes none,
        for scale in (z.clock, z.turn):             # a tick neither
            wr.cells(scale, CLOCK_FACE)
        wr.keep(b"0123456789+-=", z.body)           # the entry's sum, in the 8x8 font
        self.layout = Layout(self, z, palette, invert)

    # --- the canvas: recorded, painted by draw() ----------------------------------------

    def fill(self, color):
        self.bg = color

    def fill_rect(self, x, y, w, h, color):
        if w > 0 and h > 0:
            self._op(x, y, w, h, 0, 0, 0, color)

    def rect(self, x, y, w, h, color):
        self.fill_rect(x, y, w, 1, color)
        self.fill_rect(x, y + h - 1, w, 1, color)
        self.fill_rect(x, y, 1, h, color)
        self.fill_rect(x + w - 1, y, 1, h, color)

    def hline(self, x, y, w, color):
        self.fill_rect(x, y, w, 1, color)

    # --- fields (layout.Layout.update) ---------------------------------------------------

    def begin(self):
        self._runs = []
        return self.n

    def end(self, start):
        """The field whose ops began at `start`: its slots (first, end), _SLACK empty ones
        after its ops, and its texts."""
        for _ in range(_SLACK):
            self._op(_NOWHERE, 0, 0, 0, 0, 0, 0, 0)
        runs = self._runs
        self._runs = None
        return (start, self.n, runs)

    def redo(self, field):
        """Ops from here on go into the field's slots, each diffed with the op it replaces."""
        self._at = self.n
        self._slots = field
        self.n = field[0]
        self._runs = field[2]
        self._k = 0

    def done(self, field):
        """The field's ops are made: its unused slots emptied. False when they did not fit
        (the next plan then sends the whole screen)."""
        fit = self._slots is not None
        ops = self.ops
        while fit and self.n < field[1]:
            if ops[self.n * _OP] == _NOWHERE:   # empty already (an empty op touches no
                self.n += 1                     # window, whatever its other ints)
            else:
                self._op(_NOWHERE, 0, 0, 0, 0, 0, 0, 0)
        self._slots = None
        self._runs = None
        self.n = self._at
        if not fit:
            self.bg = None
        return fit

    def text(self, s, x, y, scale, color, max_w=0, line_h=0, tight=False):
        """The canvas's text (writer.Writer.text). In a field each text is noted: [first
        op, bytes, x, y, scale, color, max_w, line_h, tight, x after, characters drawn,
        the string, its ops]. Drawn again with the same place and look: the same string
        object makes nothing; a text of the same shape (printable ASCII, as long, spaces
        where they were) makes again only the glyphs of the characters that changed."""
        runs = self._runs
        wr = self.wr
        if runs is None:
            return wr.text(s, x, y, scale, color, max_w, line_h, tight)
        run = None
        if self._slots is not None:             # the field drawn again: its k-th text
            k = self._k
            self._k = k + 1
            if k < len(runs):
                run = runs[k]
                if run[0] == self.n and run[2] == x and run[3] == y and run[4] == scale \
                        and run[5] == color and run[6] == max_w and run[7] == line_h \
                        and run[8] == tight:
                    if run[11] is s:        # the very string drawn there: its ops stand
                        self.n += run[12]
                        return run[9]
                    b = wr._plain(s)
                    if b is not None and run[1] is not None and len(b) == len(run[1]) \
                            and self._retext(run, b):
                        run[11] = s
                        return run[9]
                run[0] = self.n         # drawn whole again: the same record, made anew
                run[2] = x
                run[3] = y
                run[4] = scale
                run[5] = color
                run[6] = max_w
                run[7] = line_h
                run[8] = tight
        if run is None:                         # a text the field had not drawn before
            run = [self.n, None, x, y, scale, color, max_w, line_h, tight, 0, 0, None, 0]
            runs.append(run)
        run[9] = end = wr.text(s, x, y, scale, color, max_w, line_h, tight)
        run[1] = wr._plain(s)
        w = (7 if tight else 8) * scale
        run[10] = (end - x) // w
        run[11] = s
        run[12] = self.n - run[0]
        return end

    def _retext(self, run, b):
        """Make again the glyph ops of the characters of `b` that differ from run's; False
        (nothing made) when a space moved. Every printable ASCII character but the space
        has ink, so has one op (Writer.text)."""
        old = run[1]
        for i in range(run[10]):
            if (old[i] == 32) != (b[i] == 32):
                return False
        scale = run[4]
        w = (7 if run[8] else 8) * scale
        gy = run[3] + (run[7] - 8 * scale) // 2 if run[7] else run[3]
        boxes, kinds = self.wr.cells(scale, run[8])
        x = run[2]
        slot = run[0]
        for i in range(run[10]):
            o = b[i]
            if o != 32:
                if o != old[i]:
                    self.n = slot
                    e = boxes[o - 32]
                    first = e >> 8
                    self._op(x + first, gy, (e & 0xff) - first + 1, 8 * scale, kinds[o - 32], o,
                             scale, run[5])
                slot += 1
            x += w
        self.n = slot
        run[1] = b
        return True

    def _op(self, x, y, w, h, kind, a, b, color):
        ops = self.ops
        j = self.n * _OP
        redo = self._slots is not None          # drawing a field again: in its slots
        if redo:
            if self.n == self._slots[1]:
                self._slots = None              # no room: done() says so
                self.n = self._at
                return
            ox = ops[j]
            oy = ops[j + 1]
            ow = ops[j + 2]
            oh = ops[j + 3]
            segs = 0
            if ox == x and oy == y and ow == w and oh == h and ops[j + 4] == kind \
                    and ops[j + 6] == b and ops[j + 7] == color:
                if ops[j + 5] == a:
                    self.n += 1
                    return
                if kind == SEG:                 # a clock digit for another: the segments
                    lit = self.wr.lit           # lit in one of the two
                    segs = lit[a - 32] ^ lit[ops[j + 5] - 32]
        elif j == len(ops):
            ops.extend(bytes(2 * _OP * 16))      # room for 16 more (a busier screen)
        ops[j] = x
        ops[j + 1] = y
        ops[j + 2] = w
        ops[j + 3] = h
        ops[j + 4] = kind
        ops[j + 5] = a
        ops[j + 6] = b
        ops[j + 7] = color
        self.n += 1
        # Drawn again: its old box and its new one dirty, one rect when they overlap or
        # touch (a glyph in the same cell), else two; a clock digit's changed segments only
        if redo:
            if segs:
                self._segments(x, y, segs, b)
            elif ox == _NOWHERE:
                self._dirty(x, y, x + w, y + h)
            elif ox <= x + w and x <= ox + ow and oy <= y + h and y <= oy + oh:
                self._dirty(ox if ox < x else x, oy if oy < y else y,
                            ox + ow if ox + ow > x + w else x + w,
                            oy + oh if oy + oh > y + h else y + h)
            else:
                self._dirty(ox, oy, ox + ow, oy + oh)
                self._dirty(x, y, x + w, y + h)

    def _segments(self, x, y, segs, scale):
        """Mark dirty the boxes of the segments `segs` (bits) of the clock digit whose ink
        box is at (x, y): each box a rect of its own, a window the size of a segment."""
        box = self.wr.segment_boxes(scale)
        k = 0
        while segs:
            if segs & 1:
                x0 = x + box[k]
                y0 = y + box[k + 1]
                self._dirty(x0, y0, x0 + box[k + 2], y0 + box[k + 3], False)
            segs >>= 1
            k += 4

    # --- drawing -------------------------------------------------------------------------

    def draw(self, s):
        """plan(s), then paint every window: the windows, (x, y, w, h) tuples of its own."""
        windows = self.plan(s)
        for w in windows:
            self.paint(w)
        return [tuple(w) for w in windows]

    def plan(self, s):
        """Lay `s` out; the windows to paint and send, [x, y, w, h] of about BAND_PX
        pixels each, [] when nothing changed. The list and its windows are the renderer's,
        made again by the next plan."""
        self._nrect = 0
        if self.layout.update(s):               # only fields changed: drawn into their slots
            return self._windows(False)
        self.old, self.ops = self.ops, self.old
        self.old_n, self.n = self.n, 0
        self.old_bg = self.bg
        self.layout.draw(s)
        ops = self.ops
        old = self.old
        n = self.n
        old_n = self.old_n
        for i in range(max(n, old_n)):
            j = i * _OP
            if i < n and i < old_n and ops[j] == old[j] and ops[j + 1] == old[j + 1] \
                    and ops[j + 2] == old[j + 2] and ops[j + 3] == old[j + 3] \
                    and ops[j + 4] == old[j + 4] and ops[j + 5] == old[j + 5] \
                    and ops[j + 6] == old[j + 6] and ops[j + 7] == old[j + 7]:
                continue
            if i < old_n:
                self._dirty(old[j], old[j + 1], old[j] + old[j + 2], old[j + 1] + old[j + 3])
            if i < n:
                self._dirty(ops[j], ops[j + 1], ops[j] + ops[j + 2], ops[j + 1] + ops[j + 3])
        return self._windows(self.bg != self.old_bg)

    def _windows(self, whole):
        """The windows that cover the dirty rects (the whole screen if `whole`, if they are
        most of it or too many to keep apart): bands of at most BAND_PX pixels."""
        r = self._rect
        n = self._nrect
        area = 0
        if n <= _RECTS:
            for k in range(0, 4 * n, 4):
                area += (r[k + 2] - r[k]) * (r[k + 3] - r[k + 1])
        if whole or n > _RECTS or area * 100 > self.w * self.h * _FULL_PCT:
            r[0] = r[1] = 0
            r[2] = self.w
            r[3] = self.h
            n = 1
        out = self._out
        while out:                      # pop(): clear() would give its room back
            out.pop()
        pool = self._pool
        for k in range(0, 4 * n, 4):
            x = r[k]
            w = r[k + 2] - x
            rows = BAND_PX // self._pane_w[self._pane(w)]
            y = r[k + 1]
            while y < r[k + 3]:
                if len(out) == len(pool):
                    pool.append([0, 0, 0, 0])
                win = pool[len(out)]
                win[0] = x                  # one at a time: four at once make a tuple
                win[1] = y
                win[2] = w
                win[3] = min(rows, r[k + 3] - y)
                out.append(win)
                y += rows
        return out

    def paint(self, win):
        """Paint window (x, y, w, h) of the last plan into the frame: in a scratch buffer of
        its size, then copied. A window larger than BAND_PX (a test's whole screen) is
        painted in place, glyphs whole."""
        x0, y0, w, h = win
        if w * h > BAND_PX:
            self._paint(self.fb, x0, y0, w, h, 0, 0)
            return
        k = self._pane(w)
        self._paint(self._panes[k], x0, y0, w, h, x0, y0)
        src = self._src                     # its first w columns of its first h rows
        src[1] = w                          # (what is right of or below them: not sent)
        src[2] = h
        src[4] = self._pane_w[k]
        self.fb.blit(src, x0, y0)

    def _pane(self, w):
        """The narrowest scratch FrameBuffer that holds a window w wide: its index."""
        panes = self._pane_w
        k = 0
        while panes[k] < w:
            k += 1
        return k

    def _paint(self, fb, x0, y0, w, h, dx, dy):
        # window (x0, y0, w, h) of the frame on `fb`, its pixel (x, y) at (x - dx, y - dy).
        # Methods called on their objects, not bound to locals: a bound method is an
        # allocation, and a window draws few ops.
        x1 = x0 + w
        y1 = y0 + h
        fb.fill_rect(x0 - dx, y0 - dy, w, h, self.bg)
        wr = self.wr
        ops = self.ops
        for j in range(0, self.n * _OP, _OP):       # rows first: windows are bands
            y = ops[j + 1]
            if y < y1 and y0 < y + ops[j + 3] and ops[j] < x1 and x0 < ops[j] + ops[j + 2]:
                x = ops[j]
                if ops[j + 4]:                  # its colour unsigned: a blit's key is
                    wr.glyph(x - dx, y - dy, ops[j + 2], ops[j + 3], ops[j + 4], ops[j + 5],
                             ops[j + 6], ops[j + 7] & 0xffff, fb)      # compared with one
                else:
                    cx = max(x, x0)
                    cy = max(y, y0)
                    fb.fill_rect(cx - dx, cy - dy, min(x + ops[j + 2], x1) - cx,
                                 min(y + ops[j + 3], y1) - cy, ops[j + 7])

    def _dirty(self, x0, y0, x1, y1, merge=True):
        """Mark box (x0, y0)-(x1, y1) dirty, on screen: merged with every dirty rect it
        overlaps or touches, or shares rows with _GAP_PX apart or less, into their
        bounding box (x0, y0, x1, y1; dirty rects never overlap, so no pixel is painted or
        sent twice). Not `merge` (a clock digit's segment): kept apart, unless a rect
        already holds it; two segments' boxes may share a corner's few pixels, which are
        then painted and sent twice (painted alike: every window is painted from the same
        ops). One past _RECTS rects: the plan sends the whole screen."""
        if x0 < 0:
            x0 = 0
        if y0 < 0:
            y0 = 0
        if x1 > self.w:
            x1 = self.w
        if y1 > self.h:
            y1 = self.h
        if x0 >= x1 or y0 >= y1:
            return
        r = self._rect
        n = self._nrect
        if n > _RECTS:
            return
        for k in range(0, 4 * n, 4):
            if r[k] <= x0 and r[k + 1] <= y0 and x1 <= r[k + 2] and y1 <= r[k + 3]:
                return
        k = 0
        while merge and k < 4 * n:      # absorb every rect it overlaps or touches
            if x0 <= r[k + 2] + _GAP_PX and r[k] <= x1 + _GAP_PX and y0 <= r[k + 3] \
                    and r[k + 1] <= y1 and (y0 < r[k + 3] and r[k + 1] < y1 or
                                            x0 <= r[k + 2] and r[k] <= x1):
                if r[k] < x0:
                    x0 = r[k]
                if r[k + 1] < y0:
                    y0 = r[k + 1]
                if r[k + 2] > x1:
                    x1 = r[k + 2]
                if r[k + 3] > y1:
                    y1 = r[k + 3]
                n -= 1                  # the last rect takes its place
                m = 4 * n
                r[k] = r[m]
                r[k + 1] = r[m + 1]
                r[k + 2] = r[m + 2]
                r[k + 3] = r[m + 3]
                k = 0
            else:
                k += 4
        if n == _RECTS:
            n += 1                      # no room: the whole screen
        else:
            m = 4 * n
            r[m] = x0
            r[m + 1] = y0
            r[m + 2] = x1
            r[m + 3] = y1
            n += 1
        self._nrect = n

