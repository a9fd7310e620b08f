"""The scheduler: APScheduler 3 with its job store in the arena's own database, one stable job id per job.

Every job coalesces missed runs into one, never runs twice at once (max_instances=1), has a misfire grace
time, and is idempotent per period through `arena.services.operations` (so even a second scheduler on the
same database does not repeat a period). After sync, mark, settle and the decision round the site is
rendered again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED, JobExecutionEvent
from apscheduler.executors.debug import DebugExecutor
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.base import BaseScheduler
from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from jobs.runtime import Runtime

JOBSTORE_TABLE = "apscheduler_jobs"


@dataclass(frozen=True)
class JobSpec:
    id: str
    func: str  # textual reference: the job store keeps references, not objects
    trigger: Any
    misfire_grace: int  # seconds a late run is still run (then coalesced into one)
    renders: bool  # the site is rendered after it


def job_specs(runtime: Runtime, schedule: dict[str, Any] | None = None) -> list[JobSpec]:
    """The arena's jobs with their default schedules (UTC); `schedule` overrides triggers by job id with
    cron strings ("0 0 * * sun") or {"minutes": 15} intervals."""
    utc = "UTC"
    mark_minutes = max(1, int(runtime.mark_every.total_seconds() // 60))
    mark_trigger = (CronTrigger(hour=0, minute=0, timezone=utc) if runtime.mark_every == timedelta(days=1)
                    else IntervalTrigger(minutes=mark_minutes, timezone=utc))
    # Grace just under each job's period: a scheduler that was down still runs the latest missed period
    # once (coalesced) when it comes back, but a run is never so late that it overlaps the next one.
    mark_grace = max(60, min(12 * 3600, int(runtime.mark_every.total_seconds()) - 60))
    specs = [
        JobSpec("sync", "jobs.sync:run", IntervalTrigger(minutes=15, timezone=utc), 600, True),
        JobSpec("cohort_start", "jobs.cohort_start:run",
                CronTrigger(day_of_week="sun", hour=0, minute=0, timezone=utc), 6 * 3600, False),
        JobSpec("decision_round", "jobs.decision_round:run",
                CronTrigger(day_of_week="sun", hour=0, minute=5, timezone=utc), 6 * 3600, True),
        JobSpec("mark", "jobs.mark:run", mark_trigger, mark_grace, True),
        JobSpec("settle", "jobs.settle:run", CronTrigger(minute=0, timezone=utc), 3540, True),
        JobSpec("backup", "jobs.backup:run", CronTrigger(hour=3, minute=30, timezone=utc), 6 * 3600, False),
    ]
    overrides = schedule or {}
    out = []
    for spec in specs:
        if spec.id in overrides:
            spec = JobSpec(spec.id, spec.func, trigger_from(overrides[spec.id]), spec.misfire_grace, spec.renders)
        out.append(spec)
    return out


def trigger_from(value: Any) -> Any:
    if isinstance(value, str):
        return CronTrigger.from_crontab(value, timezone="UTC")
    if isinstance(value, dict):
        return IntervalTrigger(timezone="UTC", **{k: int(v) for k, v in value.items()})
    raise ValueError(f"schedule must be a crontab string or an interval table, got {value!r}")


class ManualScheduler(BaseScheduler):
    """A scheduler that processes due jobs only when `tick()` is called: for tests with an injected clock
    and for `arena jobs list`. Jobs run inline (DebugExecutor)."""

    def start(self, paused: bool = False) -> None:  # type: ignore[override]
        super().start(paused=paused)

    def shutdown(self, wait: bool = True) -> None:
        super().shutdown(wait)

    def wakeup(self) -> None:  # nothing to wake: ticks are explicit
        pass

    def tick(self) -> float | None:
        return self._process_jobs()


def build_scheduler(runtime: Runtime, *, manual: bool = False, schedule: dict[str, Any] | None = None,
                    on_event: Callable[[JobExecutionEvent], None] | None = None,
                    only: Iterable[str] | None = None) -> BaseScheduler:
    """A scheduler whose job store lives in the arena's database, with every arena job (or those named in
    `only`) registered under its stable id."""
    jobstore = SQLAlchemyJobStore(engine=runtime.engine, tablename=JOBSTORE_TABLE)
    executor = DebugExecutor() if manual else ThreadPoolExecutor(max_workers=2)
    cls = ManualScheduler if manual else BlockingScheduler
    scheduler = cls(
        jobstores={"default": jobstore},
        executors={"default": executor},
        job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": 600},
        timezone="UTC",
    )
    specs = {s.id: s for s in job_specs(runtime, schedule) if only is None or s.id in set(only)}
    for spec in specs.values():
        scheduler.add_job(spec.func, spec.trigger, id=spec.id, name=spec.id, replace_existing=True,
                          coalesce=True, max_instances=1, misfire_grace_time=spec.misfire_grace)

    def after(event: JobExecutionEvent) -> None:
        spec = specs.get(event.job_id)
        if spec is not None and spec.renders and event.exception is None:
            from jobs import render

            render.run(after=spec.id)
        if on_event is not None:
            on_event(event)

    scheduler.add_listener(after, EVENT_JOB_EXECUTED | EVENT_JOB_ERROR)
    return scheduler


JOB_MODULES = {
    "sync": "jobs.sync",
    "cohort_start": "jobs.cohort_start",
    "decision_round": "jobs.decision_round",
    "mark": "jobs.mark",
    "settle": "jobs.settle",
    "backup": "jobs.backup",
    "render": "jobs.render",
}


def run_now(name: str) -> Any:
    """Run one job now (`arena jobs run NAME`), through the same claim-and-record path as the scheduler."""
    import importlib

    if name not in JOB_MODULES:
        raise KeyError(f"unknown job {name!r}; jobs: {', '.join(JOB_MODULES)}")
    return importlib.import_module(JOB_MODULES[name]).run()
