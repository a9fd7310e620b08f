"""The ledger: folds an agent's append-only fills into cash, positions, cost basis and realized P/L (pure).

Nothing here stores state that a fill does not already imply; a `Ledger` is only a running fold that also
checks the invariants a new fill must keep (no duplicate keys, no shares sold that are not held, no cash
spent that is not there).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from arena.domain.fill import Fill, FillKind
from arena.errors import LedgerError
from arena.money import MICRO, Money, Price


@dataclass(frozen=True)
class Position:
    """Holdings of one outcome of one market. `shares` in micro-shares; `cost_basis` is what they cost."""

    market_id: str
    outcome: str
    shares: int = 0
    cost_basis: Money = field(default_factory=Money.zero)
    realized: Money = field(default_factory=Money.zero)
    settled: bool = False  # a SETTLE/REFUND fill closed it (and no REVERSAL reopened it)

    @property
    def is_open(self) -> bool:
        return self.shares > 0

    @property
    def entry_price(self) -> Price | None:
        """Average price paid per share (cost basis / shares), rounded to the nearest ppm; None when flat."""
        if self.shares <= 0:
            return None
        ppm = (self.cost_basis.micros * MICRO + self.shares // 2) // self.shares
        return Price(min(max(ppm, 0), MICRO))


@dataclass
class Ledger:
    """A running fold of one agent's fills, starting from `starting_cash`.

    `apply` refuses a fill that would break an invariant, so a Ledger that accepted a sequence of fills
    proves the sequence valid. Reversals may take cash below zero: they record that a venue took back a
    payout the agent had already received, and hiding that would misstate the book.
    """

    agent_id: str
    starting_cash: Money
    cash: Money = field(init=False)
    positions: dict[tuple[str, str], Position] = field(default_factory=dict)
    keys: set[str] = field(default_factory=set)
    realized: Money = field(default_factory=Money.zero)

    def __post_init__(self) -> None:
        self.cash = self.starting_cash

    def position(self, market_id: str, outcome: str) -> Position:
        return self.positions.get((market_id, outcome)) or Position(market_id, outcome)

    def open_positions(self) -> list[Position]:
        return [p for p in self.positions.values() if p.is_open]

    def check(self, fill: Fill) -> None:
        """Raise LedgerError if `fill` cannot follow the fills applied so far."""
        if fill.agent_id != self.agent_id:
            raise LedgerError(f"fill {fill.key} belongs to agent {fill.agent_id}, not {self.agent_id}")
        if fill.key in self.keys:
            raise LedgerError(f"duplicate fill {fill.key}", reason="duplicate_fill")
        pos = self.position(fill.market_id, fill.outcome)
        if pos.shares + fill.shares < 0:
            raise LedgerError(
                f"fill {fill.key} removes {-fill.shares} micro-shares but only {pos.shares} are held",
                reason="insufficient_shares",
            )
        kind = fill.kind
        if kind is FillKind.BUY:
            if fill.shares <= 0 or fill.cash.micros >= 0 or fill.cost != -fill.cash:
                raise LedgerError(f"malformed BUY {fill.key}: shares +, cash −, cost = −cash")
            if self.cash + fill.cash < Money.zero():
                raise LedgerError(
                    f"BUY {fill.key} spends {-fill.cash} with only {self.cash} in cash", reason="insufficient_cash"
                )
        elif kind in (FillKind.SELL, FillKind.SETTLE, FillKind.REFUND):
            if fill.shares >= 0 and kind is FillKind.SELL:
                raise LedgerError(f"malformed SELL {fill.key}: shares must decrease")
            if fill.shares > 0 or fill.cash.micros < 0 or fill.cost.micros > 0:
                raise LedgerError(f"malformed {kind.value} {fill.key}: shares −, cash +, cost −")
            if -fill.cost > pos.cost_basis:
                raise LedgerError(f"{kind.value} {fill.key} releases more cost basis than the position has")
            if kind in (FillKind.SETTLE, FillKind.REFUND) and pos.settled and pos.shares == 0:
                raise LedgerError(f"position {fill.market_id}/{fill.outcome} is already settled",
                                  reason="already_settled")
        # REVERSAL mirrors an earlier fill; its validity is checked against that fill by settlement.py.

    def apply(self, fill: Fill) -> Position:
        self.check(fill)
        pos = self.position(fill.market_id, fill.outcome)
        settled = pos.settled
        if fill.kind in (FillKind.SETTLE, FillKind.REFUND):
            settled = True
        elif fill.kind is FillKind.REVERSAL:
            settled = False
        new = replace(
            pos,
            shares=pos.shares + fill.shares,
            cost_basis=pos.cost_basis + fill.cost,
            realized=pos.realized + fill.realized,
            settled=settled,
        )
        self.positions[(fill.market_id, fill.outcome)] = new
        self.cash = self.cash + fill.cash
        self.realized = self.realized + fill.realized
        self.keys.add(fill.key)
        return new

    def apply_all(self, fills: Iterable[Fill]) -> Ledger:
        for f in fills:
            self.apply(f)
        return self


def fold(agent_id: str, starting_cash: Money, fills: Iterable[Fill]) -> Ledger:
    """The ledger implied by `fills` (in the order given, which must be the order they were recorded)."""
    return Ledger(agent_id, starting_cash).apply_all(fills)
