"""Job: sync the configured venues' markets, prices and resolutions (every 15 minutes by default)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from arena.config import default_config
from arena.services import sync
from arena.services.operations import JobOutcome, run_once
from arena.jobs.runtime import Runtime, current, floor_to

NAME = "sync"


def client_for(rt: Runtime, venue: str) -> Any:
    if venue in rt.clients:
        return rt.clients[venue]
    from arena.venues.http import VenueHTTP

    if venue == "polymarket":
        from arena.venues.polymarket import PolymarketClient

        rt.clients[venue] = PolymarketClient(VenueHTTP(), clock=rt.clock)
    elif venue == "manifold":
        from arena.venues.manifold import ManifoldClient

        rt.clients[venue] = ManifoldClient(VenueHTTP(), clock=rt.clock)
    elif venue == "replay":
        from arena.venues.replay import ReplayVenue

        if rt.replay_path is None:
            raise ValueError("the replay venue needs a replay file")
        rt.clients[venue] = ReplayVenue.from_path(rt.replay_path, skip_malformed=True)
    else:
        raise ValueError(f"unknown venue {venue!r}")
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
            if venue == "polymarket":
                report = sync.sync_polymarket(rt.engine, client_for(rt, venue), rt.clock, rules)
            elif venue == "manifold":
                report = sync.sync_manifold(rt.engine, client_for(rt, venue), rt.clock, rules)
            else:
                report = sync.sync_replay(rt.engine, client_for(rt, venue), rt.clock, rules)
            counts[venue] = report.line()
            if report.status != "ok":
                failures.append(f"{venue}: {report.error}")
        if failures:  # recorded as a failed run, retried by the next tick
            raise RuntimeError("; ".join(failures))
        return counts

    return run_once(rt.engine, NAME, floor_to(now, timedelta(minutes=15)).isoformat(), rt.clock, body, lease=rt.lease())
