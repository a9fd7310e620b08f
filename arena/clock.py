"""The injected clock: services ask it for `now()` instead of reading the wall clock. Always UTC."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    """The real clock, in UTC."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)


@dataclass
class FixedClock:
    """A clock for tests and simulations: it stays where it is put and moves only when told."""

    current: datetime = field(default_factory=lambda: datetime(2026, 1, 4, tzinfo=timezone.utc))

    def __post_init__(self) -> None:
        self.current = utc(self.current)

    def now(self) -> datetime:
        return self.current

    def set(self, when: datetime) -> None:
        self.current = utc(when)

    def advance(self, delta: timedelta) -> datetime:
        self.current = self.current + delta
        return self.current


def utc(when: datetime) -> datetime:
    """`when` as an aware UTC datetime; a naive value is taken to be UTC already (as databases return it)."""
    if when.tzinfo is None:
        return when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc)
