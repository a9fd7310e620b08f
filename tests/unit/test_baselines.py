"""Scripted baseline agents: they keep the view's limits, state forecasts, size by Kelly and are deterministic."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.agents.baselines import (
    DEMO_NAMES,
    AlwaysHalf,
    KellyBettor,
    MarketFollower,
    NoisyOracle,
    RandomBettor,
    demo_lineup,
    extremize,
    floor_cents,
    kelly_fraction,
)
from arena.agents.view import AgentView, MarketView, PositionView
from arena.domain.decision import Bet, Decision, Sell
from arena.domain.market import NO, YES, Market, MarketStatus, Quote
from arena.money import Money, Price

NOW = datetime(2026, 2, 2, 9, tzinfo=timezone.utc)


def market(mid: str, *, closes_in: timedelta = timedelta(days=10), status: MarketStatus = MarketStatus.OPEN) -> Market:
    return Market(id=mid, venue="sim", question=f"Will {mid} happen?", close_time=NOW + closes_in, status=status)


def quote(mid: str, yes: str, bid: str | None = None, ask: str | None = None) -> Quote:
    return Quote(mid, {YES: Price.of(yes)}, observed_at=NOW - timedelta(hours=1), fetched_at=NOW - timedelta(hours=1),
                 bid=Price.of(bid) if bid else None, ask=Price.of(ask) if ask else None)


def mv(mid: str, yes: str, bid: str | None = None, ask: str | None = None, **kw: object) -> MarketView:
    return MarketView(market(mid, **kw), quote(mid, yes, bid, ask))  # type: ignore[arg-type]


def view(markets: list[MarketView], *, cash: str = "1000", max_bet: str = "250", min_bet: str = "1",
         positions: tuple[PositionView, ...] = (), forecast_set: tuple[str, ...] | None = None,
         as_of: datetime = NOW, agent_id: str = "agent-1") -> AgentView:
    ids = tuple(m.market.id for m in markets) if forecast_set is None else forecast_set
    return AgentView(as_of=as_of, agent_id=agent_id, cash=Money.of(cash), max_bet=Money.of(max_bet),
                     min_bet=Money.of(min_bet), positions=positions, markets=tuple(markets), forecast_set=ids)


def position(mid: str, outcome: str, price: str) -> PositionView:
    return PositionView(mid, outcome, shares=100_000_000, cost_basis=Money.of("40"), entry_price=Price.of("0.4"),
                        current_price=Price.of(price), value=Money.of("50"), unrealized=Money.of("10"),
                        market_open=True)


def truths(table: dict[str, float]):
    return lambda mid: table.get(mid, 0.5)


def every_agent(table: dict[str, float], seed: int = 1) -> list:
    belief = truths(table)
    return [
        AlwaysHalf(),
        MarketFollower(),
        RandomBettor(seed=seed, max_bets=6),
        KellyBettor(alpha=1.5),
        KellyBettor("kelly-wild", alpha=4.0, kelly_multiplier=3.0),
        NoisyOracle("oracle-0", 0.0, belief, seed=seed, kelly_multiplier=1.0, max_bets=10),
        NoisyOracle("oracle-1", 1.0, belief, seed=seed, edge_threshold=0.0, kelly_multiplier=2.0, max_bets=10),
    ]


def check_rules(v: AgentView, d: Decision) -> None:
    assert isinstance(d, Decision)
    assert set(d.forecasts) == set(v.forecast_set)
    assert all(0.0 <= p <= 1.0 for p in d.forecasts.values())
    spent = Money.zero()
    open_ids = {m.market.id for m in v.markets if m.market.is_open_at(v.as_of)}
    for b in d.bets:
        assert b.market_id in open_ids
        assert b.outcome in (YES, NO)
        assert isinstance(b.amount, Money)
        assert b.amount.micros % 10_000 == 0  # whole cents
        assert v.min_bet <= b.amount <= v.max_bet
        assert b.amount.micros > 0
        assert b.stated_probability is not None and 0.0 <= b.stated_probability <= 1.0
        spent = spent + b.amount
    assert spent <= v.cash
    assert len({b.market_id for b in d.bets}) == len(d.bets)  # one bet per market per decision
    for s in d.sells:
        assert s.market_id in open_ids
        assert any(p.market_id == s.market_id and p.outcome == s.outcome for p in v.positions)


# -- limits ------------------------------------------------------------------------------------------------------------

prices = st.integers(min_value=5, max_value=995).map(lambda t: f"{t / 1000:.3f}")


@settings(max_examples=40, deadline=None)
@given(
    yes=st.lists(prices, min_size=1, max_size=8),
    truth=st.lists(st.floats(0.01, 0.99), min_size=8, max_size=8),
    cash_cents=st.integers(0, 500_000),
    max_cents=st.integers(0, 200_000),
    min_cents=st.integers(0, 5_000),
    odd_micros=st.integers(0, 9_999),
    seed=st.integers(0, 2**32),
)
def test_every_agent_keeps_the_limits(yes, truth, cash_cents, max_cents, min_cents, odd_micros, seed) -> None:
    markets = [mv(f"sim:{i}", p, bid=None if i % 2 else f"{max(int(p[2:]) - 10, 1) / 1000:.3f}",
                  ask=None if i % 2 else f"{min(int(p[2:]) + 10, 999) / 1000:.3f}") for i, p in enumerate(yes)]
    # a market whose close has passed and one already resolved: never bet on
    markets.append(mv("sim:closed", "0.5", closes_in=timedelta(0)))
    markets.append(mv("sim:resolved", "0.5", status=MarketStatus.RESOLVED))
    table = {f"sim:{i}": t for i, t in enumerate(truth)} | {"sim:closed": 0.99, "sim:resolved": 0.99}
    v = AgentView(as_of=NOW, agent_id="a", cash=Money(cash_cents * 10_000 + odd_micros),
                  max_bet=Money(max_cents * 10_000 + odd_micros), min_bet=Money(min_cents * 10_000 + odd_micros),
                  positions=(position("sim:0", YES, yes[0]),), markets=tuple(markets),
                  forecast_set=tuple(m.market.id for m in markets))
    for agent in every_agent(table, seed):
        check_rules(v, agent.decide(v))


def test_cash_is_shared_across_the_bets_of_one_decision() -> None:
    markets = [mv(f"sim:{i}", "0.20") for i in range(6)]
    v = view(markets, cash="300", max_bet="250", min_bet="1")
    d = NoisyOracle("o", 0.0, truths({m.market.id: 0.9 for m in markets}), kelly_multiplier=1.0, max_bets=6).decide(v)
    assert [b.amount for b in d.bets] == [Money.of("250"), Money.of("50")]


# -- forecasts ---------------------------------------------------------------------------------------------------------


def test_always_half_states_half_and_never_bets() -> None:
    v = view([mv("sim:1", "0.9"), mv("sim:2", "0.1")], forecast_set=("sim:1", "sim:2", "sim:gone"))
    d = AlwaysHalf().decide(v)
    assert d.forecasts == {"sim:1": 0.5, "sim:2": 0.5, "sim:gone": 0.5}
    assert d.is_hold


def test_market_follower_states_the_price() -> None:
    v = view([mv("sim:1", "0.42", bid="0.41", ask="0.44"), mv("sim:2", "0.07")],
             forecast_set=("sim:1", "sim:2", "sim:gone"))
    d = MarketFollower().decide(v)
    assert d.forecasts == {"sim:1": 0.42, "sim:2": 0.07, "sim:gone": 0.5}
    assert d.is_hold


# -- Kelly -------------------------------------------------------------------------------------------------------------


def test_kelly_fraction_hand_computed() -> None:
    assert kelly_fraction(0.55, 0.40) == pytest.approx(0.25)  # (0.55 − 0.40) / 0.60
    assert kelly_fraction(0.40, 0.40) == 0.0
    assert kelly_fraction(0.30, 0.40) == 0.0
    assert kelly_fraction(0.70, 0.60) == pytest.approx(0.25)  # NO at q = 0.40 with p = 0.30: same edge


def test_kelly_stake_is_the_fraction_of_cash_capped_at_max_bet() -> None:
    # An oracle with sd 0, belief 0.55 and full Kelly, price 0.40 without a book: f = 0.25 → $250 of $1,000.
    oracle = NoisyOracle("o", 0.0, truths({"sim:1": 0.55}), kelly_multiplier=1.0, edge_threshold=0.0)
    d = oracle.decide(view([mv("sim:1", "0.40")], cash="1000", max_bet="1000"))
    assert d.bets == (Bet("sim:1", YES, Money.of("250"), 0.55, d.bets[0].rationale),)
    capped = oracle.decide(view([mv("sim:1", "0.40")], cash="1000", max_bet="100"))
    assert capped.bets[0].amount == Money.of("100")
    # Symmetric for NO: belief 0.45 at price 0.60 → NO costs 0.40, P(NO) = 0.55, f = 0.25.
    no = NoisyOracle("o", 0.0, truths({"sim:1": 0.45}), kelly_multiplier=1.0, edge_threshold=0.0)
    d = no.decide(view([mv("sim:1", "0.60")], cash="1000", max_bet="1000"))
    assert [(b.outcome, b.amount) for b in d.bets] == [(NO, Money.of("250"))]


def test_kelly_extremizer_hand_computed() -> None:
    # q = 0.60, α = 1.5: p = 0.6^1.5 / (0.6^1.5 + 0.4^1.5) = 0.464758 / 0.717741 = 0.647530
    # f = (0.647530 − 0.60) / 0.40 = 0.118824 → $118.82 of $1,000 (rounded down to cents).
    assert extremize(0.6, 1.5) == pytest.approx(0.647530, abs=1e-6)
    agent = KellyBettor(alpha=1.5)
    d = agent.decide(view([mv("sim:1", "0.60")], cash="1000", max_bet="250"))
    assert [(b.market_id, b.outcome, b.amount) for b in d.bets] == [("sim:1", YES, Money.of("118.82"))]
    assert d.forecasts == {"sim:1": 0.6475}
    # mirrored price → the NO side, same stake
    d = agent.decide(view([mv("sim:1", "0.40")], cash="1000", max_bet="250"))
    assert [(b.outcome, b.amount) for b in d.bets] == [(NO, Money.of("118.82"))]
    # capped at max_bet, and skipped when below min_bet
    assert agent.decide(view([mv("sim:1", "0.60")], max_bet="50")).bets[0].amount == Money.of("50")
    assert agent.decide(view([mv("sim:1", "0.60")], min_bet="200")).is_hold
    # a price of 0.5 has no edge after extremizing
    assert agent.decide(view([mv("sim:1", "0.50")])).is_hold


def test_kelly_pays_the_spread() -> None:
    # q = 0.60 but YES costs the ask 0.64 > p ≈ 0.6475 − a thinner edge; NO costs 1 − bid = 0.44 > 0.3525: no bet.
    agent = KellyBettor(alpha=1.5)
    d = agent.decide(view([mv("sim:1", "0.60", bid="0.56", ask="0.64")], cash="1000", max_bet="1000"))
    f = (extremize(0.6, 1.5) - 0.64) / 0.36
    assert d.bets[0].amount == floor_cents(f * 1000 * 1_000_000)
    wide = agent.decide(view([mv("sim:1", "0.60", bid="0.50", ask="0.70")]))
    assert wide.is_hold


# -- the noisy oracle --------------------------------------------------------------------------------------------------


def test_oracle_with_no_noise_bets_in_the_direction_of_truth() -> None:
    table = {"sim:1": 0.80, "sim:2": 0.10, "sim:3": 0.52, "sim:4": 0.35, "sim:5": 0.95}
    markets = [mv("sim:1", "0.50"), mv("sim:2", "0.40"), mv("sim:3", "0.50"), mv("sim:4", "0.60"), mv("sim:5", "0.70")]
    d = NoisyOracle("o", 0.0, truths(table), max_bets=10).decide(view(markets))
    sides = {b.market_id: b.outcome for b in d.bets}
    assert sides == {"sim:1": YES, "sim:2": NO, "sim:4": NO, "sim:5": YES}  # sim:3's edge 0.02 < threshold 0.05
    assert d.forecasts == table
    assert all(b.stated_probability == table[b.market_id] for b in d.bets)


def test_oracle_noise_is_fixed_per_market_and_agent() -> None:
    belief = truths({"sim:1": 0.5, "sim:2": 0.5})
    a = NoisyOracle("a", 1.0, belief, seed=7)
    same = NoisyOracle("a", 1.0, belief, seed=7)
    other = NoisyOracle("a", 1.0, belief, seed=8)
    later = NOW + timedelta(days=3)
    assert a.belief("sim:1", NOW) == a.belief("sim:1", later) == same.belief("sim:1", NOW)
    assert a.belief("sim:1", NOW) != a.belief("sim:2", NOW)
    assert a.belief("sim:1", NOW) != other.belief("sim:1", NOW)
    assert NoisyOracle("a", 0.0, belief).belief("sim:1", NOW) == pytest.approx(0.5)


def test_oracle_with_belief_at_reads_the_view_time() -> None:
    seen = []

    def belief_at(mid: str, when: datetime) -> float:
        seen.append((mid, when))
        return 0.9

    d = NoisyOracle("o", 0.0, belief_at=belief_at).decide(view([mv("sim:1", "0.5")]))
    assert seen and all(w == NOW for _, w in seen)
    assert d.bets[0].outcome == YES
    with pytest.raises(ValueError):
        NoisyOracle("o", 0.0)


def test_oracle_sells_when_the_market_moves_past_its_belief_and_does_not_add() -> None:
    oracle = NoisyOracle("o", 0.0, truths({"sim:1": 0.60, "sim:2": 0.60}), edge_threshold=0.0)
    markets = [mv("sim:1", "0.85"), mv("sim:2", "0.62")]
    v = view(markets, positions=(position("sim:1", YES, "0.85"), position("sim:2", YES, "0.62")))
    d = oracle.decide(v)
    assert d.sells == (Sell("sim:1", YES, d.sells[0].fraction, d.sells[0].rationale),)
    assert d.bets == ()  # it holds both markets, so it adds to neither
    assert NoisyOracle("o", 0.0, truths({"sim:1": 0.6}), sell_edge=None).decide(v).sells == ()


# -- determinism -------------------------------------------------------------------------------------------------------


def _market_set() -> list[MarketView]:
    return [mv(f"sim:{i}", f"{0.05 + 0.09 * i:.2f}", bid=f"{0.04 + 0.09 * i:.2f}", ask=f"{0.06 + 0.09 * i:.2f}")
            for i in range(10)]


def test_decisions_depend_only_on_seed_and_view() -> None:
    table = {f"sim:{i}": (i * 37 % 10) / 10 + 0.05 for i in range(10)}
    v1 = view(_market_set())
    v2 = replace(v1, as_of=NOW + timedelta(days=1))
    for a, b in zip(every_agent(table, seed=3), every_agent(table, seed=3)):
        first = a.decide(v1)
        a.decide(v2)
        a.decide(v2)
        assert a.decide(v1) == first == b.decide(v1)


def test_random_bettor_varies_with_seed_and_time() -> None:
    v = view(_market_set())
    runs = [RandomBettor(seed=s, max_bets=5).decide(v) for s in range(8)]
    assert any(r != runs[0] for r in runs)
    over_time = [RandomBettor(seed=1, max_bets=5).decide(replace(v, as_of=NOW + timedelta(days=d))) for d in range(8)]
    assert any(r != over_time[0] for r in over_time)


def test_demo_lineup_names_and_seeds_are_stable() -> None:
    class Universe:
        def truth(self, mid: str) -> float:
            return 0.7

        def truth_at(self, mid: str, when: datetime) -> float:
            return 0.7

    first = demo_lineup(Universe(), 42)
    second = demo_lineup(Universe(), 42)
    assert tuple(a.name for a in first) == DEMO_NAMES == (
        "oracle-sharp", "oracle-fair", "oracle-noisy", "kelly-extremizer", "random", "market-follower", "always-0.5",
        "metric-gamer", "forecaster-v1", "forecaster-v2")
    assert [getattr(a, "skill_sd", None) for a in first[:3]] == [0.3, 0.8, 1.6]
    v = view(_market_set())
    assert [a.decide(v) for a in first] == [a.decide(v) for a in second]
    other = demo_lineup(Universe(), 43)
    assert [a.decide(v) for a in other][:3] != [a.decide(v) for a in first][:3]
