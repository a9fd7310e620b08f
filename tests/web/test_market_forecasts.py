"""A market's mean stated forecast does not depend on the order the database returns its rows in."""

from __future__ import annotations

import math

from sqlalchemy import select, update
from sqlmodel import Session

from arena.read.market_forecasts import market_forecasts
from arena.store.engine import session_scope
from arena.store.tables import ForecastRow


def test_mean_forecast_is_the_correctly_rounded_mean_whatever_the_row_order(sim_arena):
    engine = sim_arena.engine
    with Session(engine) as s:
        market = s.execute(select(ForecastRow.market_id).where(ForecastRow.replicate == 1)
                           .group_by(ForecastRow.market_id).order_by(ForecastRow.market_id)).scalars().first()
        ids = list(s.scalars(select(ForecastRow.id).where(ForecastRow.market_id == market,
                                                          ForecastRow.replicate == 1).order_by(ForecastRow.id)))
    # 0.1 + 0.2 + 0.3 summed left to right is 0.6000000000000001, the exact sum rounds to 0.6: a mean taken in scan
    # order gives a last digit that depends on the order rows come back in
    values = [0.1, 0.2, 0.3] + [0.3] * (len(ids) - 3) if len(ids) >= 3 else None
    assert values is not None, "the simulated arena has a market with three forecasts"
    with session_scope(engine) as s:
        for fid, p in zip(ids, values):
            s.execute(update(ForecastRow).where(ForecastRow.id == fid).values(probability=p))
    with engine.connect() as conn:
        n, mean = market_forecasts(conn, [market])[market]
    assert n == len(ids)
    assert mean == math.fsum(values) / len(values)
    with session_scope(engine) as s:  # the same values, stored in the reverse order
        for fid, p in zip(ids, reversed(values)):
            s.execute(update(ForecastRow).where(ForecastRow.id == fid).values(probability=p))
    with engine.connect() as conn:
        assert market_forecasts(conn, [market])[market] == (n, mean)
