"""price_snapshots is partitioned by month on PostgreSQL (migration 0006): upgrade and downgrade keep every
row, and partitions are created ahead of time; on SQLite the table stays one table."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import func, select, text

from arena.domain.market import YES, Market, Quote
from arena.money import Price
from arena.usecases import ingest
from arena.store import partitions
from arena.store.engine import MIGRATIONS, current_revision, migrate, session_scope
from arena.store.tables import PriceSnapshotRow

T0 = datetime(2026, 1, 20, tzinfo=timezone.utc)


def _below_0006() -> str:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return ScriptDirectory.from_config(cfg).get_revision("0006").down_revision  # type: ignore[return-value]


def _fill(engine, days: int = 70) -> None:
    m = Market(id="test:p", venue="test", question="Q?", close_time=T0 + timedelta(days=400))
    with session_scope(engine) as s:
        for d in range(days):
            at = T0 + timedelta(days=d)
            ingest.record_observations(s, at, [m], [Quote(market_id=m.id, prices={YES: Price(1000 * (d + 1))},
                                                          observed_at=at, fetched_at=at, source="t")])


def _prices(engine) -> list[tuple]:
    with session_scope(engine) as s:
        return [tuple(r) for r in s.execute(select(PriceSnapshotRow.id, PriceSnapshotRow.observed_at,
                                                   PriceSnapshotRow.price_ppm).order_by(PriceSnapshotRow.id))]


def test_partition_migration_upgrades_and_downgrades_keeping_rows(engine):
    if engine.dialect.name != "postgresql":
        pytest.skip("partitions are PostgreSQL only (the migration is a no-op on SQLite)")
    _fill(engine)
    before = _prices(engine)
    assert len(before) == 70
    with engine.connect() as c:
        assert partitions.is_partitioned(c)
        assert "price_snapshots_default" in {p.name for p in partitions.partition_sizes(c)}
    migrate(engine, _below_0006())
    with engine.connect() as c:
        assert not partitions.is_partitioned(c)
    assert _prices(engine) == before
    migrate(engine)
    assert current_revision(engine) is not None
    with engine.connect() as c:
        assert partitions.is_partitioned(c)
        names = {p.name for p in partitions.partition_sizes(c)}
        assert {"price_snapshots_2026_01", "price_snapshots_2026_03", "price_snapshots_default"} <= names
        # rows went to their month: January's partition holds January's rows only
        assert c.execute(text("SELECT count(*) FROM price_snapshots_2026_01")).scalar() == 12
    assert _prices(engine) == before
    _fill(engine, 71)  # the sequence survived both ways: new ids follow the old ones, no clash
    assert len(_prices(engine)) == 71


def test_partitions_are_made_ahead_and_rows_leave_the_default_partition(engine):
    if engine.dialect.name != "postgresql":
        with engine.begin() as c:
            assert partitions.ensure_month_partitions(c, T0, T0 + timedelta(days=900)) == []
        return
    far = datetime(2030, 5, 3, tzinfo=timezone.utc)
    m = Market(id="test:f", venue="test", question="Q?", close_time=far + timedelta(days=90))
    with session_scope(engine) as s:
        ingest.record_observations(s, far, [m], [Quote(market_id=m.id, prices={YES: Price(5)}, observed_at=far,
                                                        fetched_at=far, source="t")])
    with engine.begin() as c:
        assert c.execute(text("SELECT count(*) FROM price_snapshots_default")).scalar() == 1
        made = partitions.ensure_month_partitions(c, far, far + timedelta(days=40))
        assert made == ["price_snapshots_2030_05", "price_snapshots_2030_06"]
        assert partitions.ensure_month_partitions(c, far, far + timedelta(days=40)) == []
    with engine.connect() as c:
        assert c.execute(text("SELECT count(*) FROM price_snapshots_default")).scalar() == 0
        assert c.execute(text("SELECT count(*) FROM price_snapshots_2030_05")).scalar() == 1
    with session_scope(engine) as s:
        assert s.scalar(select(func.count()).select_from(PriceSnapshotRow)) == 1
