"""Job: daily online backup of the database, keeping the newest N copies."""

from datetime import timedelta

from arena.ops.backup import backup
from arena.ops.operations import JobOutcome, run_once
from arena.jobs.runtime import current, floor_to

NAME = "backup"


def run() -> JobOutcome:
    rt = current()
    now = rt.clock.now()
    return run_once(rt.engine, NAME, floor_to(now, timedelta(days=1)).date().isoformat(), rt.clock,
                    lambda: backup(rt.engine, now, rt.backup_dir, rt.backup_keep), lease=rt.lease())
