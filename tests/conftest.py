import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("DUELCLOCK_SHARED") or os.path.join(os.path.dirname(ROOT), "shared")
# The core tests import their helpers as top-level modules, as they do under MicroPython.
sys.path.insert(0, os.path.join(ROOT, "tests", "core"))
sys.path.insert(0, os.path.join(ROOT, "firmware"))
