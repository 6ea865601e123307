"""`duelclock sheet FILE [--html OUT]`: the written-style LP sheet of a match record."""
import os
import re
import sys

from duelclock.core.replay import RecordError
from duelclock_desk.sheet_text import render_text
from duelclock.replay import replay_file
from duelclock_desk.sheet_html import render_html


def run(path, html_out=None):
    try:
        r = replay_file(path, with_sheet=True)
    except (RecordError, OSError) as e:
        sys.stderr.write("sheet: %s\n" % e)
        return 2
    # A file `duelclock pull` wrote names its table (t17_r3_m4.jsonl); the rest is left blank.
    m = re.match(r"t(\d+)_r\d+_m\d+\.jsonl$", os.path.basename(path))
    table = int(m.group(1)) if m else None
    if html_out:
        with open(html_out, "w", encoding="utf-8") as f:
            f.write(render_html(r.sheet, r.match.verdict(), title=path, table=table))
        print("wrote", html_out)
    else:
        sys.stdout.write(render_text(r.sheet, table=table))
    return 0
