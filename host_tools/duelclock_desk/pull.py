"""`duelclock pull --port PORT --board BOARD [--out DIR] [--all] [--import]`: a table's match
records copied off its flash over USB, for the match the desk never collected.

A table sends the desk the record of its current match only. When it was off or unlinked
at the end of a round and its next round reached it before the desk had verified the
finished match, that match stays in its journal (kept until collected, never rotated) and
`duelclock collect` lists the table under "no result". A judge then plugs the table into
the desk machine and pulls: over mpremote's transport, as deploy does (the table's app
stops while the REPL is held; reset the board after), the board only read.

Each match the desk has not collected (`--all`: every match) is written to DIR as
t<TABLE>_r<ROUND>_m<ID>.jsonl, one event a line, read the way the table reads its journal
(duelclock.journal: a torn or damaged record is left out, and said), and replayed: its
verdict is printed as `duelclock replay` prints it, for the scorekeeper and `duelclock
sheet FILE`.

--import hands each pulled match to the running desk (its import command: stored and
verified as if the table had sent it, audited); once the desk holds it, the match is marked
collected on the table (its .got mark: the bytes the desk has, journal.py's layout), so the
table's journal may rotate it away. The one write pull makes, and only after the desk said
it has the record."""
import json
import os
import tempfile

from duelclock.core.replay import RecordError
from duelclock.journal import Journal, Recovery
from duelclock.replay import replay_file
from duelclock_desk import client
from duelclock_desk.client import CliError
from duelclock_desk.deploy import Board, Layout, progress, say

# Prints [(name, bytes), ...] of the journal's folder, or None without one.
LIST_SCRIPT = """
import os
try:
    print(repr([(n, os.stat(%r + '/' + n)[6]) for n in os.listdir(%r)]))
except OSError:
    print(repr(None))
"""


def copy_journal(board, journal_dir, into):
    """The board's journal files (m<id>.jsonl and their .got marks) copied into `into`."""
    listed = board.run(LIST_SCRIPT % (journal_dir, journal_dir), "listing the journal")
    if listed is None:
        raise CliError("no journal on the board (%s): not a table, or never started"
                       % journal_dir)
    files = [(n, size) for n, size in listed
             if n.startswith("m") and (n.endswith(".jsonl") or n.endswith(".got"))]
    names = [n for n, _ in files]
    with progress(sum(size for _, size in files), "reading") as bar:
        for i, name in enumerate(names):
            bar.set_description("%d/%d %s" % (i + 1, len(names), name))
            data = board.read(journal_dir + "/" + name)
            if data is None:
                raise CliError("cannot read %s/%s from the board" % (journal_dir, name))
            with open(os.path.join(into, name), "wb") as f:
                f.write(data)
            bar.update(len(data))
            say(bar, "  read %-20s %6d B" % (name, len(data)))


def write_match(journal, match_id, table, out_dir):
    """The match's good records as a record file in out_dir: (path, round, Recovery)."""
    report = Recovery(match_id)
    lines = list(journal.export(match_id, report=report))
    round_no = "x"
    if lines:
        try:
            round_no = json.loads(lines[0]).get("round", "x")
        except ValueError:
            pass
    path = os.path.join(out_dir, "t%s_r%s_m%d.jsonl" % (table, round_no, match_id))
    with open(path, "wb") as f:
        for line in lines:
            f.write(line + b"\n")
    return path, round_no, report


def run(a):
    at = Layout(a.board)
    out_dir = a.out or "."
    os.makedirs(out_dir, exist_ok=True)
    board = Board(a.port, a.board)
    try:
        try:
            table = json.loads(board.read(at.config) or b"{}").get("table", "x")
        except ValueError:
            table = "x"
        with tempfile.TemporaryDirectory() as tmp:
            copy_journal(board, (at.root or "") + "/journal", tmp)
            journal = Journal(tmp)
            matches = journal.matches()
            wanted = [m for m in matches if a.all or not m[2]]
            print("table %s on %s: %d match(es) on its flash, %d to pull" % (
                table, a.port, len(matches), len(wanted)))
            for mid, size, got in wanted:
                path, round_no, report = write_match(journal, mid, table, out_dir)
                _show(path, round_no, report, got)
                if a.do_import and not got:
                    _import(a, board, table, round_no, path, mid, size, at)
    finally:
        board.close()
    return 0


def _import(a, board, table, round_no, path, match_id, size_bytes, at):
    """The pulled record to the desk; when it holds every event, the match is marked
    collected on the table (the first size_bytes of its file: what was pulled)."""
    if type(table) is not int or type(round_no) is not int:
        print("    not imported: no table number or round in the record")
        return
    with open(path) as f:
        events = [json.loads(line) for line in f]
    out = client.api(a, "/api/import", {"table": table, "round": round_no, "events": events})
    print("    imported: the desk holds %d events, result %s, verified %s" % (
        out["events"], out["result"], out["verified"]))
    if out["events"] >= len(events):
        board.write("%s/journal/m%d.got" % (at.root, match_id), b"%d" % size_bytes)
        print("    marked collected on the table")


def _show(path, round_no, report, collected):
    left_out = "" if not report.dropped else ", %d left out (%s)" % (
        len(report.dropped), ", ".join("line %d %s" % d for d in report.dropped))
    print("  %s: round %s, %d events%s%s" % (path, round_no, report.good, left_out,
                                              " (collected already)" if collected else ""))
    try:
        print("    verdict " + replay_file(path).verdict_json())
    except (RecordError, OSError) as e:
        print("    no verdict: %s" % e)
