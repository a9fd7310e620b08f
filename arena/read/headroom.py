"""The read side of the forecast sets' headroom: each cohort's asked set (`forecast_questions`), the resolutions
recorded by the time asked and its seats' forecasts, handed to `scoring.headroom` (which owns the definitions);
and the model pages' projection of how many more weeks a difference needs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from arena.domain.market import YES
from arena.money import MICRO
from arena.scoring.headroom import FALLBACK_SD, Headroom, headrooms, markets_needed, more_weeks, paired_variance
from arena.store.frames import asked_frame, forecast_set_frame, latest_resolutions
from arena.store.tables import CohortRow

EMPTY = Headroom(None, None, None, None, None, 0, 0, 0, None, "")  # a cohort with no stored set
# the Brier differences the model pages project (a tenth, a twentieth and a fiftieth of always-0.5's 0.25)
PROJECTED_DIFFERENCES = (0.025, 0.0125, 0.005)


def outcomes_yes(session: Session, as_of: datetime | None, market_ids: Sequence[str]) -> dict[str, float]:
    """market id → the YES payout in [0, 1] of its latest resolution recorded by `as_of` (winner or
    probabilistic; void and unresolved markets are absent)."""
    if not len(market_ids):
        return {}
    res = latest_resolutions(session, as_of, list(market_ids))
    return {mid: int(payouts[YES]) / MICRO for mid, kind, payouts in zip(res["market_id"], res["kind"], res["payouts"])
            if kind in ("winner", "probabilistic") and YES in payouts}


def _asked_with_outcomes(session: Session, cohort_ids: Sequence[int], as_of: datetime | None) -> pd.DataFrame:
    asked = asked_frame(session, cohort_ids, as_of)
    outcome = outcomes_yes(session, as_of, pd.unique(asked["market_id"]).tolist())
    return asked.assign(outcome_yes=asked["market_id"].map(outcome).astype(float))


def cohort_headroom(engine: Engine, as_of: datetime | None, cohorts: Sequence[tuple[int, str]] | None = None,
                    forecasts: pd.DataFrame | None = None) -> dict[str, Headroom]:
    """cohort name → the headroom of its forecast sets as of `as_of` (every cohort when `cohorts`, (id, name)
    pairs, is None). `forecasts`: the cohorts' `forecast_set_frame` as of `as_of` when the caller has read it
    (the seats' paired variance comes from it), else it is read here. A cohort with no stored set (one older than
    `forecast_questions` and never backfilled) gets the empty headroom."""
    with Session(engine) as s:
        if cohorts is None:
            cohorts = [(int(i), str(n)) for i, n in s.execute(select(CohortRow.id, CohortRow.name)
                                                                .order_by(CohortRow.id)).all()]
        ids = [int(c) for c, _ in cohorts]
        asked = _asked_with_outcomes(s, ids, as_of)
        if forecasts is None:
            forecasts = forecast_set_frame(s, ids, as_of)
    found = headrooms(asked, forecasts)
    return {name: found.get(name, EMPTY) for _, name in cohorts}


@dataclass(frozen=True)
class Projection:
    """How long a model's record must grow to tell a Brier difference `delta` from the market's at level 0.05 with
    power 0.8: `markets` resolved markets in all; `more_weeks` of new questions still to ask at its pace beyond
    the markets already asked (0: enough are asked — they count once resolved, within the horizon; None: no
    pace yet)."""

    delta: float
    markets: int
    more_weeks: int | None


@dataclass(frozen=True)
class ModelProjection:
    """A model's paired variance against the market and its pace. `sd`: of its market-level Brier minus the
    market's, over its resolved markets (`sd_basis` "model", else `FALLBACK_SD` "fallback" with fewer than
    two); `n_asked`, `n_resolved`: distinct markets asked of it and resolved so far; `per_week`: distinct
    markets asked per week of its cohorts' span."""

    sd: float
    sd_basis: str
    n_asked: int
    n_resolved: int
    per_week: float
    rows: tuple[Projection, ...]


def model_projection(forecasts: pd.DataFrame, asked_weeks: float, n_asked: int,
                     deltas: Sequence[float] = PROJECTED_DIFFERENCES) -> ModelProjection:
    """The projection for one model (pure over its rows). `forecasts`: its forecast-set rows (market_id,
    probability, market_price, outcome_yes) over every cohort it sat in; `asked_weeks`: the weeks from its first
    cohort's start to the last decision; `n_asked`: distinct markets asked of it."""
    done = forecasts[forecasts["outcome_yes"].notna() & forecasts["market_price"].notna()]
    y = done["outcome_yes"].astype(float)
    seat = ((done["probability"].astype(float) - y) ** 2).groupby(done["market_id"], sort=True).mean()
    market = ((done["market_price"].astype(float) - y) ** 2).groupby(done["market_id"], sort=True).mean()
    # (the two rows share one index; laid out as a frame of them would be, so the sums run in the same order)
    variance = paired_variance(np.asfortranarray(np.vstack([seat.to_numpy(dtype=float), market.to_numpy(dtype=float)])))
    sd, basis = (variance ** 0.5, "model") if variance is not None else (FALLBACK_SD, "fallback")
    per_week = n_asked / asked_weeks if asked_weeks > 0 else 0.0
    return ModelProjection(sd, basis, n_asked, int(len(seat)), per_week, tuple(
        Projection(d, markets_needed(d, sd), more_weeks(d, sd, n_asked, per_week)) for d in deltas))


def model_projections(engine: Engine, as_of: datetime, names: Sequence[str] | None = None,
                      forecasts: pd.DataFrame | None = None) -> Mapping[str, ModelProjection]:
    """model (seat) name → its projection as of `as_of`, over every cohort it sat in. `forecasts`: every cohort's
    forecast-set rows as of `as_of` when the caller has them (`read.frontier.forecast_frame`), else read so, through
    the frame cache."""
    from arena.read.frontier import forecast_frame

    with Session(engine) as s:
        cohorts = s.execute(select(CohortRow.id, CohortRow.name, CohortRow.period_start)
                            .where(CohortRow.created_at <= as_of).order_by(CohortRow.id)).all()
        if not cohorts:
            return {}
        ids = [int(c[0]) for c in cohorts]
        asked = asked_frame(s, ids, as_of)
    if forecasts is None:
        forecasts = forecast_frame(engine, as_of)
    start = {name: pd.Timestamp(ps) for _, name, ps in cohorts}
    out = {}
    for model, rows in forecasts.groupby("agent", sort=True):
        if names is not None and model not in names:
            continue
        sat = pd.unique(rows["cohort"]).tolist()
        mine = asked[asked["cohort"].isin(sat)]
        first = min(start[c] for c in sat)
        first = first if first.tzinfo is not None else first.tz_localize("UTC")
        last = pd.Timestamp(mine["as_of"].max()) if len(mine) else first
        last = last if last.tzinfo is not None else last.tz_localize("UTC")
        weeks = max((last - first) / pd.Timedelta(weeks=1), 1.0)  # a first week counts whole
        out[str(model)] = model_projection(rows, weeks, int(mine["market_id"].nunique()))
    return out


__all__ = ["ModelProjection", "PROJECTED_DIFFERENCES", "Projection", "cohort_headroom", "model_projection",
           "model_projections", "outcomes_yes"]
