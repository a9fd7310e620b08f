"""Job: the weekly decision round for the newest K open cohorts (Sunday 00:05 UTC)."""

from collections import Counter

from arena.config import default_config
from arena.services.cohorts import week_start
from arena.services.lifecycle import decision_round
from arena.services.operations import JobOutcome, run_once
from jobs.runtime import current

NAME = "decision_round"


def run() -> JobOutcome:
    rt = current()
    now = rt.clock.now()

    def body() -> dict:
        rounds = decision_round(rt.engine, now, rt.config or default_config(), rt.environ,
                                books=rt.books)
        return {c: dict(Counter(o.status for o in outs)) for c, outs in rounds.items()}

    return run_once(rt.engine, NAME, week_start(now).date().isoformat(), rt.clock, body)
