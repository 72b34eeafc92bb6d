# plantune: two commands on a fresh clone.
#   make demo   build .venv, create a demo database and show what is in it
#   make test   build .venv, lint (ruff) and run the fast in-process test suite
# and, for contributors and CI:
#   make test-full  lint and every test (subprocess, installed-wheel, browser, Spark, slow)
#   make docs       regenerate the reference pages and build docs/ with MkDocs (--strict)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The demo never touches your real ~/.gstack unless you point DEMO_ROOT at it.
DEMO_ROOT ?= $(CURDIR)/.demo
DEMO_DB := $(DEMO_ROOT)/plantune.db
# What the demo analyses: a simulated history (default) or, with DEMO_SOURCE=gstack, the
# gstack stores already under DEMO_ROOT (e.g. make demo DEMO_ROOT=~/.gstack DEMO_SOURCE=gstack).
DEMO_SOURCE ?= simulate
DEMO_DAYS ?= 90
DEMO_SEED ?= 7
# Quoted: the paths may contain spaces.
DEMO_ENV := GSTACK_STATE_ROOT="$(DEMO_ROOT)" PLANTUNE_DB="$(DEMO_DB)"
ifeq ($(DEMO_SOURCE),gstack)
DEMO_INIT :=
DEMO_SYNTHETIC :=
# A gstack history has questions and answers but no pacing findings: calibrate from the
# question log. A very young history may still be too small; the demo says so and goes on.
DEMO_CALIBRATE := --source question-log
DEMO_TOLERATE := || echo "(skipped: not enough answered questions in the history yet)"
else
# A simulated demo lives in a demo database, where simulated rows count as real
# (`plantune init --demo` refuses a database that holds real history).
DEMO_INIT := --demo
DEMO_SYNTHETIC := --include-synthetic
DEMO_CALIBRATE :=
DEMO_TOLERATE :=
endif
# `make notebooks` opens JupyterLab on this database (the demo one unless you say otherwise).
NOTEBOOK_DB ?= $(DEMO_DB)
NOTEBOOK_SYNTHETIC ?= 1
# `make demo` ends by serving the demo database in Datasette; DEMO_SERVE=0 skips that so
# scripts and CI can run the demo to completion.
DEMO_SERVE ?= 1
SERVE_PORT ?= 8001

.PHONY: demo test test-full docs lint bench serve clean venv

venv: $(STAMP)

$(STAMP): pyproject.toml
	@echo "== Building $(VENV): plantune (editable) and its test tools; a few minutes the first time"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check --progress-bar on -e '.[test,docs]'
	@# Hooks start a fresh interpreter per call: ship bytecode so no call compiles
	@# (environments with PYTHONDONTWRITEBYTECODE never cache it themselves).
	$(BIN)/python -m compileall -q toolkit
	@# ... and the door rules parsed (toolkit/core/door_data.py: load).
	$(BIN)/python -c "from toolkit.core import door_data; door_data.compile_all()"
	touch $(STAMP)

demo: $(STAMP)
	@echo "== 1/5 Database: creating or upgrading $(DEMO_DB)"
	$(DEMO_ENV) $(BIN)/plantune init $(DEMO_INIT)
	$(DEMO_ENV) $(BIN)/plantune status
ifeq ($(DEMO_SOURCE),gstack)
	@echo "== 2/5 History: ingesting the gstack stores under $(DEMO_ROOT)"
	$(DEMO_ENV) $(BIN)/plantune ingest "$(DEMO_ROOT)"
else
	@echo "== 2/5 History: simulating $(DEMO_DAYS) days (seed $(DEMO_SEED)), replacing earlier simulated rows"
	$(DEMO_ENV) $(BIN)/plantune simulate --days $(DEMO_DAYS) --seed $(DEMO_SEED) --replace
endif
	@echo "== 3/5 Calibration: fitting the pacing threshold (about 20% of two-way decisions asked)"
	$(DEMO_ENV) $(BIN)/plantune calibrate $(DEMO_CALIBRATE) $(DEMO_SYNTHETIC) $(DEMO_TOLERATE)
	@echo "== 4/5 Notebooks: executing both against the demo database"
	$(DEMO_ENV) $(BIN)/plantune notebooks run $(DEMO_SYNTHETIC) --out "$(DEMO_ROOT)/notebooks" $(DEMO_TOLERATE)
	@echo "== 5/5 Done. Where everything is:"
	@echo "   database:  $(DEMO_DB)"
	@echo "   notebooks: $(DEMO_ROOT)/notebooks (open the .html files in a browser)"
	@if [ "$(DEMO_SERVE)" != "0" ]; then \
	  echo "   server:    http://127.0.0.1:$(SERVE_PORT)/plantune (starting now, to you only: open the sign-in link it prints; Ctrl-C stops it)"; \
	  $(DEMO_ENV) $(BIN)/plantune serve --port $(SERVE_PORT); \
	else \
	  echo "   server:    not started (DEMO_SERVE=0); make serve DB='$(DEMO_DB)' starts it on port $(SERVE_PORT)"; \
	fi

# ruff's rules are in pyproject.toml: lint, import order, and the formatter's layout.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# `make test` leaves out the tests marked `full` (tests/conftest.py says which: those that
# start processes, build wheels, drive a browser or Spark, or are slow); `make test-full`
# runs them too, with the slow ones (PLANTUNE_SLOW=1), as CI does.
TEST_MARK ?= not full

test: $(STAMP) lint
	@$(BIN)/python -m compileall -q toolkit
	$(BIN)/python -m pytest -m "$(TEST_MARK)" $(PYTEST_ARGS)

test-full: $(STAMP)
	PLANTUNE_SLOW=1 $(MAKE) --no-print-directory test TEST_MARK=

# The CLI reference and the schema page are generated (cog); tests/test_docs.py fails when
# the committed pages differ from what cog writes.
docs: $(STAMP)
	$(BIN)/cog -r docs/cli.md docs/schema.md
	$(BIN)/mkdocs build --strict

bench: $(STAMP)
	@test -x $(BIN)/sqlite-utils || $(BIN)/pip install --disable-pip-version-check -e '.[test,bench]'
	@for f in benchmarks/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) $(DEMO_ROOT) build dist site *.egg-info

.PHONY: notebooks notebooks-run
# JupyterLab refuses to start as root without --allow-root (containers, CI machines).
JUPYTER_ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
# JupyterLab is an optional extra (`pip install -e '.[notebooks]'`); the tests never need it.
notebooks: $(STAMP)
	@test -x $(BIN)/jupyter-lab || $(BIN)/pip install --disable-pip-version-check -e '.[test,notebooks]'
	PLANTUNE_DB="$(NOTEBOOK_DB)" PLANTUNE_INCLUDE_SYNTHETIC=$(NOTEBOOK_SYNTHETIC) \
	  $(BIN)/jupyter lab $(JUPYTER_ROOT_FLAG) notebooks/
# In JupyterLab a notebook's parameters are its first code cell (tagged parameters). To run
# both notebooks without JupyterLab, filling that cell as papermill's -p does (each
# NAME=VALUE becomes `plantune notebooks run --param NAME=VALUE`):
#   make notebooks-run NOTEBOOK_PARAMS="project=acme-storefront target=0.3"
NOTEBOOK_PARAMS ?=
notebooks-run: $(STAMP)
	PLANTUNE_DB=$(NOTEBOOK_DB) $(BIN)/plantune notebooks run \
	  $(if $(filter 1,$(NOTEBOOK_SYNTHETIC)),--include-synthetic) $(foreach p,$(NOTEBOOK_PARAMS),--param $(p))
# Browse your own database (or DB=path) in Datasette, read-only.
serve: $(STAMP)
	$(BIN)/plantune serve --port $(SERVE_PORT) $(if $(DB),--db "$(DB)")
