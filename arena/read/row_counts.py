"""How many rows each table of the store holds (the operations page's table sizes, the index's number of fills).
Reads the store; never writes.

Takes `as_of` and filters nothing by it: it relies on a store copied as of that time
(`read.point_in_time.store_as_of`), where a row recorded later does not exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from arena.store.tables import (
    AgentRow,
    CohortRow,
    DecisionRow,
    FillRow,
    ForecastRow,
    JobRunRow,
    MarketRow,
    ModelCallRow,
    PortfolioSnapshotRow,
    PriceSnapshotRow,
    RejectionRow,
    ResolutionRow,
    SyncRunRow,
)

# the tables counted, by name, in the order the operations page lists them
COUNTED: dict[str, Any] = {
    "markets": MarketRow, "price_snapshots": PriceSnapshotRow, "cohorts": CohortRow, "agents": AgentRow,
    "decisions": DecisionRow, "fills": FillRow, "rejections": RejectionRow, "forecasts": ForecastRow,
    "resolutions": ResolutionRow, "portfolio_snapshots": PortfolioSnapshotRow, "model_calls": ModelCallRow,
    "sync_runs": SyncRunRow, "job_runs": JobRunRow,
}


def row_counts(engine: Engine, as_of: datetime, tables: Sequence[str] = tuple(COUNTED)) -> tuple[tuple[str, int], ...]:
    """(table name, rows) for each of `tables` (names of `COUNTED`; default: all of them), in that order. Relies on
    a store copied as of `as_of`."""
    with engine.connect() as conn:
        return tuple((name, int(conn.execute(select(func.count()).select_from(COUNTED[name])).scalar_one()))
                     for name in tables)


__all__ = ["COUNTED", "row_counts"]
