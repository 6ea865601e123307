"""The store's rows kept in memory (store.py): table rows reach the file at commit, and
the per-round rows the status view reads follow every write, a rollback included."""
from duelclock_desk.store import Store


def test_table_rows_reach_the_file_at_commit_and_survive_a_rollback(tmp_path):
    path = str(tmp_path / "s.sqlite")
    s = Store(path)
    s.seen(3, "mqtt://a", 100, 7)
    s.state(3, {"round": 1, "battery": 40}, 120)
    s.set_online(9, False)                       # never seen: nothing to change
    assert Store(path).table(3) is None          # not committed yet
    s.rollback()                                 # a refused command: link facts stay
    s.commit()
    other = Store(path)
    row = other.table(3)
    assert (row["link"], row["last_seen_ms"], row["online"], row["battery"]) == \
        ("mqtt://a", 100, 1, 40)
    assert other.last_seqs() == {3: 7} and other.table(9) is None
    s.hello(3, "PICO", "1.0", None)              # no battery in the hello: the last one stays
    s.seen(3, "mqtt://b", 200, None)             # a sync: the seq stays
    s.close()
    row = Store(path).table(3)
    assert (row["board"], row["battery"], row["link"], row["last_seq"]) == \
        ("PICO", 40, "mqtt://b", 7)


def test_round_rows_follow_every_write(tmp_path):
    s = Store(str(tmp_path / "s.sqlite"))
    assert s.result(1, 1) is None and s.flags(1, 1) == [] and s.penalties(1, 1) == []
    s.add_events(1, 1, 0, [{"t": 0, "ev": "round_start"}], 2)
    assert s.result(1, 1)["total"] == 2
    s.add_events(1, 1, 0, [{"t": 0, "ev": "changed"}], 2, 5)
    assert [f[:2] for f in s.flags(1, 1)] == [(0, "changed")]
    s.report_result(1, 1, {"result": "A", "wins": {"A": 2, "B": 0}, "events": 2}, 10)
    s.verify(1, 1, "ok", "fine", {"result": "A"}, [{"p": "B", "kind": "match_loss",
                                                     "code": "unsporting", "after_match": True}])
    s.acked(1, 1, 2)
    r = s.result(1, 1)
    assert (r["result"], r["verified"], r["acked_events"]) == ("A", "ok", 2)
    r["verified"] = "changed by a caller"        # a copy: the store's row stays
    assert s.result(1, 1)["verified"] == "ok"
    assert [p["kind"] for p in s.penalties(1, 1)] == ["match_loss"]
    s.add_carry(1, 1, 0, "Budi", "match_loss", "unsporting", "ID", "ready")
    assert s.carries(2, 4) == []
    s.set_carry(1, "sent", 2, 4, "A")
    assert [c["player"] for c in s.carries(2, 4)] == ["Budi"]
    s.report_result(2, 1, {"result": "B", "wins": {"A": 0, "B": 2}, "events": 5}, 11)
    s.rollback()                                 # uncommitted: gone from the file and the view
    assert s.result(2, 1) is None and s.result(1, 1) is None and s.carries(2, 4) == []


def test_a_store_from_before_the_close_takes_its_column_and_keeps_its_rounds(tmp_path):
    import sqlite3
    path = str(tmp_path / "old.sqlite")
    db = sqlite3.connect(path)
    db.executescript("""CREATE TABLE rounds (
        round INTEGER PRIMARY KEY, kind TEXT NOT NULL, start_ms INTEGER NOT NULL,
        limit_s INTEGER NOT NULL, cap_s INTEGER NOT NULL, extra_turns INTEGER NOT NULL,
        seating INTEGER NOT NULL, rules TEXT, lang TEXT, tables TEXT,
        state TEXT NOT NULL, retained BLOB);
        INSERT INTO rounds VALUES (4, 'swiss', 0, 2700, 1800, 1, 0, NULL, NULL, NULL,
                                   'running', NULL);""")
    db.commit()
    db.close()
    s = Store(path)
    r = s.current_round()
    assert (r["round"], r["state"], r["closed_ms"]) == (4, "running", None)
    s.close_round(4, 9000)
    s.commit()
    assert Store(path).round(4)["closed_ms"] == 9000


def test_result_versions_are_appended_never_changed(tmp_path):
    s = Store(str(tmp_path / "s.sqlite"))
    msg = {"result": "B", "wins": {"A": 0, "B": 2}, "events": 8}
    s.report_result(1, 1, msg, 10)
    s.report_result(1, 1, msg, 20)                 # resent: the same version
    s.add_version(1, 1, "judge", "overridden", "typed", "A", 2, 0, 8, "hj", "sheet", 1, 30)
    s.report_result(1, 1, dict(msg, events=9), 40)  # the table's new word: a new version
    assert [(v["source"], v["result"], v["events"], v["desk_ms"]) for v in s.versions(1, 1)] \
        == [("table", "B", 8, 10), ("judge", "A", 8, 30), ("table", "B", 9, 40)]
    assert s.decision(1, 1)["result"] == "A" and s.standing(1, 1) == "overridden"
    assert s.result(1, 1)["result"] == "B"         # the table's row is its own


def test_a_store_from_before_the_health_columns_gets_them_and_keeps_its_rows(tmp_path):
    import sqlite3
    path = str(tmp_path / "old.sqlite")
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE tables (tbl INTEGER PRIMARY KEY, link TEXT, board TEXT, fw TEXT,"
               " battery INTEGER, last_seen_ms INTEGER, online INTEGER NOT NULL DEFAULT 0,"
               " state TEXT, state_ms INTEGER, sync_age_ms INTEGER, sync_err_ms INTEGER,"
               " last_seq INTEGER)")
    db.execute("INSERT INTO tables (tbl, link, board, fw, battery) VALUES"
               " (4, 'mqtt://a', 'PICO', '0.1.0', 50)")
    db.commit()
    db.close()
    s = Store(path)
    assert s.table(4)["battery"] == 50 and s.table(4)["reboots"] is None
    s.hello(4, "PICO", "0.1.0", None, 700, -60, boot=3, round_no=2)
    s.hello(4, "PICO", "0.1.0", None, None, None, boot=4, round_no=2)
    s.close()
    row = Store(path).table(4)
    assert (row["battery"], row["flash_kb"], row["rssi_dbm"], row["boot"], row["reboots"],
            row["reboots_round"]) == (50, 700, None, 4, 1, 2)
