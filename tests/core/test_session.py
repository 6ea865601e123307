# The table's desk session (core/session.py) with a list journal and a fake link: a desk
# made of the wire's own Encoder and Decoder talks to it. Plain functions: the core suite
# runs under MicroPython too.
from duelclock.core import session as S
from duelclock.core.clock import FIRST, SERIAL_BUDGET_MS
from duelclock.core.session import Session
from duelclock.core.sign import table_key
from duelclock.core.wire import Decoder, Encoder
from ramstore import ListJournal, MemFiles

try:
    from micropython import heap_lock, heap_unlock
except ImportError:             # CPython: the allocation tests run under MicroPython only
    heap_lock = None

# The session's timing and batch (private consts there: on a board they are compiled away).
RESEND_MS = 10000
STATE_MS = 5000
STATE_CHECK_MS = 250
RECORD_BATCH = 12
LINGER_MS = 2000
EVENT_KEY = bytes(range(32))
TBL = 4
ROUND = {"round": 2, "kind": "swiss", "start_ms": 50000, "limit_s": 2400, "cap_s": 1800,
         "extra_turns": 1, "seating": False}
MATCH = [  # a 2-0 for A after round_start
    {"t": 1000, "ev": "duel_start", "first": "A"},
    {"t": 2000, "ev": "lp", "B": -8000, "by": "A"},
    {"t": 3000, "ev": "duel_start", "first": "B"},
    {"t": 4000, "ev": "lp", "B": -8000, "by": "A"},
]


def steps(s, now, n=6):
    """Ticks n link looks (20 ms) apart from `now` on: a record message is made in steps, one
    a tick (Session._send_record); returns the last tick's ms."""
    for i in range(n):
        s.tick(now + 20 * i)
    return now + 20 * (n - 1)


class FakeLink:
    """What the session sends, as a link takes it (`up` False: it takes nothing)."""

    def __init__(self):
        self.lines = []
        self.up = True

    def send(self, line, kind):
        if self.up:
            self.lines.append(line)
        return self.up


class Desk:
    """The desk's end: commands out, the table's lines checked and kept."""

    def __init__(self, boot=1):
        self.enc = Encoder(EVENT_KEY, boot)
        self.dec = Decoder(EVENT_KEY)
        self.got = []

    def cmd(self, k, fields):
        return self.enc.build(k, fields, TBL)

    def take(self, link):
        for line in link.lines:
            self.got += self.dec.feed(line)
        link.lines = []
        return self.got

    def kinds(self):
        return [m["k"] for m in self.got]

    def last(self, k):
        return [m for m in self.got if m["k"] == k][-1]


def table(journal=None, files=None, boot=1):
    link = FakeLink()
    s = Session(table_key(EVENT_KEY, TBL), TBL, boot, journal or ListJournal(),
                files or MemFiles(), link.send, SERIAL_BUDGET_MS, None, "en")
    return s, link


def synced(s, link, desk, local_ms=0):
    """Answer sync requests (desk time = local + 100000) until the table has desk time."""
    for _ in range(FIRST):
        s.tick(local_ms)
        req = desk.last("sync") if desk.take(link) and "sync" in desk.kinds() else None
        assert req is not None
        desk_ms = req["t1"] + 100000
        s.feed(desk.cmd("sync", {"t1": req["t1"], "t2": desk_ms, "t3": desk_ms,
                                 "re": req["seq"]}), local_ms)
        desk.got = []
        local_ms += 1000
    assert s.clock.desk_now_ms(local_ms) == local_ms + 100000
    return local_ms


def test_the_figures_here_are_the_sessions():
    # CPython keeps a private const's name; MicroPython compiles it away (nothing to compare).
    for name, value in (("_RESEND_MS", RESEND_MS), ("_STATE_MS", STATE_MS),
                        ("_STATE_CHECK_MS", STATE_CHECK_MS), ("_RECORD_BATCH", RECORD_BATCH),
                        ("_LINGER_MS", LINGER_MS)):
        assert getattr(S, name, value) == value, name


def test_hello_then_state_and_sync_requests():
    s, link = table()
    desk = Desk()
    s.hello("SIM", "9.9", 80)
    s.tick(0)
    desk.take(link)
    assert desk.kinds() == ["hello", "sync", "state"]
    assert desk.got[0]["battery"] == 80
    st = desk.last("state")
    assert st["round"] == 0 and st["lp"] == {"A": 8000, "B": 8000}
    s.tick(100)                                   # nothing changed, nothing due
    assert desk.take(link) and desk.kinds() == ["hello", "sync", "state"]


def test_us_ticks_ask_the_desk_for_its_us_and_the_clock_takes_them():
    # desk = local + 100000.4 ms, both ends stamping to the us; the legs take 0.3 ms each.
    s, link = table()
    desk = Desk()
    local_us = 5000250                                  # local ms 5000 and 250 us
    for _ in range(FIRST):
        s.tick(local_us // 1000, local_us % 1000)
        desk.take(link)
        req = desk.last("sync")
        assert req["us"] is True and req["t1"] == local_us // 1000
        t2 = local_us + 100000400 + 300                 # desk us at receipt, then at sending
        t3 = t2 + 50
        s.feed(desk.cmd("sync", {"t1": req["t1"], "t2": t2 // 1000, "t3": t3 // 1000,
                                 "re": req["seq"], "t2u": t2 % 1000, "t3u": t3 % 1000}),
               (t3 + 300 - 100000400) // 1000, (t3 + 300 - 100000400) % 1000)
        desk.got = []
        local_us += 200000
    assert abs(s.clock.offset_ms(local_us // 1000) - 100000.4) < 0.01
    # Ticks of whole ms: the request asks for no us (a desk before us stamps refuses it).
    s, link = table()
    desk = Desk()
    s.tick(5000)
    desk.take(link)
    assert "us" not in desk.last("sync")


def test_a_round_is_journalled_and_its_record_and_result_go_out_until_acked():
    journal = ListJournal()
    s, link = table(journal)
    desk = Desk()
    now = synced(s, link, desk)
    assert s.feed(desk.cmd("round", ROUND), now)
    assert journal.current()[0]["ev"] == "round_start" and s.ui.match.round_no == 2
    for ev in MATCH:
        assert s.ui.record(ev)
    now = steps(s, now + 20)
    desk.take(link)
    rec = desk.last("record")
    assert (rec["first"], rec["total"], len(rec["events"])) == (0, 5, 5)
    assert rec["events"][1:] == MATCH
    res = desk.last("result")
    assert (res["result"], res["wins"], res["events"]) == ("A", {"A": 2, "B": 0}, 5)
    assert desk.last("state")["wins"] == {"A": 2, "B": 0}
    # No ack: after RESEND_MS the record and the result go again.
    desk.got = []
    now = steps(s, now + RESEND_MS + 1)
    desk.take(link)
    assert desk.kinds().count("record") == 1 and desk.kinds().count("result") == 1
    assert desk.last("record")["events"][1:] == MATCH       # the same events again
    # The ack: the match is collected, nothing goes again.
    s.feed(desk.cmd("ack", {"round": 2, "events": 5}), now)
    assert journal.collected == [1] and s.acked == 5
    desk.got = []
    s.tick(now + 2 * RESEND_MS)
    desk.take(link)
    assert "record" not in desk.kinds() and "result" not in desk.kinds()


def test_events_the_desk_stored_never_go_again_and_the_result_goes_till_settled():
    journal = ListJournal()
    s, link = table(journal)
    desk = Desk()
    now = synced(s, link, desk)
    s.feed(desk.cmd("round", ROUND), now)
    for ev in MATCH[:2]:
        assert s.ui.record(ev)
    s.tick(now)                                 # the oldest unsent one starts lingering
    now = steps(s, now + LINGER_MS + 1)
    desk.take(link)
    assert desk.last("record")["total"] == 3
    # The desk committed the three: a "stored" ack, so no resend of them, ever.
    s.feed(desk.cmd("ack", {"round": 2, "events": 3, "stored": True}), now)
    desk.got = []
    for _ in range(3):
        now += RESEND_MS + 1
        s.tick(now)
    desk.take(link)
    assert "record" not in desk.kinds() and s.acked == 3
    # The rest of the match: only the new events go, then the result, and the result goes
    # again every RESEND_MS while the final ack does not come; stored acks settle nothing.
    for ev in MATCH[2:]:
        assert s.ui.record(ev)
    now = steps(s, now + 20)
    desk.take(link)
    rec = desk.last("record")
    assert (rec["first"], len(rec["events"]), rec["total"]) == (3, 2, 5)
    s.feed(desk.cmd("ack", {"round": 2, "events": 5, "stored": True}), now)
    desk.got = []
    now += RESEND_MS + 1
    s.tick(now)
    desk.take(link)
    assert desk.kinds().count("result") == 1 and "record" not in desk.kinds()
    assert journal.collected == []              # held, but the result is not settled yet
    s.feed(desk.cmd("ack", {"round": 2, "events": 5}), now)
    assert journal.collected == [1]
    desk.got = []
    s.tick(now + 3 * RESEND_MS)
    desk.take(link)
    assert "record" not in desk.kinds() and "result" not in desk.kinds()
    # A judge's penalty after the match: the new event, then the result again at once (the
    # desk verifies the record with it: what it carries into the next round).
    now += 3 * RESEND_MS
    assert s.ui.record({"t": 5000, "ev": "penalty", "p": "B", "kind": "warning",
                        "code": "slow_play", "judge": "floor"})
    steps(s, now)
    desk.take(link)
    assert desk.last("record")["first"] == 5 and desk.last("result")["events"] == 6


def test_a_long_record_goes_in_batches_and_a_new_link_sends_what_was_not_acked():
    s, link = table()
    desk = Desk()
    now = synced(s, link, desk)
    s.feed(desk.cmd("round", ROUND), now)
    t = 1000
    assert s.ui.record({"t": t, "ev": "duel_start", "first": "A"})
    for i in range(2 * RECORD_BATCH):
        t += 1000
        assert s.ui.record({"t": t, "ev": "turn_end"})
    total = 2 + 2 * RECORD_BATCH
    now = steps(s, now + 20, 12)
    desk.take(link)
    # Full batches go at once; the two events left wait LINGER_MS for company.
    assert [m["first"] for m in desk.got if m["k"] == "record"] == [0, RECORD_BATCH]
    now = steps(s, now + LINGER_MS)
    desk.take(link)
    firsts = [m["first"] for m in desk.got if m["k"] == "record"]
    assert firsts == [0, RECORD_BATCH, 2 * RECORD_BATCH]
    s.feed(desk.cmd("ack", {"round": 2, "events": RECORD_BATCH}), now)
    desk.got = []
    s.hello("SIM", "9.9", None)
    for _ in range(6):                          # up to the first message after the hello
        now += 20
        s.tick(now)
        desk.take(link)
        if "record" in desk.kinds():
            break
    assert [m["first"] for m in desk.got if m["k"] == "record"] == [RECORD_BATCH]
    assert s.sent == 2 * RECORD_BATCH < total


def test_a_record_lingers_after_a_hello_and_a_resend_does_not():
    # A hello (a link came up) hurries only events the desk may have missed: with all sent,
    # the next event still waits LINGER_MS for company. A resend goes at once.
    s, link = table()
    desk = Desk()
    now = synced(s, link, desk)
    s.feed(desk.cmd("round", ROUND), now)
    s.tick(now + 1)
    done = steps(s, now + 1 + LINGER_MS)
    desk.take(link)
    assert desk.kinds().count("record") == 1
    s.feed(desk.cmd("ack", {"round": 2, "events": 1}), done)
    s.hello("SIM", "9.9", None)                     # everything sent and held
    assert s.ui.record({"t": 1000, "ev": "duel_start", "first": "A"})
    desk.got = []
    steps(s, done + 1)
    desk.take(link)
    assert "record" not in desk.kinds()
    done = steps(s, done + 1 + LINGER_MS)
    desk.take(link)
    assert desk.last("record")["first"] == 1
    desk.got = []
    steps(s, done + 1 + RESEND_MS)                  # no ack: sent again at once
    desk.take(link)
    assert desk.last("record")["first"] == 1 and desk.last("record")["total"] == 2


def test_a_full_journal_keeps_the_match_going_in_ram_and_tells_the_desk():
    journal = ListJournal(room=3)                 # round_start and two events fit
    s, link = table(journal)
    desk = Desk()
    now = synced(s, link, desk)
    s.feed(desk.cmd("round", ROUND), now)
    for ev in MATCH:
        assert s.ui.record(ev)                    # confirmed all the same
    assert len(journal.current()) == 3 and len(s.unsaved) == 2 and s.journal_full
    assert s.ui.match.over
    now = steps(s, now + 20)
    desk.take(link)
    assert desk.last("state")["journal_full"] is True
    assert desk.last("record")["events"][1:] == MATCH      # the RAM events with the rest
    s.feed(desk.cmd("ack", {"round": 2, "events": 5}), now)
    assert journal.collected == []                # not all of it is on flash


def _by_index(desk):
    """The record events the desk got, by index; an index sent twice must be the same."""
    got = {}
    for m in desk.got:
        if m["k"] == "record":
            for i, ev in enumerate(m["events"]):
                assert got.setdefault(m["first"] + i, ev) == ev, (m["first"] + i, ev)
    return [got[i] for i in range(len(got))] if sorted(got) == list(range(len(got))) else got


def _lp_match(n):
    """A duel_start and n - 1 lp entries (after round_start)."""
    return [{"t": 1000, "ev": "duel_start", "first": "A"}] + [
        {"t": 1000 + 1000 * i, "ev": "lp", "B": -10 - i % 7, "by": "A"} for i in range(1, n)]


def test_each_record_message_reads_only_its_own_lines():
    # Messages read the journal on from where the last one stopped: each line once, never
    # the match again from its start; a resend reads from the last message start at or
    # before `acked`, not from the start either.
    journal = ListJournal()
    s, link = table(journal)
    desk = Desk()
    now = synced(s, link, desk)
    s.feed(desk.cmd("round", ROUND), now)
    match = _lp_match(5 * RECORD_BATCH - 1)
    for ev in match:
        assert s.ui.record(ev)
    total = s.total
    now = steps(s, now + 20, 30)
    desk.take(link)
    assert _by_index(desk)[1:] == match and s.sent == total
    assert journal.reads == total                   # each line handed out once
    s.feed(desk.cmd("ack", {"round": 2, "events": 30, "stored": True}), now)
    journal.reads = 0
    desk.got = []
    now = steps(s, now + RESEND_MS + 1, 30)        # no more acks: the rest again
    desk.take(link)
    assert [m["first"] for m in desk.got if m["k"] == "record"][0] == 30
    assert total - 30 <= journal.reads < total - 30 + RECORD_BATCH


def test_events_held_in_ram_go_out_in_steps_and_once_when_the_journal_takes_them():
    # The journal full after round_start and two events: the rest are held in RAM and go
    # in the record messages' steps, at most _MAKE_EVENTS (6) a step. Mid-message the
    # journal has room again and the next event writes them all: the lines then read are
    # those the message already holds, none is sent twice.
    journal = ListJournal(room=3)
    s, link = table(journal)
    desk = Desk()
    now = synced(s, link, desk)
    s.feed(desk.cmd("round", ROUND), now)
    match = _lp_match(21)
    for ev in match[:-1]:
        assert s.ui.record(ev)
    assert len(s.unsaved) == 18 and s.journal_full
    for _ in range(3):                              # read 3 lines, write them, 6 from RAM
        now += 20
        s.tick(now)
    assert len(s.pieces) == 9 and s.sent == 0
    journal.room = None
    assert s.ui.record(match[-1]) and s.unsaved == [] and not s.journal_full
    now = steps(s, now + 20, 3)
    now = steps(s, now + LINGER_MS)                 # the last 10 wait for company
    desk.take(link)
    assert _by_index(desk)[1:] == match and s.sent == s.total == 22
    assert [len(m["events"]) for m in desk.got if m["k"] == "record"] == [12, 10]


def test_events_held_in_ram_all_go_out_a_step_at_a_time():
    journal = ListJournal(room=1)                   # round_start only: the rest in RAM
    s, link = table(journal)
    desk = Desk()
    now = synced(s, link, desk)
    s.feed(desk.cmd("round", ROUND), now)
    match = _lp_match(2 * RECORD_BATCH + 3)
    for ev in match:
        assert s.ui.record(ev)
    assert len(s.unsaved) == len(match)
    made = []
    for _ in range(20):
        before = len(s.pieces)
        now += 20
        s.tick(now)
        made.append(len(s.pieces) - before if len(s.pieces) >= before else 0)
    assert max(made) <= 6                           # _MAKE_EVENTS a step
    desk.take(link)
    assert _by_index(desk)[1:] == match[:2 * RECORD_BATCH - 1]     # the last 4 linger
    now = steps(s, now + LINGER_MS)
    desk.take(link)
    assert _by_index(desk)[1:] == match and s.sent == s.total


def test_a_failing_journal_confirms_nothing():
    class Failing(ListJournal):
        def append(self, ev):
            raise OSError(5)
    s, link = table(Failing())
    desk = Desk()
    now = synced(s, link, desk)
    s.feed(desk.cmd("round", ROUND), now)
    assert not s.ui.record(MATCH[0])
    assert s.total == 1 and s.ui.match.duels == [] and not s.ui.match.in_duel
    assert s.ui.message[0].startswith("NOT SAVED")


def test_pause_resume_extend_are_journalled_at_the_desks_instant():
    s, link = table()
    desk = Desk()
    now = synced(s, link, desk)
    s.feed(desk.cmd("round", dict(ROUND, judge_extend=True)), now)
    assert s.ui.judge_extend is True
    at = 100000 + now                             # desk ms now
    s.feed(desk.cmd("pause", {"at_ms": at}), now)
    s.feed(desk.cmd("pause", {"at_ms": at + 10}), now)          # sent again: no second pause
    s.feed(desk.cmd("resume", {"at_ms": at + 5000}), now + 5000)
    s.feed(desk.cmd("extend", {"round": 2, "ms": 60000, "at_ms": at + 6000}), now + 6000)
    s.feed(desk.cmd("extend", {"round": 1, "ms": 60000}), now + 6000)     # another round's
    got = [(ev["ev"], ev["t"], ev.get("ms")) for ev in s.journal.current()[1:]]
    start = ROUND["start_ms"]
    assert got == [("pause", at - start, None), ("resume", at + 5000 - start, None),
                   ("extend", at + 6000 - start, 60000)]
    m = s.ui.match
    assert m.limit_ms == 2400000 + 60000 and m.paused_ms == 5000
    assert m.remaining_ms(at + 6000 - start) == 2460000 - (at + 1000 - start)


def test_an_extend_before_the_first_sync_is_given_not_lost():
    s, link = table()
    desk = Desk()
    s.feed(desk.cmd("round", ROUND), 0)
    s.feed(desk.cmd("extend", {"round": 2, "ms": 60000}), 0)
    assert s.round_ms(0) is None
    assert [ev["ms"] for ev in s.journal.current() if ev["ev"] == "extend"] == [60000]


def test_an_extend_behind_the_last_event_is_given_at_it_not_refused():
    s, link = table()
    desk = Desk()
    now = synced(s, link, desk)
    s.feed(desk.cmd("round", ROUND), now)
    ahead = s.round_ms(now) + 30000               # an entry stamped by a clock since stepped back
    assert s.ui.record({"t": ahead, "ev": "duel_start", "first": "A"})
    s.feed(desk.cmd("extend", {"round": 2, "ms": 60000}), now)
    assert s.journal.current()[-1] == {"t": ahead, "ev": "extend", "ms": 60000}


def test_seen_seq_and_drift_are_kept_for_the_next_boot():
    journal, files = ListJournal(), MemFiles()
    s, link = table(journal, files)
    desk = Desk()
    now = synced(s, link, desk)
    old = desk.cmd("round", ROUND)
    s.feed(old, now)
    assert files.read("seen", int) == [desk.enc.seq - 1]
    # The next boot: the match comes back from the journal, the old command is a replay.
    again, link2 = table(journal, files, boot=2)
    assert again.ui.match.round_no == 2 and again.total == 1 and again.start_ms == 50000
    assert not again.feed(old, 0) and again.dec.drops["replay"] == 1
    files.write("drift", "12.5")
    third = table(journal, files, boot=3)[0]
    assert abs(third.clock.drift_ppm - 12.5) < 1e-9


def test_a_state_change_is_sent_at_the_next_look_and_running_clocks_are_not_a_change():
    s, link = table()
    desk = Desk()
    now = synced(s, link, desk)
    desk.take(link)
    desk.got = []
    s.tick(now)
    desk.take(link)
    desk.got = []
    s.tick(now + STATE_CHECK_MS)                # only the clocks moved
    assert "state" not in [m["k"] for m in desk.take(link)]
    s.feed(desk.cmd("round", ROUND), now + STATE_CHECK_MS)
    s.tick(now + STATE_CHECK_MS + 1)             # a command: looked at at once
    desk.take(link)
    assert desk.kinds() == ["state"] and desk.last("state")["round"] == 2
    s.tick(now + STATE_CHECK_MS + LINGER_MS)         # its round_start's record lingers
    desk.take(link)
    assert "record" not in desk.kinds()
    steps(s, now + STATE_CHECK_MS + 1 + LINGER_MS, 3)
    desk.take(link)
    assert desk.kinds()[-1] == "record" and desk.last("record")["first"] == 0
    desk.got = []
    s.feed(desk.cmd("ack", {"round": 2, "events": 1}), now + STATE_CHECK_MS + 2)
    s.tick(now + STATE_CHECK_MS + STATE_MS + 1)     # nothing changed: every STATE_MS
    desk.take(link)
    assert "state" in desk.kinds() and "record" not in desk.kinds()


if heap_lock is not None:
    def test_ticks_between_sync_requests_and_state_reports_allocate_nothing():
        # The link task ticks every 20 ms: in steady state only a sync request or a state
        # report (a JSON line, signed) may allocate, not the looks in between.
        s, link = table()
        desk = Desk()
        now = synced(s, link, desk)
        s.feed(desk.cmd("round", ROUND), now)
        for ev in MATCH[:2]:
            s.ui.record(dict(ev))
        s.tick(now)
        s.tick(now + LINGER_MS)                     # the record goes out: acked
        s.feed(desk.cmd("ack", {"round": 2, "events": 3}), now + LINGER_MS)
        now += LINGER_MS + 1
        s.tick(now)
        link.lines = []
        end = min(s.sync_at, s.state_due)
        assert end - now > STATE_CHECK_MS, (now, s.sync_at, s.state_due)
        looks = 0
        for t in range(now + 20, end, 20):
            heap_lock()
            try:
                s.tick(t)
            finally:
                heap_unlock()
            looks += 1
        assert looks >= STATE_CHECK_MS // 20 and link.lines == [] and s.sent == s.acked == 3


def test_a_judge_call_by_keys_is_reported_at_once_and_a_menu_key_is_no_report():
    s, link = table()
    desk = Desk()
    now = synced(s, link, desk)
    s.feed(desk.cmd("round", ROUND), now)
    s.tick(now)
    desk.take(link)
    desk.got = []
    s.key("menu", now + 1)                      # moves nothing the state shows
    s.tick(now + 2)
    assert "state" not in [m["k"] for m in desk.take(link)]
    s.key("5", now + 3)                         # Menu > Call a judge
    s.tick(now + 4)
    desk.take(link)
    assert desk.kinds() == ["state"] and desk.last("state")["judge"] is True


def test_a_link_that_takes_nothing_loses_nothing():
    s, link = table()
    desk = Desk()
    now = synced(s, link, desk)
    s.feed(desk.cmd("round", ROUND), now)
    link.up = False
    for ev in MATCH:
        s.ui.record(ev)
    s.tick(now + 20)
    assert s.sent == 0 and s.result_at is None
    link.up = True
    for i in range(3):
        s.tick(now + 40 + 20 * i)
    desk.take(link)
    assert desk.last("record")["events"][1:] == MATCH and desk.last("result")["events"] == 5


def test_a_record_the_link_held_back_goes_with_a_seq_the_desk_still_takes():
    # The link takes states but no report for a while (an MQTT PUBACK still due): the record
    # message built meanwhile waits, and the states' seqs pass it. Once the link takes it,
    # the desk must not drop it as too late (wire.REPORT_WINDOW): no 10 s wait for a resend.
    s, link = table()
    desk = Desk()
    now = synced(s, link, desk)
    s.feed(desk.cmd("round", ROUND), now)
    for ev in MATCH:
        assert s.ui.record(ev)

    def states_only(line, kind):
        return kind != "report" and link.send(line, kind)
    s.send = states_only
    for i in range(40 * STATE_MS // 250):           # 40 states, ticks every 250 ms
        now += 250
        s.tick(now)
    desk.take(link)
    assert desk.kinds().count("state") >= 40 and "record" not in desk.kinds()
    s.send = link.send
    now = steps(s, now + 20)
    desk.take(link)
    assert desk.dec.drops["replay"] == 0
    assert desk.last("record")["events"][1:] == MATCH and desk.last("result")["events"] == 5


def test_a_link_that_refuses_sync_requests_is_asked_again_after_the_retry_not_each_tick():
    # The link is down from power-on: ticked every 2 ms for 10 s, the table builds a request
    # about once a second (each refused one counts as lost), never waits on a reply, and asks
    # at once when a link comes up (hello).
    s, link = table()
    tried = []

    def refuse(line, kind):
        tried.append(kind)
        return False
    s.send = refuse
    for now in range(0, 10000, 2):
        s.tick(now)
        assert not s.reply_due(now)
    assert 5 <= tried.count("sync") <= 11, tried.count("sync")   # one a retry (~1 s)
    assert 35 <= tried.count("state") <= 41, tried.count("state")  # one a look (250 ms)
    s.send = link.send
    s.hello("SIM", "9.9", None)
    s.tick(10000)
    desk = Desk()
    desk.take(link)
    assert "sync" in desk.kinds() and s.reply_due(10000)
    assert not s.reply_due(10000 + 1001)          # past MAX_DELAY_MS: no reply counts


def test_t1_is_read_once_the_request_is_built_and_before_it_is_written():
    # A board takes ~3 ms (RP2040) to build and sign a request: stamped before that, every
    # leg out would hold it and desk time would show 1.5 ms ahead. Stamped after the write,
    # a pause there would shorten the leg instead. Here building takes 3 ms and the write
    # returns 2 ms after the request left (a GC); desk = local + 100000.4 ms, legs of 0.3
    # ms each way.
    at_us = [5000250]
    left_us = []
    link = FakeLink()

    def send(line, kind):
        if kind == "sync":
            left_us.append(at_us[0])
        at_us[0] += 2000
        return link.send(line, kind)

    s = Session(table_key(EVENT_KEY, TBL), TBL, 1, ListJournal(), MemFiles(), send,
                SERIAL_BUDGET_MS, None, "en", lambda: (at_us[0] // 1000, at_us[0] % 1000))
    build = s.enc.build

    def slow_build(k, fields, *rest):
        at_us[0] += 3000 if k == "sync" else 0
        return build(k, fields, *rest)
    s.enc.build = slow_build
    desk = Desk()
    for _ in range(FIRST):
        s.tick(at_us[0] // 1000, at_us[0] % 1000)
        desk.take(link)
        req = desk.last("sync")
        t2 = left_us[-1] + 100000400 + 300
        t3 = t2 + 50
        t4 = t3 + 300 - 100000400
        s.feed(desk.cmd("sync", {"t1": req["t1"], "t2": t2 // 1000, "t3": t3 // 1000,
                                 "re": req["seq"], "t2u": t2 % 1000, "t3u": t3 % 1000}),
               t4 // 1000, t4 % 1000)
        desk.got = []
        at_us[0] = t4 + 200000
    assert abs(s.clock.offset_ms(at_us[0] // 1000) - 100000.4) < 0.01


def test_a_reboot_shows_what_the_players_saw_before_it():
    # Everything on the glass after a power cut comes from the journal and the settings:
    # names, language, the desk's pause and extension, the judge call, a carried penalty.
    from duelclock.core.view import build
    journal, files = ListJournal(), MemFiles()
    s, link = table(journal, files)
    desk = Desk()
    now = synced(s, link, desk)
    start = 100000 + now - 20000                  # desk ms; round ms 20000 now
    rnd = dict(ROUND, start_ms=start, names={"A": "Kim", "B": "Budi"}, lang="ko",
               pens=[{"p": "B", "kind": "warning", "code": "tardiness"}])
    s.feed(desk.cmd("round", rnd), now)
    s.key("a", now)
    s.key("a", now)                               # Kim goes first
    s.feed(desk.cmd("pause", {"at_ms": start + 21000}), now + 1000)
    before = build(s.ui, 45000, 4).__dict__       # 24 s into the pause
    assert before["banner"] == "일시 정지" and before["names"] == ("Kim", "Budi")
    assert before["message"] == "지난 매치: B 경고" and before["clock"] == "39:39"
    s, link = table(journal, files, boot=2)       # power cut
    assert build(s.ui, 45000, 4).__dict__ == before
    now = synced(s, link, desk, now + 26000)      # round ms 46000
    s.feed(desk.cmd("resume", {"at_ms": start + 46000}), now)
    s.feed(desk.cmd("extend", {"round": 2, "ms": 120000, "at_ms": start + 46000}), now)
    s.key("menu", now + 8000)
    s.key(str(1 + [x[0] for x in s.ui.stack[-1].items].index("저지 호출")), now + 8000)
    before = build(s.ui, 60000, 4).__dict__
    assert before["message"] == "저지 호출됨" and "+2:00" in before["status"]
    assert before["banner"] is None and before["clock"] == "41:25"
    s, link = table(journal, files, boot=3)       # and again
    assert build(s.ui, 60000, 4).__dict__ == before
    assert s.ui.judge_called and s.ui.lang == "ko"


def test_the_pin_lockout_and_the_judge_call_outlive_a_reboot():
    from duelclock.core.sign import pin_hash
    files = MemFiles()
    pins = {"floor": pin_hash("1111", b"s", 2), "head": pin_hash("2222", b"s", 2)}

    def boot():
        link = FakeLink()
        return Session(table_key(EVENT_KEY, TBL), TBL, 1, ListJournal(), files, link.send,
                       SERIAL_BUDGET_MS, pins, "en", lambda: (5000, None))
    s = boot()
    s.key("menu", 5000)
    labels = [x[0] for x in s.ui.stack[-1].items]
    s.key(str(1 + labels.index("Call a judge")), 5000)
    s.key("menu", 5000)
    s.key(str(1 + labels.index("Judge")), 5000)
    for _ in range(3):
        for k in ("9", "9", "ok"):
            s.key(k, 5000)
    assert s.ui.locked_ms() == 60000 and files.read("pinlock", int) == [0, 1, 60000]
    again = boot()                                    # 3 more guesses? no: still locked
    assert again.ui.locked_ms() == 60000 and again.ui.judge_called
    assert again.state(5000)["judge"] is True and again.state(5000)["locked"] is True
