"""The demo's closing table (simulator/demo.py _results) from a room's status: each table's
verdict against its script's, its sync figures in real ms and its alerts; a table still
alerting, or whose firmware stopped, is named below it (and fails the demo)."""
from simulator.demo import Progress, _results, clock
from simulator.scripts import expected, room_scripts


class _Table:
    def __init__(self, alive, why=""):
        self.alive = alive
        self._why = why

    def why(self):
        return self._why


class _Room:
    def __init__(self, views, tables):
        self._views, self.tables = views, tables

    def status(self):
        return {"tables": self._views}


def _view(n, want, alerts=()):
    return {"table": n, "result": want["result"], "wins": want["wins"], "verified": "ok",
            "sync_err_ms": 1, "sync_age_ms": 150, "alerts": list(alerts)}


def test_a_quiet_room_ends_with_no_alerts():
    scripts = room_scripts(2)
    room = _Room([_view(n, expected(scripts[n])) for n in (1, 2)],
                 {1: _Table(True), 2: _Table(True)})
    text, alerting = _results(room, scripts)
    lines = text.splitlines()
    assert alerting == [] and lines[-1] == "alerts at the end: none"
    assert lines[1].split()[-4:] == ["1", "/", "150", "none"]


def test_an_alert_or_a_stopped_table_is_named():
    scripts = room_scripts(3)
    room = _Room([_view(1, expected(scripts[1])), _view(2, expected(scripts[2]), ["sync"]),
                  _view(3, expected(scripts[3]))],
                 {1: _Table(True), 2: _Table(True),
                  3: _Table(False, "MemoryError: out of memory (exit 1; t3/stderr.log)")})
    text, alerting = _results(room, scripts)
    lines = text.splitlines()
    assert alerting == [2, 3] and lines[-1] == "alerts at the end: tables 2 3"
    assert lines[2].endswith("  sync")
    assert lines[3].endswith("  stopped: MemoryError: out of memory (exit 1; t3/stderr.log)")


def test_progress_names_each_match_once_as_it_finishes():
    p = Progress(None, 8)
    views = [{"table": 3, "result": "A", "wins": {"A": 2, "B": 0}},
             {"table": 1, "result": "pending", "wins": {"A": 1, "B": 0}},
             {"table": 2, "result": None}]
    assert p.lines(views, 31 * 60000 + 12000) == ["  table 3: A wins 2-0 at 31:12, 1 of 8 finished"]
    views[1] = {"table": 1, "result": "double_loss", "wins": {"A": 1, "B": 1}}
    assert p.lines(views, 45 * 60000) == ["  table 1: double loss 1-1 at 45:00, 2 of 8 finished"]
    assert p.lines(views, 46 * 60000) == []
    assert (clock(-90000), clock(0), clock(75 * 60000 + 999)) == ("-1:30", "0:00", "75:00")
