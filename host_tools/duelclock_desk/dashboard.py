"""The desk's dashboard in the browser: its pages, the read-only JSON it needs beyond
api.py's, what the service keeps in memory for it, and the guard in front of the HTTP server.

  GET  /                     the room: web/index.html, drawn by web/app.js from the JSON below
                             and kept live by /api/events
  GET  /static/<file>        web/*.js, web/*.css; /static/sheet.css is sheet_html.CSS
  GET  /table/<n>[?round=N]  one table: state, result and its verification, penalties, sync
                             history, and the LP sheet of the stored record replayed; printable
  GET  /api/room             /api/status, each table with what Watch adds, and the desk speed
  GET  /api/audit?limit=N    the audit log, newest first
  GET  /api/results?round=N  the rows of /api/results.csv as JSON, the head judge's decisions
                             and the tables with no final result yet
  GET  /login, POST /login   --lan only: the desk token form (sets the token cookie)

Every control of the page posts to api.py's endpoints: the same commands the CLI sends.

Watch (in the service's memory, empty again after a desk restart):
  sync history  per table a ring of (desk_ms, sync_age_ms, sync_err_ms), one entry when the
                table's sync changed (a new exchange, another error) or every SYNC_EVERY_MS
  turn start    desk ms when a table's (round, duel, turn) was first seen; gives turn_ms
                and the "long_turn" alert past 3:00 (the KR thinking-time guideline)
  "tardiness"   a seating round has started and the table has not begun duel 1 (a player is
                not checked in), or its verified record holds a tardiness penalty

Guard (middleware), for every request:
  trusted   the peer is loopback AND the Host header names loopback (a page of another site
            rebinding its DNS name to this machine names its own host)
  untrusted without --lan: 403 (the server only listens on 127.0.0.1 then);
            with --lan (the server listens on every interface): the desk token, printed at
            desk start, in the cookie POST /login sets or in an X-Desk-Token header; else
            pages redirect to /login and the API answers 401 (/static/ files are served
            to anyone: they hold no desk data)
  POST      with an Origin header, only from the server's own origin: another site open in
            the judges' browser cannot drive the desk
  CSP       pages load this server's files and nothing else
"""
import csv
import hmac
import io
import ipaddress
import json
import os
import secrets
import time
from collections import deque
from html import escape

from aiohttp import web

from duelclock.core.replay import RecordError
from duelclock.core.sheet import LONG_TURN_MS, clock
from duelclock_desk import decisions, record_flags
from duelclock_desk.sheet_html import CSS as SHEET_CSS
from duelclock_desk.sheet_html import render_html
from duelclock_desk.verification import replayed

WEB_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "web")
SYNC_RING = 360            # sync history entries kept per table (an hour at one per 10 s)
SYNC_EVERY_MS = 10000
SYNC_SHOWN = 12            # rows of sync history on a table's page (the chart shows all)
PLAYING = ("duel", "extra_duel", "time_turn", "extra_turn", "sudden_death")
AUDIT_MAX = 500
TOKEN_COOKIE = "duelclock_desk_token"
TOKEN_HEADER = "X-Desk-Token"
PUBLIC = "/static/"        # the page's own files: no desk data, and the login page needs them
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
CSP = ("default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")

DASH = web.AppKey("dashboard_svc", object)


def new_token():
    """A desk token to type on a tablet: 64 random bits as four groups of four hex digits."""
    h = secrets.token_hex(8)
    return "-".join(h[i:i + 4] for i in range(0, 16, 4))


def _norm_token(text):
    return "".join(c for c in (text or "").lower() if c in "0123456789abcdef")


class Watch:
    """What the dashboard shows beyond the desk's table views; fed every view the desk
    publishes (api.Service._changed) and every view /api/room serves."""

    def __init__(self):
        self.syncs = {}            # tbl -> deque of (desk_ms, sync_age_ms, sync_err_ms)
        self.turns = {}            # tbl -> ((round, duel, turn), desk ms first seen)

    def note(self, view, now_ms):
        """Note `view` (Desk.table_view at now_ms): its sync figures and turn; the desk ms
        its turn was first seen."""
        tbl = view["table"]
        if view["sync_age_ms"] is not None:
            ring = self.syncs.setdefault(tbl, deque(maxlen=SYNC_RING))
            entry = (now_ms, view["sync_age_ms"], view["sync_err_ms"])
            last = ring[-1] if ring else None
            if last is None or entry[2] != last[2] or entry[1] < last[1] \
                    or now_ms - last[0] >= SYNC_EVERY_MS:
                ring.append(entry)
        key = (view["round"], view["duel"], view["turn"])
        seen = self.turns.get(tbl)
        if seen is None or seen[0] != key:
            seen = self.turns[tbl] = (key, now_ms)
        return seen[1]

    def view(self, view, now_ms, desk):
        """`view` noted, and returned as a new dict with turn_ms and the dashboard's alerts
        added."""
        turn_at = self.note(view, now_ms)
        out = dict(view, alerts=list(view["alerts"]), turn_ms=None)
        if view["phase"] in PLAYING:
            out["turn_ms"] = now_ms - turn_at
            if out["turn_ms"] > LONG_TURN_MS:
                out["alerts"].append("long_turn")
        if _tardy(view, now_ms, desk):
            out["alerts"].append("tardiness")
        return out

    def sync_history(self, tbl):
        return list(self.syncs.get(tbl, ()))


def _tardy(view, now_ms, desk):
    r = desk.round
    if not r or r["state"] != "running" or view["round"] != r["round"]:
        return False
    if r["seating"] and view["phase"] == "waiting" and now_ms >= r["start_ms"]:
        return True
    return any(p["code"] == "tardiness" for p in desk.store.penalties(view["table"], r["round"]))


# --- the guard --------------------------------------------------------------------------------

def _loopback_peer(remote):
    try:
        ip = ipaddress.ip_address(remote or "")
    except ValueError:
        return False
    if getattr(ip, "ipv4_mapped", None):
        ip = ip.ipv4_mapped
    return ip.is_loopback


def _has_token(request, token):
    given = request.cookies.get(TOKEN_COOKIE) or request.headers.get(TOKEN_HEADER)
    return given is not None and hmac.compare_digest(_norm_token(given), _norm_token(token))


def _same_origin(request):
    origin = request.headers.get("Origin")
    return origin is None or origin == "%s://%s" % (request.scheme, request.host)


@web.middleware
async def guard(request, handler):
    svc = request.app[DASH]
    if request.method not in ("GET", "HEAD") and not _same_origin(request):
        return web.json_response({"error": "cross-origin request refused"}, status=403)
    if request.path == "/login" and svc.token is None:
        raise web.HTTPNotFound()
    trusted = _loopback_peer(request.remote) and request.url.host in LOOPBACK_NAMES
    if trusted or request.path == "/login" or request.path.startswith(PUBLIC):
        return await handler(request)
    if svc.token is None:
        return web.json_response({"error": "this desk serves 127.0.0.1 only"}, status=403)
    if _has_token(request, svc.token):
        return await handler(request)
    if request.path.startswith("/api/"):
        return web.json_response({"error": "the desk token is needed (/login)"}, status=401)
    raise web.HTTPSeeOther("/login")


async def _headers(request, response):
    response.headers.setdefault("Content-Security-Policy", CSP)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")


LOGIN = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>duelclock desk: token</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/style.css"></head>
<body class="login"><main><h1>duelclock desk</h1>%s
<form method="post" action="/login"><label for="token">Desk token &middot; 데스크 토큰 &middot;
Token meja</label><input id="token" name="token" autocomplete="off" autofocus required>
<button type="submit">OK</button></form>
<p>The token is printed where the desk was started (<code>duelclock desk --lan</code>).</p>
</main></body></html>
"""


async def get_login(request):
    return web.Response(text=LOGIN % "", content_type="text/html")


async def post_login(request):
    svc = request.app[DASH]
    form = await request.post()
    if not hmac.compare_digest(_norm_token(form.get("token")), _norm_token(svc.token)):
        return web.Response(text=LOGIN % '<p class="error" role="alert">Wrong token.</p>',
                            content_type="text/html", status=403)
    resp = web.HTTPSeeOther("/")
    resp.set_cookie(TOKEN_COOKIE, _norm_token(svc.token), httponly=True, samesite="Strict",
                    path="/")
    raise resp


# --- JSON -------------------------------------------------------------------------------------

async def get_room(request):
    svc = request.app[DASH]
    st = svc.desk.status()
    st["tables"] = [svc.watch.view(v, st["desk_ms"], svc.desk) for v in st["tables"]]
    st["speed"] = svc.speed
    st["epoch_unix_ms"] = svc.desk.event["epoch_unix_ms"]
    return web.json_response(st)


def _int_query(request, name, default):
    q = request.query.get(name)
    return int(q) if q and q.isdigit() else default


async def get_audit(request):
    store = request.app[DASH].desk.store
    rows = store.audit_log(min(_int_query(request, "limit", 100), AUDIT_MAX))
    for r in rows:
        r["args"] = json.loads(r["args"])
    return web.json_response(rows)


def _round_no(request):
    desk = request.app[DASH].desk
    return _int_query(request, "round", desk.round["round"] if desk.round else 0)


async def get_results(request):
    """The results CSV as JSON rows (the page's table is what the CSV export holds); for
    each row the head judge's decision ({how, reason} or null), the verification as stored
    and whether its record came after the close (what the CSV's verified says in words);
    and the tables with no final result yet ([table, standing]: the export waits for
    them)."""
    round_no = _round_no(request)
    store = request.app[DASH].desk.store
    rows = list(csv.reader(io.StringIO(store.results_csv(round_no))))
    decided, verified, late = [], [], []
    for row in rows[1:]:
        tbl = int(row[0])
        d = store.decision(tbl, round_no)
        decided.append({"how": d["how"], "reason": d["reason"]} if d else None)
        verified.append((store.result(tbl, round_no) or {}).get("verified"))
        late.append(store.after_close(tbl, round_no))
    return web.json_response({"round": round_no, "columns": rows[0], "rows": rows[1:],
                              "decided": decided, "verified": verified, "after_close": late,
                              "missing": store.missing(round_no)})


# --- pages ------------------------------------------------------------------------------------

async def get_index(request):
    return web.FileResponse(os.path.join(WEB_DIR, "index.html"),
                            headers={"Cache-Control": "no-cache"})


async def get_sheet_css(request):
    return web.Response(text=SHEET_CSS, content_type="text/css")


def _sheet(events, tbl, round_no, event, names, carried=()):
    """The LP sheet (sheet_html's page body) of a record's events replayed, or None."""
    try:
        r = replayed(events, with_sheet=True)
    except RecordError:
        return None
    page = render_html(r.sheet, r.match.verdict(), title="table %d, round %d" % (tbl, round_no),
                       event=event, table=tbl, names=names, carried=carried)
    return page[page.index("<body>") + len("<body>"):page.rindex("</body>")]


def _dl(rows):
    """A definition list of (i18n key, English label, value HTML)."""
    return "<dl>%s</dl>" % "".join(
        '<dt data-i18n="%s">%s</dt><dd>%s</dd>' % row for row in rows)


def _sync_chart(hist):
    """An SVG line of sync error (ms) over desk time; empty without two entries."""
    if len(hist) < 2:
        return ""
    w, h = 600, 120
    t0, t1 = hist[0][0], hist[-1][0]
    top = max(20, max(e[2] or 0 for e in hist))
    pts = " ".join("%.1f,%.1f" % ((e[0] - t0) * w / max(1, t1 - t0),
                                   h - (e[2] or 0) * h / top) for e in hist)
    budget = h - 20 * h / top
    return ('<svg class="chart" viewBox="0 0 %d %d" role="img" aria-labelledby="sync-title">'
            '<line x1="0" x2="%d" y1="%.1f" y2="%.1f" class="budget"/>'
            '<polyline points="%s" class="err"/></svg>'
            '<p class="note"><span data-i18n="sync_chart">sync error</span> 0..%d ms, '
            '%s &ndash; %s</p>' % (w, h, w, budget, budget, pts, top, clock(t0), clock(t1)))


def _h(v):
    """A value as HTML text; a dash for none."""
    return "&ndash;" if v is None or v == "" else escape(str(v))


def _now(view):
    wins, lp = view["wins"], view["lp"]
    state = ('<span data-i18n="online">online</span>' if view["online"] else
             '<span data-i18n="offline">offline</span>')
    alerts = " ".join('<span class="alert" data-i18n="alert_%s">%s</span>'
                      % (escape(a.replace(" ", "_")), escape(a)) for a in view["alerts"])
    left = None if view["phase"] == "over" or view["remaining_ms"] is None \
        else clock(view["remaining_ms"])
    return ('<section id="now"><h2 data-i18n="now">Now</h2>'
            '<p class="phase" id="phase" data-phase="%s" data-result="%s" data-duel="%s">%s</p>'
            % (escape(view["phase"] or ""), escape(view["result"] or ""), _h(view["duel"]),
               _h(view["phase"])) + _dl([
                   ("link", "Link", "%s (%s)" % (_h(view["link"]), state)),
                   ("board", "Board", "%s %s" % (_h(view["board"]), _h(view["fw"]))),
                   ("battery", "Battery %", _h(view["battery"])),
                   ("flash_kb", "Free flash KB", _h(view["flash_kb"])),
                   ("rssi_dbm", "Wi-Fi dBm", _h(view["rssi_dbm"])),
                   ("reboots", "Reboots this round", _h(view["reboots"])),
                   ("score", "Score", "%s &ndash; %s" % (wins["A"], wins["B"]) if wins
                    else _h(None)),
                   ("lp", "LP", "%s / %s" % (lp["A"], lp["B"]) if lp else _h(None)),
                   ("remaining", "Time left", _h(left)),
                   ("alerts", "Alerts", alerts or _h(None))]) + "</section>")


def _result(res, stored, decided, versions):
    verified = res.get("verified") or "none"
    final = ('<span class="verified" data-i18n="v_%s">%s</span>: %s %d&ndash;%d'
             % (decided["how"], decided["how"], _h(decided["result"]), decided["wins_a"],
                decided["wins_b"])) if decided else None
    reported = ("%s %s&ndash;%s" % (_h(res["result"]), _h(res["wins_a"]), _h(res["wins_b"]))
                if res.get("result") else '<span data-i18n="none_yet">none yet</span>')
    return ('<section id="result"><h2 data-i18n="result">Result</h2>' + _dl(
        ([("head_judge_result", "Result by the head judge", final)] if final else []) + [
        ("reported", "Reported", reported),
        ("events_stored", "Record events", "%d / %s" % (stored, _h(res.get("total")))),
        ("verification", "Verification", '<span class="verified" data-i18n="v_%s">%s</span>'
         ' &middot; %s' % (escape(verified), escape(verified), _h(res.get("note")))),
        ("acked", "Acked events", _h(res.get("acked_events")))]) + _versions(versions)
        + "</section>")


def _versions(versions):
    # Every version of the result, oldest first: the table's reports, the head judge's.
    if not any(v["source"] == "judge" for v in versions):
        return ""
    out = ['<table id="versions"><caption data-i18n="versions">Versions of the result'
           '</caption><tr><th data-i18n="by">Who</th><th data-i18n="col_result">Result</th>'
           '<th data-i18n="pen_note">Note</th></tr>']
    for v in versions:
        if v["source"] == "table":
            who, note = '<span data-i18n="the_table">the table</span>', _h(None)
        else:
            who = "%s &middot; %s" % (_h(v["who"]), escape(time.strftime(
                "%H:%M", time.localtime(v["unix_ms"] / 1000))))
            note = '<span data-i18n="v_%s">%s</span> (%s): %s' % (
                v["how"], v["how"], escape(decisions.TAKEN[v["taken"]]), _h(v["reason"]))
        out.append('<tr data-source="%s"><td>%s</td><td>%s %d&ndash;%d</td><td>%s</td></tr>' % (
            v["source"], who, _h(v["result"]), v["wins_a"], v["wins_b"], note))
    out.append("</table>")
    return "".join(out)


def _penalties(pens):
    out = ['<section id="penalties"><h2 data-i18n="penalties">Penalties</h2>']
    if pens:
        out.append('<table><tr><th data-i18n="player">Player</th><th data-i18n="kind">Kind</th>'
                   '<th data-i18n="code">Code</th><th data-i18n="pen_note">Note</th></tr>')
        for p in pens:
            out.append('<tr><td>%s</td><td data-i18n="pen_%s">%s</td><td>%s</td><td>%s</td></tr>'
                       % (_h(p["p"]), _h(p["kind"]), _h(p["kind"]), _h(p["code"]), _pen_note(p)))
        out.append("</table>")
    else:
        out.append('<p data-i18n="no_penalties">No penalties in the verified record.</p>')
    out.append("</section>")
    return "".join(out)


def _pen_note(pen):
    # Given after the match, or carried into this one (store.penalties); the page's
    # language fills the words in (data-i18n-args: table.js).
    if pen["after_match"]:
        return '<span data-i18n="pen_after_match">after the match</span>'
    if pen["carried_from"] is not None:
        return ('<span data-i18n="pen_carried" data-i18n-args="%d">carried from round %d</span>'
                % (pen["carried_from"], pen["carried_from"]))
    return ""


def _sync(hist):
    out = ['<section id="sync"><h2 id="sync-title" data-i18n="sync_history">Sync history</h2>']
    if hist:
        out.append(_sync_chart(hist))
        out.append('<table><tr><th data-i18n="desk_time">Desk time</th>'
                   '<th data-i18n="sync_age_s">Sync age (s)</th>'
                   '<th data-i18n="sync_err">Error (ms)</th></tr>')
        for t, age, err in hist[-SYNC_SHOWN:][::-1]:
            out.append('<tr><td>%s</td><td class="n">%d</td><td class="n">%s</td></tr>' % (
                clock(t), age // 1000, _h(err)))
        out.append("</table>")
    else:
        out.append('<p data-i18n="no_sync">No sync reported since the desk started.</p>')
    out.append("</section>")
    return "".join(out)


def table_page(svc, tbl, round_no):
    """The whole HTML of a table's page, or None for a table the desk never heard."""
    desk = svc.desk
    view = desk.table_view(tbl)
    if view is None:
        return None
    view = svc.watch.view(view, desk.now_ms(), desk)
    store = desk.store
    names = store.pairings(round_no).get(tbl)
    events = store.events(tbl, round_no)
    sheet = _sheet(events, tbl, round_no, desk.event["name"], names,
                   store.carries(round_no, tbl))
    if sheet is not None:
        sheet += decisions.html(store.decision(tbl, round_no)) + \
            record_flags.html(store.flags(tbl, round_no))
    out = ['<!doctype html><html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           "<title>Table %d, round %d</title>" % (tbl, round_no),
           '<link rel="icon" href="data:,">',
           '<link rel="stylesheet" href="/static/sheet.css">',
           '<link rel="stylesheet" href="/static/phases.css">',
           '<link rel="stylesheet" href="/static/table.css">',
           '<script src="/static/i18n.js" defer></script>',
           '<script src="/static/table.js" defer></script></head><body class="table-page">',
           '<nav class="noprint"><a href="/" data-i18n="back_room">Room</a> '
           '<label for="lang" data-i18n="language">Language</label> '
           '<select id="lang"></select> '
           '<button type="button" id="print" data-i18n="print">Print</button></nav>',
           '<header><h1><span data-i18n="table">Table</span> %d &middot; '
           '<span data-i18n="round">Round</span> %d</h1>' % (tbl, round_no)]
    if names:
        out.append('<p class="players">A: %s &middot; B: %s</p>' % (_h(names[0]), _h(names[1])))
    out += ["</header>", _now(view),
            _result(store.result(tbl, round_no) or {}, len(events),
                    store.decision(tbl, round_no), store.versions(tbl, round_no)),
            _penalties(store.penalties(tbl, round_no)), _sync(svc.watch.sync_history(tbl)),
            '<section id="sheet" class="sheet"><h2 data-i18n="lp_sheet">LP sheet</h2>',
            sheet or '<p data-i18n="no_record">No record stored yet: a table sends its record '
                     'as the match is played.</p>',
            "</section></body></html>\n"]
    return "".join(out)


async def get_table_page(request):
    svc = request.app[DASH]
    tbl = int(request.match_info["n"])
    page = table_page(svc, tbl, _round_no(request))
    if page is None:
        raise web.HTTPNotFound(text="no such table")
    return web.Response(text=page, content_type="text/html")


def setup(app, svc):
    """Add the dashboard's routes and guard to api.py's app. `svc`: the api.Service (desk,
    watch, token, speed)."""
    app[DASH] = svc
    app.middlewares.append(guard)
    app.on_response_prepare.append(_headers)
    app.router.add_get("/", get_index)
    app.router.add_get("/static/sheet.css", get_sheet_css)
    app.router.add_static("/static/", WEB_DIR)
    app.router.add_get("/table/{n:\\d+}", get_table_page)
    app.router.add_get("/login", get_login)
    app.router.add_post("/login", post_login)
    app.router.add_get("/api/room", get_room)
    app.router.add_get("/api/audit", get_audit)
    app.router.add_get("/api/results", get_results)
