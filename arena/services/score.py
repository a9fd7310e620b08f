"""Score: read the stored facts (fills, decisions, forecasts, resolutions, prices) into the frames the pure
scoring library takes, and return per-cohort and overall leaderboards. Everything is recomputed from facts;
nothing here calls a model or trusts a stored score."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from arena.domain.market import NO, YES
from arena.money import MICRO
from arena.scoring.leaderboard import leaderboard, model_brier_across_cohorts
from arena.services.mark import _raw_rows, agent_values, cash_frame, rows_frame, timestamp_literal
from arena.store.tables import (
    AgentRow,
    CohortRow,
    DecisionRow,
    FillRow,
    ForecastRow,
    MarketRow,
    ResolutionRow,
)

SCORING_VERSION = "scoring-1"




def latest_resolutions(session: Session, as_of: datetime | None = None) -> pd.DataFrame:
    """market_id, kind, payouts (ppm by outcome) of each market's latest resolution version (with `as_of`: the
    latest version recorded at or before it)."""
    versions = select(ResolutionRow.market_id, func.max(ResolutionRow.version).label("v"))
    if as_of is not None:
        versions = versions.where(ResolutionRow.recorded_at <= as_of)
    latest = versions.group_by(ResolutionRow.market_id).subquery()
    rows = session.execute(
        select(ResolutionRow.market_id, ResolutionRow.kind, ResolutionRow.payouts)
        .join(latest, (ResolutionRow.market_id == latest.c.market_id) & (ResolutionRow.version == latest.c.v))
    ).all()
    return rows_frame(rows, ["market_id", "kind", "payouts"])


def bets_frame(session: Session, cohort_ids: list[int] | None = None, as_of: datetime | None = None
               ) -> pd.DataFrame:
    """One row per BUY fill, in the columns `scoring.leaderboard.per_bet_scores` takes. With `as_of`: only fills
    recorded by then, scored against the resolutions recorded by then.

    A bet on a named outcome of a multi-outcome market is scored as a YES bet on "that outcome wins", at that
    outcome's price; a NO bet on a binary market has YES price 1 − the price paid.
    """
    q = (
        select(CohortRow.name, AgentRow.name, FillRow.market_id, FillRow.outcome, FillRow.cost_micros,
               FillRow.price_ppm, DecisionRow.cash_at_start_micros, DecisionRow.max_bet_micros, FillRow.decision_id,
               MarketRow.kind, FillRow.at)
        .join(AgentRow, AgentRow.id == FillRow.agent_id)
        .join(CohortRow, CohortRow.id == FillRow.cohort_id)
        .join(DecisionRow, DecisionRow.id == FillRow.decision_id)
        .join(MarketRow, MarketRow.id == FillRow.market_id)
        .where(FillRow.kind == "buy")
        .order_by(FillRow.id)
    )
    if cohort_ids is not None:
        q = q.where(FillRow.cohort_id.in_(cohort_ids))  # type: ignore[attr-defined]
    conn = session.connection()  # PostgreSQL's rows need no processing: straight from the cursor
    raw = conn.dialect.name == "postgresql"
    if as_of is not None:  # (the raw cursor renders literals: on PostgreSQL the time is one, cast)
        q = q.where(FillRow.at <= (timestamp_literal(as_of) if raw else as_of))
    bets = rows_frame(_raw_rows(session, q) if raw else conn.execute(q).all(),
                      ["cohort", "agent", "market_id", "outcome", "amount", "price_ppm", "cash_at_decision", "max_bet",
                       "decision_id", "market_kind", "at"])
    if bets.empty:
        return bets.assign(side=[], outcome_yes=[], void=[], price_yes_at_bet=[], stated_probability=[])
    for c in ("amount", "cash_at_decision", "max_bet"):
        bets[c] = bets[c].astype(float) / MICRO
    price = bets["price_ppm"].astype(float) / MICRO
    is_no = bets["outcome"] == NO
    bets["side"] = np.where(is_no, NO, YES)
    bets["price_yes_at_bet"] = np.where(is_no, 1.0 - price, price)

    # outcome_yes: the YES payout scores both sides of a binary; a named outcome scores its own payout
    res = latest_resolutions(session, as_of)
    payout_rows = [(mid, k, int(v)) for mid, kind, pay in zip(res["market_id"], res["kind"], res["payouts"])
                   if kind not in ("unresolved", "void") for k, v in pay.items()]
    payout = pd.DataFrame(payout_rows, columns=["market_id", "key", "payout"])
    kinds = res[["market_id", "kind"]]
    keyed = bets[["market_id"]].assign(key=np.where(bets["outcome"].isin([YES, NO]), YES, bets["outcome"]))
    keyed = keyed.merge(kinds, on="market_id", how="left").merge(payout, on=["market_id", "key"], how="left")
    resolved = keyed["kind"].notna().to_numpy() & ~keyed["kind"].isin(["unresolved", "void"]).to_numpy()
    bets["outcome_yes"] = np.where(resolved, keyed["payout"].fillna(0).to_numpy(dtype=float) / MICRO, np.nan)
    bets["void"] = (keyed["kind"] == "void").to_numpy()

    stated = rows_frame(session.connection().execute(
        select(ForecastRow.decision_id, ForecastRow.market_id, ForecastRow.probability)
        .where(ForecastRow.source == "bet")).all(), ["decision_id", "market_id", "stated_probability"])
    bets = bets.merge(stated, on=["decision_id", "market_id"], how="left")
    return bets.drop(columns=["price_ppm"])


def portfolios_frame(session: Session, as_of: datetime, cohort_ids: list[int], point_in_time: bool = False
                     ) -> pd.DataFrame:
    """cohort, agent, starting_balance, total_value (USD) — marked live at `as_of` from fills and prices (with
    `point_in_time`, from the fills recorded by `as_of` only)."""
    cash = cash_frame(session, cohort_ids, as_of if point_in_time else None)
    pv = agent_values(session, as_of, cohort_ids, point_in_time=point_in_time)["positions_value"]
    cash["positions_value"] = cash["agent_id"].map(pv).fillna(0).astype("int64")
    names = dict(session.execute(select(AgentRow.id, AgentRow.name)).all())
    cohorts = dict(session.execute(select(CohortRow.id, CohortRow.name)).all())
    return pd.DataFrame({
        "cohort": cash["cohort_id"].map(cohorts),
        "agent": cash["agent_id"].map(names),
        "starting_balance": cash["start"].astype(float) / MICRO,
        "total_value": (cash["cash"] + cash["positions_value"]).astype(float) / MICRO,
    })


def forecasts_frame(session: Session, cohort_ids: list[int]) -> pd.DataFrame:
    """Stated forecast-set probabilities: one question per (market, decision round) so agents are compared
    on the same question at the same time."""
    rows = session.connection().execute(
        select(CohortRow.name, AgentRow.name, ForecastRow.market_id, DecisionRow.round_key, ForecastRow.probability)
        .join(DecisionRow, DecisionRow.id == ForecastRow.decision_id)
        .join(AgentRow, AgentRow.id == ForecastRow.agent_id)
        .join(CohortRow, CohortRow.id == DecisionRow.cohort_id)
        .where(ForecastRow.source == "forecast_set", DecisionRow.cohort_id.in_(cohort_ids),  # type: ignore[attr-defined]
               ForecastRow.replicate == 1)  # the executed replicate's (see standings.forecast_set_frame)
    ).all()
    df = rows_frame(rows, ["cohort", "agent", "market_id", "round", "probability"])
    df["question"] = df["market_id"].astype(str) + "@" + df["round"].astype(str)
    return df[["cohort", "agent", "question", "probability"]]


def cohort_leaderboards(engine: Engine, as_of: datetime, cohort_names: list[str] | None = None) -> pd.DataFrame:
    """Every metric per (cohort, agent)."""
    with Session(engine) as s:
        q = select(CohortRow.id).order_by(CohortRow.period_start)
        if cohort_names:
            q = q.where(CohortRow.name.in_(cohort_names))  # type: ignore[attr-defined]
        ids = list(s.scalars(q))
        if not ids:
            return pd.DataFrame()
        return leaderboard(bets_frame(s, ids), portfolios_frame(s, as_of, ids), forecasts_frame(s, ids))


def overall_leaderboard(engine: Engine, as_of: datetime) -> pd.DataFrame:
    """Per model (agent name) across cohorts: pooled Brier over all its resolved bets, mean return, total P/L."""
    with Session(engine) as s:
        ids = list(s.scalars(select(CohortRow.id)))
        if not ids:
            return pd.DataFrame()
        bets = bets_frame(s, ids)
        ports = portfolios_frame(s, as_of, ids)
    ports = ports.assign(pnl=ports["total_value"] - ports["starting_balance"])
    ports["return_pct"] = 100.0 * ports["pnl"] / ports["starting_balance"]
    money = ports.groupby("agent").agg(cohorts=("cohort", "nunique"), mean_return_pct=("return_pct", "mean"),
                                       total_pnl=("pnl", "sum"))
    if len(bets):  # an agent's name is its model: the same name in every cohort is the same model
        brier = model_brier_across_cohorts(bets.assign(model=bets["agent"]))
    else:
        brier = pd.DataFrame({"model": pd.Series(dtype=str), "n_resolved": pd.Series(dtype="int64"),
                              "brier": pd.Series(dtype=float)})
    brier = brier.rename(columns={"model": "agent"}).set_index("agent")
    table = money.join(brier, how="left").reset_index()
    return table.sort_values(["brier", "agent"], na_position="last", kind="stable").reset_index(drop=True)
