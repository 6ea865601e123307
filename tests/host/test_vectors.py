"""shared/spec/vectors through both replay commands, with the spec's own checker."""
import json
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


@pytest.mark.parametrize("impl", sorted(COMMANDS))
def test_many_rejections_from_a_file_and_from_a_pipe_give_one_verdict(tmp_path, impl):
    # Past 64 rejections a file is read twice (the list is found again, not held); a pipe
    # cannot be, so its rejections are held: both print every one, byte for byte alike.
    lines = ['{"t":0,"ev":"round_start","round":1,"kind":"swiss"}']
    lines += ['{"t":%d,"ev":"undo"}' % (i + 1) for i in range(100)]
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(lines) + "\n")
    from_file = subprocess.run(COMMANDS[impl] + [str(path)], capture_output=True, timeout=60)
    from_pipe = subprocess.run(COMMANDS[impl] + ["/dev/stdin"], input=path.read_bytes(),
                               capture_output=True, timeout=60)
    assert from_file.returncode == from_pipe.returncode == 0, from_pipe.stderr
    assert from_file.stdout == from_pipe.stdout
    assert [x["index"] for x in json.loads(from_file.stdout)["rejected"]] == list(range(1, 101))
