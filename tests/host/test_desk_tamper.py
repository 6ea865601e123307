"""The desk sees tampering: an event the table re-sends with another body than the desk holds
("record changed on the table") and an event that reaches the desk too long after its own
time ("late entry": a made-up line of a time the desk had the table linked, lateness.py) are
alerts at once, both
versions are kept and both are on the sheet, and the verification's note says so. The test
speaks as an opened table 1 (its own key, its next boot's seqs) to a real Desk and store."""
import json

from duelclock.core.sign import table_key
from duelclock.core.wire import Encoder
from duelclock_desk import cli
from duelclock_desk.lateness import LINK_GAP_MS, LINKED_LATE_MS, OFFLINE_LATE_MS, LinkHistory
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

    # Live: the first duel as it happens (0..4, the last at 2:00), the table heard all along
    # (its syncs every 5 s from 1:50).
    for at in range(110000, 135000, 5000):
        r.t = start_ms + at
        r.link.receive(table.build("sync", {"t1": at}))
    send(0, record[:5], 5)
    assert r.store.flags(1, 1) == [] and alerts() == []
    # The table's journal line 2 was changed (B lost 300, not 3000) and the record re-sent:
    # an alert at once, the desk's copy kept.
    changed = dict(record[2], B=-300)
    send(0, record[:2] + [changed] + record[3:5], 5)
    assert alerts() == ["record changed"]
    assert r.store.events(1, 1)[2] == record[2]
    # The link was out from 2:10; it is back at 6:40 with the second duel (5:00-6:00, while
    # offline: not late so soon after the link came back) and, before it, a line stamped
    # 2:05, when the desk had the table linked, that never reached it then (made up).
    r.t = start_ms + 400000
    made_up = {"t": 125000, "ev": "penalty", "p": "B", "kind": "caution", "code": "marked_cards"}
    send(5, [made_up] + record[5:], len(record) + 1)
    assert alerts() == ["record changed", "late entry"]
    late = [(f[0], int(f[2])) for f in r.store.flags(1, 1) if f[1] == "late"]
    assert late == [(5, 400000 - 125000)] and 400000 - 125000 > LINKED_LATE_MS
    r.link.receive(table.build("result", {"round": 1, "result": "A", "wins": {"A": 2, "B": 0},
                                          "events": len(record) + 1}))
    res = r.store.result(1, 1)
    assert res["verified"] == "ok"
    assert "1 event(s) changed on the table, 1 reached the desk late" in res["note"]
    # The sheet shows both versions of line 2 and the late line.
    assert cli.main(["sheet", "--table", "1", "--round", "1", "--store", store]) == 0
    out = capsys.readouterr().out
    assert "#2 at 1:30 changed on the table after the desk had it:" in out
    assert json.dumps(changed, sort_keys=True, separators=(",", ":")) in out
    assert "#5 at 2:05 reached the desk late, 4:35 after its time" in out
    html = tmp_path / "t1.html"
    assert cli.main(["sheet", "--table", "1", "--round", "1", "--store", store,
                     "--html", str(html)]) == 0
    assert "record-flags" in html.read_text()


def test_late_is_judged_by_the_link():
    h = LinkHistory()
    for at in range(0, 60001, 5000):                # linked 0:00-1:00, a state every 5 s
        h.heard(1, at)
    h.heard(1, 300000)                              # silent from 1:00, back at 5:00
    # An event of 0:30, when the table was linked: late once LINKED_LATE_MS have passed.
    assert h.late_after(1, 30000) == 30000 + LINKED_LATE_MS
    # Of 3:00, offline: late only beyond OFFLINE_LATE_MS after the link came back at 5:00.
    assert h.late_after(1, 180000) == 300000 + OFFLINE_LATE_MS
    # One lost state is no gap; a silence longer than LINK_GAP_MS is.
    h.heard(2, 0)
    h.heard(2, LINK_GAP_MS)
    h.heard(2, 2 * LINK_GAP_MS + 1)
    assert h.late_after(2, LINK_GAP_MS // 2) == LINK_GAP_MS // 2 + LINKED_LATE_MS
    assert h.late_after(2, LINK_GAP_MS + 1) == 2 * LINK_GAP_MS + 1 + OFFLINE_LATE_MS
    # A table never heard, or an event stamped after the last reception: not late so soon.
    assert h.late_after(3, 5000) == 5000 + LINKED_LATE_MS
    assert h.late_after(1, 301000) == 301000 + LINKED_LATE_MS
