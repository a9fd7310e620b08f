"""How the agents forecast each market: the number of stated forecasts (first replicate) and their mean P(YES).
Reads the store; never writes."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.engine import Connection
from sqlmodel import col

from arena.store.tables import ForecastRow


def market_forecasts(conn: Connection, market_ids: Sequence[str] | None = None) -> dict[str, tuple[int, float]]:
    """market id → (forecasts, mean stated P(YES) in [0, 1], NaN when unknown), over every agent's first-replicate
    forecasts (None: every market with a forecast).

    The mean is a correctly rounded sum (`math.fsum`) divided by the count, so it does not depend on the order the
    database returns rows in: a SQL `avg` over floats adds in scan order, which differs between a store and its
    copy as of a time and would change the last digit a page shows."""
    q = select(ForecastRow.market_id, ForecastRow.probability).where(ForecastRow.replicate == 1)
    if market_ids is not None:
        q = q.where(col(ForecastRow.market_id).in_(list(market_ids)))
    by: dict[str, list[float]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    for m, p in conn.execute(q).all():
        counts[m] += 1
        if p is not None:
            by[m].append(float(p))
    return {m: (n, math.fsum(by[m]) / len(by[m]) if by.get(m) else math.nan) for m, n in counts.items()}
