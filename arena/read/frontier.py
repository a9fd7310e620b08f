"""The cost–skill frontier, read: each model's market-level Brier − market observations and resolved forecasts
from the cohorts' forecast sets as of a time, and its stored calls' costs, into `scoring.frontier`. Reads; never
writes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.cache.memo import Recent
from arena.clock import utc
from arena.read.model_costs import call_costs
from arena.scoring.evidence import market_rows
from arena.scoring.frontier import DEFAULT_DRAWS, FRONTIER_COLUMNS, cost_skill_frontier
from arena.scoring.headline import REFERENCE_AGENTS, score_forecasts
from arena.store.tables import CohortRow


def forecast_frame(engine: Engine, as_of: datetime) -> pd.DataFrame:
    """Every cohort's forecast-set rows as of `as_of` (`store.frames.forecast_set_frame`, through the frame
    cache), with a cohort column."""
    from arena.cache.frame_cache import cohort_frames

    with engine.connect() as conn:
        cohorts = conn.execute(select(CohortRow.id, CohortRow.name).where(CohortRow.created_at <= utc(as_of))
                               .order_by(CohortRow.period_start, CohortRow.id)).all()
    if not cohorts:
        return pd.DataFrame(columns=["cohort", "agent", "market_id", "question", "probability", "market_price",
                                     "outcome_yes", "answered"])
    return cohort_frames(engine, [(c[0], c[1]) for c in cohorts], as_of).forecasts


def model_frontier(engine: Engine, as_of: datetime, forecasts: pd.DataFrame | None = None, *,
                   names: Sequence[str] | None = None, n_boot: int = DEFAULT_DRAWS, seed: int = 0) -> pd.DataFrame:
    """The frontier table (`scoring.frontier.FRONTIER_COLUMNS`) of every model with a stored call and a resolved
    forecast (names: only among these). forecasts: `forecast_frame(engine, as_of)` when the caller has it.
    Seeded: the same facts give the same intervals and p_dominated."""
    f = forecasts if forecasts is not None else forecast_frame(engine, as_of)
    if not len(f):
        return pd.DataFrame(columns=list(FRONTIER_COLUMNS))
    scored = score_forecasts(f, references=False)
    scored = scored[scored["brier"].notna() & ~scored["agent"].isin(REFERENCE_AGENTS)]
    if names is not None:
        scored = scored[scored["agent"].isin(list(names))]
    resolved = scored.groupby("agent").size().to_dict()
    obs = market_rows(scored[["cohort", "agent", "market_id", "diff_market"]], ("diff_market",), keys=("cohort",))
    calls = call_costs(engine, sorted(resolved))
    return cost_skill_frontier(obs, calls, resolved, n_boot=n_boot, seed=seed)


_FRONTIERS: Recent[pd.DataFrame] = Recent("frontier")  # a key naming every cohort's facts → the frontier table


def kept_frontier(engine: Engine, as_of: datetime, key: str) -> pd.DataFrame:
    """`model_frontier(engine, as_of)`, kept in the process memory under `key`, which must name every cohort's
    facts and the markets they read (`web.page_keys.model_pages_key`): a long-running process (the scheduler,
    `arena serve`) computes it again only when some cohort changed."""
    return _FRONTIERS.get_or_make(key, lambda: model_frontier(engine, as_of))


def frontier_records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """The frontier as JSON rows: NaN as null, counts as int, on_frontier as bool."""
    out = []
    for rec in table.to_dict("records"):
        row: dict[str, Any] = {}
        for k, v in rec.items():
            if isinstance(v, (bool, np.bool_)):
                v = bool(v)
            elif isinstance(v, (np.integer,)):
                v = int(v)
            elif isinstance(v, (float, np.floating)):
                v = float(v) if np.isfinite(v) else None
            row[k] = v
        out.append(row)
    return out


__all__ = ["forecast_frame", "frontier_records", "kept_frontier", "model_frontier"]
