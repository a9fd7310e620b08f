"""A worked example of the methodology page: its title, setup, figures and moral (the page's one value type shared
with the modules that compute examples)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WorkedExample:
    """A worked example of a metric's behaviour: the numbers come from the scoring library's own functions."""

    title: str
    setup: str
    rows: tuple[tuple[str, str], ...]  # quantity, value as printed
    moral: str


__all__ = ["WorkedExample"]
