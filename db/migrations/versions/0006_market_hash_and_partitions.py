"""market content hashes and the last stored quote; price_snapshots partitioned by month on PostgreSQL

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23

`content_hash` covers a market's fields except its description and activity figures (volume, liquidity),
`description_hash` its description, `quote_hash`/`quote_at` the prices and time of the last price snapshot
stored. Existing rows start with empty hashes (the first sync after the upgrade rewrites each market once)
and `quote_at` set to their newest snapshot's time.

On PostgreSQL, price_snapshots becomes a table partitioned by RANGE (observed_at), one partition per UTC
month (rows copied over; ids and their sequence kept). A no-op on SQLite.
"""
import sqlalchemy as sa
from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("markets") as batch:
        batch.add_column(sa.Column("content_hash", sa.String(length=32), nullable=False, server_default=""))
        batch.add_column(sa.Column("description_hash", sa.String(length=32), nullable=False, server_default=""))
        batch.add_column(sa.Column("quote_hash", sa.String(length=32), nullable=False, server_default=""))
        batch.add_column(sa.Column("quote_at", sa.DateTime(timezone=True), nullable=True))
    # The newest stored snapshot's time (hash unknown): the next sync stores a later quote, and checks a
    # quote observed at that very time against the stored keys instead of inserting a duplicate.
    op.execute("UPDATE markets SET quote_at = (SELECT max(observed_at) FROM price_snapshots "
               "WHERE price_snapshots.market_id = markets.id)")
    if op.get_bind().dialect.name == "postgresql":
        _partition_snapshots()


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _unpartition_snapshots()
    with op.batch_alter_table("markets") as batch:
        for column in ("quote_at", "quote_hash", "description_hash", "content_hash"):
            batch.drop_column(column)


# --- PostgreSQL: price_snapshots range-partitioned by month of observed_at --------------------------------
# The primary key and the unique key must hold the partition key: (id, observed_at) and uq_snapshot, which
# already holds it: (market_id, outcome, observed_at, source). Partitions are created
# for every month that has rows up to two months ahead, and a DEFAULT partition for anything else; `arena
# compact` creates later months ahead of time (arena/store/partitions.py).

_COLUMNS = ("id integer NOT NULL DEFAULT nextval('{seq}'::regclass), market_id varchar(200) NOT NULL, "
            "outcome varchar(120) NOT NULL, price_ppm bigint NOT NULL, bid_ppm bigint, ask_ppm bigint, "
            "observed_at timestamptz NOT NULL, fetched_at timestamptz NOT NULL, source varchar(60) NOT NULL")


def _months(lo, hi):
    from datetime import datetime, timezone

    month = datetime(lo.year, lo.month, 1, tzinfo=timezone.utc)
    while month < hi:
        nxt = datetime(month.year + month.month // 12, month.month % 12 + 1, 1, tzinfo=timezone.utc)
        yield month, nxt
        month = nxt


def _partition_snapshots() -> None:
    from datetime import datetime, timedelta, timezone

    conn = op.get_bind()
    seq = conn.execute(sa.text("SELECT pg_get_serial_sequence('price_snapshots', 'id')")).scalar()
    lo, hi = conn.execute(sa.text("SELECT min(observed_at), max(observed_at) FROM price_snapshots")).one()
    now = datetime.now(timezone.utc)  # the migration runs once, at deploy time: partitions from here on
    lo = min(lo, now) if lo is not None else now
    hi = max(hi, now) if hi is not None else now
    op.execute("ALTER TABLE price_snapshots RENAME TO price_snapshots_unpartitioned")
    op.execute("ALTER TABLE price_snapshots_unpartitioned RENAME CONSTRAINT uq_snapshot TO uq_snapshot_old")
    op.execute("ALTER INDEX ix_snapshot_market_time RENAME TO ix_snapshot_market_time_old")
    op.execute("ALTER TABLE price_snapshots_unpartitioned RENAME CONSTRAINT price_snapshots_pkey "
               "TO price_snapshots_unpartitioned_pkey")
    op.execute(f"ALTER SEQUENCE {seq} OWNED BY NONE")
    op.execute(f"CREATE TABLE price_snapshots ({_COLUMNS.format(seq=seq)}, "
               "CONSTRAINT price_snapshots_pkey PRIMARY KEY (id, observed_at), "
               "CONSTRAINT uq_snapshot UNIQUE (market_id, outcome, observed_at, source), "
               "CONSTRAINT price_snapshots_market_id_fkey FOREIGN KEY (market_id) REFERENCES markets (id)"
               ") PARTITION BY RANGE (observed_at)")
    op.execute("CREATE INDEX ix_snapshot_market_time ON price_snapshots (market_id, observed_at)")
    for month, nxt in _months(lo, hi + timedelta(days=62)):
        op.execute(f"CREATE TABLE price_snapshots_{month:%Y_%m} PARTITION OF price_snapshots "
                   f"FOR VALUES FROM ('{month.isoformat()}') TO ('{nxt.isoformat()}')")
    op.execute("CREATE TABLE price_snapshots_default PARTITION OF price_snapshots DEFAULT")
    op.execute("INSERT INTO price_snapshots SELECT id, market_id, outcome, price_ppm, bid_ppm, ask_ppm, "
               "observed_at, fetched_at, source FROM price_snapshots_unpartitioned")
    op.execute("DROP TABLE price_snapshots_unpartitioned")
    op.execute(f"ALTER SEQUENCE {seq} OWNED BY price_snapshots.id")


def _unpartition_snapshots() -> None:
    conn = op.get_bind()
    seq = conn.execute(sa.text("SELECT pg_get_serial_sequence('price_snapshots', 'id')")).scalar()
    op.execute("ALTER TABLE price_snapshots RENAME TO price_snapshots_partitioned")
    op.execute("ALTER TABLE price_snapshots_partitioned RENAME CONSTRAINT uq_snapshot TO uq_snapshot_old")
    op.execute("ALTER INDEX ix_snapshot_market_time RENAME TO ix_snapshot_market_time_old")
    op.execute("ALTER TABLE price_snapshots_partitioned RENAME CONSTRAINT price_snapshots_pkey "
               "TO price_snapshots_partitioned_pkey")
    op.execute(f"ALTER SEQUENCE {seq} OWNED BY NONE")
    op.execute(f"CREATE TABLE price_snapshots ({_COLUMNS.format(seq=seq)}, "
               "CONSTRAINT price_snapshots_pkey PRIMARY KEY (id), "
               "CONSTRAINT uq_snapshot UNIQUE (market_id, outcome, observed_at, source), "
               "CONSTRAINT price_snapshots_market_id_fkey FOREIGN KEY (market_id) REFERENCES markets (id))")
    op.execute("CREATE INDEX ix_snapshot_market_time ON price_snapshots (market_id, observed_at)")
    op.execute("INSERT INTO price_snapshots SELECT id, market_id, outcome, price_ppm, bid_ppm, ask_ppm, "
               "observed_at, fetched_at, source FROM price_snapshots_partitioned")
    op.execute("DROP TABLE price_snapshots_partitioned")  # drops its partitions with it
    op.execute(f"ALTER SEQUENCE {seq} OWNED BY price_snapshots.id")
