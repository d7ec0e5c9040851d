# `make run`: set up (once) and start the tray app.  `make test`: set up (once) and run every test.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DIST ?= dist

.PHONY: run test lint bench-quick system-deps wheel extension-zip install-desktop uninstall-desktop bundle bundle-smoke \
	notices release

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -U pip
	# plain apsw and apsw-sqlite3mc ship the same module: an older venv drops plain apsw first
	if $(PY) -m pip show -q apsw >/dev/null 2>&1; then $(PY) -m pip uninstall -y -q apsw apsw-sqlite3mc; fi
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

# Packaging (packaging/README.md): the wheel, the extension zip for a store, the per-user menu entry
# and icons, and the PyInstaller onedir bundle with its smoke test.
wheel: $(STAMP)
	$(PY) -m build --outdir $(DIST) .

extension-zip:
	$(PYTHON) packaging/extension_zip.py $(DIST)

# The same code as `vodou desktop install|uninstall`; the entry starts this checkout's .venv/bin/vodou.
install-desktop: $(STAMP)
	$(VENV)/bin/vodou desktop install

uninstall-desktop: $(STAMP)
	$(VENV)/bin/vodou desktop uninstall

bundle: $(STAMP)
	$(PY) -m pip install -q --disable-pip-version-check -c constraints.txt 'pyinstaller>=6.10'
	$(PY) -m PyInstaller --noconfirm --log-level WARN --distpath $(DIST) --workpath build/pyinstaller \
		packaging/vodou.spec

bundle-smoke: bundle
	bash packaging/smoke-bundle.sh $(DIST)/vodou

# THIRD_PARTY_NOTICES from the installed distributions' metadata (after a dependency changes).
notices: $(STAMP)
	$(PY) packaging/third_party_notices.py

# The wheel, the bundle as .tar.zst (smoke-tested) and the extension zip in $(DIST), with SHA256SUMS.
# Slow (the bundle): never part of `make test`.
release: $(STAMP)
	$(PY) -m pip install -q --disable-pip-version-check -c constraints.txt 'pyinstaller>=6.10'
	bash packaging/release.sh $(PY) $(DIST)
