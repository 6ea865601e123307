"""shared/spec/vectors through both replay commands, with the spec's own checker."""
import os
import subprocess
import sys

import pytest

from tests.conftest import SHARED
from tests.host.upy import UPY, upy_path

CHECKER = os.path.join(SHARED, "spec", "check_vectors.py")
BIN = os.path.dirname(sys.executable)

COMMANDS = {
    "cpython": [os.path.join(BIN, "duelclock"), "replay"],
    # The heap the issue holds the board's replay to (64-bit unix port: about twice as tight
    # as 64 KB on a 32-bit board), the firmware loaded from source.
    "micropython": ["env", "MICROPYPATH=" + upy_path(), UPY, "-X", "heapsize=64k", "-m", "duelclock.replay"],
}


@pytest.mark.parametrize("impl", sorted(COMMANDS))
def test_shared_vectors(impl):
    assert os.path.exists(CHECKER), "shared/ not found beside the repo (set DUELCLOCK_SHARED)"
    r = subprocess.run([sys.executable, CHECKER, "--"] + COMMANDS[impl],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " 0 failed" in r.stdout
