"""Job: sync the configured venues' markets, prices and resolutions (every 15 minutes by default)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from arena.config import default_config
from arena.usecases import venue_registry
from arena.ops.operations import JobOutcome, run_once
from arena.jobs.runtime import Runtime, current, floor_to

NAME = "sync"


def client_for(rt: Runtime, venue: str) -> Any:
    """The runtime's client of `venue` (built once, through the venue registry, unless one was injected)."""
    if venue not in rt.clients:
        if venue == "replay" and rt.replay_path is None:
            raise ValueError("the replay venue needs a replay file")
        rt.clients[venue] = venue_registry.client_for(venue, rt.clock, replay_path=rt.replay_path)
    return rt.clients[venue]


def run() -> JobOutcome:
    rt = current()
    now = rt.clock.now()
    config = rt.config or default_config()

    def body() -> dict:
        counts: dict[str, Any] = {}
        failures = []
        for venue in rt.sync_venues:
            rules = config.cohort.universe_rules()
            report = venue_registry.sync(venue, rt.engine, client_for(rt, venue), rt.clock, rules)
            counts[venue] = report.line()
            if report.status != "ok":
                failures.append(f"{venue}: {report.error}")
        if failures:  # recorded as a failed run, retried by the next tick
            raise RuntimeError("; ".join(failures))
        return counts

    return run_once(rt.engine, NAME, floor_to(now, timedelta(minutes=15)).isoformat(), rt.clock, body, lease=rt.lease())
