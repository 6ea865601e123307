# Frozen MicroPython build for RPI_PICO_W (paths relative to this file):
#   make -C micropython/ports/rp2 BOARD=RPI_PICO_W FROZEN_MANIFEST=$PWD/boards/RPI_PICO_W/manifest.py
include("$(PORT_DIR)/boards/manifest.py")       # the rp2 port's own frozen modules (asyncio, ...)
require("bundle-networking")                    # what the stock Pico W image freezes
require("umqtt.simple")                         # the MQTT link
include("../firmware_manifest.py", renderer="fb")     # the firmware, as a framebuf board needs it
module("board.py")
