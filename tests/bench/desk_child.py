# The real desk (duelclock_desk.api.Service: links, Desk, store, HTTP API) in a process of
# its own, on the bench's accelerated clock, for the sync benches (bench_link.py): tables in
# the bench process and the desk here each have their own interpreter, as on a real venue
# where they are separate machines.
#
#   python tests/bench/desk_child.py --store FILE --key HEX --event NAME [--link URL ...]
#          [--broker URL|off] --skip-file FILE --t0-ns N
#
# Desk time is (CLOCK_MONOTONIC ns - N) / 1e6 + the double in FILE's first 8 bytes: the bench
# writes that double (SkipClock.advance in bench_link.py) and reads the same monotonic clock.
# Prints "ready http://127.0.0.1:PORT" once the Service is up; stops when stdin closes.
import argparse
import asyncio
import mmap
import os
import struct
import sys
import time

from duelclock_desk import api


class SharedClock:
    def __init__(self, skip_file, t0_ns):
        self.t0_ns = t0_ns
        with open(skip_file, "r+b") as f:
            self.skip = mmap.mmap(f.fileno(), 8)

    def __call__(self):
        return int(self.exact())

    def exact(self):
        return (time.monotonic_ns() - self.t0_ns) / 1e6 + struct.unpack("d", self.skip)[0]


async def serve(a):
    clock = SharedClock(a.skip_file, a.t0_ns)
    api.DeskClock = lambda epoch_unix_ms, speed=1.0: clock
    svc = api.Service(a.store, bytes.fromhex(a.key), a.event, a.link, a.broker, http_port=0)
    await svc.start()
    print("ready http://127.0.0.1:%d" % svc.http_port, flush=True)
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    loop.add_reader(sys.stdin.fileno(), lambda: os.read(sys.stdin.fileno(), 4096) or done.set())
    await done.wait()
    await svc.stop()


def main(argv):
    ap = argparse.ArgumentParser(prog="desk_child")
    ap.add_argument("--store", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--event", required=True)
    ap.add_argument("--link", action="append", default=[])
    ap.add_argument("--broker", default="off")
    ap.add_argument("--skip-file", required=True)
    ap.add_argument("--t0-ns", type=int, required=True)
    asyncio.run(serve(ap.parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
