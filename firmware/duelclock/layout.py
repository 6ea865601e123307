# Where everything goes on a screen: a core.view.Screen laid out on a canvas. Pure: the
# renderers (render_fb on framebuf, render_dio on displayio) supply the canvas and the sizes,
# so both displays show the same layout from the same code.
#
# Layouts are stacks of blocks, top to bottom:
#   home/pre:  status | CLOCK | banner | check-in lines | names + wins | LP A  LP B | turn
#   menus etc: title ... clock | banner | body lines (cursor line inverted)
#   entry:     title ... clock | banner | name | before -/+ amount | = NEW TOTAL | other player
#   pattern:   the self-test's colour bars | lines a pixel apart
# When a stack is taller than the display, the sizes' SHRINK steps apply in order (a smaller
# clock, secondary blocks left out) until it fits; spare height is spread between the blocks.
# A message is an overlay bar across the middle; flash inverts every colour; dim greys the
# secondary text (the app also lowers the backlight).
#
# The canvas: w, h, mono; fill(c), fill_rect(x, y, w, h, c), rect(x, y, w, h, c),
# hline(x, y, w, c); text(s, x, y, scale, c, max_w=0, line_h=0, tight=False) -> x after
# (glyphs centred in line_h, cut at max_w); width(s, scale, tight=False), height(s, scale),
# fit(s, scale, max_w, tight=False) -> the largest scale <= scale that fits. Scales are whole
# numbers; `tight` packs digits closer where the font allows; CLOCK_FACE (2) packs them as
# tight and draws them in the canvas's clock face if it has one (render_fb: seven segments).
# The sizes: a class of scales per block, pad, pip and the SHRINK steps (render_fb._Big).
# The home screen's banner takes two lines at most on every display (SHRINK's banner1: one).

from micropython import const

from .core.view import FIELDS

# colour slots (private consts); a renderer's palette gives each slot a colour of its display
_BG = const(0)
_FG = const(1)
_SEC = const(2)
_GREY = const(3)
_AMBER = const(4)
_RED = const(5)
_INFO = const(6)
_GOLD = const(7)
_INK = const(8)
_NCOL = const(9)
_BANNER_LINES = const(2)
CLOCK_FACE = const(2)           # text()'s `tight` for the round and turn clocks (see above)
# the slots as RGB888, for colour displays
RGB = ((0, 0, 0), (255, 255, 255), (130, 130, 130), (130, 130, 130), (255, 168, 0),
       (230, 0, 0), (40, 80, 200), (255, 220, 0), (0, 0, 0))
# clock_style -> (bar, text) for the round clock and the banner; -1: no bar. On a mono
# display every bar is simply inverted (_INK text).
CLOCK_LOOK = {"normal": (-1, _FG), "last5": (_AMBER, _INK), "time": (-1, _RED), "over": (-1, _GREY)}
BANNER_LOOK = {"time": (_RED, _FG), "over": (_GOLD, _INK)}     # any other banner: _INFO bar


def _bit(name):
    return 1 << FIELDS.index(name)


# The values a frame changes by itself or with a key on the LP path, each drawn in a field
_CLOCK = _bit("clock")
_STATUS = _bit("status")
_LP = _bit("lp")
_TURN = _bit("turn") | _bit("turn_clock") | _bit("turn_long")
_ENTRY = _bit("entry")
_TITLE = _bit("title")          # a field in the entry's one-line header: a held key's hint
_NOT_SHOWN = _STATUS | _LP | _TURN          # screens with a header: values they do not show
_I_CLOCK = FIELDS.index("clock")
_I_STATUS = FIELDS.index("status")
_I_ENTRY = FIELDS.index("entry")


_ENC = [None] * 8      # the last four texts compared and their UTF-8: a field's text of the
_ENC_AT = [0]          # last frame is its text now, once made again


def _utf8(text):
    e = _ENC
    for i in range(0, 8, 2):
        if e[i] is text:
            return e[i + 1]
    b = text.encode()
    i = _ENC_AT[0]
    e[i] = text
    e[i + 1] = b
    _ENC_AT[0] = (i + 2) & 7
    return b


def same_shape(a, b):
    """Do strings a and b take the same room in every font and scale (the same layout):
    as long, their spaces in the same places, and where they differ both printable ASCII
    (one advance each, 8x8 and Unifont alike). "44:59" and "44:58" do; "10:00" and "9:59"
    do not."""
    if a == b:
        return True
    if a is None or b is None or len(a) != len(b):
        return False
    a = _utf8(a)                # bytes: walking a str makes a string per character
    b = _utf8(b)
    if len(a) != len(b):        # not ASCII (and different)
        return False
    for i in range(len(a)):
        x = a[i]
        y = b[i]
        if x != y and not (0x20 < x < 0x7f and 0x20 < y < 0x7f):
            return False
    return True


class Layout:
    """draw(screen) on `canvas` with `sizes`; `palette` holds the _NCOL slot colours and
    `invert` is what a colour is XORed with when the screen flashes.

    A retained screen: draw() lays the whole screen out and keeps, beside what each Screen
    field held, the fields that show the values a tick or an LP key changes (the round
    clock, the status line, the turn and its clock, LP, the LP entry): each a record
    [values mask, draw(s, geometry), ok(s, geometry), geometry, the canvas's handle].
    update(s) then compares the Screen with what is shown, field by field. When only such
    values changed and each still takes the room it took (ok: the same shape of text, the
    same row heights), it draws those fields alone, where they are, into the canvas's slot
    for each (canvas.redo(handle) ... canvas.done(handle)), and the screen equals what a
    whole draw paints. Anything else (a menu, a banner, a message, a clock from 10:00 to
    9:59) returns False: the caller draws whole."""

    def __init__(self, canvas, sizes, palette, invert):
        self.c = canvas
        self.z = sizes
        self.w = canvas.w
        self.h = canvas.h
        self.base = tuple(palette)
        self.xor = invert
        self.col = list(self.base)
        # (scale, tight) of the LP entry's rows: the name, the sum, the total
        self.looks = ((sizes.body, False), (sizes.body, True), (sizes.total, True))
        self._rows_of = None        # the last entry text cut into _rows
        self._rows = ["", "", ""]
        self._row_geo = [None] * 12     # each entry row: its text, scale, height, x
        self._boxes = [None] * 10   # _wrap_box's last two: text, scale, max_w, max_h, answer
        self.last = None            # the Screen as drawn, field by field (FIELDS' order)
        self.fields = []
        self.claimed = 0            # the FIELDS bits some field draws

    # --- entry points --------------------------------------------------------------------

    def update(self, s):
        """Draw only the fields whose values changed since the last draw or update: True;
        False when anything else changed (the caller then calls draw)."""
        last = self.last
        if last is None:
            return False
        changed = 0
        for i in range(len(FIELDS)):
            if getattr(s, FIELDS[i]) != last[i]:
                changed |= 1 << i
        if changed & ~self.claimed:
            return False
        if not changed:
            return True
        for rec in self.fields:
            if rec[0] & changed and not rec[2](s, rec[3]):
                return False
        c = self.c
        for rec in self.fields:
            if rec[0] & changed:
                c.redo(rec[4])
                rec[1](s, rec[3])
                if not c.done(rec[4]):          # the canvas had no room: draw whole
                    self.last = None
                    return False
        for i in range(len(FIELDS)):
            if changed & 1 << i:
                last[i] = getattr(s, FIELDS[i])
        return True

    def draw(self, s):
        """Lay the whole of `s` out and draw it."""
        self.fields = []
        self.claimed = 0
        self._draw(s)
        last = []
        for f in FIELDS:
            v = getattr(s, f)
            last.append(v[:] if type(v) is list else v)    # a Ui's list may change later
        self.last = last

    def _field(self, mask, draw, ok, g, s):
        """Draw draw(s, g) now as a field showing the values `mask`: update() may draw it
        again alone when ok(s, g) says it still takes the same room."""
        c = self.c
        h = c.begin()
        draw(s, g)
        self.fields.append([mask, draw, ok, g, c.end(h)])
        self.claimed |= mask

    def _draw(self, s):
        col = self.col
        x = self.xor if s.flash else 0
        for i in range(_NCOL):
            col[i] = self.base[i] ^ x
        if not s.dim:
            col[_SEC] = col[_FG]
        self.c.fill(col[_BG])
        if s.mode in ("home", "pre"):
            self._home(s)
        elif s.mode == "entry":
            self._entry(s)
            self.claimed |= _NOT_SHOWN
        elif s.mode == "pattern":
            self._pattern()
            self.claimed |= _NOT_SHOWN | _CLOCK
        else:
            self._body(s)
            self.claimed |= _NOT_SHOWN
        if s.message:
            self._message(s.message)

    # --- the self-test's pattern -------------------------------------------------------

    def _pattern(self):
        # A bar of each palette colour (but _INK, _BG's twin), then lines a pixel apart in
        # the foreground: a dead colour channel, a stuck pixel row or a weak contrast shows.
        c, base = self.c, self.base
        n = _INK
        bar = self.w // (n + 1)
        for i in range(n):
            c.fill_rect(i * bar, 0, bar, self.h, base[i])
        for y in range(0, self.h, 2):
            c.hline(n * bar, y, self.w - n * bar, base[_FG])

    # --- home --------------------------------------------------------------------------

    def _home(self, s):
        z, c, W = self.z, self.c, self.w
        inner = W - 2 * z.pad
        ss = z.status if s.turn else z.status_idle
        cs = z.clock
        nb = _BANNER_LINES
        lp = s.lp is not None and not s.lines
        show = {"status": True, "lines": bool(s.lines), "names": lp, "turn": bool(s.turn),
                "banner": bool(s.banner)}
        for step in z.shrink + (None,):
            blocks = []
            if show["status"]:
                st = c.fit(s.status, ss, inner)
                text = self._cut_words(s.status, st, inner)
                blocks.append(("status", c.height(text, st), (text, st, ss)))
            if s.clock:
                cs = c.fit(s.clock, cs, inner, CLOCK_FACE)
                blocks.append(("clock", c.height(s.clock, cs) + 2 * z.pad, cs))
            if show["banner"]:
                bs, lines = self._wrap(s.banner, z.banner, inner - 2 * z.pad, nb)
                blocks.append(("banner", self._lines_h(lines, bs) + 2 * z.pad, (bs, lines)))
            if show["lines"]:
                for line in s.lines:
                    blocks.append(("line", c.height(line, z.body), line))
            if show["names"]:
                blocks.append(("names", c.height(s.names[0] + s.names[1], z.names), None))
            if lp:
                blocks.append(("lp", c.height("0", z.lp), None))
            if show["turn"]:
                blocks.append(("turn", c.height(s.turn, z.turn), None))
            total = 0
            for b in blocks:
                total += b[1]
            if total <= self.h or step is None:
                break
            if step == "clock":
                cs -= 1
            elif step == "status1":
                ss = 1
            elif step == "banner1":
                nb = 1
            else:
                show[step] = False
        if not show["status"]:      # shrunk away: what it says changes nothing shown
            self._field(_STATUS, self._nothing, self._status_ok, None, s)
        if s.turn and not show["turn"]:
            self._field(_TURN, self._nothing, self._turn_ok, (0, c.height(s.turn, z.turn)), s)
        gap = max(0, (self.h - total) // (len(blocks) + 1))
        trim = 0 if gap else 1      # blocks touch: leave each bar's last row dark, as a rule
        y = gap
        col = self.col
        for name, h, data in blocks:
            if name == "status":
                self._field(_STATUS, self._status_field, self._status_ok, (y, h, data[1], data[2]),
                            s)
            elif name == "clock":
                self._field(_CLOCK, self._clock_field, self._clock_ok, (0, y, W, h, data, trim), s)
            elif name == "banner":
                self._banner(s, data[1], data[0], y, h, trim)
            elif name == "line":
                self._centre(data, 0, y, W, z.body, col[_FG])
            elif name == "names":
                self._names(s, y, h)
            elif name == "lp":
                self._field(_LP, self._lp_field, self._lp_ok, y, s)
            else:
                self._field(_TURN, self._turn_field, self._turn_ok, (y, h), s)
            y += h + gap

    # the home screen's fields: draw(s, g) and ok(s, g), g their geometry from _home

    def _status_field(self, s, g):
        inner = self.w - 2 * self.z.pad
        self.c.text(self._cut_words(s.status, g[2], inner), self.z.pad, g[0], g[2], self.col[_SEC],
                    inner, g[1])

    def _status_ok(self, s, g):
        """The same shape, or (shown) another text of the same scale and height: a held
        key's hint and the sync's age take the status line's room as it is."""
        if same_shape(s.status, self.last[_I_STATUS]):
            return True
        if g is None:
            return False
        inner = self.w - 2 * self.z.pad
        st = self.c.fit(s.status, g[3], inner)
        return st == g[2] and self.c.height(self._cut_words(s.status, st, inner), st) == g[1]

    def _clock_field(self, s, g):
        self._clock(s, g[0], g[1], g[2], g[3], g[4], g[5])

    def _clock_ok(self, s, g):
        return same_shape(s.clock, self.last[_I_CLOCK])

    def _lp_field(self, s, y):
        W = self.w
        for i in (0, 1):
            self._centre(str(s.lp[i]), i * W // 2, y, W // 2, self.z.lp, self.col[_FG], 0, True)

    def _lp_ok(self, s, y):
        return s.lp is not None

    def _turn_field(self, s, g):
        self._turn(s, g[0], g[1])

    def _turn_ok(self, s, g):
        return s.turn and self.c.height(s.turn, self.z.turn) == g[1]

    def _nothing(self, s, g):
        pass

    def _clock(self, s, x, y, w, h, scale, trim=0):
        """The round clock centred in (x, y, w, h), styled by CLOCK_LOOK (a bar in the last
        5 minutes, red once time is called, grey when the match is over)."""
        col = self.col
        bar, fg = CLOCK_LOOK[s.clock_style]
        if bar >= 0:
            self.c.fill_rect(x, y, w, h - trim, col[bar])
            if self.c.mono:
                fg = _INK
        tw = self.c.width(s.clock, scale, CLOCK_FACE)
        self.c.text(s.clock, x + (w - tw) // 2, y, scale, col[fg], 0, h, CLOCK_FACE)

    def _banner(self, s, lines, scale, y, h, trim=0):
        col = self.col
        bar, fg = BANNER_LOOK.get(s.clock_style, (_INFO, _FG))
        if self.c.mono:
            fg = _INK
        self.c.fill_rect(0, y, self.w, h - trim, col[bar])
        y += self.z.pad
        for line in lines:
            lh = self.c.height(line, scale)
            self._centre(line, 0, y, self.w, scale, col[fg], lh)
            y += lh

    def _names(self, s, y, h):
        """Each name centred over its LP, a square after it per duel won."""
        z, c = self.z, self.c
        half = self.w // 2
        for i in (0, 1):
            n = s.names[i]
            wins = s.wins[i]
            step = z.pip + z.pip // 2
            pips = wins * step
            room = half - pips - 2 * z.pad
            sc = c.fit(n, z.names, room)
            x = i * half + (half - min(c.width(n, sc), room) - pips) // 2
            x = c.text(n, x, y, sc, self.col[_SEC], room, h)
            for k in range(wins):
                c.fill_rect(x + z.pip // 2 + k * step, y + (h - z.pip) // 2, z.pip, z.pip, self.col[_FG])

    def _turn(self, s, y, h):
        """'Turn 3 B' left, the turn clock right (in a bar past 3:00); the glyphs' blank
        first and last columns are the margins at the screen's edges."""
        z, c, col = self.z, self.c, self.col
        tw = c.width(s.turn_clock, z.turn, CLOCK_FACE)
        cw = tw + (2 * z.pad + 4 if s.turn_long else 0)
        cx = self.w - cw
        fg = col[_SEC]
        if s.turn_long:
            c.fill_rect(cx, y, cw, h, col[_AMBER])
            fg = col[_INK]
        c.text(s.turn_clock, cx + (cw - tw) // 2, y, z.turn, fg, 0, h, CLOCK_FACE)
        room = cx - c.width(" ", z.turn) // 2
        c.text(s.turn, 0, y, c.fit(s.turn, z.turn, room), col[_SEC], room, h)

    # --- menus, record, confirmations, PIN, numbers ---------------------------------------

    def _header(self, s, title_lines=2):
        """Title left, the round clock right (styled), a rule, and the banner in a thin bar
        below. The title gets the height of two small lines (title_lines 2) or one line;
        when that is not enough beside the clock (an instruction such as 'A and B: press
        your key'), it takes the whole width and the clock stays off this screen.
        Returns the y below the header."""
        z, c, col, W = self.z, self.c, self.col, self.w
        hs = z.header
        one = c.height("0", 1)
        max_h = max(2 * one if title_lines > 1 else c.height("0", hs), c.height(s.title, 1))
        cw = c.width(s.clock, hs, CLOCK_FACE) + 2 * z.pad + 2 if s.clock else 0
        room = W - cw - z.pad - 4
        ts, title = self._wrap_box(s.title, hs, room, max_h)
        if cw and title_lines > 1 and not self._whole(s.title, title, ts, room):
            cw = 0
            room = W - 2 * z.pad
            ts, title = self._wrap_box(s.title, hs, room, max_h)
        h = max(c.height("0", hs), self._lines_h(title, ts))
        if cw:
            self._field(_CLOCK, self._clock_field, self._clock_ok, (W - cw, 0, cw, h, hs, 0), s)
        else:                       # the clock's room went to the title: it shows no clock
            self._field(_CLOCK, self._nothing, self._clock_ok, None, s)
        y = (h - self._lines_h(title, ts)) // 2
        if title_lines == 1 and len(title) == 1:        # the entry's hint: a field
            g = (y, ts, room, c.height(title[0], ts), hs, max_h)
            self._field(_TITLE, self._title_field, self._title_ok, g, s)
        else:
            for line in title:
                lh = c.height(line, ts)
                c.text(line, z.pad, y, ts, col[_SEC], room, lh)
                y += lh
        c.hline(0, h, W, col[_GREY])
        y = h + 2
        if s.banner:
            bs, lines = self._wrap(s.banner, 1, W - 2 * z.pad, 1)
            bh = self._lines_h(lines, bs) + 2
            self._banner(s, lines, bs, y, bh)
            y += bh + 1
        return y

    # the one-line title's field: g is (y, scale, room, line height, class scale, max height)

    def _title_field(self, s, g):
        self.c.text(self._wrap_box(s.title, g[4], g[2], g[5])[1][0], self.z.pad, g[0], g[1],
                    self.col[_SEC], g[2], g[3])

    def _title_ok(self, s, g):
        ts, lines = self._wrap_box(s.title, g[4], g[2], g[5])
        return ts == g[1] and len(lines) == 1 and self.c.height(lines[0], ts) == g[3]

    def _body(self, s):
        """Rows of lines. In a menu the cursor row is inverted and shows its whole label
        (on two lines if it must); other rows are cut. Elsewhere each line is scaled to fit,
        and a list longer than the screen shows its end (the record scrolls from there)."""
        z, c, col = self.z, self.c, self.col
        top = self._header(s)
        scale = z.body_big if s.mode in ("pin", "number") else z.body
        lines = s.lines
        if not lines:
            return
        row = 0
        for line in lines:
            row = max(row, c.height(line, scale))
        row += 2
        arrow = c.width("^", 1)
        room = self.w - 2 * z.pad - arrow
        rows = max(1, (self.h - top) // row)
        if s.cursor >= 0:
            cs, label = self._wrap(lines[s.cursor], scale, room, 2)
            n = max(1, rows - len(label) + 1)       # items on screen
            first = max(0, min(s.cursor - n // 2, len(lines) - n))
        else:
            n = rows
            first = max(0, len(lines) - n)
        y = top
        for i in range(first, min(len(lines), first + n)):
            if i == s.cursor:
                h = row * len(label)
                c.fill_rect(0, y, self.w, h, col[_FG])
                ly = y + 1
                for part in label:
                    c.text(part, z.pad, ly, cs, col[_BG], room, row - 2)
                    ly += row
                y += h
                continue
            line = lines[i]
            sc = scale if s.cursor >= 0 else c.fit(line, scale, room)
            c.text(line, z.pad, y + 1, sc, col[_FG], room, row - 2)
            y += row
        ax = self.w - arrow + 1                 # the glyph's blank column off the edge
        if first > 0:
            c.text("^", ax, top, 1, col[_SEC])
        if first + n < len(lines):
            c.text("v", ax, self.h - c.height("v", 1), 1, col[_SEC])

    def _entry(self, s):
        """The LP entry: 'Name: 8000 - 1500 = 6500' as name, sum and a large new total (a
        field: the rows of the entry); the other player's pending change below."""
        z, c, col, W = self.z, self.c, self.col, self.w
        y = self._header(s, 1)                  # the title is a hint here: one line
        room = W - 2 * z.pad
        rows = []
        for line in s.lines:
            sc, lines = self._wrap(line, z.body, room, 2)
            rows.append((sc, lines))
        heights = self._entry_heights(s)
        need = heights[0] + heights[1] + heights[2]
        for sc, lines in rows:
            for line in lines:
                need += c.height(line, c.fit(line, sc, room))
        gap = max(0, (self.h - y - need) // (len(rows) + 4))
        y += gap
        self._field(_ENTRY, self._entry_field, self._entry_ok, (y, gap, heights), s)
        y += heights[0] + heights[1] + heights[2] + 3 * gap
        for sc, lines in rows:
            for line in lines:
                fs = c.fit(line, sc, room)
                self._centre(line, 0, y, W, fs, col[_FG])
                y += c.height(line, fs)
            y += gap

    def _entry_rows(self, s):
        """The entry's three rows, 'Name: 8000 - 1500 = 6500' cut into the name, the sum and
        '= 6500' (a list of the layout's, made again in place); drawn at the scales and
        tightness of `looks`. A row that reads as before is the string shown before: a key's
        frame makes a string only for the rows it changed."""
        e = s.entry
        rows = self._rows
        if e is self._rows_of:
            return rows
        i = e.rfind(" = ")                  # none: all of it is the total
        j = e.find(": ", 0, i) if i >= 0 else -1    # none: what is before " = " is row 0
        self._row(0, e, 0, j if j >= 0 else max(i, 0))
        self._row(1, e, j + 2 if j >= 0 else 0, i if j >= 0 else 0)
        self._row(2, e, i + 1 if i >= 0 else 0, len(e))
        self._rows_of = e
        return rows

    def _row(self, k, e, a, b):
        rows = self._rows
        if len(rows[k]) != b - a or not e.startswith(rows[k], a):
            rows[k] = e[a:b]

    def _entry_heights(self, s):
        """The heights of the entry's three rows as drawn."""
        rows = self._entry_rows(s)
        geo = self._row_geo
        out = [0, 0, 0]                 # not a comprehension: that is a closure made per call
        for i in range(3):
            out[i] = geo[self._measure(i, rows[i]) + 2]
        return out

    def _measure(self, i, line):
        """Row i showing `line`: its scale, height and x in _row_geo from the index it
        returns (its text before them), measured once a text."""
        geo = self._row_geo
        j = 4 * i
        if geo[j] is not line:
            c = self.c
            sc, tight = self.looks[i]
            fs = c.fit(line, sc, self.w - 2 * self.z.pad, tight)
            geo[j] = line
            geo[j + 1] = fs
            geo[j + 2] = c.height(line, fs)
            geo[j + 3] = max(0, (self.w - c.width(line, fs, tight)) // 2)
        return j

    def _entry_field(self, s, g):
        c = self.c
        y, gap = g[0], g[1]
        fg = self.col[_FG]
        rows = self._entry_rows(s)
        geo = self._row_geo
        for i in range(3):
            line = rows[i]
            j = self._measure(i, line)
            h = geo[j + 2]
            c.text(line, geo[j + 3], y, geo[j + 1], fg, self.w, h, self.looks[i][1])
            y += h + gap

    def _entry_ok(self, s, g):
        return same_shape(s.entry, self.last[_I_ENTRY]) or (
            s.entry is not None and self._entry_heights(s) == g[2])

    # --- overlay -----------------------------------------------------------------------

    def _message(self, text):
        """The message in a framed bar across the middle, over whatever is there."""
        z, col, W = self.z, self.col, self.w
        m = 2 * z.pad + 2
        sc, lines = self._wrap(text, z.message, W - 2 * m - 4, 4)
        h = self._lines_h(lines, sc) + 6
        y = (self.h - h) // 2
        self.c.fill_rect(m, y, W - 2 * m, h, col[_FG])
        self.c.rect(m + 1, y + 1, W - 2 * m - 2, h - 2, col[_BG])
        y += 3
        for line in lines:
            lh = self.c.height(line, sc)
            self._centre(line, m, y, W - 2 * m, sc, col[_BG], lh)
            y += lh

    # --- text helpers --------------------------------------------------------------------

    def _centre(self, text, x, y, w, scale, color, line_h=0, tight=False):
        c = self.c
        sc = c.fit(text, scale, w, tight)
        tw = c.width(text, sc, tight)
        c.text(text, x + max(0, (w - tw) // 2), y, sc, color, w, line_h or c.height(text, scale), tight)

    def _cut_words(self, text, scale, max_w):
        """`text` without the trailing words that would not fit whole (a status line)."""
        while self.c.width(text, scale) > max_w and " " in text:
            text = text[:text.rindex(" ")]
        return text

    def _lines_h(self, lines, scale):
        h = 0
        for line in lines:
            h += self.c.height(line, scale)
        return h

    def _wrap(self, text, scale, max_w, max_lines):
        """(scale, lines): the largest scale <= `scale` at which `text` fits in max_lines
        lines of max_w, broken at spaces (two lines balanced); at scale 1 it is cut."""
        c = self.c
        while True:
            if c.width(text, scale) <= max_w:
                return scale, (text,)
            words = text.split(" ")
            lines = []
            cur = ""
            for word in words:
                cand = cur + " " + word if cur else word
                if cur and c.width(cand, scale) > max_w:
                    lines.append(cur)
                    cur = word
                else:
                    cur = cand
            lines.append(cur)
            ok = len(lines) <= max_lines
            for line in lines:
                ok = ok and c.width(line, scale) <= max_w
            if ok:
                if len(lines) == 2:
                    lines = self._balance(words, scale)
                return scale, lines
            if scale == 1:
                return 1, lines[:max_lines]
            scale -= 1

    def _whole(self, text, lines, scale, max_w):
        """Do `lines` (from _wrap) show all of `text`?"""
        if " ".join(lines) != text:
            return False
        for line in lines:
            if self.c.width(line, scale) > max_w:
                return False
        return True

    def _wrap_box(self, text, scale, max_w, max_h):
        """Like _wrap, but as many lines as max_h holds at each scale (a header). The last
        two answers are kept: a title's field asks ok, then draws, and a held key's hint
        and the title it covers take turns."""
        memo = self._boxes
        for i in (0, 5):
            if memo[i] is text and memo[i + 1] == scale and memo[i + 2] == max_w \
                    and memo[i + 3] == max_h:
                return memo[i + 4]
        got = self._wrap_box_new(text, scale, max_w, max_h)
        memo[5:10] = memo[0:5]
        memo[0] = text
        memo[1] = scale
        memo[2] = max_w
        memo[3] = max_h
        memo[4] = got
        return got

    def _wrap_box_new(self, text, scale, max_w, max_h):
        while True:
            sc, lines = self._wrap(text, scale, max_w, max(1, max_h // self.c.height(text, scale)))
            if sc == scale or scale == 1:
                return sc, lines
            scale -= 1

    def _balance(self, words, scale):
        """Two lines as even as the words allow."""
        best = None
        for i in range(1, len(words)):
            a = " ".join(words[:i])
            b = " ".join(words[i:])
            w = max(self.c.width(a, scale), self.c.width(b, scale))
            if best is None or w < best[0]:
                best = (w, a, b)
        return (best[1], best[2])
