# Runs under MicroPython on boards/SIM: the real table (duelclock.app.main, its config from
# DUELCLOCK_SIM_CONFIG) with a watch on its loop. Each second it prints one JSON line:
#   t       the board's local ms
#   frames  Table.frame calls since the last line (the screen task looks at the screen at
#           least once a second: the clock's next second)
#   gap     the longest between two of them since the last line, ms
#   hold    the longest one MqttLink.poll() or send() took since the last line, ms
#   up      the link's up
# The app runs as on a board: an exception out of its loop ends the process (on SIM
# main() re-raises where a board resets), which the test sees.
import asyncio
import json

import board
from duelclock import app, link

seen = {"frames": 0, "last": None, "gap": 0, "hold": 0, "link": None}
now = board.local_ms


def _watch_frame(frame):
    def watched(self, renderer):
        t = now()
        if seen["last"] is not None:
            seen["gap"] = max(seen["gap"], t - seen["last"])
        seen["last"] = t
        seen["frames"] += 1
        return frame(self, renderer)
    return watched


def _timed(call):
    def timed(self, *args):
        seen["link"] = self
        t = now()
        try:
            return call(self, *args)
        finally:
            seen["hold"] = max(seen["hold"], now() - t)
    return timed


app.Table.frame = _watch_frame(app.Table.frame)
link.MqttLink.poll = _timed(link.MqttLink.poll)
link.MqttLink.send = _timed(link.MqttLink.send)


async def report():
    while True:
        await asyncio.sleep_ms(1000)
        lk = seen["link"]
        print(json.dumps({"t": now(), "frames": seen["frames"], "gap": seen["gap"],
                          "hold": seen["hold"], "up": bool(lk is not None and lk.up)}))
        seen["frames"] = seen["gap"] = seen["hold"] = 0


asyncio.create_task(report())
app.main(board)
