"""`decide.tradable_counts` (the operations page's universe sizes, counted in the database) finds, at every time,
as many markets as `decide.tradable_markets` — on quotes that are stale, fetched late, fetched before the venue's
time, split over outcomes, and on markets closed, resolved or past their close time."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

from arena.domain.market import BINARY_OUTCOMES, Market, MarketKind, MarketStatus
from arena.usecases import decide
from arena.store import repo
from arena.store.engine import session_scope
from arena.store.tables import PriceSnapshotRow

T0 = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)


def _markets(rng: random.Random) -> list[Market]:
    out = []
    for i in range(40):
        multi = i % 4 == 0
        status = rng.choice([MarketStatus.OPEN] * 4 + [MarketStatus.CLOSED, MarketStatus.RESOLVED])
        close = None if i % 7 == 0 else T0 + timedelta(hours=rng.randint(-24, 24 * 12))
        out.append(Market(id=f"test:m{i}", venue="test", question=f"Question {i}?", status=status, close_time=close,
                          kind=MarketKind.MULTI if multi else MarketKind.BINARY,
                          outcomes=("a", "b", "c") if multi else BINARY_OUTCOMES,
                          outcome_labels=("A", "B", "C") if multi else ("Yes", "No")))
    return out


def _snapshots(rng: random.Random, markets: list[Market]) -> list[PriceSnapshotRow]:
    rows = []
    for m in markets:
        outcomes = m.outcomes if m.kind is MarketKind.MULTI else ("yes",)
        for _ in range(rng.randint(0, 12)):
            observed = T0 + timedelta(hours=rng.randint(0, 24 * 10), minutes=rng.randint(0, 59))
            # mostly fetched soon after, sometimes days late, sometimes before the venue's own time (clock skew)
            lag = rng.choice([timedelta(minutes=5)] * 6 + [timedelta(days=rng.randint(1, 5)), -timedelta(hours=2)])
            for outcome in rng.sample(outcomes, rng.randint(1, len(outcomes))):
                rows.append(PriceSnapshotRow(market_id=m.id, outcome=outcome, price_ppm=rng.randint(1, 999_999),
                                             observed_at=observed, fetched_at=observed + lag,
                                             source=rng.choice(["venue", "book"])))
    return rows


def test_counts_equal_the_tradable_universe_at_every_time(engine):
    rng = random.Random(11)
    markets = _markets(rng)
    with session_scope(engine) as s:
        for m in markets:
            repo.upsert_market(s, m, T0)
        s.add_all(_snapshots(rng, markets))
    times = [T0 + timedelta(hours=h) for h in range(0, 24 * 14, 17)]
    with session_scope(engine) as s:
        counts = decide.tradable_counts(s, times)
        expected = {t: len(decide.tradable_markets(s, t)[0]) for t in times}
    assert counts == expected
    # the fixture is not trivial: the universe grows, shrinks and is empty at some times
    assert max(expected.values()) >= 5 and min(expected.values()) == 0
    assert len(set(expected.values())) >= 5


def test_counts_with_no_times_and_no_quotes(engine):
    with session_scope(engine) as s:
        assert decide.tradable_counts(s, []) == {}
        assert decide.tradable_counts(s, [T0]) == {T0: 0}
