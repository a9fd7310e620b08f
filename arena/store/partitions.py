"""Monthly partitions of price_snapshots on PostgreSQL: naming, creating ahead of time, listing with sizes.

Migration 0006 turns the table into one partitioned by RANGE (observed_at) with a partition per UTC month
and a DEFAULT partition that catches anything outside them, so an insert never fails for want of a
partition. `ensure_month_partitions` (run by `arena compact`) creates the coming months' partitions,
moving any rows the DEFAULT partition already holds for a month into it first. On SQLite all of this is a
no-op: the table stays one table.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import text
from sqlalchemy.engine import Connection

PARENT = "price_snapshots"
DEFAULT = "price_snapshots_default"


def month_start(when: datetime) -> datetime:
    return datetime(when.year, when.month, 1, tzinfo=timezone.utc)


def next_month(when: datetime) -> datetime:
    return datetime(when.year + when.month // 12, when.month % 12 + 1, 1, tzinfo=timezone.utc)


def partition_name(month: datetime) -> str:
    return f"{PARENT}_{month:%Y_%m}"


def is_partitioned(conn: Connection) -> bool:
    if conn.dialect.name != "postgresql":
        return False
    return bool(conn.execute(text(
        "SELECT 1 FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid "
        "WHERE c.relname = :t AND pg_table_is_visible(c.oid)"), {"t": PARENT}).first())


def ensure_month_partitions(conn: Connection, start: datetime, until: datetime) -> list[str]:
    """Create the monthly partitions covering [start, until) that do not exist yet; returns their names.
    Rows the DEFAULT partition holds for such a month are moved into the new partition in the same
    transaction (PostgreSQL refuses to attach a range the DEFAULT partition has rows for)."""
    if not is_partitioned(conn):
        return []
    created = []
    month = month_start(start)
    while month < until:
        name, hi = partition_name(month), next_month(month)
        exists = conn.execute(text("SELECT to_regclass(:n)"), {"n": name}).scalar()
        if exists is None:
            conn.execute(text(f"CREATE TABLE {name} (LIKE {PARENT} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)"))
            conn.execute(text(
                f"WITH moved AS (DELETE FROM {DEFAULT} WHERE observed_at >= :lo AND observed_at < :hi "
                f"RETURNING *) INSERT INTO {name} SELECT * FROM moved"), {"lo": month, "hi": hi})
            conn.execute(text(f"ALTER TABLE {PARENT} ATTACH PARTITION {name} "
                              f"FOR VALUES FROM ('{month.isoformat()}') TO ('{hi.isoformat()}')"))
            created.append(name)
        month = hi
    return created


@dataclass(frozen=True)
class PartitionSize:
    name: str
    rows: int
    bytes: int  # table + indexes + TOAST


def partition_sizes(conn: Connection) -> list[PartitionSize]:
    """Each partition of price_snapshots with its row estimate and total size (empty list when unpartitioned)."""
    if not is_partitioned(conn):
        return []
    rows = conn.execute(text(
        "SELECT c.relname, c.reltuples::bigint, pg_total_relation_size(c.oid) FROM pg_inherits i "
        "JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent "
        "WHERE p.relname = :t AND pg_table_is_visible(p.oid) ORDER BY c.relname"), {"t": PARENT}).all()
    return [PartitionSize(n, max(int(r), 0), int(b)) for n, r, b in rows]
