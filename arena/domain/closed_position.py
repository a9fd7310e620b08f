"""Closed positions: an agent's fills folded per (market, outcome) and kept where the shares came back to zero —
what went in (Σ stakes of the BUY fills), what came out (Σ cash of the SELL / SETTLE / REFUND / REVERSAL fills)
and the realized P/L (Σ of every fill's cash delta), all exact integer micro-USD. Pure: imports no I/O."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Protocol

from arena.domain.fill import FillKind


class FillFacts(Protocol):
    """The fields of a stored fill this fold reads (a database row has them as attributes)."""

    at: datetime
    kind: str
    market_id: str
    outcome: str
    shares: int  # micro-shares, signed: + bought, − sold or paid out
    cash_micros: int  # the fill's cash delta (− a BUY's stake, + what a SELL / SETTLE / REFUND returned)
    cost_micros: int  # a BUY's stake


@dataclass(frozen=True)
class ClosedPosition:
    market_id: str
    outcome: str
    bought_micros: int  # Σ stakes of its BUY fills
    returned_micros: int  # Σ cash of its other fills
    realized_micros: int  # Σ cash deltas of all its fills: returned − bought
    closed_by: str  # kind of its last fill
    closed_at: datetime  # time of its last fill, as stored (a naive one is UTC)


_BUY = FillKind.BUY.value


def _as_utc(t: datetime) -> datetime:
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)


def closed_positions(fills: Iterable[FillFacts]) -> tuple[ClosedPosition, ...]:
    """The positions among `fills` (one agent's, in the order they happened) whose shares folded back to zero,
    oldest close first (then by market and outcome)."""
    acc: dict[tuple[str, str], list] = {}  # shares, bought, returned, realized, last kind, last at
    for f in fills:
        key = (f.market_id, f.outcome)
        a = acc.get(key)
        if a is None:
            a = acc[key] = [0, 0, 0, 0, "", None]
        kind, cash = f.kind, f.cash_micros
        a[0] += f.shares
        if kind == _BUY:
            a[1] += f.cost_micros
        else:
            a[2] += cash
        a[3] += cash
        a[4], a[5] = kind, f.at
    out = [ClosedPosition(mid, outcome, int(a[1]), int(a[2]), int(a[3]), a[4], a[5])
           for (mid, outcome), a in acc.items() if a[0] == 0]
    out.sort(key=lambda c: (_as_utc(c.closed_at), c.market_id, c.outcome))
    return tuple(out)
