# Run by tests/faults/test_heap_fragments.py under the MicroPython unix port:
#   micropython -X heapsize=128k upy_fragment_sign.py HOLE_BYTES
# Builds a full record batch (a table's largest routine line) once on a whole heap, then
# fills the heap and frees every other HOLE_BYTES block, so that no free block is larger
# than about HOLE_BYTES, and builds the line again. Prints one JSON line: the line's
# length, whether a block of twice HOLE_BYTES could still be had (it must not: else the
# heap was not fragmented and the case proves nothing), and "built" or the MemoryError, for
# the line built from the event dicts and from their canonical JSON made before (the
# session's record steps hold those: Encoder.build's `events`).
import gc
import json
import sys

from duelclock.core.sign import table_key
from duelclock.core.wire import Encoder, event_bytes

HOLE_BYTES = int(sys.argv[1])
enc = Encoder(table_key(b"k" * 32, 1), 1, tbl=1)
events = [{"t": 1234567 + i, "ev": "lp", "A": -10 * i} for i in range(12)]   # _RECORD_BATCH
fields = {"round": 1, "first": 0, "events": events, "total": 12}
line_bytes = len(enc.build("record", fields))
ready_fields = {"round": 1, "first": 0, "total": 12}
pieces = [event_bytes(ev) for ev in events]
assert len(enc.build("record", ready_fields, events=pieces)) == line_bytes

gc.collect()
keep = [None] * 1024
n = 0
for size in (HOLE_BYTES, 256, 64):
    try:
        while n < len(keep):
            keep[n] = bytes(size)
            n += 1
    except MemoryError:
        pass
for i in range(0, n, 2):
    if len(keep[i]) == HOLE_BYTES:
        keep[i] = None
gc.collect()
try:
    big = bytes(2 * HOLE_BYTES)
    fragmented = False
    big = None
except MemoryError:
    fragmented = True
try:
    enc.build("record", fields)
    built = "built"
except MemoryError as e:
    built = "MemoryError: %s" % e
try:
    enc.build("record", ready_fields, events=pieces)
    built_ready = "built"
except MemoryError as e:
    built_ready = "MemoryError: %s" % e
keep = None
gc.collect()
print(json.dumps({"line_bytes": line_bytes, "fragmented": fragmented, "built": built,
                  "built_ready": built_ready}))
