# plantune: two commands on a fresh clone.
#   make demo   build .venv, create a demo database and show what is in it
#   make test   build .venv and run the test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The demo never touches your real ~/.gstack unless you point DEMO_ROOT at it.
DEMO_ROOT ?= $(CURDIR)/.demo
DEMO_DB := $(DEMO_ROOT)/plantune.db
# `make demo` ends by serving the demo database in Datasette; DEMO_SERVE=0 skips that so
# scripts and CI can run the demo to completion.
DEMO_SERVE ?= 1
SERVE_PORT ?= 8001

.PHONY: demo test bench serve clean venv

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	@echo "State root: $(DEMO_ROOT)"
	GSTACK_STATE_ROOT=$(DEMO_ROOT) PLANTUNE_DB=$(DEMO_DB) $(BIN)/plantune init
	GSTACK_STATE_ROOT=$(DEMO_ROOT) PLANTUNE_DB=$(DEMO_DB) $(BIN)/plantune status
	@if [ "$(DEMO_SERVE)" != "0" ]; then \
	  echo "Browsing the demo database (DEMO_SERVE=0 skips this step):"; \
	  GSTACK_STATE_ROOT=$(DEMO_ROOT) PLANTUNE_DB=$(DEMO_DB) $(BIN)/plantune serve --port $(SERVE_PORT); \
	fi

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	@for f in benchmarks/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) $(DEMO_ROOT) build *.egg-info

# Browse your own database (or DB=path) in Datasette, read-only.
serve: $(STAMP)
	$(BIN)/plantune serve --port $(SERVE_PORT) $(if $(DB),--db $(DB))
