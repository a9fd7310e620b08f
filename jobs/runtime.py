"""What the jobs run against: the engine, the clock and the arena's configuration, set once per process.

Jobs are stored in the database by reference (`arena.jobs.mark:run`), so they cannot carry live objects; they ask
this module for them instead. Tests configure it with a fixed clock and a test database."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from arena.clock import Clock, SystemClock
from arena.usecases.venue_registry import LIVE_VENUES


@dataclass
class Runtime:
    engine: Engine
    clock: Clock = field(default_factory=SystemClock)
    config: Any = None  # arena.config.ArenaConfig, when one was loaded
    site_dir: Path | None = None  # where `render` writes the static site (None: no rendering)
    backup_dir: Path | None = None
    backup_keep: int = 7
    mark_every: timedelta = timedelta(days=1)  # mark-to-market period (configurable down to minutes)
    environ: Mapping[str, str] = field(default_factory=dict)  # where LLM agents' API keys are read
    sync_venues: tuple[str, ...] = LIVE_VENUES
    clients: dict[str, Any] = field(default_factory=dict)  # venue → client; built over the network if absent
    replay_path: Path | None = None  # the replay file when "replay" is among sync_venues
    books: Any = None  # token id → order book; None: the Polymarket client's live book (see `live_books`)
    live_books: bool | None = None  # fetch live CLOB books at decision time; None: only on the system clock
    endpoint_limits: Any = None  # arena.ops.endpoint_slots.EndpointLimits of the decision round, if any
    # A simulated run owns its store: no other process works on it, so its leases are measured on its own
    # (simulated) clock — a claim is dead once the simulated time has moved past it, however fast that is.
    owns_store: bool = False

    def lease(self) -> Any:
        """The lease of this process's claims: ARENA_LEASE_SECONDS, else the config's [operations] lease_seconds."""
        from arena.ops.leases import LeasePolicy

        seconds = self.config.operations.lease_seconds if self.config is not None else None
        policy = LeasePolicy.from_env() if seconds is None else LeasePolicy.from_env(default=seconds)
        if self.owns_store:
            return LeasePolicy(policy.seconds, clock=self.clock.now)
        return policy


_current: Runtime | None = None


def configure(runtime: Runtime) -> Runtime:
    global _current
    _current = runtime
    return runtime


def current() -> Runtime:
    if _current is None:
        raise RuntimeError("arena.jobs.runtime.configure(...) was not called in this process")
    return _current


def floor_to(when: datetime, period: timedelta) -> datetime:
    """The start of the `period`-long bucket (counted from the Unix epoch, UTC) that contains `when`."""
    seconds = int(period.total_seconds())
    ts = int(when.timestamp())
    return datetime.fromtimestamp(ts - ts % seconds, tz=when.tzinfo)
