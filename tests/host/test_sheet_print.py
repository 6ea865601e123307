"""The printed LP sheet: Chromium (as the dashboard's tests run it) prints the HTML sheet of a
long record to PDF, and poppler's pdfinfo and pdftotext read the pages back. Checked: A4, one
column of rows, the event, round, table and players atop every page and its number below,
each duel's column heads on every page it spans, every LP row printed once, the signature
lines at the end. That no row is cut across a page break rests on the CSS (rows do not
break inside) and was checked by eye on the pages as PNG (pdftoppm)."""
import json
import re
import subprocess

from duelclock.core.sheet import clock
from duelclock.replay import replay_file
from duelclock_desk.sheet_html import render_html
from tests.bench import gen_record
from tests.host.browser import ARGS, CHROMIUM

HEAD = "cup-2026 \u00b7 round 3 \u00b7 table 17 \u00b7 A Kim Minsu \u00b7 B Budi Santoso"


def _run(*argv):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True).stdout


def test_a_long_sheet_prints_on_a4_with_its_head_on_every_page(tmp_path):
    events, _ = gen_record.build(300)
    record = tmp_path / "t17_r3_m4.jsonl"
    record.write_text("".join(json.dumps(ev) + "\n" for ev in events))
    r = replay_file(str(record), with_sheet=True)
    html = tmp_path / "sheet.html"
    html.write_text(render_html(r.sheet, r.match.verdict(), title="table 17, round 3",
                                event="cup-2026", table=17, names=("Kim Minsu", "Budi Santoso")),
                    encoding="utf-8")
    pdf = tmp_path / "sheet.pdf"
    _run(CHROMIUM, *ARGS, "--no-pdf-header-footer", "--print-to-pdf=%s" % pdf,
         html.as_uri())
    info = _run("pdfinfo", str(pdf))
    pages = int(re.search(r"Pages:\s+(\d+)", info).group(1))
    assert re.search(r"Page size:.*\(A4\)", info) and pages >= 5, info
    lp_rows = []
    for n in range(1, pages + 1):
        text = _run("pdftotext", "-layout", "-f", str(n), "-l", str(n), str(pdf), "-")
        lines = [l.strip() for l in text.splitlines() if l.strip()]
        assert lines[0] == HEAD and lines[-1] == "page %d of %d" % (n, pages), (n, lines)
        rows = [i for i, l in enumerate(lines) if re.match(r"\d+:\d\d\s+\d+ ?[AB]\b", l)]
        if rows:        # the column heads above the page's first row, whatever page it is
            assert any(re.match(r"time\s+turn\s+A\s+LP A\s+B\s+LP B\s+note$", l)
                       for l in lines[1:rows[0]]), (n, lines[:rows[0] + 1])
        lp_rows += [lines[i] for i in rows]
    want = [row for sec in r.sheet.sections for row in sec.rows if row[0] == "lp"]
    assert len(lp_rows) == len(want)
    assert [l.split()[0] for l in lp_rows] == [clock(row[1]) for row in want]
    last = " ".join(" ".join(l.split()) for l in lines)
    assert "Signatures The players agree this record; the judge checked it." in last
    for who in ("Player A Kim Minsu signature", "Player B Budi Santoso signature",
                "Judge signature"):
        assert who in last, last
