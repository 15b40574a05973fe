# Two commands on a fresh clone: `make run` opens the window, `make test` runs every test.
# Each creates the virtual environment in .venv first if it is missing or out of date.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed
# Test files run in this many processes at once. Most of a test's time is a lane importing its framework, waiting
# for a turn or a watchdog, or a window waiting for a lane: on 2 cores three processes fill the idle time (9.3-9.5 min
# against 16-17.6 min one by one). Tests marked `timing` (wall-clock bounds, measured speeds) then run alone.
TEST_JOBS ?= 3
PYTEST := $(VENV)/bin/python -m pytest -q -p no:cacheprovider

.PHONY: run test check venv clean

run: $(STAMP)
	$(VENV)/bin/python main.py

# The layer contracts and the type checker (pyproject.toml: [tool.importlinter], [tool.pyright]) first, then every
# test: all but the timing tests in TEST_JOBS processes, then the timing tests on a machine the suite leaves quiet.
# (pytest exits 5 when PYTEST_ARGS select no test of a phase: that phase then has nothing to run.)
test: check
	$(PYTEST) -n $(TEST_JOBS) --dist loadfile -m "not timing" $(PYTEST_ARGS) || [ $$? -eq 5 ]
	$(PYTEST) -m timing $(PYTEST_ARGS) || [ $$? -eq 5 ]

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
