"""Golden-image helpers for the screen tests (test_golden_fb.py, test_golden_dio.py)."""
import os

from PIL import Image, ImageChops

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "tests", "golden")
DIFF = os.path.join(ROOT, "out", "golden")          # what a failing test drew, to look at
UPDATE = os.environ.get("DUELCLOCK_UPDATE_GOLDEN") == "1"
FIRMWARE = os.path.join(ROOT, "firmware", "duelclock")


def ensure_font():
    """Build font_ko.py/.bdf and font_digits.py (build products) when missing or older
    than their sources."""
    from duelclock_desk import mkfont
    made = [os.path.join(FIRMWARE, f) for f in ("font_ko.py", "font_ko.bdf", "font_digits.py")]
    sources = [os.path.join(FIRMWARE, "core", "lang.py"), os.path.join(FIRMWARE, "core", "catalogue.py"),
               mkfont.__file__]
    if all(os.path.exists(m) for m in made):
        oldest = min(os.path.getmtime(m) for m in made)
        if all(os.path.getmtime(s) <= oldest for s in sources):
            return
    assert mkfont.main([]) == 0


def compare(img, name):
    """Pixel-exact comparison with tests/golden/NAME (or rewrite it when UPDATE)."""
    path = os.path.join(GOLDEN, name)
    if UPDATE:
        os.makedirs(GOLDEN, exist_ok=True)
        img.save(path)
        return
    assert os.path.exists(path), "no golden %s: run with DUELCLOCK_UPDATE_GOLDEN=1 and look at it" % name
    want = Image.open(path)
    if want.mode != img.mode or want.size != img.size:
        raise AssertionError("%s: %s %s, golden %s %s" % (name, img.mode, img.size, want.mode, want.size))
    diff = ImageChops.difference(want.convert("RGB"), img.convert("RGB"))
    box = diff.getbbox()
    if box is not None:
        os.makedirs(DIFF, exist_ok=True)
        img.save(os.path.join(DIFF, name))
        changed = sum(1 for p in diff.getdata() if p != (0, 0, 0))
        raise AssertionError("%s: %d pixels differ within %s (drawn: out/golden/%s)" % (name, changed, box, name))
