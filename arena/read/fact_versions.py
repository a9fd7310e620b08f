"""Fact versions: a counter per cohort and per market that the database raises in the transaction of every write
that can change what that cohort's pages and boards, or that market, show (migration 0018's triggers, so a
hand edit in SQL counts too). Equal versions mean nothing shown changed; a cohort or market with no write
since the counters were installed is at version 0.

A cohort's version also moves with the markets it holds open (an open cohort with a fill, a forecast or a
forecast-set question on the market); a completed cohort's does not, so a reader of a completed cohort's
markets keys on their market versions too."""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, literal, select, union
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import col

from arena.clock import utc
from arena.store.tables import (AgentRow, CohortVersionRow, DecisionRow, FillRow, ForecastQuestionRow, ForecastRow,
                                MarketVersionRow, PortfolioSnapshotRow, PriceSnapshotRow, ResolutionRow, table_of)


def cohort_versions(conn: Connection, cohort_ids: Iterable[int]) -> dict[int, int]:
    """Cohort id → version, for each of `cohort_ids` (0 when it has none yet)."""
    ids = sorted(set(cohort_ids))
    if not ids:
        return {}
    t = table_of(CohortVersionRow)
    found = dict(conn.execute(select(t.c.cohort_id, t.c.version).where(t.c.cohort_id.in_(ids))).tuples().all())
    return {i: int(found.get(i, 0)) for i in ids}


def market_versions(conn: Connection, market_ids: Iterable[str]) -> dict[str, int]:
    """Market id → version, for each of `market_ids` (0 when it has none yet); past WHOLE_READ ids, one read of
    every counter (cheaper than lists of their ids)."""
    ids = sorted(set(market_ids))
    if not ids:
        return {}
    if len(ids) > WHOLE_READ:
        every = all_market_versions(conn)
        return {i: every.get(i, 0) for i in ids}
    t = table_of(MarketVersionRow)
    found: dict[str, int] = {}
    for part in chunks(ids):
        found.update(conn.execute(select(t.c.market_id, t.c.version).where(t.c.market_id.in_(part))).tuples().all())
    return {i: int(found.get(i, 0)) for i in ids}


WHOLE_READ = 20_000


def versions_of(engine: Engine, cohort_ids: Iterable[int], market_ids: Iterable[str]
                ) -> tuple[dict[int, int], dict[str, int]]:
    """(cohort id → version, market id → version) for the given ones, on one connection."""
    with engine.connect() as conn:
        return cohort_versions(conn, cohort_ids), market_versions(conn, market_ids)


def all_market_versions(conn: Connection) -> dict[str, int]:
    """Market id → version, for every market with one (a market missing here is at version 0)."""
    t = table_of(MarketVersionRow)
    return {str(m): int(v) for m, v in conn.execute(select(t.c.market_id, t.c.version)).tuples().all()}


_KEPT: weakref.WeakKeyDictionary[Engine, bool] = weakref.WeakKeyDictionary()


def versions_kept(engine: Engine) -> bool:
    """Whether this store's triggers keep the versions (a store built by the migrations does; a point-in-time
    copy, built from the tables alone, does not — there every version stays 0 and names nothing)."""
    if _KEPT.get(engine):
        return True
    probe = ("SELECT 1 FROM pg_trigger WHERE tgname = 'fills_version_insert'" if engine.dialect.name == "postgresql"
             else "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = 'fills_version_insert'")
    try:
        with engine.connect() as conn:
            kept = conn.exec_driver_sql(probe).first() is not None
    except SQLAlchemyError:
        return False
    if kept:  # (a store without them may be migrated later: asked again then)
        _KEPT[engine] = True
    return kept


def cohort_markets(conn: Connection, cohort_ids: Sequence[int]) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    """(cohort id → every market its facts name: fills, forecasts and forecast-set questions; cohort id → the
    markets its fills and forecasts name — those the site gives a page), sorted; every fact as of any time."""
    named: dict[int, set[str]] = {int(c): set() for c in cohort_ids}
    touched: dict[int, set[str]] = {c: set() for c in named}
    for part in chunks(list(named)):
        q = union(select(FillRow.cohort_id, FillRow.market_id, literal(1)).where(col(FillRow.cohort_id).in_(part)),
                  select(AgentRow.cohort_id, ForecastRow.market_id, literal(1))
                  .join(AgentRow, AgentRow.id == ForecastRow.agent_id).where(col(AgentRow.cohort_id).in_(part)),
                  select(ForecastQuestionRow.cohort_id, ForecastQuestionRow.market_id, literal(0))
                  .where(col(ForecastQuestionRow.cohort_id).in_(part)))
        for cid, mid, traded in conn.execute(q):
            named[int(cid)].add(str(mid))
            if traded:
                touched[int(cid)].add(str(mid))
    return ({cid: sorted(ms) for cid, ms in named.items()}, {cid: sorted(ms) for cid, ms in touched.items()})


def fact_horizons(conn: Connection, markets_of: Mapping[int, Sequence[str]]) -> dict[int, datetime | None]:
    """cohort id → the latest time stamped on any fact a reader as of T filters by time, for each cohort of
    `markets_of` (its markets beside it): its fills, decisions completed, forecasts, forecast-set questions and
    daily marks, and its markets' resolutions and prices. None when it has none. Every reader as of a time at or
    after it sees all of them, so reads the same rows."""
    latest: dict[int, datetime | None] = {int(c): None for c in markets_of}

    def fold(key: int, t: Any) -> None:
        if t is not None:
            t = utc(t)
            if latest[key] is None or t > latest[key]:  # type: ignore[operator]
                latest[key] = t

    d = DecisionRow
    by_cohort = [(FillRow.cohort_id, FillRow.at), (d.cohort_id, d.completed_at),
                 (ForecastQuestionRow.cohort_id, ForecastQuestionRow.as_of),
                 (PortfolioSnapshotRow.cohort_id, PortfolioSnapshotRow.as_of)]
    for part in chunks(list(latest)):
        for key, at in by_cohort:
            for cid, t in conn.execute(select(key, func.max(at)).where(col(key).in_(part)).group_by(key)):
                fold(int(cid), t)
        for cid, t in conn.execute(select(d.cohort_id, func.max(ForecastRow.as_of))
                                   .join(d, d.id == ForecastRow.decision_id)
                                   .where(col(d.cohort_id).in_(part)).group_by(d.cohort_id)):
            fold(int(cid), t)
    markets = sorted({m for ms in markets_of.values() for m in ms})
    market_at: dict[str, Any] = {}
    for part in chunks(markets):
        for q in (select(ResolutionRow.market_id, func.max(ResolutionRow.recorded_at))
                  .where(col(ResolutionRow.market_id).in_(part)).group_by(ResolutionRow.market_id),
                  select(PriceSnapshotRow.market_id, func.max(PriceSnapshotRow.fetched_at))
                  .where(col(PriceSnapshotRow.market_id).in_(part)).group_by(PriceSnapshotRow.market_id),
                  select(PriceSnapshotRow.market_id, func.max(PriceSnapshotRow.observed_at))
                  .where(col(PriceSnapshotRow.market_id).in_(part)).group_by(PriceSnapshotRow.market_id)):
            for mid, t in conn.execute(q):
                if t is not None and (market_at.get(mid) is None or utc(t) > market_at[mid]):
                    market_at[mid] = utc(t)
    for cid, ms in markets_of.items():
        for m in ms:
            fold(int(cid), market_at.get(m))
    return latest


def chunks(values: Sequence[Any], size: int = 2_000) -> list[Sequence[Any]]:
    """`values` in slices an IN list of each can hold."""
    return [values[i:i + size] for i in range(0, len(values), size)]
