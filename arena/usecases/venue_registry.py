"""The venue registry: every venue the arena syncs, by name — how its client is built and which sync reads it.

`arena sync --venue`, the scheduler's sync job and `arena replay run` all go through `client_for` and `sync`,
so a venue is added here once. Importing this module is cheap (the CLI reads `VENUE_NAMES` for its choices):
clients and sync services are imported when a venue is used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.errors import InputError


@dataclass(frozen=True)
class Venue:
    """One venue: `live` venues are read over the network (an HTTP layer is built for them); the replay venue
    reads a file. `sync_name` is the function of `arena.usecases.sync` that brings it into the store."""

    name: str
    live: bool
    sync_name: str
    build: Callable[[Any, Any, Path | None], Any]  # (VenueHTTP or None, clock, replay file) → client


def _polymarket(http: Any, clock: Any, _path: Path | None) -> Any:
    from arena.venues.http import VenueHTTP
    from arena.venues.polymarket import PolymarketClient

    return PolymarketClient(http or VenueHTTP(), clock=clock)


def _manifold(http: Any, clock: Any, _path: Path | None) -> Any:
    from arena.venues.http import VenueHTTP
    from arena.venues.manifold import ManifoldClient

    return ManifoldClient(http or VenueHTTP(), clock=clock)


def _replay(_http: Any, _clock: Any, path: Path | None) -> Any:
    from arena.venues.replay import ReplayVenue

    if path is None:
        raise InputError("the replay venue needs the replay file",
                         fix="pass --file FILE (sync) or --replay FILE (jobs, scheduler)")
    return ReplayVenue.from_path(path, skip_malformed=True)


VENUES: dict[str, Venue] = {v.name: v for v in (
    Venue("polymarket", True, "sync_polymarket", _polymarket),
    Venue("manifold", True, "sync_manifold", _manifold),
    Venue("replay", False, "sync_replay", _replay),
)}
VENUE_NAMES = tuple(VENUES)
LIVE_VENUES = tuple(n for n, v in VENUES.items() if v.live)  # what a sync reads when no venue is named


def venue(name: str) -> Venue:
    if name not in VENUES:
        raise InputError(f"unknown venue {name!r}", fix=f"use one of: {', '.join(VENUE_NAMES)}")
    return VENUES[name]


def client_for(name: str, clock: Any, *, http: Any = None, replay_path: Path | str | None = None) -> Any:
    """A client of venue `name` on `clock` (through `http`, a VenueHTTP, for live venues; a default one if
    None), or the replay venue over `replay_path`."""
    return venue(name).build(http, clock, Path(replay_path) if replay_path is not None else None)


def sync(name: str, engine: Any, client: Any, clock: Any, rules: Any = None) -> Any:
    """Bring venue `name`'s markets, prices and resolutions into the store through `client`; its SyncReport."""
    from arena.usecases import sync as sync_service

    return getattr(sync_service, venue(name).sync_name)(engine, client, clock, rules)


__all__ = ["LIVE_VENUES", "VENUES", "VENUE_NAMES", "Venue", "client_for", "sync", "venue"]
