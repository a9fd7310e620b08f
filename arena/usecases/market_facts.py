"""Market facts as of a decision time: the store reads behind an agent's tools (`arena.agents.tools`).

Point in time, like the decision view: a price snapshot is served only if it was fetched and observed at or before
`as_of`; a market only if it was first seen by then; no resolution is ever served. Market rows are not versioned,
so the question, description (resolution rules) and close time are the newest stored copy — the same text the
decision prompt shows — while status and volumes (current values that could reveal later events) are never served.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from arena.clock import utc
from arena.domain.market import YES
from arena.money import MICRO
from arena.store import repo
from arena.store.tables import MarketRow, PriceSnapshotRow

ORDER_BOOK_NOTE = ("the arena records the best YES bid and ask with each price snapshot; the full order book "
                   "(depth) is not stored")
DESCRIPTION_CHARS = 6000  # the tool result cap applies on top of this


def _p(ppm: int | None) -> float | None:
    return None if ppm is None else ppm / MICRO


def _iso(t: datetime | None) -> str | None:
    return utc(t).isoformat() if t is not None else None


class StoreMarketFacts:
    """`arena.agents.view.MarketFacts` over the store, bound to `as_of` (UTC). Each call opens its own short
    session, so an agent may call tools from any thread while its round runs."""

    def __init__(self, engine: Engine, as_of: datetime) -> None:
        self.engine = engine
        self.as_of = utc(as_of)

    def _market(self, s: Session, market_id: str) -> MarketRow:
        row = s.get(MarketRow, market_id)
        if row is None or utc(row.first_seen_at) > self.as_of:
            raise LookupError(f"no market {market_id!r} known at the decision time")
        return row

    def _snapshots(self, s: Session, market_id: str) -> Any:
        return (select(PriceSnapshotRow)
                .where(PriceSnapshotRow.market_id == market_id, PriceSnapshotRow.fetched_at <= self.as_of,
                       PriceSnapshotRow.observed_at <= self.as_of))

    def price_history(self, market_id: str, max_points: int) -> dict[str, Any]:
        """The newest `max_points` snapshot times, oldest first: observed_at, the price of each outcome (a
        binary market: YES only), best YES bid/ask where recorded; `n_points` counts every recorded time."""
        with Session(self.engine) as s:
            m = self._market(s, market_id)
            times = [t for (t,) in s.execute(
                select(PriceSnapshotRow.observed_at).where(
                    PriceSnapshotRow.market_id == market_id, PriceSnapshotRow.fetched_at <= self.as_of,
                    PriceSnapshotRow.observed_at <= self.as_of)
                .group_by(PriceSnapshotRow.observed_at)
                .order_by(col(PriceSnapshotRow.observed_at).desc()).limit(max_points))]
            total = s.execute(select(func.count(func.distinct(PriceSnapshotRow.observed_at))).where(
                PriceSnapshotRow.market_id == market_id, PriceSnapshotRow.fetched_at <= self.as_of,
                PriceSnapshotRow.observed_at <= self.as_of)).scalar_one()
            points: dict[datetime, dict[str, Any]] = {}
            if times:
                rows = s.scalars(self._snapshots(s, market_id).where(PriceSnapshotRow.observed_at >= min(times))
                                 .order_by(PriceSnapshotRow.observed_at, PriceSnapshotRow.id))
                for r in rows:
                    point = points.setdefault(utc(r.observed_at), {"observed_at": _iso(r.observed_at),
                                                                   "prices": {}})
                    point["prices"][r.outcome] = _p(r.price_ppm)
                    if r.outcome == YES and (r.bid_ppm is not None or r.ask_ppm is not None):
                        point["bid"], point["ask"] = _p(r.bid_ppm), _p(r.ask_ppm)
        return {"market_id": market_id, "question": m.question, "as_of": self.as_of.isoformat(),
                "points": [points[t] for t in sorted(points)], "n_points": int(total)}

    def order_book(self, market_id: str) -> dict[str, Any]:
        """Top of book of the latest snapshot with a bid or an ask (None values when none was ever recorded)."""
        with Session(self.engine) as s:
            self._market(s, market_id)
            row = s.scalars(self._snapshots(s, market_id)
                            .where(PriceSnapshotRow.outcome == YES,
                                   (col(PriceSnapshotRow.bid_ppm).is_not(None)) | (col(PriceSnapshotRow.ask_ppm).is_not(None)))
                            .order_by(col(PriceSnapshotRow.observed_at).desc(), col(PriceSnapshotRow.id).desc())
                            ).first()
            quote = repo.latest_quotes(s, self.as_of, [market_id]).get(market_id)
        out: dict[str, Any] = {"market_id": market_id, "note": ORDER_BOOK_NOTE,
                               "price": _p(quote.prices[YES].ppm) if quote is not None and YES in quote.prices
                               else None}
        if row is None:
            return {**out, "best_bid": None, "best_ask": None, "spread": None, "observed_at": None}
        spread = (row.ask_ppm - row.bid_ppm) / MICRO if row.bid_ppm is not None and row.ask_ppm is not None else None
        return {**out, "best_bid": _p(row.bid_ppm), "best_ask": _p(row.ask_ppm), "spread": spread,
                "observed_at": _iso(row.observed_at)}

    def related_markets(self, market_id: str) -> dict[str, Any]:
        """The other markets sharing the market's non-empty group_id, first seen by `as_of`, with their latest
        prices (YES for binary markets)."""
        with Session(self.engine) as s:
            m = self._market(s, market_id)
            if not m.group_id:
                return {"market_id": market_id, "group_id": None, "markets": [],
                        "note": "this market belongs to no event or group"}
            rows = [r for r in s.scalars(select(MarketRow).where(MarketRow.group_id == m.group_id,
                                                                 MarketRow.id != market_id)
                                         .order_by(MarketRow.id))
                    if utc(r.first_seen_at) <= self.as_of]
            quotes = repo.latest_quotes(s, self.as_of, [r.id for r in rows])
        markets = []
        for r in rows:
            q = quotes.get(r.id)
            markets.append({"market_id": r.id, "question": r.question, "close_time": _iso(r.close_time),
                            "prices": {o: _p(p.ppm) for o, p in q.prices.items()} if q is not None else None})
        return {"market_id": market_id, "group_id": m.group_id, "markets": markets}

    def resolution_criteria(self, market_id: str) -> dict[str, Any]:
        with Session(self.engine) as s:
            m = self._market(s, market_id)
        return {"market_id": market_id, "question": m.question, "description": m.description[:DESCRIPTION_CHARS],
                "outcomes": dict(zip(m.outcomes, m.outcome_labels)), "close_time": _iso(m.close_time),
                "url": m.url}


__all__ = ["ORDER_BOOK_NOTE", "StoreMarketFacts"]
