# Two commands on a fresh clone: `make run` opens the window, `make test` runs every test.
# Each creates the virtual environment in .venv first if it is missing or out of date.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed
# Test files run in this many processes at once: the fast set is CPU-bound, the lanes set mostly waits for a lane's
# framework import, a watchdog or a window, so three processes fill two cores in both.
TEST_JOBS ?= 3
PYTEST := $(VENV)/bin/python -m pytest -q -p no:cacheprovider
FAST := -m "not lanes and not xvfb"
LANES := -m "lanes or xvfb"

.PHONY: run test test-fast test-lanes check venv clean

run: $(STAMP)
	$(VENV)/bin/python main.py

# Every test, in two sets: the logic on scripted lanes first (tests/scripted_lanes.py: most failures show within a
# minute), then the layer contracts and the types, then the tests of realness (marked `lanes`: real lane
# processes, the CLI and the window as processes of their own, SSH, a real window under Xvfb).
# (pytest exits 5 when PYTEST_ARGS select no test of a set: that set then has nothing to run.)
test: test-fast check test-lanes

test-fast: $(STAMP)
	$(PYTEST) -n $(TEST_JOBS) $(FAST) $(PYTEST_ARGS) || [ $$? -eq 5 ]

test-lanes: $(STAMP)
	$(PYTEST) -n $(TEST_JOBS) --dist loadfile --durations=25 $(LANES) $(PYTEST_ARGS) || [ $$? -eq 5 ]

check: $(STAMP)
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/pyright

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e '.[test,jax]'
	touch $(STAMP)

clean:
	rm -rf $(VENV) build *.egg-info
