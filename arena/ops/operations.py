"""Operations: claiming and recording job runs, so every scheduled job runs at most once per period (even with
two schedulers on one database), a failed or incomplete period is retried by the next tick, a run whose
process died is taken over once its lease expires, and each run's start, end, status, counts and error are
kept for the operations page.

A run's statuses: running (claimed, its lease renewed by a heartbeat while the body works), ok, failed (the
body raised), incomplete (the body finished but left work a later tick should pick up, e.g. decisions to
retry) and abandoned (its runner died: the lease expired with nobody taking the period over — a render or a
sync whose period never comes again would otherwise show `running` forever; a later tick of the same period
still takes it over). Only one claimant can take a period: the claim is an INSERT (unique per job and period) or a
conditional UPDATE of a failed, incomplete or lease-expired run."""

from __future__ import annotations

import itertools
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from arena.ops.leases import Heartbeat, LeasePolicy, runner_id
from arena.store.engine import session_scope
from arena.store.tables import DecisionRow, JobRunRow

RETRYABLE = ("failed", "incomplete", "abandoned")
_claims = itertools.count(1)


@dataclass(frozen=True)
class JobOutcome:
    job: str
    period_key: str
    status: str  # ok, failed, incomplete, skipped (another run has this period), lost (its lease was taken over)
    counts: dict[str, Any]
    error: str = ""


def claim(engine: Engine, job: str, period_key: str, now: datetime, lease: LeasePolicy | None = None
          ) -> str | None:
    """Claim `job` for `period_key`: the claim's token if this caller should run it (a fresh claim, the retry
    of a failed or incomplete run, or the takeover of a run whose lease expired), else None (the period is
    done, or being run by a live process)."""
    lease = lease or LeasePolicy.from_env()
    token = f"{runner_id()}.{next(_claims)}"
    try:
        with session_scope(engine) as s:
            s.add(JobRunRow(job=job, period_key=period_key, status="running", started_at=now, runner=token,
                            lease_until=lease.until(), heartbeat_at=lease.now()))
        return token
    except IntegrityError:
        pass
    wall = lease.now()
    with session_scope(engine) as s:
        # Only one claimant can take the run over: the UPDATE is conditional on its status (and lease).
        res = s.execute(
            update(JobRunRow)
            .where(col(JobRunRow.job) == job, col(JobRunRow.period_key) == period_key,
                   or_(col(JobRunRow.status).in_(RETRYABLE),
                       and_(col(JobRunRow.status) == "running",
                            or_(col(JobRunRow.lease_until).is_(None), col(JobRunRow.lease_until) < wall))))
            .values(status="running", started_at=now, finished_at=None, error="", runner=token,
                    attempts=JobRunRow.attempts + 1, lease_until=lease.until(), heartbeat_at=wall)
        )
        return token if res.rowcount == 1 else None


def abandon_expired(engine: Engine, job: str, lease: LeasePolicy, now: datetime) -> int:
    """Record as abandoned every run of `job` left running by a runner whose lease has expired (it died); the
    number recorded. Done before each claim of the job, so a dead run is visible as such by the next tick."""
    wall = lease.now()
    with session_scope(engine) as s:
        res = s.execute(update(JobRunRow)
                        .where(col(JobRunRow.job) == job, col(JobRunRow.status) == "running",
                               col(JobRunRow.lease_until).is_not(None), col(JobRunRow.lease_until) < wall)
                        .values(status="abandoned", finished_at=now, lease_until=None,
                                error="abandoned: its runner stopped renewing the lease (killed or crashed)"))
        return int(res.rowcount or 0)


def reopen(engine: Engine, job: str, period_key: str) -> bool:
    """Mark a finished (ok) run of the period incomplete, so the next claim runs it again: for work that
    appeared after it finished (e.g. a decision stranded by a killed `arena round`). True when reopened."""
    with session_scope(engine) as s:
        res = s.execute(update(JobRunRow)
                        .where(col(JobRunRow.job) == job, col(JobRunRow.period_key) == period_key,
                               col(JobRunRow.status) == "ok")
                        .values(status="incomplete"))
        return res.rowcount == 1


def renew(engine: Engine, job: str, period_key: str, token: str, lease: LeasePolicy) -> bool:
    """Push the run's lease forward (the heartbeat); False when the claim is no longer this token's."""
    with session_scope(engine) as s:
        res = s.execute(
            update(JobRunRow)
            .where(col(JobRunRow.job) == job, col(JobRunRow.period_key) == period_key,
                   col(JobRunRow.runner) == token, col(JobRunRow.status) == "running")
            .values(lease_until=lease.until(), heartbeat_at=lease.now())
        )
        return res.rowcount == 1


def finish(engine: Engine, job: str, period_key: str, now: datetime, status: str,
           counts: dict[str, Any] | None = None, error: str = "", token: str | None = None) -> bool:
    """Record the run's end; with `token`, only if the claim is still this token's (True when recorded)."""
    conds = [col(JobRunRow.job) == job, col(JobRunRow.period_key) == period_key]
    if token is not None:
        conds += [col(JobRunRow.runner) == token, col(JobRunRow.status) == "running"]
    with session_scope(engine) as s:
        res = s.execute(
            update(JobRunRow)
            .where(*conds)
            .values(status=status, finished_at=now, counts=counts or {}, error=error[:20_000], lease_until=None)
        )
        return res.rowcount == 1


def run_once(engine: Engine, job: str, period_key: str, clock: Any,
             body: Callable[[], dict[str, Any] | None], *, lease: LeasePolicy | None = None,
             incomplete: Callable[[dict[str, Any]], bool] | None = None) -> JobOutcome:
    """Run `body` for (`job`, `period_key`) if it can be claimed, recording the outcome. `body` writes in its
    own transactions; if it raises, its transaction has rolled back and the run is recorded as failed. While
    it runs a heartbeat renews the claim's lease. `incomplete(counts)` True records the run as incomplete:
    the next tick claims it again."""
    lease = lease or LeasePolicy.from_env()
    abandon_expired(engine, job, lease, clock.now())
    token = claim(engine, job, period_key, clock.now(), lease)
    if token is None:
        return JobOutcome(job, period_key, "skipped", {})
    try:
        with Heartbeat(lambda: renew(engine, job, period_key, token, lease), lease.heartbeat_every,
                       name=f"lease-{job}"):
            counts = body() or {}
    except Exception as exc:  # the one boundary where a job's error is recorded and the scheduler moves on
        err = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}"
        finish(engine, job, period_key, clock.now(), "failed", error=err, token=token)
        return JobOutcome(job, period_key, "failed", {}, err)
    counts = {k: _jsonable(v) for k, v in counts.items()}
    status = "incomplete" if incomplete is not None and incomplete(counts) else "ok"
    if not finish(engine, job, period_key, clock.now(), status, counts, token=token):
        # our lease expired and another process took the period over; it records the outcome
        return JobOutcome(job, period_key, "lost", counts)
    return JobOutcome(job, period_key, status, counts)


def expire_claims(engine: Engine) -> tuple[int, int]:
    """Expire the lease of every job run left `running` and every decision left `claimed`, so the next tick
    takes them over at once: for a process that owns its store (a simulated run), where any claim it finds on
    starting was left by a dead predecessor — no other process can be holding it. (job runs, decisions)."""
    with session_scope(engine) as s:
        runs = s.execute(update(JobRunRow).where(col(JobRunRow.status) == "running")
                         .values(lease_until=None)).rowcount
        seats = s.execute(update(DecisionRow).where(col(DecisionRow.status) == "claimed")
                          .values(lease_until=None)).rowcount
    return int(runs or 0), int(seats or 0)


def unfinished(engine: Engine) -> list[str]:
    """What a run left undone: job-run periods not finished ok ("job [period]: status") and decisions still
    claimed ("decision agent #id [round]: claimed"), oldest first."""
    with Session(engine) as s:
        runs = [f"{r.job} [{r.period_key}]: {r.status}" for r in s.scalars(
            select(JobRunRow).where(col(JobRunRow.status).in_(("running", "failed", "incomplete", "abandoned")))
            .order_by(col(JobRunRow.started_at), col(JobRunRow.id)))]
        seats = [f"decision of agent #{d.agent_id} [{d.round_key}]: claimed" for d in s.scalars(
            select(DecisionRow).where(col(DecisionRow.status) == "claimed").order_by(col(DecisionRow.id)))]
    return runs + seats


def recent_runs(engine: Engine, limit: int = 200) -> list[JobRunRow]:
    with Session(engine) as s:
        return list(s.scalars(select(JobRunRow).order_by(col(JobRunRow.started_at).desc(), col(JobRunRow.id).desc())
                              .limit(limit)))


def _jsonable(v: Any) -> Any:
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return str(v)
