"""The scheduler's job table fired on a simulated clock: what `arena replay run` drives through months of
recorded markets in minutes.

APScheduler's own loop reads the wall clock (`datetime.now`) to decide what is due and whether a run misfired,
so it cannot be driven through simulated time without patching its modules. This walks the *same* job table
instead (`arena.jobs.scheduler.job_specs`: the same ids, triggers, job functions and site renders) using only the
triggers' public `get_next_fire_time`: the runtime's clock is set to each fire time in order (ties in job-table
order, so a sync at Sunday 00:00 comes before that minute's cohort start) and the job is called through the
same `run_once` claim as under `arena scheduler`. Nothing is ever missed, so nothing is coalesced.
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
                  on_day: Callable[[datetime, SimulatedRun], None] | None = None) -> SimulatedRun:
    """Fire every job of the table whose fire time t satisfies start <= t <= until, in time order, with
    `clock` set to t (the runtime must read that clock). After the jobs that change what the site shows, the
    site is rendered once per simulated day (and once at the end) when the runtime has a site directory —
    the same render the scheduler runs after each such job, coalesced because nobody looks in between."""
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
        clock.set(t)
        outcome = funcs[spec.id]()
        report.runs[(spec.id, outcome.status)] += 1
        report.last[spec.id] = outcome
        if outcome.status == "failed":
            report.failures.append(f"{spec.id} [{outcome.period_key}]: {outcome.error.splitlines()[0]}")
        if spec.renders and outcome.status == "ok":
            render_due = (spec.id, t)
        if on_fire is not None:
            on_fire(spec.id, t, outcome)
        nxt = spec.trigger.get_next_fire_time(t, t)
        if nxt is not None:
            heapq.heappush(heap, (nxt, order, spec))
    if render_due is not None and runtime.site_dir is not None:
        render(*render_due)
    clock.set(until)
    report.days += 1
    if on_day is not None:
        on_day(datetime.combine(day, datetime.min.time(), tzinfo=until.tzinfo), report)
    return report


REPLAY_SYNC = "0 0 * * *"  # a replay file has one price per day, visible from 00:00 UTC


def replay_schedule(overrides: dict[str, Any] | None) -> dict[str, Any]:
    """The schedule of a replay run: the configured overrides, except that the replay is synced when its data
    changes (daily at 00:00 UTC) — syncing it every 15 minutes would write nothing new, 96 times a day."""
    out = dict(overrides or {})
    out["sync"] = REPLAY_SYNC
    return out



__all__ = ["REPLAY_SYNC", "SimulatedRun", "first_fire", "replay_schedule", "run_simulated"]
