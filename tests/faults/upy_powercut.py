# Power cuts at random instants over whole matches, under the MicroPython unix port:
#
#   micropython upy_powercut.py SCRIPT SEED CUTS [BLOCKS]
#   (MICROPYPATH=firmware:simulator:tests/upy:.frozen; tests/faults/test_powercut.py runs it)
#
# SCRIPT: a match as events (JSONL, round_start first; tests/bench/gen_record.py), played
# over and over as rounds 1, 2, ... by its key presses (simulator/player.py keys_for) into
# the real table: duelclock.app.Table on littlefs (os.VfsLfs2) over a RAM flash chip, with
# a fake board and link (the tasks and the desk are left out: the desk's part is the round
# command, and the ack that collects a finished match). Time is the script's: the table's
# round clock is set to each step's t.
#
# The power goes off at a random block write or erase (seeded: 1..GAP_WRITES from the last
# boot, so cuts land in appends and ticks; 1..4 writes ahead, a quarter of the time, before
# the desk's round command (start_match and its rotation) and its ack (mark_collected); and
# right after a reboot, inside the next boot (the boot counter, then recovery).
# The cut write is torn at a random byte (0 .. all of it); it and every later write return
# -EIO to littlefs (an exception would unwind through littlefs: the littlefs trap in
# shared/toolchain.md). After a cut the table "reboots": remount, `Table(...)` as at boot
# (app.Table, its Session's _recover: the firmware's own boot path), then it is checked:
#   confirmed_events_lost  a record line the table had confirmed (its journal append
#                          returned, so the Ui applied and showed it) missing from the record
#   extra_events           lines beyond the confirmed ones: at most the one being written,
#                          and only it (counted as a mismatch otherwise)
#   state_mismatches       the rebooted table's match (round, phase, duel, wins, lp, turn,
#                          remaining_ms, verdict) and its whole screen (core.view.build: every
#                          field the players see) differ from those before the cut (or, when
#                          the in-flight event landed, its match from that match plus it)
# then the players go on from the first step whose event is not in the record. Between steps
# the desk now and then pauses the match and resumes it at the same instant (so the script's
# times stand), and a cut may land while it is paused.
# Prints one JSON line: cuts, confirmed_events_lost, state_mismatches, ... (see the end).
import json
import random
import sys

from duelclock.app import Table
from duelclock.core.jsonio import dumps_event
from duelclock.core.match import Match
from duelclock.core.record import parse_line
from duelclock.core.sign import pin_hash
from duelclock.core.lang import tr
from duelclock.core.view import build
from player import keys_for, steps
from ramdisk import RAMDisk, EIO, _copy_in

MOUNT = "/flash"
GAP_WRITES = 40           # a cut lands within this many block writes of the last boot
BOOT_CUT_PCT = 25         # after a reboot, this often the power goes again within 3 writes
KEY_HEX = "00" * 32
CFG = {"table": 1, "key": KEY_HEX, "pins": {"floor": pin_hash("1111", b"salt", 2),
                                            "head": pin_hash("2222", b"salt", 2)}}
NOT_SAVED = tr("not_saved", "ko", "")
STATE_KEYS = ("round", "phase", "duel", "wins", "lp", "turn", "remaining_ms")


class CutDisk(RAMDisk):
    """RAMDisk whose cut write is torn at a random byte (`tear_bytes` of it land)."""

    def __init__(self, blocks, rng):
        RAMDisk.__init__(self, blocks)
        self.rng = rng
        self.cut = False          # the power went off since the last remount
        self.tear_bytes = 0

    def arm(self, n):
        self.cut_after(n)
        self.tear_bytes = self.rng.getrandbits(13)     # 0..8191: clipped to the write

    def writeblocks(self, block, buf, offset=0):
        if self._left == 1:
            return self._tear(block * self.block_bytes + offset, buf)
        return RAMDisk.writeblocks(self, block, buf, offset)

    def ioctl(self, op, arg):
        if op == 6 and self._left == 1:
            return self._tear(arg * self.block_bytes, self._erased)
        return RAMDisk.ioctl(self, op, arg)

    def _tear(self, at, buf):
        # Allocation-free, as every block method (the littlefs trap)
        _copy_in(self.data, at, buf, min(self.tear_bytes, len(buf)))
        self.writes += 1
        self._left = 0
        self.cut = True
        return -EIO

    def remount(self):
        RAMDisk.remount(self)
        self.cut = False


class Board:
    BOARD = "SIM"
    battery_pct = None
    buzzer = None
    led = None
    display = None


class Link:
    up = False

    def send(self, line, kind):
        return False


class Run:
    def __init__(self, script, seed, blocks):
        random.seed(seed)
        self.rng = random
        self.start = script[0]
        self.steps = [(t, ev) for t, ev, _ in steps(script)]
        self.disk = CutDisk(blocks, self.rng)
        self.disk.mount(MOUNT, format=True)
        cfg = open(MOUNT + "/duelclock.json", "w")
        cfg.write(json.dumps(CFG))
        cfg.close()
        self.now = self.start["t"]
        self.round_no = 1
        self.confirmed = []       # lines of the current match whose append returned
        self.in_flight = None     # the line being appended when the power went
        self.ref = None           # a Match fed the confirmed events: what the screen shows
        self.doing = "boot"       # what the table was writing for (cut_in counts by it)
        self.stats = {"cuts": 0, "cut_in": {}, "confirmed_events_lost": 0,
                      "state_mismatches": 0, "extra_events": 0, "events_confirmed": 0,
                      "matches": 0, "rotations": 0, "cuts_paused": 0, "dropped_torn": 0, "dropped_corrupt": 0,
                      "errors": []}
        self.table = None

    # --- the table, with its journal watched ------------------------------------------

    def boot(self):
        """Power on until a boot gets through (a cut may hit the boot itself)."""
        while True:
            self.doing = "boot"
            try:
                t = Table(Board, CFG, Link(), lambda: 0, MOUNT)
            except OSError:
                t = None
            if not self.disk.cut:
                break
            self._count_cut()
            self.disk.remount()
        t.session.round_ms = lambda local_ms: self.now    # the desk's round clock, synced
        j = t.session.journal
        append, start_match, rotate, collect = j.append, j.start_match, j.rotate, j.mark_collected

        def watched_append(ev):
            self.in_flight = dumps_event(ev).encode()
            if self.doing != "start_match":
                self.doing = "tick" if ev["ev"] == "tick" else "append"
            append(ev)
            self._confirm(ev, self.in_flight)

        def watched_start(ev):            # its first append is watched_append
            self.in_flight = dumps_event(ev).encode()
            self.confirmed = []
            self.ref = None
            self.doing = "start_match"
            return start_match(ev)

        def watched_rotate(n):
            self.doing = "rotate"
            deleted = rotate(n)
            self.stats["rotations"] += deleted
            self.doing = "start_match"
            return deleted

        def watched_collect(mid, upto_bytes=None):
            self.doing = "mark_collected"
            collect(mid, upto_bytes)
        j.append, j.start_match, j.rotate, j.mark_collected = (
            watched_append, watched_start, watched_rotate, watched_collect)
        self.table = t
        return t

    def _confirm(self, ev, line):
        self.confirmed.append(line)
        self.in_flight = None
        self.stats["events_confirmed"] += 1
        if ev["ev"] == "round_start":
            self.ref = Match(ev)
        else:
            self.ref.apply(ev)

    def arm(self, limit):
        self.disk.arm(1 + self.rng.getrandbits(16) % limit)

    def _maybe_arm_soon(self):
        # Rare writes (start_match, its rotation, mark_collected) get their share of cuts.
        if self.rng.getrandbits(2) == 0:
            self.arm(4)

    # --- the cut and the reboot --------------------------------------------------------

    def screen(self):
        t = self.table
        if t.ui.match is None:
            return None
        s = t.session.state(0)
        return [s[k] for k in STATE_KEYS] + [t.ui.match.verdict(), self._view(t.ui)]

    def _view(self, ui):
        """The screen at home (a menu or an entry half typed is RAM: a power cut ends it),
        without what the cut itself makes: its failed write's NOT SAVED, and the idle dim
        (the backlight, by the time since the last key)."""
        v = dict(build(ui, self.now).__dict__)
        del v["dim"]
        if v["message"] is not None and v["message"].startswith(NOT_SAVED):
            v["message"] = None
        return v

    def _count_cut(self):
        self.stats["cuts"] += 1
        where = self.stats["cut_in"]
        where[self.doing] = where.get(self.doing, 0) + 1

    def reboot(self):
        self._count_cut()
        self.table.ui.tick(self.now)      # what the players saw when the power went
        self.table.ui.home()
        m = self.table.ui.match
        if m is not None and m.paused_at is not None:
            self.stats["cuts_paused"] += 1
        before = self.screen()
        before_n = len(self.confirmed)
        in_flight = self.in_flight
        self.in_flight = None
        self.disk.remount()
        if self.rng.getrandbits(7) < BOOT_CUT_PCT * 128 // 100:
            self.arm(3)
        t = self.boot()
        lines = []
        if t.session.match_id is not None:
            rep = _Report()
            lines = list(t.session.journal.export(t.session.match_id, None, rep))
            self.stats["dropped_torn"] += rep.torn
            self.stats["dropped_corrupt"] += rep.corrupt
        mine = self.confirmed[:before_n]
        m = t.ui.match
        if m is None or m.round_no != self.round_no:
            lines = []            # an older match (or none): this round's start did not land
        if lines[:len(mine)] != mine:
            self.stats["confirmed_events_lost"] += max(1, sum(1 for x in mine if x not in lines))
            self._error("lost", before_n, len(lines))
        extra = lines[len(mine):]
        if extra:
            self.stats["extra_events"] += len(extra)
            if extra == [in_flight]:
                self._confirm(parse_line(in_flight)[0], in_flight)
            else:
                self.stats["state_mismatches"] += 1
                self._error("extra", extra, in_flight)
        if t.ui.match is not None and t.ui.match.round_no == self.round_no:
            t.ui.tick(self.now)
            after = self.screen()
            want = before if not extra else self._ref_screen()
            if after[:len(want)] != want:
                self.stats["state_mismatches"] += 1
                if len(want) == len(after):         # the screen: say which fields differ
                    v0, v1 = want[-1], after[-1]
                    self._error("screen", [(k, v0[k], v1[k]) for k in v0 if v0[k] != v1[k]])
                else:
                    self._error("state", want, after)
        return t

    def _ref_screen(self):
        m = self.ref
        m.advance_to(self.now)
        return [m.round_no, m.phase(), len(m.duels) + (1 if m.in_duel else 0), dict(m.wins),
                dict(m.lp), m.turn if m.in_duel else 0, m.remaining_ms(self.now), m.verdict()]

    def _error(self, *what):
        if len(self.stats["errors"]) < 5:
            self.stats["errors"].append(repr(what)[:300])

    # --- the players and the desk ------------------------------------------------------

    def round_msg(self):
        s = self.start
        return {"k": "round", "round": self.round_no, "kind": s["kind"], "limit_s": s["limit_s"],
                "cap_s": s["cap_s"], "extra_turns": s["extra_turns"], "seating": s["seating"],
                "rules": s.get("rules", "ID"), "start_ms": 1000000 * self.round_no,
                "names": {"A": "Kim", "B": "Budi"}, "lang": "ko"}

    def step_done(self):
        """Steps whose event is in the table's record (each step makes one event)."""
        m = self.table.ui.match
        if m is None or m.round_no != self.round_no:
            return -1
        return sum(1 for line in self.confirmed if not _organiser(line)) - 1

    def play(self, cuts):
        self.boot()
        self.arm(GAP_WRITES)
        while self.stats["cuts"] < cuts:
            t = self.table
            done = self.step_done()
            if done < 0:                       # the desk pushes the round (again)
                self.now = self.start["t"]
                self._maybe_arm_soon()
                t.session.handle(self.round_msg(), 0)
            elif done < len(self.steps) and t.ui.match.paused_at is not None:
                self._desk("resume")             # a pause before this step (a cut may hit it)
            elif done < len(self.steps) and not t.ui.match.over and self.rng.getrandbits(3) == 0:
                self._desk("pause")              # no time passes paused: the script's stays
            elif done < len(self.steps):
                at, ev = self.steps[done]
                self.now = max(self.now, at)
                for k in keys_for(ev, t.ui.match):
                    t.key(k)
                    if self.disk.cut:
                        break
                if not self.disk.cut and self.step_done() != done + 1:
                    self._error("step refused", done, ev)
                    self.stats["state_mismatches"] += 1
                    return self.stats
            elif not self._collected():        # over: the desk collects it
                self._maybe_arm_soon()
                t.session.handle({"k": "ack", "round": self.round_no,
                                  "events": t.session.total}, 0)
            else:
                self.stats["matches"] += 1
                self.round_no += 1
                continue
            if self.disk.cut:
                self.reboot()
                self.arm(GAP_WRITES)
        return self.stats

    def _desk(self, k):
        self.table.session.handle({"k": k, "at_ms": 1000000 * self.round_no + self.now}, 0)

    def _collected(self):
        t = self.table
        for mid, size, collected in t.session.journal.matches():
            if mid == t.session.match_id:
                return collected
        return False


def _organiser(line):
    # A record line no step makes: time passing (tick), the desk's pause and resume.
    return b'"tick"' in line or b'"pause"' in line or b'"resume"' in line


class _Report:
    torn = 0
    corrupt = 0
    good = 0

    def drop(self, line_no, why):
        if why == "torn":
            self.torn += 1
        else:
            self.corrupt += 1


def main(argv):
    f = open(argv[0])
    script = [json.loads(line) for line in f if line.strip()]
    f.close()
    run = Run(script, int(argv[1]), int(argv[3]) if len(argv) > 3 else 48)
    stats = run.play(int(argv[2]))
    stats["steps"] = len(run.steps)
    print(json.dumps(stats))


main(sys.argv[1:])
