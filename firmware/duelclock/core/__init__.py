# duelclock.core: the pure heart (rules engine, match record, sheet, catalogue).
# Imports nothing but `micropython` and its own modules; runs unchanged on MicroPython,
# CircuitPython and CPython.
#
# `const` for the modules' private constants (_STATE_MS = const(5000), `from . import const`):
# mpy-cross compiles such a name into the code that reads it and keeps no module name for
# it on a board; on plain CPython (no Blinka shim) it is the number itself.
try:
    from micropython import const
except ImportError:
    def const(x):
        return x
