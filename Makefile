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

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	@for f in benchmarks/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) $(DEMO_ROOT) build *.egg-info
