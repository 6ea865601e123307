# The bare fan-out the round-start benches are read against: COUNT plain MQTT 3.1.1
# subscribers to one topic (QoS 1), on one thread: paho clients on one selector loop, as
# mqtt_tables.py's. No protocol, no desk: what mosquitto itself takes to deliver one message
# to them.
#
#   python tests/bench/fanout_subs.py --broker mqtt://127.0.0.1:1883 --topic T --count 1000
#          [--own]
#
# --own: each subscriber to a topic of its own, T/<its number> (a round start's commands: one
# signed line per table, not one for all).
# --reply LEAF: subscriber n answers each PUBLISH with a REPLY_BYTES QoS 1 PUBLISH on
# T/<n>/LEAF whose payload starts with the received payload's first word and a space (a
# table's state after a command: the clients bench matches a reply to its round by it).
#
# prints "ready N" once every subscriber has its SUBACK; when stdin closes, prints one JSON
# line: {"got": subscribers that received a PUBLISH, "last_s": CLOCK_MONOTONIC seconds of the
# last first-receipt} (the same clock in every process on Linux: the bench compares it with
# the time it published).
import argparse
import json
import os
import selectors
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mqtt_tables import client  # noqa: E402

CONNECT_PER_S = 400.0
READY_S = 120.0
REPLY_BYTES = 200


def main(argv):
    ap = argparse.ArgumentParser(prog="fanout_subs")
    ap.add_argument("--broker", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--first", type=int, default=0, help="client ids from this number")
    ap.add_argument("--own", action="store_true", help="subscriber n to TOPIC/n")
    ap.add_argument("--reply", metavar="LEAF", help="answer each message on TOPIC/n/LEAF")
    a = ap.parse_args(argv)
    host, port = a.broker.split("://", 1)[1].rsplit(":", 1)
    sel = selectors.DefaultSelector()
    clients, subacked, got = [], set(), {}
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    start = time.monotonic()
    announced = False

    def received(cl, n, msg):
        got.setdefault(cl, time.monotonic())
        if a.reply:
            word = msg.payload.split(b" ", 1)[0]
            cl.publish("%s/%d/%s" % (a.topic, n, a.reply),
                       (word + b" ").ljust(REPLY_BYTES, b"r"), 1)

    while not done.is_set():
        due = min(a.count, int((time.monotonic() - start) * CONNECT_PER_S) + 1)
        while len(clients) < due:
            n = a.first + len(clients)
            c = client("fanout-%d" % n, "fanout/will")
            topic = "%s/%d" % (a.topic, n) if a.own else a.topic
            c.on_connect = lambda cl, u, f, r, p, topic=topic: cl.subscribe(topic, 1)
            c.on_subscribe = lambda cl, u, mid, r, p: subacked.add(cl)
            c.on_message = lambda cl, u, m, n=n: received(cl, n, m)
            c.connect(host, int(port), 60)
            sel.register(c.socket(), selectors.EVENT_READ, c)
            clients.append(c)
        if not announced and len(subacked) == a.count:
            print("ready %d" % a.count, flush=True)
            announced = True
        if not announced and time.monotonic() - start > READY_S:
            sys.stderr.write("fanout_subs: %d of %d subscribed\n" % (len(subacked), a.count))
            return 1
        for key, _ in sel.select(0.05):
            c = key.data
            c.loop_read()
            if c.socket() is None:
                sel.unregister(key.fileobj)
            elif c.want_write():                 # what a callback queued: the SUBSCRIBE
                c.loop_write()                   # after the CONNACK, a PUBACK, a reply
    print(json.dumps({"got": len(got), "last_s": max(got.values()) if got else None}), flush=True)
    for c in clients:
        if c.socket() is not None:
            c.socket().close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
