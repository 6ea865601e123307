# duelclock.core: the pure heart (rules engine, match record, sheet, catalogue).
# Imports nothing but `micropython` and its own modules; runs unchanged on MicroPython,
# CircuitPython and CPython.
