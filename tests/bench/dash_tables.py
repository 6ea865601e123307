# Tables for the dashboard bench (bench_dashboard.py) in a process of their own, as on a real
# venue where they are other machines: N SessionTables (tests/host/tables.py) on one TCP
# stream the desk connects to (StreamTables), in real time.
#
#   python tests/bench/dash_tables.py KEY_HEX N
#
# Prints "ready socket://127.0.0.1:PORT", then takes one command a line on stdin and answers
# each with one line:
#   play TBL EVENTS_JSON   table TBL records and applies the events; "ok", or "refused ..."
#   round TBL              "ok N": the round table TBL holds (0 before any)
# and ends when stdin closes. A played change goes to the desk at the stream's next tick
# (StreamTables.TICK_S), as a board sends its state on every change.
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for _p in (os.path.join(ROOT, "firmware"), ROOT):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from tests.host.tables import SessionTable, StreamTables  # noqa: E402


def main(argv):
    key, n = bytes.fromhex(argv[0]), int(argv[1])
    tables = {t: SessionTable(key, t) for t in range(1, n + 1)}
    server = StreamTables.serve_tcp(list(tables.values()))
    print("ready " + server.url, flush=True)
    try:
        for line in sys.stdin:
            words = line.split(None, 2)
            if words[0] == "play":
                refused = tables[int(words[1])].play(json.loads(words[2]))
                print("refused %r" % (refused,) if refused else "ok", flush=True)
            elif words[0] == "round":
                r = tables[int(words[1])].round
                print("ok %d" % (r["round"] if r else 0), flush=True)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
