# No frozen build: this board runs CircuitPython, which has no MicroPython frozen manifest
# (freezing means building CircuitPython itself). The firmware is copied to the CIRCUITPY
# drive instead:
#   lib/duelclock/...          firmware/duelclock as copies (or .mpy from CircuitPython's
#                              own mpy-cross: its .mpy format differs from MicroPython's)
#   lib/adafruit_display_text/ lib/adafruit_max1704x.mpy and their dependencies, from the
#                              Adafruit CircuitPython bundle (`circup install
#                              adafruit_display_text adafruit_max1704x`)
#   duelclock_board.py         this folder's board.py, renamed: `board` is a built-in module
#   boot.py                    this folder's boot.py (USB CDC data port, writable flash)
#   code.py                    the launcher: import duelclock_board; app.main(duelclock_board)
