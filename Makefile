# `make demo` and `make test` are all a fresh machine needs (Python 3.11 or newer as python3, or PYTHON=...).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two steps: what junior needs to run (and the MCP time server the demo bridges), then the test toolchain.
RUNTIME_STAMP := $(VENV)/.runtime
STAMP := $(VENV)/.installed
DEMO_NEEDS := 'mcp-server-time>=2026.10.19'
PLUGINS := $(wildcard plugins/*/pyproject.toml)
EXAMPLES := $(wildcard docs/examples/*/pyproject.toml)
DISTS := . plugins/memory plugins/example_mcp_bridge plugins/slack
# The MCP conformance suite (and the Node it needs) for the bridge's OAuth tests, from the npm registry.
CONFORMANCE := plugins/example_mcp_bridge/tests/conformance
NODE_STAMP := $(CONFORMANCE)/node_modules/.installed
# setuptools reports every editable install in a warning block; the install works, so the blocks are noise.
QUIET := PYTHONWARNINGS="ignore:Editable installation" PIP_DISABLE_PIP_VERSION_CHECK=1

# A .venv made by another Python (or whose Python is gone) is rebuilt rather than reused and failing.
WANT := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
HAVE := $(shell $(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
ifneq ($(WANT),$(HAVE))
STALE := rebuild-venv
endif

.PHONY: install demo test test-fast lint bench dist clean rebuild-venv

install: $(STAMP) $(NODE_STAMP)

rebuild-venv:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || \
		{ echo "junior needs Python 3.11 or newer; '$(PYTHON)' is $(or $(WANT),missing). Run e.g. make PYTHON=python3.12"; exit 1; }
	@if [ -d $(VENV) ]; then echo "$(VENV) was made by Python $(or $(HAVE),that is gone); making it again with $(WANT)"; fi
	rm -rf $(VENV)

$(RUNTIME_STAMP): pyproject.toml $(PLUGINS) $(EXAMPLES) $(STALE)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(QUIET) $(BIN)/python -m pip install --quiet --upgrade pip
	$(QUIET) $(BIN)/python -m pip install --quiet -e . $(foreach p,$(PLUGINS),-e $(patsubst %/,%,$(dir $(p)))) $(foreach p,$(EXAMPLES),-e $(patsubst %/,%,$(dir $(p)))) $(DEMO_NEEDS)
	touch $(RUNTIME_STAMP)

$(STAMP): $(RUNTIME_STAMP)
	$(QUIET) $(BIN)/python -m pip install --quiet -e '.[dev]' $(foreach p,$(PLUGINS),-e '$(patsubst %/,%,$(dir $(p)))[dev]') $(foreach p,$(EXAMPLES),-e $(patsubst %/,%,$(dir $(p))))
	touch $(STAMP)

$(NODE_STAMP): $(CONFORMANCE)/package.json $(CONFORMANCE)/package-lock.json
	@command -v npm >/dev/null || { echo "make test needs npm (Node.js 20 or newer) to install the MCP conformance suite for the MCP bridge's OAuth tests; make demo does not"; exit 1; }
	cd $(CONFORMANCE) && npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

# The demo needs Python alone: runtime dependencies, no test toolchain, no Node.
demo: $(RUNTIME_STAMP)
	$(BIN)/python scripts/demo.py

# Every test, then the evals: what CI runs (.ci/run).
test: install
	$(BIN)/python -m pytest -q -p no:cacheprovider
	@if [ -f evals/__main__.py ]; then $(BIN)/python -m evals check; fi

# The edit loop: every test not marked slow (no distributions, demo, processes, real model, whole-set floors or conformance).
# Bytecode is written even where PYTHONDONTWRITEBYTECODE is set: pytest keeps each test module's rewritten
# asserts in __pycache__ (git-ignored), so the next run does not rewrite and compile 280 modules again.
test-fast: install
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -p no:cacheprovider -m "not slow"

lint: install
	$(BIN)/ruff check junior_core plugins tests benchmarks scripts evals
	$(BIN)/mypy junior_core

bench: install
	for b in benchmarks/[!_]*.py; do $(BIN)/python $$b || exit 1; done

# The four wheels, for `pip install --find-links dist junior-memory` on a machine without a clone.
dist: install
	rm -rf dist
	$(QUIET) $(BIN)/python -m pip wheel --quiet --no-deps --no-build-isolation --wheel-dir dist $(DISTS)
	rm -rf build $(addsuffix /build,$(DISTS)) *.egg-info plugins/*/*.egg-info
	@ls dist

clean:
	rm -rf $(VENV) build dist *.egg-info $(CONFORMANCE)/node_modules
