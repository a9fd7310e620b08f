"""What an agent may see when it decides: a read-only snapshot as of one moment (no look-ahead). Pure data."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

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


class MarketFacts(Protocol):
    """Read-only facts about markets as the store knew them at `as_of` (bound when the view is built), for an
    agent's tools: nothing fetched, first seen or resolved after `as_of` is ever returned. Each method returns a
    JSON-able dict and raises LookupError for a market the store did not know at `as_of`."""

    as_of: datetime

    def price_history(self, market_id: str, max_points: int) -> dict[str, Any]: ...

    def order_book(self, market_id: str) -> dict[str, Any]: ...

    def related_markets(self, market_id: str) -> dict[str, Any]: ...

    def resolution_criteria(self, market_id: str) -> dict[str, Any]: ...


class CallJournal(Protocol):
    """Where a decision's model calls are written down *before* they are sent (bound when the view is built), so
    a call in flight when its runner dies is still on record. `started` is told the call's number within the
    decision (1, 2, … as in `Decision.calls`), the prompt as sent (scrubbed) and the prompt version; it raises
    when the call must not be made (the runner no longer holds the decision)."""

    def started(self, attempt: int, prompt: str, prompt_version: str) -> None: ...


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
    prompt_version: str = ""  # the decision prompt the cohort is frozen with; "" = the newest
    facts: MarketFacts | None = None  # what tools may read, bound to `as_of`; None outside a decision round
    # which independent ask of the decision this view is for (1..k, `replicates = k`); never shown in a prompt,
    # scripted agents mix it into their noise so replicates differ as repeated model calls would
    replicate: int = 1
    journal: CallJournal | None = None  # None: calls are recorded only with the finished decision

    def market(self, market_id: str) -> MarketView | None:
        for m in self.markets:
            if m.market.id == market_id:
                return m
        return None


class Agent(Protocol):
    """Anything that turns a view into a decision. `name` is stable across cohorts (it identifies the model)."""

    name: str

    def decide(self, view: AgentView) -> Decision: ...
