"""Snapshot: several reads of the store that must agree, done on one snapshot — side by side on PostgreSQL.

`read_together(engine, readers)` runs each reader (a function of a Session) and returns their results in order.
On PostgreSQL the first reader's connection opens a REPEATABLE READ transaction and exports its snapshot
(`pg_export_snapshot()`); every other reader runs in a thread on a connection of its own that imports it (`SET
TRANSACTION SNAPSHOT`), so all of them see exactly the same committed facts — a fill recorded meanwhile is in
every frame or in none — while the server works on their statements at once (the way `pg_dump --jobs` reads a
database). Elsewhere (SQLite) the readers run one after the other in one session, in one transaction.

Readers only read: the transactions are rolled back at the end.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine
from sqlmodel import Session

Reader = Callable[[Session], Any]
_SNAPSHOT_ID = re.compile(r"^[0-9A-F]+-[0-9A-F]+(-[0-9]+)?$")


def _on(conn: Connection, reader: Reader) -> Any:
    with Session(bind=conn) as session:
        return reader(session)


def _one_by_one(engine: Engine, readers: Sequence[Reader]) -> list[Any]:
    """The readers in turn, in one transaction: REPEATABLE READ on PostgreSQL; on SQLite begun by hand (the
    driver begins one only before a write, so each read would otherwise see the latest commit)."""
    conn = engine.connect()
    if engine.dialect.name == "postgresql":
        conn = conn.execution_options(isolation_level="REPEATABLE READ")
    with conn:
        if engine.dialect.name == "sqlite":
            conn.exec_driver_sql("BEGIN")
        try:
            return [_on(conn, reader) for reader in readers]
        finally:
            conn.rollback()


def read_together(engine: Engine, readers: Sequence[Reader]) -> list[Any]:
    """The readers' results, in order, all read on one snapshot of the store (see the module docstring)."""
    if engine.dialect.name != "postgresql" or len(readers) < 2:
        return _one_by_one(engine, readers)
    with engine.connect().execution_options(isolation_level="REPEATABLE READ") as lead:
        snapshot = lead.execute(text("SELECT pg_export_snapshot()")).scalar_one()
        if not _SNAPSHOT_ID.match(snapshot):  # (a utility statement takes no bound value: checked, then quoted)
            raise RuntimeError(f"unexpected snapshot id from pg_export_snapshot(): {snapshot!r}")

        imported = threading.Semaphore(0)

        def follow(reader: Reader) -> Any:
            conn = None
            try:  # (released whatever happens: the lead waits for it)
                conn = engine.connect().execution_options(isolation_level="REPEATABLE READ")
                conn.execute(text(f"SET TRANSACTION SNAPSHOT '{snapshot}'"))
            except BaseException:
                if conn is not None:
                    conn.close()
                raise
            finally:
                imported.release()
            with conn:
                try:
                    return _on(conn, reader)
                finally:
                    conn.rollback()

        with ThreadPoolExecutor(max_workers=len(readers) - 1) as pool:
            others = [pool.submit(follow, reader) for reader in readers[1:]]
            for _ in others:  # the lead reads only once every follower holds the snapshot (an error in the
                imported.acquire()  # lead's transaction would end the export)
            try:
                first = _on(lead, readers[0])
            except BaseException:
                wait(others)  # (the followers' outcome no longer matters: the lead's error is the one raised)
                raise
            results = [f.result() for f in others]
        lead.rollback()
    return [first, *results]
