# cdc_lake: two commands for a newcomer — `make demo`, then `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.cdc_lake_installed

.PHONY: setup demo test test-slow unit-test lint build docs clean-lake clean

setup: $(STAMP)

# The venv is created when missing; the stamp re-runs the install when pyproject.toml changes.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	$(BIN)/python -m cdc_lake.env --install
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m cdc_lake.demo

# pytest exits 5 when it collects no tests; that is not a failure of the suite.
test: $(STAMP)
	$(BIN)/python -m pytest -ra || [ $$? -eq 5 ]
	$(MAKE) lint

# Heavier runs (real processes killed mid-build, larger workloads): CI runs them after `make test`.
test-slow: $(STAMP)
	$(BIN)/python -m pytest -ra -m slow || [ $$? -eq 5 ]

# dbt unit tests alone. Their fixtures take column types from the real relations, so the models
# must exist: `dbt run --empty` creates any that are missing (and changes no data).
unit-test: $(STAMP)
	$(BIN)/dbt seed
	$(BIN)/dbt run --empty
	$(BIN)/dbt test --select test_type:unit

lint: $(STAMP)
	$(BIN)/ruff check src pytests
	$(BIN)/sqlfluff lint models macros tests

build: $(STAMP)
	$(BIN)/dbt build

docs: $(STAMP)
	$(BIN)/dbt docs generate

clean-lake:
	rm -rf .lake target logs

clean: clean-lake
	rm -rf $(VENV)
