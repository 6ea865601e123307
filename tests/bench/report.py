"""`make bench`: run the bench and write docs/performance.md from its JSON lines.

    .venv/bin/python tests/bench/report.py [RUN.PY ARGS ...]      run.py, then the page
    .venv/bin/python tests/bench/report.py --from FILE [--out F]  the page from saved lines

The first form runs tests/bench/run.py with its arguments, echoes each line as it comes,
writes the page and exits with run.py's status. The page gives the machine, the date, each
figure with its target, and how it is measured: the metric lists in the bench modules'
comments (`#   metric_name   what it measures`), then the metric's own note.
"""
import datetime
import glob
import json
import os
import platform
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PAGE = os.path.join(ROOT, "docs", "performance.md")

GROUP_TITLES = (
    ("core", "The rules engine: replaying a long record"),
    ("firmware", "The firmware on the MicroPython unix port"),
    ("display", "The screen and the keys"),
    ("work", "The firmware's work in instructions"),
    ("link", "The desk link: clock sync and round start"),
    ("clients", "MQTT client libraries: the desk's side of a round start"),
    ("sim", "The simulator"),
    ("dashboard", "The dashboard"),
    ("faults", "Faults"),
    ("provision", "Provisioning the boards"),
    ("table_link", "The table's MQTT link on the MicroPython unix port"),
    ("round", "The desk link: the 2,000-table round starts alone"),
)

# "#   name [name...]   description" with the description going on in deeper-indented lines.
_ENTRY = re.compile(r"^#\s{2,}([a-z0-9_.*]+(?:_\.\.\.)?),?(?:\s+\(and [^)]*\))?\s{2,}(\S.*)$")
_MORE = re.compile(r"^#\s{6,}(\S.*)$")


def descriptions():
    """{pattern: description} from every bench module's comment lists."""
    found = {}
    for path in sorted(glob.glob(os.path.join(HERE, "*.py"))):
        name = None
        with open(path) as f:
            for line in f:
                line = line.rstrip("\n")
                m = _ENTRY.match(line)
                if m:
                    name = m.group(1)
                    found[name] = m.group(2).strip()
                    continue
                more = _MORE.match(line)
                if name and more:
                    found[name] += " " + more.group(1).strip()
                else:
                    name = None
    return found


def _pattern(name):
    """A comment's metric name as a regex: `*` and `...` stand for any part."""
    parts = re.split(r"\*|\.\.\.", name)
    return re.compile("^" + ".*".join(re.escape(p) for p in parts) + ".*$")


def describe(metric, known):
    """The comment's description that names `metric` most closely, or ''. A variant's name
    (a display size, `_mpy`) finds its figure's description when it has none of its own."""
    for name in (metric, _VARIANT.sub("", metric)):
        best, best_len = "", -1
        for pattern, text in known.items():
            stem = pattern.replace("...", "").replace("*", "")
            if _pattern(pattern).match(name) and len(stem) > best_len:
                best, best_len = text, len(stem)
        if best:
            return best
    return ""


_VARIANT = re.compile(r"_\d+x\d+|_mpy")


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s, %d cores, %s %s, Python %s" % (cpu, os.cpu_count() or 0, platform.system(),
                                                platform.release(), platform.python_version())


def _value(v, unit):
    if v is None:
        return "not measured"
    if isinstance(v, float):
        v = ("%.3f" % v).rstrip("0").rstrip(".")
    elif isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10000:
        v = "{:,}".format(v)
    return "%s %s" % (v, unit)


def _cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def page(lines, when, where):
    """The Markdown page for the metric dicts `lines`."""
    known = descriptions()
    groups = {}
    for m in lines:
        groups.setdefault(m.get("group", "other"), []).append(m)
    out = ["# Performance", "",
           "Written by `tests/bench/report.py` from `make bench` (tests/bench/run.py): run it",
           "again to measure this machine. A figure with a target is met when it is at most the",
           "target (a `bool` or exact count: when it equals it). The machine's load shows in the",
           "timings: the bench reports them, it does not fail on them.", "",
           "- Machine: " + where,
           "- Date: " + when, ""]
    titles = dict(GROUP_TITLES)
    order = [g for g, _ in GROUP_TITLES if g in groups] + sorted(set(groups) - set(titles))
    for g in order:
        out += ["## " + titles.get(g, g), "",
                "| figure | value | target | met | how it is measured |",
                "|---|---|---|---|---|"]
        for m in groups[g]:
            how = describe(m["metric"], known)
            if m.get("note"):
                how = (how + " " if how else "") + "(" + m["note"] + ")"
            target = "" if m.get("target") is None else _value(m["target"], m["unit"])
            met = "" if "ok" not in m else ("yes" if m["ok"] else "**no**")
            out.append("| `%s` | %s | %s | %s | %s |" % (m["metric"], _value(m["value"], m["unit"]),
                                                        target, met, _cell(how)))
        out.append("")
    return "\n".join(out)


def write(lines, path, when=None):
    when = when or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    with open(path, "w") as f:
        f.write(page(lines, when, machine()))


def parse(text):
    return [json.loads(line) for line in text.splitlines() if line.strip().startswith("{")]


def main(argv):
    out = PAGE
    if "--out" in argv:
        i = argv.index("--out")
        out, argv = argv[i + 1], argv[:i] + argv[i + 2:]
    if argv[:1] == ["--from"]:
        with open(argv[1]) as f:
            lines = parse(f.read())
        # measured when the lines were written, not when the page is
        when = datetime.datetime.fromtimestamp(os.path.getmtime(argv[1]), datetime.timezone.utc)
        write(lines, out, when.strftime("%Y-%m-%d %H:%M UTC"))
        return 0
    run = subprocess.Popen([sys.executable, os.path.join(HERE, "run.py")] + argv,
                           stdout=subprocess.PIPE, text=True)
    lines = []
    for line in run.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        if line.startswith("{"):
            lines.append(json.loads(line))
    rc = run.wait()
    if lines:
        write(lines, out)
        sys.stderr.write("report.py: %d figures -> %s\n" % (len(lines), os.path.relpath(out)))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
