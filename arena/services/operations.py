"""Operations: claiming and recording job runs, so every scheduled job runs at most once per period (even with
two schedulers on one database), a failed period is retried by the next tick, and each run's start, end,
status, counts and error are kept for the operations page."""

from __future__ import annotations

import os
import socket
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from arena.store.engine import session_scope
from arena.store.tables import JobRunRow

RUNNER = f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class JobOutcome:
    job: str
    period_key: str
    status: str  # ok, failed, skipped (another run has this period)
    counts: dict[str, Any]
    error: str = ""


def claim(engine: Engine, job: str, period_key: str, now: datetime) -> bool:
    """Claim `job` for `period_key`. True if this caller should run it: a fresh claim, or the retry of a
    failed run of the same period. False when the period is done or being run elsewhere."""
    try:
        with session_scope(engine) as s:
            s.add(JobRunRow(job=job, period_key=period_key, status="running", started_at=now, runner=RUNNER))
        return True
    except IntegrityError:
        pass
    with session_scope(engine) as s:
        # Only one claimant can flip a failed run back to running: the UPDATE is conditional on its status.
        res = s.execute(
            update(JobRunRow)
            .where(JobRunRow.job == job, JobRunRow.period_key == period_key,  # type: ignore[arg-type]
                   JobRunRow.status == "failed")
            .values(status="running", started_at=now, finished_at=None, error="", runner=RUNNER,
                    attempts=JobRunRow.attempts + 1)
        )
        return res.rowcount == 1


def finish(engine: Engine, job: str, period_key: str, now: datetime, status: str,
           counts: dict[str, Any] | None = None, error: str = "") -> None:
    with session_scope(engine) as s:
        s.execute(
            update(JobRunRow)
            .where(JobRunRow.job == job, JobRunRow.period_key == period_key)  # type: ignore[arg-type]
            .values(status=status, finished_at=now, counts=counts or {}, error=error[:20_000])
        )


def run_once(engine: Engine, job: str, period_key: str, clock: Any,
             body: Callable[[], dict[str, Any] | None]) -> JobOutcome:
    """Run `body` for (`job`, `period_key`) if it can be claimed, recording the outcome. `body` writes in its
    own transactions; if it raises, its transaction has rolled back and the run is recorded as failed."""
    if not claim(engine, job, period_key, clock.now()):
        return JobOutcome(job, period_key, "skipped", {})
    try:
        counts = body() or {}
    except Exception as exc:  # the one boundary where a job's error is recorded and the scheduler moves on
        err = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}"
        finish(engine, job, period_key, clock.now(), "failed", error=err)
        return JobOutcome(job, period_key, "failed", {}, err)
    counts = {k: _jsonable(v) for k, v in counts.items()}
    finish(engine, job, period_key, clock.now(), "ok", counts)
    return JobOutcome(job, period_key, "ok", counts)


def recent_runs(engine: Engine, limit: int = 200) -> list[JobRunRow]:
    with Session(engine) as s:
        return list(s.scalars(select(JobRunRow).order_by(JobRunRow.started_at.desc(), JobRunRow.id.desc())
                              .limit(limit)))


def _jsonable(v: Any) -> Any:
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return str(v)
