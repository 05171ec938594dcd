# Two entry points for a fresh machine (Python 3.11+ and git): `make demo` and `make test`.
# `make check` is the fast loop while working: lint, then every test but those marked slow.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: demo test check lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/stele demo

test: $(STAMP)
	NO_COLOR=1 COLUMNS=100 $(VENV)/bin/python -m pytest -n auto

check: lint
	NO_COLOR=1 COLUMNS=100 $(VENV)/bin/python -m pytest -n auto -m "not slow"

# The rules are in pyproject.toml ([tool.ruff], [tool.mypy]); the versions are pinned in the dev extra.
lint: $(STAMP)
	$(VENV)/bin/ruff check
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) build dist src/*.egg-info
