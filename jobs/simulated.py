"""The scheduler's job table fired on a simulated clock: what `arena replay run` drives through months of
recorded markets in minutes.

APScheduler's own loop reads the wall clock (`datetime.now`) to decide what is due and whether a run misfired,
so it cannot be driven through simulated time without patching its modules. This walks the *same* job table
instead (`arena.jobs.scheduler.job_specs`: the same ids, triggers, job functions and site renders) using only the
triggers' public `get_next_fire_time`: the runtime's clock is set to each fire time in order (ties in job-table
order, so a sync at Sunday 00:00 comes before that minute's cohort start) and the job is called through the
same `run_once` claim as under `arena scheduler`. Nothing is ever missed, so nothing is coalesced.

Event-driven ticks: the settle job acts only on facts other jobs write (resolutions, fills) and on a cohort's
decision window ending, and its run does all there is to do at once. So once a settle run has found nothing to
do, its following ticks are not fired until another job has run (any run that was not skipped) or an open
cohort's window ends — a tick in between would find nothing either. Likewise the hourly decision round comes back
within its week only for stranded claims and failed decisions: once the week's run is done (ok) and no cohort
has started since, its later ticks in that week are not fired (a simulated run owns its store: no other runner
leaves claims behind). The facts written are the same as firing every tick (`every_tick=True`, which the tests
compare with), minus the empty settle job runs; the run's cost grows with what happens, not with the hours.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from apscheduler.triggers.interval import IntervalTrigger
from apscheduler.util import ref_to_obj

from arena.clock import FixedClock
from arena.jobs.runtime import Runtime
from arena.jobs.scheduler import JobSpec, job_specs


@dataclass
class SimulatedRun:
    """What a simulated run fired: runs by (job, status), renders, simulated days and the last job outcomes."""

    runs: Counter = field(default_factory=Counter)
    idle_ticks: int = 0  # ticks not fired: a settle with nothing to settle, a decision round of a week done
    renders: int = 0
    days: int = 0
    failures: list[str] = field(default_factory=list)  # "job [period]: error" of failed runs
    last: dict[str, Any] = field(default_factory=dict)  # job id → its latest JobOutcome


def first_fire(spec: JobSpec, start: datetime) -> datetime | None:
    """The first fire time at or after `start`. An interval trigger's anchor is the wall-clock time it was built
    at, meaningless in simulated time, so interval jobs are anchored at `start` (they run first thing, as a
    freshly started scheduler's sync does soon after start-up)."""
    if isinstance(spec.trigger, IntervalTrigger):
        return start
    return spec.trigger.get_next_fire_time(None, start)


def run_simulated(runtime: Runtime, clock: FixedClock, start: datetime, until: datetime, *,
                  schedule: dict[str, Any] | None = None, only: Iterable[str] | None = None,
                  on_fire: Callable[[str, datetime, Any], None] | None = None,
                  on_day: Callable[[datetime, SimulatedRun], None] | None = None,
                  every_tick: bool = False, feed: Callable[[datetime], int] | None = None,
                  stop: Callable[[], bool] | None = None) -> SimulatedRun:
    """Fire every job of the table whose fire time t satisfies start <= t <= until, in time order, with
    `clock` set to t (the runtime must read that clock). After the jobs that change what the site shows, the
    site is rendered once per simulated day (and once at the end) when the runtime has a site directory —
    the same render the scheduler runs after each such job, coalesced because nobody looks in between.
    Ticks that could only find nothing are not fired unless `every_tick` (see the module docstring).

    `feed(t)`, when given, is called before each tick at t to write the facts the run replays rather than syncs
    (a fork's recorded market path); a tick after it wrote anything counts as new work for the settle job.
    `stop()`, when given, is asked after each fired job: True ends the run there (e.g. once a cohort completed)."""
    from arena.jobs.decision_round import period_of
    from arena.usecases.settle import next_window_end

    if runtime.clock is not clock:
        raise ValueError("the runtime must read the simulated clock")
    wanted = set(only) if only is not None else None
    specs = [s for s in job_specs(runtime, schedule) if wanted is None or s.id in wanted]
    report = SimulatedRun()
    heap: list[tuple[datetime, int, JobSpec]] = []
    for order, spec in enumerate(specs):
        t = first_fire(spec, start)
        if t is not None:
            heap.append((t, order, spec))
    heapq.heapify(heap)
    funcs = {s.id: ref_to_obj(s.func) for s in specs}
    day = start.date()
    render_due: tuple[str, datetime] | None = None
    settle_idle = False  # the last settle run found nothing and no other job has run since
    window_due: datetime | None = None  # the next decision-window end of an open cohort, when settle is idle
    round_done: str | None = None  # the week whose decision round is done, while no cohort has started since

    def render(after: str, at: datetime) -> None:
        from arena.jobs import render as render_job

        clock.set(at)
        report.runs[("render", render_job.run(after=after).status)] += 1
        report.renders += 1

    while heap and heap[0][0] <= until:
        t, order, spec = heapq.heappop(heap)
        if t.date() != day:
            if render_due is not None and runtime.site_dir is not None:
                render(*render_due)
            render_due = None
            report.days += (t.date() - day).days
            if on_day is not None:
                on_day(datetime.combine(day, datetime.min.time(), tzinfo=t.tzinfo), report)
            day = t.date()
        if feed is not None and feed(t):
            settle_idle = False
        idle = (settle_idle and (window_due is None or t < window_due) if spec.id == "settle"
                else round_done == period_of(t) if spec.id == "decision_round" else False)
        if idle and not every_tick:
            report.idle_ticks += 1
            _push_next(heap, spec, order, t)
            continue
        clock.set(t)
        outcome = funcs[spec.id]()
        if spec.id == "settle":
            settle_idle = outcome.status == "ok" and not any(outcome.counts.get(k) for k in SETTLE_WORK)
            window_due = next_window_end(runtime.engine, t) if settle_idle else None
        elif outcome.status != "skipped":
            settle_idle = False
        if spec.id == "decision_round":
            round_done = outcome.period_key if outcome.status in ("ok", "skipped") else None
        elif spec.id == "cohort_start" and outcome.status == "ok":
            round_done = None
        report.runs[(spec.id, outcome.status)] += 1
        report.last[spec.id] = outcome
        if outcome.status == "failed":
            report.failures.append(f"{spec.id} [{outcome.period_key}]: {outcome.error.splitlines()[0]}")
        if spec.renders and outcome.status == "ok":
            render_due = (spec.id, t)
        if on_fire is not None:
            on_fire(spec.id, t, outcome)
        _push_next(heap, spec, order, t)
        if stop is not None and stop():
            until = t
            break
    if render_due is not None and runtime.site_dir is not None:
        render(*render_due)
    clock.set(until)
    report.days += 1
    if on_day is not None:
        on_day(datetime.combine(day, datetime.min.time(), tzinfo=until.tzinfo), report)
    return report


SETTLE_WORK = ("settled", "refunded", "reversed", "completed_cohorts")  # a settle run's counts of work done


def _push_next(heap: list[tuple[datetime, int, JobSpec]], spec: JobSpec, order: int, t: datetime) -> None:
    nxt = spec.trigger.get_next_fire_time(t, t)
    if nxt is not None:
        heapq.heappush(heap, (nxt, order, spec))


REPLAY_SYNC = "0 0 * * *"  # a replay file has one price per day, visible from 00:00 UTC


def replay_schedule(overrides: dict[str, Any] | None) -> dict[str, Any]:
    """The schedule of a replay run: the configured overrides, except that the replay is synced when its data
    changes (daily at 00:00 UTC) — syncing it every 15 minutes would write nothing new, 96 times a day."""
    out = dict(overrides or {})
    out["sync"] = REPLAY_SYNC
    return out



__all__ = ["REPLAY_SYNC", "SimulatedRun", "first_fire", "replay_schedule", "run_simulated"]
