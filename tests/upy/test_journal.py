# The journal (firmware/duelclock/journal.py): plain test_* functions, bare asserts.
#   MICROPYPATH=firmware:tests/upy:.frozen .venv/bin/micropython tests/upy_run.py tests/upy
# Under MicroPython the journal lives on littlefs over a RAM disk (ramdisk.py). pytest
# collects this module too: under CPython the same tests run in a temp dir, and the
# littlefs-only tests (power cuts, journal full, the RAM disk itself) are not defined.
import os

from duelclock.core.jsonio import dumps_event
from duelclock.core.replay import Replay
from duelclock.journal import Journal, JournalFull

LFS = hasattr(os, "VfsLfs2")
if LFS:
    from ramdisk import RAMDisk
    MOUNT = "/jtest"
else:
    import shutil
    import tempfile


class _FS:
    """A fresh, empty filesystem; `root` is the journal's directory on it."""

    def __init__(self, blocks=48, block_bytes=4096):
        if LFS:
            self.disk = RAMDisk(blocks, block_bytes)
            self.disk.mount(MOUNT, format=True)
            self.base = MOUNT
        else:
            self.base = tempfile.mkdtemp()
        self.root = self.base + "/journal"

    def reboot(self):
        """A new journal on the same files, as after a power cycle."""
        if LFS:
            self.disk.remount()
        return Journal(self.root)

    def close(self):
        if LFS:
            self.disk.umount()
        else:
            shutil.rmtree(self.base)


def _other(p):
    return "B" if p == "A" else "A"


def _match_events(n):
    """A plausible swiss match of n events: round start, then duels of LP damage (a
    card's cost now and then) and turn ends, 10 s apart on average. B loses duel 1, A
    duel 2, and the 3rd is still going at 200 events (replays with 0 rejections)."""
    evs = [{"t": 0, "ev": "round_start", "round": 3, "kind": "swiss"}]
    seed = 2024
    t = 45000
    lp = None
    loser = "A"
    player = "A"
    while len(evs) < n:
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        r = seed >> 12
        t += 3000 + r % 14000
        if lp is None:
            evs.append({"t": t, "ev": "duel_start", "first": loser})
            lp = {"A": 8000, "B": 8000}
            player = loser
            loser = _other(loser)
        elif r % 5 == 0:
            evs.append({"t": t, "ev": "turn_end"})
            player = _other(player)
        elif r % 23 == 1 and lp[player] > 1000:
            evs.append({"t": t, "ev": "lp", player: -1000, "cost": True, "by": player})
            lp[player] -= 1000
        else:
            victim = loser if r % 3 else _other(loser)
            amount = min(lp[victim], 50 * (1 + (r >> 4) % 6))
            evs.append({"t": t, "ev": "lp", victim: -amount, "by": player})
            lp[victim] -= amount
            if lp[victim] == 0:
                lp = None
    return evs


EVENTS = _match_events(200)
LINES = [dumps_event(e).encode() for e in EVENTS]


def _replay(lines):
    r = Replay()
    for line in lines:
        r.feed(line)
    return r


def _record(j, events):
    mid = j.start_match(events[0])
    for ev in events[1:]:
        j.append(ev)
    return mid


def _recover(j):
    lines = []
    report = j.recover(lines.append)
    return lines, report


def _record_offset(k):
    """Byte offset of record k (0-based) in a journal of LINES: JSON, TAB, CRC, newline."""
    return sum(len(line) + 10 for line in LINES[:k])


def _patch(path, at, data):
    """Overwrite bytes of a file in place (a flash fault the filesystem did not see)."""
    f = open(path, "rb")
    try:
        body = bytearray(f.read())
    finally:
        f.close()
    body[at:at + len(data)] = data
    f = open(path, "wb")
    try:
        f.write(body)
    finally:
        f.close()


def _append_raw(path, data):
    f = open(path, "ab")
    try:
        f.write(data)
    finally:
        f.close()


# --- round trip, torn, damaged ---------------------------------------------------------

def test_round_trip_recover_export_and_resume():
    fs = _FS()
    try:
        j = Journal(fs.root)
        mid = _record(j, EVENTS[:150])
        j = fs.reboot()
        lines, report = _recover(j)
        assert lines == LINES[:150]
        assert (report.match_id, report.good, report.dropped) == (mid, 150, [])
        assert list(j.export(mid)) == LINES[:150]
        r = _replay(lines)
        assert r.rejected == [] and r.count == 150
        for ev in EVENTS[150:]:            # the table carries on where it was
            j.append(ev)
        lines, report = _recover(fs.reboot())
        assert lines == LINES and report.good == 200
        assert _replay(lines).rejected == []
    finally:
        fs.close()


def test_recover_with_no_match():
    fs = _FS()
    try:
        j = Journal(fs.root)
        lines, report = _recover(j)
        assert lines == [] and report.match_id is None and report.good == 0
        try:
            j.append(EVENTS[1])
            assert False, "append without a match"
        except ValueError:
            pass
    finally:
        fs.close()


def test_torn_last_record_dropped_and_sealed():
    fs = _FS()
    try:
        j = Journal(fs.root)
        mid = _record(j, EVENTS[:5])
        _append_raw(j._file(mid), LINES[5][:17])          # an append cut short
        j = fs.reboot()
        lines, report = _recover(j)
        assert lines == LINES[:5]
        assert (report.good, report.torn, report.corrupt) == (5, 1, 0)
        assert report.dropped == [(6, "torn")]
        j.append(EVENTS[5])                               # sealed after the torn bytes
        j.append(EVENTS[6])
        lines, report = _recover(fs.reboot())
        assert lines == LINES[:7]
        assert (report.torn, report.corrupt, report.dropped) == (1, 0, [(6, "torn")])
    finally:
        fs.close()


def test_torn_inside_the_crc_is_dropped():
    fs = _FS()
    try:
        j = Journal(fs.root)
        mid = _record(j, EVENTS[:3])
        _append_raw(j._file(mid), LINES[3] + b"\t0a")     # cut inside the CRC digits
        lines, report = _recover(fs.reboot())
        assert lines == LINES[:3] and report.dropped == [(4, "torn")]
    finally:
        fs.close()


def test_bit_flip_in_the_middle_skips_one_record_only():
    fs = _FS()
    try:
        j = Journal(fs.root)
        mid = _record(j, EVENTS[:40])
        at = _record_offset(20) + 8
        _patch(j._file(mid), at, bytes([LINES[20][8] ^ 0x04]))
        lines, report = _recover(fs.reboot())
        assert lines == LINES[:20] + LINES[21:40]
        assert (report.good, report.torn, report.corrupt) == (39, 0, 1)
        assert report.dropped == [(21, "crc mismatch")]
        assert _replay(lines).match is not None           # replays, maybe with rejections
    finally:
        fs.close()


def test_flipped_newline_and_damaged_crc_are_skipped():
    fs = _FS()
    try:
        j = Journal(fs.root)
        mid = _record(j, EVENTS[:30])
        path = j._file(mid)
        _patch(path, _record_offset(11) - 1, b"\x0b")      # record 10's newline gone
        _patch(path, _record_offset(21) - 10, b"Z")         # record 20's TAB gone
        j = fs.reboot()
        lines, report = _recover(j)
        assert lines == LINES[:10] + LINES[12:20] + LINES[21:30]
        assert report.dropped == [(11, "crc mismatch"), (20, "no crc")]
        assert list(j.export(mid)) == lines
    finally:
        fs.close()


# --- read from a kept place (the session's record messages) -------------------------------

def _read_all(j, mid, pos, max_bytes):
    """Journal.read on from `pos` until at_end: [(line, end)], each read's pos checked."""
    out = []
    for _ in range(1000):
        got, pos_after, at_end = j.read(mid, pos, max_bytes)
        assert pos_after >= pos and (got == [] or got[-1][1] <= pos_after)
        out += got
        if at_end:
            return out, pos_after
        assert pos_after > pos or got                   # always on
        pos = pos_after
    raise AssertionError("read never reached the end")


def test_read_goes_on_from_the_place_it_returned():
    fs = _FS()
    try:
        j = Journal(fs.root)
        mid = _record(j, EVENTS[:30])
        got, pos, at_end = j.read(mid, 0, 300)
        assert got and not at_end and sum(len(l) + 10 for l, _ in got) <= 300
        assert [l for l, _ in got] == LINES[:len(got)]
        assert [e for _, e in got] == [_record_offset(k + 1) for k in range(len(got))]
        assert pos == got[-1][1]
        rest, end = _read_all(j, mid, pos, 300)
        assert [l for l, _ in got + rest] == LINES[:30] and end == _record_offset(30)
        assert j.read(mid, end, 300) == ([], end, True)           # nothing more
        got, _, _ = j.read(mid, _record_offset(7), 16)            # a line longer: whole
        assert got[0] == (LINES[7], _record_offset(8))
    finally:
        fs.close()


def test_read_passes_over_damaged_and_torn_lines():
    fs = _FS()
    try:
        j = Journal(fs.root)
        mid = _record(j, EVENTS[:30])
        _patch(j._file(mid), _record_offset(12) + 8, bytes([LINES[12][8] ^ 0x04]))
        _append_raw(j._file(mid), LINES[30][:17])                # an append cut short
        got, end = _read_all(Journal(fs.root), mid, 0, 256)
        assert [l for l, _ in got] == LINES[:12] + LINES[13:30]
        assert end == _record_offset(30)                         # before the torn bytes
        j = fs.reboot()
        _recover(j)
        j.append(EVENTS[30])                                     # seals the torn line
        got, end = _read_all(j, mid, _record_offset(29), 256)
        assert [l for l, _ in got] == [LINES[29], LINES[30]]
    finally:
        fs.close()


class _Files:
    def __init__(self):
        self.d = {}

    def read(self, name, number):
        return None

    def text(self, name):
        return self.d.get(name)

    def write(self, name, text):
        self.d[name] = text


def test_a_session_after_a_power_cut_and_a_damaged_line_sends_every_event_it_recovered():
    # The table's session on the real journal: a line damaged in the middle, an append
    # cut short by a power cut, then the table boots and plays on. Its record messages,
    # made in steps from the journal's lines, carry every event it recovered and every
    # later one, each at the index the table counts (a desk replaying them gets its match).
    from duelclock.core.clock import SERIAL_BUDGET_MS
    from duelclock.core.session import Session
    from duelclock.core.sign import table_key
    from duelclock.core.wire import Decoder
    import json
    key = b"a session's test key"
    fs = _FS()
    try:
        j = Journal(fs.root)
        mid = _record(j, EVENTS[:60])
        _patch(j._file(mid), _record_offset(25) + 8, bytes([LINES[25][8] ^ 0x04]))
        _append_raw(j._file(mid), LINES[60][:20])               # the power goes
        sent = []
        s = Session(table_key(key, 1), 1, 2, fs.reboot(), _Files(),
                    lambda line, kind: sent.append(line) or True, SERIAL_BUDGET_MS, None,
                    "en")
        assert s.total == 59 and s.ui.match.round_no == 3
        for ev in EVENTS[61:90]:                                # it plays on
            s.save(ev)
        expect = LINES[:25] + LINES[26:60] + LINES[61:90]
        now = 0
        for _ in range(200):
            now += 20
            s.tick(now)
            if s.sent == s.total:
                break
        now += 2000                                             # the last ones lingered
        for _ in range(10):
            now += 20
            s.tick(now)
        assert s.sent == s.total == len(expect)
        desk = Decoder(key)
        got = {}
        for line in sent:
            for m in desk.feed(line):
                if m["k"] == "record":
                    for i, ev in enumerate(m["events"]):
                        got[m["first"] + i] = ev
                    assert m["total"] <= len(expect)
        assert sum(desk.drops.values()) == 0
        assert [got[i] for i in range(len(got))] == [json.loads(l) for l in expect]
    finally:
        fs.close()


# --- the index, collection, rotation ---------------------------------------------------

def test_index_and_collected_marks():
    fs = _FS()
    try:
        j = Journal(fs.root, reserve_bytes=0)
        m1 = _record(j, EVENTS[:10])
        m2 = _record(j, EVENTS[:4])
        assert (m1, m2) == (1, 2)
        assert [(m, c) for m, _, c in j.matches()] == [(1, False), (2, False)]
        j.mark_collected(m1)
        size = j.size_bytes(m2)
        sent = list(j.export(m2, size))                   # the desk takes the live match
        j.append(EVENTS[4])                               # meanwhile an LP entry
        assert sent == LINES[:4] and list(j.export(m2)) == LINES[:5]
        j.mark_collected(m2, size)
        assert [(m, c) for m, _, c in j.matches()] == [(1, True), (2, False)]
        j.mark_collected(m2)
        assert [(m, c) for m, _, c in j.matches()] == [(1, True), (2, True)]
        j.append(EVENTS[5])                               # a new event: not collected
        assert j.matches()[-1][2] is False
    finally:
        fs.close()


def test_rotation_deletes_only_old_collected_matches():
    fs = _FS()
    try:
        j = Journal(fs.root, reserve_bytes=0)
        for _ in range(4):
            _record(j, EVENTS[:6])
        j.mark_collected(1)
        j.mark_collected(3)
        j.mark_collected(4)                               # the current one
        assert j.rotate(0) == 0                           # space is not low
        assert j.rotate(1 << 60) == 2                     # low: as much as allowed
        assert [(m, c) for m, _, c in j.matches()] == [(2, False), (4, True)]
        assert sorted(os.listdir(fs.root)) == ["m2.jsonl", "m4.got", "m4.jsonl"]
        j = fs.reboot()                                   # no current match yet:
        j.mark_collected(2)
        assert j.rotate(1 << 60) == 1                     # the newest one stays
        assert [m for m, _, _ in j.matches()] == [4]
        lines, report = _recover(j)
        assert report.match_id == 4 and lines == LINES[:6]
    finally:
        fs.close()


def test_start_match_rotates_and_numbers_on():
    fs = _FS()
    try:
        j = Journal(fs.root, reserve_bytes=1 << 60)       # always "low on space"
        _record(j, EVENTS[:6])
        _record(j, EVENTS[:6])
        j.mark_collected(1)
        j.mark_collected(2)
        assert _record(j, EVENTS[:3]) == 3                # 1 goes; 2 was current
        assert [m for m, _, _ in j.matches()] == [2, 3]
        assert _record(j, EVENTS[:3]) == 4
        assert [m for m, _, _ in j.matches()] == [3, 4]   # 3 is not collected
    finally:
        fs.close()


def test_an_empty_newest_match_is_reused():
    fs = _FS()
    try:
        j = Journal(fs.root, reserve_bytes=0)
        _record(j, EVENTS[:6])
        _append_raw(fs.root + "/m2.jsonl", b"")           # a start cut short
        j = fs.reboot()
        lines, report = _recover(j)
        assert report.match_id == 2 and report.good == 0
        assert j.start_match(EVENTS[0]) == 2
        assert list(j.export(2)) == LINES[:1]
    finally:
        fs.close()


# --- littlefs on a RAM disk: power cuts, journal full ----------------------------------

if LFS:
    import micropython
    import time

    def test_ramdisk_block_methods_do_not_allocate():
        disk = RAMDisk(4)
        buf = bytearray(256)
        micropython.heap_lock()
        try:
            disk.readblocks(1, buf, 512)
            disk.writeblocks(1, buf, 512)
            disk.ioctl(6, 2)
            disk.ioctl(4, 0)
            disk.cut_after(1)
            disk.writeblocks(1, buf, 0)
            after = disk.writeblocks(1, buf, 0)
            erase = disk.ioctl(6, 1)
        finally:
            micropython.heap_unlock()
        assert (after, erase, disk.writes) == (-5, -5, 3)

    def _run_until_cut(disk, blank, cut):
        """Format-fresh disk, record the 200-event match with the power cut at write
        `cut` (-1: never). Returns the number of appends that returned."""
        disk.data[:] = blank
        disk.mount(MOUNT)
        disk.cut_after(cut)
        confirmed = 0
        try:
            j = Journal(MOUNT + "/journal")
            j.start_match(EVENTS[0])
            confirmed = 1
            for ev in EVENTS[1:]:
                j.append(ev)
                confirmed += 1
        except OSError:
            pass                                          # EIO: the power is gone
        return confirmed

    def test_power_cut_at_every_block_write_of_a_200_event_match():
        disk = RAMDisk(40)
        disk.mount(MOUNT, format=True)
        blank = bytes(disk.data)
        disk.umount()
        writes0 = disk.writes
        assert _run_until_cut(disk, blank, -1) == 200
        total = disk.writes - writes0
        disk.umount()
        assert total > 400
        seen = set()
        for cut in range(1, total + 1):
            confirmed = _run_until_cut(disk, blank, cut)
            assert confirmed < 200
            seen.add(confirmed)
            disk.remount()
            j = Journal(MOUNT + "/journal")
            lines, report = _recover(j)
            n = len(lines)
            # every confirmed event is back, nothing that was not attempted, in order
            assert confirmed <= n <= confirmed + 1, (cut, confirmed, n)
            assert lines == LINES[:n], cut
            assert report.corrupt == 0, (cut, report.dropped)
            if n:
                r = _replay(lines)
                assert r.rejected == [] and r.count == n
            if n == 0:
                j.start_match(EVENTS[0])
            elif n < 200:
                j.append(EVENTS[n])                        # and the table carries on
            assert list(j.export(j.current)) == LINES[:n + 1], cut
            disk.umount()
        assert len(seen) == 200                           # cuts inside every append
        print("power cuts tested: %d" % total)

    def test_journal_full_keeps_what_is_written_until_the_desk_collects():
        fs = _FS(blocks=10)
        try:
            j = Journal(fs.root, reserve_bytes=0)
            m1 = _record(j, EVENTS[:60])
            m2 = j.start_match(EVENTS[0])
            confirmed = 1
            full = None
            while full is None:
                ev = EVENTS[1 + confirmed % 199]
                try:
                    j.append(ev)
                    confirmed += 1
                except JournalFull as e:
                    full = e
                assert confirmed < 5000
            assert full.uncollected == [m1, m2] and "journal full" in str(full)
            try:
                j.append(EVENTS[1])                       # still full, still refused
                assert False, "append on a full journal"
            except JournalFull:
                pass
            j = fs.reboot()
            lines, report = _recover(j)
            assert report.match_id == m2 and len(lines) == confirmed
            assert report.dropped == []
            assert list(j.export(m1)) == LINES[:60]
            assert [(m, c) for m, _, c in j.matches()] == [(m1, False), (m2, False)]
            j.mark_collected(m1)                          # the desk has match 1 now
            j.append(EVENTS[5])                           # room made by deleting it
            assert [m for m, _, _ in j.matches()] == [m2]
            lines, report = _recover(fs.reboot())
            assert len(lines) == confirmed + 1 and lines[-1] == LINES[5]
        finally:
            fs.close()

    def test_journal_append_ms():
        # Median append (encode, write, flush, close) on littlefs over the RAM disk.
        fs = _FS()
        try:
            j = Journal(fs.root)
            j.start_match(EVENTS[0])
            us = []
            for ev in EVENTS[1:]:
                t0 = time.ticks_us()
                j.append(ev)
                us.append(time.ticks_diff(time.ticks_us(), t0))
            us.sort()
            print("journal_append_ms: %.3f" % (us[len(us) // 2] / 1000))
            assert us[len(us) // 2] < 20000
        finally:
            fs.close()
