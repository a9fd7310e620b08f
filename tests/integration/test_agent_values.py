"""The per-agent valuation the mark and the standings use: PostgreSQL's one-query path agrees with the
pandas fold (direct prices, NO from YES, multi-outcome prices, unpriced at cost, exact floors)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd

from arena.domain.market import NO, YES, Market, MarketKind, Quote
from arena.money import Price
from arena.usecases import ingest
from arena.usecases.mark import agent_values, value_positions
from arena.store.engine import session_scope
from arena.store.tables import AgentRow, CohortRow, FillRow
from arena.store.frames import position_frame, price_frame

T0 = datetime(2026, 2, 1, tzinfo=timezone.utc)


def test_agent_values_match_the_pandas_fold(engine):
    close = T0 + timedelta(days=30)
    markets = [Market(id="t:bin", venue="t", question="B?", close_time=close),
               Market(id="t:multi", venue="t", question="M?", kind=MarketKind.MULTI, outcomes=("A", "B", "C"),
                      outcome_labels=("A", "B", "C"), close_time=close),
               Market(id="t:dark", venue="t", question="D?", close_time=close)]
    quotes = [Quote("t:bin", {YES: Price(333_333)}, T0, T0, source="t"),
              Quote("t:bin", {YES: Price(612_345)}, T0 + timedelta(hours=2), T0 + timedelta(hours=2), source="t"),
              Quote("t:multi", {"A": Price(250_001), "B": Price(700_000)}, T0, T0, source="t")]
    with session_scope(engine) as s:
        ingest.record_observations(s, T0, markets, quotes)
        cohort = CohortRow(name="c", period_start=T0, starting_cash_micros=10**10, rules={}, lineup=[], created_at=T0)
        s.add(cohort)
        s.flush()
        agents = [AgentRow(cohort_id=cohort.id, name=f"a{i}", kind="scripted") for i in range(3)]
        s.add_all(agents)
        s.flush()
        legs = [(0, "t:bin", YES, 1_234_567_891), (0, "t:bin", NO, 7_000_001), (1, "t:multi", "A", 3_333_333),
                (1, "t:multi", "C", 5_000_000), (1, "t:dark", YES, 9_999_999), (2, "t:bin", NO, 1)]
        for k, (a, mid, outcome, shares) in enumerate(legs):
            s.add(FillRow(key=f"k{k}", cohort_id=cohort.id, agent_id=agents[a].id, market_id=mid, outcome=outcome,
                          kind="buy", shares=shares, cash_micros=-(shares // 3 + 1), cost_micros=shares // 3 + 1,
                          at=T0))
        s.flush()
        for as_of in (T0 + timedelta(hours=1), T0 + timedelta(hours=3)):
            got = agent_values(s, as_of, [cohort.id]).sort_index()
            positions = position_frame(s, [cohort.id])
            valued = value_positions(positions, price_frame(s, as_of, positions["market_id"].unique().tolist()))
            valued["unpriced"] = (~valued["priced"].astype(bool)).astype("int64")
            want = valued.groupby("agent_id").agg(positions_value=("value", "sum"),
                                                  open_positions=("value", "size"), unpriced=("unpriced", "sum"))
            pd.testing.assert_frame_equal(got.astype("int64"), want.astype("int64").sort_index(), check_names=False)
        assert int(got.loc[agents[1].id, "unpriced"]) == 2  # outcome C and the dark market: valued at cost


def test_point_in_time_values_count_only_the_fills_recorded_by_then(engine):
    """`agent_values(..., point_in_time=True)` (the standings' live portfolios) equals the pandas fold of the
    fills recorded by `as_of` — a later buy, and a later sell that closes a position, do not count yet."""
    close = T0 + timedelta(days=30)
    with session_scope(engine) as s:
        ingest.record_observations(s, T0, [Market(id="t:b", venue="t", question="B?", close_time=close)],
                                   [Quote("t:b", {YES: Price(400_001)}, T0, T0, source="t")])
        cohort = CohortRow(name="c", period_start=T0, starting_cash_micros=10**10, rules={}, lineup=[], created_at=T0)
        s.add(cohort)
        s.flush()
        agent = AgentRow(cohort_id=cohort.id, name="a", kind="scripted")
        s.add(agent)
        s.flush()
        for k, (outcome, kind, shares, cost, minutes) in enumerate([(YES, "buy", 5_000_001, 2_000_000, 10),
                                                                    (NO, "buy", 3_000_000, 1_800_000, 20),
                                                                    (YES, "buy", 1_000_000, 400_000, 90),
                                                                    (NO, "sell", -3_000_000, -1_800_000, 95)]):
            s.add(FillRow(key=f"p{k}", cohort_id=cohort.id, agent_id=agent.id, market_id="t:b", outcome=outcome,
                          kind=kind, shares=shares, cash_micros=-cost if kind == "buy" else 1_700_000,
                          cost_micros=cost, at=T0 + timedelta(minutes=minutes)))
        s.flush()
        seen = []
        for minutes in (30, 120):
            as_of = T0 + timedelta(minutes=minutes)
            got = agent_values(s, as_of, [cohort.id], point_in_time=True)
            positions = position_frame(s, [cohort.id], as_of)
            valued = value_positions(positions, price_frame(s, as_of, positions["market_id"].unique().tolist()))
            assert int(got["positions_value"].sum()) == int(valued["value"].sum())
            assert int(got["open_positions"].sum()) == len(valued)
            seen.append((int(got["positions_value"].sum()), int(got["open_positions"].sum())))
    # at 0:30 both sides are open; by 2:00 the NO side is sold and the YES side grew
    assert seen[0] == (5_000_001 * 400_001 // 10**6 + 3_000_000 * 599_999 // 10**6, 2)
    assert seen[1] == (6_000_001 * 400_001 // 10**6, 1)
