"""A market's history as its page shows it: its facts, its prices over time, the agents' trades on it, its
resolutions (every version) and how the agents forecast it — one query per table for every touched market or a
few. Reads the store; never writes.

`market_history` filters the prices by `as_of` itself (a price observed or fetched after it is left out); for the
other facts it relies on a store copied as of that time (`read.point_in_time.store_as_of`), where a fill or
resolution recorded later does not exist. Must not import the web.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.read.market_forecasts import market_forecasts
from arena.read.where_in import where_in
from arena.store.tables import AgentRow, CohortRow, FillRow, MarketRow, PriceSnapshotRow, ResolutionRow


class MarketFacts(NamedTuple):
    id: str
    venue: str
    question: str  # untrusted text, as are description and url
    description: str | None
    kind: str
    status: str
    outcomes: Any  # as stored (JSON list)
    outcome_labels: Any
    close_time: datetime | None
    url: str
    category: str | None


class PricePoint(NamedTuple):
    market_id: str
    outcome: str
    observed_at: datetime
    price_ppm: int


class Trade(NamedTuple):
    market_id: str
    at: datetime
    agent_id: int
    agent: str
    cohort: str
    kind: str
    outcome: str
    shares: int
    price_ppm: int | None
    cash_micros: int


class ResolutionFact(NamedTuple):
    market_id: str
    version: int
    kind: str
    payouts: Any  # as stored (JSON object: outcome → payout ppm)
    resolved_at: datetime | None
    recorded_at: datetime
    source: str


@dataclass(frozen=True)
class MarketHistory:
    """The facts of some markets: prices by market, observation time and id; trades by time, cohort, agent and
    id; resolutions by market and version; `forecasts`: market id → (forecasts, mean P(YES)) as
    `read.market_forecasts` counts them."""

    markets: list[MarketFacts]  # in the order the store returns them
    prices: list[PricePoint]
    trades: list[Trade]
    resolutions: list[ResolutionFact]
    forecasts: dict[str, tuple[int, float]]


def market_history(engine: Engine, as_of: datetime, market_ids: Sequence[str] | None = None) -> MarketHistory:
    """The history of the markets `market_ids` (None: every market in the store), one query per table. Prices
    are filtered by `as_of` here; the rest relies on a store copied as of `as_of`."""
    with engine.connect() as conn:
        mq = select(MarketRow.id, MarketRow.venue, MarketRow.question, MarketRow.description, MarketRow.kind,
                    MarketRow.status, MarketRow.outcomes, MarketRow.outcome_labels, MarketRow.close_time,
                    MarketRow.url, MarketRow.category)
        markets = [MarketFacts._make(m) for m in conn.execute(where_in(mq, MarketRow.id, market_ids)).all()]
        pq = (select(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome, PriceSnapshotRow.observed_at,
                     PriceSnapshotRow.price_ppm)
              .where(PriceSnapshotRow.observed_at <= as_of, PriceSnapshotRow.fetched_at <= as_of)
              .order_by(PriceSnapshotRow.market_id, PriceSnapshotRow.observed_at, PriceSnapshotRow.id))
        prices = [PricePoint._make(r) for r in conn.execute(where_in(pq, PriceSnapshotRow.market_id, market_ids))]
        tq = (select(FillRow.market_id, FillRow.at, FillRow.agent_id, AgentRow.name, CohortRow.name, FillRow.kind,
                     FillRow.outcome, FillRow.shares, FillRow.price_ppm, FillRow.cash_micros)
              .join(AgentRow, AgentRow.id == FillRow.agent_id).join(CohortRow, CohortRow.id == FillRow.cohort_id)
              # by time, then seat (ids made in lineup order), then the seat's own fills in the order recorded:
              # seats deciding at once record their fills in any order, which must not reorder the page
              .order_by(FillRow.at, FillRow.cohort_id, FillRow.agent_id, FillRow.id))
        trades = [Trade._make(r) for r in conn.execute(where_in(tq, FillRow.market_id, market_ids)).all()]
        rq = (select(ResolutionRow.market_id, ResolutionRow.version, ResolutionRow.kind, ResolutionRow.payouts,
                     ResolutionRow.resolved_at, ResolutionRow.recorded_at, ResolutionRow.source)
              .order_by(ResolutionRow.market_id, ResolutionRow.version))
        resolutions = [ResolutionFact._make(r)
                       for r in conn.execute(where_in(rq, ResolutionRow.market_id, market_ids)).all()]
        forecasts = market_forecasts(conn, market_ids)
    return MarketHistory(markets, prices, trades, resolutions, forecasts)


__all__ = ["MarketFacts", "MarketHistory", "PricePoint", "ResolutionFact", "Trade", "market_history"]
