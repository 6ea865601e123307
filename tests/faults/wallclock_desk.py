"""`duelclock ARGS` with the wall clock of the desk's process stepped by hand: the desk
machine's clock jumping (NTP, a judge fixing the time) without touching the machine's.

    python tests/faults/wallclock_desk.py STEP_FILE desk --key ... (duelclock's arguments)

STEP_FILE's first 8 bytes are a double: ms added to the wall clock, read at every call (the
test writes it while the desk runs). What is stepped is what a real step moves: time.time()
and time.time_ns() (CLOCK_REALTIME), through which the desk reads the wall clock
(desk_time.unix_ms, commands.parse_at). time.monotonic() (CLOCK_MONOTONIC) is left alone, as the kernel leaves it.
Patching the process rather than adding a hook to the desk keeps the desk's code as it ships.
"""
import mmap
import struct
import sys
import time


def step_wall_clock(step_file):
    with open(step_file, "r+b") as f:
        step = mmap.mmap(f.fileno(), 8)
    real_time, real_time_ns = time.time, time.time_ns

    def stepped_ms():
        return struct.unpack("d", step)[0]

    time.time = lambda: real_time() + stepped_ms() / 1000.0
    time.time_ns = lambda: real_time_ns() + int(stepped_ms() * 1000000)


def write_step(step_file, ms):
    """Set the step (ms) a running desk sees from now on (made if missing)."""
    with open(step_file, "wb") as f:
        f.write(struct.pack("d", float(ms)))


if __name__ == "__main__":
    step_wall_clock(sys.argv[1])
    from duelclock_desk.cli import main
    sys.argv = ["duelclock"] + sys.argv[2:]
    sys.exit(main())
