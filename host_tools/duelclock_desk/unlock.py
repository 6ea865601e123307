"""Maintenance codes: what opens a table's REPL (deploy, pull). A table powered on with its
maintenance keys held shows a challenge of sign.CHALLENGE_DIGITS digits (and writes it on
its USB port); the code is sign.unlock_code under that table's own key, which the desk
derives from the event key. So only the event key's holder opens a table, a code opens one
table for one challenge, and nothing on an opened table opens another.

code() is the one place the desk makes a code; the desk's `unlock` command (commands.py,
audited in the store) and `duelclock unlock --key FILE` (no desk running: audited in a
JSON Lines file beside it) both call it."""
import getpass
import json
import time

from duelclock.core.sign import CHALLENGE_DIGITS, table_key, unlock_code


class UnlockError(ValueError):
    """A table number or challenge that is not one; no code was made."""


def code(event_key, table, challenge):
    """The code that opens table `table` (an int from 1) for `challenge` (its digits, as the
    table shows them; spaces are dropped)."""
    if type(table) is not int or table < 1:          # bool is not int here
        raise UnlockError("the table is a number from 1")
    if type(challenge) is not str:
        raise UnlockError("the challenge is the %d digits the table shows" % CHALLENGE_DIGITS)
    digits = challenge.replace(" ", "")
    if len(digits) != CHALLENGE_DIGITS or not digits.isdigit() or not digits.isascii():
        raise UnlockError("the challenge is the %d digits the table shows, not %r"
                          % (CHALLENGE_DIGITS, challenge))
    return unlock_code(table_key(event_key, table), digits)


def audit_line(path, table, challenge, who=None):
    """Append who made a code for which table and challenge, and when, to `path`."""
    line = json.dumps({"unix_ms": int(time.time() * 1000), "who": who or getpass.getuser(),
                       "command": "unlock", "table": table, "challenge": challenge},
                      sort_keys=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")
