"""At power-on the real app (boards/SIM, MicroPython unix port) shows which table the board
is, its firmware and its link for a few seconds, over whatever the screen shows: what a judge
setting up a room reads at a glance. Watched through the app's own Ui, frame by frame."""
import json
import os
import subprocess

import pytest

from duelclock import VERSION
from duelclock_desk.deploy import table_secret
from simulator import build

SPEED = 10                      # board ms per real ms: the notice's seconds in a fraction
WATCH = """
import json
import board
from duelclock import app
seen = []
frame = app.Table.frame


def watched(self, renderer):
    out = frame(self, renderer)
    ui = self.ui
    seen.append((self.local_ms(), ui.current_message(ui.now_ms)))
    if seen[-1][0] > 8000:
        with open("seen.json", "w") as f:
            json.dump(seen, f)
        raise SystemExit(0)
    return out


app.Table.frame = watched
app.main(board)
"""


@pytest.mark.parametrize("link,name", [("serial", "USB"), ("mqtt", "Wi-Fi")])
def test_the_table_number_firmware_and_link_are_shown_for_a_few_seconds(tmp_path, link, name):
    cfg = {"table": 12, "key": table_secret("00" * 32, 12), "lang": "en", "link": link,
           "mqtt": {"host": "127.0.0.1", "port": 9, "keepalive_s": 30}}   # nobody there
    (tmp_path / "duelclock.json.in").write_text(json.dumps(cfg))
    env = dict(os.environ, MICROPYPATH=build.table_path(), DUELCLOCK_SIM_FS=str(tmp_path),
               DUELCLOCK_SIM_CONFIG=str(tmp_path / "duelclock.json.in"),
               DUELCLOCK_SIM_SPEED=str(SPEED))
    r = subprocess.run([build.UPY, "-X", "heapsize=512k", "-c", WATCH], stdin=subprocess.PIPE,
                       capture_output=True, cwd=str(tmp_path), env=env, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    seen = json.loads((tmp_path / "seen.json").read_text())
    said = "Table 12  v%s  %s" % (VERSION, name)
    assert seen[0][1] == said, seen
    shown = [t for t, msg in seen if msg == said]
    assert max(shown) < 4000 + 1000 <= seen[-1][0], seen    # a few seconds, then gone
    assert all(msg is None for t, msg in seen if t >= 4000 + 1000), seen
