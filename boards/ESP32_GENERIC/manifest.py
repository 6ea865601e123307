# Frozen MicroPython build for ESP32_GENERIC (paths relative to this file):
#   make -C micropython/ports/esp32 BOARD=ESP32_GENERIC FROZEN_MANIFEST=$PWD/boards/ESP32_GENERIC/manifest.py
# The esp32 port's manifest already freezes asyncio, bundle-networking and umqtt.simple.
include("$(PORT_DIR)/boards/manifest.py")
require("ssd1306")                              # micropython-lib's SSD1306 driver
include("../firmware_manifest.py", renderer="fb")     # the firmware, as a framebuf board needs it
module("board.py")
