"""Shared fixtures: a fresh, migrated database per test (SQLite file by default; PostgreSQL when
ARENA_TEST_DATABASE_URL names one — each test then gets its own schema in a throw-away database), a fixed
clock, and the location of ../shared (tests that need it skip cleanly when it is absent)."""

from __future__ import annotations

import os
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from arena.clock import FixedClock
from arena.store.engine import make_engine, migrate, normalize_url

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
TEST_DB_URL = os.environ.get("ARENA_TEST_DATABASE_URL", "")


def pytest_report_header(config):  # type: ignore[no-untyped-def]
    backend = make_url(normalize_url(TEST_DB_URL)).get_backend_name() if TEST_DB_URL else "sqlite"
    return f"arena test database: {backend}"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared is not beside the project")
    return SHARED


@pytest.fixture(scope="session")
def _pg_database():  # type: ignore[no-untyped-def]
    """A throw-away PostgreSQL database for this test session (dropped at the end)."""
    if not TEST_DB_URL:
        yield None
        return
    base = make_url(normalize_url(TEST_DB_URL))
    name = f"arena_test_{uuid.uuid4().hex[:10]}"
    admin = make_engine(base.render_as_string(hide_password=False)).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    yield base.set(database=name)
    with admin.connect() as c:
        c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def _fresh_url(tmp_path: Path, pg_database, name: str) -> str:  # type: ignore[no-untyped-def]
    """A new, empty database: a SQLite file `name` under `tmp_path`, or a new schema of the session's PostgreSQL
    database."""
    if pg_database is None:
        return f"sqlite:///{tmp_path / name}"
    schema = f"t_{uuid.uuid4().hex[:12]}"
    eng = make_engine(pg_database.render_as_string(hide_password=False))
    with eng.begin() as c:
        c.execute(text(f'CREATE SCHEMA "{schema}"'))
    eng.dispose()
    return pg_database.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(
        hide_password=False)


@pytest.fixture
def db_url(tmp_path: Path, _pg_database) -> str:  # type: ignore[no-untyped-def]
    return _fresh_url(tmp_path, _pg_database, "arena.sqlite")


@pytest.fixture
def new_url(tmp_path: Path, _pg_database):  # type: ignore[no-untyped-def]
    """A maker of fresh, empty databases (SQLite files, or schemas of the test's PostgreSQL database)."""
    return lambda: _fresh_url(tmp_path, _pg_database, f"{uuid.uuid4().hex[:8]}.sqlite")


@pytest.fixture
def engine(db_url: str):  # type: ignore[no-untyped-def]
    eng = make_engine(db_url)
    migrate(eng)
    yield eng
    eng.dispose()


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(datetime(2026, 1, 4, tzinfo=timezone.utc))  # a Sunday


@pytest.fixture
def one_bet_cohort():  # type: ignore[no-untyped-def]
    """A function (engine, stake in USD) → (cohort, t0, later): one market at 0.40 on t0, a cohort whose one
    agent "a" buys YES for the stake with a stated P(YES) of 0.9, and the price moved to 0.70 at `later` (t0 + 3 days);
    nothing resolved."""
    from datetime import datetime, timedelta, timezone

    from arena.domain.decision import Bet, Decision
    from arena.domain.market import YES, Market, Quote
    from arena.domain.sizing import CohortRules
    from arena.money import Money, Price
    from arena.usecases import decide, ingest
    from arena.usecases.cohorts import LineupEntry, start_cohort
    from arena.store.engine import session_scope

    def build(engine, stake):  # type: ignore[no-untyped-def]
        t0 = datetime(2026, 1, 4, tzinfo=timezone.utc)
        m = Market(id="sim:1", venue="sim", question="?", close_time=t0 + timedelta(days=30))
        with session_scope(engine) as s:
            ingest.record_observations(s, t0, [m], [Quote("sim:1", {YES: Price.of("0.40")}, t0, t0, source="t")])
            cohort, _ = start_cohort(s, t0, CohortRules(), [LineupEntry("a")], t0)

        class Buy:
            name = "a"

            def decide(self, view):  # type: ignore[no-untyped-def]
                return Decision((Bet("sim:1", YES, Money.of(stake), stated_probability=0.9),))

        decide.run_round(engine, cohort, {"a": Buy()}, "r1", t0)
        later = t0 + timedelta(days=3)
        with session_scope(engine) as s:
            ingest.record_observations(s, later, quotes=[Quote("sim:1", {YES: Price.of("0.70")}, later, later,
                                                               source="t")])
        return cohort, t0, later

    return build


# --- the slow end-to-end tests: `make test` leaves them out (-m "not slow"), `make test-slow` and CI run them ---
# Whole modules that run the arena as processes (demo, replay, scheduler, wheel install, browser) or build large
# stores per test; single tests are marked in their modules with @pytest.mark.slow.
SLOW_MODULES = {
    "tests/integration/test_install.py", "tests/integration/test_replay_run.py", "tests/integration/test_cli_demo.py",
    "tests/integration/test_scheduler_start.py", "tests/integration/test_frame_cache.py",
    "tests/integration/test_read_model_joins.py", "tests/integration/test_decomposition_service.py",
    "tests/integration/test_healing.py", "tests/integration/test_ops_guards.py", "tests/web/test_browser.py",
    "tests/web/test_incremental_render.py", "tests/web/test_point_in_time.py",
    "tests/web/test_operations_render_state.py", "tests/integration/test_demo_frontier.py",
    "tests/integration/test_board_cache.py", "tests/integration/test_standings.py",
}
SLOW_TESTS = {
    "tests/integration/test_statistics.py::test_intervals_bracket_the_leaderboard_and_are_reproducible",
    "tests/integration/test_standings.py::test_demo_verdict_headline_is_not_fooled_by_the_metric_gamer",
    "tests/integration/test_decision_risk.py::test_the_cli_prints_and_exports_them",
    "tests/integration/test_abstain.py::test_leaving_questions_out_ranks_no_better_than_stating_half",
    "tests/unit/test_evidence.py::test_seats_of_equal_skill_are_told_apart_at_most_at_the_nominal_rate",
    "tests/unit/test_evidence.py::test_sequences_on_markets_keep_false_wins_within_alpha_under_daily_peeking",
    "tests/integration/test_sync.py::test_replay_settlement_matches_every_recorded_resolution",
    "tests/web/test_model_page.py::test_meta_analysis_rows_and_forest_plot_are_the_services_numbers",
    "tests/web/test_model_page.py::test_cohort_and_model_json_carry_the_pages_numbers_and_are_served_alike",
    "tests/web/test_model_page.py::test_cost_is_the_stored_calls_and_the_live_server_serves_the_same_page",
    "tests/integration/test_bench_parse_runs.py::test_bench_parse_runs_with_every_option",
    "tests/agents/test_lifecycle.py::test_demo_llm_adds_configured_agents_and_explains_missing_keys",
    "tests/agents/test_workers.py::test_a_killed_worker_s_orphaned_calls_still_count_against_the_endpoint_limit",
    "tests/agents/test_workers.py::test_a_killed_worker_s_seats_are_taken_over_once_its_lease_expires",
    "tests/integration/test_bad_inputs.py::test_demo_replay_skips_a_line_resolving_in_year_9999",
    "tests/integration/test_standings.py::test_leaderboard_fits_the_terminal_width_and_keeps_the_leading_columns",
    "tests/web/test_beyond_and_difficulty.py::"
    "test_leaderboard_json_and_model_page_carry_information_beyond_the_market",
    "tests/agents/test_contamination_replay.py::"
    "test_two_seats_with_different_cutoffs_are_ranked_on_their_clean_questions",
}


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    root = Path(str(config.rootpath))
    for item in items:
        module = Path(str(item.path)).relative_to(root).as_posix()
        if module in SLOW_MODULES or f"{module}::{item.originalname}" in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
