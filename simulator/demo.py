"""`make demo` (interim, until the simulator lands): replay each bundled match record,
print its verdict and LP sheet, and write the printable HTML sheets to out/demo/."""
import os
import sys

from duelclock.core.sheet import render_text
from duelclock.replay import replay_file
from duelclock_desk.sheet_html import render_html

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "out", "demo")


def main():
    os.makedirs(OUT, exist_ok=True)
    folder = os.path.join(HERE, "matches")
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".jsonl"):
            continue
        r = replay_file(os.path.join(folder, name), with_sheet=True)
        sys.stdout.write(render_text(r.sheet))
        print("verdict:", r.verdict_json())
        page = os.path.join(OUT, name[:-6] + ".html")
        with open(page, "w", encoding="utf-8") as f:
            f.write(render_html(r.sheet, r.match.verdict(), title=name))
        print("printable sheet:", os.path.relpath(page))
    return 0


if __name__ == "__main__":
    sys.exit(main())
