"""The metric registry: each score's name, direction (higher_is_better), unit and one-line description.

Pages and reports sort and label columns from here instead of hard-coding "lower is better". Pure; imports only
the standard library.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

F = TypeVar("F", bound=Callable[..., object])


@dataclass(frozen=True)
class Metric:
    """One registered score. `fn` is the function that computes it, when a single function does."""

    name: str
    higher_is_better: bool
    description: str
    unit: str
    fn: Callable[..., object] | None = field(default=None, compare=False)  # identity is the definition, not fn

    @property
    def direction(self) -> str:
        return "higher is better" if self.higher_is_better else "lower is better"


METRICS: dict[str, Metric] = {}


def register(
    name: str,
    *,
    higher_is_better: bool,
    description: str,
    unit: str,
    fn: Callable[..., object] | None = None,
) -> Metric:
    """Add a metric to METRICS and return it. Registering a name twice with a different definition is an error,
    because two modules silently disagreeing on a metric's direction would mis-sort a leaderboard."""
    if not name or not description or "\n" in description:
        raise ValueError(f"metric {name!r}: a name and a one-line description are required")
    new = Metric(name, bool(higher_is_better), description, unit, fn)
    old = METRICS.get(name)
    if old is not None and old != new:
        raise ValueError(f"metric {name!r} is already registered differently: {old}")
    METRICS[name] = new
    return new


def metric(name: str, *, higher_is_better: bool, description: str, unit: str) -> Callable[[F], F]:
    """Decorator form of `register`: registers the decorated function as the metric's implementation."""

    def decorate(fn: F) -> F:
        register(name, higher_is_better=higher_is_better, description=description, unit=unit, fn=fn)
        return fn

    return decorate


def higher_is_better(name: str) -> bool:
    """Direction of a registered metric (KeyError for an unknown name)."""
    return METRICS[name].higher_is_better


__all__ = ["METRICS", "Metric", "higher_is_better", "metric", "register"]
