"""A sync writes only what changed: market rows by content hash, price snapshots on a price change or a new
UTC day, descriptions only when they changed — and marks and decisions still find a fresh enough price."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

from sqlalchemy import func, select

from arena.domain.market import YES, Market, Quote
from arena.money import Price
from arena.usecases import decide, ingest
from arena.store.engine import session_scope
from arena.store.tables import MarketRow, PriceSnapshotRow

T0 = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)


def _market(**kw) -> Market:
    base = dict(id="test:m1", venue="test", question="Will it rain?", description="Long rules text.",
                close_time=T0 + timedelta(days=30), volume=10.0, volume_24h=1.0)
    return Market(**(base | kw))  # type: ignore[arg-type]


def _quote(at: datetime, ppm: int = 400_000) -> Quote:
    return Quote(market_id="test:m1", prices={YES: Price(ppm)}, observed_at=at, fetched_at=at,
                 bid=Price(ppm - 10_000), ask=Price(ppm + 10_000), source="test")


def _sync(engine, at: datetime, market: Market, quote: Quote) -> ingest.IngestCounts:
    with session_scope(engine) as s:
        return ingest.record_observations(s, at, [market], [quote], [(market.id, None)])


def _snapshots(engine) -> int:
    with session_scope(engine) as s:
        return s.scalar(select(func.count()).select_from(PriceSnapshotRow))


def test_unchanged_price_is_stored_once_a_day_and_a_change_at_once(engine):
    first = _sync(engine, T0, _market(), _quote(T0))
    assert (first.markets_changed, first.snapshots_added) == (1, 1)
    same = _sync(engine, T0 + timedelta(hours=1), _market(), _quote(T0 + timedelta(hours=1)))
    assert (same.markets_changed, same.snapshots_added) == (0, 0)
    moved = _sync(engine, T0 + timedelta(hours=2), _market(), _quote(T0 + timedelta(hours=2), 410_000))
    assert (moved.markets_changed, moved.snapshots_added) == (0, 1)
    back_again = _sync(engine, T0 + timedelta(hours=3), _market(), _quote(T0 + timedelta(hours=3), 410_000))
    assert back_again.snapshots_added == 0
    next_day = T0 + timedelta(days=1)
    assert _sync(engine, next_day, _market(), _quote(next_day, 410_000)).snapshots_added == 1
    assert _snapshots(engine) == 3
    # a decision two days after the last change still sees the market: the daily snapshot keeps it fresh
    as_of = T0 + timedelta(days=2, hours=5)
    assert _sync(engine, as_of, _market(), _quote(as_of, 410_000)).snapshots_added == 1
    with session_scope(engine) as s:
        markets, quotes = decide.tradable_markets(s, as_of + timedelta(hours=20))
    assert quotes["test:m1"].price(YES) == Price(410_000)


def test_only_changed_content_is_written_and_activity_rides_with_the_price(engine):
    _sync(engine, T0, _market(), _quote(T0))
    later = T0 + timedelta(hours=1)
    busier = _sync(engine, later, _market(volume=99.0), _quote(later))
    assert busier.markets_changed == 0  # volume alone is activity, not content
    with session_scope(engine) as s:
        assert s.get(MarketRow, "test:m1").volume == 10.0
    repriced = _sync(engine, later + timedelta(hours=1), _market(volume=99.0), _quote(later, 420_000))
    assert repriced.markets_changed == 0
    with session_scope(engine) as s:
        assert s.get(MarketRow, "test:m1").volume == 99.0  # written with the new price
    reworded = _sync(engine, later, _market(description="New rules."), _quote(later, 420_000))
    retitled = _sync(engine, later, _market(description="New rules.", question="Will it snow?"),
                     _quote(later, 420_000))
    assert (reworded.markets_changed, retitled.markets_changed) == (1, 1)
    with session_scope(engine) as s:
        row = s.get(MarketRow, "test:m1")
        assert (row.description, row.question) == ("New rules.", "Will it snow?")


def test_a_backfilled_older_quote_is_stored_once(engine):
    _sync(engine, T0, _market(), _quote(T0))
    earlier = T0 - timedelta(hours=5)
    assert _sync(engine, T0, _market(), _quote(earlier, 300_000)).snapshots_added == 1
    assert _sync(engine, T0, _market(), _quote(earlier, 300_000)).snapshots_added == 0
    other_source = replace(_quote(T0, 450_000), source="other")
    assert _sync(engine, T0, _market(), other_source).snapshots_added == 1
    assert _snapshots(engine) == 3
