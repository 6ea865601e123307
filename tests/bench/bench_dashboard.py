# The dashboard bench group (the room page's budgets): the real desk (duelclock_desk.api.Service in
# this process: link, Desk, SQLite store, HTTP API and the dashboard) with TABLES fake tables
# live in another process (dash_tables.py), and the room page in headless Chromium.
#
#   dashboard_update_p95_ms  (and _p50_ms) from a table's state change to its tile updated on
#                            screen. Each sample: the bench reads the page's clock
#                            (performance.now(), via Playwright), then has one table play an
#                            LP change (its next state goes out within 5 ms); the page's
#                            MutationObserver sees that tile's LP text change and stamps the
#                            next animation frame after it. Latency = frame stamp - the first
#                            reading, one clock for both ends. It holds: the reply of that
#                            first reading (about a millisecond), the table's tick, TCP, the
#                            desk (decode, SQLite commit with fsync, the event stream), the
#                            browser (event, tile drawn, next frame). All TABLES tables send
#                            their periodic states (every 5 s each) meanwhile; samples come
#                            SAMPLE_EVERY_S apart, each on another table.
#   dashboard_page_bytes     index.html and every file it loads from /static/ (served as is,
#                            uncompressed: what a tablet on the venue Wi-Fi downloads once).
import asyncio
import os
import re
import subprocess
import sys
import time

from common import HERE, ROOT, BenchError, metric
from duelclock_desk import dashboard
from duelclock_desk.api import Service

TABLES = 200
UPDATE_TARGET_MS = 500
SAMPLE_EVERY_S = 0.1
SAMPLES_PER_REPEAT = 30
MIN_SAMPLES = 60
KEY = bytes(range(32))

OBSERVER = """() => {
  window.__marks = [];
  new MutationObserver((muts) => {
    const dom = performance.now();
    for (const m of muts) {
      const el = m.target;
      if (!el.classList || !el.classList.contains('t-lp')) continue;
      const tbl = Number(el.closest('.tile').dataset.table), text = el.textContent;
      requestAnimationFrame(() => window.__marks.push([tbl, text, dom, performance.now()]));
    }
  }).observe(document.getElementById('tiles'), {subtree: true, childList: true});
}"""


def page_bytes():
    with open(os.path.join(dashboard.WEB_DIR, "index.html"), "rb") as f:
        index = f.read()
    files = re.findall(rb'(?:src|href)="/static/([^"]+)"', index)
    return len(index) + sum(os.path.getsize(os.path.join(dashboard.WEB_DIR, f.decode()))
                            for f in files)


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


class Tables:
    """dash_tables.py: one command, one answer."""

    def __init__(self, b):
        self.proc = b.procs.start([sys.executable, os.path.join(HERE, "dash_tables.py"),
                                   KEY.hex(), str(TABLES)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, cwd=ROOT)
        first = self.proc.stdout.readline().split()
        if first[:1] != ["ready"]:
            raise BenchError("dash_tables.py did not start")
        self.url = first[1]

    def ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        if not answer.startswith("ok"):
            raise BenchError("dash_tables.py: %s: %s" % (line, answer or "no answer"))
        return answer


async def until(cond, what, timeout_s=60.0):
    end = time.monotonic() + timeout_s
    while not await cond():
        if time.monotonic() > end:
            raise BenchError("dashboard bench: timed out waiting for " + what)
        await asyncio.sleep(0.1)


async def measure(b, samples):
    from playwright.async_api import async_playwright
    from tests.host.browser import launch

    tables = Tables(b)
    svc = Service(b.path("dash.sqlite"), KEY, event="bench", links=[tables.url], broker="off",
                  http_port=0)
    await svc.start()
    try:
        async with async_playwright() as pw:
            browser = await launch(pw)
            page = await browser.new_page(viewport={"width": 1600, "height": 1000})
            await page.goto("http://127.0.0.1:%d/" % svc.http_port)
            await until(lambda: _count(page, ".tile", TABLES), "%d tiles" % TABLES)
            svc.desk.run("bench", "start_round", {"round": 1})
            await until(lambda: _async(all(tables.ask("round %d" % t) == "ok 1"
                                           for t in range(1, TABLES + 1))), "the round")
            for t in range(1, TABLES + 1):
                tables.ask('play %d [{"t": 500, "ev": "duel_start", "first": "A"}]' % t)
            await until(lambda: _count(page, ".tile.ph-normal", TABLES), "every duel on")
            await page.evaluate(OBSERVER)

            sent = []                                  # (table, LP text expected, t0)
            lp = {}
            for i in range(samples):
                tbl = 1 + (i * 37) % TABLES            # another table each time
                lp[tbl] = lp.get(tbl, 8000) - 1
                t0 = await page.evaluate("performance.now()")
                await asyncio.to_thread(tables.ask, 'play %d [{"t": %d, "ev": "lp", "A": -1}]'
                                        % (tbl, 1000 + i))
                sent.append((tbl, "LP %d · 8000" % lp[tbl], t0))
                await asyncio.sleep(SAMPLE_EVERY_S)
            await asyncio.sleep(1.0)
            marks = await page.evaluate("window.__marks")
            await browser.close()
    finally:
        await svc.stop()
        b.procs.end(tables.proc)
    seen = {}
    for tbl, text, _dom, frame in marks:
        seen.setdefault((tbl, text), frame)
    missing = [(tbl, text) for tbl, text, _ in sent if (tbl, text) not in seen]
    if missing:
        raise BenchError("dashboard bench: %d changes never reached a tile, first %r"
                         % (len(missing), missing[0]))
    return [seen[(tbl, text)] - t0 for tbl, text, t0 in sent]


async def _count(page, sel, n):
    return await page.locator(sel).count() == n


async def _async(value):
    return value


def bench_dashboard(b):
    samples = max(MIN_SAMPLES, SAMPLES_PER_REPEAT * b.repeat)
    lat = asyncio.run(measure(b, samples))
    note = ("%d LP changes on %d live tables, %.0f ms apart: table state change to the tile's "
            "next frame in Chromium" % (samples, TABLES, SAMPLE_EVERY_S * 1000))
    yield metric("dashboard_update_p95_ms", round(percentile(lat, 95), 1), "ms", UPDATE_TARGET_MS,
                 note=note)
    yield metric("dashboard_update_p50_ms", round(percentile(lat, 50), 1), "ms", note=note)
    yield metric("dashboard_page_bytes", page_bytes(), "bytes",
                 note="index.html and the CSS and JS it loads, uncompressed")
