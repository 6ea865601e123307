"""The desk: what it does with every line from a table and every command of the judges.

Sans-I/O at heart: `Desk` owns no thread, socket or clock. The caller passes `now_ms`
(desk time: ms since the event's epoch), calls `lines()` / `link_status()` with what the links
received, and calls `flush()` to commit a batch. api.py runs it in an asyncio loop; the
tests join it to fake tables through an in-memory link.

A table's report, once Decoder-checked (signed by that table, fresh seq):

  hello  -> board, firmware, battery stored; the next state may get a re-push at once
  state  -> stored, shown; a table in the running round whose state shows an older round
            (rebooted, lost its journal, missed the start) gets the round's commands again,
            each with a new seq, at most every REPUSH_MS
  record -> events stored by index, each once (a resent or reordered chunk changes nothing);
            an index re-sent with another body is "record changed" at once (both kept, both
            on the sheet), an event received over LATE_MS after its own time is "late
            entry" (entered while the table was not connected, or made up since: the judge
            confirms it with the players); the verification's note repeats them
  result -> stored; the stored record's first `events` events are replayed (core Replay):
              same result and wins  -> verified "ok", penalties derived, `ack` sent
              different             -> "mismatch": flagged for the head judge, never acked
              events missing        -> "incomplete": checked again as records arrive (the
                                       table resends what is not acked; the protocol has no
                                       request message)
  sync   -> answered at once: t2 = receipt (stamped by the link), t3 = send, re = its seq

Judges' commands (start, pause, resume, extend, rules, collect, carry) go through run():
audited, signed by the desk's Encoder (seq above every earlier boot's), stored in round_cmds
so a table can be given them again. There is no broadcast: a command for all tables goes to
each table known, signed with that table's key (a table holds no other), and a table heard
of later gets the round's commands by the re-push above.

Penalties carried to the player's next match (rules.md 5, protocol.md "Carried penalties"):
a replayed record's duel_loss or match_loss given after the match (a mismatched result
too: the penalty is in the record) becomes a carry of the player named in the pairings: ready at once under ID rules, awaiting the head
judge's `carry` command under KR rules. A round started with pairings that name the player
takes every ready carry: its round message to that table holds the penalty in `pens`.
"""
import hashlib
import json
import time

from duelclock.core import wire
from duelclock.core.record import KINDS, RULE_SETS, RecordError
from duelclock.core.replay import Replay
from duelclock.core.sign import canonical
from duelclock.core.wire import SEQ_BOOT, Decoder, Encoder

REPUSH_MS = 5000           # a table is re-sent the round at most this often
SILENT_MS = 15000          # a table heard nothing from this long is shown "silent"
SYNC_ERR_ALERT_MS = 20     # the Wi-Fi budget (docs/protocol.md)
SYNC_AGE_ALERT_MS = 120000
LOW_BATTERY = 15
# A table's state counts the desk lines it dropped since boot (forged, replayed, garbled):
# a link joined mid-line costs one; this many is someone at its port ("junk on port").
JUNK_ALERT_DROPS = 3
MAX_RECORD_EVENTS = 100000  # a record index beyond this is refused (bounds the store)
LATE_MS = 120000           # an event reaching the desk this long after its own time is "late"
NOT_LATE = ("round_start", "extend", "tick")   # the desk's commands and time passing: not keyed
MIN_EXTEND_MS, MAX_EXTEND_MS = 1000, 3600000   # as the record's `extend` event takes
FROZEN_PHASES = ("over",)  # the round clock shown does not run down in these
CARRIED_KINDS = ("duel_loss", "match_loss")   # given after a match: to the player's next one
SIG_BYTES = len(',"sig":""') + 64 + 1     # what signing adds to a canonical message, "\n" in


class CommandError(ValueError):
    """A judge's command that cannot be carried out; nothing was sent."""


def fingerprint(key):
    """What the store keeps of the event key: enough to refuse another key, no more."""
    return hashlib.sha256(b"duelclock key fingerprint\0" + key).hexdigest()[:16]


def unix_ms():
    return time.time_ns() // 1000000


def machine_boot_id():
    """What names this boot of the machine (Linux), or None: the monotonic clock counts
    from the machine's boot, so a mark taken under the same boot id is still on it."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip() or None
    except OSError:
        return None


class DeskClock:
    """Desk time: ms since the event's epoch, on the monotonic clock (a wall-clock step
    during the event does not move it). Callable from any thread. `speed` > 1 only in
    simulation: desk time then runs that many times faster (the simulated tables' clocks
    run at the same speed).

    Desk time must not step when the desk restarts mid-round either: every table has synced
    to it. So the service keeps a mark (boot id, monotonic ms, desk ms) in the store every
    tick and a restarted desk resume()s from it:
      same machine boot -> desk time carries on along the monotonic clock from the mark
                           (a wall-clock step, NTP or a hand, between the two runs is ignored)
      machine rebooted  -> the wall clock again (nothing else survives), never below the mark
    """

    def __init__(self, epoch_unix_ms, speed=1.0):
        self.speed = speed
        self.boot_id = machine_boot_id()
        self._mono0 = time.monotonic_ns() // 1000000
        self._desk0 = unix_ms() - epoch_unix_ms

    def __call__(self):
        return self._desk0 + int((time.monotonic_ns() // 1000000 - self._mono0) * self.speed)

    def mark(self):
        """(boot id, monotonic ms, desk ms) now: what resume() takes after a restart."""
        mono = time.monotonic_ns() // 1000000
        return self.boot_id, mono, self._desk0 + int((mono - self._mono0) * self.speed)

    def resume(self, mark):
        """Continue desk time from a mark of an earlier run (None: first run)."""
        if mark is None:
            return
        boot_id, mono_ms, desk_ms = mark
        if boot_id is not None and boot_id == self.boot_id:
            self._mono0, self._desk0 = mono_ms, desk_ms
        else:
            self._desk0 += max(0, desk_ms - self())


def parse_at(text, now_ms, epoch_unix_ms):
    """Desk ms of a start time: "now", "+90s" / "+2m", or local wall time "HH:MM[:SS]"
    today."""
    if text is None:
        return now_ms
    if type(text) is not str:
        raise CommandError("--at takes now, +90s, +2m or HH:MM[:SS]")
    text = text.strip()
    if text == "now":
        return now_ms
    if text.startswith("+"):
        unit = {"s": 1000, "m": 60000}.get(text[-1])
        if unit is None or not text[1:-1].isdigit():
            raise CommandError("--at +N needs s or m: +90s, +2m")
        return now_ms + int(text[1:-1]) * unit
    try:
        parts = [int(x) for x in text.split(":")]
    except ValueError:
        parts = []
    if len(parts) not in (2, 3):
        raise CommandError("--at takes now, +90s, +2m or HH:MM[:SS], not %r" % text)
    t = time.localtime()
    wall = time.mktime((t.tm_year, t.tm_mon, t.tm_mday, parts[0], parts[1],
                        parts[2] if len(parts) == 3 else 0, 0, 0, -1))
    return int(wall * 1000) - epoch_unix_ms


def replay_events(events):
    """(verdict dict, rejected count) of a record given as event dicts."""
    r = Replay()
    for ev in events:
        r.feed(json.dumps(ev))
    if r.match is None:
        raise RecordError("not a match record: no events")
    return r.match.verdict(), len(r.rejected), r.match.round_no


class Desk:
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
        self.links = list(links)
        self.on_change = on_change or (lambda kind, data: None)
        self.enc = Encoder(key, event["boot"])
        self.dec = Decoder(key, seen=store.last_seqs())
        self.route = {}            # tbl -> the link it was last heard on
        self.pushed = {}           # tbl -> desk ms of the last round push to it
        self.silent = set()
        self.drops = dict.fromkeys(wire.DROPS + ("stale", "refused"), 0)
        self.link_drops = {l.url: dict.fromkeys(wire.DROPS, 0) for l in self.links}
        self.round = store.current_round()
        self._cmds = store.cmds(self.round["round"]) if self.round else []

    def flush(self):
        self.store.commit()

    def close(self):
        self.store.close()

    # --- from the links -------------------------------------------------------------------

    def lines(self, link, lines, rx_ms, retained=False):
        """Whole lines received on `link` at desk time rx_ms; `retained`: a broker's
        retained copy (an old state from before a restart is no attack: counted "stale")."""
        before = dict(self.dec.drops)
        for line in lines:
            msg = self.dec.take(line)
            if msg is not None:
                self._take(link, msg, rx_ms)
        per_link = self.link_drops.setdefault(link.url, dict.fromkeys(wire.DROPS, 0))
        for reason, n in self.dec.drops.items():
            n -= before[reason]
            if n:
                stale = retained and reason == "replay"
                self.drops["stale" if stale else reason] += n
                if not stale:
                    per_link[reason] += n

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
        self.route[tbl] = link
        self.store.seen(tbl, link.url, rx_ms, None if k == "sync" else self.dec.last_seq(tbl))
        self.silent.discard(tbl)
        getattr(self, "_on_" + k)(link, msg, rx_ms)

    def _on_sync(self, link, msg, rx_ms):
        fields = {"t1": msg["t1"], "t2": rx_ms, "re": msg["seq"]}
        fields["t3"] = max(rx_ms, self.now_ms())
        link.send(self._build("sync", fields, msg["tbl"]), msg["tbl"])

    def _on_hello(self, link, msg, rx_ms):
        self.store.hello(msg["tbl"], msg["board"], msg["fw"], msg.get("battery"))
        self.pushed.pop(msg["tbl"], None)        # rebooted or reconnected: its next state counts
        self.on_change("table", self.table_view(msg["tbl"]))

    def _on_state(self, link, msg, rx_ms):
        tbl = msg["tbl"]
        self.store.state(tbl, msg, rx_ms)
        r = self.round
        if (r and r["state"] == "running" and msg["round"] < r["round"] and self._in_round(tbl)
                and rx_ms - self.pushed.get(tbl, -REPUSH_MS) >= REPUSH_MS):
            self._repush(tbl)
        self.on_change("table", self.table_view(tbl))

    def _on_record(self, link, msg, rx_ms):
        tbl, round_no, first = msg["tbl"], msg["round"], msg["first"]
        if first + len(msg["events"]) > MAX_RECORD_EVENTS or msg["total"] > MAX_RECORD_EVENTS:
            self.drops["refused"] += 1
            return
        start = self.store.round(round_no)
        flags = self.store.add_events(tbl, round_no, first, msg["events"], msg["total"], rx_ms,
                                      start and start["start_ms"], LATE_MS, NOT_LATE)
        if flags:
            self.on_change("table", self.table_view(tbl))
        r = self.store.result(tbl, round_no)
        if r["result"] is not None and r["verified"] in (None, "incomplete") \
                and self.store.event_count(tbl, round_no) >= r["events"]:
            self._verify(tbl, round_no)

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
            self._verify(tbl, round_no)

    # --- results ----------------------------------------------------------------------------

    def _verify(self, tbl, round_no):
        """Replay the stored record against the reported result; ack when they agree."""
        r = self.store.result(tbl, round_no)
        n = r["events"]
        events = self.store.events(tbl, round_no, n)
        if len(events) < n:
            self.store.verify(tbl, round_no, "incomplete",
                              "have %d of %d events" % (len(events), n), None, ())
            return
        reported = {"A": r["wins_a"], "B": r["wins_b"]}
        ok = False
        try:
            verdict, rejected, rec_round = replay_events(events)
        except RecordError as e:
            verdict, note = None, str(e)
        else:
            if rec_round != round_no:
                note = "the record is of round %d" % rec_round
            elif (verdict["result"], verdict["wins"]) != (r["result"], reported):
                note = "the record replays to %s %d-%d, the table reported %s %d-%d" % (
                    verdict["result"], verdict["wins"]["A"], verdict["wins"]["B"],
                    r["result"], reported["A"], reported["B"])
            else:
                ok, note = True, "%d events replayed, %d rejected" % (n, rejected)
        kinds = [f[1] for f in self.store.flags(tbl, round_no)]
        if kinds:
            note += "; %d event(s) changed on the table, %d entered while it was not " \
                    "connected: see the sheet, confirm with the players" % (
                        kinds.count("changed"), kinds.count("late"))
        self.store.verify(tbl, round_no, "ok" if ok else "mismatch", note, verdict,
                          verdict["penalties"] if verdict else ())
        if verdict:
            self._carries_of(tbl, round_no, events[0].get("rules", "ID"), verdict["penalties"])
        if ok:
            self.store.commit()                    # stored for good before the table forgets
            self._ack(tbl, round_no, n)
        view = self.table_view(tbl)
        if view is not None:                       # an imported record's table may be unheard
            self.on_change("table", view)

    def _carries_of(self, tbl, round_no, rules, penalties):
        # Each duel_loss/match_loss given after the match: a carry of the player the
        # round's pairings name on that side (none named: the desk cannot find the next
        # match, and status says so).
        names = self.store.pairings(round_no).get(tbl)
        for n, pen in enumerate(penalties):
            if pen.get("after_match") and pen["kind"] in CARRIED_KINDS:
                player = names["AB".index(pen["p"])] if names else None
                state = "unnamed" if player is None else ("confirm" if rules == "KR" else "ready")
                self.store.add_carry(round_no, tbl, n, player, pen["kind"], pen["code"], rules,
                                     state)

    def _ack(self, tbl, round_no, events):
        self._send_to(tbl, "ack", {"round": round_no, "events": events})
        self.store.acked(tbl, round_no, events)

    # --- sending ----------------------------------------------------------------------------

    def _build(self, k, fields, tbl):
        if self.enc.seq >= (self.event["boot"] + 1) * SEQ_BOOT:
            # This boot's seqs are spent (16.7 M messages): take a new boot, as at a restart.
            self.event = self.store.start_desk(self.event["name"], fingerprint(self.key),
                                               unix_ms())
            self.enc = Encoder(self.key, self.event["boot"])
        return self.enc.build(k, fields, tbl)

    def _send_to(self, tbl, k, fields):
        """One table: on the link it was last heard on, else on every link."""
        line = self._build(k, fields, tbl)
        link = self.route.get(tbl)
        for l in [link] if link else self.links:
            l.send(line, tbl)

    def _round_fields(self, fields, tbl, pairs):
        # The round message for one table: with its players' names and the language.
        out = dict(fields)
        names = pairs.get(tbl)
        if names:
            out["names"] = {"A": names[0], "B": names[1]}
        if self.round and self.round["lang"]:
            out["lang"] = self.round["lang"]
        pens = [{"p": c["p"], "kind": c["kind"], "code": c["code"]}
                for c in self.store.carries(fields["round"], tbl)]
        if pens:
            out["pens"] = pens
        return out

    def _cmd(self, k, fields, tables=None, tbl=0):
        """Store a round command and send it: to table `tbl`, or to each of `tables` (None:
        every table known now: heard from, or paired this round), one line per table."""
        round_no = self.round["round"] if self.round else 0
        pairs = self.store.pairings(round_no)
        stored = dict(fields, tables=tables) if tables is not None else fields
        self.store.add_cmd(round_no, k, tbl, stored)
        now = self.now_ms()
        if tbl:
            targets = [tbl]
        elif tables is None:
            targets = sorted(set(self.route) | set(pairs)
                             | {t["tbl"] for t in self.store.tables()})
        else:
            targets = tables
        for t in targets:
            self._send_to(t, k, self._round_fields(fields, t, pairs) if k == "round" else fields)
            if k == "round":
                self.pushed[t] = now
        self._cmds.append((k, tbl, stored))       # sent: a refused build raised before

    def _concerns(self, tbl, cmd):
        k, t, fields = cmd
        return t == tbl or (t == 0 and tbl in fields.get("tables", (tbl,)))

    def _repush(self, tbl):
        # Every command of the running round that concerns tbl, in order, each a new seq.
        self.pushed[tbl] = self.now_ms()
        pairs = self.store.pairings(self.round["round"])
        for k, t, fields in self._cmds:
            if self._concerns(tbl, (k, t, fields)):
                fields = dict(fields)
                fields.pop("tables", None)
                self._send_to(tbl, k, self._round_fields(fields, tbl, pairs) if k == "round"
                              else fields)

    def _in_round(self, tbl):
        return any(self._concerns(tbl, c) for c in self._cmds if c[0] == "round")

    def _paused(self, tbl):
        paused = False
        for c in self._cmds:
            if c[0] in ("pause", "resume") and self._concerns(tbl, c):
                paused = c[0] == "pause"
        return paused

    # --- judges' commands -------------------------------------------------------------------

    def run(self, who, name, args):
        """Carry out command `name` (start_round, pause, resume, extend, rules, collect,
        import, carry) with keyword `args`, audited; its result, or CommandError (audited as
        refused)."""
        try:
            out = getattr(self, "cmd_" + name)(**args)
        except ValueError as e:        # CommandError, or a field the Encoder refused
            self.store.rollback()
            self.store.audit(unix_ms(), self.now_ms(), who, name, args, "refused: %s" % e)
            self.store.commit()
            raise CommandError(str(e))
        self.store.audit(unix_ms(), self.now_ms(), who, name, args, "ok")
        self.store.commit()
        return out

    def cmd_start_round(self, round, kind="swiss", tables=None, at=None, limit_s=2700,
                        cap_s=1800, extra_turns=1, seating=False, rules=None, lang=None,
                        pairings=()):
        """Start round `round` on `tables` (None: all) at `at` (parse_at; None: now).
        The same round again takes more tables (a late one); a lower round is refused."""
        cur = self.round
        if type(round) is not int or round < 1:
            raise CommandError("the round is a number from 1")
        if cur and round < cur["round"]:
            raise CommandError("round %d is running; rounds only go up" % cur["round"])
        if kind not in KINDS:
            raise CommandError("kind is swiss or elimination")
        if rules is not None and rules not in RULE_SETS:
            raise CommandError("rules are one of %s" % ", ".join(RULE_SETS))
        pairs = _check_pairings(pairings)
        tables = _check_tables(tables)
        start_ms = parse_at(at, self.now_ms(), self.event["epoch_unix_ms"])
        fields = {"round": round, "kind": kind, "start_ms": start_ms, "limit_s": limit_s,
                  "cap_s": cap_s, "extra_turns": extra_turns, "seating": seating}
        if rules:
            fields["rules"] = rules          # the table writes it into its round_start
        _valid("round", dict(fields, lang=lang) if lang else fields)
        if cur is None or round > cur["round"]:
            self.store.new_round(dict(fields, rules=rules, lang=lang, tables=tables))
            self._cmds = []
        else:
            merged = None if tables is None or cur["tables"] is None else \
                sorted(set(cur["tables"]) | set(tables))
            self.store.round_tables(round, merged)
        self.store.set_pairings(round, pairs)
        self.round = self.store.current_round()
        self._send_carries(round, pairs)
        if rules:
            self._cmd("rules", {"name": rules, "settings": {
                "limit_s": limit_s, "cap_s": cap_s, "extra_turns": extra_turns,
                "seating": seating}}, tables)
        self._cmd("round", fields, tables)
        return {"round": round, "start_ms": start_ms, "tables": tables}

    def _send_carries(self, round_no, pairs):
        # Every ready carry of a player these pairings name goes to that table's round,
        # the player's side there (a later round than its own: a round started again for
        # a late table takes none of its own round's penalties).
        seats = {}
        for tbl, a, b in pairs:
            seats[a], seats[b] = (tbl, "A"), (tbl, "B")
        for c in self.store.carries():
            if c["state"] == "ready" and c["from_round"] < round_no and c["player"] in seats:
                tbl, p = seats[c["player"]]
                self.store.set_carry(c["id"], "sent", round_no, tbl, p)

    def cmd_carry(self, id, confirm):
        """The head judge's call on a carried penalty awaiting it (KR 1.D: the judge's
        discretion): confirm (it goes with the player's next round started) or decline."""
        c = self.store.carry(id) if type(id) is int else None
        if c is None:
            raise CommandError("no carried penalty %r (duelclock status lists them)" % (id,))
        if type(confirm) is not bool:
            raise CommandError("confirm is true or false")
        if c["state"] != "confirm":
            raise CommandError("carried penalty %d is %s, not awaiting the head judge"
                               % (id, c["state"]))
        self.store.set_carry(id, "ready" if confirm else "declined")
        return dict(self.store.carry(id))

    def _running(self):
        if not self.round or self.round["state"] != "running":
            raise CommandError("no round is running")
        return self.round

    def cmd_pause(self, tables=None, at_ms=None):
        return self._pause_resume("pause", tables, at_ms)

    def cmd_resume(self, tables=None, at_ms=None):
        return self._pause_resume("resume", tables, at_ms)

    def _pause_resume(self, k, tables, at_ms):
        self._running()
        at = self.now_ms() if at_ms is None else at_ms
        if type(at) is not int:
            raise CommandError("at_ms is desk ms")
        self._cmd(k, {"at_ms": at}, _check_tables(tables))
        return {"at_ms": at}

    def cmd_extend(self, table, ms):
        r = self._running()
        known = type(table) is int and (self.store.table(table) is not None
                                        or table in self.store.pairings(r["round"]))
        if not known or not self._in_round(table):
            raise CommandError("table %s is not in round %d" % (table, r["round"]))
        if type(ms) is not int or not MIN_EXTEND_MS <= ms <= MAX_EXTEND_MS:
            raise CommandError("an extension is 1 s to 60 min")
        self._cmd("extend", {"round": r["round"], "ms": ms}, tbl=table)
        return {"table": table, "ms": ms}

    def cmd_rules(self, name, settings, tables=None):
        self._running()
        _valid("rules", {"name": name, "settings": settings})
        self._cmd("rules", {"name": name, "settings": settings}, _check_tables(tables))
        return {"name": name}

    def cmd_collect(self, round=None):
        """Check every result of the round again (replay, penalties, ack); what is there."""
        if round is not None and type(round) is not int:
            raise CommandError("the round is a number")
        r = self.store.round(round) if round else self.round
        if r is None:
            raise CommandError("no such round")
        results = self.store.results(r["round"])
        for res in results:
            if res["result"] is not None and res["verified"] != "ok":
                self._verify(res["tbl"], r["round"])
        by = {}
        for res in self.store.results(r["round"]):
            by.setdefault(res["verified"] or "no result", []).append(res["tbl"])
        have = {res["tbl"] for res in results}
        missing = [t for t in self._round_tables(r) if t not in have]
        return {"round": r["round"], "results": by, "missing": missing}

    def cmd_import(self, table, round, events):
        """A record copied off a table over USB (duelclock pull --import): the match its
        next round stranded before the desk had it. Stored as if the table had sent it
        (events the desk holds already stay as they are); a finished match's result is its
        record's replay, as the table would have reported it, verified as any other. The
        audit names who brought it."""
        if type(table) is not int or type(round) is not int or table < 1 or round < 0:
            raise CommandError("table and round are numbers")
        if type(events) is not list or not events or len(events) > MAX_RECORD_EVENTS:
            raise CommandError("events: a list of 1 to %d events" % MAX_RECORD_EVENTS)
        try:
            verdict, _, rec_round = replay_events(events)
        except RecordError as e:
            raise CommandError(str(e))
        if rec_round != round:
            raise CommandError("the record is of round %d, not %d" % (rec_round, round))
        self.store.add_events(table, round, 0, events, len(events))
        if verdict["result"] != "pending":
            self.store.report_result(table, round, {"result": verdict["result"],
                                                    "wins": verdict["wins"],
                                                    "events": len(events)}, self.now_ms())
            self._verify(table, round)
        r = self.store.result(table, round)
        return {"table": table, "round": round, "events": self.store.event_count(table, round),
                "result": r["result"], "verified": r["verified"]}

    def _round_tables(self, r):
        if r["tables"] is not None:
            return sorted(r["tables"])
        known = {t["tbl"] for t in self.store.tables()} | set(self.store.pairings(r["round"]))
        return sorted(known)

    # --- what the judges see ----------------------------------------------------------------

    def tick(self):
        """Once a second or so: tables that went silent are shown so; commit."""
        now = self.now_ms()
        for t in self.store.tables():
            if t["last_seen_ms"] is not None and now - t["last_seen_ms"] > SILENT_MS \
                    and t["tbl"] not in self.silent:
                self.silent.add(t["tbl"])
                self.on_change("table", self._view(t, now))
        self.store.commit()

    def table_view(self, tbl):
        """What status shows of one table, None for a table never heard from."""
        t = self.store.table(tbl)
        return None if t is None else self._view(t, self.now_ms())

    def _view(self, t, now):
        state = json.loads(t["state"]) if t["state"] else {}
        age = now - t["state_ms"] if t["state_ms"] is not None else 0
        running = self.round is not None and self.round["state"] == "running"
        remaining = state.get("remaining_ms")
        if remaining is not None and state.get("phase") not in FROZEN_PHASES \
                and not self._paused(t["tbl"]):
            remaining -= age
        res = self.store.result(t["tbl"], self.round["round"]) if self.round else None
        alerts = []
        if not t["online"]:
            alerts.append("offline")
        if t["last_seen_ms"] is not None and now - t["last_seen_ms"] > SILENT_MS:
            alerts.append("silent")
        # A table states its sync age and error in desk-rate ms; they are shown and judged in
        # real ms, so a simulation at 40x does not multiply its scheduling delays by 40.
        sync_age = None if t["sync_age_ms"] is None else int((t["sync_age_ms"] + age) / self.speed)
        sync_err = None if t["sync_err_ms"] is None else int(t["sync_err_ms"] / self.speed + 0.5)
        if (sync_err or 0) > SYNC_ERR_ALERT_MS or (sync_age or 0) > SYNC_AGE_ALERT_MS:
            alerts.append("sync")
        if running and state.get("round", 0) < self.round["round"] and self._in_round(t["tbl"]):
            alerts.append("no round")
        if res and res["verified"] == "mismatch":
            alerts.append("mismatch")
        kinds = [f[1] for f in self.store.flags(t["tbl"], self.round["round"])] \
            if self.round else ()
        if "changed" in kinds:
            alerts.append("record changed")
        if "late" in kinds:
            alerts.append("late entry")
        if state.get("judge"):
            alerts.append("judge")
        if state.get("locked"):
            alerts.append("pin locked")
        if state.get("journal_full"):
            alerts.append("journal full")
        if state.get("drops", 0) >= JUNK_ALERT_DROPS:
            alerts.append("junk on port")
        if t["battery"] is not None and t["battery"] < LOW_BATTERY:
            alerts.append("battery")
        return {"table": t["tbl"], "link": t["link"], "online": bool(t["online"]),
                "board": t["board"], "fw": t["fw"], "battery": t["battery"],
                "seen_ago_ms": None if t["last_seen_ms"] is None else now - t["last_seen_ms"],
                "sync_age_ms": sync_age, "sync_err_ms": sync_err, "round": state.get("round"),
                "phase": state.get("phase"), "duel": state.get("duel"), "turn": state.get("turn"),
                "wins": state.get("wins"), "lp": state.get("lp"), "remaining_ms": remaining,
                "paused": self._paused(t["tbl"]),
                "result": res["result"] if res else None,
                "verified": res["verified"] if res else None, "alerts": alerts}

    def status(self):
        now = self.now_ms()
        tables = [self._view(t, now) for t in self.store.tables()]
        r = dict(self.round) if self.round else None
        unfinished = [v["table"] for v in tables
                      if r and (r["tables"] is None or v["table"] in r["tables"])
                      and v["verified"] != "ok"]
        return {"event": self.event["name"], "boot": self.event["boot"], "desk_ms": now,
                "round": r, "unfinished": unfinished, "drops": self.drops,
                "carries": self.store.carries(),
                "links": [dict(l.info(), drops=self.link_drops.get(l.url)) for l in self.links],
                "tables": tables}

    def table_detail(self, tbl):
        t = self.store.table(tbl)
        if t is None:
            return None
        out = self._view(t, self.now_ms())
        round_no = self.round["round"] if self.round else 0
        res = self.store.result(tbl, round_no)
        if res and res["verdict"]:
            res["verdict"] = json.loads(res["verdict"])
        out.update(state=json.loads(t["state"]) if t["state"] else None, result_detail=res,
                   events_stored=self.store.event_count(tbl, round_no),
                   penalties=self.store.penalties(tbl, round_no),
                   names=self.store.pairings(round_no).get(tbl))
        return out


def _valid(k, fields):
    """CommandError unless `fields` make a desk message `k` a table would take (checked
    without building it: a refused command uses no seq)."""
    msg = dict(fields, v=wire.VERSION, k=k, tbl=wire.MAX_TABLE, seq=wire.MAX_INT - 1)
    why = wire.check(wire.DESK_TYPES, msg)
    if why:
        raise CommandError("bad %s: %s: %s" % (k, why[0], why[1]))
    if len(canonical(msg)) + SIG_BYTES > wire.MAX_LINE_BYTES + 1:
        raise CommandError("bad %s: longer than a line" % k)


def _check_tables(tables):
    if tables is None:
        return None
    if type(tables) is not list or not tables or \
            not all(type(t) is int and 1 <= t <= wire.MAX_TABLE for t in tables):
        raise CommandError("tables are numbers from 1 to %d" % wire.MAX_TABLE)
    return sorted(set(tables))


def _check_pairings(pairings):
    if type(pairings) not in (list, tuple):
        raise CommandError("pairings are a list of (table, player A, player B)")
    out = []
    for p in pairings:
        if type(p) not in (list, tuple) or len(p) != 3 or type(p[0]) is not int \
                or not 1 <= p[0] <= wire.MAX_TABLE:
            raise CommandError("a pairing is (table, player A, player B): %r" % (p,))
        for name in p[1:]:
            if type(name) is not str or not 0 < len(name) <= wire.MAX_STR:
                raise CommandError("a player name is 1 to %d characters: %r" % (wire.MAX_STR, name))
        out.append((p[0], p[1], p[2]))
    return out
