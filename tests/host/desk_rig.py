"""Tests that run a real desk (api.Service) in asyncio against SessionTables: until(cond)
polls a condition; run_desk() serves the tables on a local socket, runs a desk linked to
them and the test's scenario, and tidies up whatever happened."""
import asyncio
import time

from duelclock_desk.api import Service
from tests.host.tables import StreamTables


async def until(cond, timeout_s=15.0, what="condition"):
    end = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("timed out waiting for " + what)
        await asyncio.sleep(0.02)


def run_desk(tmp_path, key, tables, scenario, **service_kw):
    """`tables` served on 127.0.0.1 (StreamTables), a desk Service on them (store
    tmp_path/d.sqlite, no broker, any HTTP port, and `service_kw`): `await scenario(svc,
    server)` between the desk's start and stop; the socket closed after."""
    server = StreamTables.serve_tcp(tables)
    svc = Service(str(tmp_path / "d.sqlite"), key, links=[server.url], broker="off",
                  http_port=0, **service_kw)

    async def run():
        await svc.start()
        try:
            await scenario(svc, server)
        finally:
            await svc.stop()

    try:
        asyncio.run(run())
    finally:
        server.stop()
