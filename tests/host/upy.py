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
        from simulator.build import compiled_firmware
        path = compiled_firmware() + ":" + path
    env = dict(os.environ, MICROPYPATH=path)
    cmd = [UPY] + (["-X", "heapsize=" + heap] if heap else []) + list(args)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, **kw)
