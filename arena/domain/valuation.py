"""Mark to market: the value and unrealized P/L of positions at given prices, scalar and vectorised (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena.domain.ledger import Ledger, Position
from arena.money import MICRO, Money, Price, value_of


@dataclass(frozen=True)
class PositionValue:
    position: Position
    price: Price | None  # None: no price known; valued at cost basis (and flagged) rather than at 0 or 0.5
    value: Money

    @property
    def unrealized(self) -> Money:
        return self.value - self.position.cost_basis

    @property
    def priced(self) -> bool:
        return self.price is not None


@dataclass(frozen=True)
class PortfolioValue:
    """Cash plus positions at the marking prices; P/L and return against the starting balance."""

    starting_cash: Money
    cash: Money
    positions: tuple[PositionValue, ...]

    @property
    def positions_value(self) -> Money:
        total = Money.zero()
        for p in self.positions:
            total = total + p.value
        return total

    @property
    def total_value(self) -> Money:
        return self.cash + self.positions_value

    @property
    def pnl(self) -> Money:
        return self.total_value - self.starting_cash

    @property
    def return_pct(self) -> float:
        if self.starting_cash.micros == 0:
            return float("nan")
        return 100.0 * self.pnl.micros / self.starting_cash.micros

    @property
    def unpriced(self) -> int:
        return sum(1 for p in self.positions if not p.priced)


def value_position(position: Position, price: Price | None) -> PositionValue:
    if price is None:
        return PositionValue(position, None, position.cost_basis)
    return PositionValue(position, price, value_of(position.shares, price))


def value_ledger(ledger: Ledger, prices: Mapping[tuple[str, str], Price]) -> PortfolioValue:
    """Value every open position of `ledger` at `prices[(market_id, outcome)]` (side prices)."""
    values = tuple(value_position(p, prices.get((p.market_id, p.outcome))) for p in ledger.open_positions())
    return PortfolioValue(ledger.starting_cash, ledger.cash, values)


def value_micros(shares: np.ndarray, price_ppm: np.ndarray) -> np.ndarray:
    """Vectorised `value_of`: floor(shares × price) in micro-USD for int64 arrays of micro-shares and ppm.

    Splitting shares into whole shares and a remainder keeps every product inside int64:
    floor((w·10⁶ + r)·p / 10⁶) = w·p + floor(r·p / 10⁶), exactly.
    """
    shares = np.asarray(shares, dtype=np.int64)
    price_ppm = np.asarray(price_ppm, dtype=np.int64)
    whole, rest = np.divmod(shares, MICRO)
    return whole * price_ppm + (rest * price_ppm) // MICRO


def complement_ppm(yes_ppm: Any) -> Any:
    """The NO side's price of a binary market that stores only YES: NO = 1 − YES, in ppm — for an int or an
    integer array alike. The one place the rule is written (`Price.complement` is its scalar value type)."""
    return MICRO - yes_ppm


def total(values: Iterable[Money]) -> Money:
    out = Money.zero()
    for v in values:
        out = out + v
    return out
