"""The fill: the only money fact. An immutable record of shares and cash moving for one agent in one position.

Cash, positions, cost basis and realized P/L are all folds over fills (see ledger.py). Fills are never
updated or deleted; a correction is a new fill (REVERSAL). Each carries a unique `key` so the same fill
can never be recorded twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from arena.money import Money, Price


class FillKind(str, Enum):
    BUY = "buy"  # cash → shares at the side price
    SELL = "sell"  # shares → cash at the side price; realizes P/L on the sold part
    SETTLE = "settle"  # shares → payout at resolution
    REFUND = "refund"  # void market: shares → remaining cost basis
    REVERSAL = "reversal"  # undoes an earlier SETTLE/REFUND when a venue re-resolves a market


@dataclass(frozen=True)
class Fill:
    """One movement in an agent's book.

    shares: micro-shares delta of the position (+ on BUY, − on SELL/SETTLE/REFUND).
    cash:   cash delta (− on BUY, + on SELL/SETTLE/REFUND).
    cost:   cost-basis delta (+ amount on BUY; − the basis released on SELL/SETTLE/REFUND).
    Realized P/L of a fill is `cash + cost` (zero for a BUY, proceeds − released basis otherwise).
    """

    key: str
    agent_id: str
    market_id: str
    outcome: str
    kind: FillKind
    shares: int
    cash: Money
    cost: Money
    at: datetime
    price: Price | None = None  # average price per share paid/received (or the payout per share)
    mid: Price | None = None  # mid or venue probability at the time, for slippage
    provenance: str = ""  # where the price came from: "clob_book", "venue_probability[:why]", "resolution", …
    decision_id: str | None = None
    resolution_version: int | None = None

    @property
    def realized(self) -> Money:
        return self.cash + self.cost

    @property
    def position_key(self) -> tuple[str, str, str]:
        return (self.agent_id, self.market_id, self.outcome)
