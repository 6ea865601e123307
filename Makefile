# duelclock: `make demo` runs the main job, `make test` the tests. Both install what they
# need on a fresh machine (a .venv from PyPI; Debian packages where a target needs them).
SHARED ?= $(abspath ../shared)
VENV := .venv
PY := $(VENV)/bin/python
UPY := $(VENV)/bin/micropython
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
export DUELCLOCK_SHARED := $(SHARED)

.PHONY: all test demo bench clean

all: test

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $@

# CPython suite (core, desk, vectors) and the core suite again under real MicroPython.
test: $(STAMP)
	$(PY) -m pytest tests

demo: $(STAMP)
	$(PY) -m simulator.demo

bench: $(STAMP)
	$(PY) tests/bench/run.py

clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis
