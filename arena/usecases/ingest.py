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
    payload_hashes: dict[str, str] | None = None,
) -> IngestCounts:
    """Upsert markets, append price snapshots and record resolution changes; repeating it changes nothing.
    `extras[market_id]` keeps venue details a market needs later (e.g. Polymarket token ids for its book).

    Writes only what changed, judged by the hashes stored on each market (one read for all of them): a
    market's row when its content or description changed, a price snapshot when its prices changed or a new
    UTC day began (so every synced market has a price at most a day old), resolutions when they changed.

    `payload_hashes[market_id]` is the fingerprint of the venue payload the market and its one quote were
    parsed from. It is stored only when the market's last stored quote is then that quote's (stored now, or
    equal to it): the stored row then is that payload's parse, which is what lets a later sync skip it."""
    counts = IngestCounts()
    markets, quotes = list(markets), list(quotes)
    session.flush()
    states = repo.market_states(session, [m.id for m in markets] + [q.market_id for q in quotes])
    new_quotes, older_quotes = repo.quotes_to_store(quotes, states)
    refresh = repo.last_quotes(new_quotes)
    kept = _vouched(payload_hashes or {}, quotes, older_quotes)
    counts.markets_changed = repo.upsert_markets(session, markets, now, extras, states, refresh, kept)
    counts.snapshots_added = repo.store_quotes(session, new_quotes, older_quotes, now,
                                               written={m.id for m in markets})
    counts.resolutions_recorded = repo.record_resolutions(session, resolutions, now)
    session.flush()
    return counts


def _vouched(payload_hashes: dict[str, str], quotes: list[Quote], older: list[Quote]) -> dict[str, str]:
    """The payload fingerprints whose market will hold exactly one quote of this batch as its last stored
    quote: a market with no quote, two quotes, or a quote older than its stored one keeps none."""
    if not payload_hashes:
        return {}
    seen: dict[str, int] = {}
    for q in quotes:
        seen[q.market_id] = seen.get(q.market_id, 0) + 1
    behind = {q.market_id for q in older}
    return {mid: ph for mid, ph in payload_hashes.items() if ph and seen.get(mid) == 1 and mid not in behind}
