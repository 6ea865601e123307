"""The rule vectors (tests/vectors/) through both replay commands, with tests/check_vectors.py.

The vectors are the project's copy of the rule spec's. Where the spec sits beside the clone
(../shared, or DUELCLOCK_SHARED: CI has it), one more test replays its vectors with its own
checker and finds the copy unchanged; without it, that test is the one skip."""
import filecmp
import json
import os
import subprocess
import sys

import pytest

from tests import check_vectors
from tests.conftest import SHARED
from tests.host.upy import UPY, upy_path

SPEC_VECTORS = os.path.join(SHARED, "spec", "vectors")
SPEC_CHECKER = os.path.join(SHARED, "spec", "check_vectors.py")
BIN = os.path.dirname(sys.executable)

COMMANDS = {
    "cpython": [os.path.join(BIN, "duelclock"), "replay"],
    # The board's replay must fit its 64 KB heap: the 64-bit unix port's objects are about
    # twice their size on a 32-bit board, so this is the tighter test. Firmware from source.
    "micropython": ["env", "MICROPYPATH=" + upy_path(), UPY, "-X", "heapsize=64k", "-m", "duelclock.replay"],
}


@pytest.mark.parametrize("name", check_vectors.names())
@pytest.mark.parametrize("impl", sorted(COMMANDS))
def test_vector(impl, name):
    assert check_vectors.check(COMMANDS[impl], name) == []


def test_the_checker_finds_a_wrong_verdict():
    expect = check_vectors.expectation("penalty_after_match")
    right = {"result": "A", "wins": {"A": 2, "B": 0}, "phase": "over", "lp": {"A": 1, "B": 0},
             "penalties": [dict(expect["penalties"][0], t=5)], "rejected": [{"index": 6}]}
    assert check_vectors.problems(expect, right) == []
    assert check_vectors.problems(expect, dict(right, result="B")) == ['result = "B", want "A"']
    assert check_vectors.problems(expect, dict(right, rejected=[])) == [
        "rejected indexes [], want [6]"]
    wrong_code = dict(right, penalties=[dict(right["penalties"][0], code="slow_play")])
    assert len(check_vectors.problems(expect, wrong_code)) == 1
    extra = dict(right, penalties=right["penalties"] * 2)
    assert len(check_vectors.problems(expect, extra)) == 1


@pytest.mark.skipif(not os.path.exists(SPEC_CHECKER),
                    reason="the rule spec is not beside the clone (../shared or "
                           "DUELCLOCK_SHARED): tests/vectors/ ran without it")
def test_spec_vectors_with_the_specs_checker():
    cmp = filecmp.dircmp(SPEC_VECTORS, check_vectors.VECTORS)
    assert (cmp.left_only, cmp.diff_files) == ([], []), "tests/vectors/ differs from the spec's"
    for impl in sorted(COMMANDS):
        r = subprocess.run([sys.executable, SPEC_CHECKER, "--"] + COMMANDS[impl],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, impl + ": " + r.stdout + r.stderr
        assert " 0 failed" in r.stdout, impl + ": " + r.stdout


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
