"""The memo table: derived results kept in the store's `memo` table under a hash of their inputs, one `kind` of
result per `MemoTable` (a cohort's frames, its board, its board's parts: `cache`).

A memo is never a fact: any row may be deleted at any time and is recomputed. So a memo table fails soft — when
the store cannot be read or written (a read-only replica, a locked SQLite file, a race with another render
storing the same key) or a value cannot be encoded, the caller computes what it needs all the same, and the table
logs one warning. Each cohort keeps its `keep` most recently used entries of each kind.

Beside the table: the process's one memory (`MEMORY`, an LRU sized in rows, each kind of value a `Recent` in it),
`kept` (a result from memory, else the table, else computed and put back in both) and `one_reading` (within a
render, one reading of the store serves every reader that asks the same).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import Any, Generic, TypeVar

import pandas as pd
import psycopg
import psycopg.sql
import pyarrow as pa
from sqlalchemy import Table, delete, func, insert, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from arena.clock import utc
from arena.store.tables import MemoRow, table_of

log = logging.getLogger(__name__)
V = TypeVar("V")
_CHUNK = 500


class MemoTable(Generic[V]):
    """The `memo` table's entries of one `kind`, with their payload codec (bytes: `cache.codec`)."""

    _warned: set[str] = set()
    table: Table = table_of(MemoRow)

    def __init__(self, engine: Engine, kind: str, encode: Callable[[V], bytes], decode: Callable[[Any], V], *,
                 keep: int, decode_many: Callable[[list[Any]], list[V]] | None = None):
        """`decode_many`, when given, decodes a batch of payloads at once (as `decode` would, one by one); a
        batch it refuses is decoded one by one, so one entry of another format costs only itself."""
        self.engine, self.kind, self.encode, self.decode, self.keep = engine, kind, encode, decode, keep
        self.what = f"memo ({kind})"
        self.decode_many = decode_many

    def _soft(self, action: str, exc: Exception) -> None:
        if self.what not in MemoTable._warned:
            log.warning("%s %s failed (computed instead): %s", self.what, action, str(exc).splitlines()[0])
            MemoTable._warned.add(self.what)

    def load(self, keys: Iterable[str]) -> dict[str, V]:
        keys, t = list(keys), self.table
        rows: list[tuple[str, Any]] = []
        try:
            with self.engine.connect() as conn:
                if conn.dialect.name == "postgresql" and conn.dialect.driver == "psycopg":
                    rows = _binary_rows(conn, t, keys)
                else:
                    for lo in range(0, len(keys), _CHUNK):
                        rows += conn.execute(select(t.c.key, t.c.payload)
                                             .where(t.c.key.in_(keys[lo : lo + _CHUNK]))).all()
        except (SQLAlchemyError, psycopg.Error) as exc:
            self._soft("read", exc)
            return {}
        if self.decode_many is not None and len(rows) > 1:
            try:
                return dict(zip([k for k, _ in rows], self.decode_many([p for _, p in rows])))
            except (ValueError, KeyError, TypeError):
                pass  # (one by one below: the entries that decode are kept)
        found: dict[str, V] = {}
        for key, payload in rows:
            try:
                found[key] = self.decode(payload)
            except (ValueError, KeyError, TypeError) as exc:  # an entry of another format: recompute
                self._soft("decoding an entry", exc)
        return found

    def heads(self, keys: Iterable[str], length: int) -> dict[str, Any]:
        """key → the first `length` characters (bytes) of its stored payload, for the stored `keys` (a cheap check
        of which entries a process already holds decoded)."""
        keys, t = list(keys), self.table
        try:
            with self.engine.connect() as conn:
                return {k: head for lo in range(0, len(keys), _CHUNK)
                        for k, head in conn.execute(select(t.c.key, func.substr(t.c.payload, 1, length))
                                                    .where(t.c.key.in_(keys[lo : lo + _CHUNK])))}
        except SQLAlchemyError as exc:
            self._soft("read", exc)
            return {}

    def save(self, entries: Mapping[str, tuple[Any, V]], used: Iterable[str], now: datetime, *,
             replace: bool = False) -> None:
        """Store `entries` (key → (cohort, value)) and stamp the `used` keys; with `replace`, an entry whose key
        is stored already takes the new value, else the stored one stays."""
        now, used, t = utc(now), list(used), self.table
        try:
            with self.engine.begin() as conn:
                for lo in range(0, len(used), _CHUNK):
                    conn.execute(update(t).where(t.c.key.in_(used[lo : lo + _CHUNK])).values(used_at=now))
                if not entries:
                    return
                keys = list(entries)
                if replace:
                    for lo in range(0, len(keys), _CHUNK):
                        conn.execute(delete(t).where(t.c.key.in_(keys[lo : lo + _CHUNK])))
                    present: set[str] = set()
                else:
                    present = {k for lo in range(0, len(keys), _CHUNK)
                               for k in conn.execute(select(t.c.key).where(t.c.key.in_(keys[lo : lo + _CHUNK]))).scalars()}
                rows = []
                for k, (c, v) in entries.items():
                    if k not in present:
                        try:
                            payload = self.encode(v)
                        except (TypeError, ValueError) as exc:  # a value the codec does not hold: not kept
                            self._soft("encoding an entry", exc)
                            continue
                        rows.append(dict(key=k, kind=self.kind, cohort=str(c), payload=payload, stored_at=now,
                                         used_at=now))
                if rows:
                    conn.execute(insert(t), rows)
                by_cohort: dict[str, list[str]] = {}
                for row in rows:
                    by_cohort.setdefault(row["cohort"], []).append(row["key"])
                for cohort, written in by_cohort.items():  # what was just written stays, whatever the clock says
                    mine = (t.c.kind == self.kind) & (t.c.cohort == cohort) & t.c.key.not_in(written)
                    keep = (select(t.c.key).where(mine)
                            .order_by(t.c.used_at.desc(), t.c.key).limit(max(self.keep - len(written), 0)))
                    conn.execute(delete(t).where(mine, t.c.key.not_in(keep.scalar_subquery())))
        except SQLAlchemyError as exc:  # e.g. read-only, locked, or another render stored the same key first
            self._soft("write", exc)


def _binary_rows(conn: Connection, table: Table, keys: list[str]) -> list[tuple[str, Any]]:
    """(key, payload) of the stored `keys`, read by psycopg in binary: a bytes payload travels as its bytes, not
    as hex text twice its size to be parsed back (what a fresh process reading every cohort's frame-cache entry
    would otherwise pay on top of the bytes themselves)."""
    statement = psycopg.sql.SQL("SELECT {}, {} FROM {} WHERE {} = ANY(%s)").format(
        psycopg.sql.Identifier("key"), psycopg.sql.Identifier("payload"), psycopg.sql.Identifier(table.name),
        psycopg.sql.Identifier("key"))
    with conn.connection.driver_connection.cursor(binary=True) as cur:  # type: ignore[union-attr]
        return cur.execute(statement, [keys]).fetchall()


def kept(keys: Mapping[Any, str], memory: Recent[V], table: MemoTable[V] | None,
         compute: Callable[[list[Any]], Mapping[Any, V]], *, filed: Callable[[Any], str],
         now: datetime | None, store_held: bool = False) -> dict[Any, V]:
    """name → its value, for every name of `keys` (name → the key of its inputs): from this process's `memory`,
    else from the memo `table`, else from `compute(the missing names)`. Computed values are stored in the table
    (filed under `filed(name)`, e.g. its cohort), every value is kept in memory, and `now` stamps the stored
    entries used (no table, or no `now`: memory alone). With `store_held`, a value held in memory is stored too
    where the table lacks it: a key named by content alone may have been computed against another database.
    The board cache, the model comparisons and the agent standings' and skill-vs-luck slices keep their results
    through it; the frame cache, whose entries serve while their markets' versions hold (a check on the decoded
    entry, not on its key) and whose process memory is checked against the stored nonces, writes the steps
    itself."""
    held = memory.get_many(keys.values())
    store = table if table is not None and now is not None else None
    loaded = store.load([k for k in dict.fromkeys(keys.values()) if k not in held]) if store is not None else {}
    missing = [n for n, k in keys.items() if k not in held and k not in loaded]
    made = dict(compute(missing)) if missing else {}
    out = {n: held[k] if k in held else loaded[k] if k in loaded else made[n] for n, k in keys.items()
           if k in held or k in loaded or n in made}
    if store is not None:
        fresh = {keys[n]: (filed(n), made[n]) for n in made}
        if store_held:
            fresh.update({k: (filed(n), held[k]) for n, k in keys.items() if k in held})
        store.save(fresh, [k for k in dict.fromkeys(keys.values()) if (k in held or k in loaded) and k not in fresh],
                   now)
    memory.put_many({keys[n]: v for n, v in out.items()})
    return out


def _rows(value: Any) -> int:
    if isinstance(value, (pd.DataFrame, pd.Series)):
        return len(value)
    if isinstance(value, pa.Table):
        return value.num_rows
    if isinstance(value, (Mapping, list, tuple)):
        return len(value)
    return 0


def rows_of(value: Any) -> int:
    """A value's size in the process memory's unit, at least 1: its rows (a frame's, an Arrow table's, a
    container's items; a dataclass's fields' rows, one level deep — sizing must cost far less than keeping)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return 1 + sum(_rows(getattr(value, f.name)) for f in dataclasses.fields(value))
    return 1 + _rows(value)


class Memory:
    """A process's one least-recently-used memory: (kind, key) → value, least recently used dropped first once
    the values' sizes (rows: `rows_of`) pass `budget`, whatever their kind. Thread-safe; values are shared, never
    changed."""

    def __init__(self, budget: int):
        self.budget, self.used, self.lock = budget, 0, threading.Lock()
        self.items: OrderedDict[tuple[str, str], tuple[Any, int]] = OrderedDict()
        _ALL.add(self)

    def clear(self) -> None:
        with self.lock:
            self.items.clear()
            self.used = 0


_ALL: weakref.WeakSet[Memory] = weakref.WeakSet()
MEMORY = Memory(8_000_000)  # the process's memory: decoded memo entries and what is derived from them


def forget_all() -> None:
    """Empty the process memory: what a fresh process starts with (tests and benchmarks use it to compare a result
    from memory with one from the facts alone)."""
    for memory in list(_ALL):
        memory.clear()


class Recent(Generic[V]):
    """One kind of value in the process memory (`MEMORY`), by key: what this process decoded or computed lately.
    Each kind names what its keys are; `size` gives a value's size (its rows by default)."""

    _kinds: set[str] = set()

    def __init__(self, kind: str, size: Callable[[V], int] = rows_of, *, memory: Memory | None = None):
        if memory is None:
            if kind in Recent._kinds:
                raise ValueError(f"two kinds of value named {kind!r} in the process memory")
            Recent._kinds.add(kind)
        self.kind, self.size, self.memory = kind, size, memory if memory is not None else MEMORY

    def get_many(self, keys: Iterable[str]) -> dict[str, V]:
        m = self.memory
        with m.lock:
            found = {}
            for k in keys:
                held = m.items.get((self.kind, k))
                if held is not None:
                    m.items.move_to_end((self.kind, k))
                    found[k] = held[0]
            return found

    def get_or_make(self, key: str, make: Callable[[], V]) -> V:
        """The value kept under `key`, or `make()` kept under it (a value may be None)."""
        found = self.get_many([key])
        if key in found:
            return found[key]
        value = make()
        self.put_many({key: value})
        return value

    def clear(self) -> None:
        """Forget this kind's values (the other kinds' stay)."""
        m = self.memory
        with m.lock:
            for k in [k for k in m.items if k[0] == self.kind]:
                m.used -= m.items.pop(k)[1]

    def put_many(self, values: Mapping[str, V]) -> None:
        sized = [(k, v, self.size(v)) for k, v in values.items()]
        m = self.memory
        with m.lock:
            for k, v, size in sized:
                old = m.items.pop((self.kind, k), None)
                if old is not None:
                    m.used -= old[1]
                m.items[(self.kind, k)] = (v, size)
                m.used += size
            while m.used > m.budget and len(m.items) > 1:
                _, (_, dropped) = m.items.popitem(last=False)
                m.used -= dropped


_SCOPE: ContextVar[dict[Hashable, Any] | None] = ContextVar("one_reading", default=None)


@contextmanager
def one_reading() -> Iterator[None]:
    """Within the block, anything asked through `read_once` with the same key answers from its first reading (a
    render asks for its page keys, its standings and its model comparisons: one reading of the store serves them)."""
    token = _SCOPE.set({})
    try:
        yield
    finally:
        _SCOPE.reset(token)


T = TypeVar("T")


def read_once(key: Hashable, compute: Callable[[], T]) -> T:
    """Within `one_reading`, `compute()` once per `key` (which must name everything the result depends on: the
    database, the time, the arguments); outside it, every time."""
    scope = _SCOPE.get()
    if scope is None:
        return compute()
    if key not in scope:
        scope[key] = compute()
    value: T = scope[key]
    return value


__all__ = ["MEMORY", "Memory", "MemoTable", "Recent", "forget_all", "kept", "one_reading", "read_once", "rows_of"]
