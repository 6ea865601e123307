"""The `duelclock` command. Like mpremote: one table maps each command to its handler
and to the function that declares its arguments; `main` does nothing else."""
import argparse
import binascii
import json
import os
import re
import sys

from duelclock import replay as _replay
from duelclock_desk import client


def _args_replay(p):
    p.add_argument("file", help="match record (JSON Lines, docs/record.md)")


def do_replay(a):
    return _replay.main([a.file])


def _args_sheet(p):
    p.add_argument("file", nargs="?", help="match record (JSON Lines)")
    p.add_argument("--html", metavar="OUT", help="write a printable HTML sheet to OUT")
    p.add_argument("--table", type=int, help="instead of FILE: table N's record in the store")
    p.add_argument("--round", type=int, help="with --table: that round (default: the latest)")
    client.add_store_arg(p)


def do_sheet(a):
    if (a.file is None) == (a.table is None):
        raise client.CliError("sheet takes a FILE or --table N")
    if a.table is None:
        from duelclock_desk import sheet_cmd
        return sheet_cmd.run(a.file, a.html)
    from duelclock.core.replay import RecordError
    from duelclock_desk import record_flags
    from duelclock_desk.sheet_text import render_text
    from duelclock_desk.sheet_html import render_html
    from duelclock_desk.verification import replayed
    from duelclock_desk import decisions
    store = _store(a)
    round_no = a.round or (store.current_round() or {}).get("round", 0)
    decided = store.decision(a.table, round_no)
    try:
        r = replayed(store.events(a.table, round_no), with_sheet=True)
    except RecordError as e:
        if decided is None:
            raise client.CliError("no record of table %d round %d in %s (%s)"
                                  % (a.table, round_no, a.store, e))
        r = None        # a dead table's result typed in: the decision is the whole sheet
    who = {"event": store.event()["name"], "table": a.table,
           "names": store.pairings(round_no).get(a.table),
           "carried": store.carries(round_no, a.table)}
    flags = store.flags(a.table, round_no)
    if a.html:
        tail = decisions.html(decided) + record_flags.html(flags)
        if r is None:
            page = "<!doctype html><html><head><meta charset=\"utf-8\"><title>table %d, " \
                   "round %d</title></head><body><h1>table %d, round %d</h1><p>No record " \
                   "stored.</p></body></html>\n" % (a.table, round_no, a.table, round_no)
        else:
            page = render_html(r.sheet, r.match.verdict(),
                               title="table %d, round %d" % (a.table, round_no), **who)
        with open(a.html, "w", encoding="utf-8") as f:
            f.write(page.replace("</body>", tail + "</body>"))
        print("wrote", a.html)
    else:
        head = render_text(r.sheet, **who) if r else \
            "table %d, round %d: no record stored\n" % (a.table, round_no)
        sys.stdout.write(head + "".join(l + "\n" for l in decisions.lines(decided)
                                        + record_flags.lines(flags)))


def _store(a):
    from duelclock_desk.store import Store
    if not os.path.exists(a.store):
        raise client.CliError("no store at %s (--store PATH)" % a.store)
    return Store(a.store)


# --- the desk service and its commands -------------------------------------------------------

def _args_desk(p):
    p.add_argument("--link", action="append", default=[], metavar="URL",
                   help="a way to tables: /dev/ttyACM0, socket://HOST:PORT, mqtt://HOST:PORT, "
                        "mqtts://HOST:8883 (repeat for many)")
    p.add_argument("--broker", default="auto", metavar="URL",
                   help="mqtt[s]://HOST:PORT: the venue's broker; auto (default): start "
                        "mosquitto here; off: no Wi-Fi tables")
    p.add_argument("--ca", metavar="FILE",
                   help="the CA an mqtts:// broker's certificate chains to (default: the "
                        "system's CAs; with --lan --tls-cert: the CA the tables trust)")
    p.add_argument("--user", help="the desk's login on an mqtt[s]:// broker")
    p.add_argument("--password-file", metavar="FILE", help="its password (first line)")
    client.add_store_arg(p)
    p.add_argument("--key", required=True, metavar="FILE", help="the event key (keygen)")
    p.add_argument("--http-port", type=int, default=8765, help="local API port (default 8765)")
    p.add_argument("--event", metavar="NAME", help="event id in MQTT topics (first start only)")
    p.add_argument("--lan", action="store_true",
                   help="the dashboard and the broker listen on every interface; the broker "
                        "with a password (made once, in STORE.venue/tables.json)")
    p.add_argument("--tls", action="store_true",
                   help="with --lan: the broker speaks TLS (certificates made in STORE.venue/ "
                        "unless --tls-cert)")
    p.add_argument("--broker-port", type=int, default=0,
                   help="with --lan: the broker's port (default 1883, 8883 with --tls)")
    p.add_argument("--broker-password-file", metavar="FILE",
                   help="with --lan: the tables' broker password (default: made once)")
    p.add_argument("--lan-host", action="append", metavar="NAME",
                   help="with --tls: a name or address the tables dial (repeat; default: "
                        "this machine's LAN address and host name)")
    p.add_argument("--tls-cert", metavar="FILE", help="with --tls: the broker's certificate")
    p.add_argument("--tls-key", metavar="FILE", help="and its key")
    p.add_argument("--speed", type=float, default=1.0,
                   help="simulation only: desk time runs this many times real time")


def do_desk(a):
    if a.broker not in ("auto", "off") and not re.match(r"mqtts?://", a.broker):
        raise client.CliError("--broker is auto, off, mqtt://HOST:PORT or mqtts://HOST:PORT")
    if (a.tls or a.broker_port or a.broker_password_file or a.lan_host) and not a.lan:
        raise client.CliError("--tls, --broker-port, --broker-password-file and --lan-host "
                              "are for the broker --lan opens to the venue")
    if a.lan and a.broker != "auto" and a.tls:
        raise client.CliError("--tls is for the broker the desk starts (--broker auto)")
    if bool(a.tls_cert) != bool(a.tls_key) or (a.tls_cert and not a.tls):
        raise client.CliError("--tls-cert and --tls-key go together, with --tls")
    if a.password_file and not a.user:
        raise client.CliError("--password-file needs --user")
    for f in (a.ca, a.password_file, a.broker_password_file, a.tls_cert, a.tls_key):
        if f and not os.path.isfile(f):
            raise client.CliError("no file %s" % f)
    if a.event is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", a.event):
        raise client.CliError("--event is 1 to 32 letters, digits, - or _ (an MQTT topic level)")
    from duelclock_desk import api
    return api.run(a)


def _args_round(p):
    p.add_argument("action", choices=("start", "close"),
                   help="start: a round on all tables or some; close: the running round, "
                        "refused while a table is unfinished, unverified or flagged")
    p.add_argument("--round", type=int, help="start: the round (required); close: a check")
    p.add_argument("--force", action="store_true", help="close: close it all the same")
    p.add_argument("--kind", choices=("swiss", "elimination"), default="swiss")
    p.add_argument("--tables", type=client.tables, help="1-40, 1-10,17 (default: all)")
    p.add_argument("--at", default="now", help="now, +90s, +2m or HH:MM[:SS] (default now)")
    p.add_argument("--limit", type=client.duration_s, default=2700, help="45m (default)")
    p.add_argument("--cap", type=client.duration_s, default=1800, help="30m (default)")
    p.add_argument("--extra-turns", type=int, default=1)
    p.add_argument("--seating", action="store_true", help="players check in (tardiness)")
    p.add_argument("--rules", choices=("ID", "KR"), help="penalty guideline in force")
    p.add_argument("--judge-extend", action="store_true",
                   help="the head judge may extend a table's time at the table")
    p.add_argument("--lang", choices=("en", "ko", "id"), help="the tables' language")
    p.add_argument("--pairings", type=client.pairings, default=[], metavar="CSV",
                   help="table,player_a,player_b per line")
    client.add_desk_arg(p)


def do_round(a):
    if a.action == "close":
        out = client.api(a, "/api/round/close", {"round": a.round, "force": a.force})
        from duelclock_desk.commands import open_text
        print("round %d closed at desk time %s (%s)" % (
            out["round"], client.clock(out["closed_ms"]), open_text(out)))
        return
    if a.round is None:
        raise client.CliError("round start needs --round N")
    out = client.api(a, "/api/round/start", {
        "round": a.round, "kind": a.kind, "tables": a.tables, "at": a.at, "limit_s": a.limit,
        "cap_s": a.cap, "extra_turns": a.extra_turns, "seating": a.seating, "rules": a.rules,
        "lang": a.lang, "pairings": a.pairings, "judge_extend": a.judge_extend})
    print("round %d starts at desk time %s on %s" % (
        out["round"], client.clock(out["start_ms"]),
        "all tables" if out["tables"] is None else "%d tables" % len(out["tables"])))


def _args_pause(p):
    p.add_argument("--tables", type=client.tables, help="1-40, 1-10,17 (default: all)")
    client.add_desk_arg(p)


def do_pause(a):
    out = client.api(a, "/api/pause", {"tables": a.tables})
    print("paused at desk time", client.clock(out["at_ms"]))


def do_resume(a):
    out = client.api(a, "/api/resume", {"tables": a.tables})
    print("resumed at desk time", client.clock(out["at_ms"]))


def _args_extend(p):
    which = p.add_mutually_exclusive_group()
    which.add_argument("--table", type=int, help="one table")
    which.add_argument("--tables", type=client.tables,
                       help="some tables: 1-40, 1-10,17 (without --table or --tables: "
                            "every table of the round)")
    p.add_argument("--minutes", type=float, required=True)
    client.add_desk_arg(p)


def do_extend(a):
    body = {"ms": int(round(a.minutes * 60000))}
    if a.table is not None:
        body["table"] = a.table
    elif a.tables is not None:
        body["tables"] = a.tables
    out = client.api(a, "/api/extend", body)
    if out["table"] is not None:
        print("table %d: %s more" % (out["table"], client.clock(out["ms"])))
    else:
        print("%d tables (%s): %s more each" % (len(out["tables"]),
                                                ",".join(map(str, out["tables"])),
                                                client.clock(out["ms"])))


def _args_result(p):
    p.add_argument("--table", type=int, required=True)
    p.add_argument("--round", type=int, help="default: the current round")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--take", choices=("table", "replay"),
                     help="settle a mismatch or a record flagged changed or late: the "
                          "table's verdict or the desk's replay")
    how.add_argument("--result", choices=("A", "B", "double_loss"),
                     help="type the result (from the paper sheet), with --wins")
    p.add_argument("--wins", type=client.wins, help="duel wins A-B, as 2-1")
    p.add_argument("--reason", required=True, help="why (kept with who and when)")
    client.add_desk_arg(p)


def do_result(a):
    if (a.result is None) != (a.wins is None):
        raise client.CliError("--result and --wins go together")
    body = {"table": a.table, "round": a.round, "reason": a.reason}
    if a.take:
        body["take"] = a.take
    else:
        body.update(result=a.result, wins={"A": a.wins[0], "B": a.wins[1]})
    out = client.api(a, "/api/result", body)
    print("table %d round %d: %s %d-%d, %s (%s): %s" % (
        out["table"], out["round"], out["result"], out["wins"]["A"], out["wins"]["B"],
        "entered by the head judge" if out["how"] == "entered" else "overridden",
        {"table": "the table's verdict", "replay": "the desk's replay",
         "typed": "typed in"}[out["taken"]], out["reason"]))


def _args_status(p):
    p.add_argument("--json", action="store_true", help="the API's JSON as is")
    client.add_desk_arg(p)


def do_status(a):
    st = client.api(a, "/api/status")
    print(json.dumps(st, indent=1) if a.json else "\n".join(client.status_lines(st)))


def _args_collect(p):
    p.add_argument("--round", type=int, help="default: the current round")
    client.add_desk_arg(p)


def do_collect(a):
    out = client.api(a, "/api/collect", {"round": a.round})
    print("round %d" % out["round"])
    for verified, tbls in sorted(out["results"].items()):
        print("  %-11s %d: %s" % (verified, len(tbls), " ".join(map(str, tbls))))
    print("  %-11s %d: %s" % ("no result", len(out["missing"]), " ".join(map(str, out["missing"]))))


def _args_carry(p):
    p.add_argument("id", type=int, help="the carried penalty's number (duelclock status)")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--confirm", action="store_true", help="it goes with the player's next round")
    how.add_argument("--decline", action="store_true", help="it does not carry")
    client.add_desk_arg(p)


def do_carry(a):
    c = client.api(a, "/api/carry", {"id": a.id, "confirm": a.confirm})
    print("carried penalty %d (%s %s, round %d table %d): %s" % (
        c["id"], c["player"], c["kind"], c["from_round"], c["from_tbl"],
        "confirmed: it goes with the next round started that names the player"
        if c["state"] == "ready" else c["state"]))


def _args_export(p):
    p.add_argument("--csv", action="store_true", required=True, help="CSV (the only format)")
    p.add_argument("--round", type=int, help="default: the latest round")
    p.add_argument("--out", metavar="FILE", help="default: standard output")
    p.add_argument("--force", action="store_true",
                   help="export though some table has no final result yet")
    client.add_store_arg(p)


def do_export(a):
    store = _store(a)
    round_no = a.round or (store.current_round() or {}).get("round", 0)
    why = store.export_refusal(round_no)
    if why and not a.force:
        raise client.CliError(why.replace("forcing", "--force"))
    text = store.results_csv(round_no)
    if a.out:
        with open(a.out, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def _args_keygen(p):
    p.add_argument("--out", required=True, metavar="FILE", help="new key file (mode 0600)")


def do_keygen(a):
    try:
        fd = os.open(a.out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise client.CliError("%s exists: a key is never overwritten" % a.out)
    with os.fdopen(fd, "w") as f:
        f.write(binascii.hexlify(os.urandom(32)).decode() + "\n")
    print("wrote", a.out)


def _args_deploy(p):
    p.add_argument("--port", required=True, help="the board: /dev/ttyACM0, socket://HOST:PORT")
    p.add_argument("--board", required=True, help="a folder of boards/: RPI_PICO_W, SIM, ...")
    p.add_argument("--table", type=int, required=True, help="the table's number")
    p.add_argument("--key", metavar="FILE", help="the event key (keygen): the board gets only "
                   "the table's own key, derived from it; default: keep the board's (same table)")
    p.add_argument("--pins", metavar="FLOOR:HEAD",
                   help="judge PINs, stored salted and hashed; default: keep the board's")
    p.add_argument("--wifi", metavar="SSID:PASS", help="the venue's Wi-Fi (MQTT link)")
    p.add_argument("--lang", choices=("en", "ko", "id"), default="en", help="the table's language")
    p.add_argument("--link", choices=("serial", "mqtt"),
                   help="the desk link (default: mqtt with --broker, else serial)")
    p.add_argument("--broker", metavar="URL", help="the venue's broker: mqtt://HOST:PORT, or "
                   "mqtts://HOST:8883 (TLS); USER:PASS@ before HOST for a broker that asks")
    p.add_argument("--ca", metavar="FILE", help="with mqtts://: the CA (PEM or DER) that signed "
                   "the broker's certificate")
    p.add_argument("--event", metavar="NAME", help="event id in MQTT topics")
    p.add_argument("--mpy", action="store_true", help="copy the firmware compiled (mpy-cross)")


def do_deploy(a):
    from duelclock_desk import deploy
    return deploy.run(a)


def _args_provision(p):
    p.add_argument("--tables", type=client.tables, required=True,
                   help="the table numbers to give out, in order: 1-40, 1-10,17")
    p.add_argument("--key", required=True, metavar="FILE",
                   help="the event key (keygen): each board gets only its table's own key")
    p.add_argument("--pins", required=True, metavar="FLOOR:HEAD",
                   help="judge PINs, stored salted and hashed")
    p.add_argument("--port", action="append", metavar="PORT",
                   help="a board: /dev/ttyACM0, socket://HOST:PORT; again for more. Default: "
                   "wait for MicroPython boards on USB until every table has one")
    p.add_argument("--board", default="RPI_PICO_W",
                   help="a folder of boards/ (default %(default)s); a board that says it is "
                   "another chip is refused")
    p.add_argument("--state", default="duelclock-provision.json", metavar="FILE",
                   help="which board got which table, to resume (default ./%(default)s)")
    p.add_argument("--jobs", type=int, default=4, metavar="N",
                   help="boards written at once (default %(default)s)")
    p.add_argument("--wifi", metavar="SSID:PASS", help="the venue's Wi-Fi (MQTT link)")
    p.add_argument("--broker", metavar="URL", help="the venue's broker, as for deploy")
    p.add_argument("--ca", metavar="FILE", help="with mqtts://: the broker's CA (PEM or DER)")
    p.add_argument("--lang", choices=("en", "ko", "id"), default="en", help="the tables' language")
    p.add_argument("--event", metavar="NAME", help="event id in MQTT topics")
    p.add_argument("--mpy", action="store_true", help="copy the firmware compiled (mpy-cross)")


def do_provision(a):
    from duelclock_desk import provision
    if a.tables is None:
        raise client.CliError("--tables: give the numbers, e.g. 1-40")
    if a.jobs < 1:
        raise client.CliError("--jobs is 1 or more")
    return provision.run(a)


def _args_pull(p):
    p.add_argument("--port", required=True, help="the table: /dev/ttyACM0, socket://HOST:PORT")
    p.add_argument("--board", required=True, help="a folder of boards/: RPI_PICO_W, SIM, ...")
    p.add_argument("--out", metavar="DIR", help="where the record files go (default: here)")
    p.add_argument("--all", action="store_true", help="the collected matches too")
    p.add_argument("--import", dest="do_import", action="store_true",
                   help="hand each uncollected match to the desk, then mark it collected")
    client.add_desk_arg(p)


def do_pull(a):
    from duelclock_desk import pull
    return pull.run(a)


def _args_sim(p):
    p.add_argument("--tables", type=int, default=4)
    p.add_argument("--mqtt", type=int, default=0, help="how many of them on MQTT")
    p.add_argument("--speed", type=float, help="clock speed (default: 1 interactive, else 40)")
    p.add_argument("--interactive", action="store_true",
                   help="play the tables from this terminal; run the desk in another")
    p.add_argument("--dir", default="out/sim", help="the tables' flash images and config")


def do_sim(a):
    try:
        if a.interactive:
            from simulator import interactive
            return interactive.run(a.tables, a.dir, a.speed or 1.0, a.mqtt)
        from simulator import demo
        return demo.main(["--tables", str(a.tables), "--mqtt", str(a.mqtt),
                          "--speed", str(a.speed or 40.0)])
    except RuntimeError as e:           # a table or the desk did not start, and why
        raise client.CliError(str(e))


def _args_hall(p):
    p.add_argument("--desk", required=True, metavar="URL", help="mqtt://HOST:PORT, the desk's broker")
    p.add_argument("--event", required=True, metavar="NAME", help="the event id the desk uses")
    p.add_argument("--name", required=True, help="this hall (its bridge's client id)")
    p.add_argument("--port", type=int, default=1883, help="where the hall's tables connect")


def do_hall(a):
    from duelclock_desk.broker import config
    if not re.fullmatch(r"mqtt://[^:/\s]+:\d+", a.desk):
        raise client.CliError("--desk is mqtt://HOST:PORT")
    for what, value in (("--event", a.event), ("--name", a.name)):
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", value):
            raise client.CliError("%s is 1 to 32 letters, digits, - or _" % what)
    sys.stdout.write(config(a.port, lan=True, bridge=(a.desk, a.event, a.name)))


def _args_unlock(p):
    p.add_argument("challenge", help="the digits the table shows in maintenance")
    p.add_argument("--table", type=int, required=True, help="the table's number")
    p.add_argument("--key", metavar="FILE", help="the event key (keygen): make the code here, "
                   "no desk needed; default: ask the running desk")
    p.add_argument("--audit", default="duelclock-unlocks.log", metavar="FILE",
                   help="with --key: where who asked is logged (default ./%(default)s)")
    client.add_desk_arg(p)


def do_unlock(a):
    if a.key is None:
        out = client.api(a, "/api/unlock", {"table": a.table, "challenge": a.challenge})
        print(out["code"])
        return
    from duelclock_desk import deploy, unlock
    key = binascii.unhexlify(deploy.read_key(a.key))       # checked hex
    try:
        code = unlock.code(key, a.table, a.challenge)
    except unlock.UnlockError as e:
        raise client.CliError(str(e))
    unlock.audit_line(a.audit, a.table, a.challenge.replace(" ", ""))
    print(code)


# name -> (handler, argument declarer, one-line help)
COMMANDS = {
    "sim": (do_sim, _args_sim, "simulated tables running the real firmware (see simulator/)"),
    "replay": (do_replay, _args_replay, "print the verdict JSON of a match record"),
    "sheet": (do_sheet, _args_sheet, "print the written-style LP sheet of a match record"),
    "desk": (do_desk, _args_desk, "run the desk: links, clock sync, store, local API"),
    "round": (do_round, _args_round, "start a round on all tables or some, or close it"),
    "pause": (do_pause, _args_pause, "pause the round clock on all tables or some"),
    "resume": (do_resume, _args_pause, "resume the round clock on all tables or some"),
    "extend": (do_extend, _args_extend, "give one table, some or every table extra time"),
    "result": (do_result, _args_result,
               "the head judge's result: settle a mismatch, type one in (audited, with why)"),
    "status": (do_status, _args_status, "every table: link, sync, phase, score, LP, time, alerts"),
    "collect": (do_collect, _args_collect, "check every result of a round against its record"),
    "carry": (do_carry, _args_carry,
              "the head judge confirms or declines a penalty carried to the next match (KR)"),
    "export": (do_export, _args_export, "results for the tournament software"),
    "keygen": (do_keygen, _args_keygen, "make a new event key file"),
    "deploy": (do_deploy, _args_deploy, "put firmware, board file and config on a board; check"),
    "provision": (do_provision, _args_provision,
                  "deploy every board of a room, each to the next free table; resumable"),
    "unlock": (do_unlock, _args_unlock,
               "the code that opens a table's maintenance for the challenge it shows"),
    "pull": (do_pull, _args_pull, "copy the records the desk never collected off a table (USB)"),
    "hall": (do_hall, _args_hall, "print a hall broker's mosquitto.conf, bridged to the desk's"),
}


def parser():
    top = argparse.ArgumentParser(prog="duelclock", description="duelclock desk tool")
    sub = top.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (handler, declare, text) in COMMANDS.items():
        p = sub.add_parser(name, help=text, description=text)
        declare(p)
        p.set_defaults(handler=handler)
    return top


def main(argv=None):
    a = parser().parse_args(argv)
    try:
        code = a.handler(a) or 0
        sys.stdout.flush()
        return code
    except client.CliError as e:
        sys.stderr.write("%s: %s\n" % (a.command, e))
        return 1
    except KeyboardInterrupt:           # Ctrl-C: what the command started is stopped
        return 130
    except BrokenPipeError:
        # The reader went away (`duelclock replay FILE | head`): stop quietly. Standard
        # output is pointed at /dev/null so the interpreter's last flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141                      # as a shell reports a process ended by SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
