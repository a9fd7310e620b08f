"""Board cache: each cohort's board, computed once for the inputs it is computed from.

`scoring.board.cohort_boards` gives every cohort its own paired bootstraps and its own difficulty and IRT fits,
~0.2 s per cohort: a 100-cohort site spent most of its render recomputing boards of cohorts that had long
completed. A cohort's board is a pure function of the cohort's rows in the three input frames (forecast set,
bets, portfolios), the kinds of its agents, the board's options (rank key, draws, seed) and the scoring code, so
`cached_cohort_boards` keys each cohort by a SHA-256 over exactly those — the rows' content, column names and
dtypes, the options, the source of `arena.scoring` and the numpy and pandas versions — and computes only the
cohorts whose key is not stored yet. A key cannot go stale: a new fill, forecast, resolution or price moves
the key, and an old key is simply never asked for again. Nothing about the as-of enters the key except through
the rows, so "now" and "as of T" share the entries whose inputs agree.

The entries live in the store's `board_cache` table (a memo, not a fact: emptying it only costs time). Each
cohort keeps its `KEEP_PER_COHORT` most recently used entries. The cache never fails a read: when the store
cannot be written (a read-only replica, a locked SQLite file) the boards are computed and served all the same,
with one warning in the log.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Mapping
from datetime import datetime
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np
import orjson
import pandas as pd
from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from arena.clock import utc
from arena.scoring.board import cohort_boards
from arena.store.tables import BoardCacheRow

log = logging.getLogger(__name__)

FORMAT = 1  # of the key and the payload; bump when either changes shape
KEEP_PER_COHORT = 8
_TABLE = BoardCacheRow.__table__  # type: ignore[attr-defined]


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A hash of the scoring code and of the numerical libraries under it: a change to either moves every key."""
    h = hashlib.sha256(f"format {FORMAT} numpy {np.__version__} pandas {pd.__version__}".encode())
    for entry in sorted(resources.files("arena.scoring").iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".py"):
            h.update(entry.name.encode() + b"\0" + entry.read_bytes())
    return h.hexdigest()


def _rows_by_cohort(frame: pd.DataFrame) -> tuple[bytes, dict[Any, bytes]]:
    """The frame's shape (column names and dtypes) and, per cohort, its rows' content hashes in frame order."""
    shape = orjson.dumps([[str(c), str(t)] for c, t in frame.dtypes.items()])
    if not len(frame):
        return shape, {}
    hashes = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    codes, cohorts = pd.factorize(frame["cohort"], sort=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.cumsum(np.bincount(codes, minlength=len(cohorts)))[:-1]
    return shape, {c: part.tobytes() for c, part in zip(cohorts, np.split(hashes[order], bounds))}


def cohort_keys(forecasts: pd.DataFrame, bets: pd.DataFrame, portfolios: pd.DataFrame, *,
                kinds: Mapping[str, str], options: Mapping[str, Any]) -> dict[Any, str]:
    """cohort → the SHA-256 (hex) of everything its board is computed from, for every cohort in any frame."""
    parts = [_rows_by_cohort(f) for f in (forecasts, bets, portfolios)]
    head = hashlib.sha256(code_digest().encode() + orjson.dumps(dict(options), option=orjson.OPT_SORT_KEYS))
    for shape, _ in parts:
        head.update(shape)
    cohorts = list(dict.fromkeys(c for _, rows in parts for c in rows))
    agents: dict[Any, set[str]] = {}
    for f in (forecasts, bets, portfolios):
        if len(f):
            for c, a in f[["cohort", "agent"]].drop_duplicates().itertuples(index=False):
                agents.setdefault(c, set()).add(a)
    keys = {}
    for c in cohorts:
        h = head.copy()
        h.update(orjson.dumps([str(c), sorted((a, kinds.get(a)) for a in agents.get(c, ()))]))
        for _, rows in parts:
            block = rows.get(c, b"")
            h.update(len(block).to_bytes(8, "little") + block)
        keys[c] = h.hexdigest()
    return keys


def encode(frame: pd.DataFrame) -> str:
    """A board frame as JSON that `decode` turns back into an equal frame (floats exactly: orjson writes the
    shortest repr that reads back to the same double; NaN is written as null and restored by the dtype)."""
    return orjson.dumps({
        "format": FORMAT, "columns": [str(c) for c in frame.columns], "dtypes": [str(t) for t in frame.dtypes],
        "data": [frame[c].tolist() for c in frame.columns],
    }, option=orjson.OPT_SERIALIZE_NUMPY).decode()


def decode(payload: str) -> pd.DataFrame:
    doc = orjson.loads(payload)
    if doc.get("format") != FORMAT:
        raise ValueError(f"board cache payload format {doc.get('format')!r}, expected {FORMAT}")
    data: dict[str, Any] = {}
    for name, dtype, values in zip(doc["columns"], doc["dtypes"], doc["data"]):
        if dtype == "object":  # (a bare object array of strings would be inferred as str)
            data[name] = pd.Series(values, dtype=object)
        elif dtype in ("float64", "int64", "bool"):  # numpy reads null as NaN in a float array
            data[name] = np.array(values, dtype=dtype)
        else:
            data[name] = pd.array([np.nan if v is None else v for v in values], dtype=dtype)
    return pd.DataFrame(data, columns=doc["columns"], copy=False)


def _subset(frame: pd.DataFrame, cohorts: Iterable[Any]) -> pd.DataFrame:
    return frame[frame["cohort"].isin(list(cohorts))] if len(frame) else frame


class _Store:
    """The `board_cache` table, failing soft: a read or write error is logged once and the cache acts empty."""

    warned = False

    def __init__(self, engine: Engine):
        self.engine = engine

    def _soft(self, what: str, exc: Exception) -> None:
        if not _Store.warned:
            log.warning("board cache %s failed (boards are computed instead): %s", what, str(exc).splitlines()[0])
            _Store.warned = True

    def load(self, keys: Iterable[str]) -> dict[str, pd.DataFrame]:
        keys = list(keys)
        found: dict[str, pd.DataFrame] = {}
        try:
            with self.engine.connect() as conn:
                for lo in range(0, len(keys), 500):
                    chunk = keys[lo : lo + 500]
                    for key, payload in conn.execute(select(_TABLE.c.key, _TABLE.c.payload)
                                                     .where(_TABLE.c.key.in_(chunk))):
                        try:
                            found[key] = decode(payload)
                        except (ValueError, KeyError, TypeError) as exc:  # an entry of another format: recompute
                            self._soft("decoding an entry", exc)
        except SQLAlchemyError as exc:
            self._soft("read", exc)
            return {}
        return found

    def save(self, entries: Mapping[str, tuple[Any, pd.DataFrame]], used: Iterable[str], now: datetime) -> None:
        now = utc(now)
        used = list(used)
        try:
            with self.engine.begin() as conn:
                if used:
                    for lo in range(0, len(used), 500):
                        conn.execute(update(_TABLE).where(_TABLE.c.key.in_(used[lo : lo + 500])).values(used_at=now))
                if not entries:
                    return
                present = set(conn.execute(select(_TABLE.c.key).where(_TABLE.c.key.in_(list(entries)))).scalars())
                rows = [dict(key=k, cohort=str(c), payload=encode(f), stored_at=now, used_at=now)
                        for k, (c, f) in entries.items() if k not in present]
                if rows:
                    conn.execute(insert(_TABLE), rows)
                for cohort in {str(c) for c, _ in entries.values()}:
                    keep = (select(_TABLE.c.key).where(_TABLE.c.cohort == cohort)
                            .order_by(_TABLE.c.used_at.desc(), _TABLE.c.key).limit(KEEP_PER_COHORT))
                    conn.execute(delete(_TABLE).where(_TABLE.c.cohort == cohort,
                                                      _TABLE.c.key.not_in(keep.scalar_subquery())))
        except SQLAlchemyError as exc:  # e.g. read-only, locked, or another render stored the same key first
            self._soft("write", exc)


def cached_cohort_boards(engine: Engine, forecasts: pd.DataFrame, bets: pd.DataFrame, portfolios: pd.DataFrame,
                         *, now: datetime, kinds: Mapping[str, str], rank_by: str, n_boot: int,
                         seed: int) -> dict[Any, pd.DataFrame]:
    """`scoring.board.cohort_boards(forecasts, bets, portfolios, ...)`, equal frame for frame, computing only the
    cohorts whose inputs have no stored board yet and storing those (`now` stamps the entries' use)."""
    options = dict(rank_by=rank_by, n_boot=n_boot, seed=seed)
    keys = cohort_keys(forecasts, bets, portfolios, kinds=kinds, options=options)
    store = _Store(engine)
    hits = store.load(keys.values())
    missing = [c for c, k in keys.items() if k not in hits]
    computed = (cohort_boards(_subset(forecasts, missing), _subset(bets, missing), _subset(portfolios, missing),
                              kinds=kinds, **options) if missing else {})
    store.save({keys[c]: (c, computed[c]) for c in missing if c in computed},
               [k for k in keys.values() if k in hits], now)
    return {c: (hits[k] if k in hits else computed[c]) for c, k in keys.items() if k in hits or c in computed}


__all__ = ["FORMAT", "KEEP_PER_COHORT", "cached_cohort_boards", "code_digest", "cohort_keys", "decode", "encode"]
