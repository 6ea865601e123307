"""Headless Chromium for the dashboard's tests and bench: Debian's /usr/bin/chromium driven by
Playwright (never `playwright install`: no browser is downloaded), and a loose comparison of
screenshots with their goldens (fonts and clocks move a few pixels; a phase colour or a
layout change moves thousands)."""
import io
import os

from PIL import Image, ImageChops, ImageFilter

from tests.host.golden import DIFF, GOLDEN, UPDATE

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")   # elsewhere: a machine without it
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PIXEL_DIFF = 48            # a channel differing by more than this counts the pixel as changed
CHANGED_MAX = 0.012        # a screenshot may differ from its golden in this share of pixels
SHIFT_PX = 1
BLUR_PX = 1.5              # text laid out at another sub-pixel offset is drawn otherwise


async def launch(playwright):
    return await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)


def changed_share(a, b, shift=SHIFT_PX, enough=0.0):
    """Share of pixels of two same-size images, blurred by BLUR_PX, that differ by more than
    PIXEL_DIFF in some channel, at the best of the offsets up to `shift` pixels each way (a
    page laid out half a pixel lower moves everything by one). A tile changing colour is
    about 2% of a 1280x860 screenshot. Stops at the first offset whose share is <= enough."""
    a, b = (x.convert("RGB").filter(ImageFilter.GaussianBlur(BLUR_PX)) for x in (a, b))
    w, h = a.size
    best = 1.0
    offsets = [(0, 0)] + [(dx, dy) for dx in range(-shift, shift + 1)
                          for dy in range(-shift, shift + 1) if dx or dy]
    for dx, dy in offsets:
        box_a = (max(0, dx), max(0, dy), w + min(0, dx), h + min(0, dy))
        box_b = (max(0, -dx), max(0, -dy), w + min(0, -dx), h + min(0, -dy))
        r, g, bl = ImageChops.difference(a.crop(box_a), b.crop(box_b)).split()
        most = ImageChops.lighter(ImageChops.lighter(r, g), bl)
        changed = most.point(lambda v: 255 if v > PIXEL_DIFF else 0).histogram()[255]
        best = min(best, changed / (w * h))
        if best <= enough:
            break
    return best


def compare_loosely(png, name):
    """Screenshot `png` (bytes) against tests/golden/NAME, or rewrite it when
    DUELCLOCK_UPDATE_GOLDEN=1. The drawn image goes to out/golden/NAME either way."""
    img = Image.open(io.BytesIO(png))
    os.makedirs(DIFF, exist_ok=True)
    img.save(os.path.join(DIFF, name))
    path = os.path.join(GOLDEN, name)
    if UPDATE:
        img.save(path)
        return
    assert os.path.exists(path), \
        "no golden %s: run with DUELCLOCK_UPDATE_GOLDEN=1 and look at it" % name
    want = Image.open(path)
    # An element at a fractional offset is shot a pixel taller or wider, or not: its size
    # may differ by SHIFT_PX, and the two are compared over the common part.
    w, h = min(want.width, img.width), min(want.height, img.height)
    assert max(want.width, img.width) - w <= SHIFT_PX and max(want.height, img.height) - h \
        <= SHIFT_PX, "%s: %s, golden %s" % (name, img.size, want.size)
    share = changed_share(want.crop((0, 0, w, h)), img.crop((0, 0, w, h)), enough=CHANGED_MAX)
    assert share <= CHANGED_MAX, \
        "%s: %.2f%% of pixels differ from the golden (drawn: out/golden/%s)" % (
            name, share * 100, name)
