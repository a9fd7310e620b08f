"""P/L decomposition from stored facts: reads fills, stated beliefs (forecasts with source 'bet'), price snapshots
and resolutions, and returns the exact per-bet, per-agent and per-cohort parts of `scoring.decomposition`.

Nothing is trusted but facts: the last price of a settled position is the latest snapshot observed before its
market's latest resolution (resolved_at, else when it was recorded); the last price of an open position is the
marking price at `as_of` (the same snapshot `mark` uses, so the parts add up to the marked P/L).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from arena.domain.market import NO
from arena.money import MICRO
from arena.scoring.decomposition import PART_COLUMNS, SUM_COLUMNS, decompose, summarize

from arena.store.tables import AgentRow, CohortRow, FillRow, ForecastRow, PriceSnapshotRow, ResolutionRow
from arena.usecases.mark import side_prices
from arena.store.frames import price_frame, rows_frame

POSITION = ["agent_id", "market_id", "outcome"]


@dataclass(frozen=True)
class Decomposition:
    """bets: one row per BUY (cohort, agent, agent_id, market_id, outcome, bet key, decision_id, at, the side's
    price paid, mid and stated belief and the position's last price (ppm, Int64, <NA> when unknown), PART_COLUMNS);
    agents: per (cohort, agent) sums; cohorts: per cohort sums (scoring.decomposition.summarize columns).
    Every amount is Int64 micro-USD; `usd` converts a frame's amounts to float dollars for display."""

    bets: pd.DataFrame
    agents: pd.DataFrame
    cohorts: pd.DataFrame

    @staticmethod
    def usd(frame: pd.DataFrame) -> pd.DataFrame:
        out = frame.copy()
        for c in dict.fromkeys((*PART_COLUMNS, *SUM_COLUMNS)):
            if c in out.columns and c != "shares":
                out[c] = out[c].astype("Float64") / MICRO
        return out


def _fills(session: Session, cohort_ids: list[int]) -> pd.DataFrame:
    q = (select(CohortRow.name, AgentRow.name, FillRow.agent_id, FillRow.market_id, FillRow.outcome, FillRow.key,
                FillRow.kind, FillRow.shares, FillRow.cash_micros, FillRow.cost_micros, FillRow.price_ppm,
                FillRow.mid_ppm, FillRow.provenance, FillRow.decision_id, FillRow.at)
         .join(AgentRow, AgentRow.id == FillRow.agent_id)
         .join(CohortRow, CohortRow.id == FillRow.cohort_id)
         .where(col(FillRow.cohort_id).in_(cohort_ids))
         .order_by(FillRow.id))
    df = rows_frame(session.connection().execute(q).all(),
                    ["cohort", "agent", "agent_id", "market_id", "outcome", "key", "kind", "shares", "cash", "cost",
                     "price_ppm", "mid_ppm", "provenance", "decision_id", "at"])
    df["reverses"] = [p.removeprefix("reverses:") if k == "reversal" else None
                      for k, p in zip(df["kind"], df["provenance"])]
    return df


BELIEFS_BY_ID = 5_000  # decisions up to which `_beliefs` asks for their forecasts by id (more: reads every bet's)


def _beliefs(session: Session, fills: pd.DataFrame) -> pd.Series:
    """The stated probability of each BUY's side in ppm (None where the bet stated none)."""
    q = select(ForecastRow.decision_id, ForecastRow.market_id, ForecastRow.probability).where(ForecastRow.source == "bet")
    decisions = sorted({int(d) for d in fills["decision_id"].dropna()})
    conn = session.connection()
    if len(decisions) <= BELIEFS_BY_ID:  # a few cohorts' decisions: only theirs, by the decision index
        found = conn.execute(q.where(col(ForecastRow.decision_id).in_(decisions))).all() if decisions else []
    else:
        found = conn.execute(q).all()
    stated = rows_frame(found, ["decision_id", "market_id", "p_yes"])
    merged = fills[["decision_id", "market_id", "outcome", "kind"]].merge(
        stated, on=["decision_id", "market_id"], how="left")
    p = pd.to_numeric(merged["p_yes"], errors="coerce").to_numpy(dtype=float)
    side = np.where(merged["outcome"].to_numpy() == NO, 1.0 - p, p)  # a named outcome: P(that outcome)
    ppm = np.rint(side * MICRO)
    return pd.Series([int(v) if k == "buy" and np.isfinite(v) else None
                      for v, k in zip(ppm, merged["kind"])], index=fills.index, dtype=object)


def _side_prices(prices: pd.DataFrame, wanted: pd.DataFrame) -> pd.Series:
    """Side price per wanted (market_id, outcome): the outcome's own snapshot, else 1 − YES for a NO side
    (`mark.side_prices`)."""
    sides = side_prices(prices)
    direct = dict(zip(zip(sides["market_id"], sides["outcome"]), sides["price_ppm"]))
    out = []
    for m, o in zip(wanted["market_id"], wanted["outcome"]):
        v = direct.get((m, o))
        out.append(None if v is None else int(v))
    return pd.Series(out, index=wanted.index, dtype=object)


def _prices_before_resolution(session: Session, as_of: datetime, market_ids: list[str]) -> pd.DataFrame:
    """Latest snapshot per (market, outcome) observed before the market's latest resolution and fetched by as_of."""
    if not market_ids:
        return pd.DataFrame(columns=["market_id", "outcome", "price_ppm"])
    latest_v = (select(ResolutionRow.market_id, func.max(ResolutionRow.version).label("v"))
                .where(col(ResolutionRow.market_id).in_(market_ids))
                .group_by(ResolutionRow.market_id).subquery())
    cut = (select(ResolutionRow.market_id,
                  func.coalesce(ResolutionRow.resolved_at, ResolutionRow.recorded_at).label("cutoff"))
           .join(latest_v, (ResolutionRow.market_id == latest_v.c.market_id)
                 & (ResolutionRow.version == latest_v.c.v)).subquery())
    last = (select(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome,
                   func.max(PriceSnapshotRow.observed_at).label("t"))
            .join(cut, cut.c.market_id == PriceSnapshotRow.market_id)
            .where(PriceSnapshotRow.observed_at < cut.c.cutoff, PriceSnapshotRow.fetched_at <= as_of)
            .group_by(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome).subquery())
    q = (select(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome, PriceSnapshotRow.price_ppm,
                PriceSnapshotRow.id)
         .join(last, (PriceSnapshotRow.market_id == last.c.market_id)
               & (PriceSnapshotRow.outcome == last.c.outcome) & (PriceSnapshotRow.observed_at == last.c.t))
         .where(PriceSnapshotRow.fetched_at <= as_of))
    df = rows_frame(session.connection().execute(q).all(), ["market_id", "outcome", "price_ppm", "id"])
    df = df.sort_values("id").drop_duplicates(["market_id", "outcome"], keep="last")
    return df[["market_id", "outcome", "price_ppm"]]


def decomposition(engine: Engine, as_of: datetime, cohort_names: list[str] | None = None) -> Decomposition:
    """The exact P/L decomposition of every bet of the named (default: all) cohorts, marked at `as_of`."""
    with Session(engine) as s:
        q = select(CohortRow.id).order_by(CohortRow.period_start)
        if cohort_names:
            q = q.where(col(CohortRow.name).in_(cohort_names))
        ids = list(s.scalars(q))
        fills = _fills(s, ids) if ids else pd.DataFrame()
        if fills.empty:
            empty = decompose(pd.DataFrame(), position=POSITION)
            for i, c in enumerate(("cohort", "agent")):
                empty.insert(i, c, pd.Series(dtype=object))
            for i, c in enumerate(("decision_id", "at", "price_ppm", "mid_ppm", "belief_ppm", "last_price_ppm")):
                empty.insert(6 + i, c, pd.Series(dtype="Int64" if c.endswith("ppm") else object))
            return Decomposition(empty, summarize(empty, ["cohort", "agent"]), summarize(empty, ["cohort"]))
        fills["belief_ppm"] = _beliefs(s, fills)
        held = fills.groupby(POSITION, sort=False)["shares"].sum().rename("held").reset_index()
        open_ = held[held["held"] > 0]
        closed = held[held["held"] <= 0]
        now = price_frame(s, as_of, open_["market_id"].unique().tolist())
        before = _prices_before_resolution(s, as_of, closed["market_id"].unique().tolist())
    last = pd.concat([open_.assign(last_price_ppm=_side_prices(now, open_)),
                      closed.assign(last_price_ppm=_side_prices(before, closed))], ignore_index=True)
    bets = decompose(fills, last, position=POSITION)
    info = fills[fills["kind"] == "buy"][["key", "cohort", "agent", "decision_id", "at", "price_ppm", "mid_ppm",
                                          "belief_ppm"]].rename(columns={"key": "bet"})
    bets = info.merge(bets, on="bet", how="right").merge(last, on=POSITION, how="left").drop(columns=["held"])
    for c in ("price_ppm", "mid_ppm", "belief_ppm", "last_price_ppm"):
        bets[c] = pd.array([None if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) else int(v)
                            for v in bets[c]], dtype="Int64")
    first = ["cohort", "agent", *POSITION, "bet", "decision_id", "at", "price_ppm", "mid_ppm", "belief_ppm",
             "last_price_ppm"]
    bets = bets[first + [c for c in bets.columns if c not in first]]
    return Decomposition(bets, summarize(bets, ["cohort", "agent"]), summarize(bets, ["cohort"]))


__all__ = ["Decomposition", "decomposition"]
