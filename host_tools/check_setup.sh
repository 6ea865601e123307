#!/bin/sh
# The last step of `make setup`: what the tests, the demo and the bench need from Debian, each
# looked for where the code that uses it looks. Prints every piece still missing with the
# package that brings it and exits 1; prints "setup check: ok" and exits 0 when none is.
# SBIN, CHROMIUM, UNIFONT and DIGITS_TTF say where Debian puts the daemons, the browser and
# the fonts (mkfont.PCF, mkfont.TTF); a test points them elsewhere to play a bare machine.
SBIN=${SBIN:-/usr/sbin}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
UNIFONT=${UNIFONT:-/usr/share/fonts/X11/misc/unifont.pcf.gz}
DIGITS_TTF=${DIGITS_TTF:-/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf}
missing=0

lack() {
    echo "setup check: missing $1"
    missing=1
}

on_path() {
    command -v "$1" >/dev/null 2>&1 || [ -x "$SBIN/$1" ]
}

[ -n "$(fc-list :lang=ko family 2>/dev/null)" ] ||
    lack "a Hangul font for the dashboard's browser (fc-list :lang=ko is empty; fonts-nanum)"
[ -e "$UNIFONT" ] ||
    lack "the unifont bitmaps the board's Hangul font is built from (xfonts-unifont)"
[ -e "$DIGITS_TTF" ] ||
    lack "the typeface the board's large digits are built from (fonts-dejavu-core)"
on_path mosquitto || lack "the MQTT broker mosquitto (mosquitto)"
[ -x "$CHROMIUM" ] || lack "the browser $CHROMIUM for the dashboard tests (chromium)"
on_path chronyd || lack "chronyd, the bench's sync reference (chrony)"
on_path pdftotext || lack "pdftotext for the printed LP sheet's test (poppler-utils)"

if [ "$missing" = 0 ]; then
    echo "setup check: ok"
fi
exit "$missing"
