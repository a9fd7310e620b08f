"""Every table of an arena database as comparable facts: what kill tests compare with a clean run.

Each row becomes a tuple of its columns, with surrogate ids replaced by what they point at (a cohort by its
name, an agent by its cohort and name, a decision by its agent and round), and the columns that record *how*
the work was done rather than what happened dropped: the claim holders, leases, heartbeats and attempt counts
of a resumed claim, wall-clock latencies (a model call's latency_s too). Tables that are memos (caches) or the
record of the work itself (job runs, sync runs, decision attempts, model calls) are left to the caller: name them
in `skip`. The fact versions (`cohort_versions`, `market_versions`) count writes, not facts: a resumed run writes
again what the killed one had begun, so its counters are higher for the same facts; they are always left out."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select
from sqlmodel import SQLModel

import arena.store.tables  # noqa: F401 - registers the tables
from arena.store.engine import make_engine

HOW_COLUMNS = frozenset({"id", "claimed_by", "lease_until", "heartbeat_at", "runner", "attempts", "claimed_at",
                         "latency_ms", "latency_s", "completed_at", "started_at", "finished_at", "error",
                         "key"})  # a fill's key holds its decision's surrogate id
MEMOS = frozenset({"memo", "alembic_version"})
WRITE_COUNTERS = frozenset({"cohort_versions", "market_versions"})


def _norm(v: Any) -> Any:
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True, default=str)
    if hasattr(v, "isoformat"):
        return v.isoformat()[:19]  # an instant, as stored (SQLite keeps no zone; PostgreSQL does)
    return v


def table_facts(url: str, skip: frozenset[str] | set[str] = frozenset(),
                keep: frozenset[str] | set[str] = frozenset()) -> dict[str, list[tuple]]:
    """table → its rows as sorted tuples of (column, value) (see the module docstring); `keep` names columns
    of HOW_COLUMNS to compare anyway."""
    eng = make_engine(url)
    out: dict[str, list[tuple]] = {}
    try:
        with eng.connect() as c:
            cohorts = {r.id: r.name for r in c.execute(select(SQLModel.metadata.tables["cohorts"]))}
            agents = {r.id: (cohorts.get(r.cohort_id), r.name)
                      for r in c.execute(select(SQLModel.metadata.tables["agents"]))}
            decisions = {r.id: (agents.get(r.agent_id), r.round_key)
                         for r in c.execute(select(SQLModel.metadata.tables["decisions"]))}
            refs = {"cohort_id": cohorts, "agent_id": agents, "decision_id": decisions}
            for table in SQLModel.metadata.sorted_tables:
                if table.name in MEMOS or table.name in WRITE_COUNTERS or table.name in skip:
                    continue
                cols = [col.name for col in table.columns if col.name not in HOW_COLUMNS or col.name in keep]
                rows = []
                for r in c.execute(select(table)):
                    m = r._mapping
                    rows.append(tuple((k, _norm(refs[k].get(m[k], ("?", m[k])) if k in refs else m[k]))
                                      for k in cols))
                out[table.name] = sorted(rows, key=repr)
    finally:
        eng.dispose()
    return out


def differences(a: dict[str, list[tuple]], b: dict[str, list[tuple]]) -> dict[str, tuple[int, int, list]]:
    """table → (rows in a, rows in b, first few rows of a missing from b and of b missing from a), for the
    tables that differ."""
    out = {}
    for name in sorted(set(a) | set(b)):
        ra, rb = a.get(name, []), b.get(name, [])
        if ra != rb:
            only_a = [r for r in ra if r not in rb][:2]
            only_b = [r for r in rb if r not in ra][:2]
            out[name] = (len(ra), len(rb), only_a + only_b)
    return out
