# CircuitPython runs this once at power-on, before USB starts (ADAFRUIT_FEATHER_ESP32S3_REVERSE_TFT).
# During play the USB port is a door to keep shut (app.py): only the second USB CDC port, the
# desk link (board.open_serial uses usb_cdc.data), is on; no console (so no REPL and no Ctrl-C
# from the computer) and the flash writable by the firmware only, for the journal (the
# computer sees no drive). Maintenance: hold D0 and D2 while powering on; the console and
# the drive (writable from the computer) stay, and the app asks for the desk's one-time code
# before it lets them be (any other answer resets the board into play).
import board
import digitalio
import storage
import usb_cdc


def _level(pin, pull):
    io = digitalio.DigitalInOut(pin)
    io.switch_to_input(pull=pull)
    level = io.value
    io.deinit()
    return level


_maintenance = not _level(board.D0, digitalio.Pull.UP) and _level(board.D2, digitalio.Pull.DOWN)
usb_cdc.enable(console=_maintenance, data=True)
if not _maintenance:
    storage.disable_usb_drive()
    storage.remount("/", readonly=False)
