"""Job: mark every open cohort to market once per marking period (daily by default)."""

from arena.usecases.mark import mark_to_market
from arena.ops.operations import JobOutcome, run_once
from arena.jobs.runtime import current, floor_to

NAME = "mark"


def run() -> JobOutcome:
    rt = current()
    as_of = floor_to(rt.clock.now(), rt.mark_every)  # the period's start: a second run writes nothing new

    def body() -> dict:
        c = mark_to_market(rt.engine, as_of)
        return {"agents": c.agents, "positions": c.positions, "unpriced": c.unpriced,
                "snapshots": c.snapshots_written}

    return run_once(rt.engine, NAME, as_of.isoformat(), rt.clock, body, lease=rt.lease())
