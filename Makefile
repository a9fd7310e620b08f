# Two commands set everything up on a fresh machine (Python 3.11+ with venv):
#   make demo   — installs into .venv, then runs the offline demo on SQLite (no network at run time, no keys)
#   make test   — installs into .venv (with test extras), then runs the whole test suite
# ARENA_TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres make test  runs the suite on PostgreSQL.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.arena-installed

.PHONY: demo test bench install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/arena demo

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_mark.py
	$(BIN)/python benchmarks/bench_scoring.py

clean:
	rm -rf $(VENV) db/*.sqlite* .pytest_cache .hypothesis
