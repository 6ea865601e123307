# The board's self-test: what a judge checks before a table plays. `duelclock provision` runs
# it over the REPL once the files are checked; the judge menu's self-test (core/screens.py
# SelfTest) runs checks() after a judge pressed every key and looked at the colours. run()
# gives a list of (check, ok, detail):
#   keys     no key held (a held key at rest is stuck or shorted)
#   screen   a whole frame white, then black, pushed to the glass without an error
#            (framebuf boards; a displayio one is drawn by the app)
#   wifi     with Wi-Fi in the config: associated within _WIFI_S, and its signal in dBm
#   battery  at least _LOW_PCT % where the board measures it
#   flash    at least _MIN_FREE_KB free for the journal
# It takes the board's wiring as given (board.py) and draws over whatever was on screen.
from micropython import const

from .journal import free_bytes

_WIFI_S = const(15)
_LOW_PCT = const(15)               # the desk's low-battery alert (views.LOW_BATTERY)
_MIN_FREE_KB = const(96)           # two long matches (journal.py reserves 48 KB for one)


def run(board, cfg, root):
    out = []
    held = board.keys.pressed()
    out.append(("keys", not held, "held: " + " ".join(held) if held else "none held"))
    if board.renderer_kind == "fb":
        try:
            d = board.display
            for colour in (0xFFFF, 0):
                d.fb.fill(colour)
                d.show()
            out.append(("screen", True, "%dx%d" % (board.WIDTH, board.HEIGHT)))
        except Exception as e:   # a bus or driver fault: said, and the rest still checked
            out.append(("screen", False, repr(e)))
    else:                        # displayio draws when the app runs: nothing to push here
        out.append(("screen", True, "displayio, not drawn"))
    return out + checks(board, cfg, root)


def checks(board, cfg, root):
    """The checks with no key or screen in them (the judge menu's self-test shows them after
    asking for each key and showing its colour pattern): Wi-Fi, battery, flash."""
    out = []
    wifi = cfg.get("wifi")
    if wifi and board.HAS_WIFI:
        up = board.connect_wifi(wifi["ssid"], wifi["pass"], _WIFI_S)
        rssi = getattr(board, "wifi_rssi", None)
        dbm = rssi() if rssi and up else None
        out.append(("wifi", bool(up), wifi["ssid"] + ("" if dbm is None else " %d dBm" % dbm)
                    if up else "no association with " + wifi["ssid"]))
    else:
        out.append(("wifi", True, "not configured"))
    pct = board.battery_pct() if board.battery_pct else None
    out.append(("battery", pct is None or pct >= _LOW_PCT,
                "not measured" if pct is None else "%d %%" % pct))
    free_kb = free_bytes(root) >> 10
    out.append(("flash", free_kb >= _MIN_FREE_KB, "%d KB free" % free_kb))
    return out
