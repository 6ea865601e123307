"""Waiting in asyncio tests: until(cond) polls a condition, failing after a timeout."""
import asyncio
import time


async def until(cond, timeout_s=15.0, what="condition"):
    end = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("timed out waiting for " + what)
        await asyncio.sleep(0.02)
