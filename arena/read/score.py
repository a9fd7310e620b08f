"""Score: read the stored facts (fills, decisions, forecasts, resolutions, prices) into the frames the pure
scoring library takes, and return per-cohort and overall leaderboards. Everything is recomputed from facts;
nothing here calls a model or trusts a stored score."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from arena.clock import utc
from arena.money import MICRO
from arena.scoring.risk import EquityRisk, daily_equity, equity_risk
from arena.scoring.leaderboard import leaderboard, model_brier_across_cohorts
from arena.usecases.mark import agent_values, bid_values
from arena.store.frames import bets_frame, cash_frame, forecasts_frame
from arena.store.snapshot import read_together
from arena.store.tables import AgentRow, CohortRow, PortfolioSnapshotRow

SCORING_VERSION = "scoring-1"


def portfolios_frame(session: Session, as_of: datetime, cohort_ids: list[int], point_in_time: bool = False, *,
                     order: bool = False) -> pd.DataFrame:
    """cohort, agent, starting_balance, total_value (USD) — marked live at `as_of` from fills and prices (with
    `point_in_time`, from the fills recorded by `as_of` only), one row per agent in the order of their ids (with
    `order`, an `_order` column holds the id) — and the risk columns: value_at_bid (USD: the positions marked at
    the bid, `usecases.mark.bid_values`; NaN where a position has no recorded bid), sharpe, max_drawdown and
    risk_note (`scoring.risk`, from the portfolio snapshots marked by `as_of`)."""
    cash = cash_frame(session, cohort_ids, as_of if point_in_time else None)
    pv = agent_values(session, as_of, cohort_ids, point_in_time=point_in_time)["positions_value"]
    cash["positions_value"] = cash["agent_id"].map(pv).fillna(0).astype("int64")
    at_bid = bid_values(session, as_of, cohort_ids, point_in_time=point_in_time)
    held = cash["agent_id"].isin(at_bid.index)
    # an agent without open positions liquidates at its cash; one with an unbid position is unknown (NaN)
    bid_micros = cash["cash"].astype(float) + cash["agent_id"].map(at_bid).where(held, 0.0).astype(float)
    risk = _risk(session, as_of, cash)
    names = dict(session.execute(select(AgentRow.id, AgentRow.name)).all())
    cohorts = dict(session.execute(select(CohortRow.id, CohortRow.name)).all())
    return pd.DataFrame({
        "cohort": cash["cohort_id"].map(cohorts),
        "agent": cash["agent_id"].map(names),
        "starting_balance": cash["start"].astype(float) / MICRO,
        "total_value": (cash["cash"] + cash["positions_value"]).astype(float) / MICRO,
        "value_at_bid": bid_micros / MICRO,
        "sharpe": [r.sharpe if r.sharpe is not None else np.nan for r in risk],
        "max_drawdown": [r.max_drawdown if r.max_drawdown is not None else np.nan for r in risk],
        "risk_note": pd.array([r.note for r in risk], dtype="string"),
        **({"_order": cash["agent_id"].astype("int64")} if order else {}),
    })


def _risk(session: Session, as_of: datetime, cash: pd.DataFrame) -> list[EquityRisk]:
    """Per row of `cash` (agent_id, start), the `scoring.risk` of its daily marks recorded by `as_of`."""
    cohorts = sorted(set(int(c) for c in cash["cohort_id"]))
    q = (select(PortfolioSnapshotRow.agent_id, PortfolioSnapshotRow.as_of, PortfolioSnapshotRow.total_value_micros)
         .where(PortfolioSnapshotRow.cohort_id.in_(cohorts),  # type: ignore[attr-defined]
                PortfolioSnapshotRow.as_of <= as_of)
         .order_by(PortfolioSnapshotRow.agent_id, PortfolioSnapshotRow.as_of, PortfolioSnapshotRow.id))
    marks: dict[int, tuple[list[Any], list[int]]] = {}  # agent id → (UTC day of each mark, its equity), in time order
    for aid, t, v in session.connection().execute(q).all() if len(cash) else []:
        days, values = marks.setdefault(int(aid), ([], []))
        days.append(utc(t).date())
        values.append(int(v))
    return [equity_risk(daily_equity(*marks.get(int(aid), ([], [])), int(start)))
            for aid, start in zip(cash["agent_id"], cash["start"])]


def cohort_leaderboards(engine: Engine, as_of: datetime, cohort_names: list[str] | None = None) -> pd.DataFrame:
    """Every metric per (cohort, agent)."""
    with Session(engine) as s:
        q = select(CohortRow.id).order_by(CohortRow.period_start)
        if cohort_names:
            q = q.where(CohortRow.name.in_(cohort_names))  # type: ignore[attr-defined]
        ids = list(s.scalars(q))
    if not ids:
        return pd.DataFrame()
    # the three frames on one snapshot, read side by side on PostgreSQL: the reads are the bulk of the work and
    # each keeps a core busy, so together they take about as long as the longest one
    bets, portfolios, forecasts = read_together(engine, [
        lambda s: bets_frame(s, ids), lambda s: portfolios_frame(s, as_of, ids), lambda s: forecasts_frame(s, ids)])
    return leaderboard(bets, portfolios, forecasts)


def overall_leaderboard(engine: Engine, as_of: datetime) -> pd.DataFrame:
    """Per model (agent name) across cohorts: pooled Brier over all its resolved bets, mean return, total P/L."""
    with Session(engine) as s:
        ids = list(s.scalars(select(CohortRow.id)))
        if not ids:
            return pd.DataFrame()
        bets = bets_frame(s, ids)
        ports = portfolios_frame(s, as_of, ids)
    return overall_table(bets, ports)


def overall_table(bets: pd.DataFrame, portfolios: pd.DataFrame) -> pd.DataFrame:
    """Per model (agent name) across cohorts, from frames already read: cohorts, mean return, total P/L and the
    pooled Brier of all the model's resolved bets (an agent's name is its model: the same name in every cohort
    is the same model)."""
    if portfolios.empty:
        return pd.DataFrame(columns=["agent", "cohorts", "mean_return_pct", "total_pnl", "n_resolved", "brier"])
    ports = portfolios.assign(pnl=portfolios["total_value"] - portfolios["starting_balance"])
    ports["return_pct"] = 100.0 * ports["pnl"] / ports["starting_balance"]
    money_table = ports.groupby("agent").agg(cohorts=("cohort", "nunique"), mean_return_pct=("return_pct", "mean"),
                                             total_pnl=("pnl", "sum"))
    if len(bets):
        brier = model_brier_across_cohorts(bets.assign(model=bets["agent"]))
    else:
        brier = pd.DataFrame({"model": pd.Series(dtype=str), "n_resolved": pd.Series(dtype="int64"),
                              "brier": pd.Series(dtype=float)})
    brier = brier.rename(columns={"model": "agent"}).set_index("agent")
    table = money_table.join(brier, how="left").reset_index()
    return table.sort_values(["brier", "agent"], na_position="last", kind="stable").reset_index(drop=True)
