"""What the judges see: a table's row in `status` (alerts and all), the whole status, one
table's detail. A head judge's decision (store.decision) is a table's result and verified
("entered", "overridden"), and silences the alerts it settles (mismatch, record flags).
Read-only over the desk: its store, running round, round commands (paused, in the round)
and speed; nothing here stores or sends."""
import json

from duelclock import VERSION as FIRMWARE
from duelclock_desk.store import FINAL

SILENT_MS = 15000          # a table heard nothing from this long is shown "silent"
SYNC_ERR_ALERT_MS = 20     # the Wi-Fi budget (docs/protocol.md)
SYNC_AGE_ALERT_MS = 120000
LOW_BATTERY = 15
WEAK_RSSI_DBM = -75        # below this the venue's Wi-Fi drops messages ("weak signal")
# A table's state counts the desk lines it dropped since boot (forged, replayed, garbled):
# a link joined mid-line costs one; this many is someone at its port ("junk on port").
JUNK_ALERT_DROPS = 3
FROZEN_PHASES = ("over",)  # the round clock shown does not run down in these


def view(desk, t, now):
    """Status row of table row `t` (the store's) at desk time `now`."""
    state = json.loads(t["state"]) if t["state"] else {}
    age = now - t["state_ms"] if t["state_ms"] is not None else 0
    rnd = desk.round
    running = rnd is not None and rnd["state"] == "running"
    paused = desk.paused(t["tbl"])
    remaining = state.get("remaining_ms")
    if remaining is not None and state.get("phase") not in FROZEN_PHASES and not paused:
        remaining -= age
    res = desk.store.result(t["tbl"], rnd["round"]) if rnd else None
    decided = desk.store.decision(t["tbl"], rnd["round"]) if rnd else None
    alerts = []
    if not t["online"]:
        alerts.append("offline")
    if t["last_seen_ms"] is not None and now - t["last_seen_ms"] > SILENT_MS:
        alerts.append("silent")
    # A table states its sync age and error in desk-rate ms; they are shown and judged in
    # real ms, so a simulation at 40x does not multiply its scheduling delays by 40.
    sync_age = None if t["sync_age_ms"] is None else int((t["sync_age_ms"] + age) / desk.speed)
    sync_err = None if t["sync_err_ms"] is None else int(t["sync_err_ms"] / desk.speed + 0.5)
    if (sync_err or 0) > SYNC_ERR_ALERT_MS or (sync_age or 0) > SYNC_AGE_ALERT_MS:
        alerts.append("sync")
    if running and state.get("round", 0) < rnd["round"] and desk.in_round(t["tbl"]):
        alerts.append("no round")
    if res and res["verified"] == "mismatch" and not decided:
        alerts.append("mismatch")
    kinds = [f[1] for f in desk.store.flags(t["tbl"], rnd["round"])] if rnd else ()
    if "changed" in kinds and not decided:
        alerts.append("record changed")
    if "late" in kinds and not decided:
        alerts.append("late entry")
    if "after_close" in kinds:
        alerts.append("after close")
    if state.get("judge"):
        alerts.append("judge")
    if state.get("locked"):
        alerts.append("pin locked")
    if state.get("journal_full"):
        alerts.append("journal full")
    if state.get("drops", 0) >= JUNK_ALERT_DROPS:
        alerts.append("junk on port")
    if t["battery"] is not None and t["battery"] < LOW_BATTERY:
        alerts.append("battery")
    if t["rssi_dbm"] is not None and t["rssi_dbm"] < WEAK_RSSI_DBM:
        alerts.append("weak signal")
    if t["fw"] is not None and t["fw"] != FIRMWARE:
        alerts.append("firmware")             # not what this desk ships
    return {"table": t["tbl"], "link": t["link"], "online": bool(t["online"]),
            "board": t["board"], "fw": t["fw"], "battery": t["battery"],
            "flash_kb": t["flash_kb"], "rssi_dbm": t["rssi_dbm"],
            "reboots": t["reboots"] if running and t["reboots_round"] == rnd["round"] else 0,
            "seen_ago_ms": None if t["last_seen_ms"] is None else now - t["last_seen_ms"],
            "sync_age_ms": sync_age, "sync_err_ms": sync_err, "round": state.get("round"),
            "phase": state.get("phase"), "duel": state.get("duel"), "turn": state.get("turn"),
            "wins": state.get("wins"), "lp": state.get("lp"), "remaining_ms": remaining,
            "paused": paused,
            "result": decided["result"] if decided else res["result"] if res else None,
            "verified": decided["how"] if decided else res["verified"] if res else None,
            "recorded": res["total"] if res else 0, "alerts": alerts}


def status(desk):
    """The event, its round, the tables (each its view), links, drops and carries."""
    now = desk.now_ms()
    tables = [view(desk, t, now) for t in desk.store.tables()]
    r = dict(desk.round) if desk.round else None
    unfinished = [v["table"] for v in tables
                  if r and (r["tables"] is None or v["table"] in r["tables"])
                  and v["verified"] not in FINAL]
    return {"event": desk.event["name"], "boot": desk.event["boot"], "desk_ms": now,
            "round": r, "unfinished": unfinished, "drops": desk.drops,
            "carries": desk.store.carries(),
            "links": [dict(l.info(), drops=desk.link_drops.get(l.url)) for l in desk.links],
            "tables": tables}


def table_detail(desk, tbl):
    """One table's view with its state, result, stored events, penalties and names; None
    for a table never heard from."""
    t = desk.store.table(tbl)
    if t is None:
        return None
    out = view(desk, t, desk.now_ms())
    round_no = desk.round["round"] if desk.round else 0
    res = desk.store.result(tbl, round_no)
    if res and res["verdict"]:
        res["verdict"] = json.loads(res["verdict"])
    decided = desk.store.decision(tbl, round_no)
    out.update(state=json.loads(t["state"]) if t["state"] else None, result_detail=res,
               decision=decided, versions=desk.store.versions(tbl, round_no),
               events_stored=desk.store.event_count(tbl, round_no),
               penalties=desk.store.penalties(tbl, round_no),
               names=desk.store.pairings(round_no).get(tbl))
    return out
