"""What the CLI's desk commands share: argument types, the desk's HTTP API, the status
table. Commands that need the links ask the running desk; read-only ones open the store."""
import argparse
import csv
import getpass
import json
import os
import urllib.error
import urllib.request

DEFAULT_DESK = os.environ.get("DUELCLOCK_DESK", "http://127.0.0.1:8765")
DEFAULT_STORE = "duelclock-desk.sqlite"
UNITS_S = {"s": 1, "m": 60, "h": 3600}


class CliError(Exception):
    pass


# --- argument types (argparse type= functions) -----------------------------------------------

def tables(text):
    """"1-40", "1-10,17,20-25" -> sorted list of ints; "all" -> None."""
    if text == "all":
        return None
    out = set()
    try:
        for part in text.split(","):
            lo, _, hi = part.partition("-")
            out.update(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        raise argparse.ArgumentTypeError("tables are like 1-40 or 1-10,17,20-25: %r" % text)
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError("tables are numbered from 1: %r" % text)
    return sorted(out)


def duration_s(text):
    """"45m", "90s", "1h", or plain minutes "45" -> seconds."""
    unit = UNITS_S.get(text[-1:], None)
    number = text[:-1] if unit else text
    try:
        value = float(number)
    except ValueError:
        raise argparse.ArgumentTypeError("a duration is like 45m, 90s or 1h: %r" % text)
    return int(round(value * (unit or 60)))


def wins(text):
    """"2-1" -> (2, 1): duel wins of A and B."""
    a, _, b = text.partition("-")
    if not (a.isdigit() and b.isdigit()):
        raise argparse.ArgumentTypeError("wins are A-B, as 2-1: %r" % text)
    return int(a), int(b)


def pairings(path):
    """A CSV file of table,player_a,player_b (a header line is skipped) -> [[t, a, b]]."""
    out = []
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            for n, row in enumerate(csv.reader(f), 1):
                if not row or (n == 1 and not row[0].strip().isdigit()):
                    continue
                if len(row) != 3 or not row[0].strip().isdigit():
                    raise argparse.ArgumentTypeError(
                        "%s:%d: expected table,player_a,player_b" % (path, n))
                out.append([int(row[0]), row[1].strip(), row[2].strip()])
    except OSError as e:
        raise argparse.ArgumentTypeError(str(e))
    return out


def add_desk_arg(p):
    p.add_argument("--desk", default=DEFAULT_DESK, metavar="URL",
                   help="the running desk's API (default %(default)s, or $DUELCLOCK_DESK)")


def add_store_arg(p):
    p.add_argument("--store", default=DEFAULT_STORE, metavar="PATH",
                   help="the desk's SQLite store (default ./%(default)s)")


# --- the desk's API -------------------------------------------------------------------------

def api(a, path, body=None):
    """GET (body None) or POST `body` to the desk; the decoded JSON (or text for CSV)."""
    data = None
    if body is not None:
        data = json.dumps(dict(body, who=getpass.getuser())).encode()
    req = urllib.request.Request(a.desk.rstrip("/") + path, data=data,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            text = r.read().decode()
            return json.loads(text) if r.headers.get_content_type() == "application/json" else text
    except urllib.error.HTTPError as e:
        try:
            why = json.loads(e.read()).get("error")
        except ValueError:
            why = e.reason
        raise CliError("desk refused: %s" % why)
    except urllib.error.URLError as e:
        raise CliError("no desk at %s (%s): is `duelclock desk` running?" % (a.desk, e.reason))


# --- status ---------------------------------------------------------------------------------

def clock(ms):
    if ms is None:
        return "-"
    sign = "-" if ms < 0 else ""
    s = abs(ms) // 1000
    return "%s%d:%02d" % (sign, s // 60, s % 60)


def _sync(v):
    if v["sync_age_ms"] is None:
        return "never"
    return "%ds/%sms" % (v["sync_age_ms"] // 1000, v["sync_err_ms"])


def status_lines(st):
    r = st["round"]
    head = "event %s  boot %d  " % (st["event"], st["boot"])
    head += ("round %d (%s) started at %s" % (r["round"], r["kind"], clock(r["start_ms"]))
             if r else "no round")
    if r and r.get("closed_ms") is not None:
        head += ", closed at %s" % clock(r["closed_ms"])
    out = [head, "unfinished: %d  drops: %s" % (
        len(st["unfinished"]), " ".join("%s=%d" % kv for kv in st["drops"].items() if kv[1])
        or "none")]
    out.append("%5s %-24s %-10s %-12s %5s %-11s %7s %-10s  %s" % (
        "table", "link", "sync", "phase", "score", "LP", "left", "verified", "alerts"))
    for v in st["tables"]:
        wins, lp = v["wins"], v["lp"]
        out.append("%5d %-24s %-10s %-12s %5s %-11s %7s %-10s  %s" % (
            v["table"], (v["link"] or "-")[:24], _sync(v), v["phase"] or "-",
            "%d-%d" % (wins["A"], wins["B"]) if wins else "-",
            "%d/%d" % (lp["A"], lp["B"]) if lp else "-",
            "paused" if v["paused"] else clock(v["remaining_ms"]),
            v["verified"] or "-", " ".join(v["alerts"]) or "-"))
    # Each table's health, after a blank line: what its hello said, reboots this round.
    out.append("")
    out.append("%5s %-14s %-9s %7s %8s %10s %7s" % (
        "table", "board", "firmware", "battery", "Wi-Fi", "free flash", "reboots"))
    for v in st["tables"]:
        out.append("%5d %-14s %-9s %7s %8s %10s %7d" % (
            v["table"], (v["board"] or "-")[:14], (v["fw"] or "-")[:9],
            "-" if v["battery"] is None else "%d%%" % v["battery"],
            "-" if v["rssi_dbm"] is None else "%d dBm" % v["rssi_dbm"],
            "-" if v["flash_kb"] is None else "%d KB" % v["flash_kb"], v["reboots"]))
    # Carried penalties still to settle, and those sent into this round's matches.
    for c in st.get("carries", ()):
        if c["state"] in ("confirm", "ready", "unnamed") or (r and c["round"] == r["round"]):
            out.append(carry_line(c))
    return out


CARRY_STATES = {
    "confirm": "awaits the head judge: duelclock carry %(id)d --confirm (or --decline)",
    "ready": "goes with the next round started that names the player",
    "sent": "into round %(round)s table %(tbl)s as %(p)s",
    "declined": "declined by the head judge",
    "unnamed": "no pairing names the player: give it at the next table by hand"}


def carry_line(c):
    """One carried penalty as status shows it."""
    return "carry %d: %s %s %s (round %d table %d, after the match, %s): %s" % (
        c["id"], c["player"] or "-", c["kind"], c["code"], c["from_round"], c["from_tbl"],
        c["rules"], CARRY_STATES[c["state"]] % c)
