"""Hand-built AgentViews for the agent tests: a binary market, a multi-outcome market, a closed market held."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from arena.agents.view import AgentView, MarketView, PositionView
from arena.domain.market import Market, MarketKind, MarketStatus, Quote
from arena.money import Money, Price

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


def binary(mid: str, question: str, yes: str, *, volume_24h: float = 1000.0, volume: float = 50_000.0,
           closes_in: timedelta = timedelta(days=18, hours=12), bid: str | None = None, ask: str | None = None,
           description: str = "", status: MarketStatus = MarketStatus.OPEN, group_id: str = "") -> MarketView:
    m = Market(id=mid, venue=mid.split(":")[0], question=question, close_time=NOW + closes_in, status=status,
               description=description, volume=volume, volume_24h=volume_24h, category="politics",
               group_id=group_id)
    q = Quote(mid, {"YES": Price.of(yes)}, observed_at=NOW - timedelta(minutes=5), fetched_at=NOW,
              bid=Price.of(bid) if bid else None, ask=Price.of(ask) if ask else None)
    return MarketView(m, q)


def multi(mid: str, question: str, prices: dict[str, tuple[str, str]], *, volume_24h: float = 500.0) -> MarketView:
    """`prices` maps outcome id → (label, price)."""
    ids = tuple(prices)
    m = Market(id=mid, venue="mf", question=question, kind=MarketKind.MULTI, outcomes=ids,
               outcome_labels=tuple(lbl for lbl, _ in prices.values()), close_time=NOW + timedelta(days=3),
               volume=9000.0, volume_24h=volume_24h)
    q = Quote(mid, {o: Price.of(p) for o, (_, p) in prices.items()}, observed_at=NOW, fetched_at=NOW)
    return MarketView(m, q)


def position(mid: str, outcome: str, shares: float, cost: str, entry: str | None, now: str | None, value: str,
             market_open: bool = True) -> PositionView:
    cost_basis, val = Money.of(cost), Money.of(value)
    return PositionView(mid, outcome, int(shares * 1_000_000), cost_basis, Price.of(entry) if entry else None,
                        Price.of(now) if now else None, val, val - cost_basis, market_open)


def standard_view(**overrides: object) -> AgentView:
    """Cash $8,000 (max bet $2,000, min $50); three open markets, one closed market held; forecast set of two."""
    markets = (
        binary("pm:1", "Will candidate A win the election?", "0.62", volume_24h=5000.0, bid="0.61", ask="0.63",
               description="Resolves YES if candidate A is declared the winner by the official election authority "
                           "before 31 December 2026. " + "Details follow. " * 60),
        binary("pm:2", "Will the rate be cut in December?", "0.30", volume_24h=3000.0),
        multi("mf:3", "Who will win the award?", {"a1": ("Alice", "0.25"), "a2": ("Bob", "0.70"),
                                                 "a3": ("Carol", "0.05")}),
    )
    positions = (
        position("pm:2", "NO", 1000, "650", "0.65", "0.70", "700"),
        position("mf:3", "a2", 500, "300", "0.60", "0.70", "350"),
        position("pm:9", "YES", 2000, "800", "0.40", "0.90", "1800", market_open=False),
    )
    fields: dict[str, object] = dict(as_of=NOW, agent_id="7", cash=Money.of(8000), max_bet=Money.of(2000),
                                     min_bet=Money.of(50), positions=positions, markets=markets,
                                     forecast_set=("pm:1", "pm:2"))
    fields.update(overrides)
    return AgentView(**fields)  # type: ignore[arg-type]
