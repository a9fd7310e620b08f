"""What an agent may see when it decides: a read-only snapshot as of one moment (no look-ahead). Pure data."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from arena.domain.decision import Decision
from arena.domain.market import Market, Quote
from arena.money import Money, Price


@dataclass(frozen=True)
class PositionView:
    market_id: str
    outcome: str
    shares: int  # micro-shares
    cost_basis: Money
    entry_price: Price | None  # average price paid per share
    current_price: Price | None
    value: Money
    unrealized: Money
    market_open: bool
    question: str = ""  # so a position in a market no longer listed (closed, unresolved) is still named
    outcome_label: str = ""


@dataclass(frozen=True)
class MarketView:
    market: Market
    quote: Quote


@dataclass(frozen=True)
class AgentView:
    """The world as the agent may see it at `as_of`: its cash, positions and the open markets with prices."""

    as_of: datetime
    agent_id: str
    cash: Money
    max_bet: Money  # per bet, fixed from the cash at the start of this decision
    min_bet: Money
    positions: tuple[PositionView, ...]
    markets: tuple[MarketView, ...]
    forecast_set: tuple[str, ...] = ()  # market ids every agent of the cohort is asked to forecast

    def market(self, market_id: str) -> MarketView | None:
        for m in self.markets:
            if m.market.id == market_id:
                return m
        return None


class Agent(Protocol):
    """Anything that turns a view into a decision. `name` is stable across cohorts (it identifies the model)."""

    name: str

    def decide(self, view: AgentView) -> Decision: ...
