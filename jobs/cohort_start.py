"""Job: open this week's cohort (Sunday 00:00 UTC) with the configured lineup and rules, frozen."""

from arena.config import default_config
from arena.usecases.cohorts import week_start
from arena.usecases.lifecycle import check_universe, start_current_cohort
from arena.ops.operations import JobOutcome, run_once
from arena.jobs.runtime import current

NAME = "cohort_start"


def run() -> JobOutcome:
    rt = current()
    now = rt.clock.now()

    def body() -> dict:
        # The size of the universe it opened on is recorded (and logged): 0 means a sync was missing.
        universe = check_universe(rt.engine, now).size
        name, created = start_current_cohort(rt.engine, now, rt.config or default_config())
        return {"cohort": name, "created": created, "universe": universe}

    return run_once(rt.engine, NAME, week_start(now).date().isoformat(), rt.clock, body, lease=rt.lease())
