# CircuitPython runs this once at power-on, before USB starts (ADAFRUIT_FEATHER_ESP32S3_REVERSE_TFT).
#   - a second USB CDC port for the desk link (board.open_serial uses usb_cdc.data);
#   - the flash writable by the firmware, for the journal (and for deploys over the REPL);
#     the computer then sees CIRCUITPY read-only. Hold D2 while powering on to keep the
#     drive writable from the computer instead (to copy files by hand).
import board
import digitalio
import storage
import usb_cdc

usb_cdc.enable(console=True, data=True)

_d2 = digitalio.DigitalInOut(board.D2)
_d2.switch_to_input(pull=digitalio.Pull.DOWN)
if not _d2.value:
    storage.remount("/", readonly=False)
_d2.deinit()
