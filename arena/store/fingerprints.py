"""Fingerprints: cheap summaries of the facts a cohort's frames are read from, so a reader can tell which cohorts
changed without reading their rows.

A cohort's frames as of T (`store.frames`: forecast set, bets, portfolios) are a function of
- the cohort row and its agents;
- its fills recorded by T;
- its decisions (those completed by T, and all of them: a bet reads its decision's cash and limit);
- its decisions' forecasts (those visible at T, and all of them: a bet reads its stated probability);
- the resolutions recorded by T of the markets it touched;
- the prices fetched and observed by T of the markets it holds open positions in (a position's value, and its bid);
- its portfolio snapshots marked by T (the daily marks its risk columns read).

Every one of those tables only grows (fills, forecasts, resolutions and snapshots are append-only facts; agents
and cohorts are created once), except that compaction deletes old snapshots of settled markets and a
decision's row is updated while it runs. So each set is summarised by (count, max id, sum of ids) of its rows:
an appended row moves the max id, a row crossing the T filter moves the count and the sum, a deleted one moves
the count. `cohort_marks` gives the first five per cohort in one statement each; `market_marks` the last two
per market (`MarketMarks`), for a cohort's reader to fold over the markets it recorded
(`services.frame_cache`).

A row edited in place is not something the arena does to a fact, but the summaries also carry the sums of the
values the frames read (shares, costs, prices, probabilities, a decision's cash and limit), so a hand edit of
those is seen too. Not seen: an edit that leaves every sum unchanged, an edit of a resolution's payouts
without a new version (versions are how the arena records a change), or of a market's kind (fixed when the
market is first stored).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import Any, TypeVar

import numpy as np
from sqlalchemy import BigInteger, String, and_, any_, bindparam, case, cast, func, select
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Engine
from sqlmodel import Session

from arena.store.tables import (AgentRow, CohortRow, DecisionRow, FillRow, ForecastRow, PortfolioSnapshotRow,
                                PriceSnapshotRow, ResolutionRow)

Marks = tuple[int, ...]
# Sums of the values the frames read, beside the id summaries: a row edited in place by hand (which the arena
# itself never does to a fact) moves them too.
_FILL_VALUES = (FillRow.shares, FillRow.cost_micros, FillRow.cash_micros, FillRow.price_ppm)
_SNAPSHOT_VALUES = (PortfolioSnapshotRow.total_value_micros,)  # the daily marks the risk columns read
SNAPSHOT_WIDTH = 3 + len(_SNAPSHOT_VALUES)  # the portfolio snapshots' summary: the last fields of a cohort's marks
_DECISION_VALUES = (DecisionRow.cash_at_start_micros, DecisionRow.max_bet_micros)
_FORECAST_VALUES = (cast(func.round(ForecastRow.probability * 1_000_000_000), BigInteger),
                    func.coalesce(ForecastRow.market_price_ppm, -1), ForecastRow.replicate)


def summary(ids: Any, when: Any = None, values: Sequence[Any] = ()) -> list[Any]:
    """count, max and sum of `ids`, and the sums of `values` (integer expressions), over the rows where `when`
    holds (all rows without it)."""
    def kept(x: Any) -> Any:
        return x if when is None else case((when, x), else_=None)

    return [func.count(kept(ids)), func.coalesce(func.max(kept(ids)), 0), func.coalesce(func.sum(kept(ids)), 0),
            *(func.coalesce(func.sum(kept(v)), 0) for v in values)]


def in_markets(conn: Any, q: Any, column: Any, ids: Sequence[str]) -> list[Any]:
    """Rows of `q` (its first column the market id) restricted to `column` in `ids`: one array parameter on
    PostgreSQL (an IN list of 10⁴ values costs more to parse than the query), chunks of an IN list elsewhere."""
    if not ids:
        return []
    if conn.dialect.name == "postgresql":
        return conn.execute(q.where(column == any_(bindparam("ids", type_=ARRAY(String)))), {"ids": list(ids)}).all()
    return [r for part in chunks(list(ids)) for r in conn.execute(q.where(column.in_(part))).all()]


def chunks(values: Sequence[Any], size: int = 5_000) -> list[Sequence[Any]]:
    return [values[i:i + size] for i in range(0, len(values), size)]


_SCOPE: ContextVar[dict[Any, dict[int, Marks]] | None] = ContextVar("cohort_marks_scope", default=None)


@contextmanager
def one_reading() -> Iterator[None]:
    """Within the block, `cohort_marks` asked again for the same cohorts, time and database answers from its
    first reading (a render asks for its page keys, its standings and its model comparisons: one reading of
    the store serves the three), and so does anything asked through `read_once`."""
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
    if ("once", key) not in scope:
        scope[("once", key)] = compute()  # type: ignore[assignment]
    return scope[("once", key)]  # type: ignore[return-value]


def cohort_marks(session: Session, cohort_ids: Sequence[int], as_of: datetime, *,
                 beside: Engine | None = None) -> dict[int, Marks]:
    """cohort id → a tuple of integers summarising its cohort row, agents, fills by `as_of`, decisions and
    forecasts (see the module docstring); equal tuples mean equal facts of those kinds. With `beside` (the
    session's engine, when the caller does not need one snapshot for everything it reads), the forecasts — the
    largest join — are aggregated on a second connection while the session aggregates the rest: the driver lets
    go of the interpreter while a statement runs."""
    beside = beside if beside is not None and shared_by_threads(beside) else None
    scope = _SCOPE.get()
    if scope is None:
        return _cohort_marks(session, cohort_ids, as_of, beside)
    bind = session.get_bind()
    key = (bind.url.render_as_string(hide_password=True), id(bind), as_of)
    if key not in scope:
        scope[key] = {}
    known = scope[key]
    missing = [c for c in cohort_ids if c not in known]
    if missing:
        found = _cohort_marks(session, missing, as_of, beside)
        known.update(found)
        known.update({c: None for c in missing if c not in found})  # type: ignore[misc]  # no such cohort
    return {c: known[c] for c in cohort_ids if known.get(c) is not None}


def without_snapshots(marks: Marks | None) -> Marks | None:
    """A cohort's marks less its portfolio snapshots' summary: what names its fills, decisions and forecasts alone
    (a market's page shows those, not the daily marks)."""
    return None if marks is None else tuple(marks[:-SNAPSHOT_WIDTH])


def shared_by_threads(engine: Engine) -> bool:
    """Whether another thread's connection sees the same database (not so for in-memory SQLite: one per thread)."""
    return engine.dialect.name != "sqlite" or engine.url.database not in (None, "", ":memory:")


def _completed_by(as_of: datetime) -> Any:
    """A decision completed by `as_of` (its forecasts are then visible, and its bets read)."""
    return and_(DecisionRow.completed_at.is_not(None), DecisionRow.completed_at <= as_of)  # type: ignore[union-attr]


def _forecast_marks(conn: Any, part: Sequence[int], as_of: datetime) -> dict[int, list[Any]]:
    seen = and_(_completed_by(as_of), ForecastRow.as_of <= as_of)
    return dict((cid, rest) for cid, *rest in conn.execute(
        select(DecisionRow.cohort_id, *summary(ForecastRow.id, values=_FORECAST_VALUES),
               *summary(ForecastRow.id, seen))
        .join(DecisionRow, DecisionRow.id == ForecastRow.decision_id)
        .where(DecisionRow.cohort_id.in_(part)).group_by(DecisionRow.cohort_id)))  # type: ignore[attr-defined]


def _forecast_marks_beside(engine: Engine, parts: list[Sequence[int]], as_of: datetime) -> list[dict[int, list[Any]]]:
    with Session(engine) as s:
        return [_forecast_marks(s.connection(), part, as_of) for part in parts]


def _cohort_marks(session: Session, cohort_ids: Sequence[int], as_of: datetime,
                  engine: Engine | None = None) -> dict[int, Marks]:
    conn = session.connection()
    marks: dict[int, list[int]] = {}
    parts = chunks(list(cohort_ids))
    with ThreadPoolExecutor(1) as pool:
        beside = pool.submit(_forecast_marks_beside, engine, parts, as_of) if engine is not None else None
        for i, part in enumerate(parts):
            for cid, start, *agents in conn.execute(
                    select(CohortRow.id, CohortRow.starting_cash_micros, *summary(AgentRow.id))
                    .outerjoin(AgentRow, AgentRow.cohort_id == CohortRow.id)
                    .where(CohortRow.id.in_(part)).group_by(CohortRow.id, CohortRow.starting_cash_micros)):  # type: ignore[attr-defined]
                marks[cid] = [int(start), *map(int, agents)]
            fills = dict((cid, rest) for cid, *rest in conn.execute(
                select(FillRow.cohort_id, *summary(FillRow.id, values=_FILL_VALUES))
                .where(FillRow.cohort_id.in_(part), FillRow.at <= as_of).group_by(FillRow.cohort_id)))  # type: ignore[attr-defined]
            decisions = dict((cid, rest) for cid, *rest in conn.execute(
                select(DecisionRow.cohort_id, *summary(DecisionRow.id, values=_DECISION_VALUES),
                       *summary(DecisionRow.id, _completed_by(as_of)))
                .where(DecisionRow.cohort_id.in_(part)).group_by(DecisionRow.cohort_id)))  # type: ignore[attr-defined]
            snapshots = dict((cid, rest) for cid, *rest in conn.execute(
                select(PortfolioSnapshotRow.cohort_id, *summary(PortfolioSnapshotRow.id, values=_SNAPSHOT_VALUES))
                .where(PortfolioSnapshotRow.cohort_id.in_(part),  # type: ignore[attr-defined]
                       PortfolioSnapshotRow.as_of <= as_of)
                .group_by(PortfolioSnapshotRow.cohort_id)))
            forecasts = beside.result()[i] if beside is not None else _forecast_marks(conn, part, as_of)
            for cid in part:
                if cid in marks:
                    for found, width in ((fills, 3 + len(_FILL_VALUES)), (decisions, 6 + len(_DECISION_VALUES)),
                                         (forecasts, 6 + len(_FORECAST_VALUES)),
                                         (snapshots, SNAPSHOT_WIDTH)):
                        marks[cid] += [int(v) for v in found.get(cid, [0] * width)]
    return {cid: tuple(m) for cid, m in marks.items()}


class MarketMarks:
    """Per market: (count, max id, sum of ids) of its resolutions recorded by `as_of`, then of its price snapshots
    fetched and observed by `as_of` — the latter read only for the markets in `priced` (zeros for the others),
    since only an open position's value reads a price. `upto` (max resolution id, max snapshot id) leaves out
    rows with larger ids. `fold` sums them over one cohort's markets. `registry` (market → row, extended here)
    lets a caller keep its cohorts' markets as row numbers across calls instead of looking names up each time."""

    def __init__(self, session: Session, market_ids: Sequence[str], priced: Sequence[str], as_of: datetime,
                 upto: tuple[int, int] | None = None, registry: dict[str, int] | None = None):
        conn = session.connection()
        names = sorted(set(market_ids) | set(priced))
        self.row = registry if registry is not None else {}
        for m in names:
            self.row.setdefault(m, len(self.row))
        self.table = np.zeros((len(self.row), 6), dtype=np.int64)
        res = (select(ResolutionRow.market_id, *summary(ResolutionRow.id))
               .where(ResolutionRow.recorded_at <= as_of, *([ResolutionRow.id <= upto[0]] if upto else []))
               .group_by(ResolutionRow.market_id))
        snap = (select(PriceSnapshotRow.market_id, *summary(PriceSnapshotRow.id))
                .where(PriceSnapshotRow.fetched_at <= as_of, PriceSnapshotRow.observed_at <= as_of,
                       *([PriceSnapshotRow.id <= upto[1]] if upto else []))
                .group_by(PriceSnapshotRow.market_id))
        for q, col, ids in ((res, ResolutionRow.market_id, names), (snap, PriceSnapshotRow.market_id, sorted(set(priced)))):
            cols = slice(0, 3) if q is res else slice(3, 6)
            for mid, *vals in in_markets(conn, q, col, ids):
                if mid in self.row:
                    self.table[self.row[mid], cols] = [int(v) for v in vals]

    def rows(self, markets: Sequence[str]) -> np.ndarray:
        return np.fromiter(map(self.row.__getitem__, markets), dtype=np.int64, count=len(markets))

    def fold(self, groups: Sequence[tuple[Any, Any]]) -> list[Marks]:
        """For each (markets, priced) group — one cohort's markets and those it holds open positions in, as names
        or as row numbers (`rows`) — the resolution summaries of `markets` and the price summaries of `priced`,
        counts and sums added, max ids maxed (zeros for an empty list)."""
        out = np.zeros((len(groups), 6), dtype=np.int64)
        for first, pick in ((0, 0), (3, 1)):
            lists = [g[pick] if isinstance(g[pick], np.ndarray) else self.rows(g[pick]) for g in groups]
            lens = np.fromiter((len(x) for x in lists), dtype=np.int64, count=len(lists))
            if not lens.sum():
                continue
            block = self.table[np.concatenate(lists), first:first + 3]
            nonempty = lens > 0
            starts = (np.cumsum(lens) - lens)[nonempty]
            out[nonempty, first] = np.add.reduceat(block[:, 0], starts)
            out[nonempty, first + 1] = np.maximum.reduceat(block[:, 1], starts)
            out[nonempty, first + 2] = np.add.reduceat(block[:, 2], starts)
        return [tuple(int(v) for v in row) for row in out]


__all__ = ["MarketMarks", "Marks", "SNAPSHOT_WIDTH", "chunks", "cohort_marks", "in_markets", "one_reading",
           "read_once", "shared_by_threads", "summary", "without_snapshots"]
