# Two commands on a fresh clone: `make run` opens the window, `make test` runs every test.
# Each creates the virtual environment in .venv first if it is missing or out of date.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed
# Processes at once: the fast set's tests mostly wait on Qt and threads (3 fill two cores); the lanes set's lanes
# train on every core, and a third process only makes their thread pools contend (on 2 cores: 8 min 44 s with 2,
# 10 min 32 s with 3).
# The fast set's processes steal waiting tests from each other's queues when their own run dry (--dist worksteal):
# no long test is left to run alone at the end (114 s against 120 s on a fresh clone here).
TEST_JOBS ?= 3
LANE_JOBS ?= 2
# Python's compiled files kept for the tests (a machine may set PYTHONDONTWRITEBYTECODE): without them each test
# process compiles every module and rewrites every test's asserts again, 12 s of its start.
PYTEST := PYTHONDONTWRITEBYTECODE= $(VENV)/bin/python -m pytest -q -p no:cacheprovider
FAST := -m "not lanes and not xvfb and not thorough"
LANES := -m "lanes or xvfb or thorough"

.PHONY: run test test-fast test-lanes check venv clean

# The window keeps its compiled modules as the tests do: compiling them again at every launch (on a machine that sets
# PYTHONDONTWRITEBYTECODE) cost 0.2 s of its 0.8 s to the window.
run: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(VENV)/bin/python main.py

# Every test, in two sets: the logic on scripted lanes first (tests/scripted_lanes.py: most failures show within a
# minute), then the layer contracts and the types, then the tests of realness (marked `lanes`: real lane
# processes, the CLI and the window as processes of their own, SSH, a real window under Xvfb).
# (pytest exits 5 when PYTEST_ARGS select no test of a set: that set then has nothing to run.)
test: test-fast check test-lanes

test-fast: $(STAMP)
	$(PYTEST) -n $(TEST_JOBS) --dist worksteal $(FAST) $(PYTEST_ARGS) || [ $$? -eq 5 ]

test-lanes: $(STAMP)
	$(PYTEST) -n $(LANE_JOBS) --dist loadfile --durations=25 $(LANES) $(PYTEST_ARGS) || [ $$? -eq 5 ]

check: $(STAMP)
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/pyright

venv: $(STAMP)

# uv installs the same packages as pip from the same index faster (10 s against 50 s here before compiling, most of
# a fresh clone's setup); where uv cannot be had, pip does it. Both compile the packages' bytecode at install, as pip
# does by default (uv only when asked): a process that imports SciPy or TensorFlow from source compiles it first, and
# every lane, CLI command and test process would (the CLI's start: 4.8 s without, 2.3 s with).
$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	if $(VENV)/bin/python -m pip install --quiet uv && \
	   $(VENV)/bin/uv pip install --quiet --compile-bytecode --python $(VENV)/bin/python -e '.[test,jax]'; then :; \
	else \
	  $(VENV)/bin/python -m pip install --quiet --upgrade pip && \
	  $(VENV)/bin/python -m pip install --quiet -e '.[test,jax]'; \
	fi
	PYTHONDONTWRITEBYTECODE= $(VENV)/bin/python -m compileall -q core gui main.py
	touch $(STAMP)

clean:
	rm -rf $(VENV) build *.egg-info
