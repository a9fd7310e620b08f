"""The bets and forecast-set frames read their facts by id and look up the cohort and agent names, the decision's
bankroll and round and the market's kind in pandas (`frames._joined`). Checked here against an oracle written
the plain way — one SQL statement joining every table, and each bet's outcome worked out row by row from the
market's latest resolution — on three simulated cohorts, on SQLite and on PostgreSQL (where the frames come
through COPY)."""

from __future__ import annotations

import math
from datetime import timedelta

import pandas as pd
from sqlalchemy import select
from sqlmodel import Session
from three_cohorts import START, simulate_three_cohorts

from arena.domain.market import NO, YES
from arena.money import MICRO
from arena.store.frames import bets_frame, forecast_set_frame, rows_frame
from arena.store.tables import AgentRow, CohortRow, DecisionRow, FillRow, ForecastRow, MarketRow, ResolutionRow


def _latest_resolution(s: Session, market_id: str, as_of) -> tuple[str, dict] | None:  # type: ignore[no-untyped-def]
    q = select(ResolutionRow.kind, ResolutionRow.payouts).where(ResolutionRow.market_id == market_id)
    if as_of is not None:
        q = q.where(ResolutionRow.recorded_at <= as_of)
    row = s.execute(q.order_by(ResolutionRow.version.desc()).limit(1)).first()  # type: ignore[attr-defined]
    return None if row is None else (row[0], row[1])


def _oracle_bets(s: Session, ids: list[int] | None, as_of) -> pd.DataFrame:  # type: ignore[no-untyped-def]
    q = (select(CohortRow.name, AgentRow.name, FillRow.market_id, FillRow.outcome, FillRow.cost_micros,
                DecisionRow.cash_at_start_micros, DecisionRow.max_bet_micros, FillRow.decision_id, MarketRow.kind,
                FillRow.cohort_id)
         .join(AgentRow, AgentRow.id == FillRow.agent_id).join(CohortRow, CohortRow.id == FillRow.cohort_id)
         .join(DecisionRow, DecisionRow.id == FillRow.decision_id).join(MarketRow, MarketRow.id == FillRow.market_id)
         # the frame's fixed order: cohort, agent, then the agent's fills as recorded
         .where(FillRow.kind == "buy").order_by(FillRow.cohort_id, FillRow.agent_id, FillRow.id))
    if ids is not None:
        q = q.where(FillRow.cohort_id.in_(ids))  # type: ignore[attr-defined]
    if as_of is not None:
        q = q.where(FillRow.at <= as_of)
    df = rows_frame(s.execute(q).all(), ["cohort", "agent", "market_id", "outcome", "amount", "cash_at_decision",
                                         "max_bet", "decision_id", "market_kind", "cid"])
    df["_order"] = df["cid"] * 2**32 + df.groupby("cid").cumcount()  # (cohort id, place in the cohort)
    outcome_yes, void = [], []
    for market, outcome in zip(df["market_id"], df["outcome"]):
        res = _latest_resolution(s, market, as_of)
        kind = res[0] if res else None
        void.append(kind == "void")
        if kind is None or kind in ("unresolved", "void"):
            outcome_yes.append(math.nan)
        else:
            outcome_yes.append(int(res[1].get(YES if outcome in (YES, NO) else outcome, 0)) / MICRO)  # type: ignore[index]
    return df.assign(outcome_yes=outcome_yes, void=void)


def _check_bets(s: Session, ids: list[int] | None, as_of) -> int:  # type: ignore[no-untyped-def]
    got = bets_frame(s, ids, as_of, order=True)
    want = _oracle_bets(s, ids, as_of)
    assert len(got) == len(want)
    for c in ("cohort", "agent", "market_id", "outcome", "decision_id", "market_kind", "_order", "void"):
        assert got[c].tolist() == want[c].tolist(), c
    for c in ("amount", "cash_at_decision", "max_bet"):
        assert got[c].tolist() == (want[c].astype(float) / MICRO).tolist(), c
    pd.testing.assert_series_equal(got["outcome_yes"], want["outcome_yes"].astype(float), check_names=False)
    assert got["side"].tolist() == [NO if o == NO else YES for o in want["outcome"]]
    return len(got)


def test_bets_frame_equals_the_joined_statement(engine) -> None:  # type: ignore[no-untyped-def]
    simulate_three_cohorts(engine)
    with Session(engine) as s:
        ids = list(s.scalars(select(CohortRow.id).order_by(CohortRow.id)))
        n = _check_bets(s, None, None)
        assert n > 20
        assert _check_bets(s, ids[1:2], None) < n
        _check_bets(s, ids[:2], START + timedelta(days=20))
        got = bets_frame(s, None)
        assert got["outcome_yes"].notna().any()  # (the oracle's payouts were compared, not only missing ones)


def test_forecast_set_frame_equals_the_joined_statement(engine) -> None:  # type: ignore[no-untyped-def]
    simulate_three_cohorts(engine)
    with Session(engine) as s:
        ids = list(s.scalars(select(CohortRow.id).order_by(CohortRow.id)))
        for as_of in (None, START + timedelta(days=20)):
            q = (select(CohortRow.name, AgentRow.name, ForecastRow.market_id, DecisionRow.round_key,
                        ForecastRow.probability, DecisionRow.cohort_id)
                 .join(DecisionRow, DecisionRow.id == ForecastRow.decision_id)
                 .join(AgentRow, AgentRow.id == ForecastRow.agent_id)
                 .join(CohortRow, CohortRow.id == DecisionRow.cohort_id)
                 .where(ForecastRow.source == "forecast_set", DecisionRow.cohort_id.in_(ids[:2]),  # type: ignore[attr-defined]
                        ForecastRow.replicate == 1)
                 # the frame's fixed order: cohort id, round, market, agent (not the order they were recorded)
                 .order_by(DecisionRow.cohort_id, DecisionRow.round_key, ForecastRow.market_id, AgentRow.name))
            if as_of is not None:
                q = q.where(DecisionRow.completed_at <= as_of, ForecastRow.as_of <= as_of)  # type: ignore[operator]
            want = rows_frame(s.execute(q).all(), ["cohort", "agent", "market_id", "round", "probability", "cid"])
            got = forecast_set_frame(s, ids[:2], as_of, order=True)
            assert got["answered"].all()  # every scripted seat answers its whole set
            assert len(got) == len(want) > 0
            for c in ("cohort", "agent", "market_id", "probability"):
                assert got[c].tolist() == want[c].tolist(), c
            within = want.groupby("cid").cumcount()
            assert got["_order"].tolist() == (want["cid"] * 2**32 + within).tolist()
            assert got["question"].tolist() == [f"{m}@{r}" for m, r in zip(want["market_id"], want["round"])]
