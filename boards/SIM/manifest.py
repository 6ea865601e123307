# A unix port with the firmware frozen in (paths relative to this file):
#   make -C micropython/ports/unix FROZEN_MANIFEST=$PWD/boards/SIM/manifest.py
# The simulator normally runs the sources instead: MICROPYPATH=firmware:boards/SIM:.frozen
include("$(PORT_DIR)/variants/standard/manifest.py")   # the standard variant's (asyncio)
require("umqtt.simple")
include("../firmware_manifest.py", renderer="fb")     # the firmware, as a framebuf board needs it
module("board.py")
