"""The market universe: which tradable markets a cohort is shown, by volume or liquidity, within a close-date
horizon (so capital is not locked for years), without excluded categories or keywords (pure)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, TypeVar


# Markets about the venue itself (Manifold markets about Manifold, its users and its mana) are
# self-referential: their outcome is decided by the community that trades them.
DEFAULT_EXCLUDED_KEYWORDS = ("manifold", "mana ", "this market", "this question")


@dataclass(frozen=True)
class UniverseRules:
    top_n: int = 100
    rank_by: str = "volume_24h"  # or "liquidity", "volume"
    horizon_days: int = 60  # markets closing later than this are left out
    exclude_keywords: tuple[str, ...] = DEFAULT_EXCLUDED_KEYWORDS
    exclude_categories: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.rank_by not in ("volume_24h", "liquidity", "volume"):
            raise ValueError(f"rank_by must be volume_24h, liquidity or volume, not {self.rank_by!r}")
        if self.top_n < 0 or self.horizon_days < 0:
            raise ValueError("top_n and horizon_days must not be negative")


class Listed(Protocol):
    """What the rules read of a market: a `Market`, or a lighter stand-in a sync makes for a market it did not
    re-parse."""

    @property
    def id(self) -> str: ...
    @property
    def question(self) -> str: ...
    @property
    def category(self) -> str: ...
    @property
    def close_time(self) -> datetime | None: ...
    @property
    def volume(self) -> float | None: ...
    @property
    def volume_24h(self) -> float | None: ...
    @property
    def liquidity(self) -> float | None: ...
    def is_open_at(self, when: datetime) -> bool: ...


L = TypeVar("L", bound=Listed)


def excluded(market: Listed, rules: UniverseRules) -> str:
    """Why `market` is excluded by keyword or category ("" when it is not)."""
    return _Exclusions(rules)(market)


class _Exclusions:
    """`excluded` with the rules' keywords and categories lowered once, for many markets."""

    def __init__(self, rules: UniverseRules) -> None:
        self.keywords = [(kw, kw.lower()) for kw in rules.exclude_keywords]
        self.categories = {c.lower() for c in rules.exclude_categories}

    def __call__(self, market: Listed) -> str:
        if self.keywords:
            text = f" {market.question.lower()} "
            for kw, lowered in self.keywords:
                if lowered in text:
                    return f"keyword {kw.strip()!r}"
        if market.category and market.category.lower() in self.categories:
            return f"category {market.category!r}"
        return ""


def select(markets: Iterable[L], now: datetime, rules: UniverseRules) -> list[L]:
    """The top N markets open at `now` that close within the horizon and are not excluded, best ranked first;
    equal ranks — every market of a venue that reports no volume, like the replay file — in a deterministic
    shuffle (SHA-256 of the id), not by id: ids sort by creation or by name, and the lowest would fill the
    universe (and the forecast sets chosen from it) with one corner of the venue. The same markets tie the same
    way on every sync. A market without a close date is outside any horizon."""
    limit = now + timedelta(days=rules.horizon_days)
    excluded_by = _Exclusions(rules)
    eligible = [m for m in markets
                if m.is_open_at(now) and m.close_time is not None and m.close_time <= limit
                and not excluded_by(m)]
    eligible.sort(key=lambda m: (-(getattr(m, rules.rank_by) or 0.0), hashlib.sha256(m.id.encode()).digest()))
    return eligible[: rules.top_n]
