"""How the agents forecast each market: the number of stated forecasts (first replicate) and their mean P(YES).
Reads the store; never writes."""

from __future__ import annotations

import math
from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from arena.store.tables import ForecastRow


def market_forecasts(conn: Connection, market_ids: Sequence[str] | None = None) -> dict[str, tuple[int, float]]:
    """market id → (forecasts, mean stated P(YES) in [0, 1], NaN when unknown), over every agent's first-replicate
    forecasts (None: every market with a forecast)."""
    q = (select(ForecastRow.market_id, func.count(), func.avg(ForecastRow.probability))
         .where(ForecastRow.replicate == 1).group_by(ForecastRow.market_id))
    if market_ids is not None:
        q = q.where(ForecastRow.market_id.in_(list(market_ids)))  # type: ignore[attr-defined]
    return {m: (int(n), math.nan if avg is None else float(avg)) for m, n, avg in conn.execute(q).all()}
