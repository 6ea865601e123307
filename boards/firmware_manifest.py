# The firmware as a board freezes it: every module of firmware/duelclock but those its
# renderer kind never imports (firmware/not_shipped.json, which deploy reads too).
#   include("../firmware_manifest.py", renderer="fb")
# The manifest tool runs this with the working directory set to this folder.
import json
import os

options.defaults(renderer="fb")
_PKG = "../firmware/duelclock"
with open("../firmware/not_shipped.json") as _f:
    _skip = set(json.load(_f)[options.renderer])
_files = []
for _dir, _, _names in os.walk(_PKG):
    for _n in _names:
        _rel = os.path.relpath(os.path.join(_dir, _n), _PKG).replace(os.sep, "/")
        if _n.endswith(".py") and "duelclock/" + _rel not in _skip:
            _files.append(_rel)
package("duelclock", files=sorted(_files), base_path="../firmware", opt=3)   # deploy.MPY_OPT says why
