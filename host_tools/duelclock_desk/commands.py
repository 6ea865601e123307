"""The judges' commands (start_round, pause, resume, extend, collect, import, carry)
and the round's commands they leave for the tables. A mixin of Desk (desk.py), which holds
the state it names.

run() audits each command, refused or not. A command for tables is stored in round_cmds
(and `_cmds`) so a table can be given it again, and sent signed by the desk's Encoder
(protocol.py). There is no broadcast: a command for all tables goes to each table known,
signed with that table's key (a table holds no other), and a table heard of later gets the
round's commands by the re-push (protocol.py, "state").

A round started with pairings that name a player takes every ready carry of that player
(verification.py makes them): its round message to that table holds the penalty in `pens`.
"""
import time

from duelclock.core import wire
from duelclock.core.record import KINDS, RULE_SETS
from duelclock.core.replay import RecordError
from duelclock.core.sign import canonical

from duelclock_desk.desk_time import unix_ms
from duelclock_desk.protocol import MAX_RECORD_EVENTS
from duelclock_desk.verification import replayed

MIN_EXTEND_MS, MAX_EXTEND_MS = 1000, 3600000   # as the record's `extend` event takes
SIG_BYTES = len(',"sig":""') + 64 + 1     # what signing adds to a canonical message, "\n" in


class CommandError(ValueError):
    """A judge's command that cannot be carried out; nothing was sent."""


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


class Commands:
    """Uses of Desk: store, event, round, _cmds, pushed, route, now_ms; send_to(),
    send_lines(), _build() and verify() (protocol.py)."""

    def run(self, who, name, args):
        """Carry out command `name` (start_round, pause, resume, extend, collect, import,
        carry) with keyword `args`, audited; its result, or CommandError (audited as
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
                        pairings=(), judge_extend=False):
        """Start round `round` on `tables` (None: all) at `at` (parse_at; None: now).
        The same round again takes more tables (a late one); a lower round is refused.
        judge_extend: the organiser lets the head judge extend a table's time at the table
        (each table journals it in its round_start)."""
        cur = self.round
        if type(round) is not int or round < 1:
            raise CommandError("the round is a number from 1")
        if cur and round < cur["round"]:
            raise CommandError("round %d is running; rounds only go up" % cur["round"])
        if kind not in KINDS:
            raise CommandError("kind is swiss or elimination")
        if rules is not None and rules not in RULE_SETS:
            raise CommandError("rules are one of %s" % ", ".join(RULE_SETS))
        if type(judge_extend) is not bool:
            raise CommandError("judge_extend is true or false")
        pairs = _check_pairings(pairings)
        tables = _check_tables(tables)
        start_ms = parse_at(at, self.now_ms(), self.event["epoch_unix_ms"])
        fields = {"round": round, "kind": kind, "start_ms": start_ms, "limit_s": limit_s,
                  "cap_s": cap_s, "extra_turns": extra_turns, "seating": seating}
        if rules:
            fields["rules"] = rules          # the table writes it into its round_start
        if judge_extend:
            fields["judge_extend"] = True    # so is this
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
        self._cmd("round", fields, tables)
        return {"round": round, "start_ms": start_ms, "tables": tables}

    def cmd_unlock(self, table, challenge):
        """The code that opens `table`'s maintenance for `challenge` (unlock.py); run()
        audits who asked, for which table and challenge."""
        from duelclock_desk.unlock import UnlockError, code
        try:
            return {"table": table, "code": code(self.key, table, challenge)}
        except UnlockError as e:
            raise CommandError(str(e))

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
        if not known or not self.in_round(table):
            raise CommandError("table %s is not in round %d" % (table, r["round"]))
        if type(ms) is not int or not MIN_EXTEND_MS <= ms <= MAX_EXTEND_MS:
            raise CommandError("an extension is 1 s to 60 min")
        at = self.now_ms()
        self._cmd("extend", {"round": r["round"], "ms": ms, "at_ms": at}, tbl=table)
        return {"table": table, "ms": ms, "at_ms": at}

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
                self.verify(res["tbl"], r["round"])
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
            match = replayed(events).match
        except RecordError as e:
            raise CommandError(str(e))
        if match.round_no != round:
            raise CommandError("the record is of round %d, not %d" % (match.round_no, round))
        self.store.add_events(table, round, 0, events, len(events))
        verdict = match.verdict()
        if verdict["result"] != "pending":
            self.store.report_result(table, round, {"result": verdict["result"],
                                                    "wins": verdict["wins"],
                                                    "events": len(events)}, self.now_ms())
            self.verify(table, round)
        r = self.store.result(table, round)
        return {"table": table, "round": round, "events": self.store.event_count(table, round),
                "result": r["result"], "verified": r["verified"]}

    def _round_tables(self, r):
        if r["tables"] is not None:
            return sorted(r["tables"])
        known = {t["tbl"] for t in self.store.tables()} | set(self.store.pairings(r["round"]))
        return sorted(known)

    # --- the round's commands, as the tables are given them ---------------------------------

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
        self.send_lines([(t, self._build(k, self._round_fields(fields, t, pairs)
                                          if k == "round" else fields, t)) for t in targets])
        if k == "round":
            for t in targets:
                self.pushed[t] = now
        self._cmds.append((k, tbl, stored))       # sent: a refused build raised before

    def repush(self, tbl):
        """Every command of the running round that concerns tbl, in order, each a new seq."""
        self.pushed[tbl] = self.now_ms()
        pairs = self.store.pairings(self.round["round"])
        for k, t, fields in self._cmds:
            if _concerns(tbl, (k, t, fields)):
                fields = dict(fields)
                fields.pop("tables", None)
                self.send_to(tbl, k, self._round_fields(fields, tbl, pairs) if k == "round"
                             else fields)

    def in_round(self, tbl):
        return any(_concerns(tbl, c) for c in self._cmds if c[0] == "round")

    def paused(self, tbl):
        paused = False
        for c in self._cmds:
            if c[0] in ("pause", "resume") and _concerns(tbl, c):
                paused = c[0] == "pause"
        return paused


def _concerns(tbl, cmd):
    k, t, fields = cmd
    return t == tbl or (t == 0 and tbl in fields.get("tables", (tbl,)))


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
