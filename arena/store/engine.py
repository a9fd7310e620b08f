"""The database engine: SQLite by default (a file under db/, WAL, foreign keys on), any SQLAlchemy URL from
ARENA_DATABASE_URL (PostgreSQL is tested), and the versioned migrations that create the schema."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlmodel import Session, create_engine

ROOT = Path(__file__).resolve().parents[2]
DB_DIR = ROOT / "db"
MIGRATIONS = DB_DIR / "migrations"
DEFAULT_URL = f"sqlite:///{DB_DIR / 'arena.sqlite'}"


def database_url(url: str | None = None) -> str:
    """The URL to use: the argument, else ARENA_DATABASE_URL, else the default SQLite file."""
    return url or os.environ.get("ARENA_DATABASE_URL") or DEFAULT_URL


def normalize_url(url: str) -> str:
    """Plain postgres URLs get the psycopg (v3) driver, the one the project installs."""
    u = make_url(url)
    if u.drivername in ("postgresql", "postgres"):
        u = u.set(drivername="postgresql+psycopg")
    return u.render_as_string(hide_password=False)


def make_engine(url: str | None = None, *, echo: bool = False) -> Engine:
    url = normalize_url(database_url(url))
    if url.startswith("sqlite"):
        path = make_url(url).database
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, echo=echo, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record):  # type: ignore[no-untyped-def]
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return engine
    return create_engine(url, echo=echo, pool_pre_ping=True)


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to `revision` with the versioned migrations in db/migrations (idempotent); a revision
    older than the current one downgrades."""
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        current = current_revision_on(conn)
        if revision != "head" and current is not None and current > revision:
            command.downgrade(cfg, revision)
        else:
            command.upgrade(cfg, revision)


def current_revision_on(conn) -> str | None:  # type: ignore[no-untyped-def]
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(conn).get_current_revision()


def head_revision() -> str:
    """The newest migration in db/migrations."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    head = ScriptDirectory.from_config(cfg).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


@contextmanager
def session_scope(engine: Engine) -> Iterator[Session]:
    """One transaction: commit on success, roll back everything on any error (no partial writes)."""
    with Session(engine, expire_on_commit=False) as session:
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise


def open_store(url: str | None = None) -> Engine:
    """An engine on a migrated database."""
    engine = make_engine(url)
    migrate(engine)
    return engine
