# `make demo` and `make test` are all a fresh machine needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PLUGINS := $(wildcard plugins/*/pyproject.toml)
EXAMPLES := $(wildcard docs/examples/*/pyproject.toml)

.PHONY: install demo test lint bench clean

install: $(STAMP)

$(STAMP): pyproject.toml $(PLUGINS) $(EXAMPLES)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]' $(foreach p,$(PLUGINS),-e '$(patsubst %/,%,$(dir $(p)))[dev]') $(foreach p,$(EXAMPLES),-e $(patsubst %/,%,$(dir $(p))))
	touch $(STAMP)

demo: install
	$(BIN)/python scripts/demo.py

test: install
	$(BIN)/python -m pytest -q -p no:cacheprovider
	@if [ -f evals/__main__.py ]; then $(BIN)/python -m evals check; fi

lint: install
	$(BIN)/ruff check junior_core plugins tests benchmarks scripts evals
	$(BIN)/mypy junior_core

bench: install
	for b in benchmarks/[!_]*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build dist *.egg-info
