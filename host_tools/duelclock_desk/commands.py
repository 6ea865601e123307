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
import json
import time

from duelclock.core import wire
from duelclock.core.record import KINDS, RULE_SETS
from duelclock.core.replay import RecordError
from duelclock.core.sign import canonical

from duelclock_desk.desk_time import unix_ms
from duelclock_desk.protocol import MAX_RECORD_EVENTS
from duelclock_desk.verification import replayed

MIN_EXTEND_MS, MAX_EXTEND_MS = 1000, 3600000   # as the record's `extend` event takes
RESULTS = ("A", "B", "double_loss")            # a finished match's result (events.md)
MAX_WINS = 9
MAX_REASON = 200           # characters of a head judge's reason
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
    send_lines(), _build(), _ack() and verify() (protocol.py). `who`: who runs the command
    being carried out (run() sets it)."""

    who = None

    def run(self, who, name, args):
        """Carry out command `name` (start_round, pause, resume, extend, collect, import,
        carry, result, close_round) with keyword `args`, audited; its result, or CommandError
        (audited as refused)."""
        self.who = who
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
        if cur and round == cur["round"] and cur["closed_ms"] is not None:
            raise CommandError("round %d is closed; the next round is %d" % (round, round + 1))
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
        r = self._running()
        at = self.now_ms() if at_ms is None else at_ms
        if type(at) is not int:
            raise CommandError("at_ms is desk ms")
        tables = _check_tables(tables)
        self._cmd(k, {"at_ms": at}, r["tables"] if tables is None else tables)
        return {"at_ms": at, "tables": tables}

    def cmd_extend(self, ms=None, table=None, tables=None):
        """Extra time for one table, a list, or (neither) every table of the round: each
        table its own signed command, so each journals its own extension."""
        r = self._running()
        if type(ms) is not int or not MIN_EXTEND_MS <= ms <= MAX_EXTEND_MS:
            raise CommandError("an extension is 1 s to 60 min")
        if table is not None and tables is not None:
            raise CommandError("extend takes a table or tables, not both")
        at = self.now_ms()          # each table journals it at this instant (its at_ms)
        fields = {"round": r["round"], "ms": ms, "at_ms": at}
        if table is not None:
            self._check_in_round(r, table)
            self._cmd("extend", fields, tbl=table)
            return {"table": table, "tables": [table], "ms": ms, "at_ms": at}
        if tables is None:
            tables = [t for t in self._round_tables(r) if self.in_round(t)]
            if not tables:
                raise CommandError("no table has round %d yet" % r["round"])
        else:
            tables = _check_tables(tables)
            for t in tables:
                self._check_in_round(r, t)
        self._cmd("extend", fields, tables)
        return {"table": None, "tables": tables, "ms": ms, "at_ms": at}

    def _check_in_round(self, r, table):
        known = type(table) is int and (self.store.table(table) is not None
                                        or table in self.store.pairings(r["round"]))
        if not known or not self.in_round(table):
            raise CommandError("table %s is not in round %d" % (table, r["round"]))

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
        have = {res["tbl"] for res in results}
        for tbl in sorted(have | set(self.store.expected(r["round"]))):
            st = self.store.standing(tbl, r["round"])
            if st != "no result" or tbl in have:
                by.setdefault("no result" if st == "playing" else st, []).append(tbl)
                have.add(tbl)
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
        closed = self.store.round(round)
        self.store.add_events(table, round, 0, events, len(events), self.now_ms(),
                              closed_ms=closed and closed["closed_ms"])
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

    # --- the head judge's last word ------------------------------------------------------------

    def cmd_result(self, table=None, reason=None, round=None, take=None, result=None, wins=None):
        """The head judge's result for `table` in `round` (default: the current one), with a
        reason: `take` "table" (its reported verdict) or "replay" (the desk's replay of its
        record) to settle a mismatch or a record flagged changed or late (once confirmed
        with the players), or a typed `result` and `wins` {"A": n, "B": n} (from
        the paper sheet: a table with no record, a partial one, or any result overridden).
        A new version in the store (result_versions); the table's own record and report
        stay. A settled mismatch whose record the desk holds whole is acked: the table may
        rotate the match out."""
        r = self.store.round(round) if type(round) is int else (
            self.round if round is None else None)
        if r is None:
            raise CommandError("no such round: %r" % (round,))
        round_no = r["round"]
        if type(table) is not int or not 1 <= table <= wire.MAX_TABLE:
            raise CommandError("the table is a number from 1 to %d" % wire.MAX_TABLE)
        if table not in self._tables_of(r):
            raise CommandError("table %d has no match in round %d" % (table, round_no))
        if type(reason) is not str or not reason.strip() or len(reason) > MAX_REASON:
            raise CommandError("a reason is 1 to %d characters: why the head judge decides"
                               % MAX_REASON)
        res = self.store.result(table, round_no)
        reported = res if res and res["result"] is not None else None
        if take is not None:
            if result is not None or wins is not None:
                raise CommandError("take a verdict or type a result, not both")
            if take not in ("table", "replay"):
                raise CommandError("take is table or replay")
            flagged = {f[1] for f in self.store.flags(table, round_no)} & {"changed", "late"}
            if not reported or (res["verified"] != "mismatch" and not flagged):
                raise CommandError("table %d round %d has no mismatch or flagged record to "
                                   "settle (it is %s): type the result" % (
                                       table, round_no, self.store.standing(table, round_no)))
            if take == "table":
                result, wins = res["result"], {"A": res["wins_a"], "B": res["wins_b"]}
            else:
                verdict = json.loads(res["verdict"]) if res["verdict"] else None
                if verdict is None or verdict["result"] == "pending":
                    raise CommandError("the record of table %d does not replay to a finished "
                                       "match (%s): take the table's, or type the result"
                                       % (table, res["note"]))
                result, wins = verdict["result"], verdict["wins"]
        else:
            if result not in RESULTS:
                raise CommandError("the result is one of %s" % ", ".join(RESULTS))
            if type(wins) is not dict or set(wins) != {"A", "B"} or not all(
                    type(n) is int and 0 <= n <= MAX_WINS for n in wins.values()):
                raise CommandError("wins are {A: n, B: n}, 0 to %d each" % MAX_WINS)
        how = "overridden" if reported else "entered"
        version = self.store.add_version(
            table, round_no, "judge", how, take or "typed", result, wins["A"], wins["B"],
            reported and reported["events"], self.who, reason.strip(), unix_ms(),
            self.now_ms())
        if reported and res["verified"] == "mismatch" and res["acked_events"] is None \
                and self.store.event_count(table, round_no) >= res["events"]:
            self.store.commit()                # decided for good before the table forgets
            self._ack(table, round_no, res["events"])
        view = self.table_view(table)
        if view is not None:
            self.on_change("table", view)
        return {"table": table, "round": round_no, "result": result, "wins": wins, "how": how,
                "taken": take or "typed", "reason": reason.strip(), "who": self.who,
                "version": version}

    def _tables_of(self, r):
        # The tables with a match in round r: paired, sent its round, or with a result.
        tables = set(self.store.pairings(r["round"])) | set(self.store.expected(r["round"]))
        cmds = self._cmds if self.round and r["round"] == self.round["round"] \
            else self.store.cmds(r["round"])
        for k, t, fields in cmds:
            if k == "round":
                tables |= {t} if t else set(fields.get("tables") or self._round_tables(r))
        return tables

    def cmd_close_round(self, round=None, force=False):
        """Close the running round (the head judge ends it): refused, with what is open,
        while a table is unfinished, unverified or flagged, unless `force`. Records that
        arrive later are stored and flagged "after close"."""
        r = self._running()
        if round is not None and round != r["round"]:
            raise CommandError("round %d is the running round, not %r" % (r["round"], round))
        if type(force) is not bool:
            raise CommandError("force is true or false")
        still = self.open_items(r["round"])
        if any(still.values()) and not force:
            raise CommandError("round %d is not done: %s; --force closes it anyway"
                               % (r["round"], open_text(still)))
        now = self.now_ms()
        self.store.close_round(r["round"], now)
        self.round = self.store.current_round()
        for t in self.store.tables():
            self.on_change("table", self.table_view(t["tbl"]))
        return dict(still, round=r["round"], closed_ms=now)

    def open_items(self, round_no):
        """What stands between a round and its close: {unfinished: [tbl] (no result, still
        playing), unverified: [tbl] (a result whose record is incomplete), flagged: [[tbl,
        why]] (a mismatch unsettled, a record flagged and not decided by the head judge),
        carries: [id] (awaiting the head judge)}."""
        out = {"unfinished": [], "unverified": [], "flagged": [], "carries": []}
        for tbl in self.store.expected(round_no):
            st = self.store.standing(tbl, round_no)
            if st in ("no result", "playing"):
                out["unfinished"].append(tbl)
            elif st == "incomplete":
                out["unverified"].append(tbl)
            elif st == "mismatch":
                out["flagged"].append([tbl, "mismatch"])
            if st not in ("entered", "overridden"):
                kinds = sorted({f[1] for f in self.store.flags(tbl, round_no)} - {"after_close"})
                if kinds:
                    out["flagged"].append([tbl, "record " + "/".join(kinds)])
        out["carries"] = [c["id"] for c in self.store.carries()
                          if c["from_round"] == round_no and c["state"] == "confirm"]
        return out

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


def open_text(still):
    """open_items() as one line: "unfinished: tables 3, 5; flagged: 2 (mismatch)"."""
    parts = []
    for what in ("unfinished", "unverified"):
        if still[what]:
            parts.append("%s: tables %s" % (what, ", ".join(map(str, still[what]))))
    if still["flagged"]:
        parts.append("flagged: " + ", ".join("%d (%s)" % (t, why) for t, why in still["flagged"]))
    if still["carries"]:
        parts.append("carried penalties awaiting the head judge: " +
                     ", ".join(map(str, still["carries"])))
    return "; ".join(parts) or "nothing open"


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
