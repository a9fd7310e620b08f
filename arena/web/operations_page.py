"""The operations page: row counts, venue syncs and their errors, scheduled job runs, failed decisions and each
recent cohort's universe and failing agents — what the jobs did, newest first. Only reshapes what
`read.operations` and `read.row_counts` read.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.engine import Engine

from arena.clock import utc
from arena.read.operations import CohortRounds, SyncErrorFact, SyncRunFact, operations
from arena.read.point_in_time import backend
from arena.read.row_counts import row_counts
from arena.web.env import page_path
from arena.web.values import NAN, flat


OPERATIONS_LIMIT = 100  # rows of each operations table (newest first)


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
    sync_runs: tuple[SyncRunFact, ...]
    sync_errors: tuple[SyncErrorFact, ...]
    jobs: tuple[JobSummary, ...]
    job_runs: tuple[JobRunView, ...]
    decision_statuses: tuple[tuple[str, int], ...]
    issues: tuple[DecisionIssue, ...]
    limit: int
    cohorts: tuple[CohortOps, ...] = ()


def operations_context(engine: Engine, as_of: datetime, limit: int = OPERATIONS_LIMIT) -> OperationsPage:
    """What the jobs did: row counts, venue syncs and their errors, scheduled job runs, decisions that failed."""
    tables = row_counts(engine, as_of)
    ops = operations(engine, as_of, limit, OPERATIONS_COHORTS)
    runs, errors = tuple(ops.sync_runs), tuple(ops.sync_errors)  # times in UTC
    jobs = tuple(JobSummary(job, int(n), int(ok or 0), int(bad or 0), int(running or 0), last_period or "",
                            utc(last) if last else None)
                 for job, n, ok, bad, running, last_period, last in ops.jobs)
    job_runs = []
    for r in ops.job_runs:
        started, finished = utc(r.started_at), utc(r.finished_at) if r.finished_at else None
        job_runs.append(JobRunView(
            r.job, r.period_key, r.status, r.attempts, started, finished,
            (finished - started).total_seconds() if finished else NAN,
            ", ".join(f"{k}={flat(v)}" for k, v in sorted((r.counts or {}).items())), r.error, r.runner))
    statuses = tuple(ops.decision_statuses)
    issues = tuple(DecisionIssue(did, aid, agent, cohort, page_path("agent", aid), page_path("cohort", cohort),
                                 rk, status, error)
                   for did, aid, agent, cohort, rk, status, error in ops.issues)
    return OperationsPage(as_of, backend(engine), tables, runs, errors, jobs, tuple(job_runs), statuses, issues,
                          limit, _cohort_ops(ops.cohorts))


OPERATIONS_COHORTS = 12  # the newest cohorts shown with their universe (each size is one grouped price-table read)


def _cohort_ops(cohorts: list[CohortRounds]) -> tuple[CohortOps, ...]:
    out = []
    for c in cohorts:
        latest: dict[str, tuple[str, str, str]] = {}
        failed: Counter = Counter()
        for name, round_key, status, error in c.rounds:
            latest[name] = (round_key, status, error)
            failed[name] += status == "failed"
        failing = tuple(FailingAgent(name, failed[name], rk, (err or "").strip().splitlines()[0][:300]
                                     if (err or "").strip() else "")
                        for name, (rk, st, err) in sorted(latest.items()) if st == "failed")
        out.append(CohortOps(c.name, page_path("cohort", c.name), c.status, c.period_start,
                             c.universe_at_open, c.universe_now if c.status == "open" else 0,
                             len({rk for _, rk, _, _ in c.rounds}), failing))
    return tuple(out)
