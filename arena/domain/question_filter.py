"""The question filter of a filtered board: a window of decision dates and a set of market categories that select
forecast-set questions (pure: the standard library, numpy and pandas only; no clock, no store).

A question (one market at one decision round) is in the window when the round's forecasts were made on a UTC day
from `start` to `end`, both included; it is in the categories when its market's category is one of them (a market
with no category is "uncategorized"). No bound selects every question on that side.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from typing import Any

import numpy as np
import pandas as pd

from arena.scoring.breakdown import UNCATEGORIZED, category_name

@dataclass(frozen=True)
class QuestionFilter:
    """start, end: the first and last UTC day of the decision window (None: open); categories: the market
    categories kept (empty: every category), as shown by `category_name`."""

    start: date | None = None
    end: date | None = None
    categories: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.start is not None and self.end is not None and self.start > self.end:
            raise ValueError(f"the window starts {self.start} after it ends {self.end}")

    @property
    def active(self) -> bool:
        return self.start is not None or self.end is not None or bool(self.categories)

    @property
    def after(self) -> datetime | None:
        """The window's first instant (UTC), inclusive."""
        return None if self.start is None else datetime.combine(self.start, time(), timezone.utc)

    @property
    def before(self) -> datetime | None:
        """The instant after the window's last day (UTC), exclusive."""
        return None if self.end is None else datetime.combine(self.end + timedelta(days=1), time(), timezone.utc)

    def mask(self, decided_at: Any, category: Any) -> np.ndarray:
        """Which questions the filter keeps: decided_at (the round's decision time; aware or naive UTC, NaT: not
        kept by a window) and category (the market's) are equal-length sequences."""
        t = pd.to_datetime(pd.Series(decided_at, dtype=object), utc=True)
        keep = np.ones(len(t), dtype=bool)
        if self.after is not None:
            keep &= (t >= pd.Timestamp(self.after)).to_numpy(dtype=bool)
        if self.before is not None:
            keep &= (t < pd.Timestamp(self.before)).to_numpy(dtype=bool)
        if self.categories:
            wanted = set(self.categories)
            keep &= np.array([category_name(c) in wanted for c in category], dtype=bool)
        return keep

    def to_json(self) -> dict[str, Any] | None:
        """{"from", "until", "categories"} (dates as YYYY-MM-DD, null when open), or None when inactive."""
        if not self.active:
            return None
        return {"from": None if self.start is None else self.start.isoformat(),
                "until": None if self.end is None else self.end.isoformat(),
                "categories": sorted(self.categories)}

    def describe(self) -> str:
        """One line for a page or a terminal, e.g. "questions decided 2026-01-05 to 2026-01-18 in sports"."""
        if not self.active:
            return "every question"
        parts = ["questions"]
        if self.start is not None or self.end is not None:
            parts.append(f"decided {self.start or '…'} to {self.end or '…'}")
        if self.categories:
            parts.append("in " + ", ".join(sorted(self.categories)))
        return " ".join(parts)


def parse_day(text: str | None, name: str) -> date | None:
    """A YYYY-MM-DD day given as `name` (None when not given); ValueError saying how to write it."""
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{name} {text!r} is not a date: write it as YYYY-MM-DD, e.g. 2026-01-05") from None


def question_filter(start: str | None, end: str | None, categories: Any = ()) -> QuestionFilter | None:
    """The filter of these words (None when none is given); ValueError on a bad day or a window ending before it
    starts."""
    a, b = parse_day(start, "from"), parse_day(end, "until")
    if a is not None and b is not None and a > b:
        raise ValueError(f"from {a} is after until {b}: give from on or before until")
    f = QuestionFilter(a, b, tuple(dict.fromkeys(categories or ())))
    return f if f.active else None


__all__ = ["UNCATEGORIZED", "QuestionFilter", "category_name", "parse_day", "question_filter"]
