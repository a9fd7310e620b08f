"""What the jobs did, as the operations page shows it: venue syncs and their errors, scheduled job runs (each and
per job), decisions by status and those that failed, and the newest cohorts with their universe sizes and their
agents' decisions. Reads the store; never writes.

`operations` picks the cohorts that had started by `as_of` itself and sizes their universe at `as_of`; for
everything else it relies on a store copied as of that time (`read.point_in_time.store_as_of`), where a run
finished later is still "running" and a decision completed later is still "claimed". Must not import the web.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import case, desc, func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from arena.clock import utc
from arena.store.tables import AgentRow, CohortRow, DecisionRow, JobRunRow, SyncErrorRow, SyncRunRow


class SyncRunFact(NamedTuple):
    id: int
    venue: str
    started_at: datetime
    finished_at: datetime | None
    status: str
    ok: int
    skipped: int
    failed: int
    markets_changed: int
    snapshots_added: int
    resolutions_recorded: int
    error: str


class SyncErrorFact(NamedTuple):
    sync_run_id: int
    venue: str
    native_id: str
    kind: str
    field: str
    message: str
    payload_excerpt: str
    at: datetime


class JobTotals(NamedTuple):
    """A job's runs counted: all, ok, failed, running (None when it has none of a kind), its latest period key
    and latest start."""

    job: str
    runs: int
    ok: int | None
    failed: int | None
    running: int | None
    last_period: str | None
    last_started: datetime | None


class JobRunFact(NamedTuple):
    job: str
    period_key: str
    status: str
    attempts: int
    started_at: datetime
    finished_at: datetime | None
    counts: Any  # as stored (JSON object)
    error: str
    runner: str


class DecisionIssueFact(NamedTuple):
    decision_id: int
    agent_id: int
    agent: str
    cohort: str
    round_key: str
    status: str
    error: str


class AgentRound(NamedTuple):
    agent: str
    round_key: str
    status: str
    error: str


@dataclass(frozen=True)
class CohortRounds:
    """A cohort that had started: its markets tradable when it opened and at `as_of` (the universe), and every
    decision of its agents by agent name then round."""

    name: str
    status: str
    period_start: datetime  # UTC
    universe_at_open: int
    universe_now: int
    rounds: list[AgentRound]


@dataclass(frozen=True)
class Operations:
    """Newest first: sync runs, sync errors, job runs and failed decisions (`limit` of each); per job its totals
    (by job name); decision counts by status; the newest cohorts."""

    sync_runs: list[SyncRunFact]
    sync_errors: list[SyncErrorFact]
    jobs: list[JobTotals]
    job_runs: list[JobRunFact]
    decision_statuses: list[tuple[str, int]]
    issues: list[DecisionIssueFact]
    cohorts: list[CohortRounds]


def _columns(table: Any, fields: tuple[str, ...]) -> list[Any]:
    return [getattr(table, f) for f in fields]


def operations(engine: Engine, as_of: datetime, limit: int, n_cohorts: int) -> Operations:
    """The operations facts: `limit` rows of each newest-first list and the `n_cohorts` newest cohorts that had
    started by `as_of` (filtered here); the rest relies on a store copied as of `as_of`."""
    sync_q = (select(*_columns(SyncRunRow, SyncRunFact._fields))
              .order_by(desc(SyncRunRow.started_at), desc(SyncRunRow.id)))
    error_q = select(*_columns(SyncErrorRow, SyncErrorFact._fields)).order_by(desc(SyncErrorRow.id))
    job_q = (select(*_columns(JobRunRow, JobRunFact._fields))
             .order_by(desc(JobRunRow.started_at), desc(JobRunRow.id)))
    jobs_q = (select(JobRunRow.job, func.count(),
                     func.sum(case((JobRunRow.status == "ok", 1), else_=0)),
                     func.sum(case((JobRunRow.status == "failed", 1), else_=0)),
                     func.sum(case((JobRunRow.status == "running", 1), else_=0)),
                     func.max(JobRunRow.period_key), func.max(JobRunRow.started_at))
              .group_by(JobRunRow.job).order_by(JobRunRow.job))
    status_q = select(DecisionRow.status, func.count()).group_by(DecisionRow.status).order_by(DecisionRow.status)
    failed = (col(DecisionRow.error) != "") | col(DecisionRow.status).in_(["failed", "claimed"])
    issue_q = (select(DecisionRow.id, DecisionRow.agent_id, AgentRow.name, CohortRow.name, DecisionRow.round_key,
                      DecisionRow.status, DecisionRow.error)
               .join(AgentRow, AgentRow.id == DecisionRow.agent_id)
               .join(CohortRow, CohortRow.id == DecisionRow.cohort_id)
               .where(failed).order_by(desc(DecisionRow.id)).limit(limit))
    with engine.connect() as conn:
        runs = [SyncRunFact._make(r)._replace(started_at=utc(r.started_at),
                                              finished_at=utc(r.finished_at) if r.finished_at else None)
                for r in conn.execute(sync_q.limit(limit)).all()]
        errors = [SyncErrorFact._make(r)._replace(at=utc(r.at)) for r in conn.execute(error_q.limit(limit)).all()]
        jobs = [JobTotals._make(r) for r in conn.execute(jobs_q).all()]
        job_runs = [JobRunFact._make(r) for r in conn.execute(job_q.limit(limit)).all()]
        statuses = [(st, int(n)) for st, n in conn.execute(status_q).all()]
        issues = [DecisionIssueFact._make(r) for r in conn.execute(issue_q).all()]
    return Operations(runs, errors, jobs, job_runs, statuses, issues, _cohort_rounds(engine, as_of, n_cohorts))


def _cohort_rounds(engine: Engine, as_of: datetime, n_cohorts: int) -> list[CohortRounds]:
    from arena.usecases.decide import tradable_counts

    cohorts_q = (select(CohortRow).where(CohortRow.period_start <= as_of)
                 .order_by(desc(CohortRow.period_start)).limit(n_cohorts))
    out = []
    with Session(engine) as s:
        cohorts = s.scalars(cohorts_q).all()
        universe = tradable_counts(s, [as_of, *(utc(c.period_start) for c in cohorts)])
        for c in cohorts:
            start = utc(c.period_start)
            rows = s.execute(select(AgentRow.name, DecisionRow.round_key, DecisionRow.status, DecisionRow.error)
                             .join(AgentRow, AgentRow.id == DecisionRow.agent_id)
                             .where(DecisionRow.cohort_id == c.id)
                             .order_by(AgentRow.name, DecisionRow.round_key)).all()
            out.append(CohortRounds(c.name, c.status, start, universe[start], universe[as_of],
                                    [AgentRound._make(r) for r in rows]))
    return out


__all__ = ["AgentRound", "CohortRounds", "DecisionIssueFact", "JobRunFact", "JobTotals", "Operations",
           "SyncErrorFact", "SyncRunFact", "operations"]
