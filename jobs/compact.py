"""Job: daily snapshot compaction (retention policy in arena/ops/compaction.py) and partitions ahead."""

from datetime import timedelta

from arena.ops.compaction import compact_snapshots
from arena.ops.operations import JobOutcome, run_once
from arena.jobs.runtime import current, floor_to

NAME = "compact"


def run() -> JobOutcome:
    rt = current()
    now = rt.clock.now()

    def body() -> dict:
        r = compact_snapshots(rt.engine, now)
        return {"deleted": r.deleted, "kept_used": r.kept_used, "partitions_created": r.partitions_created}

    return run_once(rt.engine, NAME, floor_to(now, timedelta(days=1)).date().isoformat(), rt.clock, body)
