# An emulated venue Wi-Fi hop in userspace (tc netem is not available here): a proxy that
# forwards TCP connections (MQTT) or UDP datagrams (NTP) to one address, each way delayed by
# delay_ms +/- jitter_ms (uniform) and, for hold_pct % of the packets, held hold_ms more.
#
#   python tests/bench/wifi_proxy.py --to 127.0.0.1:1883 [--udp] [--listen PORT]
#          [--delay-ms 20] [--jitter-ms 10] [--hold-pct 1] [--hold-ms 200] [--seed N]
#
# Prints "listening 127.0.0.1:PORT" once ready; runs until SIGTERM/SIGINT or stdin closes,
# then prints its counts as one JSON line on stdout.
#
# A "packet" is one read from a socket (TCP) or one datagram (UDP). TCP keeps its order: a
# packet never overtakes the one before it on the same connection, so a held packet holds
# up those behind it (as a Wi-Fi retransmission holds a TCP stream). UDP datagrams go
# independently and may overtake each other. Nothing is dropped.
import argparse
import asyncio
import json
import random
import signal
import socket
import sys

READ_BYTES = 65536


class Delays:
    def __init__(self, delay_ms, jitter_ms, hold_pct, hold_ms, seed):
        self.delay_s = delay_ms / 1000.0
        self.jitter_s = jitter_ms / 1000.0
        self.hold_p = hold_pct / 100.0
        self.hold_s = hold_ms / 1000.0
        self.rng = random.Random(seed)
        self.counts = {"packets": 0, "held": 0, "bytes": 0, "connections": 0}

    def next_s(self, nbytes):
        """The delay of one packet, in seconds."""
        self.counts["packets"] += 1
        self.counts["bytes"] += nbytes
        d = self.delay_s + self.rng.uniform(-self.jitter_s, self.jitter_s)
        if self.rng.random() < self.hold_p:
            self.counts["held"] += 1
            d += self.hold_s
        return max(0.0, d)


def _nodelay(writer):
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


async def _pipe(reader, writer, delays):
    """Copy reader -> writer, each read delivered at its due time, in order."""
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def deliver():
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if data is None:
                break
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.create_task(deliver())
    last_due = 0.0
    try:
        while True:
            data = await reader.read(READ_BYTES)
            if data:
                last_due = max(last_due, loop.time() + delays.next_s(len(data)))
            queue.put_nowait((last_due, data or None))
            if not data:
                break
    except (ConnectionError, OSError):
        queue.put_nowait((last_due, None))
    try:
        await sender
    except (ConnectionError, OSError):
        pass


async def serve_tcp(listen_port, target, delays):
    async def handle(c_reader, c_writer):
        try:
            u_reader, u_writer = await asyncio.open_connection(*target)
        except OSError:
            c_writer.close()
            return
        delays.counts["connections"] += 1
        _nodelay(c_writer)
        _nodelay(u_writer)
        try:
            await asyncio.gather(_pipe(c_reader, u_writer, delays),
                                 _pipe(u_reader, c_writer, delays), return_exceptions=True)
        except asyncio.CancelledError:
            pass                         # the proxy is stopping

    server = await asyncio.start_server(handle, "127.0.0.1", listen_port, backlog=2048)
    return server, server.sockets[0].getsockname()[1]


class _Upstream(asyncio.DatagramProtocol):
    """One client's socket towards the target: replies go back through the listener."""

    def __init__(self, proxy, client_addr):
        self.proxy, self.client_addr = proxy, client_addr
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        self.proxy.later(data, self.proxy.transport, self.client_addr)


class _UdpProxy(asyncio.DatagramProtocol):
    def __init__(self, target, delays):
        self.target, self.delays = target, delays
        self.transport = None
        self.upstreams = {}          # client address -> _Upstream

    def connection_made(self, transport):
        self.transport = transport

    def later(self, data, transport, addr):
        loop = asyncio.get_running_loop()
        loop.call_later(self.delays.next_s(len(data)), transport.sendto, data, addr)

    def datagram_received(self, data, addr):
        up = self.upstreams.get(addr)
        if up is None:
            asyncio.get_running_loop().create_task(self._open(addr, data))
            return
        if up.transport is not None:
            self.later(data, up.transport, None)

    async def _open(self, addr, first):
        loop = asyncio.get_running_loop()
        up = _Upstream(self, addr)
        self.upstreams[addr] = up
        self.delays.counts["connections"] += 1
        await loop.create_datagram_endpoint(lambda: up, remote_addr=self.target)
        self.later(first, up.transport, None)


async def serve_udp(listen_port, target, delays):
    loop = asyncio.get_running_loop()
    proxy = _UdpProxy(target, delays)
    transport, _ = await loop.create_datagram_endpoint(lambda: proxy,
                                                      local_addr=("127.0.0.1", listen_port))
    return transport, transport.get_extra_info("sockname")[1]


async def main_async(a):
    host, port = a.to.rsplit(":", 1)
    target = (host, int(port))
    delays = Delays(a.delay_ms, a.jitter_ms, a.hold_pct, a.hold_ms, a.seed)
    if a.udp:
        server, bound = await serve_udp(a.listen, target, delays)
    else:
        server, bound = await serve_tcp(a.listen, target, delays)
    print("listening 127.0.0.1:%d" % bound, flush=True)
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, done.set)
    loop.add_reader(sys.stdin.fileno(), lambda: sys.stdin.buffer.read1(4096) or done.set())
    await done.wait()
    server.close()
    print(json.dumps(delays.counts), flush=True)


def parse(argv):
    ap = argparse.ArgumentParser(prog="wifi_proxy")
    ap.add_argument("--to", required=True, help="HOST:PORT to forward to")
    ap.add_argument("--listen", type=int, default=0, help="loopback port (default: a free one)")
    ap.add_argument("--udp", action="store_true", help="datagrams instead of TCP connections")
    ap.add_argument("--delay-ms", type=float, default=20.0)
    ap.add_argument("--jitter-ms", type=float, default=10.0)
    ap.add_argument("--hold-pct", type=float, default=1.0)
    ap.add_argument("--hold-ms", type=float, default=200.0)
    ap.add_argument("--seed", type=int, default=1)
    return ap.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main_async(parse(sys.argv[1:])))
