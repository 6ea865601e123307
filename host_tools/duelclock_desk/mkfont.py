"""Build the table's bitmap fonts: Hangul from GNU Unifont (Debian xfonts-unifont, 16 px),
LP's large digits from DejaVu Sans Bold (Debian fonts-dejavu-core), the clocks' digits as
seven segments.

    python -m duelclock_desk.mkfont [--pcf PATH] [--ttf PATH] [--out DIR]

Collects every non-ASCII character of the screen text (core/lang.py, core/catalogue.py),
takes those glyphs from the PCF and writes three build products next to the firmware:
  font_ko.py      for render_fb (framebuf): bytes constants, kept in flash when frozen
  font_ko.bdf     for render_dio (displayio labels): the same glyphs, printable ASCII and a box
  font_digits.py  for render_fb: LP's characters (DIGIT_CHARS) rendered from the TTF into
                  1-bit cells of the 8x8 font's scales DIGIT_SCALES (7s x 8s: the tight
                  advance), so a total is drawn in a real typeface, not 8x8 blocks; and the
                  clocks' face: seven-segment digits (SEG_CHARS at SEG_SCALES) drawn from
                  their geometry, with each segment's box, so a tick sends the segments that
                  changed, not the digit
All are generated: never edit them, run this again. The PCF is parsed here (gzip + struct):
Pillow's PCF reader only maps the first 256 code points. The TTF goes through Pillow.
"""
import argparse
import gzip
import os
import struct
import sys

import duelclock
from duelclock.core import catalogue, lang

PCF = "/usr/share/fonts/X11/misc/unifont.pcf.gz"
TTF = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"   # its digits are tabular
DIGIT_CHARS = "0123456789:+-="    # LP, the entry's new total, PIN and number entry
DIGIT_SCALES = (3, 4)             # the 8x8 font's scales these are drawn at (render_fb sizes)
SEG_CHARS = "0123456789-+:"       # the round and turn clocks, the overtime's "+"
SEG_SCALES = (2, 3, 4, 5, 6)      # the clocks' scales on either display, shrunk or not (at
                                  # 1, 5 x 7 pixels, the 8x8 font reads better)
SEGMENTS = "abcdefg"              # top, upper right, lower right, bottom, lower left, upper
                                  # left, middle: the usual names, bit i of a LIT mask
LIT = {"0": "abcdef", "1": "bc", "2": "abdeg", "3": "abcdg", "4": "bcfg", "5": "acdfg",
       "6": "acdefg", "7": "abc", "8": "abcdefg", "9": "abcdfg", "-": "g"}
BOX = "\u25a1"                   # WHITE SQUARE: what render_dio shows for a missing glyph
CELL_H = 16                     # unifont: every glyph is 16 rows (ascent 14, descent 2)
ROW_BYTES = 2                   # one row of a 16-px-wide glyph
GLYPH_BYTES = CELL_H * ROW_BYTES

# PCF table types and format bits (X11 pcf.h)
PCF_METRICS, PCF_BITMAPS, PCF_BDF_ENCODINGS = 1 << 2, 1 << 3, 1 << 5
PCF_COMPRESSED_METRICS = 0x100
PCF_BYTE_MSB, PCF_BIT_MSB = 1 << 2, 1 << 3


def screen_chars():
    """Every non-ASCII character any screen can show, sorted."""
    text = lang.TEXT + catalogue.ROWS + catalogue.KIND_NAMES
    return sorted(set(c for c in text if ord(c) > 0x7e))


class Pcf:
    """The glyphs of a PCF font: bitmap(code) -> (width, rows) or None."""

    def __init__(self, data):
        if data[:4] != b"\x01fcp":
            raise ValueError("not a PCF font")
        (count,) = struct.unpack_from("<i", data, 4)
        self.tables = {}
        for i in range(count):
            kind, fmt, size, offset = struct.unpack_from("<iiii", data, 8 + 16 * i)
            self.tables[kind] = (fmt, offset)
        self.data = data
        self.metrics = self._metrics()
        self.offsets, self.bits, self.bits_fmt = self._bitmaps()
        self.index = self._encodings()

    def _table(self, kind):
        fmt, offset = self.tables[kind]
        (fmt,) = struct.unpack_from("<i", self.data, offset)     # a table repeats its format
        return fmt, offset + 4, ">" if fmt & PCF_BYTE_MSB else "<"

    def _metrics(self):
        fmt, at, e = self._table(PCF_METRICS)
        out = []
        if fmt & PCF_COMPRESSED_METRICS:
            (n,) = struct.unpack_from(e + "H", self.data, at)
            for i in range(n):
                m = self.data[at + 2 + 5 * i: at + 7 + 5 * i]
                out.append(tuple(b - 0x80 for b in m))
        else:
            (n,) = struct.unpack_from(e + "i", self.data, at)
            for i in range(n):
                out.append(struct.unpack_from(e + "hhhhh", self.data, at + 4 + 12 * i))
        return out                  # (left bearing, right bearing, advance, ascent, descent)

    def _bitmaps(self):
        fmt, at, e = self._table(PCF_BITMAPS)
        (n,) = struct.unpack_from(e + "i", self.data, at)
        offsets = struct.unpack_from(e + "%di" % n, self.data, at + 4)
        return offsets, at + 4 + 4 * n + 16, fmt

    def _encodings(self):
        fmt, at, e = self._table(PCF_BDF_ENCODINGS)
        b2_min, b2_max, b1_min, b1_max, _default = struct.unpack_from(e + "hhhhh", self.data, at)
        n = (b2_max - b2_min + 1) * (b1_max - b1_min + 1)
        glyphs = struct.unpack_from(e + "%dH" % n, self.data, at + 10)
        span = b2_max - b2_min + 1
        index = {}
        for i, g in enumerate(glyphs):
            if g != 0xffff:
                index[((b1_min + i // span) << 8) | (b2_min + i % span)] = g
        return index

    def bitmap(self, code):
        """(advance, [row bits as ints, MSB = leftmost pixel, 16 bits wide]) of `code`."""
        g = self.index.get(code)
        if g is None:
            return None
        left, right, advance, ascent, descent = self.metrics[g]
        fmt = self.bits_fmt
        pad = 1 << (fmt & 3)
        unit = 1 << ((fmt >> 4) & 3)
        width = right - left
        stride = ((width + 7) // 8 + pad - 1) // pad * pad
        start = self.bits + self.offsets[g]
        rows = []
        for r in range(ascent + descent):
            raw = bytearray(self.data[start + r * stride: start + (r + 1) * stride])
            if not fmt & PCF_BYTE_MSB and unit > 1:         # swap bytes within each scan unit
                for u in range(0, stride, unit):
                    raw[u:u + unit] = raw[u:u + unit][::-1]
            if not fmt & PCF_BIT_MSB:
                raw = bytearray(int("{:08b}".format(b)[::-1], 2) for b in raw)
            v = int.from_bytes(raw, "big") >> (8 * stride - width)
            shift = 16 - left - width                       # ink box -> 16-px cell
            rows.append((v << shift if shift >= 0 else v >> -shift) & 0xffff)
        top = 14 - ascent                                   # place the glyph in the 16-row cell
        cell = [0] * CELL_H
        for r, v in enumerate(rows):
            if 0 <= top + r < CELL_H:
                cell[top + r] = v
        return advance, cell


def build(pcf, chars):
    """(codes, widths, glyphs, missing): sorted code points, pixel widths (8|16), 32 bytes a glyph."""
    codes, widths, glyphs, missing = [], [], bytearray(), []
    for c in chars:
        g = pcf.bitmap(ord(c))
        if g is None:
            missing.append(c)
            continue
        advance, cell = g
        codes.append(ord(c))
        widths.append(16 if advance > 8 else 8)
        for v in cell:
            glyphs += v.to_bytes(2, "big")
    return codes, widths, bytes(glyphs), missing


def _bytes_lines(name, data, per_line=32):
    out = ["%s = (" % name]
    for i in range(0, len(data), per_line):
        out.append("    %r" % bytes(data[i:i + per_line]))
    out.append(")")
    return out


def font_py(codes, widths, glyphs, chars_from):
    code_bytes = b"".join(c.to_bytes(2, "big") for c in codes)
    lines = [
        "# generated by mkfont.py, do not edit",
        "# GNU Unifont 16 px (Debian xfonts-unifont), the %d non-ASCII characters of %s." % (
            len(codes), chars_from),
        "# CODES: code points, 2 bytes big-endian each, sorted (binary search).",
        "# WIDTHS: pixel width of each glyph, 8 or 16.",
        "# GLYPHS: %d bytes a glyph: 16 rows of 2 bytes, MSB = leftmost pixel." % GLYPH_BYTES,
        "HEIGHT = %d" % CELL_H,
        "GLYPH_BYTES = %d" % GLYPH_BYTES,
    ]
    lines += _bytes_lines("CODES", code_bytes)
    lines += _bytes_lines("WIDTHS", bytes(widths))
    lines += _bytes_lines("GLYPHS", glyphs)
    return "\n".join(lines) + "\n"


def digit_cells(ttf, scale):
    """(rows, ink) of DIGIT_CHARS at an 8x8-font `scale`: each a cell of 7*scale x 8*scale
    pixels, (7*scale + 7) // 8 bytes a row, MSB = leftmost; ink = first and last column of
    each (0xff 0xff: none). The type size is the largest whose digits stand 7*scale pixels
    tall (the 8x8 font's: its last row is the descender's) and fit the cell with a column to
    spare; every character sits on the digits' baseline, centred in the cell."""
    from PIL import Image, ImageDraw, ImageFont
    w, h = 7 * scale, 8 * scale
    size = 2 * h
    while size > 4:
        font = ImageFont.truetype(ttf, size)
        l, t, r, b = font.getbbox("0123456789", anchor="ls")
        if b - t <= 7 * scale and font.getlength("0") <= w - 1:
            break
        size -= 1
    base = 7 * scale                      # the digits' baseline: their bottom at row 7s - 1
    rows, ink = bytearray(), bytearray()
    for ch in DIGIT_CHARS:
        img = Image.new("1", (w, h), 0)
        x = (w - font.getlength(ch)) / 2
        ImageDraw.Draw(img).text((x, base), ch, fill=1, font=font, anchor="ls")
        px = img.load()
        cols = [c for c in range(w) if any(px[c, y] for y in range(h))]
        ink += bytes((cols[0], cols[-1])) if cols else b"\xff\xff"
        rows += _cell_rows(w, h, lambda x, y: px[x, y])
    return bytes(rows), bytes(ink)


def _cell_rows(w, h, on):
    """A w x h cell's rows, (w + 7) // 8 bytes each, MSB = leftmost: pixel (x, y) set
    where on(x, y) is true."""
    rows = bytearray()
    for y in range(h):
        v = 0
        for x in range(w):
            v = v << 1 | (1 if on(x, y) else 0)
        rows += (v << ((-w) % 8)).to_bytes((w + 7) // 8, "big")
    return rows


def _segments(scale):
    """The seven segments at `scale` as pixel tests, and the stroke: {name: inside(x, y)}.
    A digit is 5s wide and 7s tall (the 8x8 font's), centred in its 7s x 8s cell. Each
    segment is a bar `stroke` thick along a side or the middle of that box, its ends
    pointed at 45 degrees and stopped half a pixel short of its neighbours': no pixel
    belongs to two segments, so a change of digit changes only the pixels of the segments
    lit in one and not the other."""
    w = 5 * scale
    stroke = max(1, (5 * scale + 3) // 6)
    half = stroke / 2
    x0 = (7 * scale - w) // 2
    left, right = x0 + half, x0 + w - half
    top, mid, bottom = half, 7 * scale / 2, 7 * scale - half
    gap = 0.5

    def bar(horizontal, centre, start, end):
        def inside(x, y):
            along, across = (x + 0.5, y + 0.5) if horizontal else (y + 0.5, x + 0.5)
            d = abs(across - centre)
            return d < half and along - start > d + gap and end - along > d + gap
        return inside

    return {"a": bar(True, top, left, right), "g": bar(True, mid, left, right),
            "d": bar(True, bottom, left, right), "f": bar(False, left, top, mid),
            "b": bar(False, right, top, mid), "e": bar(False, left, mid, bottom),
            "c": bar(False, right, mid, bottom)}, stroke


def seg_cells(scale):
    """(rows, ink, boxes) of SEG_CHARS at `scale`, cells as digit_cells' (7s x 8s). A digit
    (and "-") is the segments LIT names; its ink box is every digit's (that of "8"), so
    the clock's glyph boxes stay put as its digits change. ":" is two square dots and "+"
    a cross, of the segments' stroke. boxes: each segment's box, x y w h, x from the
    digits' first inked column and y from the cell's top (7 x 4 bytes)."""
    w, h = 7 * scale, 8 * scale
    segs, stroke = _segments(scale)
    pixels = {k: [(x, y) for y in range(h) for x in range(w) if segs[k](x, y)] for k in SEGMENTS}
    for i, k in enumerate(SEGMENTS):
        for j in SEGMENTS[i + 1:]:
            assert not set(pixels[k]) & set(pixels[j]), (scale, k, j)
    cx, cy, half = w / 2, 7 * scale / 2, stroke / 2
    arm = 7 * scale / 5
    dot = max(1, (6 * stroke + 2) // 5) / 2
    shapes = {
        ":": lambda x, y: abs(x + 0.5 - cx) < dot and min(abs(y + 0.5 - 7 * scale * 0.3),
                                                          abs(y + 0.5 - 7 * scale * 0.7)) < dot,
        "+": lambda x, y: (abs(y + 0.5 - cy) < half and abs(x + 0.5 - cx) < arm) or
                          (abs(x + 0.5 - cx) < half and abs(y + 0.5 - cy) < arm),
    }
    every = set(p for k in SEGMENTS for p in pixels[k])
    first = min(x for x, y in every)
    last = max(x for x, y in every)
    rows, ink, boxes = bytearray(), bytearray(), bytearray()
    for k in SEGMENTS:
        xs = [x for x, y in pixels[k]]
        ys = [y for x, y in pixels[k]]
        boxes += bytes((min(xs) - first, min(ys), max(xs) - min(xs) + 1, max(ys) - min(ys) + 1))
    for ch in SEG_CHARS:
        if ch in LIT:
            on = set(p for k in LIT[ch] for p in pixels[k])
            ink += bytes((first, last))
        else:
            on = set((x, y) for y in range(h) for x in range(w) if shapes[ch](x, y))
            cols = [x for x, y in on]
            ink += bytes((min(cols), max(cols)))
        rows += _cell_rows(w, h, lambda x, y: (x, y) in on)
    return bytes(rows), bytes(ink), bytes(boxes)


def digits_py(ttf):
    lines = [
        "# generated by mkfont.py, do not edit",
        "# In 1-bit cells of 7s x 8s pixels at 8x8-font scales s, (7s + 7) // 8 bytes a row,",
        "# MSB = leftmost; INK: each cell's first and last column with ink (0xff 0xff: none).",
        "# LP's characters, CHARS, from DejaVu Sans Bold (Debian fonts-dejavu-core) at SCALES:",
        "# ROWS[i] and INK[i] scale SCALES[i]'s cells, in the order of CHARS.",
        "# The clocks' seven-segment face, SEG_CHARS at SEG_SCALES: SEG_ROWS[i] and SEG_INK[i]",
        "# as above; SEG_LIT: each character's lit segments, bit i segment i of abcdefg (0: a",
        "# character drawn whole); SEG_BOX[i]: each segment's box at SEG_SCALES[i], x y w h",
        "# (x from the digits' first inked column, y from the cell's top).",
        "CHARS = %r" % DIGIT_CHARS.encode(),
        "SCALES = %r" % bytes(DIGIT_SCALES),
        "SEG_CHARS = %r" % SEG_CHARS.encode(),
        "SEG_SCALES = %r" % bytes(SEG_SCALES),
        "SEG_LIT = %r" % bytes(sum(1 << SEGMENTS.index(k) for k in LIT.get(ch, ""))
                                 for ch in SEG_CHARS),
    ]
    made = {"ROWS": [], "INK": [], "SEG_ROWS": [], "SEG_INK": [], "SEG_BOX": []}
    for sc in DIGIT_SCALES:
        r, k = digit_cells(ttf, sc)
        made["ROWS"].append(r)
        made["INK"].append(k)
    for sc in SEG_SCALES:
        r, k, b = seg_cells(sc)
        made["SEG_ROWS"].append(r)
        made["SEG_INK"].append(k)
        made["SEG_BOX"].append(b)
    for name in ("ROWS", "INK", "SEG_ROWS", "SEG_INK", "SEG_BOX"):
        lines.append("%s = (" % name)
        for r in made[name]:
            lines.append("    %r," % r)
        lines.append(")")
    return "\n".join(lines) + "\n", sum(len(r) for r in made["ROWS"] + made["SEG_ROWS"])


def font_bdf(pcf, chars):
    """A BDF with printable ASCII, `chars` and BOX, for adafruit_bitmap_font."""
    glyphs = []
    for c in [chr(i) for i in range(0x20, 0x7f)] + list(chars) + [BOX]:
        g = pcf.bitmap(ord(c))
        if g is None:
            continue
        advance, cell = g
        w = 16 if advance > 8 else 8
        rows = ["%02X" % (v >> 8) if w == 8 else "%04X" % v for v in cell]
        glyphs.append(["STARTCHAR U+%04X" % ord(c), "ENCODING %d" % ord(c),
                       "SWIDTH %d 0" % (w * 1000 // CELL_H), "DWIDTH %d 0" % w,
                       "BBX %d %d 0 -2" % (w, CELL_H), "BITMAP"] + rows + ["ENDCHAR"])
    head = ["STARTFONT 2.1", "COMMENT generated by mkfont.py, do not edit",
            "COMMENT GNU Unifont 16 px (Debian xfonts-unifont): printable ASCII and screen text",
            "FONT -gnu-unifont-medium-r-normal--16-160-75-75-c-80-iso10646-1",
            "SIZE 16 75 75", "FONTBOUNDINGBOX 16 16 0 -2", "STARTPROPERTIES 4",
            "FONT_ASCENT 14", "FONT_DESCENT 2", "DEFAULT_CHAR %d" % ord(BOX), 'CHARSET_REGISTRY "ISO10646"',
            "ENDPROPERTIES", "CHARS %d" % len(glyphs)]
    body = [line for g in glyphs for line in g]
    return "\n".join(head + body + ["ENDFONT"]) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m duelclock_desk.mkfont", description=__doc__.split("\n")[0])
    p.add_argument("--pcf", default=PCF, help="unifont PCF (gzip or plain); default %(default)s")
    p.add_argument("--ttf", default=TTF, help="the digits' TrueType font; default %(default)s")
    p.add_argument("--out", default=os.path.dirname(duelclock.__file__),
                   help="folder for font_ko.py, font_ko.bdf and font_digits.py; default the "
                   "firmware package")
    a = p.parse_args(argv)
    if not os.path.exists(a.pcf):
        sys.stderr.write("mkfont: %s not found (apt-get install -y xfonts-unifont)\n" % a.pcf)
        return 2
    if not os.path.exists(a.ttf):
        sys.stderr.write("mkfont: %s not found (apt-get install -y fonts-dejavu-core)\n" % a.ttf)
        return 2
    with open(a.pcf, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    pcf = Pcf(data)
    chars = screen_chars()
    codes, widths, glyphs, missing = build(pcf, chars)
    if missing:
        sys.stderr.write("mkfont: not in the font (drawn as boxes): %s\n" % "".join(missing))
    with open(os.path.join(a.out, "font_ko.py"), "w") as f:
        f.write(font_py(codes, widths, glyphs, "core/lang.py and core/catalogue.py"))
    with open(os.path.join(a.out, "font_ko.bdf"), "w") as f:
        f.write(font_bdf(pcf, [chr(c) for c in codes]))
    text, digit_bytes = digits_py(a.ttf)
    with open(os.path.join(a.out, "font_digits.py"), "w") as f:
        f.write(text)
    print("mkfont: %d glyphs, %d bytes of bitmaps; %d digit cells, %d bytes -> %s" % (
        len(codes), len(glyphs) + 3 * len(codes),
        len(DIGIT_CHARS) * len(DIGIT_SCALES) + len(SEG_CHARS) * len(SEG_SCALES),
        digit_bytes, a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
