"""Job: settle positions in resolved markets (and reverse re-resolved ones), then complete finished cohorts."""

from datetime import timedelta

from arena.ops.operations import JobOutcome, run_once
from arena.usecases.settle import complete_cohorts, settle_resolved
from arena.jobs.runtime import current, floor_to

NAME = "settle"


def run() -> JobOutcome:
    rt = current()
    now = rt.clock.now()

    def body() -> dict:
        c = settle_resolved(rt.engine, now)
        done = complete_cohorts(rt.engine, now)
        return {"settled": c.settled, "refunded": c.refunded, "reversed": c.reversed, "markets": c.markets,
                "completed_cohorts": done}

    return run_once(rt.engine, NAME, floor_to(now, timedelta(hours=1)).isoformat(), rt.clock, body, lease=rt.lease())
