"""Leases: how a claim (a job run, a decision) says its holder is still alive, and how a dead holder's claim
is taken over.

A claim carries `lease_until`; while the holder works, a heartbeat thread pushes it forward every third of
the lease. A process killed mid-claim stops renewing, and once the lease has passed the next tick may take the
claim over. Leases are measured on the **wall clock**, not on the arena's (possibly simulated) clock: they
say whether a process is alive, which only real time can tell. The lease length comes from the environment
(`ARENA_LEASE_SECONDS`, default 120 s) or is passed in; tests use a second or two.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

log = logging.getLogger(__name__)

LEASE_ENV = "ARENA_LEASE_SECONDS"
DEFAULT_LEASE_SECONDS = 120.0
MAX_LEASE_SECONDS = 86_400.0  # a day: the [operations] lease_seconds range


def wall_now() -> datetime:
    """Real time, UTC: the one clock a lease is measured on."""
    return datetime.now(timezone.utc)


_runner: tuple[int, str] | None = None


def runner_id() -> str:
    """This process's identity as a claim holder: host:pid/random token (a reused pid is not the same holder)."""
    global _runner
    pid = os.getpid()
    if _runner is None or _runner[0] != pid:  # recomputed in a forked child
        _runner = (pid, f"{socket.gethostname()[:60]}:{pid}/{uuid.uuid4().hex[:8]}")
    return _runner[1]


@dataclass(frozen=True)
class LeasePolicy:
    """How long a claim stays held without a heartbeat (seconds), and the wall clock it is measured on."""

    seconds: float = DEFAULT_LEASE_SECONDS
    clock: Callable[[], datetime] = field(default=wall_now, compare=False)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, default: float = DEFAULT_LEASE_SECONDS
                 ) -> LeasePolicy:
        """`ARENA_LEASE_SECONDS` from `environ` (default: the process environment), else `default`."""
        env = os.environ if environ is None else environ
        raw = env.get(LEASE_ENV, "")
        if not raw:
            return cls(default)
        try:
            seconds = float(raw)
        except ValueError:
            seconds = -1.0
        if not 0 < seconds <= MAX_LEASE_SECONDS:  # NaN fails too
            from arena.errors import ConfigError

            raise ConfigError(f"{LEASE_ENV}={raw!r} is not a number of seconds > 0 and ≤ {MAX_LEASE_SECONDS:g}",
                              fix=f"unset it for {DEFAULT_LEASE_SECONDS:g} s, or give a number in that range",
                              key=LEASE_ENV)
        return cls(seconds)

    def now(self) -> datetime:
        return self.clock()

    def until(self) -> datetime:
        """When a lease taken (or renewed) now expires."""
        return self.clock() + timedelta(seconds=self.seconds)

    @property
    def heartbeat_every(self) -> float:
        return max(0.05, self.seconds / 3)


class Heartbeat:
    """A daemon thread that calls `renew()` every `interval` seconds until stopped (a `with` block).

    A renewal that fails (the database briefly away) is logged and tried again at the next beat: the worst
    case is a lease that expires and a claim another process takes over, which the claim rules make safe."""

    def __init__(self, renew: Callable[[], None], interval: float, name: str = "heartbeat") -> None:
        self._renew = renew
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._renew()
            except Exception:  # noqa: BLE001 - a missed beat is not fatal; see the class docstring
                log.warning("lease renewal failed", exc_info=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


__all__ = ["DEFAULT_LEASE_SECONDS", "LEASE_ENV", "Heartbeat", "LeasePolicy", "runner_id", "wall_now"]
