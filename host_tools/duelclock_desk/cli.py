"""The `duelclock` command. Like mpremote: one table maps each command to its handler
and to the function that declares its arguments; `main` does nothing else."""
import argparse
import sys

from duelclock import replay as _replay


def _args_replay(p):
    p.add_argument("file", help="match record (JSON Lines, shared/spec/events.md)")


def do_replay(a):
    return _replay.main([a.file])


def _args_sheet(p):
    p.add_argument("file", help="match record (JSON Lines)")
    p.add_argument("--html", metavar="OUT", help="write a printable HTML sheet to OUT")


def do_sheet(a):
    from duelclock_desk import sheet_cmd
    return sheet_cmd.run(a.file, a.html)


# name -> (handler, argument declarer, one-line help)
COMMANDS = {
    "replay": (do_replay, _args_replay, "print the verdict JSON of a match record"),
    "sheet": (do_sheet, _args_sheet, "print the written-style LP sheet of a match record"),
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
    return a.handler(a) or 0


if __name__ == "__main__":
    sys.exit(main())
