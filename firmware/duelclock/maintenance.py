# The maintenance screen: a power-on with the board's MAINTENANCE_KEYS held shows a fresh
# challenge, and the desk's one-time code for it (`duelclock unlock`) opens the REPL
# (docs/protocol.md, "Threat model"). Imported only then: a table in play never loads it.
import time

from duelclock.core.ui import Unlock
from micropython import const

from .app import KEY_SCAN_MS

_MAINTENANCE_MS = const(120000)  # the desk's code must come this soon after power-on


def maintenance(table, renderer, present, tbl_key, draw):
    """Run the maintenance screen on app.Table `table`: a fresh challenge (from `draw()`,
    random bytes), True once the desk's code for it is in (the caller leaves the USB port
    to the REPL); False on back or _MAINTENANCE_MS without it (the table plays). The caller
    disarmed the keys (core/keys.py): the held ones, let go, never make a try. Wrong codes
    count towards the PIN lockout, kept on flash.
    Each challenge also goes out on the USB port as a line: it is no secret (the screen
    shows it), and it is all a desk next to the table needs."""
    opened = []
    table.power_on = None           # the challenge, not covered by the power-on notice
    frame = Unlock(tbl_key, draw, lambda ui: opened.append(True))
    ui = table.ui
    ui.push(frame)
    told = None
    was_ms = ui.now_ms
    end = table.local_ms() + _MAINTENANCE_MS
    while ui.stack[-1] is frame and table.local_ms() < end:
        if frame.challenge != told:
            told = frame.challenge
            print("maintenance: table %d challenge %s" % (ui.table_no, told))
        now = table.local_ms()
        ui.at(now)
        ui.now_ms = now             # board time: messages expire; nothing is stamped here
        for intent in table.board.keys.scan(now):
            ui.last_key_ms = now
            frame.key(ui, intent)   # not Ui.key: it would run a restored match to now
            table.session.persist()
        _draw(table, renderer, present)
        time.sleep(KEY_SCAN_MS / 1000)      # CircuitPython has no sleep_ms
    if ui.match is not None:
        ui.now_ms = was_ms          # the match's desk time again
    ui.home()
    if opened:
        ui.say(ui.text("repl_open"))
        _draw(table, renderer, present)
    return bool(opened)


def _draw(table, renderer, present):
    # A frame at once, outside the screen task (which runs only once the table plays).
    windows = table.frame(renderer)[1]
    for w in windows:
        renderer.paint(w)
    if windows:
        present(windows)
