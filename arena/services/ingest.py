"""Ingest: record what a venue shows (markets, prices, resolutions) idempotently, in one transaction per batch."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session

from arena.domain.market import Market, Quote, Resolution
from arena.store import repo


@dataclass
class IngestCounts:
    markets_changed: int = 0
    snapshots_added: int = 0
    resolutions_recorded: int = 0

    def __iadd__(self, other: IngestCounts) -> IngestCounts:
        self.markets_changed += other.markets_changed
        self.snapshots_added += other.snapshots_added
        self.resolutions_recorded += other.resolutions_recorded
        return self


def record_observations(
    session: Session,
    now: datetime,
    markets: Iterable[Market] = (),
    quotes: Iterable[Quote] = (),
    resolutions: Iterable[tuple[str, Resolution | None]] = (),
    extras: dict[str, dict] | None = None,
) -> IngestCounts:
    """Upsert markets, append price snapshots and record resolution changes; repeating it changes nothing.
    `extras[market_id]` keeps venue details a market needs later (e.g. Polymarket token ids for its book)."""
    counts = IngestCounts()
    counts.markets_changed = repo.upsert_markets(session, markets, now, extras)
    session.flush()
    counts.snapshots_added = repo.add_quotes(session, quotes, now)
    counts.resolutions_recorded = repo.record_resolutions(session, resolutions, now)
    session.flush()
    return counts
