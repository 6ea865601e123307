# Text on a framebuf.FrameBuffer. The font is not the display driver's business (as in
# Peter Hinch's Writer): any FrameBuffer in any format takes text from here.
#
# ASCII comes from framebuf's built-in 8x8 font, scaled by whole pixel blocks: scale s gives
# 8s x 8s cells. Anything else (Hangul) comes from the 16-px Unifont subset that
# host_tools mkfont.py generates into font_ko.py, drawn at max(1, s // 2): at s=2 a syllable
# is 16x16 beside 16x16 ASCII cells, emboldened by a second pass one block to the right so
# its strokes match the scaled ASCII; in such a line a space is Unifont's half-width one.
# A character the font lacks draws as a box. LP's characters (digits : + - =) at the scales
# of the generated font_digits.py come from it instead: cells of the same 7s x 8s size, cut
# from a real typeface (DejaVu Sans Bold) at build time, not blocks. `tight` spaces ASCII
# cells 7 blocks apart instead of 8 (the font leaves column 7 blank in most glyphs, and
# column 0 of nearly every one): big digits then fit where they would not. `tight`
# CLOCK_FACE spaces them so too and takes the clocks' characters (digits - + :) from
# font_digits' seven-segment face where it has the scale: every digit's box is the same,
# and segment_boxes() and lit say which pixels a change of digit can touch.
# Only ink is drawn: callers paint the background (bars) first.
#
# Glyphs: text() cuts a string into glyphs, each with the box its ink covers, and draws
# each (glyph()) or, when `record` is set, hands it to record(x, y, w, h, kind, a, b, color)
# instead (render_fb keeps them to redraw only what changed). A scaled glyph is drawn with
# one C call through a one-colour palette. font_digits' glyphs (the clocks, LP) are blitted
# straight from the font's bytes (a blit's source may be a list: rows, width, height,
# format, stride), nothing rendered or copied. Any other scaled glyph is rendered once into
# a small 1-bit FrameBuffer (1 blit instead of 10-30 fill_rects of its pixel runs); up to
# CACHE of them are kept, then the cache starts over.
from array import array

import framebuf
from micropython import const

from .layout import CLOCK_FACE

_ASCII_FIRST = const(0x20)
_ASCII_LAST = const(0x7e)


def _runs_table():
    """Horizontal runs of every byte value: RUNS[OFF[b]:OFF[b+1]] are (start << 4 | length),
    MSB = leftmost pixel. Turns a glyph row into a few fill_rect calls without a bit loop."""
    off = array("H", bytes(2 * 257))
    runs = bytearray(576)           # 576 runs in all 256 byte values
    n = 0
    for b in range(256):
        off[b] = n
        bit = 0
        while bit < 8:
            if b & (0x80 >> bit):
                start = bit
                while bit < 8 and b & (0x80 >> bit):
                    bit += 1
                runs[n] = start << 4 | (bit - start)
                n += 1
            else:
                bit += 1
    off[256] = n
    return off, runs


_ASCII = const(1)                       # glyph kinds: a = the character code, b = the scale
_WIDE = const(2)                        # a = the font's glyph index, b = ws | bytes << 4 | bold << 8 (< 0x200)
_BOX = const(3)                         # a character the font lacks: a rect outline
_DIGIT = const(4)                       # a = the character code, b = the scale (font_digits)
SEG = const(5)                          # the same, from font_digits' seven-segment face (public:
                                        # render_fb diffs a clock digit's segments)
_CACHE = const(48)                      # other scaled glyphs kept (names, hints, body text)


class Writer:
    """Draws strings on `fb`. `font` is the generated module (font_ko) or None (boxes);
    `digits` the generated font_digits or None (the 8x8 font scaled)."""

    def __init__(self, fb, font=None, digits=None):
        self.fb = fb
        self.font = font
        self.digits = digits
        self._cell = {}                 # scale -> (boxes, kinds): see cells()
        self.record = None
        self._nglyphs = len(font.CODES) // 2 if font else 0
        # The built-in font's rows, rendered once: 8 bytes a character, MSB = leftmost
        # pixel; and the columns its ink spans, first << 4 | last (0xff: no ink).
        n = _ASCII_LAST - _ASCII_FIRST + 1
        self._ascii = bytearray(8 * n)
        self._ink = bytearray(n)
        cell = bytearray(8)
        g = framebuf.FrameBuffer(cell, 8, 8, framebuf.MONO_HLSB)
        for i in range(n):
            g.fill(0)
            g.text(chr(_ASCII_FIRST + i), 0, 0, 1)
            self._ascii[8 * i:8 * i + 8] = cell
            m = 0
            for b in cell:
                m |= b
            first = 0
            while first < 8 and not m & (0x80 >> first):
                first += 1
            last = 7
            while last > first and not m & (0x80 >> last):
                last -= 1
            self._ink[i] = 0xff if first == 8 else first << 4 | last
        self._off, self._runs = _runs_table()
        self._cache = {}
        self._kept = {}                 # glyphs keep() made: never dropped
        # font_digits' cells: kind << 16 | scale << 8 | code -> (its rows, a view of the
        # font's bytes, and its first inked column), made with the scale's cells (cells():
        # before any is drawn, so a draw makes nothing), for the scales a display uses only
        self._digits = {}
        self._boxes = {}                # scale -> the seven-segment face's SEG_BOX there
        # lit[code - 0x20]: the segments a clock character lights (0: none, drawn whole)
        self.lit = bytearray(_ASCII_LAST - _ASCII_FIRST + 1)
        self._seg_scales = 0            # bit s: the clock face has scale s
        if digits is not None:
            for k, code in enumerate(digits.SEG_CHARS):
                self.lit[code - _ASCII_FIRST] = digits.SEG_LIT[k]
            for scale in digits.SEG_SCALES:
                self._seg_scales |= 1 << scale
        self._src = [None, 0, 0, framebuf.MONO_HLSB, 0]    # a blit's source (rows, w, h,
                                                            # format, stride): filled per blit
        self._pal = {}
        self._s = None                  # the last string asked about, and its bytes if it
        self._b = None                  # is printable ASCII (else None): see _ascii

    def cells(self, scale, tight=False):
        """(boxes, kinds) of printable ASCII at `scale` in text()'s `tight` (the clock
        face or not), index code - 0x20: boxes[i] the columns of the cell its ink spans,
        first << 8 | last (0xffff: no ink); kinds[i] the glyph kind that draws it (_ASCII,
        or _DIGIT or SEG from font_digits). Made once a scale and face: text() and
        render_fb's retext read them per character."""
        face = SEG if tight == CLOCK_FACE and self._seg_scales >> scale & 1 else _DIGIT
        got = self._cell.get(face << 8 | scale)
        if got is None:
            n = _ASCII_LAST - _ASCII_FIRST + 1
            boxes = array("H", bytes(2 * n))
            kinds = bytearray(n)
            for i in range(n):
                at = self._digit(_ASCII_FIRST + i, scale, face)
                if at is None and face == SEG:      # a character the clock face lacks
                    at = self._digit(_ASCII_FIRST + i, scale, _DIGIT)
                if at is not None:
                    rows, ink, k, kind = at
                    first, last = ink[2 * k], ink[2 * k + 1]
                    boxes[i] = 0xffff if first == 0xff else first << 8 | last
                    kinds[i] = kind
                    n = 8 * scale * ((7 * scale + 7) // 8)      # a cell's bytes
                    self._digits[kind << 16 | scale << 8 | _ASCII_FIRST + i] = (
                        memoryview(rows)[k * n:(k + 1) * n], first)
                else:
                    ink = self._ink[i]
                    boxes[i] = 0xffff if ink == 0xff else \
                        (ink >> 4) * scale << 8 | ((ink & 15) + 1) * scale - 1
                    kinds[i] = _ASCII
            got = self._cell[face << 8 | scale] = (boxes, kinds)
        return got

    def _digit(self, code, scale, kind):
        """(rows, ink, character's index, kind) of `code` at `scale` in font_digits' LP
        (_DIGIT) or clock (SEG) face, or None when it has no such cell."""
        d = self.digits
        if d is None:
            return None
        seg = kind == SEG
        si = (d.SEG_SCALES if seg else d.SCALES).find(bytes((scale,)))
        k = (d.SEG_CHARS if seg else d.CHARS).find(bytes((code,))) if si >= 0 else -1
        if k < 0:
            return None
        if seg:
            self._boxes[scale] = d.SEG_BOX[si]
            return d.SEG_ROWS[si], d.SEG_INK[si], k, kind
        return d.ROWS[si], d.INK[si], k, kind

    def segment_boxes(self, scale):
        """The clock face's segments at `scale` (made with its cells): seven boxes, x y w h
        each, x from a digit's ink box's left, y from its top. A digit changed for another
        changes pixels only in the boxes of the segments lit in one of the two."""
        return self._boxes[scale]

    # --- measuring -------------------------------------------------------------------

    def _glyph(self, code):
        """Index of `code` in the generated font, or -1."""
        f = self.font
        if f is None:
            return -1
        codes = f.CODES
        lo, hi = 0, self._nglyphs - 1
        while lo <= hi:
            mid = (lo + hi) >> 1
            c = codes[2 * mid] << 8 | codes[2 * mid + 1]
            if c == code:
                return mid
            if c < code:
                lo = mid + 1
            else:
                hi = mid - 1
        return -1

    def _plain(self, s):
        """`s` as bytes if it is all printable ASCII (every cell one advance), else None.
        A layout asks about the same string a few times in a row (fit, width, text): the
        last answer is kept. Bytes, because walking a str makes a string per character
        (a qstr lookup each), walking bytes makes small ints."""
        if s is not self._s:
            b = s.encode()
            self._s = s
            self._b = b if len(b) == len(s) and (not b or min(b) >= _ASCII_FIRST
                                                   and max(b) <= _ASCII_LAST) else None
        return self._b

    def _wide(self, s):
        """Does `s` need the 16-px font (anything past ASCII)?"""
        if self._plain(s) is not None:
            return False
        for ch in s:
            if ord(ch) > _ASCII_LAST:
                return True
        return False

    def _advance(self, ch, scale, tight, wide):
        o = ord(ch)
        if o == 0x20 and wide:
            return 8 * (scale >> 1 or 1)
        if _ASCII_FIRST <= o <= _ASCII_LAST:
            return (7 if tight else 8) * scale
        ws = scale >> 1 or 1
        g = self._glyph(o)
        return (self.font.WIDTHS[g] if g >= 0 else 16) * ws

    def width(self, s, scale, tight=False):
        if self._plain(s) is not None:                  # every cell the same advance
            return len(s) * (7 if tight else 8) * scale
        wide = self._wide(s)
        w = 0
        for ch in s:
            w += self._advance(ch, scale, tight, wide)
        return w

    def height(self, s, scale):
        """Line height: 8 * scale, or the 16-px font's height when `s` needs it."""
        if self._wide(s):
            return max(8 * scale, 16 * (scale >> 1 or 1))
        return 8 * scale

    def fit(self, s, scale, max_w, tight=False):
        """The largest scale <= `scale` at which `s` is at most max_w wide (1 at least)."""
        while scale > 1 and self.width(s, scale, tight) > max_w:
            scale -= 1
        return scale

    # --- drawing -----------------------------------------------------------------------

    def text(self, s, x, y, scale, color, max_w=0, line_h=0, tight=False):
        """Draw `s` with its top-left at (x, y); characters that would pass x + max_w are
        left out. Glyphs are centred in line_h (default: this line's height). Returns the x
        after the last character drawn."""
        put = self.record or self.glyph
        line_h = line_h or self.height(s, scale)
        right = x + max_w if max_w else 1 << 30
        b = self._plain(s)
        boxes, kinds = self.cells(scale, tight)
        if b is not None:                       # printable ASCII: cells of one advance
            w = (7 if tight else 8) * scale
            gy = y + (line_h - 8 * scale) // 2
            for o in b:
                if x + w > right:
                    break
                e = boxes[o - _ASCII_FIRST]
                if e != 0xffff:
                    first = e >> 8
                    put(x + first, gy, (e & 0xff) - first + 1, 8 * scale,
                        kinds[o - _ASCII_FIRST], o, scale, color)
                x += w
            return x
        wide = self._wide(s)
        for ch in s:
            o = ord(ch)
            if o == 0x20 and wide:
                x += 8 * (scale >> 1 or 1)
                continue
            if _ASCII_FIRST <= o <= _ASCII_LAST:
                w = (7 if tight else 8) * scale
                if x + w > right:
                    break
                e = boxes[o - _ASCII_FIRST]
                if e != 0xffff:
                    first = e >> 8
                    put(x + first, y + (line_h - 8 * scale) // 2, (e & 0xff) - first + 1,
                        8 * scale, kinds[o - _ASCII_FIRST], o, scale, color)
            else:
                ws = scale >> 1 or 1
                g = self._glyph(o)
                w = (self.font.WIDTHS[g] if g >= 0 else 16) * ws
                if x + w > right:
                    break
                gy = y + (line_h - 16 * ws) // 2
                if g < 0:
                    put(x + ws, gy + 2 * ws, w - 2 * ws, 12 * ws, _BOX, 0, 0, color)
                else:
                    nb = 2 if w > 8 * ws else 1
                    bold = 1 if scale > 1 else 0
                    put(x, gy, (8 * nb + bold) * ws, 16 * ws, _WIDE, g, ws | nb << 4 | bold << 8, color)
            x += w
        return x

    def glyph(self, x, y, w, h, kind, a, b, color, fb=None):
        """Draw one glyph as text() cut it: (x, y, w, h) the box of its ink; on `fb`
        (default: the writer's)."""
        if fb is None:
            fb = self.fb
        if kind == _BOX:
            fb.rect(x, y, w, h, color)
        elif kind == _ASCII and b == 1:
            fb.text(chr(a), x - (self._ink[a - _ASCII_FIRST] >> 4), y, color)
        elif kind == _DIGIT or kind == SEG:
            # the whole cell, blitted from its place in the font's bytes (in flash when
            # frozen): its blank columns are the blit's key, so only the ink box is drawn
            src = self._src
            rows, first = self._digits[kind << 16 | b << 8 | a]
            src[0] = rows
            src[1] = 7 * b
            src[2] = h
            src[4] = (7 * b + 7) // 8 * 8
            fb.blit(src, x - first, y, color ^ 1, self._palette(color))
        else:
            fb.blit(self._bitmap(kind, a, b, w, h), x, y, color ^ 1, self._palette(color))

    def _bitmap(self, kind, a, b, w, h):
        """The glyph's ink box as a 1-bit FrameBuffer (rendered on first use)."""
        key = kind << 26 | b << 16 | a
        bm = self._kept.get(key)
        if bm is None:
            bm = self._cache.get(key)
        if bm is None:
            if len(self._cache) >= _CACHE:
                self._cache = {}            # all out: one at a time, glyphs still in use
                                            # went out and were drawn again and again
            bm = framebuf.FrameBuffer(bytearray((w + 7) // 8 * h), w, h, framebuf.MONO_HLSB)
            if kind == _ASCII:
                at = 8 * (a - _ASCII_FIRST)
                self._rows(bm, self._ascii, at, 8, 1, 1, -(self._ink[a - _ASCII_FIRST] >> 4) * b, 0, b)
            else:
                f = self.font
                ws = b & 15
                nb = b >> 4 & 15
                at = a * f.GLYPH_BYTES
                self._rows(bm, f.GLYPHS, at, f.HEIGHT, 2, nb, 0, 0, ws)
                if b >> 8:
                    self._rows(bm, f.GLYPHS, at, f.HEIGHT, 2, nb, ws, 0, ws)
            self._cache[key] = bm
        return bm

    def keep(self, chars, scale):
        """Render the 8x8 font's glyphs of `chars` (bytes, printable ASCII) at `scale` now
        and keep them for good, out of the cache that starts over: what every key's frame
        draws (an LP entry's sum), so a key makes none, after a menu as before it."""
        if scale < 2:
            return                      # the 8x8 font as it is: fb.text(), nothing made
        boxes, kinds = self.cells(scale)
        for o in chars:
            e = boxes[o - _ASCII_FIRST]
            if kinds[o - _ASCII_FIRST] == _ASCII and e != 0xffff:
                w = (e & 0xff) - (e >> 8) + 1
                bm = self._bitmap(_ASCII, o, scale, w, 8 * scale)     # made or cached
                key = _ASCII << 26 | scale << 16 | o
                self._cache.pop(key, None)
                self._kept[key] = bm

    def _palette(self, color):
        """A 2x1 palette mapping the bitmaps' ink (1) to `color` and the rest (0) to
        color ^ 1, the blit's key (blit compares the key with the colour after the palette)."""
        pal = self._pal.get(color)
        if pal is None:
            pal = framebuf.FrameBuffer(bytearray(4), 2, 1, framebuf.RGB565)
            pal.pixel(0, 0, color ^ 1)
            pal.pixel(1, 0, color)
            self._pal[color] = pal
        return pal

    def _rows(self, fb, data, at, nrows, stride, nbytes, x, y, scale):
        """Draw a bitmap from data[at:] on fb in colour 1: nrows rows `stride` bytes apart,
        the first nbytes of each drawn (MSB = leftmost pixel), every pixel a scale x scale
        block."""
        fr = fb.fill_rect
        off = self._off
        runs = self._runs
        for r in range(nrows):
            for k in range(nbytes):
                b = data[at + r * stride + k]
                if b:
                    bx = x + 8 * k * scale
                    for i in range(off[b], off[b + 1]):
                        v = runs[i]
                        fr(bx + (v >> 4) * scale, y, (v & 15) * scale, scale, 1)
            y += scale
