# `make run`: set up (once) and start the tray app.  `make test`: set up (once) and run every test.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint bench-quick system-deps

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -U pip
	$(PY) -m pip install -q --disable-pip-version-check -c constraints.txt -e '.[test]'
	touch $(STAMP)

system-deps:
	bash .ci/system-deps.sh

run: $(STAMP)
	$(VENV)/bin/vodou

test: $(STAMP) system-deps
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

bench-quick: $(STAMP)
	$(PY) -m bench.search --quick
