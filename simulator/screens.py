"""Framebuffers as pictures: what a simulated table shows, as PNG."""
from PIL import Image


def fb_to_image(raw, w, h, mono, swapped=False):
    """A MicroPython framebuffer as a Pillow image: MONO_VLSB (SSD1306) or RGB565, stored
    little-endian by framebuf, or high byte first (`swapped`) as the ST7789 boards draw it."""
    if mono:
        img = Image.new("1", (w, h))
        px = img.load()
        for y in range(h):
            page = (y >> 3) * w
            bit = 1 << (y & 7)
            for x in range(w):
                px[x, y] = 1 if raw[page + x] & bit else 0
        return img
    img = Image.new("RGB", (w, h))
    px = img.load()
    hi, lo = (0, 1) if swapped else (1, 0)
    for i in range(w * h):
        c = raw[2 * i + lo] | raw[2 * i + hi] << 8
        r, g, b = c >> 11, (c >> 5) & 63, c & 31
        px[i % w, i // w] = ((r * 527 + 23) >> 6, (g * 259 + 33) >> 6, (b * 527 + 23) >> 6)
    return img
