"""The core suite (tests/core) again, under the real MicroPython unix port."""
import os

import pytest

from tests.host.upy import ROOT, run_upy

CORE_TESTS = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "tests", "core"))
                    if f.startswith("test_") and f.endswith(".py"))


@pytest.mark.parametrize("module", CORE_TESTS)
def test_core_module_under_micropython(module):
    r = run_upy(["tests/upy_run.py", "tests/core", module], extra_path=["tests/core"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert " 0 failed" in r.stdout and not r.stdout.startswith("0 passed")
