"""The desk: what it does with every line from a table and every command of the judges.

Sans-I/O at heart: `Desk` owns no thread, socket or clock. The caller passes `now_ms`
(desk time: ms since the event's epoch), calls `lines()` / `link_status()` with what the links
received, and calls `flush()` to commit a batch. api.py runs it in an asyncio loop; the
tests join it to test tables through an in-memory link.

Desk holds the state; its jobs are cut into modules:

  protocol.py      the table protocol: each table's lines in, signed lines out (Protocol)
  commands.py      the judges' commands and the round's commands for the tables (Commands)
  verification.py  a reported result against its record replayed; carried penalties
  views.py         what status shows: a table's row and alerts, the event, one table
  desk_time.py     desk time (DeskClock) and the wall clock
"""
import threading

from duelclock.core.wire import DROPS

from duelclock_desk import views
from duelclock_desk.commands import Commands
from duelclock_desk.desk_time import stamp_of
from duelclock_desk.desk_wire import DeskDecoder, DeskEncoder
from duelclock_desk.lateness import LinkHistory
from duelclock_desk.protocol import Protocol

# Re-exported: the test tables (tests/host) take the key's fingerprint with the Desk from
# here, and code written before the cut its CommandError.
from duelclock_desk.commands import CommandError
from duelclock_desk.protocol import fingerprint


class Desk(Protocol, Commands):
    """The desk's protocol and round logic. `links`: started Link objects (links.py);
    `now_ms`: desk time; `event`: the store's event row (name, epoch, boot);
    `on_change(kind, data)`: told of every table change (the dashboard's feed); `speed`: desk
    ms per real ms (> 1 only in simulation)."""

    def __init__(self, store, key, event, now_ms, links, on_change=None, speed=1.0):
        self.speed = speed
        self.store = store
        self.key = key
        self.event = event
        self.now_ms = now_ms
        self.stamp_ms = stamp_of(now_ms)   # sync stamps: to the us where now_ms can
        self.links = list(links)
        self.on_change = on_change or (lambda kind, data: None)
        self.enc = DeskEncoder(key, event["boot"])
        self.dec = DeskDecoder(key, seen=store.last_seqs())
        # The links' threads answer sync requests (answer_syncs) with their own Decoder and
        # Encoder, under their own lock: the loop never waits for them.
        self.sync_lock = threading.Lock()
        self.sync_dec = DeskDecoder(key)
        self.new_sync_boot()
        self.route = {}            # tbl -> the link it was last heard on
        self.pushed = {}           # tbl -> desk ms of the last round push to it
        self.silent = set()
        self.heard = LinkHistory()  # when each table was linked: late entry (lateness.py)
        self.stored = set()         # (tbl, round) of records stored since the last flush
        self.drops = dict.fromkeys(DROPS + ("stale", "refused"), 0)
        self.link_drops = {l.url: dict.fromkeys(DROPS, 0) for l in self.links}
        self.round = store.current_round()
        self._cmds = store.cmds(self.round["round"]) if self.round else []

    def flush(self):
        """Commit what came in; then ack the records it held (nothing acked is uncommitted)."""
        self.store.commit()
        self.ack_stored()

    def close(self):
        self.store.close()

    def tick(self):
        """Once a second or so: tables that went silent are shown so; a boot whose seqs
        the sync replies spent is followed by the next; commit."""
        self._renew()
        now = self.now_ms()
        for t in self.store.tables():
            if t["last_seen_ms"] is not None and now - t["last_seen_ms"] > views.SILENT_MS \
                    and t["tbl"] not in self.silent:
                self.silent.add(t["tbl"])
                self.on_change("table", views.view(self, t, now))
        self.flush()

    def table_view(self, tbl):
        """What status shows of one table, None for a table never heard from."""
        t = self.store.table(tbl)
        return None if t is None else views.view(self, t, self.now_ms())

    def status(self):
        return views.status(self)

    def table_detail(self, tbl):
        return views.table_detail(self, tbl)
