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


@pytest.fixture
def db_url(tmp_path: Path, _pg_database) -> str:  # type: ignore[no-untyped-def]
    if _pg_database is None:
        return f"sqlite:///{tmp_path / 'arena.sqlite'}"
    schema = f"t_{uuid.uuid4().hex[:12]}"
    url = _pg_database.render_as_string(hide_password=False)
    eng = make_engine(url)
    with eng.begin() as c:
        c.execute(text(f'CREATE SCHEMA "{schema}"'))
    eng.dispose()
    return _pg_database.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(
        hide_password=False)


@pytest.fixture
def engine(db_url: str):  # type: ignore[no-untyped-def]
    eng = make_engine(db_url)
    migrate(eng)
    yield eng
    eng.dispose()


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(datetime(2026, 1, 4, tzinfo=timezone.utc))  # a Sunday
