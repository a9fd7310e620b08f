"""Point in time: the store as it stood at a time T, so every page, board and statistic computed from it shows
exactly the facts recorded up to T — and the same code serves "now" and "as of T".

`store_as_of(engine, T)` yields `engine` itself when nothing in it was recorded after T, else a temporary SQLite
copy holding only what had been recorded by T:

- append-only facts by their recording time: fills (`at`), resolutions (`recorded_at`; the latest version as of
  T is then simply the latest kept), forecasts and portfolio snapshots (`as_of`), price snapshots
  (`fetched_at`), model calls, rejections and sync errors (`at`);
- cohorts created by T (with their agents); a cohort completed after T is still open;
- decisions claimed by T; one completed after T is still "claimed", with no actions, reasoning or sizing yet;
- sync and job runs started by T; one finished after T is still "running", with no counts or error yet;
- markets first seen by T. A market row changed after T is the one fact the store keeps no history of: its
  status is re-derived (resolved once a resolution was recorded by T, else closed once its close time passed,
  else open); its question and description are shown as last synced.

Tables this module does not know are filtered by their first time column (or copied whole if they have none).
The version counters (`cohort_versions`, `market_versions`) are not copied: they count writes up to now, not
up to T, so a copy starts with none (every cohort and market at version 0).
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Table, func, inspect, insert, select, text
from sqlalchemy.engine import Connection, Engine
from sqlmodel import SQLModel, create_engine

import arena.store.tables  # noqa: F401 - registers every table on SQLModel.metadata
from arena.clock import utc

# table → the column that says when a row was recorded (rows after T do not exist as of T)
RECORDED_AT = {
    "markets": "first_seen_at", "price_snapshots": "fetched_at", "cohorts": "created_at", "decisions": "claimed_at",
    "rejections": "at", "forecasts": "as_of", "fills": "at", "resolutions": "recorded_at",
    "portfolio_snapshots": "as_of", "model_calls": "at", "sync_runs": "started_at", "sync_errors": "at",
    "job_runs": "started_at",
}
# table → columns written after the row was recorded: a value later than T means "not yet, as of T"
CHANGED_AT = {"markets": "updated_at", "cohorts": "completed_at", "decisions": "completed_at",
              "sync_runs": "finished_at", "job_runs": "finished_at"}
_SOURCE_BACKEND: weakref.WeakKeyDictionary[Engine, str] = weakref.WeakKeyDictionary()
_TIME_COLUMNS = ("at", "recorded_at", "as_of", "created_at", "started_at", "fetched_at", "first_seen_at")


def _naive_utc(t: datetime) -> datetime:
    """A stored time as naive UTC (how SQLite stores and returns it)."""
    return utc(t).replace(tzinfo=None)


def _time_column(table: Table) -> str | None:
    name = RECORDED_AT.get(table.name)
    return name or next((c for c in _TIME_COLUMNS if c in table.c), None)


NOT_COPIED = {"cohort_versions", "market_versions"}  # counters of every write up to now, not up to T


def _tables() -> list[Table]:
    return [t for t in SQLModel.metadata.sorted_tables if t.name not in NOT_COPIED]


def latest_recorded(conn: Connection) -> datetime | None:
    """The latest time at which anything in the store was recorded or changed (None for an empty store)."""
    latest: datetime | None = None
    present = set(inspect(conn).get_table_names())
    for table in _tables():
        if table.name not in present:
            continue
        for col in {_time_column(table), CHANGED_AT.get(table.name)} - {None}:
            t = conn.execute(select(func.max(table.c[col]))).scalar()
            if t is not None and (latest is None or utc(t) > latest):
                latest = utc(t)
    return latest


def recorded_after(engine: Engine, as_of: datetime) -> bool:
    """True when the store holds a fact recorded (or a row changed) after `as_of`."""
    with engine.connect() as conn:
        latest = latest_recorded(conn)
    return latest is not None and latest > utc(as_of)


def _market_status(row: dict[str, Any], resolved: set[str], t: datetime) -> str:
    if row["id"] in resolved:
        return "resolved"
    close = row.get("close_time")
    return "closed" if close is not None and utc(close) <= t else "open"


def rewind_row(name: str, row: dict[str, Any], t: datetime, resolved: set[str]) -> dict[str, Any]:
    """A row of table `name` as it stood at `t`: unchanged when it was last changed by `t`, else with the columns
    written after `t` reset ("not yet"); a market's status re-derived from `resolved` (the markets with a
    resolution recorded by `t`) and its close time."""
    changed = CHANGED_AT.get(name)
    if changed is None or row.get(changed) is None or utc(row[changed]) <= t:
        return row
    if name == "markets":
        row.update(status=_market_status(row, resolved, t))
    elif name == "cohorts":
        row.update(status="open", completed_at=None)
    elif name == "decisions":
        row.update(status="claimed", completed_at=None, cash_at_start_micros=None, max_bet_micros=None, actions=[],
                   reasoning="", error="")
    elif name == "sync_runs":
        row.update(status="running", finished_at=None, ok=0, skipped=0, failed=0, markets_changed=0,
                   snapshots_added=0, resolutions_recorded=0, error="")
    elif name == "job_runs":
        row.update(status="running", finished_at=None, counts={}, error="")
    else:
        row[changed] = None
    return row


# The same rewinds as `rewind_row`, as SQL over the copy (the SQLite-to-SQLite fast path).
_REWIND_SQL = {
    "markets": "UPDATE markets SET status = CASE WHEN id IN (SELECT market_id FROM resolutions WHERE kind != "
               "'unresolved') THEN 'resolved' WHEN close_time IS NOT NULL AND close_time <= :t THEN 'closed' "
               "ELSE 'open' END WHERE updated_at > :t",
    "cohorts": "UPDATE cohorts SET status = 'open', completed_at = NULL WHERE completed_at > :t",
    "decisions": "UPDATE decisions SET status = 'claimed', completed_at = NULL, cash_at_start_micros = NULL, "
                 "max_bet_micros = NULL, actions = '[]', reasoning = '', error = '' WHERE completed_at > :t",
    "sync_runs": "UPDATE sync_runs SET status = 'running', finished_at = NULL, ok = 0, skipped = 0, failed = 0, "
                 "markets_changed = 0, snapshots_added = 0, resolutions_recorded = 0, error = '' "
                 "WHERE finished_at > :t",
    "job_runs": "UPDATE job_runs SET status = 'running', finished_at = NULL, counts = '{}', error = '' "
                "WHERE finished_at > :t",
}


def _sqlite_file(engine: Engine) -> str | None:
    url = engine.url
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    return url.database


def _copy_sqlite(source: str, t: datetime, target: Engine) -> dict[str, int]:
    """SQLite to SQLite in the database engine itself: ATTACH the source, INSERT … SELECT what was recorded by
    `t`, then rewind the rows changed after `t` — no row passes through Python, so the copy costs what SQLite's
    own INSERT … SELECT costs."""
    stamp = _naive_utc(t).strftime("%Y-%m-%d %H:%M:%S.%f")  # how SQLAlchemy stores a time in SQLite
    counts: dict[str, int] = {}
    with target.connect() as conn:
        conn.exec_driver_sql("ATTACH DATABASE ? AS src", (source,))
        present = {r[0] for r in conn.exec_driver_sql("SELECT name FROM src.sqlite_master WHERE type = 'table'")}
        for table in _tables():
            if table.name not in present:
                continue
            have = {r[1] for r in conn.exec_driver_sql(f'PRAGMA src.table_info("{table.name}")')}
            cols = ", ".join(f'"{c.name}"' for c in table.c if c.name in have)
            where, params = "", {}
            col = _time_column(table)
            if col is not None:
                where, params = f' WHERE "{col}" <= :t', {"t": stamp}
            if table.name == "agents":
                where, params = " WHERE cohort_id IN (SELECT id FROM src.cohorts WHERE created_at <= :t)", {"t": stamp}
            result = conn.execute(text(f'INSERT INTO main."{table.name}" ({cols}) SELECT {cols} '
                                       f'FROM src."{table.name}"{where}'), params)
            counts[table.name] = result.rowcount
        for name, sql in _REWIND_SQL.items():
            if name in present:
                conn.execute(text(sql), {"t": stamp})
        if "alembic_version" in present:
            conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS alembic_version (version_num VARCHAR(32) NOT NULL)")
            conn.exec_driver_sql("INSERT INTO alembic_version SELECT version_num FROM src.alembic_version "
                                 "WHERE NOT EXISTS (SELECT 1 FROM main.alembic_version)")  # (a migrated target has it)
        conn.commit()
        conn.exec_driver_sql("DETACH DATABASE src")
    return counts


def copy_as_of(engine: Engine, as_of: datetime, target: Engine) -> dict[str, int]:
    """Copy into `target` (an empty database) the rows of `engine` recorded by `as_of`, rewound to how they stood
    then; returns the rows copied per table."""
    t = utc(as_of)
    SQLModel.metadata.create_all(target)
    source = _sqlite_file(engine)
    if source is not None and _sqlite_file(target) is not None:
        return _copy_sqlite(source, t, target)
    counts: dict[str, int] = {}
    with engine.connect() as src, target.begin() as dst:
        present = set(inspect(src).get_table_names())
        resolved: set[str] = set()
        if "resolutions" in present:
            res = SQLModel.metadata.tables["resolutions"]
            resolved = set(src.scalars(select(res.c.market_id).distinct()
                                       .where(res.c.recorded_at <= t, res.c.kind != "unresolved")))
        for table in _tables():
            if table.name not in present:
                continue
            q = select(table)
            col = _time_column(table)
            if col is not None:
                q = q.where(table.c[col] <= t)
            if table.name == "agents":
                cohorts = SQLModel.metadata.tables["cohorts"]
                q = q.where(table.c.cohort_id.in_(select(cohorts.c.id).where(cohorts.c.created_at <= t)))
            if "id" in table.c:
                q = q.order_by(table.c.id)
            rows = []
            for r in src.execute(q).mappings():
                row = rewind_row(table.name, dict(r), t, resolved)
                rows.append({k: _naive_utc(v) if isinstance(v, datetime) else v for k, v in row.items()})
            for i in range(0, len(rows), 5000):
                dst.execute(insert(table), rows[i:i + 5000])
            counts[table.name] = len(rows)
        if "alembic_version" in present:  # the schema revision the methodology page names
            revision = src.execute(text("SELECT version_num FROM alembic_version")).scalar()
            dst.execute(text("CREATE TABLE IF NOT EXISTS alembic_version (version_num VARCHAR(32) NOT NULL)"))
            if revision is not None and dst.execute(text("SELECT count(*) FROM alembic_version")).scalar() == 0:
                dst.execute(text("INSERT INTO alembic_version (version_num) VALUES (:v)"), {"v": revision})
    return counts


def remember_backend(engine: Engine, source: str) -> None:
    """Record that `engine` holds facts copied from a `source` database."""
    if source != engine.dialect.name:
        _SOURCE_BACKEND[engine] = source


def backend(engine: Engine) -> str:
    """The database the facts live in ("sqlite", "postgresql"): for a copy as of T, its source's."""
    return _SOURCE_BACKEND.get(engine, engine.dialect.name)


@contextmanager
def store_as_of(engine: Engine, as_of: datetime) -> Iterator[Engine]:
    """`engine` when it holds nothing recorded after `as_of`; else a temporary SQLite copy of the store as it
    stood at `as_of` (removed on exit)."""
    if not recorded_after(engine, as_of):
        yield engine
        return
    folder = Path(tempfile.mkdtemp(prefix="arena-as-of-"))
    # No foreign-key pragma: a fact kept may point at a row the copy leaves out (e.g. a table added later).
    past = create_engine(f"sqlite:///{folder / 'as-of.sqlite'}", connect_args={"check_same_thread": False})
    try:
        copy_as_of(engine, as_of, past)
        remember_backend(past, backend(engine))
        yield past
    finally:
        past.dispose()
        shutil.rmtree(folder, ignore_errors=True)


__all__ = ["CHANGED_AT", "NOT_COPIED", "RECORDED_AT", "backend", "copy_as_of", "latest_recorded", "recorded_after",
           "remember_backend", "rewind_row", "store_as_of"]
