"""Headless Chromium for the dashboard's tests and bench: Debian's /usr/bin/chromium driven by
Playwright (never `playwright install`: no browser is downloaded), and the comparison of
screenshots with their goldens: what no two runs share is masked or fixed, and the rest must
match to the pixel but for anti-aliasing, so a changed digit fails."""
import io
import os

from PIL import Image, ImageChops

from tests.host.golden import DIFF, GOLDEN, UPDATE

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")   # elsewhere: a machine without it
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# What a page shows that differs from run to run, masked in every screenshot (Playwright
# paints each element's box in one colour): a table's link line (its sync age, real time)
# and its clock (the round's time left when the shot is taken), the links' URLs and the
# table page's link (free ports). The times of day (the round's start, the audit's) are
# fixed instead, by FIXED_TIME_JS, so that the text after them stays where it was.
VOLATILE = (".t-link", ".t-clock", "#links .chip", "#now dd >> nth=0")
FIXED_TIME_JS = "Date.prototype.toLocaleTimeString = function () { return '12:00:00'; };"
PIXEL_DIFF = 48            # a channel differing by more than this counts the pixel as changed
CHANGED_MAX_PX = 12        # pixels a screenshot may differ in; one digit changed: about 50
SHIFT_PX = 1               # an element at a fractional offset may be shot a pixel off


async def launch(playwright):
    return await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)


async def steady_page(browser, **options):
    """A new page whose times of day are fixed (FIXED_TIME_JS), for screenshots."""
    page = await browser.new_page(**options)
    await page.add_init_script(FIXED_TIME_JS)
    return page


def masks(page):
    return [page.locator(sel) for sel in VOLATILE]


def changed_pixels(a, b, shift=SHIFT_PX):
    """Pixels of two same-size images that differ by more than PIXEL_DIFF in some channel,
    at the best of the offsets up to `shift` pixels each way (a page laid out half a pixel
    lower moves everything by one)."""
    a, b = a.convert("RGB"), b.convert("RGB")
    w, h = a.size
    best = w * h
    offsets = [(0, 0)] + [(dx, dy) for dx in range(-shift, shift + 1)
                          for dy in range(-shift, shift + 1) if dx or dy]
    for dx, dy in offsets:
        box_a = (max(0, dx), max(0, dy), w + min(0, dx), h + min(0, dy))
        box_b = (max(0, -dx), max(0, -dy), w + min(0, -dx), h + min(0, -dy))
        r, g, bl = ImageChops.difference(a.crop(box_a), b.crop(box_b)).split()
        most = ImageChops.lighter(ImageChops.lighter(r, g), bl)
        best = min(best, most.point(lambda v: 255 if v > PIXEL_DIFF else 0).histogram()[255])
        if best <= CHANGED_MAX_PX:
            break
    return best


def compare_screenshot(png, name, golden_dir=GOLDEN):
    """Screenshot `png` (bytes, taken with masks(page)) against tests/golden/NAME, or rewrite
    it when DUELCLOCK_UPDATE_GOLDEN=1. The drawn image goes to out/golden/NAME either way."""
    img = Image.open(io.BytesIO(png))
    os.makedirs(DIFF, exist_ok=True)
    img.save(os.path.join(DIFF, name))
    path = os.path.join(golden_dir, name)
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
    changed = changed_pixels(want.crop((0, 0, w, h)), img.crop((0, 0, w, h)))
    assert changed <= CHANGED_MAX_PX, \
        "%s: %d pixels differ from the golden (at most %d; drawn: out/golden/%s)" % (
            name, changed, CHANGED_MAX_PX, name)
