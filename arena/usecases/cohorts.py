"""Cohorts: opening a cohort with a frozen lineup and rules, and closing it once everything has settled."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlmodel import Session

from arena.domain.sizing import CohortRules
from arena.store.tables import AgentRow, CohortRow, FillRow


@dataclass(frozen=True)
class LineupEntry:
    """One seat in a cohort: a stable name (the model), its kind and whatever configures it."""

    name: str
    kind: str = "scripted"
    model_id: str = ""
    config: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "model_id": self.model_id, "config": dict(self.config)}


def week_start(when: datetime) -> datetime:
    """Sunday 00:00 UTC at or before `when`: the start of the weekly period containing it."""
    day = when.replace(hour=0, minute=0, second=0, microsecond=0)
    return day - timedelta(days=(day.weekday() + 1) % 7)


def cohort_name(period_start: datetime) -> str:
    return f"cohort-{period_start:%Y-%m-%d}"


def start_cohort(session: Session, period_start: datetime, rules: CohortRules, lineup: Sequence[LineupEntry],
                 now: datetime, name: str | None = None) -> tuple[CohortRow, bool]:
    """Open the cohort for `period_start` with `lineup` and `rules` frozen; a second call returns the existing
    cohort unchanged (and False), whatever lineup it is given."""
    name = name or cohort_name(period_start)
    existing = session.scalars(select(CohortRow).where(CohortRow.name == name)).first()
    if existing is not None:
        return existing, False
    names = [e.name for e in lineup]
    if len(set(names)) != len(names):
        raise ValueError(f"lineup names must be unique: {names}")
    cohort = CohortRow(name=name, period_start=period_start, status="open",
                       starting_cash_micros=rules.starting_cash.micros, rules=rules.to_json(),
                       lineup=[e.to_json() for e in lineup], created_at=now)
    session.add(cohort)
    session.flush()
    for e in lineup:
        session.add(AgentRow(cohort_id=cohort.id, name=e.name, kind=e.kind, model_id=e.model_id,
                             config=dict(e.config)))
    session.flush()
    return cohort, True


def cohort_rules(cohort: CohortRow) -> CohortRules:
    return CohortRules.from_json(cohort.rules)


def agents_of(session: Session, cohort_id: int) -> list[AgentRow]:
    return list(session.scalars(select(AgentRow).where(AgentRow.cohort_id == cohort_id).order_by(AgentRow.id)))


def open_cohorts(session: Session, newest: int | None = None) -> list[CohortRow]:
    """Open cohorts, newest first (the `newest` most recent if given)."""
    q = select(CohortRow).where(CohortRow.status == "open").order_by(CohortRow.period_start.desc())
    if newest is not None:
        q = q.limit(newest)
    return list(session.scalars(q))


def open_position_count(session: Session, cohort_id: int) -> int:
    """Positions with shares still held in the cohort (summed over its fills)."""
    sub = (
        select(FillRow.agent_id, FillRow.market_id, FillRow.outcome)
        .where(FillRow.cohort_id == cohort_id)
        .group_by(FillRow.agent_id, FillRow.market_id, FillRow.outcome)
        .having(func.sum(FillRow.shares) > 0)
        .subquery()
    )
    return int(session.scalar(select(func.count()).select_from(sub)) or 0)
