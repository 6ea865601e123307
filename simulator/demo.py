"""`make demo`: the desk (with its own mosquitto), 8 simulated tables running the real
firmware (4 on serial, 4 on Wi-Fi/MQTT), a round with check-in, scripted players, time
accelerated so the 75-minute round finishes in about 2 minutes. While it runs the terminal
shows the round's clock and each match as it finishes; it ends with the results table. The
LP sheets (HTML) and a screenshot of every table at time call and at the end land in
out/demo/."""
import argparse
import os
import shutil
import signal
import sys
import threading
import time

from simulator.room import Room, end_on_signals
from simulator.scripts import room_scripts, expected
from simulator.table import wait_for

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The round's pairings: the players' names on the tables and on the printed LP sheets.
PLAYERS = ("Kim Minsu", "Budi Santoso", "Lee Jiwoo", "Sari Dewi", "Park Seoyeon",
           "Agus Pratama", "Choi Hyun", "Dewi Lestari", "Jung Hana", "Rizky Ramadhan",
           "Kang Jisoo", "Putri Ayu", "Yoon Taemin", "Fajar Nugroho", "Han Yuna", "Wahyu Hidayat")


def _pairings(path, tables):
    with open(path, "w", encoding="utf-8") as f:
        f.write("table,player_a,player_b\n")
        for n in range(1, tables + 1):
            f.write("%d,%s,%s\n" % (n, PLAYERS[(2 * n - 2) % len(PLAYERS)],
                                     PLAYERS[(2 * n - 1) % len(PLAYERS)]))
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(prog="make demo")
    ap.add_argument("--tables", type=int, default=8)
    ap.add_argument("--mqtt", type=int, default=4, help="how many of them on MQTT")
    ap.add_argument("--speed", type=float, default=40.0)
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "demo"))
    a = ap.parse_args(argv)
    shutil.rmtree(a.out, ignore_errors=True)
    os.makedirs(a.out)
    started = time.monotonic()
    room = Room(os.path.join(a.out, "room"), serial_tables=a.tables - a.mqtt, mqtt_tables=a.mqtt,
                speed=a.speed)
    scripts = room_scripts(a.tables)
    end_on_signals()
    try:
        room.start()
        print("dashboard: %s/   (or: duelclock status --desk %s)" % (room.api, room.api))
        room.wait_synced()
        print(room.start_round(1, seating=True, limit="45m", cap="30m", at="+2m",
                               pairings=_pairings(os.path.join(a.out, "pairings.csv"),
                                                  a.tables)), end="")
        shots = {}

        def shoot(tag):
            for n, t in room.tables.items():
                shots.setdefault(tag, []).append(t.screenshot(os.path.join(a.out, "table%02d_%s.png" % (n, tag))))

        player = threading.Thread(target=room.play, args=(scripts,), daemon=True)
        player.start()
        progress = Progress(room, len(scripts))
        progress.start()
        wait_for(lambda: room.round_ms() >= 45 * 60000 + 20000, 600, 0.2)
        shoot("time_call")
        print("time called: screenshots in %s" % os.path.relpath(a.out), flush=True)
        player.join()
        ok = room.wait_results(timeout_s=180)
        progress.stop()
        shoot("end")
        print(room.cli("status"))
        # A table without its result is the demo's failure, told below: exported all the same.
        csv = room.cli("export", "--csv", *(() if ok else ("--force",)), store=True)
        with open(os.path.join(a.out, "results.csv"), "w") as f:
            f.write(csv)
        for n in room.tables:
            room.cli("sheet", "--table", str(n), "--html",
                     os.path.join(a.out, "sheet_table%02d.html" % n), store=True)
        table, alerting = _results(room, scripts)
        print(table)
        print("LP sheets, screenshots and results.csv: %s" % os.path.relpath(a.out))
        print("demo took %.0f s" % (time.monotonic() - started))
        return 0 if ok and not alerting else 1
    except KeyboardInterrupt:           # Ctrl-C: stopped, no traceback
        return 128 + signal.SIGINT
    finally:
        room.stop()


def clock(ms):
    """Round time as the tables show it: 12:05, -1:30 before the start."""
    sign, ms = ("-", -ms) if ms < 0 else ("", ms)
    return "%s%d:%02d" % (sign, ms // 60000, ms // 1000 % 60)


class Progress(threading.Thread):
    """Prints, while the round runs, its clock every EVERY_MS of round time and each match as
    the desk learns its result ("table 3: A wins 2-0 at 31:12, 2 of 8 finished"), from the
    desk's status (about two reads a second). stop() ends it."""

    EVERY_MS = 5 * 60000
    POLL_S = 0.5
    OVER = ("A", "B", "double_loss")

    def __init__(self, room, tables):
        super().__init__(daemon=True)
        self.room, self.tables = room, tables
        self.done = {}
        self._ended = threading.Event()

    def run(self):
        shown = None
        while not self._ended.wait(self.POLL_S):
            try:
                s = self.room.status()
            except OSError:                 # the desk busy or going away: the next read
                continue
            now = s["desk_ms"] - s["round"]["start_ms"]
            for line in self.lines(s["tables"], now):
                print(line, flush=True)
            mark = now // self.EVERY_MS
            if mark != shown:
                shown = mark
                print("round starts in %s" % clock(-now) if now < 0 else
                      "round %s: %d of %d matches finished" % (clock(now), len(self.done),
                                                               self.tables), flush=True)

    def lines(self, views, now_ms):
        """A line for each table whose match is newly over."""
        out = []
        for v in sorted(views, key=lambda v: v["table"]):
            if v.get("result") in self.OVER and v["table"] not in self.done:
                self.done[v["table"]] = v["result"]
                wins = v.get("wins") or {"A": 0, "B": 0}
                what = "double loss" if v["result"] == "double_loss" else v["result"] + " wins"
                out.append("  table %d: %s %d-%d at %s, %d of %d finished" % (
                    v["table"], what, wins["A"], wins["B"], clock(now_ms), len(self.done),
                    self.tables))
        return out

    def stop(self):
        self._ended.set()
        self.join(5)


def _results(room, scripts):
    """The closing table, with each table's alerts and sync figures (real ms, as the desk
    judges them), and the tables still alerting."""
    s = room.status()
    rows = ["table  result       wins  expected     verified  sync err/age (real ms)  alerts"]
    alerting = []
    for v in sorted(s["tables"], key=lambda v: v["table"]):
        want = expected(scripts[v["table"]])
        wins = v.get("wins") or {"A": 0, "B": 0}
        alerts = " ".join(v["alerts"])
        table = room.tables[v["table"]]
        if not table.alive:             # the firmware's process ended: its last words
            alerts += " stopped: " + table.why()
        if alerts:
            alerting.append(v["table"])
        rows.append("%5d  %-11s  %d-%d   %-11s  %-8s  %6s / %-13s  %s" % (
            v["table"], v["result"], wins["A"], wins["B"], want["result"], v["verified"],
            v["sync_err_ms"], v["sync_age_ms"], alerts.strip() or "none"))
    rows.append("alerts at the end: %s" % (
        "none" if not alerting else "tables " + " ".join(map(str, alerting))))
    return "\n".join(rows), alerting


if __name__ == "__main__":
    sys.exit(main())
