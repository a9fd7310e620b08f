"""The database engine: SQLite by default (a file in the data directory, WAL, foreign keys on), any SQLAlchemy
URL from ARENA_DATABASE_URL (PostgreSQL is tested), and the versioned migrations that create the schema.

User data never goes into the installed package: the data directory is ARENA_DATA_DIR, else `db/` under the
current working directory (in a checkout, the repo's gitignored `db/`). The migrations ship as package data
(`arena._migrations`, the repo's db/migrations/) and are found with importlib.resources."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.resources import files
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import ArgumentError, DatabaseError, NoSuchModuleError
from sqlalchemy.pool import ConnectionPoolEntry
from sqlmodel import Session, create_engine

from arena.errors import DatabaseURLError, SchemaError, StoreError

MIGRATIONS = Path(str(files("arena._migrations")))  # a real directory: Alembic reads env.py and versions/ by path
DATA_DIR_ENV = "ARENA_DATA_DIR"
DEFAULT_NAME = "arena.sqlite"


def data_dir() -> Path:
    """Where the default databases (and their backups) go: ARENA_DATA_DIR, else ./db (absolute, not created)."""
    return Path(os.environ.get(DATA_DIR_ENV) or "db").resolve()


def default_url() -> str:
    """The default database: arena.sqlite in the data directory."""
    return f"sqlite:///{data_dir() / DEFAULT_NAME}"
URL_FIX = "give an SQLAlchemy URL like sqlite:///path/to/arena.sqlite or postgresql://user@host:5432/dbname"


def database_url(url: str | None = None) -> str:
    """The URL to use: the argument, else ARENA_DATABASE_URL, else the default SQLite file."""
    return url or os.environ.get("ARENA_DATABASE_URL") or default_url()


def parse_url(url: str) -> URL:
    """The parsed URL, or a StoreError that does not echo the text (it may hold a password)."""
    try:
        return make_url(url)
    except (ArgumentError, ValueError):
        scheme = url.split("://", 1)[0] if "://" in url else ""
        what = f"a {scheme}:// URL that cannot be parsed" if scheme and "@" not in scheme else "not a database URL"
        raise DatabaseURLError(f"the database URL (--db or ARENA_DATABASE_URL) is {what}", fix=URL_FIX) from None


def shown(url: str | URL) -> str:
    """A URL as it may be shown: the password hidden."""
    return (parse_url(url) if isinstance(url, str) else url).render_as_string(hide_password=True)


def normalize_url(url: str) -> str:
    """Plain postgres URLs get the psycopg (v3) driver, the one the project installs."""
    u = parse_url(url)
    if u.drivername in ("postgresql", "postgres"):
        u = u.set(drivername="postgresql+psycopg")
    return u.render_as_string(hide_password=False)


def make_engine(url: str | None = None, *, echo: bool = False, read_only: bool = False) -> Engine:
    """An engine on `url`. `read_only`: a SQLite file is opened as it is (its journal mode left alone, its
    directory not created) — the file of a read command is never changed by opening it."""
    url = normalize_url(database_url(url))
    try:
        return _make_engine(url, echo, read_only)
    except NoSuchModuleError:
        driver = parse_url(url).drivername
        raise DatabaseURLError(f"unknown database driver {driver!r}",
                         fix="use sqlite:///FILE or postgresql://… (the psycopg driver is installed)") from None
    except ImportError as exc:
        driver = parse_url(url).drivername
        raise DatabaseURLError(f"the Python driver for {driver!r} is not installed ({exc.name or exc})",
                         fix="use sqlite:///FILE or postgresql://…, or install that driver") from None


def _make_engine(url: str, echo: bool, read_only: bool = False) -> Engine:
    if url.startswith("sqlite"):
        path = make_url(url).database
        if path and path != ":memory:" and not read_only:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, echo=echo, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA foreign_keys=ON")
            if not read_only:  # WAL is persistent: an arena database has it since it was created
                cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return engine
    # PostgreSQL's JIT compiles a plan's expressions once its cost passes jit_above_cost; the arena's big reads are
    # one pass over many rows, so compiling each of them costs more than it saves. Off, unless the URL's
    # connection options set it.
    given = make_url(url).query.get("options", "")
    given = " ".join(given) if isinstance(given, tuple) else given
    options = given if "jit" in given else f"{given} -c jit=off".strip()
    return create_engine(url, echo=echo, pool_pre_ping=True, connect_args={"options": options})


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to `revision` with the versioned migrations (db/migrations; idempotent); a revision
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


def fresh_store(engine: Engine) -> Engine:
    """Start the database of `engine` over as a fresh arena store and return an engine on it (`engine` is
    disposed). Fills and resolutions are append-only (triggers refuse DELETE), so the store is not emptied
    row by row: a SQLite database's files are removed (its side files first, so a kill part-way leaves either
    the old database or none) and created again; on PostgreSQL every migration is undone and redone in one
    transaction — a kill leaves the old store or the fresh one, never half of either."""
    url = engine.url.render_as_string(hide_password=False)
    path = sqlite_path(url)
    engine.dispose()
    if path is not None:
        for side in ("-journal", "-wal", "-shm", ""):
            Path(f"{path}{side}").unlink(missing_ok=True)
        return open_store(url)
    from alembic import command
    from alembic.config import Config

    engine = open_store(url)
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "base")
        command.upgrade(cfg, "head")
    return engine


def current_revision_on(conn: Connection) -> str | None:
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


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (None for other databases and in-memory SQLite)."""
    u = parse_url(url)
    if u.get_backend_name() != "sqlite" or not u.database or u.database == ":memory:":
        return None
    return Path(u.database)


def _unreachable(engine: Engine, exc: DatabaseError) -> StoreError:
    engine.dispose()
    reason = str(exc.orig).strip().splitlines()[0] if exc.orig is not None and str(exc.orig).strip() else "?"
    return StoreError(f"cannot open the database {shown(engine.url)}: {reason}",
                      fix="check that the server runs and the URL's host, port, database and user are right "
                          "(for SQLite: that the directory exists and is writable)")


def known_revisions() -> set[str]:
    """Every schema revision this version's migrations know."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return {r.revision for r in ScriptDirectory.from_config(cfg).walk_revisions()}


def _future(engine: Engine, current: str) -> SchemaError:
    return SchemaError(f"{shown(engine.url)} is at schema revision {current!r}, which this version of the arena "
                       f"does not know (its newest is {head_revision()!r}): a newer arena wrote it",
                       fix="use that newer arena with it (or a database written by this version)")


def open_store(url: str | None = None, *, create: bool = True) -> Engine:
    """An engine on a migrated database (created when it does not exist yet, unless `create` is False: then a
    missing SQLite file is a StoreError, as for read commands). A database that cannot be reached is a
    StoreError naming the URL (password hidden) and the server's first line of complaint; one at a schema
    revision this version does not know (a newer arena's) a SchemaError, before anything is written."""
    _not_in_memory(url)
    if not create:
        _must_exist(url)
    engine = make_engine(url)
    try:
        current = current_revision(engine)
        if current is not None and current not in known_revisions():
            engine.dispose()
            raise _future(engine, current)
        migrate(engine)
    except DatabaseError as exc:  # unreachable server, wrong credentials, a file that is not a database
        raise _unreachable(engine, exc) from None
    return engine


def _not_in_memory(url: str | None) -> None:
    """A command's database outlives the command: an in-memory SQLite one would report work and keep none."""
    u = parse_url(normalize_url(database_url(url)))
    if u.get_backend_name() == "sqlite" and (not u.database or u.database == ":memory:"):
        raise DatabaseURLError("an in-memory SQLite database (sqlite://) keeps nothing once the command ends",
                               fix="name a file, e.g. --db sqlite:///db/arena.sqlite")


def _must_exist(url: str | None) -> str:
    full = normalize_url(database_url(url))
    path = sqlite_path(full)
    if path is not None and not path.is_file():
        raise StoreError(f"no database at {path}",
                         fix="pass --db with the URL of an existing arena database (or set ARENA_DATABASE_URL)")
    return full


def open_existing_store(url: str | None = None) -> Engine:
    """The engine of a read command: on an arena database at this version's schema, which it never creates,
    migrates or upgrades. A SQLite file that does not exist is a StoreError (neither it nor its directory is
    created); a database without the arena's schema (empty, another application's), at an older revision or
    at one this version does not know is a SchemaError naming the fix — nothing is written to it."""
    _not_in_memory(url)
    full = _must_exist(url)
    engine = make_engine(full, read_only=True)
    try:
        current = current_revision(engine)
    except DatabaseError as exc:
        raise _unreachable(engine, exc) from None
    head = head_revision()
    if current == head:
        return engine
    engine.dispose()
    where = shown(engine.url)
    if current is None:
        raise SchemaError(f"{where} is not an arena database (it has no arena schema); read commands never "
                          f"create one", fix="name an arena database with --db (or create one with `arena migrate`)")
    if current not in known_revisions():
        raise _future(engine, current)
    raise SchemaError(f"{where} is at schema revision {current!r}, older than this version's {head!r}; read "
                      f"commands never upgrade a database", fix=f"run `arena migrate --db URL` on it first")
