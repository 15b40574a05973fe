# Two commands on a fresh clone: `make run` opens the window, `make test` runs every test.
# Each creates the virtual environment in .venv first if it is missing or out of date.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: run test check venv clean

run: $(STAMP)
	$(VENV)/bin/python main.py

# The layer contracts and the type checker (pyproject.toml: [tool.importlinter], [tool.pyright]) first,
# then every test.
test: check
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)

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
