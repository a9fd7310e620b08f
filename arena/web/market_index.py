"""Markets as lists: the site's market index (every market the arena touched, with its venue, category, status,
close time and how much the cohorts used it) and each cohort's own markets (its forecast set and what its agents
traded), from what `read.market_list` reads once per list; the page only reshapes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.engine import Engine

from arena.clock import utc
from arena.read.market_list import MarketListFacts, market_list_facts, market_usage
from arena.web.env import page_path
from arena.read.touched_markets import touched_market_ids


@dataclass(frozen=True)
class MarketListRow:
    market_id: str
    href: str
    question: str  # untrusted: escaped by the template
    venue: str
    category: str
    status: str
    close_time: datetime | None
    cohorts: int  # cohorts that asked it in their forecast set or traded it
    in_forecast_set: bool  # (on a cohort's list) asked of every agent of the cohort
    bets: int  # buy fills
    bettors: int  # agents with a buy fill


@dataclass(frozen=True)
class MarketIndexPage:
    as_of: datetime
    rows: tuple[MarketListRow, ...]
    venues: tuple[str, ...]
    statuses: tuple[str, ...]


def _row(m: MarketListFacts, cohorts: int, in_set: bool, bets: int, bettors: int) -> MarketListRow:
    mid, question, venue, category, status, close = m
    return MarketListRow(mid, page_path("market", mid), question, venue, category or "", status,
                         utc(close) if close is not None else None, cohorts, in_set, bets, bettors)


def market_index_context(engine: Engine, as_of: datetime, ids: Sequence[str] | None = None) -> MarketIndexPage:
    """Every market with a page, newest close first (`ids`: those markets, when the caller knows them — a render's
    page keys list them)."""
    if ids is None:
        ids = sorted(touched_market_ids(engine, as_of))
    asked, traded = market_usage(engine, as_of)
    cohorts_of: dict[str, set[int]] = defaultdict(set)
    bets: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for cid, mids in asked.items():
        for mid in mids:
            cohorts_of[mid].add(cid)
    for (cid, mid), (n, agents) in traded.items():
        cohorts_of[mid].add(cid)
        bets[mid][0] += n
        bets[mid][1] += agents
    info = market_list_facts(engine, as_of, ids)
    asked_any = set().union(*asked.values()) if asked else set()
    rows = [_row(info[mid], len(cohorts_of[mid]), mid in asked_any, *bets[mid]) for mid in ids if mid in info]
    rows.sort(key=lambda r: (r.close_time is None, -(r.close_time.timestamp() if r.close_time else 0), r.market_id))
    return MarketIndexPage(as_of, tuple(rows), tuple(sorted({r.venue for r in rows})),
                           tuple(sorted({r.status for r in rows})))


def cohort_markets(engine: Engine, as_of: datetime, cohort_ids: Sequence[int] | None = None
                   ) -> dict[int, tuple[MarketListRow, ...]]:
    """cohort id → its markets: the forecast set first (asked of every agent), then the other markets its agents
    traded, each with its bets and bettors in that cohort."""
    asked, traded = market_usage(engine, as_of, cohort_ids)
    per: dict[int, set[str]] = defaultdict(set)
    for cid, mids in asked.items():
        per[cid] |= mids
    for cid, mid in traded:
        per[cid].add(mid)
    info = market_list_facts(engine, as_of, sorted({m for mids in per.values() for m in mids}))
    out = {}
    for cid, mids in per.items():
        rows = [_row(info[m], 1, m in asked.get(cid, ()), *traded.get((cid, m), (0, 0))) for m in mids if m in info]
        rows.sort(key=lambda r: (not r.in_forecast_set, -r.bets, r.question))
        out[cid] = tuple(rows)
    return out


__all__ = ["MarketIndexPage", "MarketListRow", "cohort_markets", "market_index_context"]
