"""The operations page: row counts, venue syncs and their errors, scheduled job runs, failed decisions and each
recent cohort's universe and failing agents — what the jobs did, newest first.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import case, desc, func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from arena.clock import utc
from arena.read.point_in_time import backend
from arena.store.tables import (
    AgentRow,
    CohortRow,
    DecisionRow,
    FillRow,
    ForecastRow,
    JobRunRow,
    MarketRow,
    ModelCallRow,
    PortfolioSnapshotRow,
    PriceSnapshotRow,
    RejectionRow,
    ResolutionRow,
    SyncErrorRow,
    SyncRunRow,
)
from arena.web.env import page_path
from arena.web.values import NAN, flat


OPERATIONS_LIMIT = 100  # rows of each operations table (newest first)


@dataclass(frozen=True)
class SyncRunView:
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


@dataclass(frozen=True)
class SyncErrorView:
    sync_run_id: int
    venue: str
    native_id: str
    kind: str
    field: str
    message: str
    payload_excerpt: str
    at: datetime


@dataclass(frozen=True)
class JobSummary:
    job: str
    runs: int
    ok: int
    failed: int
    running: int
    last_period: str
    last_started: datetime | None


@dataclass(frozen=True)
class JobRunView:
    job: str
    period_key: str
    status: str
    attempts: int
    started_at: datetime
    finished_at: datetime | None
    seconds: float  # finished − started, NaN while running
    counts: str
    error: str
    runner: str


@dataclass(frozen=True)
class DecisionIssue:
    decision_id: int
    agent_id: int
    agent: str
    cohort: str
    agent_href: str
    cohort_href: str
    round_key: str
    status: str
    error: str


@dataclass(frozen=True)
class FailingAgent:
    """An agent whose latest decision in a cohort failed: how many of its decisions failed, the last error."""

    name: str
    failed: int
    last_round: str
    error: str


@dataclass(frozen=True)
class CohortOps:
    """A cohort as operations see it: how many markets it could trade when it opened (the universe: open
    markets with a price from the 3 days before) and now, and which agents' decisions are failing."""

    name: str
    href: str
    status: str
    period_start: datetime
    universe_at_open: int
    universe_now: int
    rounds: int
    failing: tuple[FailingAgent, ...]


@dataclass(frozen=True)
class OperationsPage:
    as_of: datetime
    backend: str
    tables: tuple[tuple[str, int], ...]
    sync_runs: tuple[SyncRunView, ...]
    sync_errors: tuple[SyncErrorView, ...]
    jobs: tuple[JobSummary, ...]
    job_runs: tuple[JobRunView, ...]
    decision_statuses: tuple[tuple[str, int], ...]
    issues: tuple[DecisionIssue, ...]
    limit: int
    cohorts: tuple[CohortOps, ...] = ()


_COUNTED = (("markets", MarketRow), ("price_snapshots", PriceSnapshotRow), ("cohorts", CohortRow),
            ("agents", AgentRow), ("decisions", DecisionRow), ("fills", FillRow), ("rejections", RejectionRow),
            ("forecasts", ForecastRow), ("resolutions", ResolutionRow), ("portfolio_snapshots", PortfolioSnapshotRow),
            ("model_calls", ModelCallRow), ("sync_runs", SyncRunRow), ("job_runs", JobRunRow))


def operations_context(engine: Engine, as_of: datetime, limit: int = OPERATIONS_LIMIT) -> OperationsPage:
    """What the jobs did: row counts, venue syncs and their errors, scheduled job runs, decisions that failed."""
    sync_q = select(SyncRunRow).order_by(desc(SyncRunRow.started_at), desc(SyncRunRow.id))  # newest first
    error_q = select(SyncErrorRow).order_by(desc(SyncErrorRow.id))
    job_q = select(JobRunRow).order_by(desc(JobRunRow.started_at), desc(JobRunRow.id))
    jobs_q = (select(JobRunRow.job, func.count(),
                     func.sum(case((JobRunRow.status == "ok", 1), else_=0)),
                     func.sum(case((JobRunRow.status == "failed", 1), else_=0)),
                     func.sum(case((JobRunRow.status == "running", 1), else_=0)),
                     func.max(JobRunRow.period_key), func.max(JobRunRow.started_at))
              .group_by(JobRunRow.job).order_by(JobRunRow.job))
    status_q = select(DecisionRow.status, func.count()).group_by(DecisionRow.status).order_by(DecisionRow.status)
    failed = (DecisionRow.error != "") | DecisionRow.status.in_(["failed", "claimed"])  # type: ignore[attr-defined]
    issue_q = (select(DecisionRow.id, DecisionRow.agent_id, AgentRow.name, CohortRow.name, DecisionRow.round_key,
                      DecisionRow.status, DecisionRow.error)
               .join(AgentRow, AgentRow.id == DecisionRow.agent_id)
               .join(CohortRow, CohortRow.id == DecisionRow.cohort_id)
               .where(failed).order_by(desc(DecisionRow.id)).limit(limit))
    with engine.connect() as conn:
        tables = tuple((name, int(conn.execute(select(func.count()).select_from(row)).scalar_one()))
                       for name, row in _COUNTED)
        runs = tuple(SyncRunView(r.id, r.venue, utc(r.started_at), utc(r.finished_at) if r.finished_at else None,
                                 r.status, r.ok, r.skipped, r.failed, r.markets_changed, r.snapshots_added,
                                 r.resolutions_recorded, r.error)
                     for r in conn.execute(sync_q.limit(limit)).all())
        errors = tuple(SyncErrorView(r.sync_run_id, r.venue, r.native_id, r.kind, r.field, r.message,
                                     r.payload_excerpt, utc(r.at))
                       for r in conn.execute(error_q.limit(limit)).all())
        jobs = tuple(JobSummary(job, int(n), int(ok or 0), int(bad or 0), int(running or 0), last_period or "",
                                utc(last) if last else None)
                     for job, n, ok, bad, running, last_period, last in conn.execute(jobs_q).all())
        job_runs = []
        for r in conn.execute(job_q.limit(limit)).all():
            started, finished = utc(r.started_at), utc(r.finished_at) if r.finished_at else None
            job_runs.append(JobRunView(
                r.job, r.period_key, r.status, r.attempts, started, finished,
                (finished - started).total_seconds() if finished else NAN,
                ", ".join(f"{k}={flat(v)}" for k, v in sorted((r.counts or {}).items())), r.error, r.runner))
        statuses = tuple((st, int(n)) for st, n in conn.execute(status_q).all())
        issues = tuple(DecisionIssue(did, aid, agent, cohort, page_path("agent", aid), page_path("cohort", cohort),
                                     rk, status, error)
                       for did, aid, agent, cohort, rk, status, error in conn.execute(issue_q).all())
    return OperationsPage(as_of, backend(engine), tables, runs, errors, jobs, tuple(job_runs), statuses, issues,
                          limit, _cohort_ops(engine, as_of))


OPERATIONS_COHORTS = 12  # the newest cohorts shown with their universe (each size is one grouped price-table read)


def _cohort_ops(engine: Engine, as_of: datetime) -> tuple[CohortOps, ...]:
    from arena.usecases.decide import tradable_counts

    cohorts_q = (select(CohortRow).where(CohortRow.period_start <= as_of)
                 .order_by(desc(CohortRow.period_start)).limit(OPERATIONS_COHORTS))
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
            latest: dict[str, tuple[str, str, str]] = {}
            failed: Counter = Counter()
            for name, round_key, status, error in rows:
                latest[name] = (round_key, status, error)
                failed[name] += status == "failed"
            failing = tuple(FailingAgent(name, failed[name], rk, (err or "").strip().splitlines()[0][:300]
                                         if (err or "").strip() else "")
                            for name, (rk, st, err) in sorted(latest.items()) if st == "failed")
            out.append(CohortOps(c.name, page_path("cohort", c.name), c.status, start,
                                 universe[start], universe[as_of] if c.status == "open" else 0,
                                 len({rk for _, rk, _, _ in rows}), failing))
    return tuple(out)
