"""The desk's store: one SQLite file (WAL) that survives desk restarts.

Written only by the desk service, from its event-loop thread; read-only commands of the CLI
(export, sheet) open the same file beside it (WAL lets them read while the desk writes).
The `tables` rows change at every line a table sends: Store keeps them in memory and writes
them at commit(), so another process sees them as of the desk's last commit, as before.

What lives here, table by table:
  event      one row: the event's name (MQTT topic id), its epoch (Unix ms; desk time is
             ms since then), the event key's fingerprint (never the key: it stays in the
             --key file) and the desk's boot counter (raised at every desk start; wire
             seq = boot * 2**24 + n).
  tables     one row per table seen: link, board, firmware, battery, last seen, online,
             last state (JSON), sync age and error, last report seq (Decoder seen= after a
             restart); from its hello: free flash, Wi-Fi signal, boot counter, and the
             reboots counted in reboots_round.
  rounds     one row per round started: kind, start, limit, cap, extra turns, seating, rules,
             language, the tables it covers (JSON list, NULL: all), state (running/closed),
             closed_ms: desk ms of the head judge's `round close` (NULL: closed, if at all,
             by the next round's start).
  round_cmds every round-control command as sent (k, tbl, fields JSON), in order: what the
             desk re-pushes to a table that lost its round.
  pairings   player names per table per round.
  records    one row per record event: UNIQUE(tbl, round, idx), so a resent or reordered
             chunk stores each event once.
  results    per table and round: record total announced, reported result, the desk's
             replay verdict and whether it matches (verified: ok/mismatch/incomplete).
             The table's own word: a head judge's decision never changes it.
  result_versions  every version of a result, never changed once written: each result a
             table reported ("table", how "reported") and each the head judge gave ("judge",
             how "entered": the table had reported none; "overridden": it had), with what
             the judge took (the table's verdict, the desk's replay, or typed), who, when
             and why. The latest judge version is the round's result for that table.
  penalties  the penalties in force in the replayed record (after_match: given once the
             match was over, events.md).
  carries    a duel_loss or match_loss given after a match, carried to the player's next
             match (rules.md 5): who (the name in the pairings), from which record, and its
             state: confirm (KR: the head judge decides at the desk), ready (ID: at once;
             KR: confirmed), sent (put into round/tbl as side p), declined, unnamed (no
             pairing names the player: the desk cannot find the next match).
  record_flags  what the judge must see about a record's events: "changed" (the
             table re-sent event idx with another body: `detail` is that body, the desk's
             first copy stays in records) and "late" (it reached the desk `detail` ms after
             its own time, too long for when the table was linked: lateness.py).
  audit      every command: who, what, when, outcome.
  clock      one row: the desk clock's last mark (machine boot id, monotonic ms, desk ms),
             so a restarted desk carries desk time on without a step (desk.DeskClock).
"""
import csv
import io
import json
import sqlite3

SCHEMA = """
CREATE TABLE IF NOT EXISTS event (
    id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL,
    epoch_unix_ms INTEGER NOT NULL, key_fp TEXT NOT NULL, boot INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tables (
    tbl INTEGER PRIMARY KEY, link TEXT, board TEXT, fw TEXT, battery INTEGER,
    last_seen_ms INTEGER, online INTEGER NOT NULL DEFAULT 0, state TEXT, state_ms INTEGER,
    sync_age_ms INTEGER, sync_err_ms INTEGER, last_seq INTEGER, flash_kb INTEGER,
    rssi_dbm INTEGER, boot INTEGER, reboots INTEGER, reboots_round INTEGER);
CREATE TABLE IF NOT EXISTS rounds (
    round INTEGER PRIMARY KEY, kind TEXT NOT NULL, start_ms INTEGER NOT NULL,
    limit_s INTEGER NOT NULL, cap_s INTEGER NOT NULL, extra_turns INTEGER NOT NULL,
    seating INTEGER NOT NULL, rules TEXT, lang TEXT, tables TEXT,
    state TEXT NOT NULL, retained BLOB,   -- retained: unused (commands go per table, no broadcast)
    closed_ms INTEGER);
CREATE TABLE IF NOT EXISTS round_cmds (
    id INTEGER PRIMARY KEY, round INTEGER NOT NULL, k TEXT NOT NULL, tbl INTEGER NOT NULL,
    fields TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pairings (
    round INTEGER NOT NULL, tbl INTEGER NOT NULL, player_a TEXT NOT NULL,
    player_b TEXT NOT NULL, PRIMARY KEY (round, tbl));
CREATE TABLE IF NOT EXISTS records (
    tbl INTEGER NOT NULL, round INTEGER NOT NULL, idx INTEGER NOT NULL, event TEXT NOT NULL,
    PRIMARY KEY (tbl, round, idx)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS record_flags (
    tbl INTEGER NOT NULL, round INTEGER NOT NULL, idx INTEGER NOT NULL, kind TEXT NOT NULL,
    detail TEXT NOT NULL, rx_ms INTEGER NOT NULL, PRIMARY KEY (tbl, round, idx, kind));
CREATE TABLE IF NOT EXISTS results (
    tbl INTEGER NOT NULL, round INTEGER NOT NULL, total INTEGER NOT NULL DEFAULT 0,
    result TEXT, wins_a INTEGER, wins_b INTEGER, events INTEGER, received_ms INTEGER,
    verified TEXT, note TEXT, verdict TEXT, acked_events INTEGER,
    PRIMARY KEY (tbl, round));
CREATE TABLE IF NOT EXISTS result_versions (
    id INTEGER PRIMARY KEY, tbl INTEGER NOT NULL, round INTEGER NOT NULL,
    source TEXT NOT NULL, how TEXT NOT NULL, taken TEXT, result TEXT NOT NULL,
    wins_a INTEGER NOT NULL, wins_b INTEGER NOT NULL, events INTEGER, who TEXT, reason TEXT,
    unix_ms INTEGER, desk_ms INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS result_versions_of ON result_versions (round, tbl);
CREATE TABLE IF NOT EXISTS penalties (
    tbl INTEGER NOT NULL, round INTEGER NOT NULL, n INTEGER NOT NULL, p TEXT NOT NULL,
    kind TEXT NOT NULL, code TEXT NOT NULL, after_match INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tbl, round, n));
CREATE TABLE IF NOT EXISTS carries (
    id INTEGER PRIMARY KEY, from_round INTEGER NOT NULL, from_tbl INTEGER NOT NULL,
    n INTEGER NOT NULL, player TEXT, kind TEXT NOT NULL, code TEXT NOT NULL,
    rules TEXT NOT NULL, state TEXT NOT NULL, round INTEGER, tbl INTEGER, p TEXT,
    UNIQUE (from_round, from_tbl, n));
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY, unix_ms INTEGER NOT NULL, desk_ms INTEGER NOT NULL,
    who TEXT NOT NULL, command TEXT NOT NULL, args TEXT NOT NULL, outcome TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS clock (
    id INTEGER PRIMARY KEY CHECK (id = 1), boot_id TEXT, mono_ms INTEGER NOT NULL,
    desk_ms INTEGER NOT NULL);
"""

TABLE_COLUMNS = ("tbl", "link", "board", "fw", "battery", "last_seen_ms", "online", "state",
                 "state_ms", "sync_age_ms", "sync_err_ms", "last_seq", "flash_kb", "rssi_dbm",
                 "boot", "reboots", "reboots_round")   # as in SCHEMA
HEALTH_COLUMNS = TABLE_COLUMNS[-5:]         # added to tables since its first version
# Store._of_round: what -> the query of one round's rows (with tbl), "%s" for " AND tbl = ?".
MEMO = {
    "results": "SELECT * FROM results WHERE round = ?%s",
    "flags": "SELECT f.tbl, f.idx, f.kind, f.detail, r.event FROM record_flags f JOIN records r"
             " USING (tbl, round, idx) WHERE round = ?%s ORDER BY f.idx, f.kind",
    "penalties": "SELECT tbl, p, kind, code, after_match FROM penalties WHERE round = ?%s"
                 " ORDER BY n",
    "carries": "SELECT * FROM carries WHERE round = ?%s ORDER BY id",
    "decisions": "SELECT * FROM result_versions WHERE source = 'judge' AND round = ?%s"
                 " ORDER BY id",
}
FINAL = ("ok", "entered", "overridden")     # a table's standing that is the round's result
JUDGE_WORDS = {"entered": "entered by the head judge", "overridden": "overridden"}
AFTER_CLOSE = " (arrived after the close)"   # the CSV's verified of a record come late
CSV_COLUMNS = ("table", "round", "player_a", "player_b", "result", "wins_a", "wins_b",
               "penalties", "verified")


class StoreError(Exception):
    """The store cannot serve this desk (another event's key, no event yet)."""


def dumps(v):
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


class Store:
    """The SQLite file. Writes wait for commit(): the desk commits once per batch of
    messages, and always before it tells a table something is stored (ack)."""

    def __init__(self, path):
        self.path = path
        self.db = sqlite3.connect(path, isolation_level="DEFERRED")
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        # FULL: a committed record survives a power cut of the desk (the table drops a match
        # once acked); WAL makes that one fsync per batch.
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("PRAGMA busy_timeout=5000")
        self.db.executescript(SCHEMA)
        if "after_match" not in [r[1] for r in self._all("PRAGMA table_info(penalties)")]:
            # A store from before after_match was kept: its penalties were all listed as
            # given during the match (the replay can tell again: `duelclock collect`).
            self.db.execute("ALTER TABLE penalties ADD COLUMN after_match INTEGER NOT NULL"
                            " DEFAULT 0")
        if "closed_ms" not in [r[1] for r in self._all("PRAGMA table_info(rounds)")]:
            self.db.execute("ALTER TABLE rounds ADD COLUMN closed_ms INTEGER")
        have = [r[1] for r in self._all("PRAGMA table_info(tables)")]
        for column in HEALTH_COLUMNS:
            if column not in have:
                self.db.execute("ALTER TABLE tables ADD COLUMN %s INTEGER" % column)
        self.db.commit()
        self._load_tables()
        self._rounds = {}          # (what, round) -> {tbl: rows}: _of_round

    def close(self):
        self.commit()
        self.db.close()

    def commit(self):
        self._write_tables()
        self.db.commit()

    def rollback(self):
        self.db.rollback()
        self._rounds = {}

    # The rows the status view reads at every state of every table (its result, record
    # flags, penalties, carries), kept per round: one query loads a round's rows of one kind,
    # and each write below reloads the rows of the one table it changed.

    def _of_round(self, what, round_no):
        """{tbl: [row]} of MEMO[what] in round_no."""
        rows = self._rounds.get((what, round_no))
        if rows is None:
            rows = self._rounds[(what, round_no)] = {}
            for r in self._all(MEMO[what] % "", (round_no,)):
                rows.setdefault(r["tbl"], []).append(r)
        return rows

    def _reload(self, what, tbl, round_no):
        rows = self._rounds.get((what, round_no))
        if rows is not None:
            rows.pop(tbl, None)
            for r in self._all(MEMO[what] % " AND tbl = ?", (round_no, tbl)):
                rows.setdefault(tbl, []).append(r)

    def _one(self, sql, args=()):
        return self.db.execute(sql, args).fetchone()

    def _all(self, sql, args=()):
        return self.db.execute(sql, args).fetchall()

    # --- the event, the boot counter ------------------------------------------------------

    def event(self):
        """The event row as a dict, or None before the first desk start."""
        row = self._one("SELECT name, epoch_unix_ms, key_fp, boot FROM event")
        return dict(row) if row else None

    def start_desk(self, name, key_fp, now_unix_ms):
        """Create the event on first use, check the key, raise the boot counter; the row."""
        ev = self.event()
        if ev is None:
            self.db.execute("INSERT INTO event VALUES (1, ?, ?, ?, 0)",
                            (name or "event", now_unix_ms, key_fp))
        elif ev["key_fp"] != key_fp:
            raise StoreError("%s belongs to the event key with fingerprint %s, not %s: give "
                             "that key, or a new --store for a new key"
                             % (self.path, ev["key_fp"], key_fp))
        elif name and name != ev["name"]:
            raise StoreError("%s holds event %r, not %r" % (self.path, ev["name"], name))
        self.db.execute("UPDATE event SET boot = boot + 1")
        self.db.commit()
        return self.event()

    # --- the desk clock's mark -------------------------------------------------------------

    def clock_mark(self):
        """(boot id, monotonic ms, desk ms) last marked, or None."""
        row = self._one("SELECT boot_id, mono_ms, desk_ms FROM clock")
        return tuple(row) if row else None

    def set_clock_mark(self, mark):
        self.db.execute("INSERT OR REPLACE INTO clock VALUES (1, ?, ?, ?)", tuple(mark))

    # --- tables -----------------------------------------------------------------------------
    # Every line a table sends changes its row (last seen, state): these rows are kept in
    # memory and written at commit(), one statement for the batch, not one per line (each
    # statement lets the links' threads take the interpreter away from the desk's loop).
    # Reads are served from memory; a rollback() leaves them (link facts, not a command's).

    def _load_tables(self):
        self._tables = {r["tbl"]: dict(r) for r in self._all("SELECT * FROM tables")}
        self._dirty = set()

    def _write_tables(self):
        if self._dirty:
            rows = [tuple(self._tables[t][c] for c in TABLE_COLUMNS) for t in self._dirty]
            self.db.executemany("INSERT OR REPLACE INTO tables (%s) VALUES (%s)" % (
                ", ".join(TABLE_COLUMNS), ", ".join("?" * len(TABLE_COLUMNS))), rows)
            self._dirty = set()

    def table(self, tbl):
        row = self._tables.get(tbl)
        return dict(row) if row else None

    def tables(self):
        return [dict(self._tables[t]) for t in sorted(self._tables)]

    def last_seqs(self):
        """{tbl: last report seq} for Decoder(seen=...)."""
        return {t: r["last_seq"] for t, r in self._tables.items() if r["last_seq"] is not None}

    def seen(self, tbl, link, now_ms, last_seq):
        row = self._tables.get(tbl)
        if row is None:
            row = self._tables[tbl] = dict.fromkeys(TABLE_COLUMNS)
            row["tbl"] = tbl
        row.update(link=link, last_seen_ms=now_ms, online=1)
        if last_seq is not None:
            row["last_seq"] = last_seq
        self._dirty.add(tbl)

    def _update(self, tbl, **fields):
        # A table never seen has no row: nothing to change (as SQL UPDATE ... WHERE tbl).
        row = self._tables.get(tbl)
        if row is not None:
            row.update(fields)
            self._dirty.add(tbl)

    def hello(self, tbl, board, fw, battery, flash_kb=None, rssi_dbm=None, boot=None,
              round_no=None):
        """A table's hello: what it runs, its battery and free flash (None: the last ones
        stay), its Wi-Fi signal (None: not on Wi-Fi now). `boot`, its boot counter (a seq
        // SEQ_BOOT), above the last one seen is a reboot, counted in `round_no` (the
        running round; None: between rounds, not counted)."""
        row = self._tables.get(tbl)
        if row is None:
            return
        reboots, in_round = row["reboots"], row["reboots_round"]
        if None not in (boot, row["boot"], round_no) and boot > row["boot"]:
            reboots = (reboots or 0) + 1 if in_round == round_no else 1
            in_round = round_no
        self._update(tbl, board=board, fw=fw, rssi_dbm=rssi_dbm,
                     battery=row["battery"] if battery is None else battery,
                     flash_kb=row["flash_kb"] if flash_kb is None else flash_kb,
                     boot=row["boot"] if boot is None else boot,
                     reboots=reboots, reboots_round=in_round)

    def state(self, tbl, state, now_ms):
        row = self._tables.get(tbl)
        battery = state.get("battery")
        self._update(tbl, state=dumps(state), state_ms=now_ms,
                     sync_age_ms=state.get("sync_age_ms"), sync_err_ms=state.get("sync_err_ms"),
                     battery=row["battery"] if row and battery is None else battery)

    def set_online(self, tbl, online):
        self._update(tbl, online=int(online))

    # --- rounds -----------------------------------------------------------------------------

    def current_round(self):
        row = self._one("SELECT * FROM rounds ORDER BY round DESC LIMIT 1")
        return _round(row)

    def round(self, round_no):
        return _round(self._one("SELECT * FROM rounds WHERE round = ?", (round_no,)))

    def new_round(self, r):
        self.db.execute("UPDATE rounds SET state = 'closed' WHERE state = 'running'")
        self.db.execute(
            "INSERT INTO rounds (round, kind, start_ms, limit_s, cap_s, extra_turns, seating,"
            " rules, lang, tables, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running')",
            (r["round"], r["kind"], r["start_ms"], r["limit_s"], r["cap_s"], r["extra_turns"],
             int(r["seating"]), r["rules"], r["lang"],
             None if r["tables"] is None else dumps(r["tables"])))

    def close_round(self, round_no, now_ms):
        """The head judge closed the round at desk time now_ms."""
        self.db.execute("UPDATE rounds SET state = 'closed', closed_ms = ? WHERE round = ?",
                        (now_ms, round_no))

    def round_tables(self, round_no, tables):
        self.db.execute("UPDATE rounds SET tables = ? WHERE round = ?",
                        (None if tables is None else dumps(tables), round_no))

    def add_cmd(self, round_no, k, tbl, fields):
        self.db.execute("INSERT INTO round_cmds (round, k, tbl, fields) VALUES (?, ?, ?, ?)",
                        (round_no, k, tbl, dumps(fields)))

    def cmds(self, round_no):
        """[(k, tbl, fields)] of the round, in the order sent."""
        return [(r[0], r[1], json.loads(r[2])) for r in self._all(
            "SELECT k, tbl, fields FROM round_cmds WHERE round = ? ORDER BY id", (round_no,))]

    def set_pairings(self, round_no, pairs):
        self.db.executemany("INSERT OR REPLACE INTO pairings VALUES (?, ?, ?, ?)",
                            [(round_no, t, a, b) for t, a, b in pairs])

    def pairings(self, round_no):
        """{tbl: (player_a, player_b)}"""
        return {r[0]: (r[1], r[2]) for r in self._all(
            "SELECT tbl, player_a, player_b FROM pairings WHERE round = ?", (round_no,))}

    # --- records and results ----------------------------------------------------------------

    def add_events(self, tbl, round_no, first, events, total, rx_ms=0, start_ms=None,
                   late_ms=None, not_late=(), closed_ms=None):
        """Store events first.. of the record (each index once: the first copy stays); raise
        the announced total. An index re-sent with another body is flagged "changed" (that
        body kept beside the first). With the round's start_ms and late_ms, an event first
        received (desk time rx_ms) more than late_ms after its own time (start_ms + its t) is
        flagged "late", the delay its detail, unless its "ev" is in not_late (flags()).
        late_ms may instead be a function of the event's own desk ms giving the desk ms
        after which it is late (lateness.py: judged by the link). With the round's closed_ms
        (the head judge closed it), an event first received after it is flagged
        "after_close", rx_ms - closed_ms its detail."""
        flags = []
        for i, ev in enumerate(events):
            idx, body = first + i, dumps(ev)
            if self.db.execute("INSERT OR IGNORE INTO records VALUES (?, ?, ?, ?)",
                               (tbl, round_no, idx, body)).rowcount:
                if closed_ms is not None and rx_ms >= closed_ms:
                    flags.append((idx, "after_close", str(rx_ms - closed_ms)))
                delay = None if start_ms is None or type(ev.get("t")) is not int \
                    or ev.get("ev") in not_late else rx_ms - start_ms - ev["t"]
                if delay is not None and (rx_ms > late_ms(start_ms + ev["t"])
                                          if callable(late_ms) else delay > late_ms):
                    flags.append((idx, "late", str(delay)))
                continue
            old = self._one("SELECT event FROM records WHERE tbl = ? AND round = ? AND idx = ?",
                            (tbl, round_no, idx))
            if old[0] != body:
                flags.append((idx, "changed", body))
        if flags:
            self.db.executemany("INSERT OR REPLACE INTO record_flags VALUES (?, ?, ?, ?, ?, ?)",
                                [(tbl, round_no, idx, kind, detail, rx_ms)
                                 for idx, kind, detail in flags])
            self._reload("flags", tbl, round_no)
        known = self._rounds.get(("results", round_no), {}).get(tbl)
        if not known or known[0]["total"] < total:      # the memo is the table: no news
            self.db.execute(
                "INSERT INTO results (tbl, round, total) VALUES (?, ?, ?) ON CONFLICT (tbl, round)"
                " DO UPDATE SET total = MAX(total, excluded.total)", (tbl, round_no, total))
            self._reload("results", tbl, round_no)

    def events(self, tbl, round_no, count=None):
        """The stored events 0.. of a record while they are contiguous, at most `count`."""
        out = []
        for idx, text in self._all("SELECT idx, event FROM records WHERE tbl = ? AND round = ?"
                                   " ORDER BY idx", (tbl, round_no)):
            if idx != len(out) or (count is not None and idx >= count):
                break
            out.append(json.loads(text))
        return out

    def flags(self, tbl, round_no):
        """[(idx, kind, detail, first copy)] of the record, by index (record_flags)."""
        return [tuple(r)[1:] for r in self._of_round("flags", round_no).get(tbl, ())]

    def after_close(self, tbl, round_no):
        """Whether some event of the record reached the desk after the round was closed."""
        return any(f[1] == "after_close" for f in self.flags(tbl, round_no))

    def held_events(self, tbl, round_no):
        """How many of the record's events the store holds from the first on, unbroken."""
        n, last = self._one("SELECT COUNT(*), MAX(idx) FROM records WHERE tbl = ? AND round = ?",
                            (tbl, round_no))
        if not n or last == n - 1:          # indexes are unique: n of them up to n - 1
            return n
        return len(self.events(tbl, round_no))

    def event_count(self, tbl, round_no):
        return self._one("SELECT COUNT(*) FROM records WHERE tbl = ? AND round = ?",
                         (tbl, round_no))[0]

    def report_result(self, tbl, round_no, msg, now_ms):
        self.db.execute(
            "INSERT INTO results (tbl, round, result, wins_a, wins_b, events, received_ms)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tbl, round) DO UPDATE SET"
            " result = excluded.result, wins_a = excluded.wins_a, wins_b = excluded.wins_b,"
            " events = excluded.events, received_ms = excluded.received_ms",
            (tbl, round_no, msg["result"], msg["wins"]["A"], msg["wins"]["B"], msg["events"],
             now_ms))
        last = self._one("SELECT result, wins_a, wins_b, events FROM result_versions WHERE"
                         " tbl = ? AND round = ? AND source = 'table' ORDER BY id DESC LIMIT 1",
                         (tbl, round_no))
        now = (msg["result"], msg["wins"]["A"], msg["wins"]["B"], msg["events"])
        if last is None or tuple(last) != now:          # a resent report is no new version
            self.add_version(tbl, round_no, "table", "reported", None, now[0], now[1], now[2],
                             now[3], None, None, None, now_ms)
        self._reload("results", tbl, round_no)

    def add_version(self, tbl, round_no, source, how, taken, result, wins_a, wins_b, events,
                    who, reason, unix_ms, desk_ms):
        """Append one version of a result (result_versions); its id."""
        cur = self.db.execute(
            "INSERT INTO result_versions (tbl, round, source, how, taken, result, wins_a,"
            " wins_b, events, who, reason, unix_ms, desk_ms) VALUES"
            " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (tbl, round_no, source, how, taken, result, wins_a, wins_b, events, who, reason,
             unix_ms, desk_ms))
        self._reload("decisions", tbl, round_no)
        return cur.lastrowid

    def versions(self, tbl, round_no):
        """Every version of table tbl's result in round_no, oldest first."""
        return [dict(r) for r in self._all(
            "SELECT * FROM result_versions WHERE tbl = ? AND round = ? ORDER BY id",
            (tbl, round_no))]

    def decision(self, tbl, round_no):
        """The head judge's latest version of the result (a dict), or None: the table's
        result stands."""
        rows = self._of_round("decisions", round_no).get(tbl)
        return dict(rows[-1]) if rows else None

    def standing(self, tbl, round_no):
        """Where table tbl's result of round_no stands: the head judge's how ("entered",
        "overridden") once decided, else the verification ("ok", "mismatch", "incomplete"),
        "playing" (records, no result yet) or "no result"."""
        d = self.decision(tbl, round_no)
        if d:
            return d["how"]
        r = self.result(tbl, round_no)
        if r is None:
            return "no result"
        if r["result"] is None:
            return "playing"
        return r["verified"] or "incomplete"

    def expected(self, round_no):
        """The tables that owe round_no a result: those its pairings name; without
        pairings, those it was started on that the desk has heard from; and every table
        with a result or a decision in it."""
        tables = set(self.pairings(round_no))
        if not tables:
            r = self.round(round_no)
            heard = set(self._tables)
            tables = heard if r is None or r["tables"] is None else heard & set(r["tables"])
        tables |= {r["tbl"] for r in self._all("SELECT tbl FROM results WHERE round = ?"
                                               " AND result IS NOT NULL", (round_no,))}
        tables |= set(self._of_round("decisions", round_no))
        return sorted(tables)

    def missing(self, round_no):
        """[(tbl, standing)] of the expected tables whose result is not final (FINAL)."""
        out = []
        for tbl in self.expected(round_no):
            st = self.standing(tbl, round_no)
            if st not in FINAL:
                out.append((tbl, st))
        return out

    def export_refusal(self, round_no):
        """Why round_no's results are not ready to export (the tournament software pairs
        the next round from them), or None: each missing table and where it stands."""
        missing = self.missing(round_no)
        if not missing:
            return None
        return "round %d has no final result at table(s) %s: the next round's pairings " \
            "need them (the head judge: duelclock result); forcing exports anyway" % (
                round_no, ", ".join("%d (%s)" % m for m in missing))

    def result(self, tbl, round_no):
        rows = self._of_round("results", round_no).get(tbl)
        return dict(rows[0]) if rows else None

    def results(self, round_no):
        return [dict(r) for r in self._all(
            "SELECT * FROM results WHERE round = ? ORDER BY tbl", (round_no,))]

    def verify(self, tbl, round_no, verified, note, verdict, penalties):
        self.db.execute("UPDATE results SET verified = ?, note = ?, verdict = ? WHERE tbl = ?"
                        " AND round = ?", (verified, note,
                                           None if verdict is None else dumps(verdict),
                                           tbl, round_no))
        if verdict is not None:
            self.db.execute("DELETE FROM penalties WHERE tbl = ? AND round = ?", (tbl, round_no))
            self.db.executemany("INSERT INTO penalties VALUES (?, ?, ?, ?, ?, ?, ?)",
                                [(tbl, round_no, n, x["p"], x["kind"], x["code"],
                                  int(x.get("after_match", False)))
                                 for n, x in enumerate(penalties)])
            self._reload("penalties", tbl, round_no)
        self._reload("results", tbl, round_no)

    def acked(self, tbl, round_no, events):
        self.db.execute("UPDATE results SET acked_events = ? WHERE tbl = ? AND round = ?",
                        (events, tbl, round_no))
        self._reload("results", tbl, round_no)

    def penalties(self, tbl, round_no):
        """[{p, kind, code, after_match, carried_from}]: carried_from is the round a
        penalty was carried from into this match (None: given in it)."""
        out = []
        carried = self.carries(round_no, tbl)
        for r in self._of_round("penalties", round_no).get(tbl, ()):
            pen = {"p": r["p"], "kind": r["kind"], "code": r["code"],
                   "after_match": bool(r["after_match"]), "carried_from": None}
            for c in carried:
                if (c["p"], c["kind"], c["code"]) == (pen["p"], pen["kind"], pen["code"]):
                    pen["carried_from"] = c["from_round"]
                    carried.remove(c)
                    break
            out.append(pen)
        return out

    # --- penalties carried to the player's next match ------------------------------------------

    def add_carry(self, from_round, from_tbl, n, player, kind, code, rules, state):
        """A carried penalty, once per penalty of a record (a record verified again adds
        nothing)."""
        self.db.execute("INSERT OR IGNORE INTO carries (from_round, from_tbl, n, player, kind,"
                        " code, rules, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (from_round, from_tbl, n, player, kind, code, rules, state))
        self._forget_carries()

    def _forget_carries(self):
        # A carry moves between rounds and tables: every round's rows are loaded again.
        self._rounds = {k: v for k, v in self._rounds.items() if k[0] != "carries"}

    def carry(self, carry_id):
        row = self._one("SELECT * FROM carries WHERE id = ?", (carry_id,))
        return dict(row) if row else None

    def carries(self, round_no=None, tbl=None):
        """Every carried penalty, oldest first; or those sent into `round_no` (at `tbl`)."""
        if round_no is None:
            return [dict(r) for r in self._all("SELECT * FROM carries ORDER BY id")]
        if tbl is None:
            return [dict(r) for r in self._all(
                "SELECT * FROM carries WHERE round = ? ORDER BY id", (round_no,))]
        return [dict(r) for r in self._of_round("carries", round_no).get(tbl, ())]

    def set_carry(self, carry_id, state, round_no=None, tbl=None, p=None):
        self.db.execute("UPDATE carries SET state = ?, round = ?, tbl = ?, p = ? WHERE id = ?",
                        (state, round_no, tbl, p, carry_id))
        self._forget_carries()

    # --- audit ------------------------------------------------------------------------------

    def audit(self, unix_ms, desk_ms, who, command, args, outcome):
        self.db.execute("INSERT INTO audit (unix_ms, desk_ms, who, command, args, outcome)"
                        " VALUES (?, ?, ?, ?, ?, ?)",
                        (unix_ms, desk_ms, who, command, dumps(args), outcome))

    def audit_log(self, limit=100):
        return [dict(r) for r in self._all(
            "SELECT * FROM audit ORDER BY id DESC LIMIT ?", (limit,))]

    # --- export -----------------------------------------------------------------------------

    def results_csv(self, round_no):
        """Results of a round for the tournament software: one row per paired table,
        result or head judge's decision, CSV_COLUMNS; penalties as "B warning tardiness; A
        caution rules_error", one given after the match marked "(after the match)", one
        carried into this match from round N "(from round N)". A head judge's result is the
        row's result, its verified "entered by the head judge: REASON" or "overridden:
        REASON"; a table's record that reached the desk after the round was closed has
        AFTER_CLOSE after its verified."""
        pairs = self.pairings(round_no)
        results = {r["tbl"]: r for r in self.results(round_no)}
        decided = self._of_round("decisions", round_no)
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(CSV_COLUMNS)
        for tbl in sorted(set(pairs) | set(results) | set(decided)):
            a, b = pairs.get(tbl, ("", ""))
            r = results.get(tbl) or {}
            verified = r.get("verified") or ""
            d = self.decision(tbl, round_no)
            if d:
                r = d
                verified = "%s: %s" % (JUDGE_WORDS[d["how"]], d["reason"])
            elif self.after_close(tbl, round_no):
                verified += AFTER_CLOSE
            pens = "; ".join("%s %s %s%s" % (x["p"], x["kind"], x["code"], _pen_note(x))
                             for x in self.penalties(tbl, round_no))
            w.writerow((tbl, round_no, a, b, r.get("result") or "",
                        _blank(r.get("wins_a")), _blank(r.get("wins_b")), pens, verified))
        return out.getvalue()


def _pen_note(pen):
    if pen["after_match"]:
        return " (after the match)"
    if pen["carried_from"] is not None:
        return " (from round %d)" % pen["carried_from"]
    return ""


def _blank(v):
    return "" if v is None else v


def _round(row):
    if row is None:
        return None
    r = dict(row)
    r.pop("retained")
    r["seating"] = bool(r["seating"])
    r["tables"] = None if r["tables"] is None else json.loads(r["tables"])
    return r
