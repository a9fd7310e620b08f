"""Fact versions: a counter per cohort and per market that the database raises in the transaction of every write
that can change what that cohort's pages and boards, or that market, show (migration 0018's triggers, so a
hand edit in SQL counts too). Equal versions mean nothing shown changed; a cohort or market with no write
since the counters were installed is at version 0.

A cohort's version also moves with the markets it holds open (an open cohort with a fill, a forecast or a
forecast-set question on the market); a completed cohort's does not, so a reader of a completed cohort's
markets keys on their market versions too."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.engine import Connection

from arena.store.tables import CohortVersionRow, MarketVersionRow


def cohort_versions(conn: Connection, cohort_ids: Iterable[int]) -> dict[int, int]:
    """Cohort id → version, for each of `cohort_ids` (0 when it has none yet)."""
    ids = sorted(set(cohort_ids))
    if not ids:
        return {}
    t = CohortVersionRow.__table__  # type: ignore[attr-defined]
    found = dict(conn.execute(select(t.c.cohort_id, t.c.version).where(t.c.cohort_id.in_(ids))).tuples().all())
    return {i: int(found.get(i, 0)) for i in ids}


def market_versions(conn: Connection, market_ids: Iterable[str]) -> dict[str, int]:
    """Market id → version, for each of `market_ids` (0 when it has none yet)."""
    ids = sorted(set(market_ids))
    if not ids:
        return {}
    t = MarketVersionRow.__table__  # type: ignore[attr-defined]
    found: dict[str, int] = {}
    for i in range(0, len(ids), 2_000):
        found.update(conn.execute(select(t.c.market_id, t.c.version)
                                  .where(t.c.market_id.in_(ids[i:i + 2_000]))).tuples().all())
    return {i: int(found.get(i, 0)) for i in ids}
