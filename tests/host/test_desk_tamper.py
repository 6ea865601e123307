"""The desk sees tampering: an event the table re-sends with another body than the
desk holds ("record changed on the table") and an event that reaches the desk long after its
own time ("entered while not connected", a made-up line among them) are alerts at once, both
versions are kept and both are on the sheet, and the verification's note says so. The test
speaks as an opened table 1 (its own key, its next boot's seqs) to a real Desk and store."""
import json

from duelclock.core.sign import table_key
from duelclock.core.wire import Encoder
from duelclock_desk import cli
from duelclock_desk.protocol import LATE_MS
from tests.host.tables import SessionTable, Room, short_match

KEY = bytes(range(32))
MIN = 60000


def test_changed_and_late_events_are_shown_before_the_result_is_verified(tmp_path, capsys):
    store = str(tmp_path / "desk.sqlite")
    r = Room(store, KEY, [SessionTable(KEY, 1)])
    r.tables[1].hello()
    r.run(1000)
    r.desk.run("judge", "start_round", {"round": 1})
    r.run(200)
    start_ms = r.desk.round["start_ms"]
    table = Encoder(table_key(KEY, 1), boot=7, tbl=1)
    record = [dict(r.tables[1].record[0])] + short_match()

    def send(first, events, total):
        r.link.receive(table.build("record", {"round": 1, "first": first, "events": events,
                                              "total": total}))

    def alerts():                       # the integrity ones (time jumps here: no syncs)
        return [a for a in r.desk.table_view(1)["alerts"] if a in ("record changed",
                                                                   "late entry")]

    # Live: the first duel as it happens (0..4, the last at 2:00).
    r.t = start_ms + 130000
    send(0, record[:5], 5)
    assert r.store.flags(1, 1) == [] and alerts() == []
    # The table's journal line 2 was changed (B lost 300, not 3000) and the record re-sent:
    # an alert at once, the desk's copy kept.
    changed = dict(record[2], B=-300)
    send(0, record[:2] + [changed] + record[3:5], 5)
    assert alerts() == ["record changed"]
    assert r.store.events(1, 1)[2] == record[2]
    # The link was out; it is back at 6:40 with the second duel (5:00-6:00, within LATE_MS)
    # and, before it, a line stamped 2:05 that never reached the desk live (made up).
    r.t = start_ms + 400000
    made_up = {"t": 125000, "ev": "penalty", "p": "B", "kind": "caution", "code": "marked_cards"}
    send(5, [made_up] + record[5:], len(record) + 1)
    assert alerts() == ["record changed", "late entry"]
    late = [(f[0], int(f[2])) for f in r.store.flags(1, 1) if f[1] == "late"]
    assert late == [(5, 400000 - 125000)] and 400000 - 300000 < LATE_MS
    r.link.receive(table.build("result", {"round": 1, "result": "A", "wins": {"A": 2, "B": 0},
                                          "events": len(record) + 1}))
    res = r.store.result(1, 1)
    assert res["verified"] == "ok"
    assert "1 event(s) changed on the table, 1 entered while it was not connected" in res["note"]
    # The sheet shows both versions of line 2 and the late line.
    assert cli.main(["sheet", "--table", "1", "--round", "1", "--store", store]) == 0
    out = capsys.readouterr().out
    assert "#2 at 1:30 changed on the table after the desk had it:" in out
    assert json.dumps(changed, sort_keys=True, separators=(",", ":")) in out
    assert "#5 at 2:05 entered while the table was not connected (reached the desk 4:35" in out
    html = tmp_path / "t1.html"
    assert cli.main(["sheet", "--table", "1", "--round", "1", "--store", store,
                     "--html", str(html)]) == 0
    assert "record-flags" in html.read_text()
