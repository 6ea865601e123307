# Every row of the screen text (core/lang.py TEXT) is asked for by some firmware module: a
# row nothing shows costs flash on every board and glyphs in the Korean font (mkfont builds
# it from these rows). Asked for: a string constant in the key argument of a call to
# Ui.text or lang.tr, or a value of a frame's HOLD table (what holding a key does there,
# shown by core/view.py while the key is held).
import ast
import os

from duelclock.core import lang

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIRMWARE = os.path.join(ROOT, "firmware", "duelclock")


def _asked_for():
    found = set()
    for d, _, names in os.walk(FIRMWARE):
        for n in names:
            if not n.endswith(".py"):
                continue
            path = os.path.join(d, n)
            for node in ast.walk(ast.parse(open(path, encoding="utf-8").read(), path)):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and any(
                        isinstance(t, ast.Name) and t.id == "HOLD" for t in node.targets):
                    found.update(v.value for v in node.value.values if isinstance(v, ast.Constant))
                    continue
                if not isinstance(node, ast.Call) or not node.args:
                    continue
                f = node.func
                if (isinstance(f, ast.Attribute) and f.attr == "text"
                        or isinstance(f, ast.Name) and f.id == "tr"):
                    found.update(c.value for c in ast.walk(node.args[0])
                                 if isinstance(c, ast.Constant) and isinstance(c.value, str))
    return found


def test_every_text_row_is_asked_for():
    keys = [line.split("|")[0] for line in lang.TEXT.strip().split("\n")]
    asked = _asked_for()
    assert [k for k in keys if k not in asked] == []
