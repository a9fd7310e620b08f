"""Benchmark: mark 100k open positions to a new price snapshot on SQLite.

Compares the set-based `services.mark.mark_to_market` (aggregate SQL + integer numpy) with a naive
per-row ORM loop (load each agent's fills as objects, fold them, look up each position's latest price with
its own query, value it with Money objects, insert snapshot rows one by one), measured in the same run on
the same database. Prints figures and the ratio. Usage: python benchmarks/bench_mark.py [--positions N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
from sqlalchemy import insert, select
from sqlmodel import Session

from arena.domain.market import YES, Market, Quote
from arena.domain.sizing import CohortRules
from arena.domain.valuation import value_position
from arena.money import Money, Price
from arena.usecases import ingest
from arena.usecases.cohorts import LineupEntry, start_cohort
from arena.usecases.mark import mark_to_market
from arena.store import repo
from arena.store.engine import make_engine, migrate, session_scope
from arena.store.tables import AgentRow, FillRow, PortfolioSnapshotRow, PriceSnapshotRow

T0 = datetime(2026, 1, 4, tzinfo=timezone.utc)


def build(url: str, agents: int, markets: int) -> None:
    engine = make_engine(url)
    migrate(engine)
    rng = np.random.default_rng(1)
    with session_scope(engine) as s:
        ms = [Market(id=f"sim:{i}", venue="sim", question=f"Q{i}?", close_time=T0 + timedelta(days=60))
              for i in range(markets)]
        ingest.record_observations(s, T0, ms, [Quote(m.id, {YES: Price.of("0.5")}, T0, T0, source="sim")
                                               for m in ms])
        cohort, _ = start_cohort(s, T0, CohortRules(), [LineupEntry(f"agent-{i}") for i in range(agents)], T0)
        agent_ids = list(s.scalars(select(AgentRow.id).where(AgentRow.cohort_id == cohort.id)))
        rows = []
        for a in agent_ids:
            for i in range(markets):
                outcome = "YES" if (a + i) % 2 else "NO"
                amount = int(rng.integers(50, 100)) * 1_000_000
                rows.append(dict(key=f"b:{a}:{i}", cohort_id=cohort.id, agent_id=a, market_id=f"sim:{i}",
                                 outcome=outcome, kind="buy", shares=amount * 2, cash_micros=-amount,
                                 cost_micros=amount, price_ppm=500_000, mid_ppm=500_000,
                                 provenance="bench", at=T0))
        for k in range(0, len(rows), 20_000):
            s.execute(insert(FillRow), rows[k:k + 20_000])
        # the new price snapshot the positions are marked to
        t1 = T0 + timedelta(days=1)
        prices = rng.integers(10_000, 990_000, size=markets)
        s.execute(insert(PriceSnapshotRow), [
            dict(market_id=f"sim:{i}", outcome=YES, price_ppm=int(prices[i]), observed_at=t1, fetched_at=t1,
                 source="sim") for i in range(markets)])
    engine.dispose()


def naive_mark(url: str, as_of: datetime, agent_limit: int | None) -> int:
    """The per-row ORM way: objects everywhere, one price query per position, one insert per snapshot."""
    engine = make_engine(url)
    n = 0
    with Session(engine) as s:
        agents = s.scalars(select(AgentRow).order_by(AgentRow.id)).all()[:agent_limit]
        for agent in agents:
            cash = Money.of(10_000)
            positions: dict[tuple[str, str], list] = {}
            for f in s.scalars(select(FillRow).where(FillRow.agent_id == agent.id)):
                cash = cash + Money(f.cash_micros)
                p = positions.setdefault((f.market_id, f.outcome), [0, Money.zero()])
                p[0] += f.shares
                p[1] = p[1] + Money(f.cost_micros)
            value = Money.zero()
            for (mid, outcome), (shares, cost) in positions.items():
                if shares <= 0:
                    continue
                snap = s.scalars(select(PriceSnapshotRow).where(PriceSnapshotRow.market_id == mid,
                                                                PriceSnapshotRow.fetched_at <= as_of)
                                 .order_by(PriceSnapshotRow.observed_at.desc())).first()
                price = Price(snap.price_ppm) if snap else None
                if price is not None and outcome != YES:
                    price = price.complement()
                from arena.domain.ledger import Position

                value = value + value_position(Position(mid, outcome, shares, cost), price).value
                n += 1
            s.add(PortfolioSnapshotRow(cohort_id=agent.cohort_id, agent_id=agent.id, as_of=as_of,
                                       cash_micros=cash.micros, positions_value_micros=value.micros,
                                       total_value_micros=(cash + value).micros))
            s.flush()
        s.rollback()  # leave the database as it was for the fast run
    engine.dispose()
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--positions", type=int, default=100_000)
    ap.add_argument("--markets", type=int, default=100)
    ap.add_argument("--naive-agents", type=int, default=100, help="agents the naive loop marks (extrapolated)")
    args = ap.parse_args()
    agents = args.positions // args.markets
    with tempfile.TemporaryDirectory() as d:
        url = f"sqlite:///{Path(d) / 'bench.sqlite'}"
        t = time.perf_counter()
        build(url, agents, args.markets)
        print(f"setup: {agents} agents × {args.markets} markets = {agents * args.markets:,} open positions "
              f"({time.perf_counter() - t:.1f} s)")
        as_of = T0 + timedelta(days=1, hours=1)
        naive_agents = min(args.naive_agents, agents)
        t = time.perf_counter()
        n_naive = naive_mark(url, as_of, naive_agents)
        naive_s = time.perf_counter() - t
        naive_full = naive_s * agents / naive_agents
        engine = make_engine(url)
        t = time.perf_counter()
        counts = mark_to_market(engine, as_of)
        fast_s = time.perf_counter() - t
        assert counts.positions == agents * args.markets and counts.snapshots_written == agents
        # the two ways agree on the first agents' totals
        check = naive_check(url, engine, as_of)
        print(f"naive per-row ORM loop: {n_naive:,} positions in {naive_s:.2f} s "
              f"→ {naive_full:.1f} s extrapolated to {agents * args.markets:,}")
        print(f"set-based mark_to_market: {counts.positions:,} positions, {counts.snapshots_written} snapshots "
              f"in {fast_s:.3f} s")
        print(f"speed-up: {naive_full / fast_s:.0f}×   (goal ≥ 50× and ≤ 1 s)   totals agree: {check}")


def naive_check(url: str, engine, as_of: datetime) -> bool:  # type: ignore[no-untyped-def]
    with Session(engine) as s:
        snaps = s.scalars(select(PortfolioSnapshotRow).order_by(PortfolioSnapshotRow.agent_id).limit(3)).all()
        for snap in snaps:
            agent = s.get(AgentRow, snap.agent_id)
            from arena.store.tables import CohortRow

            led = repo.ledger_for(s, agent, s.get(CohortRow, agent.cohort_id))
            qs = repo.latest_quotes(s, as_of)
            total = led.cash
            for p in led.open_positions():
                total = total + value_position(p, qs[p.market_id].price(p.outcome)).value
            if total.micros != snap.total_value_micros:
                return False
    return True


if __name__ == "__main__":
    main()
