# Frozen MicroPython build for ESP32_GENERIC (paths relative to this file):
#   make -C micropython/ports/esp32 BOARD=ESP32_GENERIC FROZEN_MANIFEST=$PWD/boards/ESP32_GENERIC/manifest.py
# The esp32 port's manifest already freezes asyncio, bundle-networking and umqtt.simple.
include("$(PORT_DIR)/boards/manifest.py")
require("ssd1306")                              # micropython-lib's SSD1306 driver
package("duelclock", base_path="../../firmware", opt=3)   # deploy.MPY_OPT says why
module("board.py")
