"""The rule vectors' checker: a replay command's verdict against each vector's expectation.

A vector is a pair in tests/vectors/: NAME.jsonl, a match record, and NAME.expect.json, the
part of its verdict the rules fix. Every key the expectation gives must match the verdict:
- `duels` and `penalties` are lists compared entry by entry on the keys each expected entry
  lists (a verdict's other keys are free), and the lists must be as long;
- `rejected_indexes` is the set of record indexes the replay must reject, no more, no fewer;
- `rejected: []` says nothing was rejected;
- any other key compares whole.

    python tests/check_vectors.py [--dir DIR] -- COMMAND [ARG ...]

runs `COMMAND ... DIR/NAME.jsonl` for every vector, prints a line per failing one and a
closing "N passed, N failed", and exits 1 if any failed.
"""
import json
import os
import subprocess
import sys

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors")


def names(directory=VECTORS):
    """The vectors in `directory`, sorted: each NAME has NAME.jsonl and NAME.expect.json."""
    return sorted(f[:-len(".jsonl")] for f in os.listdir(directory) if f.endswith(".jsonl"))


def expectation(name, directory=VECTORS):
    with open(os.path.join(directory, name + ".expect.json")) as f:
        return json.load(f)


def _entries(have, want):
    """`have`'s entries cut to the keys of `want`'s, as long as `have` is."""
    if not isinstance(have, list):
        return have
    cut = [{k: h.get(k) for k in w} if isinstance(h, dict) and isinstance(w, dict) else h
           for h, w in zip(have, want)]
    return cut + have[len(want):]


def problems(expect, verdict):
    """What in `verdict` differs from `expect`, one sentence each; [] when it matches."""
    found = []
    for key, want in expect.items():
        if key == "rejected_indexes":
            have = sorted(r.get("index") for r in verdict.get("rejected", []))
            if have != sorted(want):
                found.append("rejected indexes %s, want %s" % (have, sorted(want)))
            continue
        have = verdict.get(key)
        if key in ("duels", "penalties"):
            have = _entries(have, want)
        if have != want:
            found.append("%s = %s, want %s" % (key, json.dumps(have), json.dumps(want)))
    return found


def check(command, name, directory=VECTORS, timeout_s=60):
    """Replay vector `name` with `command` (a list); its problems, [] when it passes."""
    path = os.path.join(directory, name + ".jsonl")
    try:
        out = subprocess.run(list(command) + [path], capture_output=True, text=True,
                             timeout=timeout_s)
        verdict = json.loads(out.stdout)
    except (subprocess.TimeoutExpired, ValueError) as e:
        return ["no verdict: %s" % e]
    if not isinstance(verdict, dict):
        return ["no verdict: %r" % (verdict,)]
    return problems(expectation(name, directory), verdict)


def main(argv):
    directory = VECTORS
    if argv[:1] == ["--dir"]:
        directory, argv = argv[1], argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print(__doc__)
        return 2
    failed = 0
    every = names(directory)
    for name in every:
        found = check(argv, name, directory)
        if found:
            failed += 1
            print("FAIL %s: %s" % (name, "; ".join(found)))
    print("%d passed, %d failed" % (len(every) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
