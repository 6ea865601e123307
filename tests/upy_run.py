# Runs the plain test_* functions of test modules under MicroPython (or CPython):
#   MICROPYPATH=firmware:tests/core:.frozen micropython tests/upy_run.py tests/core [test_x ...]
# Core tests are written for this: module-level test_* functions, bare asserts, no fixtures.
# Prints one line per failure and a closing 'N passed, N failed'; exit status 1 on failure.
import os
import sys


def run_module(name, out):
    mod = __import__(name)
    passed = failed = 0
    for attr in sorted(dir(mod)):
        if not attr.startswith("test_"):
            continue
        fn = getattr(mod, attr)
        if not callable(fn):
            continue
        try:
            fn()
            passed += 1
        except Exception as e:  # a failing assert or a crash both fail the test
            failed += 1
            out.append("FAIL %s.%s: %s %s" % (name, attr, type(e).__name__, e))
    return passed, failed


def main(argv):
    folder = argv[0]
    names = argv[1:] or sorted(f[:-3] for f in os.listdir(folder)
                               if f.startswith("test_") and f.endswith(".py"))
    passed = failed = 0
    out = []
    for name in names:
        p, f = run_module(name, out)
        passed += p
        failed += f
    for line in out:
        print(line)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
