"""Markets, their outcomes, quotes and resolutions as venue-neutral value objects (pure; no I/O)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from types import MappingProxyType

from arena.money import MICRO, ONE, ZERO, Price

YES = "YES"
NO = "NO"
BINARY_OUTCOMES = (YES, NO)


class MarketKind(str, Enum):
    BINARY = "binary"  # two outcomes, YES (the venue's first outcome) and NO; price of NO = 1 − price of YES
    MULTI = "multi"  # several named outcomes (e.g. Manifold multiple choice), each with its own price


class MarketStatus(str, Enum):
    OPEN = "open"  # accepting bets
    CLOSED = "closed"  # trading over, resolution pending
    RESOLVED = "resolved"  # a Resolution exists


class ResolutionKind(str, Enum):
    WINNER = "winner"  # one outcome pays 1, the rest 0
    PROBABILISTIC = "probabilistic"  # each outcome pays a fraction (Manifold MKT, Polymarket 50-50)
    VOID = "void"  # cancelled: every position is refunded its remaining cost basis


@dataclass(frozen=True)
class Market:
    """A tradable question. `id` is the arena id `venue:native_id`; `outcomes` are the position keys."""

    id: str
    venue: str
    question: str
    kind: MarketKind = MarketKind.BINARY
    outcomes: tuple[str, ...] = BINARY_OUTCOMES
    outcome_labels: tuple[str, ...] = ("Yes", "No")
    close_time: datetime | None = None
    status: MarketStatus = MarketStatus.OPEN
    description: str = ""
    url: str = ""
    category: str = ""
    group_id: str = ""  # multi-outcome group (neg-risk event, MC market) this market belongs to, if any
    volume: float | None = None
    volume_24h: float | None = None
    liquidity: float | None = None

    def has_outcome(self, outcome: str) -> bool:
        return outcome in self.outcomes

    def label(self, outcome: str) -> str:
        try:
            return self.outcome_labels[self.outcomes.index(outcome)]
        except (ValueError, IndexError):
            return outcome

    def is_open_at(self, when: datetime) -> bool:
        if self.status is not MarketStatus.OPEN:
            return False
        return self.close_time is None or when < self.close_time


@dataclass(frozen=True)
class Quote:
    """Prices of a market's outcomes observed at `observed_at` (venue time) and fetched at `fetched_at` (ours).

    For a binary market `prices` holds YES (NO is derived); for a multi market it holds each outcome.
    `bid`/`ask` are the best YES bid and ask where the venue has a book.
    """

    market_id: str
    prices: Mapping[str, Price]
    observed_at: datetime
    fetched_at: datetime | None = None
    bid: Price | None = None
    ask: Price | None = None
    source: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "prices", MappingProxyType(dict(self.prices)))

    def price(self, outcome: str) -> Price:
        """The price of one share of `outcome`: YES price for YES, 1 − YES price for NO."""
        if outcome in self.prices:
            return self.prices[outcome]
        if outcome == NO and YES in self.prices:
            return self.prices[YES].complement()
        if outcome == YES and NO in self.prices:
            return self.prices[NO].complement()
        raise KeyError(f"no price for outcome {outcome!r} of {self.market_id}")

    def yes_price(self) -> Price:
        return self.price(YES)


@dataclass(frozen=True)
class Resolution:
    """How a market settled. `payouts[outcome]` is what one share of it pays; empty for VOID (refund).

    `version` counts resolutions of the same market: a venue that un-resolves or re-resolves a market
    produces version 2, 3, … and the settlement of the earlier version is reversed by new fills.
    """

    market_id: str
    kind: ResolutionKind
    payouts: Mapping[str, Price] = field(default_factory=dict)
    resolved_at: datetime | None = None
    version: int = 1
    source: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "payouts", MappingProxyType(dict(self.payouts)))
        if self.kind is ResolutionKind.VOID and self.payouts:
            raise ValueError("a void resolution pays no outcome; positions are refunded")
        if self.kind is not ResolutionKind.VOID and not self.payouts:
            raise ValueError("a resolution that is not void must say what each outcome pays")

    @classmethod
    def winner(cls, market_id: str, outcome: str, outcomes: tuple[str, ...] = BINARY_OUTCOMES,
               resolved_at: datetime | None = None, **kw: object) -> Resolution:
        if outcome not in outcomes:
            raise ValueError(f"winner {outcome!r} is not an outcome of {market_id}")
        payouts = {o: (ONE if o == outcome else ZERO) for o in outcomes}
        return cls(market_id, ResolutionKind.WINNER, payouts, resolved_at, **kw)  # type: ignore[arg-type]

    @classmethod
    def probabilistic_yes(cls, market_id: str, p_yes: Price, resolved_at: datetime | None = None,
                          **kw: object) -> Resolution:
        """A binary market resolved to a probability: p per YES share, 1 − p per NO share."""
        payouts = {YES: p_yes, NO: p_yes.complement()}
        return cls(market_id, ResolutionKind.PROBABILISTIC, payouts, resolved_at, **kw)  # type: ignore[arg-type]

    @classmethod
    def void(cls, market_id: str, resolved_at: datetime | None = None, **kw: object) -> Resolution:
        return cls(market_id, ResolutionKind.VOID, {}, resolved_at, **kw)  # type: ignore[arg-type]

    def payout(self, outcome: str) -> Price | None:
        """What one share of `outcome` pays, or None when the market is void (refund instead)."""
        if self.kind is ResolutionKind.VOID:
            return None
        return self.payouts.get(outcome, ZERO)

    def yes_outcome(self) -> float | None:
        """The resolved value of YES in [0, 1] for scoring a binary market; None when void."""
        if self.kind is ResolutionKind.VOID:
            return None
        return self.payouts.get(YES, ZERO).ppm / MICRO

    def same_as(self, other: Resolution) -> bool:
        """True when two resolutions pay the same (versions and timestamps aside)."""
        return self.kind == other.kind and dict(self.payouts) == dict(other.payouts)
