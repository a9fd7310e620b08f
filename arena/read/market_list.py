"""The markets as lists show them: each market's list facts (question, venue, category, status, close time) and
how each cohort used it (asked in its forecast set, bought by how many fills and agents). Reads the store; never
writes.

Each reader takes `as_of` and filters nothing by it: it relies on a store copied as of that time
(`read.point_in_time.store_as_of`), where a fill or forecast recorded later does not exist and a market's status
is the one it had then. Must not import the web.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from sqlalchemy import distinct, func, select
from sqlalchemy.engine import Engine
from sqlmodel import col

from arena.store.tables import AgentRow, FillRow, ForecastRow, MarketRow


class MarketListFacts(NamedTuple):
    id: str
    question: str  # untrusted text
    venue: str
    category: str | None
    status: str
    close_time: datetime | None  # as stored (naive UTC on SQLite)


def market_usage(engine: Engine, as_of: datetime, cohort_ids: Sequence[int] | None = None
                 ) -> tuple[dict[int, set[str]], dict[tuple[int, str], tuple[int, int]]]:
    """(cohort id → its forecast-set market ids, (cohort id, market id) → (buy fills, agents with one)), for the
    cohorts `cohort_ids` (None: every cohort). Relies on a store copied as of `as_of`."""
    fq = (select(AgentRow.cohort_id, ForecastRow.market_id).join(AgentRow, AgentRow.id == ForecastRow.agent_id)
          .where(ForecastRow.source == "forecast_set").distinct())
    bq = (select(FillRow.cohort_id, FillRow.market_id, func.count(), func.count(distinct(FillRow.agent_id)))
          .where(FillRow.kind == "buy").group_by(FillRow.cohort_id, FillRow.market_id))
    if cohort_ids is not None:
        fq = fq.where(col(AgentRow.cohort_id).in_(list(cohort_ids)))
        bq = bq.where(col(FillRow.cohort_id).in_(list(cohort_ids)))
    asked: dict[int, set[str]] = defaultdict(set)
    traded: dict[tuple[int, str], tuple[int, int]] = {}
    with engine.connect() as conn:
        for cid, mid in conn.execute(fq).all():
            asked[cid].add(mid)
        for cid, mid, n, agents in conn.execute(bq).all():
            traded[(cid, mid)] = (int(n), int(agents))
    return asked, traded


def market_list_facts(engine: Engine, as_of: datetime, ids: Sequence[str]) -> dict[str, MarketListFacts]:
    """market id → its list facts, for `ids` (read 5,000 at a time). Relies on a store copied as of `as_of`."""
    q = select(MarketRow.id, MarketRow.question, MarketRow.venue, MarketRow.category, MarketRow.status,
               MarketRow.close_time)
    out = {}
    with engine.connect() as conn:
        for lo in range(0, len(ids), 5000):
            chunk = list(ids[lo : lo + 5000])
            out.update({r[0]: MarketListFacts._make(r)
                        for r in conn.execute(q.where(col(MarketRow.id).in_(chunk))).all()})
    return out


__all__ = ["MarketListFacts", "market_list_facts", "market_usage"]
