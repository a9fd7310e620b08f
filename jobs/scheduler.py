"""The scheduler: APScheduler 3 with its job store in the arena's own database, one stable job id per job.

Every job coalesces missed runs into one, never runs twice at once (max_instances=1), has a misfire grace
time, and is idempotent per period through `arena.ops.operations` (so even a second scheduler on the
same database does not repeat a period). After sync, mark, settle and the decision round the site is
rendered again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED, JobExecutionEvent
from apscheduler.executors.debug import DebugExecutor
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.base import BaseScheduler
from apscheduler.schedulers.blocking import BlockingScheduler

from arena.jobs import JOBS
from arena.jobs.plan import planned_jobs, trigger_from  # noqa: F401  (trigger_from: re-exported)
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
    cron strings ("0 0 * * sun") or {"minutes": 15} intervals (`arena.jobs.plan`, which also says them in words)."""
    return [JobSpec(p.id, f"{JOBS[p.id].module}:run", p.trigger, p.misfire_grace, p.renders)
            for p in planned_jobs(runtime.mark_every, schedule)]


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
                    only: Iterable[str] | None = None, log: Callable[[str], None] | None = None,
                    run_now: Iterable[str] = (), now: datetime | None = None) -> BaseScheduler:
    """A scheduler whose job store lives in the arena's database, with every arena job (or those named in
    `only`) registered under its stable id. `log` gets one line when a job starts and one when it ends (its
    outcome, counts and next run). The jobs named in `run_now` are due at `now` (a catch-up at start; "render"
    may be named: a one-off render); the others at their trigger's next fire time."""
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
    immediate = set(run_now)
    for spec in specs.values():
        due = {"next_run_time": now} if spec.id in immediate and now is not None else {}
        scheduler.add_job(spec.func, spec.trigger, id=spec.id, name=spec.id, replace_existing=True,
                          coalesce=True, max_instances=1, misfire_grace_time=spec.misfire_grace, **due)
    if "render" in immediate and now is not None:
        scheduler.add_job(f"{JOBS['render'].module}:run", "date", run_date=now, id="render", name="render",
                          replace_existing=True, misfire_grace_time=3600)

    def after(event: JobExecutionEvent) -> None:
        spec = specs.get(event.job_id)
        changed = getattr(event.retval, "status", "ok") != "skipped"  # a skipped tick changed nothing
        if log is not None:
            log(ended_line(scheduler, event))
        if spec is not None and spec.renders and event.exception is None and changed:
            from arena.jobs import render

            out = render.run(after=spec.id)
            if log is not None:
                log(f"{_stamp()} render after {spec.id}: {out.status}"
                    f"{_say('render', out.counts)}{_err(out.error)}")
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


def _say(job: str, counts: Any) -> str:
    from arena.jobs.sentences import counts_sentence

    text = counts_sentence(job, counts)
    return f" — {text}" if text else ""


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
        what = f"{status}{_say(event.job_id, getattr(out, 'counts', {}))}{_err(getattr(out, 'error', ''))}"
    return f"{_stamp()} {event.job_id}: {what}; next run {nxt} UTC"


JOB_MODULES = {name: job.module for name, job in JOBS.items()}  # name → the module whose run() is the job


def run_now(name: str) -> Any:
    """Run one job now (`arena jobs run NAME`), through the same claim-and-record path as the scheduler."""
    import importlib

    if name not in JOB_MODULES:
        raise KeyError(f"unknown job {name!r}; jobs: {', '.join(JOB_MODULES)}")
    return importlib.import_module(JOB_MODULES[name]).run()
