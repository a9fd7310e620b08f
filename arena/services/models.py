"""Models across cohorts: for each model (an agent name, the same lineup entry week after week), a random-effects
meta-analysis (`scoring.meta`) of its per-cohort forecast-Brier difference against every other model and against
the two references, from the facts recorded by `as_of`.

Each cohort contributes the mean, over the forecast-set questions both answered there, of (this model's Brier −
the other's), with its standard error; the cohorts are pooled by DerSimonian–Laird with the Hartung–Knapp interval
beside it. "Better in general" is a pooled interval below 0; "better in some weeks" shows as cohorts whose own
interval lies below 0 while the pool's does not, with I² saying how much of the spread between weeks is real.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from arena.clock import utc
from arena.scoring.headline import REFERENCE_AGENTS, score_forecasts
from arena.scoring.meta import DEFAULT_LEVEL, MetaAnalysis, dersimonian_laird, differences_from_cells, score_cells

from arena.services.frame_cache import cohort_frames
from arena.store.tables import CohortRow


@dataclass(frozen=True)
class ModelComparison:
    """This model minus `versus` (forecast Brier; < 0: this model forecasts better), pooled across cohorts.
    cohorts: the forest plot's rows (cohort, n, difference, se, ci_low, ci_high, weight), in cohort order."""

    versus: str
    meta: MetaAnalysis
    cohorts: pd.DataFrame

    @property
    def better_in(self) -> int:
        """Cohorts whose own interval lies below 0."""
        return int((self.cohorts["ci_high"] < 0).sum())

    @property
    def worse_in(self) -> int:
        return int((self.cohorts["ci_low"] > 0).sum())

    @property
    def pooled_interval(self) -> tuple[float, float]:
        """Hartung–Knapp where it exists (two cohorts or more), else DerSimonian–Laird."""
        m = self.meta
        if np.isfinite(m.hk_ci_low) and np.isfinite(m.hk_ci_high):
            return m.hk_ci_low, m.hk_ci_high
        return m.ci_low, m.ci_high

    @property
    def verdict(self) -> str:
        lo, hi = self.pooled_interval
        if not (np.isfinite(lo) and np.isfinite(hi)):
            if len(self.cohorts) and (self.cohorts["difference"] == 0).all():
                return "identical forecasts"
            return "too few cohorts"
        if hi < 0:
            return "better in general"
        if lo > 0:
            return "worse in general"
        if self.better_in and not self.worse_in:
            return "better in some weeks"
        if self.worse_in and not self.better_in:
            return "worse in some weeks"
        if self.better_in and self.worse_in:
            return "better in some weeks, worse in others"
        return "no difference shown"


def model_comparisons(engine: Engine, as_of: datetime, models: list[str] | None = None,
                      level: float = DEFAULT_LEVEL) -> dict[str, tuple[ModelComparison, ...]]:
    """model → its comparisons with every other model and the references (models with a resolved forecast only;
    `models` limits whose comparisons are computed). Comparisons with no shared resolved question are left out."""
    with Session(engine) as s:
        cohorts = s.connection().execute(select(CohortRow.id, CohortRow.name).where(CohortRow.created_at <= utc(as_of))
                                         .order_by(CohortRow.period_start, CohortRow.id)).all()
    # the forecast set of each cohort (`store.frames.forecast_set_frame`), through the frame cache: read again
    # only for the cohorts whose facts changed since it was stored
    frame = cohort_frames(engine, [(c[0], c[1]) for c in cohorts], as_of).forecasts if cohorts else pd.DataFrame()
    if frame.empty:
        return {}
    order = {name: i for i, name in enumerate(pd.unique(frame["cohort"]))}
    scored = score_forecasts(frame)
    cells = score_cells(scored[scored["brier"].notna()])
    names = [c for c in cells.columns if c not in REFERENCE_AGENTS]
    wanted = [m for m in names if models is None or m in models]
    out = {}
    for model in wanted:
        comparisons = []
        for other in [*sorted(n for n in names if n != model), *REFERENCE_AGENTS]:
            rows = differences_from_cells(cells, model, other, level)
            if not len(rows):
                continue
            rows = rows.sort_values("cohort", key=lambda c: c.map(order)).reset_index(drop=True)
            meta = dersimonian_laird(rows["difference"], rows["se"], level)
            rows["weight"] = meta.weights
            comparisons.append(ModelComparison(other, meta, rows))
        out[model] = tuple(comparisons)
    return out


__all__ = ["ModelComparison", "model_comparisons"]
