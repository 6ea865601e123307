# The clients bench group: the MQTT client libraries the desk could talk to the tables
# through, each doing the desk's side of a round start in the same run (mqtt_client_round.py,
# a process of its own per client, so its CPU time is its own):
#
#   mqtt_client_*_round_2000_p100_ms   a fresh mosquitto on loopback, CLIENT_MESSAGES plain
#                                    paho subscribers in fanout_subs.py processes (--own
#                                    --reply), each answering a 200-byte QoS 1 reply on a
#                                    topic of its own; the client, subscribed to every reply
#                                    (a wildcard), publishes CLIENT_MESSAGES 300-byte QoS 1
#                                    messages, one to each subscriber's topic, as fast as it
#                                    takes them: first publish to the last reply received
#                                    (median of --repeat rounds, one client process)
#   mqtt_client_*_round_2000_cpu_ms    the client's process CPU time (every thread) over the
#                                    same span: what the library costs per round start, apart
#                                    from the broker and the subscribers
#
# Clients (CLIENTS): paho (paho-mqtt, its own loop thread), paho_desk (the desk's Session:
# paho driven from the desk's network thread, duelclock_desk/mqtt_session.py), gmqtt,
# aiomqtt, amqtt (asyncio). Each line says the library and version in "client". A client
# that does not import or fails gives null figures and a note saying why; `make bench`
# installs them (pyproject's compare extra).
import json
import os
import statistics
import subprocess
import sys

from bench_link import FANOUT_PY, ROUND_PROCS, ROUND_TABLES, ROUND_TARGET_MS
from common import BenchError, HERE, metric
from duelclock_desk.broker import Mosquitto

CLIENTS = ("paho", "paho_desk", "gmqtt", "aiomqtt", "amqtt")
MODES = {"paho": "its own loop thread (loop_start), publish() from the main thread",
         "paho_desk": "the desk's Session (paho's external loop on one network thread)",
         "gmqtt": "asyncio, publish() in a loop", "aiomqtt": "asyncio, publish() gathered",
         "amqtt": "asyncio, publish() gathered"}
CLIENT_MESSAGES = 2000
CLIENT_PY = os.path.join(HERE, "mqtt_client_round.py")
TOPIC = "bench/clients/t"
REPLY_LEAF = "reply"
CHILD_START_S = 60.0             # a client process's start-up and connection, at most
ROUND_S = 40.0                   # and each of its rounds (mqtt_client_round.ROUND_WAIT_S + 10)


def client_round(b, client, messages=CLIENT_MESSAGES):
    """Two metrics for `client`: its median round (p100 ms) and CPU ms over b.repeat rounds,
    on a fresh mosquitto with `messages` answering subscribers."""
    broker = Mosquitto()
    subs = []
    try:
        procs = max(1, ROUND_PROCS * messages // ROUND_TABLES)
        per = -(-messages // procs)
        for i in range(procs):
            count = min(per, messages - i * per)
            subs.append(b.procs.start(
                [sys.executable, FANOUT_PY, "--broker", broker.url, "--topic", TOPIC,
                 "--count", str(count), "--first", str(i * per), "--own",
                 "--reply", REPLY_LEAF], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                text=True))
        for p in subs:
            line = p.stdout.readline()
            if not line.startswith("ready"):
                raise BenchError("fanout_subs.py did not get ready: %r" % line)
        child = b.procs.start(
            [sys.executable, CLIENT_PY, "--client", client, "--port", str(broker.port),
             "--topic", TOPIC, "--leaf", REPLY_LEAF, "--count", str(messages),
             "--rounds", str(b.repeat)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        try:
            out, err = child.communicate(timeout=CHILD_START_S + ROUND_S * b.repeat)
        except subprocess.TimeoutExpired:
            out, err = "", "no answer within %d s" % (CHILD_START_S + ROUND_S * b.repeat)
        b.procs.end(child)
    finally:
        for p in subs:
            b.procs.end(p)
        broker.stop()
    lines = out.strip().split("\n")
    try:
        r = json.loads(lines[-1])
    except ValueError:
        r = {"client": client, "rounds": [],
             "error": "mqtt_client_round.py printed no result: %s" % err.strip()[-300:]}
    name = "mqtt_client_%s_round_%d" % (client, messages)
    note = ("%s, %s: %d QoS 1 messages of 300 bytes to %d subscribers' own topics on a fresh "
            "mosquitto, each answered with a 200-byte QoS 1 reply the client takes through "
            "one wildcard subscription; first publish to the last reply, and the client "
            "process's CPU time over it, median of %d rounds"
            % (r["client"], MODES[client], messages, messages, b.repeat))
    rounds = r["rounds"]
    whole = len(rounds) == b.repeat and all(x["p100_ms"] is not None for x in rounds)
    if r.get("error"):
        note += "; %s" % r["error"]
    elif not whole:
        note += "; replies per round: %s of %d" % (", ".join(str(x["got"]) for x in rounds),
                                                  messages)
    # a figure only when every round got every reply
    p100 = round(statistics.median(x["p100_ms"] for x in rounds), 1) if whole else None
    cpu = round(statistics.median(x["cpu_ms"] for x in rounds), 1) if whole else None
    return [dict(metric(name + "_p100_ms", p100, "ms", ROUND_TARGET_MS, note=note),
                 client=r["client"]),
            dict(metric(name + "_cpu_ms", cpu, "ms"), client=r["client"])]


def bench_clients(b):
    for client in CLIENTS:
        for m in client_round(b, client):
            yield m
