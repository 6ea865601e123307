"""The desk's side of the table protocol: every line a table sends, and every line sent to
one. A mixin of Desk (desk.py), which holds the state it names.

A table's report, once Decoder-checked (signed by that table, fresh seq):

  hello  -> board, firmware, battery, free flash, Wi-Fi signal stored; a boot counter (its
            seq's) above the last is a reboot in the running round; the next state may get
            a re-push at once
  state  -> stored, shown; a table in the running round whose state shows an older round
            (rebooted, lost its journal, missed the start) gets the round's commands again,
            each with a new seq, at most every REPUSH_MS
  record -> events stored by index, each once (a resent or reordered chunk changes nothing),
            and once committed acked as "stored" up to the events held from the first on
            (the table sends none of those again: no whole record every few seconds);
            an index re-sent with another body is "record changed" at once (both kept, both
            on the sheet), an event that arrives too long after its own time is "late
            entry" (lateness.py: over LINKED_LATE_MS if the desk heard the table then, made
            up since; else over OFFLINE_LATE_MS after the link came back; the judge
            confirms it with the players), one first received after the head judge closed
            the round "after close" (stored all the same); the verification's note repeats
            them
  result -> stored; verified (verification.py): "ok" is acked (the final ack, no "stored":
            the table may then rotate the match out), "mismatch" never is, "incomplete" is
            checked again as records arrive (the table resends what is not acked, and the
            result until its final ack; the protocol has no request message)
  sync   -> answered at once: t2 = receipt (stamped by the link), t3 = send, re = its seq,
            and their us (t2u, t3u) if it asked (`us`); not answered once it waited in the
            desk over clock.RETRY_MS (the table asked again). A link with a thread of its own
            has its sync requests answered in that thread (answer_syncs), so they never wait
            behind states and records in the desk's loop, nor those behind them: the loop
            is only told which tables were heard (heard_syncs, at its tick)

Every desk line is signed by the desk's Encoder (desk_wire.py; seq above every earlier
boot's) with the key of the one table it is for, and goes on the link that table was last
heard on.
"""
import hashlib

from duelclock.core import wire
from duelclock.core.clock import RETRY_MS
from duelclock.core.wire import SEQ_BOOT

from duelclock_desk import verification
from duelclock_desk.desk_wire import DeskEncoder
from duelclock_desk.desk_time import unix_ms

REPUSH_MS = 5000           # a table is re-sent the round at most this often
MAX_RECORD_EVENTS = 100000  # a record index beyond this is refused (bounds the store)
NOT_LATE = ("round_start", "extend", "tick")   # the desk's commands and time passing: not keyed


def fingerprint(key):
    """What the store keeps of the event key: enough to refuse another key, no more."""
    return hashlib.sha256(b"duelclock key fingerprint\0" + key).hexdigest()[:16]


_SYNC = b'"k":"sync"'       # in every sync request (canonical JSON); a report that holds it
                            # and is none goes on to the loop all the same


def _us_past(ms):
    """The whole us past the whole ms of a float desk ms."""
    return int((ms - int(ms)) * 1000)


class Protocol:
    """Uses of Desk: store, key, event, enc, dec and sync_dec (DeskDecoders), sync_lock,
    sync_enc, sync_end, sync_spent, links, route, pushed, silent, drops, link_drops, round,
    now_ms, stamp_ms, speed, on_change, stored; in_round() and repush() (commands.py);
    table_view()."""

    def lines(self, link, lines, rx_ms, retained=False):
        """Whole lines received on `link` at desk time rx_ms (int ms, or a float where the
        link stamps finer: sync replies give the us); `retained`: a broker's retained copy
        (an old state from before a restart is no attack: counted "stale")."""
        dec = self.dec
        for line in lines:
            dec.dropped = None
            msg = dec.take(line)
            if msg is not None:
                self._take(link, msg, rx_ms)
            elif dec.dropped is not None:
                self._count_drop(link, dec.dropped, retained)

    def answer_syncs(self, link, lines, rx_ms, retained=False, shed=False):
        """From the thread of `link` (any link's thread, never the loop's), as the lines
        arrive: the sync requests among them answered there and then, each on `link`
        (t2 = rx_ms), with a Decoder and an Encoder of their own (sync_dec, sync_enc: the
        tables keep sync replies a stream of their own), so the loop shares no lock with
        them. Returns (the other lines, in order, for lines(); {tbl: rx_ms} of the tables
        whose requests were taken and {reason: count} of the lines dropped, for
        heard_syncs()). A request not answered because this boot's seqs are spent is as
        lost (the table asks again) until the loop takes the next boot (_renew). `shed`:
        the desk is behind, the sync requests are left unread and unanswered (lost)."""
        rest, heard, dropped = [], {}, {}
        with self.sync_lock:
            dec, enc = self.sync_dec, self.sync_enc
            for line in lines:
                if line is None or _SYNC not in line:
                    rest.append(line)
                    continue
                if shed:
                    continue
                dec.dropped = None
                msg = dec.take(line)
                if msg is None:
                    if dec.dropped is not None:
                        why = "stale" if retained and dec.dropped == "replay" else dec.dropped
                        dropped[why] = dropped.get(why, 0) + 1
                    continue
                if msg["k"] != "sync":
                    rest.append(line)           # the loop's Decoder takes it as any report
                    continue
                heard[msg["tbl"]] = rx_ms
                if enc.seq >= self.sync_end:
                    self.sync_spent = True
                    continue
                link.send(self._sync_reply(enc, msg, rx_ms), msg["tbl"], "sync")
        return rest, heard, dropped

    def heard_syncs(self, link, heard, dropped=None):
        """What answer_syncs returned for `link`: the tables are heard on it then, as by
        any message (route, last seen, link history), and the drops counted."""
        for tbl, rx_ms in heard.items():
            self._heard(link, tbl, int(rx_ms), None)
        for why, n in (dropped or {}).items():
            for _ in range(n):
                self._count_drop(link, "replay" if why == "stale" else why, why == "stale")

    def _count_drop(self, link, why, retained):
        # A line dropped for `why` (wire.DROPS), counted for the link too, unless it is a
        # retained replay ("stale": an old state from before a restart is no attack).
        per_link = self.link_drops.setdefault(link.url, dict.fromkeys(wire.DROPS, 0))
        if retained and why == "replay":
            self.drops["stale"] += 1
        else:
            self.drops[why] += 1
            per_link[why] += 1

    def link_status(self, link, tbl, online):
        """Link status: tbl None for the whole link (up or down), else one table (MQTT will)."""
        if tbl is None:
            self.on_change("link", link.info())
            return
        self.store.set_online(tbl, online)
        view = self.table_view(tbl)
        if view is not None:               # a will of a table never heard from says nothing
            self.on_change("table", view)

    def _take(self, link, msg, rx_ms):
        tbl, k = msg["tbl"], msg["k"]
        exact, rx_ms = rx_ms, int(rx_ms)
        self._heard(link, tbl, rx_ms, None if k == "sync" else self.dec.last_seq(tbl))
        getattr(self, "_on_" + k)(link, msg, exact if k == "sync" else rx_ms)

    def _heard(self, link, tbl, rx_ms, last_seq):
        self.route[tbl] = link
        self.store.seen(tbl, link.url, rx_ms, last_seq)
        self.silent.discard(tbl)
        self.heard.heard(tbl, rx_ms)

    def _on_sync(self, link, msg, rx_ms):
        if self.now_ms() - rx_ms > RETRY_MS * self.speed:
            # It waited in the desk's queue longer than the table waits for a reply: the table
            # has asked again and would drop this answer. Answering it would only delay the
            # answers still awaited (a desk behind on its queue would fall further behind).
            # Real ms: a simulated table's clock at speed waits as long (core/clock.py scale).
            return
        self._renew()
        link.send(self._sync_reply(self.enc, msg, rx_ms), msg["tbl"], "sync")

    def _sync_reply(self, enc, msg, rx_ms):
        # The reply to sync request `msg` received at rx_ms, t3 stamped now, signed by `enc`
        # (with seqs left in this boot).
        t3 = max(rx_ms, self.stamp_ms())
        fields = {"t1": msg["t1"], "t2": int(rx_ms), "t3": int(t3), "re": msg["seq"]}
        if msg.get("us"):
            fields["t2u"], fields["t3u"] = _us_past(rx_ms), _us_past(t3)
        return enc.build("sync", fields, msg["tbl"])

    def _on_hello(self, link, msg, rx_ms):
        r = self.round
        self.store.hello(msg["tbl"], msg["board"], msg["fw"], msg.get("battery"),
                         msg.get("flash_kb"), msg.get("rssi_dbm"), msg["seq"] // SEQ_BOOT,
                         r["round"] if r and r["state"] == "running" else None)
        self.pushed.pop(msg["tbl"], None)        # rebooted or reconnected: its next state counts
        self.on_change("table", self.table_view(msg["tbl"]))

    def _on_state(self, link, msg, rx_ms):
        tbl = msg["tbl"]
        self.store.state(tbl, msg, rx_ms)
        r = self.round
        if (r and r["state"] == "running" and msg["round"] < r["round"] and self.in_round(tbl)
                and rx_ms - self.pushed.get(tbl, -REPUSH_MS) >= REPUSH_MS):
            self.repush(tbl)
        self.on_change("table", self.table_view(tbl))

    def _on_record(self, link, msg, rx_ms):
        tbl, round_no, first = msg["tbl"], msg["round"], msg["first"]
        if first + len(msg["events"]) > MAX_RECORD_EVENTS or msg["total"] > MAX_RECORD_EVENTS:
            self.drops["refused"] += 1
            return
        # The running round's start is at hand (a round start's records are 2,000 at once).
        r = self.round
        start = r if r and r["round"] == round_no else self.store.round(round_no)
        self.store.add_events(tbl, round_no, first, msg["events"], msg["total"], rx_ms,
                              start and start["start_ms"],
                              lambda at_ms: self.heard.late_after(tbl, at_ms), NOT_LATE,
                              start and start["closed_ms"])
        self.stored.add((tbl, round_no))          # acked once committed (ack_stored)
        # Shown at once: its results row, its flags (a record no longer comes with a state).
        self.on_change("table", self.table_view(tbl))
        r = self.store.result(tbl, round_no)
        if r["result"] is not None and r["verified"] in (None, "incomplete") \
                and self.store.event_count(tbl, round_no) >= r["events"]:
            self.verify(tbl, round_no)

    def _on_result(self, link, msg, rx_ms):
        tbl, round_no = msg["tbl"], msg["round"]
        if msg["events"] > MAX_RECORD_EVENTS:
            self.drops["refused"] += 1
            return
        old = self.store.result(tbl, round_no)
        same = (old is not None and old["result"] == msg["result"]
                and old["events"] == msg["events"]
                and (old["wins_a"], old["wins_b"]) == (msg["wins"]["A"], msg["wins"]["B"]))
        if same and old["verified"] == "ok":
            self._ack(tbl, round_no, msg["events"])         # the last ack was lost
        elif not (same and old["verified"] == "mismatch"):  # a mismatch stays one
            self.store.report_result(tbl, round_no, msg, rx_ms)
            self.verify(tbl, round_no)

    def verify(self, tbl, round_no):
        """Verify the table's result (verification.py); ack it when "ok", once stored."""
        acked = verification.verify(self.store, tbl, round_no)
        if acked is not None:
            self.store.commit()                    # stored for good before the table forgets
            self._ack(tbl, round_no, acked)
        view = self.table_view(tbl)
        if view is not None:                       # an imported record's table may be unheard
            self.on_change("table", view)

    def _ack(self, tbl, round_no, events):
        """The final ack: the result settled, the record held whole."""
        self.send_to(tbl, "ack", {"round": round_no, "events": events})
        self.store.acked(tbl, round_no, events)

    def ack_stored(self):
        """Once the store committed: each record that came in since is acked "stored" up to
        the events it holds from the first on (a gap stops it: what is past it comes again)."""
        stored, self.stored = self.stored, set()
        lines = []
        for tbl, round_no in sorted(stored):
            held = self.store.held_events(tbl, round_no)
            if held:
                lines.append((tbl, self._build("ack", {"round": round_no, "events": held,
                                                       "stored": True}, tbl)))
        if lines:
            self.send_lines(lines)

    # --- sending ----------------------------------------------------------------------------

    def _build(self, k, fields, tbl):
        self._renew()
        return self.enc.build(k, fields, tbl)

    def _renew(self):
        if self.enc.seq >= (self.event["boot"] + 1) * SEQ_BOOT or self.sync_spent:
            # This boot's seqs are spent (16.7 M messages, or as many sync replies): take a
            # new boot, as at a restart.
            self.event = self.store.start_desk(self.event["name"], fingerprint(self.key),
                                               unix_ms())
            self.enc = DeskEncoder(self.key, self.event["boot"])
            self.new_sync_boot()

    def new_sync_boot(self):
        """answer_syncs' Encoder on the event's boot (at start, and each new boot)."""
        with self.sync_lock:
            # the tables' keys shared: a minute of sync replies has derived every table's
            # before a round start signs its commands
            self.sync_enc = DeskEncoder(self.key, self.event["boot"], self.enc._keys)
            self.sync_end = (self.event["boot"] + 1) * SEQ_BOOT
            self.sync_spent = False

    def send_to(self, tbl, k, fields):
        """One table: on the link it was last heard on, else on every link."""
        self.send_lines([(tbl, self._build(k, fields, tbl))])

    def send_lines(self, lines):
        """[(tbl, line)], each as send_to sends it; one send_many per link (a round start's
        2,000 commands are one write to the broker, not 2,000)."""
        by_link = {}
        for tbl, line in lines:
            link = self.route.get(tbl)
            for l in [link] if link else self.links:
                by_link.setdefault(l, []).append((line, tbl))
        for l, items in by_link.items():
            l.send_many(items)
