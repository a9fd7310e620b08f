"""Frames: the read model — every set-based read of the arena's facts as a pandas DataFrame, one query (or a
few) per frame, no per-row ORM objects: open positions and cash folded from fills, latest prices, resolutions,
bets, stated forecasts. Services (marks, scores, standings, statistics, decomposition, ablations) and the site
read the facts through these; none of them writes anything.

`raw_rows` takes rows straight from the DBAPI cursor where SQLAlchemy's per-row processing would cost more
than the query (PostgreSQL), and `timestamp_literal` lets a time-filtered statement go that way.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import BigInteger, String, bindparam, func, literal_column, select, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlmodel import Session

from arena.domain.market import NO, YES
from arena.money import MICRO
from arena.store.tables import (AgentRow, CohortRow, DecisionRow, FillRow, ForecastRow, MarketRow, PriceSnapshotRow,
                                ResolutionRow)


def rows_frame(rows: Sequence[Sequence[object]], columns: list[str]) -> pd.DataFrame:
    """A DataFrame of `rows` named by `columns`, each column typed as pandas types a list of its values: from
    plain tuples in C (`from_records`; half the time of building a list per column, 1M bets 4.6 → 2.3 s), the
    rows of a SQLAlchemy result made tuples first."""
    if not rows:
        return pd.DataFrame({c: [] for c in columns})
    if not isinstance(rows[0], tuple):
        rows = [tuple(r) for r in rows]
    return pd.DataFrame.from_records(rows, columns=columns)


def raw_rows(session: Session, q: Any) -> list[tuple]:
    """Rows of `q` straight from the DBAPI cursor: for the 100k-row position fold, SQLAlchemy's per-row result
    processing costs more than the query. Only for statements whose bound values are plain integers and
    strings (rendered as literals by the dialect's own compiler)."""
    conn = session.connection()
    sql = str(q.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
    cursor = conn.connection.cursor()
    try:
        cursor.execute(sql)
        return cursor.fetchall()
    finally:
        cursor.close()


def timestamp_literal(at: datetime) -> Any:
    """`at` as a PostgreSQL timestamptz literal, so a time-filtered statement can take `raw_rows` (whose
    literal rendering has no portable form for a datetime bound). The text is `isoformat()` of an aware
    datetime — digits and `-:+.T` only."""
    if at.tzinfo is None:
        raise ValueError("timestamp_literal takes an aware datetime")
    return literal_column(f"CAST('{at.isoformat()}' AS timestamptz)")


def position_frame(session: Session, cohort_ids: Sequence[int], as_of: datetime | None = None) -> pd.DataFrame:
    """Open positions (shares > 0) of the cohorts: agent_id, market_id, outcome, shares, cost (micro units).
    With `as_of`, only fills recorded at or before it count (the book as it stood then)."""
    q = (
        select(FillRow.agent_id, FillRow.market_id, FillRow.outcome,
               func.sum(FillRow.shares).label("shares"), func.sum(FillRow.cost_micros).label("cost"))
        .where(FillRow.cohort_id.in_(cohort_ids))  # type: ignore[attr-defined]
        .group_by(FillRow.agent_id, FillRow.market_id, FillRow.outcome)
        .having(func.sum(FillRow.shares) > 0)
    )
    if session.connection().dialect.name == "postgresql":
        rows = raw_rows(session, q if as_of is None else q.where(FillRow.at <= timestamp_literal(as_of)))
    elif as_of is not None:  # a datetime bound cannot be rendered as a literal portably: the ORM path executes it
        rows = session.connection().execute(q.where(FillRow.at <= as_of)).all()
    else:
        rows = raw_rows(session, q)
    df = rows_frame(rows, ["agent_id", "market_id", "outcome", "shares", "cost"])
    return df.astype({"agent_id": "int64", "shares": "int64", "cost": "int64"})


def cash_frame(session: Session, cohort_ids: Sequence[int], as_of: datetime | None = None) -> pd.DataFrame:
    """Every agent of the cohorts with its cash = starting cash + Σ cash deltas of its fills (with `as_of`: of
    its fills recorded at or before it)."""
    fq = (
        select(FillRow.agent_id, func.sum(FillRow.cash_micros).label("delta"))
        .where(FillRow.cohort_id.in_(cohort_ids))  # type: ignore[attr-defined]
        .group_by(FillRow.agent_id)
    )
    fills = (fq.where(FillRow.at <= as_of) if as_of is not None else fq).subquery()
    q = (
        select(AgentRow.id, AgentRow.cohort_id, CohortRow.starting_cash_micros, fills.c.delta)
        .join(CohortRow, CohortRow.id == AgentRow.cohort_id)
        .outerjoin(fills, fills.c.agent_id == AgentRow.id)
        .where(AgentRow.cohort_id.in_(cohort_ids))  # type: ignore[attr-defined]
        .order_by(AgentRow.id)
    )
    df = rows_frame(session.connection().execute(q).all(), ["agent_id", "cohort_id", "start", "delta"])
    df["delta"] = df["delta"].fillna(0).astype("int64")
    df["cash"] = df["start"].astype("int64") + df["delta"]
    return df


def price_frame(session: Session, as_of: datetime, market_ids: Sequence[str]) -> pd.DataFrame:
    """Latest price per (market, outcome) among snapshots fetched and observed by `as_of`."""
    if not len(market_ids):
        return pd.DataFrame(columns=["market_id", "outcome", "price_ppm"])
    conn = session.connection()
    if conn.dialect.name == "postgresql":
        # One array parameter instead of an IN list of 10⁴–10⁵ values (whose parsing and planning cost more
        # than the query), and DISTINCT ON for the newest row per (market, outcome), ties to the later id.
        q = text(
            "SELECT DISTINCT ON (market_id, outcome) market_id, outcome, price_ppm FROM price_snapshots "
            "WHERE market_id = ANY(:ids) AND fetched_at <= :t AND observed_at <= :t "
            "ORDER BY market_id, outcome, observed_at DESC, id DESC"
        ).bindparams(bindparam("ids", type_=ARRAY(String)))
        return rows_frame(conn.execute(q, {"ids": list(market_ids), "t": as_of}).all(),
                          ["market_id", "outcome", "price_ppm"])
    latest = (
        select(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome,
               func.max(PriceSnapshotRow.observed_at).label("t"))
        .where(PriceSnapshotRow.fetched_at <= as_of, PriceSnapshotRow.observed_at <= as_of,
               PriceSnapshotRow.market_id.in_(list(market_ids)))  # type: ignore[attr-defined]
        .group_by(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome)
        .subquery()
    )
    q = (
        select(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome, PriceSnapshotRow.price_ppm,
               PriceSnapshotRow.id)
        .join(latest, (PriceSnapshotRow.market_id == latest.c.market_id)
              & (PriceSnapshotRow.outcome == latest.c.outcome) & (PriceSnapshotRow.observed_at == latest.c.t))
        .where(PriceSnapshotRow.fetched_at <= as_of)
    )
    df = rows_frame(session.connection().execute(q).all(), ["market_id", "outcome", "price_ppm", "id"])
    # Two sources observed at the same instant: the later-recorded one wins, deterministically.
    df = df.sort_values("id").drop_duplicates(["market_id", "outcome"], keep="last")
    return df[["market_id", "outcome", "price_ppm"]]


def fill_markets(session: Session, cohort_ids: Sequence[int]) -> list[str]:
    """The markets the cohorts have fills in (a superset of their open positions' markets)."""
    q = text("SELECT DISTINCT market_id FROM fills WHERE cohort_id = ANY(:cohorts)").bindparams(
        bindparam("cohorts", type_=ARRAY(BigInteger)))
    return list(session.connection().execute(q, {"cohorts": [int(c) for c in cohort_ids]}).scalars())


_FEW_MARKETS = 2_000  # up to this many, a frame's resolutions are read for its markets alone


def latest_resolutions(session: Session, as_of: datetime | None = None,
                       market_ids: Sequence[str] | None = None) -> pd.DataFrame:
    """market_id, kind, payouts (ppm by outcome) of each market's latest resolution version (with `as_of`: the
    latest version recorded at or before it); with `market_ids`, of those markets only (when they are few: a
    frame of one cohort need not read every market's resolution)."""
    versions = select(ResolutionRow.market_id, func.max(ResolutionRow.version).label("v"))
    if as_of is not None:
        versions = versions.where(ResolutionRow.recorded_at <= as_of)
    if market_ids is not None and len(market_ids) <= _FEW_MARKETS:
        versions = versions.where(ResolutionRow.market_id.in_(sorted(set(market_ids))))  # type: ignore[attr-defined]
    latest = versions.group_by(ResolutionRow.market_id).subquery()
    rows = session.execute(
        select(ResolutionRow.market_id, ResolutionRow.kind, ResolutionRow.payouts)
        .join(latest, (ResolutionRow.market_id == latest.c.market_id) & (ResolutionRow.version == latest.c.v))
    ).all()
    return rows_frame(rows, ["market_id", "kind", "payouts"])


def bets_frame(session: Session, cohort_ids: list[int] | None = None, as_of: datetime | None = None, *,
               order: bool = False) -> pd.DataFrame:
    """One row per BUY fill, in the columns `scoring.leaderboard.per_bet_scores` takes, in the order the fills
    were recorded. With `as_of`: only fills recorded by then, scored against the resolutions recorded by then.
    With `order`: an `_order` column (the fill's id) says where each row stands among every cohort's rows.

    A bet on a named outcome of a multi-outcome market is scored as a YES bet on "that outcome wins", at that
    outcome's price; a NO bet on a binary market has YES price 1 − the price paid.
    """
    q = (
        select(CohortRow.name, AgentRow.name, FillRow.market_id, FillRow.outcome, FillRow.cost_micros,
               FillRow.price_ppm, DecisionRow.cash_at_start_micros, DecisionRow.max_bet_micros, FillRow.decision_id,
               MarketRow.kind, FillRow.at, FillRow.id)
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
    bets = rows_frame(raw_rows(session, q) if raw else conn.execute(q).all(),
                      ["cohort", "agent", "market_id", "outcome", "amount", "price_ppm", "cash_at_decision", "max_bet",
                       "decision_id", "market_kind", "at", "_order"])
    if not order:
        bets = bets.drop(columns="_order")
    if bets.empty:
        return bets.assign(side=[], outcome_yes=[], void=[], price_yes_at_bet=[], stated_probability=[])
    for c in ("amount", "cash_at_decision", "max_bet"):
        bets[c] = bets[c].astype(float) / MICRO
    price = bets["price_ppm"].astype(float) / MICRO
    is_no = bets["outcome"] == NO
    bets["side"] = np.where(is_no, NO, YES)
    bets["price_yes_at_bet"] = np.where(is_no, 1.0 - price, price)

    # outcome_yes: the YES payout scores both sides of a binary; a named outcome scores its own payout
    res = latest_resolutions(session, as_of, pd.unique(bets["market_id"]).tolist())
    payout_rows = [(mid, k, int(v)) for mid, kind, pay in zip(res["market_id"], res["kind"], res["payouts"])
                   if kind not in ("unresolved", "void") for k, v in pay.items()]
    payout = pd.DataFrame(payout_rows, columns=["market_id", "key", "payout"])
    kinds = res[["market_id", "kind"]]
    keyed = bets[["market_id"]].assign(key=np.where(bets["outcome"].isin([YES, NO]), YES, bets["outcome"]))
    keyed = keyed.merge(kinds, on="market_id", how="left").merge(payout, on=["market_id", "key"], how="left")
    resolved = keyed["kind"].notna().to_numpy() & ~keyed["kind"].isin(["unresolved", "void"]).to_numpy()
    bets["outcome_yes"] = np.where(resolved, keyed["payout"].fillna(0).to_numpy(dtype=float) / MICRO, np.nan)
    bets["void"] = (keyed["kind"] == "void").to_numpy()

    sq = select(ForecastRow.decision_id, ForecastRow.market_id, ForecastRow.probability).where(ForecastRow.source == "bet")
    if cohort_ids is not None:  # only the cohorts' decisions (a bet's decision is its agent's, in its cohort)
        sq = sq.join(DecisionRow, DecisionRow.id == ForecastRow.decision_id).where(
            DecisionRow.cohort_id.in_(cohort_ids))  # type: ignore[attr-defined]
    stated = rows_frame(session.connection().execute(sq).all(), ["decision_id", "market_id", "stated_probability"])
    bets = bets.merge(stated, on=["decision_id", "market_id"], how="left")
    return bets.drop(columns=["price_ppm"])


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


def forecast_set_frame(session: Session, cohort_ids: list[int], as_of: datetime | None = None, *,
                       all_replicates: bool = False, order: bool = False) -> pd.DataFrame:
    """The cohorts' forecast-set rows: cohort, agent, market_id, question (market@round), probability (stated
    P(YES)), market_price (the YES price the agent saw, NaN if none) and outcome_yes (YES payout of the latest
    resolution recorded by `as_of`; NaN when unresolved, void or not a YES/NO payout). With `as_of`, only
    decisions completed by then.

    Only the executed replicate's forecasts (replicate 1) unless `all_replicates` (then a `replicate` column
    says which ask stated each row): the headline scores each seat on one ask, as an unreplicated seat is, so
    seats with different replicate counts stay comparable (a mean of k asks is an ensemble, whose Brier is
    lower by Jensen's inequality alone) and the scored forecasts are the ones its bets came with. Rows come in
    the order they were recorded; with `order`, an `_order` column (the forecast's id) says where."""
    q = (select(CohortRow.name, AgentRow.name, ForecastRow.market_id, DecisionRow.round_key, ForecastRow.probability,
                ForecastRow.market_price_ppm, ForecastRow.replicate, ForecastRow.id)
         .join(DecisionRow, DecisionRow.id == ForecastRow.decision_id)
         .join(AgentRow, AgentRow.id == ForecastRow.agent_id)
         .join(CohortRow, CohortRow.id == DecisionRow.cohort_id)
         .where(ForecastRow.source == "forecast_set", DecisionRow.cohort_id.in_(cohort_ids))  # type: ignore[attr-defined]
         .order_by(ForecastRow.id))
    if not all_replicates:
        q = q.where(ForecastRow.replicate == 1)  # type: ignore[arg-type]
    if as_of is not None:
        q = q.where(DecisionRow.completed_at <= as_of, ForecastRow.as_of <= as_of)  # type: ignore[operator]
    df = rows_frame(session.connection().execute(q).all(),
                    ["cohort", "agent", "market_id", "round", "probability", "price_ppm", "replicate", "_order"])
    if not all_replicates:
        df = df.drop(columns="replicate")
    df["question"] = df["market_id"].astype(str) + "@" + df["round"].astype(str)
    df["market_price"] = pd.to_numeric(df["price_ppm"], errors="coerce").astype(float) / MICRO
    res = latest_resolutions(session, as_of, pd.unique(df["market_id"]).tolist() if len(df) else [])
    outcome = {}
    for mid, kind, payouts in zip(res["market_id"], res["kind"], res["payouts"]):
        if kind in ("winner", "probabilistic") and YES in payouts:
            outcome[mid] = int(payouts[YES]) / MICRO
    df["outcome_yes"] = df["market_id"].map(outcome).astype(float)
    df["probability"] = df["probability"].astype(float)
    cols = ["cohort", "agent", "market_id", "question", "probability", "market_price", "outcome_yes"]
    return df[cols + (["replicate"] if all_replicates else []) + (["_order"] if order else [])]


__all__ = ["bets_frame", "cash_frame", "fill_markets", "forecast_set_frame", "forecasts_frame", "latest_resolutions", "position_frame", "price_frame", "raw_rows", "rows_frame", "timestamp_literal"]
