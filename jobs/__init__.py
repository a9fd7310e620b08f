"""Scheduled jobs: thin wiring from APScheduler 3 to the arena's services, one module per job — and the job
registry every reader shares: the config (which `[schedule]` keys exist), the scheduler (ids, default
triggers, grace, whether the site is rendered after), the simulated clock and the CLI (names and choices).

Pure data, no imports: reading it costs nothing. A default trigger is ("cron", fields) or ("interval", fields),
APScheduler's own trigger arguments, in UTC; the `mark` job's default follows the runtime's mark period
instead (see `arena.jobs.scheduler.job_specs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Job:
    id: str
    module: str  # its `run()` is the job
    trigger: tuple[str, dict[str, Any]] | None  # default schedule; None: only run by hand or after other jobs
    misfire_grace: int = 0  # seconds a late run is still run (then coalesced into one)
    renders: bool = False  # the site is rendered after it
    scheduled: bool = True  # False: not on the scheduler's table (render runs after the others)


JOBS: dict[str, Job] = {j.id: j for j in (
    Job("sync", "arena.jobs.sync", ("interval", {"minutes": 15}), 600, True),
    Job("cohort_start", "arena.jobs.cohort_start", ("cron", {"day_of_week": "sun", "hour": 0, "minute": 0}), 6 * 3600),
    # hourly: the week's first tick decides; later ticks resume stranded claims and retry failed decisions
    Job("decision_round", "arena.jobs.decision_round", ("cron", {"minute": 5}), 3300, True),
    Job("mark", "arena.jobs.mark", ("cron", {"hour": 0, "minute": 0}), 12 * 3600, True),
    Job("settle", "arena.jobs.settle", ("cron", {"minute": 0}), 3540, True),
    Job("backup", "arena.jobs.backup", ("cron", {"hour": 3, "minute": 30}), 6 * 3600),
    Job("compact", "arena.jobs.compact", ("cron", {"hour": 4, "minute": 10}), 6 * 3600),
    Job("render", "arena.jobs.render", None, scheduled=False),
)}
SCHEDULED_JOBS = tuple(j for j, spec in JOBS.items() if spec.scheduled)  # the keys of the config's [schedule]
JOB_NAMES = tuple(JOBS)  # what `arena jobs run` accepts

__all__ = ["JOBS", "JOB_NAMES", "SCHEDULED_JOBS", "Job"]
