"""The scheduler's plan: each job's trigger (the registry's default, the configured override, the mark period),
in words ("daily at 03:30 UTC", "every 15 minutes", "hourly at :05", "Sundays at 00:00 UTC") and with its next
run — for `arena scheduler` (printed before anything else happens) and `arena jobs list`.

Light on purpose: APScheduler's triggers and the job registry only, so the plan is on screen before the store is
opened or the services imported."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from arena.jobs import JOBS

UTC = "UTC"
DAYS = {"mon": "Mondays", "tue": "Tuesdays", "wed": "Wednesdays", "thu": "Thursdays", "fri": "Fridays",
        "sat": "Saturdays", "sun": "Sundays", "0": "Mondays", "1": "Tuesdays", "2": "Wednesdays", "3": "Thursdays",
        "4": "Fridays", "5": "Saturdays", "6": "Sundays"}
RENDERS_AFTER = tuple(j.id for j in JOBS.values() if j.renders)


@dataclass(frozen=True)
class Planned:
    id: str
    trigger: Any  # an APScheduler trigger
    misfire_grace: int
    renders: bool  # the site is rendered after it


def trigger_from(value: Any) -> Any:
    """A configured schedule: a crontab string ("0 0 * * sun") or an interval table ({"minutes": 15})."""
    if isinstance(value, str):
        return CronTrigger.from_crontab(value, timezone=UTC)
    if isinstance(value, dict):
        return IntervalTrigger(timezone=UTC, **{k: int(v) for k, v in value.items()})
    raise ValueError(f"schedule must be a crontab string or an interval table, got {value!r}")


def planned_jobs(mark_every: timedelta = timedelta(days=1), schedule: dict[str, Any] | None = None) -> list[Planned]:
    """The scheduled jobs with their triggers: the registry's defaults (UTC), the mark job at `mark_every` when
    that is not a day, and `schedule` overriding triggers by job id."""
    mark_minutes = max(1, int(mark_every.total_seconds() // 60))
    # Grace just under each job's period: a scheduler that was down still runs the latest missed period
    # once (coalesced) when it comes back, but a run is never so late that it overlaps the next one.
    mark_grace = max(60, min(12 * 3600, int(mark_every.total_seconds()) - 60))
    overrides = schedule or {}
    out = []
    for job in JOBS.values():
        if not job.scheduled or job.trigger is None:
            continue
        kind, fields = job.trigger
        trigger = CronTrigger(timezone=UTC, **fields) if kind == "cron" else IntervalTrigger(timezone=UTC, **fields)
        grace = job.misfire_grace
        if job.id == "mark" and mark_every != timedelta(days=1):  # the configured mark period
            trigger, grace = IntervalTrigger(minutes=mark_minutes, timezone=UTC), mark_grace
        if job.id in overrides:
            trigger = trigger_from(overrides[job.id])
        out.append(Planned(job.id, trigger, grace, job.renders))
    return out


def _plural(n: int, unit: str) -> str:
    return f"{unit}" if n == 1 else f"{n} {unit}s"


def describe(trigger: Any) -> str:
    """A trigger in words: "every 15 minutes", "hourly at :05", "daily at 03:30 UTC", "Sundays at 00:00 UTC";
    a cron pattern with no simpler name is given in crontab form."""
    if isinstance(trigger, IntervalTrigger):
        seconds = int(trigger.interval.total_seconds())
        for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute")):
            if seconds % size == 0:
                return f"every {_plural(seconds // size, unit)}"
        return f"every {_plural(seconds, 'second')}"
    if isinstance(trigger, CronTrigger):
        f = {field.name: str(field) for field in trigger.fields}
        rest_default = all(f[k] == "*" for k in ("year", "month", "day", "week"))
        simple = lambda k: f[k].isdigit()  # noqa: E731
        if rest_default and f["second"] == "0" and simple("minute"):
            minute = int(f["minute"])
            if f["hour"] == "*" and f["day_of_week"] == "*":
                return f"hourly at :{minute:02d}"
            if simple("hour"):
                at = f"{int(f['hour']):02d}:{minute:02d} UTC"
                if f["day_of_week"] == "*":
                    return f"daily at {at}"
                if f["day_of_week"] in DAYS:
                    return f"{DAYS[f['day_of_week']]} at {at}"
        cron = " ".join(f[k] for k in ("minute", "hour", "day", "month", "day_of_week"))
        return f"cron '{cron}' (minute hour day month weekday, UTC)"
    return str(trigger)


def next_run(trigger: Any, now: datetime) -> datetime | None:
    return trigger.get_next_fire_time(None, now)


def period_of(trigger: Any, now: datetime) -> timedelta:
    """The time between two runs of `trigger` around `now` (the two next fire times apart)."""
    first = trigger.get_next_fire_time(None, now)
    second = trigger.get_next_fire_time(first, first + timedelta(seconds=1)) if first is not None else None
    return (second - first) if first is not None and second is not None else timedelta(days=1)


def plan_lines(jobs: list[Planned], now: datetime, site: bool) -> list[str]:
    """One line per job: its id, its trigger in words and its next run; then the render job."""
    lines = []
    for p in sorted(jobs, key=lambda p: (next_run(p.trigger, now) or now.max.replace(tzinfo=now.tzinfo), p.id)):
        nxt = next_run(p.trigger, now)
        when = f"next {nxt:%Y-%m-%d %H:%M} UTC" if nxt is not None else "never"
        lines.append(f"  {p.id:<15} {describe(p.trigger):<24} {when}")
    after = ", ".join(j for j in RENDERS_AFTER)
    lines.append(f"  {'render':<15} {'after ' + after:<24} "
                 + ("into the site directory" if site else "off (no --site)"))
    return lines


__all__ = ["Planned", "RENDERS_AFTER", "describe", "next_run", "period_of", "plan_lines", "planned_jobs",
           "trigger_from"]
