"""A table's heap after hours of a match is fragmented: long-lived objects (the record's
events) sit between freed ones. A line the table must send cannot then need one block much
larger than the line itself. Signing a record batch once built one list of ~500 pieces, a
4 KB block (64-bit unix port; 2 KB on an RP2040) that a SIM table's fragmented heap lacked,
and the table died mid-round (test_journal_full)."""
import json
import os

from tests.host.upy import run_upy

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "upy_fragment_sign.py")


def test_a_record_batch_is_signed_in_a_heap_of_1_kb_holes():
    r = run_upy([SCRIPT, "1024"], heap="128k")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["fragmented"], got                   # no 2 KB block: the case is real
    assert got["line_bytes"] < 1024, got
    assert got["built"] == "built", got
    assert got["built_ready"] == "built", got      # from the events' canonical JSON
