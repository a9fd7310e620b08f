"""Skill by horizon and topic, read: the facts that place each forecast-set question in a horizon bucket and a
category (when its round was decided, when its market resolved, the market's category), the categories a filter
may name, and the per-seat and per-model breakdowns of `scoring.breakdown` from stored facts. Reads; never writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from arena.clock import utc
from arena.scoring.breakdown import breakdown_records, skill_by_category, skill_by_horizon, with_groups
from arena.scoring.headline import score_forecasts
from arena.domain.question_filter import UNCATEGORIZED, QuestionFilter, category_name
from arena.store.frames import rows_frame
from arena.store.tables import CohortRow, DecisionRow, MarketRow, ResolutionRow

FACT_COLUMNS = ("decided_at", "resolved_at", "category")


def with_question_facts(session: Session, frame: pd.DataFrame, as_of: datetime | None = None) -> pd.DataFrame:
    """`frame` (rows with cohort, market_id and question = market@round, e.g. `store.frames.forecast_set_frame`)
    with FACT_COLUMNS added: decided_at (the earliest decision time of the round in its cohort: when the round's
    forecasts were made), resolved_at (the market's latest resolution recorded by `as_of`: the venue's resolution
    time, else when it was recorded; NaT when unresolved) and category (the market's; "" when none)."""
    if not len(frame):
        return frame.assign(**{c: pd.Series(dtype=object) for c in FACT_COLUMNS})
    markets = sorted(pd.unique(frame["market_id"]).tolist())
    rounds = session.connection().execute(
        select(CohortRow.name, DecisionRow.round_key, func.min(DecisionRow.as_of))
        .join(CohortRow, CohortRow.id == DecisionRow.cohort_id)
        .where(col(CohortRow.name).in_(sorted(pd.unique(frame["cohort"]).tolist())))
        .group_by(CohortRow.name, DecisionRow.round_key)).all()
    decided = {(str(c), str(r)): t for c, r, t in rounds}
    versions = select(ResolutionRow.market_id, func.max(ResolutionRow.version).label("v"))
    if as_of is not None:
        versions = versions.where(col(ResolutionRow.recorded_at) <= utc(as_of))
    latest = versions.where(col(ResolutionRow.market_id).in_(markets)).group_by(
        ResolutionRow.market_id).subquery()
    res = session.connection().execute(
        select(ResolutionRow.market_id, ResolutionRow.resolved_at, ResolutionRow.recorded_at)
        .join(latest, (ResolutionRow.market_id == latest.c.market_id) & (ResolutionRow.version == latest.c.v))).all()
    resolved = {m: (r if r is not None else rec) for m, r, rec in res}
    cats = dict(session.connection().execute(
        select(MarketRow.id, MarketRow.category).where(col(MarketRow.id).in_(markets))).all())
    round_of = [q[len(m) + 1:] for m, q in zip(frame["market_id"].astype(str), frame["question"].astype(str))]
    return frame.assign(
        decided_at=pd.to_datetime(pd.Series([decided.get((str(c), r)) for c, r in zip(frame["cohort"], round_of)],
                                            dtype=object, index=frame.index), utc=True),
        resolved_at=pd.to_datetime(pd.Series([resolved.get(m) for m in frame["market_id"]], dtype=object,
                                             index=frame.index), utc=True),
        category=[cats.get(m) or "" for m in frame["market_id"]])


def known_categories(engine: Engine) -> list[str]:
    """Every category a filter may name: the stored markets' categories as shown (`category_name`), sorted."""
    with Session(engine) as s:
        rows = s.connection().execute(select(MarketRow.category).distinct()).scalars().all()
    return sorted({category_name(c) for c in rows})


def check_categories(engine: Engine, wanted: Sequence[str] | None) -> None:
    """InputError naming the first of `wanted` that is no stored market's category, with the ones there are."""
    if not wanted:
        return
    from arena.errors import InputError

    known = known_categories(engine)
    unknown = [c for c in wanted if c not in known]
    if unknown:
        raise InputError(f"unknown category {unknown[0]!r}",
                         fix=f"choose from {', '.join(known) if known else 'none yet (no market stored)'}"
                             f" (a market without one is {UNCATEGORIZED!r})")


def filter_questions(frame: pd.DataFrame, questions: QuestionFilter | None) -> pd.DataFrame:
    """The rows of `frame` (with FACT_COLUMNS) whose question the filter keeps (all of them without one)."""
    if questions is None or not questions.active or not len(frame):
        return frame
    return frame[questions.mask(frame["decided_at"], frame["category"])].reset_index(drop=True)


def breakdowns(scored: pd.DataFrame, within: Sequence[str]) -> dict[str, pd.DataFrame]:
    """{"skill_by_horizon", "skill_by_category"} of scored forecast rows with FACT_COLUMNS (`scoring.breakdown`):
    per seat with within ("cohort",), per model with ()."""
    rows = with_groups(scored)
    return {"skill_by_horizon": skill_by_horizon(rows, within=within),
            "skill_by_category": skill_by_category(rows, within=within)}


def scored_with_facts(session: Session, forecasts: pd.DataFrame, as_of: datetime | None = None) -> pd.DataFrame:
    """The forecast-set rows scored (`headline.score_forecasts`, references included) with FACT_COLUMNS: the
    references' rows get their question's facts."""
    facts = with_question_facts(session, forecasts[["cohort", "market_id", "question"]].drop_duplicates(), as_of)
    scored = score_forecasts(forecasts) if len(forecasts) else forecasts.assign(brier=[], diff_market=[])
    return scored.merge(facts.drop(columns=["market_id"]), on=["cohort", "question"], how="left")


def seat_breakdowns(engine: Engine, as_of: datetime, cohorts: Sequence[tuple[int, str]]
                    ) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """cohort name → {"skill_by_horizon", "skill_by_category"}: per seat of the cohort (references included), as
    JSON rows (`scoring.breakdown.breakdown_records`), from the cohorts' forecast sets as of `as_of`."""
    from arena.cache.frame_cache import cohort_frames

    if not cohorts:
        return {}
    forecasts = cohort_frames(engine, list(cohorts), as_of).forecasts
    out: dict[str, dict[str, list[dict[str, Any]]]] = {name: {"skill_by_horizon": [], "skill_by_category": []}
                                                       for _, name in cohorts}
    if not len(forecasts):
        return out
    with Session(engine) as s:
        scored = scored_with_facts(s, forecasts, as_of)
    for kind, table in breakdowns(scored, within=("cohort",)).items():
        for name, part in table.groupby("cohort", sort=False):
            out.setdefault(str(name), {"skill_by_horizon": [], "skill_by_category": []})[kind] = breakdown_records(
                part.drop(columns=["cohort"]))
    return out


def model_breakdowns(engine: Engine, forecasts: pd.DataFrame, as_of: datetime | None = None) -> dict[str, Any]:
    """Per model, pooled over cohorts: {"skill_by_horizon", "skill_by_category"} frames (agent = model)."""
    with Session(engine) as s:
        scored = scored_with_facts(s, forecasts, as_of)
    return breakdowns(scored, within=())


__all__ = ["FACT_COLUMNS", "breakdowns", "check_categories", "filter_questions", "known_categories",
           "model_breakdowns", "scored_with_facts", "seat_breakdowns", "with_question_facts"]
