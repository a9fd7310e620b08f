"""The set-based mark (`mark.mark_to_market`, one sorted fold on PostgreSQL, pandas on SQLite) writes, for every
agent of a mixed fixture, exactly the snapshot the scalar path gives: the agent's fills folded by
`domain.ledger`, each open position valued by `domain.valuation.value_ledger` at `repo.latest_quotes`.
The fixture mixes buys, partial and full sells, a settled position, NO sides priced from YES, a multi-outcome
market with an unquoted outcome, a market without any price, a later price, and an agent without fills."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from sqlalchemy import select

from arena.domain.market import NO, YES, Market, MarketKind, Quote
from arena.domain.valuation import value_ledger
from arena.money import MICRO, Price
from arena.usecases import ingest
from arena.usecases.mark import mark_to_market
from arena.store import repo
from arena.store.engine import session_scope
from arena.store.tables import AgentRow, CohortRow, FillRow, PortfolioSnapshotRow

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


def _fixture(engine) -> list[int]:  # type: ignore[no-untyped-def]
    close = T0 + timedelta(days=30)
    markets = [Market(id=f"t:b{i}", venue="t", question=f"B{i}?", close_time=close) for i in range(4)]
    markets.append(Market(id="t:multi", venue="t", question="M?", kind=MarketKind.MULTI, outcomes=("A", "B", "C"),
                          outcome_labels=("A", "B", "C"), close_time=close))
    markets.append(Market(id="t:dark", venue="t", question="D?", close_time=close))
    quotes = [Quote(f"t:b{i}", {YES: Price(111_111 * (i + 1) + 7)}, T0, T0, source="t") for i in range(4)]
    quotes += [Quote("t:b0", {YES: Price(654_321)}, T0 + timedelta(hours=2), T0 + timedelta(hours=2), source="t"),
               Quote("t:multi", {"A": Price(250_001), "B": Price(699_999)}, T0, T0, source="t")]
    cohorts = []
    with session_scope(engine) as s:
        ingest.record_observations(s, T0, markets, quotes)
        for c in range(2):
            cohort = CohortRow(name=f"c{c}", period_start=T0, starting_cash_micros=10**10, rules={}, lineup=[],
                               created_at=T0)
            s.add(cohort)
            s.flush()
            cohorts.append(cohort.id)
            agents = [AgentRow(cohort_id=cohort.id, name=f"a{i}", kind="scripted") for i in range(4)]
            s.add_all(agents)
            s.flush()
            k = 0

            def fill(agent: AgentRow, mid: str, outcome: str, kind: str, shares: int, cash: int, cost: int) -> None:
                nonlocal k
                k += 1
                s.add(FillRow(key=f"{c}:{k}", cohort_id=cohort.id, agent_id=agent.id, market_id=mid,
                              outcome=outcome, kind=kind, shares=shares, cash_micros=cash, cost_micros=cost,
                              at=T0 + timedelta(minutes=k)))

            a0, a1, a2, _idle = agents
            fill(a0, "t:b0", YES, "buy", 1_234_567_891 + c, -400_000_001, 400_000_001)
            fill(a0, "t:b0", YES, "buy", 5_000_003, -2_000_000, 2_000_000)
            fill(a0, "t:b0", YES, "sell", -600_000_000, 300_000_000, -190_000_000)  # partial close
            fill(a0, "t:b1", NO, "buy", 7_000_001, -5_000_000, 5_000_000)  # NO priced as 1 − YES
            fill(a0, "t:b2", YES, "buy", 3_000_000, -1_000_000, 1_000_000)
            fill(a0, "t:b2", YES, "sell", -3_000_000, 1_500_000, -1_000_000)  # fully closed: no position
            fill(a1, "t:multi", "A", "buy", 3_333_333, -900_000, 900_000)
            fill(a1, "t:multi", "C", "buy", 5_000_000, -700_000, 700_000)  # unquoted outcome: at cost
            fill(a1, "t:dark", YES, "buy", 9_999_999, -3_000_000, 3_000_000)  # no price at all: at cost
            fill(a2, "t:b3", NO, "buy", 1, -1, 1)
            fill(a2, "t:b3", YES, "buy", 2_500_000, -1_111_111, 1_111_111)
            fill(a2, "t:b1", YES, "buy", 8_000_000, -2_000_000, 2_000_000)
            fill(a2, "t:b1", YES, "settle", -8_000_000, 8_000_000, -2_000_000)  # settled: no position
    return cohorts


def _scalar(engine, as_of: datetime) -> dict[int, tuple[int, int, int, int]]:  # type: ignore[no-untyped-def]
    """agent id → (cash, positions value, open positions, unpriced) by the scalar domain path."""
    out = {}
    with session_scope(engine) as s:
        quotes = repo.latest_quotes(s, as_of)
        for agent in s.scalars(select(AgentRow)):
            ledger = repo.ledger_for(s, agent, s.get(CohortRow, agent.cohort_id))
            prices = {}
            for p in ledger.open_positions():
                q = quotes.get(p.market_id)
                if q is not None and (p.outcome in q.prices or (p.outcome == NO and YES in q.prices)):
                    prices[(p.market_id, p.outcome)] = q.price(p.outcome)
            pv = value_ledger(ledger, prices)
            out[agent.id] = (pv.cash.micros, pv.positions_value.micros, len(pv.positions), pv.unpriced)
    return out


def test_the_set_based_mark_equals_the_scalar_valuation(engine):
    cohorts = _fixture(engine)
    for hours in (1, 3):  # before and after b0's second price
        as_of = T0 + timedelta(hours=hours)
        counts = mark_to_market(engine, as_of, cohorts)
        want = _scalar(engine, as_of)
        with session_scope(engine) as s:
            snaps = s.scalars(select(PortfolioSnapshotRow).where(PortfolioSnapshotRow.as_of == as_of)).all()
            got = {r.agent_id: (r.cash_micros, r.positions_value_micros, r.open_positions, r.unpriced_positions)
                   for r in snaps}
            assert all(r.total_value_micros == r.cash_micros + r.positions_value_micros for r in snaps)
        assert got == want
        assert counts.snapshots_written == len(want) == 8
        assert counts.positions == sum(v[2] for v in want.values()) == 2 * 7
        assert counts.unpriced == 2 * 2
    # the values are not trivially at cost: b0 moved between the two marks
    first, second = (_scalar(engine, T0 + timedelta(hours=h)) for h in (1, 3))
    assert first != second
    # idempotent: a second mark at the same instant writes nothing and changes nothing
    again = mark_to_market(engine, T0 + timedelta(hours=3), cohorts)
    assert again.snapshots_written == 0


def test_no_side_uses_the_complement_of_yes(engine):
    cohorts = _fixture(engine)
    as_of = T0 + timedelta(hours=1)
    mark_to_market(engine, as_of, cohorts[:1])
    with session_scope(engine) as s:
        agent = s.scalars(select(AgentRow).where(AgentRow.cohort_id == cohorts[0], AgentRow.name == "a0")).one()
        snap = s.scalars(select(PortfolioSnapshotRow).where(PortfolioSnapshotRow.agent_id == agent.id)).one()
    yes_b0, yes_b1 = 111_111 + 7, 222_222 + 7
    b0_shares = 1_234_567_891 + 5_000_003 - 600_000_000
    want = b0_shares * yes_b0 // MICRO + 7_000_001 * (MICRO - yes_b1) // MICRO
    assert snap.positions_value_micros == want
