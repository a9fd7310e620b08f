"""Settlement: the fills that close positions when a market resolves, and that reverse them if it re-resolves.

Winning shares pay their payout (1 for a winner, p for a probabilistic resolution), a void market refunds
the remaining cost basis, and every settlement is a fill with a key unique per position and resolution
version, so settling the same resolution twice is impossible (pure).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from arena.domain.fill import Fill, FillKind
from arena.domain.ledger import Position
from arena.domain.market import Resolution, ResolutionKind
from arena.money import value_of


def settlement_key(agent_id: str, market_id: str, outcome: str, version: int) -> str:
    return f"settle:{agent_id}:{market_id}:{outcome}:v{version}"


def settle_position(agent_id: str, position: Position, resolution: Resolution, at: datetime) -> Fill | None:
    """The SETTLE or REFUND fill that closes `position` under `resolution`; None if nothing is held."""
    if position.shares <= 0:
        return None
    if position.market_id != resolution.market_id:
        raise ValueError(f"resolution of {resolution.market_id} cannot settle {position.market_id}")
    key = settlement_key(agent_id, position.market_id, position.outcome, resolution.version)
    common = dict(
        key=key,
        agent_id=agent_id,
        market_id=position.market_id,
        outcome=position.outcome,
        shares=-position.shares,
        cost=-position.cost_basis,
        at=at,
        resolution_version=resolution.version,
    )
    if resolution.kind is ResolutionKind.VOID:
        return Fill(kind=FillKind.REFUND, cash=position.cost_basis, provenance="void_refund", **common)
    payout = resolution.payout(position.outcome)
    assert payout is not None
    return Fill(
        kind=FillKind.SETTLE,
        cash=value_of(position.shares, payout),
        price=payout,
        provenance=f"resolution:{resolution.kind.value}",
        **common,
    )


def settle(agent_id: str, positions: Iterable[Position], resolution: Resolution, at: datetime) -> list[Fill]:
    """Settlement fills for every open position of `agent_id` in the resolved market."""
    out = []
    for p in positions:
        if p.market_id == resolution.market_id:
            f = settle_position(agent_id, p, resolution, at)
            if f is not None:
                out.append(f)
    return out


def reverse(fill: Fill, at: datetime) -> Fill:
    """A REVERSAL that exactly undoes a SETTLE or REFUND fill (when the venue un-resolves or re-resolves)."""
    if fill.kind not in (FillKind.SETTLE, FillKind.REFUND):
        raise ValueError(f"only settlements can be reversed, not {fill.kind.value}")
    return Fill(
        key=f"reverse:{fill.key}",
        agent_id=fill.agent_id,
        market_id=fill.market_id,
        outcome=fill.outcome,
        kind=FillKind.REVERSAL,
        shares=-fill.shares,
        cash=-fill.cash,
        cost=-fill.cost,
        at=at,
        price=fill.price,
        provenance=f"reverses:{fill.key}",
        resolution_version=fill.resolution_version,
    )
