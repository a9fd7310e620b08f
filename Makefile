# Two commands set everything up on a fresh machine (Python 3.11+ with venv):
#   make demo   — installs into .venv, then runs the offline demo on SQLite (no network at run time, no keys)
#   make test   — installs into .venv (with test extras), then runs the quick test suite (make test-slow: the slow
#                 end-to-end tests; make test-all: both, as CI does)
# ARENA_TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres make test  runs the suite on PostgreSQL.
# make bench runs the PostgreSQL benchmarks against ARENA_BENCH_DATABASE_URL (default the local server), or skips them.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.arena-installed

.PHONY: demo test test-slow test-all bench install browser clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/arena demo

# The quick suite (the slow end-to-end tests are left out: see SLOW_MODULES in tests/conftest.py).
test: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist worksteal -m "not slow" --durations=12

# The slow end-to-end tests alone (processes killed and resumed, replays, the wheel, the browser); CI runs both.
test-slow: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist worksteal -m slow

test-all: test test-slow

# Debian's Chromium for the browser test (tests/web/test_browser.py skips without it). Needs root.
browser:
	command -v chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_mark.py
	$(BIN)/python benchmarks/bench_scoring.py
	$(BIN)/python benchmarks/bench_parse.py
	$(BIN)/python benchmarks/bench_fact_versions.py
	$(BIN)/python benchmarks/bench_round.py
	$(BIN)/python benchmarks/bench_render.py
	$(BIN)/python benchmarks/bench_render_changed.py
	$(BIN)/python benchmarks/bench_memo.py
	$(BIN)/python benchmarks/bench_overall_board.py
	$(BIN)/python benchmarks/validity.py --quick
	$(BIN)/python benchmarks/validity_research.py --quick
	$(BIN)/python benchmarks/bench_scale_pg.py
	$(BIN)/python benchmarks/bench_workers.py

clean:
	rm -rf $(VENV) db/*.sqlite* .pytest_cache .hypothesis
