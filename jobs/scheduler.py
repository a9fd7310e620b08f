"""The scheduler: APScheduler 3 with its job store in the arena's own database, one stable job id per job.

Every job coalesces missed runs into one, never runs twice at once (max_instances=1), has a misfire grace
time, and is idempotent per period through `arena.ops.operations` (so even a second scheduler on the
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

from arena.jobs import JOBS
from arena.jobs.runtime import Runtime

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
    # Grace just under each job's period: a scheduler that was down still runs the latest missed period
    # once (coalesced) when it comes back, but a run is never so late that it overlaps the next one.
    mark_grace = max(60, min(12 * 3600, int(runtime.mark_every.total_seconds()) - 60))
    specs = []
    for job in JOBS.values():
        if not job.scheduled or job.trigger is None:
            continue
        kind, fields = job.trigger
        trigger = CronTrigger(timezone=utc, **fields) if kind == "cron" else IntervalTrigger(timezone=utc, **fields)
        grace = job.misfire_grace
        if job.id == "mark" and runtime.mark_every != timedelta(days=1):  # the configured mark period
            trigger, grace = IntervalTrigger(minutes=mark_minutes, timezone=utc), mark_grace
        specs.append(JobSpec(job.id, f"{job.module}:run", trigger, grace, job.renders))
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
                    only: Iterable[str] | None = None, log: Callable[[str], None] | None = None) -> BaseScheduler:
    """A scheduler whose job store lives in the arena's database, with every arena job (or those named in
    `only`) registered under its stable id. `log` gets one line when a job starts and one when it ends (its
    outcome, counts and next run)."""
    jobstore = SQLAlchemyJobStore(engine=runtime.engine, tablename=JOBSTORE_TABLE)
    executor = (_LoggedDebugExecutor(log) if manual else _LoggedThreadPoolExecutor(log, max_workers=2)) if log \
        else (DebugExecutor() if manual else ThreadPoolExecutor(max_workers=2))
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
        changed = getattr(event.retval, "status", "ok") != "skipped"  # a skipped tick changed nothing
        if log is not None:
            log(ended_line(scheduler, event))
        if spec is not None and spec.renders and event.exception is None and changed:
            from arena.jobs import render

            out = render.run(after=spec.id)
            if log is not None:
                log(f"{_stamp()} render after {spec.id}: {out.status} {_counts(out.counts)}{_err(out.error)}")
        if on_event is not None:
            on_event(event)

    scheduler.add_listener(after, EVENT_JOB_EXECUTED | EVENT_JOB_ERROR)
    return scheduler


class _StartLogging:
    """An executor that logs a job's start as it is handed the job (APScheduler has no "started" event: its
    "submitted" event is dispatched after an inline executor has already finished the job)."""

    def __init__(self, log: Callable[[str], None], **kw: Any) -> None:
        super().__init__(**kw)  # type: ignore[call-arg]
        self._log = log

    def submit_job(self, job: Any, run_times: list) -> None:
        self._log(f"{_stamp()} {job.id}: started (due {max(run_times):%Y-%m-%d %H:%M:%S})")
        super().submit_job(job, run_times)  # type: ignore[misc]


class _LoggedDebugExecutor(_StartLogging, DebugExecutor):
    pass


class _LoggedThreadPoolExecutor(_StartLogging, ThreadPoolExecutor):
    pass


def _stamp() -> str:
    from datetime import datetime, timezone

    return f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M:%S}"


def _counts(counts: Any) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted((counts or {}).items())) if isinstance(counts, dict) else ""


def _err(error: str) -> str:
    return f" — {error.splitlines()[0]}" if error else ""


def ended_line(scheduler: BaseScheduler, event: JobExecutionEvent) -> str:
    """One line for a finished job: its outcome (ok, failed, skipped), counts or error, and its next run."""
    job = scheduler.get_job(event.job_id)
    nxt_time = job.next_run_time if job is not None else None
    if job is not None and (nxt_time is None or nxt_time <= event.scheduled_run_time):
        # an inline executor reports before the scheduler has moved the job on: ask its trigger
        nxt_time = job.trigger.get_next_fire_time(event.scheduled_run_time, event.scheduled_run_time)
    nxt = f"{nxt_time:%Y-%m-%d %H:%M:%S}" if nxt_time else "none"
    if event.exception is not None:
        what = f"crashed — {type(event.exception).__name__}: {event.exception}"
    else:
        out = event.retval
        status = getattr(out, "status", "done")
        what = f"{status} {_counts(getattr(out, 'counts', {}))}{_err(getattr(out, 'error', ''))}".rstrip()
    return f"{_stamp()} {event.job_id}: {what}; next run {nxt} UTC"


JOB_MODULES = {name: job.module for name, job in JOBS.items()}  # name → the module whose run() is the job


def run_now(name: str) -> Any:
    """Run one job now (`arena jobs run NAME`), through the same claim-and-record path as the scheduler."""
    import importlib

    if name not in JOB_MODULES:
        raise KeyError(f"unknown job {name!r}; jobs: {', '.join(JOB_MODULES)}")
    return importlib.import_module(JOB_MODULES[name]).run()
