"""The published difficulty of the resolved forecast-set questions (`scoring.question_difficulty`), read from the
store as of a time for the market pages and `arena export` (`question_difficulty.csv`). Reads; never writes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import pandas as pd
from sqlalchemy import select, union
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from arena.cache.frame_cache import cohort_frames
from arena.clock import utc
from arena.scoring.question_difficulty import question_difficulty
from arena.store.tables import AgentRow, CohortRow, ForecastQuestionRow, ForecastRow


def question_difficulties(engine: Engine, as_of: datetime, *, cohort_names: Sequence[str] | None = None,
                          market_ids: Sequence[str] | None = None) -> pd.DataFrame:
    """`scoring.question_difficulty.COLUMNS` for every resolved forecast-set question of the cohorts created by
    `as_of` (those named, when `cohort_names` is given), each cohort fitted on its facts as of then; with
    `market_ids`, only the cohorts that asked one of those markets are read and only those markets' rows kept.
    Rows by cohort (start, id), then question."""
    as_of = utc(as_of)
    with Session(engine) as s:
        q = (select(CohortRow.id, CohortRow.name).where(CohortRow.created_at <= as_of)
             .order_by(CohortRow.period_start, CohortRow.id))
        if cohort_names is not None:
            q = q.where(col(CohortRow.name).in_(list(cohort_names)))
        if market_ids is not None:
            # the cohorts that asked one of them, or forecast it (a store whose forecast-set rows were written as
            # forecasts alone, as the benchmarks' are, has no question rows): the rows the full reading keeps
            ids = list(market_ids)
            asked = union(select(ForecastQuestionRow.cohort_id).where(col(ForecastQuestionRow.market_id).in_(ids)),
                          select(AgentRow.cohort_id).join(ForecastRow, ForecastRow.agent_id == AgentRow.id)
                          .where(col(ForecastRow.market_id).in_(ids)))
            q = q.where(col(CohortRow.id).in_(select(asked.subquery().c[0])))
        cohorts = [(int(cid), str(name)) for cid, name in s.execute(q).all()]
    if not cohorts:
        return question_difficulty(pd.DataFrame())
    out = question_difficulty(cohort_frames(engine, cohorts, as_of).forecasts)
    if market_ids is not None:
        out = out[out["market_id"].isin(set(market_ids))].reset_index(drop=True)
    return out


__all__ = ["question_difficulties"]
