"""A venue of several halls (docs/protocol.md, "Several halls"): the desk on its own
mosquitto, one mosquitto per hall bridged to it (broker.BRIDGE), the tables of a hall on
their hall's broker. The real desk (Service) and SessionTables (the firmware's core clock).

What must hold: tables sync through the bridge within the Wi-Fi budget; a table that joins a
hall late gets its round (its hello crosses the bridge, the desk sends the round again); a
hall broker killed mid-round and started again (a match ending just before, one while it is
down), a bridge cut and restored (a record sent up and an extension sent down meanwhile), and
a table moved from one hall to the other lose no event and no command: every record is
stored as the table holds it, once, and verified, and every table is back within its sync
budget."""
import asyncio
import os
import subprocess
import sys

from duelclock.core.clock import FIRST, WIFI_BUDGET_MS
from duelclock_desk.api import Service
from duelclock_desk.broker import Mosquitto, free_port
from tests.host.desk_rig import until
from tests.host.tables import SessionTable, MqttTables, short_match
from tests.host.upy import ROOT

KEY = bytes(range(32))
EVENT = "halls"
PROXY = os.path.join(ROOT, "tests", "bench", "wifi_proxy.py")


class Cut:
    """A plain TCP hop (wifi_proxy.py, no delay) between a hall's bridge and the desk's
    broker: stop() cuts the bridge, start() restores it on the same port."""

    def __init__(self, target_port):
        self.target, self.port, self.p = target_port, free_port(), None
        self.start()

    def start(self):
        self.p = subprocess.Popen(
            [sys.executable, PROXY, "--to", "127.0.0.1:%d" % self.target, "--listen",
             str(self.port), "--delay-ms", "0", "--jitter-ms", "0", "--hold-pct", "0"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.p.stdout.readline().startswith("listening ")

    def stop(self):
        self.p.kill()
        self.p.wait()
        self.p.stdin.close()
        self.p.stdout.close()


def in_sync(tables, room, svc):
    return all(t.clock.synced and abs(t.desk_ms(room.local_ms()) - svc.desk.now_ms())
               <= WIFI_BUDGET_MS for t in tables)


def test_halls_bridged_to_the_desk_ride_out_faults(tmp_path):
    desk_broker = Mosquitto()
    cut = Cut(desk_broker.port)
    via = "mqtt://127.0.0.1:%d" % cut.port
    hall1 = Mosquitto(bridge=(desk_broker.url, EVENT, "hall1"))
    hall2 = Mosquitto(bridge=(via, EVENT, "hall2"))          # its bridge through `cut`
    t1 = [SessionTable(KEY, n, budget_ms=WIFI_BUDGET_MS) for n in (1, 2, 3)]
    t2 = [SessionTable(KEY, n, budget_ms=WIFI_BUDGET_MS) for n in (4, 5)]
    mover = SessionTable(KEY, 6, budget_ms=WIFI_BUDGET_MS)
    late = SessionTable(KEY, 7, budget_ms=WIFI_BUDGET_MS)
    svc = Service(str(tmp_path / "d.sqlite"), KEY, EVENT, broker=desk_broker.url, http_port=0)
    rooms = []

    async def scenario():
        r1 = MqttTables(hall1.url, EVENT, t1, ppm=80, offset_ms=5000)
        r2 = MqttTables(hall2.url, EVENT, t2, ppm=-70, offset_ms=-3000)
        rm = MqttTables(hall2.url, EVENT, [mover], ppm=40, offset_ms=777)
        rooms.extend([r1, r2, rm])
        await until(lambda: in_sync(t1, r1, svc) and in_sync(t2, r2, svc)
                    and in_sync([mover], rm, svc), 30, "sync through both bridges")
        svc.desk.run("test", "start_round", {"round": 1})
        everyone = t1 + t2 + [mover]
        await until(lambda: all(t.round for t in everyone), 15, "the round in both halls")
        # A table switched on late in hall 2 gets its round: the desk answers its hello.
        rl = MqttTables(hall2.url, EVENT, [late])
        rooms.append(rl)
        await until(lambda: late.round and late.round["round"] == 1, 15, "the round for a late table")

        # Hall 1's broker dies mid-round: its tables run on their drift, then catch up.
        # One match ends just before, another while the broker is down (its table keeps
        # its record and sends it again until the desk acknowledges it).
        port1 = hall1.port
        t1[0].play(short_match(), r1.local_ms())
        hall1.kill()
        replies = [t.sync_replies for t in t1]
        t1[1].play(short_match("B"), r1.local_ms())
        await asyncio.sleep(3)
        # On the drift meanwhile (no broker: no reply can come). Looked at until true: two
        # clocks read from a test thread a busy machine may pause between the reads.
        await until(lambda: in_sync(t1, r1, svc), 5, "hall 1 on its drift")
        assert [t.sync_replies for t in t1] == replies
        restarted = Mosquitto(port=port1, bridge=(desk_broker.url, EVENT, "hall1"))
        rooms.append(restarted)
        await until(lambda: all(t.sync_replies > n for t, n in zip(t1, replies)), 30,
                    "hall 1's tables syncing again")
        await until(lambda: t1[0].acked == (1, 8) and t1[1].acked == (1, 8), 30,
                    "hall 1's records through the new broker")

        # Hall 2's bridge is cut and restored: what its tables sent meanwhile arrives, and
        # what the desk sent them meanwhile (the desk's broker keeps it for the bridge).
        cut.stop()
        t2[0].play(short_match(), r2.local_ms())
        svc.desk.run("test", "extend", {"table": 5, "ms": 60000})
        await asyncio.sleep(2)
        assert t2[0].acked != (1, 8) and t2[1].extended_ms == 0
        cut.start()
        await until(lambda: t2[0].acked == (1, 8), 30, "hall 2's record after the cut")
        await until(lambda: t2[1].extended_ms == 60000, 30, "the desk's extension after the cut")

        # A table moves from hall 2 to hall 1 mid-match, its clock running on.
        mover.play(short_match()[:3], rm.local_ms())
        rm.stop()
        moved = MqttTables(restarted.url, EVENT, [mover], ppm=40, offset_ms=rm.local_ms())
        rooms.append(moved)
        mover.play(short_match()[3:], moved.local_ms())
        await until(lambda: mover.acked == (1, 8), 30, "the mover's events from hall 1")
        n = mover.sync_replies
        await until(lambda: mover.sync_replies > n and in_sync([mover], moved, svc), 30,
                    "the mover in sync in its new hall")
        for t in (t1[0], t1[1], t2[0], mover):                 # no event lost, none twice
            assert svc.desk.store.events(t.tbl, 1) == t.record, t.tbl
            assert svc.desk.store.result(t.tbl, 1)["verified"] == "ok", t.tbl
        assert in_sync(t2, r2, svc) and in_sync([late], rl, svc) and in_sync(t1, r1, svc)

    async def main():
        await svc.start()
        try:
            await until(lambda: svc.desk.links[0].up, what="desk on its broker")
            await scenario()
        finally:
            await svc.stop()

    try:
        asyncio.run(main())
    finally:
        for r in rooms:
            r.stop()
        cut.stop()
        for b in (hall1, hall2, desk_broker):
            b.stop()
