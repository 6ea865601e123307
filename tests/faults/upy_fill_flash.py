# A SIM table's flash image nearly full: three old matches the desk never collected, then
# other files (the ballast: say, logs) down to FREE_BYTES free:
#
#   DUELCLOCK_SIM_FLASH=IMG micropython upy_fill_flash.py fill FREE_BYTES  -> {"matches": {id: n}}
#   DUELCLOCK_SIM_FLASH=IMG micropython upy_fill_flash.py count            -> the same, as found
#   (MICROPYPATH=firmware:boards/SIM:.frozen; boards/SIM/board.py mounts IMG at /flash)
# `count` reads every match's records back (journal.export) and lists the collected ones.
import json
import sys

import board
from duelclock.journal import Journal

MATCH_EVENTS = 150
OLD_MATCHES = 3
CHUNK = b"x" * 4096


def fill(j, free_bytes):
    for round_no in range(1, OLD_MATCHES + 1):
        j.start_match({"t": 0, "ev": "round_start", "round": round_no, "kind": "swiss"})
        for i in range(1, MATCH_EVENTS):
            j.append({"t": 1000 * i, "ev": "lp", "A": -10 if i % 2 else 10, "by": "A"})
    f = open(board.FS_PREFIX + "ballast", "wb")
    try:
        while j.free_bytes() > free_bytes + len(CHUNK):
            f.write(CHUNK)
            f.flush()
    finally:
        f.close()


def count(j):
    return {"matches": dict((str(mid), len(list(j.export(mid)))) for mid, _, _ in j.matches()),
            "collected": [mid for mid, _, c in j.matches() if c],
            "free_bytes": j.free_bytes()}


j = Journal(board.FS_PREFIX + "journal", reserve_bytes=0)
if sys.argv[1] == "fill":
    fill(j, int(sys.argv[2]))
print(json.dumps(count(j)))
