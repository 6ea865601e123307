"""`duelclock desk`: the long-running desk service.

One asyncio loop owns the Desk (desk.py) and the store. Links receive in their own threads,
answer sync requests there, and hand the other lines over through a queue; the loop takes
them in batches (one commit per batch).
A local HTTP JSON API (aiohttp) serves the CLI and the dashboard (dashboard.py: the pages,
/api/room, /api/audit, /api/results, and the guard in front of every route):

  GET  /api/status            everything status shows
  GET  /api/tables/<n>        one table: state, result, penalties, stored events
  POST /api/round/start       {round, kind, tables, at, limit_s, cap_s, extra_turns,
                               seating, rules, lang, judge_extend, pairings: [[tbl, A, B], ...]}
  POST /api/pause, /api/resume {tables, at_ms}
  POST /api/extend {ms, table | tables}   neither: every table of the round
  POST /api/collect {round}
  POST /api/carry {id, confirm}   the head judge's call on a carried penalty (KR)
  POST /api/result {table, round, reason, take: table|replay | result, wins: {A, B}}
                              the head judge's result (entered, or overriding the table's)
  POST /api/round/close {round, force}   refused with what is open unless force
  GET  /api/results.csv?round=N[&force=1]   409 while a table has no final result (the
                              next round's pairings need every one) unless force=1
  POST /api/unlock {table, challenge}  -> {code}: opens that table's maintenance (unlock.py)
  GET  /api/results.csv?round=N
  GET  /api/events            server-sent events: "table" and "link" changes, "audit" after
                              every command (carried out or refused)

Every POST may carry "who" (the CLI sends the user name); the audit log keeps who@address.
Without --lan the server listens on 127.0.0.1 only and asks no credentials. With --lan it
listens on every interface: then a request that does not come from this machine by a
loopback name needs the desk token printed at start (dashboard.guard). The broker the desk
starts then listens on every interface too, with a password (and TLS with --tls): venue.py.
"""
import asyncio
import binascii
import json
import os
import signal
import sys
import threading
import traceback

from aiohttp import web

from duelclock_desk import dashboard, venue
from duelclock_desk.broker import BrokerError, Mosquitto
from duelclock_desk.commands import CommandError
from duelclock_desk.desk import Desk
from duelclock_desk.desk_time import DeskClock, stamp_of, unix_ms
from duelclock_desk.links import open_link
from duelclock_desk.protocol import fingerprint
from duelclock_desk.store import Store, StoreError

TICK_S = 1.0
SSE_KEEPALIVE_S = 15.0
SSE_QUEUE = 1000           # a subscriber that falls this far behind loses the oldest changes
SSE_RETRY_MS = 1000        # a browser's EventSource reconnects this soon after losing the desk
TAKE_BATCH = 200           # link items taken between two turns of the loop (about 0.1 s of work)
SHED_BACKLOG = TAKE_BATCH  # link items waiting for the loop past which sync requests go
                           # unanswered (ThreadSink)


def load_key(path):
    """The event key from a --key file: hex (keygen writes 32 random bytes)."""
    with open(path) as f:
        text = f.read().strip()
    try:
        key = binascii.unhexlify(text)
    except (binascii.Error, ValueError):
        raise StoreError("%s: the key file holds hex digits (duelclock keygen)" % path)
    if len(key) < 16:
        raise StoreError("%s: a key of %d bytes is too short (keygen makes 32)" % (path, len(key)))
    return key


class ThreadSink:
    """What links call from their threads: the lines and statuses go to the loop's queue.
    Receive times are stamped here, in the link's thread, the moment bytes arrive.
    The loop is woken once for what arrives while it is busy, not once per message (each
    wake-up is a system call in the link's thread and a callback in the loop).
    `desk`: sync requests are answered in the link's thread (Desk.answer_syncs); which
    tables they came from (Desk.heard_syncs) goes to the loop in order, ahead of the next
    item put, or with the loop's tick (flush_heard): a young room's sync requests, a
    thousand a second and more, neither wait behind nor hold up the states, records and
    commands the loop works through, nor wake it. While
    more than SHED_BACKLOG items wait for the loop (a round start's 2,000 states on a
    loaded machine) sync requests are not answered at all: the link's thread reads the
    states sooner, and the tables, their requests unanswered, back off (core/clock.py)."""

    def __init__(self, now_ms, loop, queue, desk=None):
        self.now_ms = now_ms
        self.stamp_ms = stamp_of(now_ms)
        self._desk = desk
        self._loop, self._queue = loop, queue
        self._lock = threading.Lock()
        self._items = []              # arrived, not yet in the queue
        self._woken = False           # a _drain is scheduled in the loop
        self._heard = {}              # link -> ({tbl: rx_ms}, {reason: n}) of sync requests
                                      # answered, and dropped

    def _put(self, item=None):
        with self._lock:
            for link, (heard, dropped) in self._heard.items():
                self._items.append(("heard_syncs", link, heard, dropped))
            self._heard = {}
            if item is not None:
                self._items.append(item)
            if self._woken or not self._items:
                return
            self._woken = True
        try:
            self._loop.call_soon_threadsafe(self._drain)
        except RuntimeError:          # the loop closed under a late reader thread
            pass

    def _drain(self):
        with self._lock:
            items, self._items, self._woken = self._items, [], False
        for item in items:
            self._queue.put_nowait(item)

    def lines(self, link, lines, rx_ms, retained=False):
        if self._desk is not None:
            shed = len(self._items) + self._queue.qsize() > SHED_BACKLOG
            lines, heard, dropped = self._desk.answer_syncs(link, lines, rx_ms, retained,
                                                            shed)
            if heard or dropped:
                with self._lock:
                    h, d = self._heard.setdefault(link, ({}, {}))
                    h.update(heard)
                    for why, n in dropped.items():
                        d[why] = d.get(why, 0) + n
        if lines:
            self._put(("lines", link, lines, rx_ms, retained))

    def flush_heard(self):
        """The sync requests answered (and dropped) since the last item put, to the loop's
        queue (Desk.heard_syncs) after what is already in it."""
        self._put()

    def link_status(self, link, tbl, online):
        self._put(("link_status", link, tbl, online))


class Service:
    """The desk with its links, broker and HTTP API. start() and stop() in a running loop."""

    def __init__(self, store_path, key, event=None, links=(), broker="auto", lan=False,
                 http_port=8765, speed=1.0, ca=None, auth=None, venue_opts=None):
        """ca, auth (user, password): for mqtts:// and logins on the links and broker;
        venue_opts: venue.start()'s options for the broker --lan starts."""
        self.store_path, self.key, self.event_name = store_path, key, event
        self.link_urls, self.broker_url, self.lan = list(links), broker, lan
        self.ca, self.auth, self.venue_opts = ca, auth, venue_opts or {}
        self.venue = None                # with --lan: what the tables need (tables.json)
        self.http_port = http_port
        self.speed = speed
        self.broker = None
        self.desk = None
        self.subscribers = set()
        self.watch = dashboard.Watch()
        self.token = dashboard.new_token() if lan else None
        self._tasks = []
        self._runner = None
        self._mark = None
        self._sink = None

    async def start(self):
        store = Store(self.store_path)
        try:
            event = store.start_desk(self.event_name, fingerprint(self.key), unix_ms())
        except StoreError:
            store.close()
            raise
        try:
            links = [open_link(u, event["name"], self.ca, self.auth) for u in self.link_urls]
            if self.broker_url == "auto" and self.lan:
                self.broker, desk_auth, self.venue = venue.start(self.store_path,
                                                                 **self.venue_opts)
                links.append(open_link(self.broker.url, event["name"], auth=desk_auth))
            elif self.broker_url == "auto":
                self.broker = Mosquitto()
                links.append(open_link(self.broker.url, event["name"]))
            elif self.broker_url != "off":
                links.append(open_link(self.broker_url, event["name"], self.ca, self.auth))
        except (BrokerError, ValueError):
            store.close()
            raise
        clock = DeskClock(event["epoch_unix_ms"], self.speed)
        # Desk time goes on from the last run's mark, not from the wall clock (DeskClock).
        # A bench's shared clock (tests/bench/desk_child.py) keeps its own time: no mark.
        self._mark = getattr(clock, "mark", None)
        if self._mark is not None:
            clock.resume(store.clock_mark())
            store.set_clock_mark(self._mark())
            store.commit()
        self.desk = Desk(store, self.key, event, clock, links, self._changed, self.speed)
        queue = asyncio.Queue()
        self._sink = sink = ThreadSink(clock, asyncio.get_running_loop(), queue, self.desk)
        for link in links:
            link.start(sink)
        self._tasks = [asyncio.create_task(self._take(queue)), asyncio.create_task(self._tick())]
        self._runner = web.AppRunner(make_app(self), shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "0.0.0.0" if self.lan else "127.0.0.1",
                           self.http_port)
        await site.start()
        self.http_port = self._runner.addresses[0][1]

    async def stop(self):
        for q in self.subscribers:
            _put(q, None)                  # each event stream ends
        if self._runner:
            await self._runner.cleanup()
        for t in self._tasks:
            t.cancel()
        if self.desk:
            for link in self.desk.links:
                link.stop()
            self.desk.close()
        if self.broker:
            self.broker.stop()

    async def _take(self, queue):
        # What the links brought, TAKE_BATCH items at a time, then one flush (a commit) and a
        # turn for the rest of the loop: a desk behind on 2,000 tables still answers the room
        # page, the CLI and a round start between batches, not after the whole backlog.
        while True:
            batch = [await queue.get()]
            while len(batch) < TAKE_BATCH and not queue.empty():
                batch.append(queue.get_nowait())
            for item in batch:
                try:
                    getattr(self.desk, item[0])(*item[1:])
                except Exception:       # a bug on one message must not stop the desk
                    traceback.print_exc()
            self.desk.flush()
            await asyncio.sleep(0)

    async def _tick(self):
        while True:
            await asyncio.sleep(TICK_S)
            if self._mark is not None:
                self.desk.store.set_clock_mark(self._mark())
            self._sink.flush_heard()
            self.desk.tick()                 # commits

    def _changed(self, kind, data):
        if kind == "table" and not self.subscribers:
            # No page listens: only noted (a round start is 2,000 of these at once).
            self.watch.note(data, self.desk.now_ms())
        elif kind == "table":
            data = self.watch.view(data, self.desk.now_ms(), self.desk)
        for q in self.subscribers:
            _put(q, (kind, data))


def _put(q, item):
    # A subscriber that fell SSE_QUEUE behind loses the oldest change, never the newest.
    if q.full():
        q.get_nowait()
    q.put_nowait(item)


# --- HTTP -----------------------------------------------------------------------------------

SVC = web.AppKey("svc", Service)


def make_app(svc):
    app = web.Application()
    app[SVC] = svc
    app.router.add_get("/api/status", get_status)
    app.router.add_get("/api/tables/{n:\\d+}", get_table)
    app.router.add_get("/api/results.csv", get_results_csv)
    app.router.add_get("/api/events", get_events)
    for path, name, keys in POSTS:
        app.router.add_post(path, _command(name, keys))
    dashboard.setup(app, svc)
    return app


# path, Desk command, the JSON keys it takes
POSTS = (
    ("/api/round/start", "start_round", ("round", "kind", "tables", "at", "limit_s", "cap_s",
                                         "extra_turns", "seating", "rules", "lang", "pairings",
                                         "judge_extend")),
    ("/api/pause", "pause", ("tables", "at_ms")),
    ("/api/resume", "resume", ("tables", "at_ms")),
    ("/api/extend", "extend", ("table", "tables", "ms")),
    ("/api/collect", "collect", ("round",)),
    ("/api/import", "import", ("table", "round", "events")),
    ("/api/carry", "carry", ("id", "confirm")),
    ("/api/result", "result", ("table", "round", "take", "result", "wins", "reason")),
    ("/api/round/close", "close_round", ("round", "force")),
    ("/api/unlock", "unlock", ("table", "challenge")),
)


def _command(name, keys):
    async def handler(request):
        try:
            body = await request.json() if request.can_read_body else {}
        except json.JSONDecodeError:
            body = None
        if type(body) is not dict:
            return web.json_response({"error": "the body is a JSON object"}, status=400)
        unknown = set(body) - set(keys) - {"who"}
        if unknown:
            return web.json_response({"error": "unknown keys: " + ", ".join(sorted(unknown))},
                                     status=400)
        who = "%s@%s" % (body.pop("who", "api"), request.remote)
        svc = request.app[SVC]
        try:
            out = svc.desk.run(who, name, body)
        except CommandError as e:
            return web.json_response({"error": str(e)}, status=400)
        finally:
            svc._changed("audit", {"command": name})
        return web.json_response(out)
    return handler


async def get_status(request):
    return web.json_response(request.app[SVC].desk.status())


async def get_table(request):
    out = request.app[SVC].desk.table_detail(int(request.match_info["n"]))
    if out is None:
        return web.json_response({"error": "no such table"}, status=404)
    return web.json_response(out)


async def get_results_csv(request):
    desk = request.app[SVC].desk
    q = request.query.get("round")
    round_no = int(q) if q and q.isdigit() else (desk.round["round"] if desk.round else 0)
    why = desk.store.export_refusal(round_no)
    if why and request.query.get("force") != "1":
        return web.json_response({"error": why, "missing": desk.store.missing(round_no)},
                                 status=409)
    return web.Response(text=desk.store.results_csv(round_no), content_type="text/csv")


async def get_events(request):
    svc = request.app[SVC]
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                       "Cache-Control": "no-cache"})
    await resp.prepare(request)
    q = asyncio.Queue(SSE_QUEUE)
    svc.subscribers.add(q)
    try:
        await resp.write(b": duelclock desk\nretry: %d\n\n" % SSE_RETRY_MS)
        while True:
            try:
                item = await asyncio.wait_for(q.get(), SSE_KEEPALIVE_S)
            except asyncio.TimeoutError:
                await resp.write(b": keepalive\n\n")
                continue
            if item is None:
                break
            await resp.write(("event: %s\ndata: %s\n\n" % (item[0], json.dumps(item[1])))
                             .encode())
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        svc.subscribers.discard(q)
    return resp


# --- the command ----------------------------------------------------------------------------

async def serve(svc):
    """Run until SIGINT or SIGTERM."""
    try:
        await svc.start()
    except BaseException:
        await svc.stop()                 # what did start: links, broker, store
        raise
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    d = svc.desk
    print("duelclock desk: event %s, boot %d, http://127.0.0.1:%d, links: %s" % (
        d.event["name"], d.event["boot"], svc.http_port,
        " ".join(l.url for l in d.links) or "none"), flush=True)
    if svc.token:
        print("dashboard on the venue LAN: http://<this machine>:%d/  desk token: %s" % (
            svc.http_port, svc.token), flush=True)
    if svc.venue:
        print("venue broker: %s, user %s, its password in %s%s" % (
            svc.venue["url"], svc.venue["user"],
            os.path.join(venue.state_dir(svc.store_path), "tables.json"),
            ", CA " + svc.venue["ca"] if svc.venue["ca"] else ""), flush=True)
    try:
        await stop.wait()
    finally:
        await svc.stop()


def run(a):
    """The `desk` command (cli.py declares its arguments)."""
    try:
        key = load_key(a.key)
        svc = Service(a.store, key, a.event, a.link, a.broker, a.lan, a.http_port, a.speed,
                      a.ca, _auth(a), _venue_opts(a))
        asyncio.run(serve(svc))
    except (StoreError, BrokerError, OSError, ValueError) as e:
        sys.stderr.write("desk: %s\n" % e)
        return 2
    return 0


def _auth(a):
    """(user, password) from --user and --password-file, or None."""
    if not getattr(a, "user", None):
        return None
    password = ""
    if a.password_file:
        with open(a.password_file) as f:
            password = f.read().strip()
    return a.user, password


def _venue_opts(a):
    opts = {"port": getattr(a, "broker_port", 0) or 0, "tls": getattr(a, "tls", False),
            "names": getattr(a, "lan_host", None) or (),
            "password_file": getattr(a, "broker_password_file", None)}
    if getattr(a, "tls_cert", None):
        opts["cert"], opts["ca"] = (a.tls_cert, a.tls_key), a.ca
    return opts
