"""The markets the arena touched — traded or forecast by some agent — which are the markets the site gives a page,
and their questions. Reads the store; never writes.

Each reader takes `as_of` and filters nothing by it: it relies on a store copied as of that time
(`read.point_in_time.store_as_of`), where a fill or forecast recorded later does not exist.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import select, union
from sqlalchemy.engine import Engine
from sqlmodel import col

from arena.store.tables import FillRow, ForecastRow, MarketRow


def touched_market_ids(engine: Engine, as_of: datetime, among: Iterable[str] | None = None) -> set[str]:
    """The markets some agent traded or forecast — of `among` only, when given (one page's worth of ids). Relies
    on a store copied as of `as_of`."""
    fq, oq = select(FillRow.market_id).distinct(), select(ForecastRow.market_id).distinct()
    if among is not None:
        ids = sorted(set(among))
        if not ids:
            return set()
        fq = fq.where(col(FillRow.market_id).in_(ids))
        oq = oq.where(col(ForecastRow.market_id).in_(ids))
    with engine.connect() as conn:
        return {r[0] for r in conn.execute(union(fq, oq)).all()}


def market_questions(engine: Engine, as_of: datetime, ids: Iterable[str] | None) -> dict[str, str]:
    """market id → its question (untrusted text), for `ids` (None: every market), as last synced. Relies on a store
    copied as of `as_of` (a market first seen later does not exist there)."""
    q = select(MarketRow.id, MarketRow.question)
    if ids is not None:
        ids = sorted(set(ids))
        if not ids:
            return {}
        q = q.where(col(MarketRow.id).in_(ids))
    with engine.connect() as conn:
        return dict(conn.execute(q).all())


__all__ = ["market_questions", "touched_market_ids"]
