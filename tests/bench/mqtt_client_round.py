# One MQTT client library doing the desk's side of a round start (the clients bench group,
# bench_clients.py), alone in this process so its CPU time is its own:
#
#   python tests/bench/mqtt_client_round.py --client NAME --port P --topic T --count 2000
#          [--rounds 3] [--leaf reply]
#
# NAME: paho (paho-mqtt's own loop thread, loop_start), paho_desk (the desk's Session,
# duelclock_desk/mqtt_session.py: paho driven from one network thread of ours), gmqtt, aiomqtt,
# amqtt (the last three under asyncio). The client connects to the broker on 127.0.0.1:P
# (MQTT 3.1.1, clean session, TCP_NODELAY, no in-flight limit where the library has one),
# subscribes to T/+/LEAF at QoS 1, and is ready when its own probe on T/probe/LEAF comes back.
# Each round r then publishes COUNT QoS 1 messages of CMD_BYTES, message n on T/<n> with the
# payload "r ..." (built before the round), as fast as the library takes them, and waits for
# COUNT replies whose payload starts with "r " (fanout_subs.py --reply answers each).
#
# Prints one JSON line: {"client": "<distribution> <version>", "rounds": [{"got": replies,
# "p100_ms": first publish to the COUNT-th reply (null if they did not all come within
# ROUND_WAIT_S), "cpu_ms": this process's CPU time (every thread) over the same span}, ...]},
# or {"client": NAME, "error": why} when the library does not import or the run fails.
import argparse
import asyncio
import json
import os
import socket
import sys
import threading
import time
from importlib import metadata

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for _p in (HERE, os.path.join(ROOT, "host_tools")):   # this tree's desk, not an installed copy
    if _p not in sys.path:
        sys.path.insert(0, _p)

CMD_BYTES = 300
ROUND_WAIT_S = 30.0
READY_WAIT_S = 10.0
CLIENT_ID = "bench-candidate"
NODELAY = (socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
DISTRIBUTIONS = {"paho": "paho-mqtt", "paho_desk": "paho-mqtt", "gmqtt": "gmqtt",
                 "aiomqtt": "aiomqtt", "amqtt": "amqtt"}


class Rounds:
    """What every client shares: the messages, and the count of a round's replies. reply()
    is called with each payload received (from any one thread); it sets `ready` on the probe
    and `done` (set_done) on the round's COUNT-th reply, stamping the end then."""

    def __init__(self, topic, leaf, count):
        self.topic, self.count = topic, count
        self.filter = "%s/+/%s" % (topic, leaf)
        self.probe = "%s/probe/%s" % (topic, leaf)
        self.set_ready = self.set_done = lambda: None
        self.word = None
        self.got = 0
        self.results = []

    def messages(self, r):
        head = b"%d " % r
        return [("%s/%d" % (self.topic, n), (head + b"%d " % n).ljust(CMD_BYTES, b"c"))
                for n in range(self.count)]

    def start(self, r):
        self.word, self.got = b"%d " % r, 0
        self.t0, self.cpu0 = time.monotonic(), time.process_time()

    def reply(self, payload):
        if payload.startswith(b"probe "):
            self.set_ready()
        elif self.word is not None and payload.startswith(self.word):
            self.got += 1
            if self.got == self.count:
                self.t1, self.cpu1 = time.monotonic(), time.process_time()
                self.set_done()

    def finish(self, all_came):
        """The round's figures (all_came: the COUNT-th reply came in time)."""
        self.word = None
        self.results.append({
            "got": self.got,
            "p100_ms": round((self.t1 - self.t0) * 1000, 1) if all_came else None,
            "cpu_ms": round((self.cpu1 - self.cpu0) * 1000, 1) if all_came else None})


def run_threaded(rounds, n_rounds, session):
    """A client whose callbacks come on a network thread: session(on_payload, on_connected)
    gives (publish(topic, payload), close()); on_connected subscribes and sends the probe."""
    ready, done = threading.Event(), threading.Event()
    rounds.set_ready, rounds.set_done = ready.set, done.set
    publish, close = session(rounds.reply)
    try:
        if not ready.wait(READY_WAIT_S):
            raise RuntimeError("no SUBACK and probe back within %g s" % READY_WAIT_S)
        for r in range(n_rounds):
            msgs = rounds.messages(r)
            done.clear()
            rounds.start(r)
            for topic, payload in msgs:
                publish(topic, payload)
            rounds.finish(done.wait(ROUND_WAIT_S))
    finally:
        close()


def paho_thread(port, rounds):
    def session(on_payload):
        import paho.mqtt.client as paho
        c = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=CLIENT_ID,
                        protocol=paho.MQTTv311)
        c.max_inflight_messages_set(0)
        c.max_queued_messages_set(0)
        c.on_socket_open = lambda cl, u, sock: sock.setsockopt(*NODELAY)

        def connected(cl, u, flags, reason, properties):
            cl.subscribe(rounds.filter, 1)
            cl.publish(rounds.probe, b"probe ", 1)
        c.on_connect = connected
        c.on_message = lambda cl, u, msg: on_payload(msg.payload)
        c.connect("127.0.0.1", port, 60)
        c.loop_start()

        def close():
            c.disconnect()
            c.loop_stop()
        return (lambda topic, payload: c.publish(topic, payload, 1)), close
    return session


def paho_desk(port, rounds):
    def session(on_payload):
        from duelclock_desk.mqtt_session import Session
        s = Session("127.0.0.1", port, CLIENT_ID)

        def connected():
            s.subscribe([(rounds.filter, 1)])
            s.publish(rounds.probe, b"probe ")
        s.on_connect = connected
        s.on_message = lambda topic, payload, retained, rx: on_payload(payload)
        s.start()
        return s.publish, s.stop
    return session


async def run_async(rounds, n_rounds, connect):
    """A client under asyncio: connect(on_payload) gives (publish_all(messages): an awaitable
    that makes the library's publish calls, close()), subscribed and probed."""
    ready, done = asyncio.Event(), asyncio.Event()
    rounds.set_ready, rounds.set_done = ready.set, done.set
    publish_all, close = await connect(rounds.reply)
    try:
        await asyncio.wait_for(ready.wait(), READY_WAIT_S)
        for r in range(n_rounds):
            msgs = rounds.messages(r)
            done.clear()
            rounds.start(r)
            sent = asyncio.ensure_future(publish_all(msgs))
            try:
                await asyncio.wait_for(done.wait(), ROUND_WAIT_S)
                rounds.finish(True)
            except asyncio.TimeoutError:
                rounds.finish(False)
            await sent
    finally:
        await close()


def gmqtt_client(port, rounds):
    async def connect(on_payload):
        import gmqtt
        from gmqtt.mqtt.constants import MQTTv311
        c = gmqtt.Client(CLIENT_ID)

        def message(client, topic, payload, qos, properties):
            on_payload(payload)
            return 0                                  # PUBACK reason: success
        c.on_message = message
        await c.connect("127.0.0.1", port, version=MQTTv311)
        c.subscribe(rounds.filter, qos=1)
        c.publish(rounds.probe, b"probe ", qos=1)

        async def publish_all(msgs):                  # gmqtt's publish writes at once
            for topic, payload in msgs:
                c.publish(topic, payload, qos=1)
        return publish_all, c.disconnect
    return connect


def aiomqtt_client(port, rounds):
    async def connect(on_payload):
        import aiomqtt
        c = aiomqtt.Client("127.0.0.1", port, identifier=CLIENT_ID, max_inflight_messages=0,
                           max_queued_outgoing_messages=0, socket_options=(NODELAY,))
        c.pending_calls_threshold = rounds.count      # a round's publishes pend at once
        await c.__aenter__()
        await c.subscribe(rounds.filter, qos=1)

        async def receive():
            async for msg in c.messages:
                on_payload(msg.payload)
        reader = asyncio.create_task(receive())
        await c.publish(rounds.probe, b"probe ", qos=1)

        def publish_all(msgs):                        # each publish() waits for its PUBACK
            return asyncio.gather(*(c.publish(t, p, qos=1) for t, p in msgs))

        async def close():
            reader.cancel()
            await c.__aexit__(None, None, None)
        return publish_all, close
    return connect


def amqtt_client(port, rounds):
    async def connect(on_payload):
        from amqtt.client import MQTTClient
        from amqtt.mqtt.constants import QOS_1
        c = MQTTClient(client_id=CLIENT_ID, config={"auto_reconnect": False})
        await c.connect("mqtt://127.0.0.1:%d/" % port)
        await c.subscribe([(rounds.filter, QOS_1)])

        async def receive():
            while True:
                msg = await c.deliver_message()
                on_payload(bytes(msg.data))
        reader = asyncio.create_task(receive())
        await c.publish(rounds.probe, b"probe ", qos=QOS_1)

        def publish_all(msgs):                        # each publish() waits for its PUBACK
            return asyncio.gather(*(c.publish(t, p, qos=QOS_1) for t, p in msgs))

        async def close():
            reader.cancel()
            await c.disconnect()
        return publish_all, close
    return connect


THREADED = {"paho": paho_thread, "paho_desk": paho_desk}
ASYNC = {"gmqtt": gmqtt_client, "aiomqtt": aiomqtt_client, "amqtt": amqtt_client}


def main(argv):
    ap = argparse.ArgumentParser(prog="mqtt_client_round")
    ap.add_argument("--client", required=True, choices=sorted(DISTRIBUTIONS))
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--leaf", default="reply")
    a = ap.parse_args(argv)
    rounds = Rounds(a.topic, a.leaf, a.count)
    try:
        name = "%s %s" % (DISTRIBUTIONS[a.client], metadata.version(DISTRIBUTIONS[a.client]))
    except metadata.PackageNotFoundError:
        name = a.client
    try:
        if a.client in THREADED:
            run_threaded(rounds, a.rounds, THREADED[a.client](a.port, rounds))
        else:
            asyncio.run(run_async(rounds, a.rounds, ASYNC[a.client](a.port, rounds)))
    except Exception as e:       # an import that fails, a library that breaks: a figure of null
        print(json.dumps({"client": name, "error": "%s: %s" % (type(e).__name__, e),
                          "rounds": rounds.results}), flush=True)
        return 0
    print(json.dumps({"client": name, "rounds": rounds.results}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
