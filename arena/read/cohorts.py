"""The cohorts as the pages name them: each one's card (period, status, starting cash, number of agents), its
rules and lineup, its decisions by status, and every cohort's name and status. Reads the store; never writes.

Each reader takes `as_of` and filters nothing by it: it relies on a store copied as of that time
(`read.point_in_time.store_as_of`), where a cohort created later does not exist and one completed later is still
open. Must not import the web.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from arena.clock import utc
from arena.read.where_in import where_in
from arena.store.tables import AgentRow, CohortRow, DecisionRow


@dataclass(frozen=True)
class CohortCard:
    """A cohort at a glance: its period, status, starting cash (micro-USD), when it was created and completed,
    and how many agents it seats."""

    id: int
    name: str
    period_start: datetime
    status: str
    starting_cash_micros: int
    created_at: datetime
    completed_at: datetime | None
    n_agents: int


@dataclass(frozen=True)
class CohortSetup:
    """A cohort as it was set up: its rules and lineup, as stored (JSON)."""

    id: int
    name: str
    rules: Any
    lineup: Any


def cohort_cards(engine: Engine, as_of: datetime, ids: Sequence[int] | None = None) -> dict[int, CohortCard]:
    """cohort id → its card (None: every cohort), by period start then id. Relies on a store copied as of
    `as_of`."""
    n_agents = (select(AgentRow.cohort_id, func.count().label("n")).group_by(AgentRow.cohort_id).subquery())
    q = (select(CohortRow.id, CohortRow.name, CohortRow.period_start, CohortRow.status,
                CohortRow.starting_cash_micros, CohortRow.created_at, CohortRow.completed_at, n_agents.c.n)
         .outerjoin(n_agents, n_agents.c.cohort_id == CohortRow.id).order_by(CohortRow.period_start, CohortRow.id))
    with engine.connect() as conn:
        rows = conn.execute(where_in(q, CohortRow.id, ids)).all()
    return {cid: CohortCard(cid, name, utc(start), status, int(cash), utc(created),
                            utc(completed) if completed else None, int(n or 0))
            for cid, name, start, status, cash, created, completed, n in rows}


def cohort_setups(engine: Engine, as_of: datetime, names: Sequence[str] | None = None) -> list[CohortSetup]:
    """The cohorts named (None: every cohort) with their rules and lineup, in the order the store returns them.
    Relies on a store copied as of `as_of`."""
    q = select(CohortRow.id, CohortRow.name, CohortRow.rules, CohortRow.lineup)
    with engine.connect() as conn:
        return [CohortSetup(*r) for r in conn.execute(where_in(q, CohortRow.name, names)).all()]


def decisions_by_status(engine: Engine, as_of: datetime, cohort_ids: Sequence[int] | None = None
                        ) -> dict[int, list[tuple[str, int]]]:
    """cohort id → (decision status, how many) of its decisions (None: every cohort). Relies on a store copied as
    of `as_of` (where a decision completed later is still "claimed")."""
    q = (select(DecisionRow.cohort_id, DecisionRow.status, func.count())
         .group_by(DecisionRow.cohort_id, DecisionRow.status))
    out: dict[int, list[tuple[str, int]]] = defaultdict(list)
    with engine.connect() as conn:
        for cid, status, n in conn.execute(where_in(q, DecisionRow.cohort_id, cohort_ids)).all():
            out[cid].append((status, int(n)))
    return out


def cohort_names(engine: Engine, as_of: datetime) -> list[str]:
    """Every cohort's name. Relies on a store copied as of `as_of`."""
    with engine.connect() as conn:
        return list(conn.scalars(select(CohortRow.name)))


def cohort_lineups(engine: Engine, as_of: datetime) -> tuple[dict[int, str], dict[str, list[int]]]:
    """(cohort id → name of every cohort created by `as_of`, in the standings' order — period start, then id —;
    cohort name → its agents' ids, in id order)."""
    with engine.connect() as conn:
        names = {int(cid): str(name) for cid, name in conn.execute(
            select(CohortRow.id, CohortRow.name).where(CohortRow.created_at <= utc(as_of))
            .order_by(CohortRow.period_start, CohortRow.id)).all()}
        agents: dict[str, list[int]] = defaultdict(list)
        for aid, cid in conn.execute(select(AgentRow.id, AgentRow.cohort_id).order_by(AgentRow.id)).all():
            if cid in names:
                agents[names[cid]].append(int(aid))
    return names, dict(agents)


def cohort_statuses(engine: Engine, as_of: datetime) -> list[tuple[str, str]]:
    """(name, status) of every cohort. Relies on a store copied as of `as_of` (a cohort completed later is still
    open there)."""
    with engine.connect() as conn:
        return [(name, status) for name, status in conn.execute(select(CohortRow.name, CohortRow.status)).all()]


__all__ = ["CohortCard", "CohortSetup", "cohort_cards", "cohort_lineups", "cohort_names", "cohort_setups", "cohort_statuses",
           "decisions_by_status"]
