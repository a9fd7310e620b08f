"""How one page mentions another: a cohort's card (`CohortInfo`, from `read.cohorts`) and a market's reference
(`MarketRef`, with a link only when the market has a page — the markets `read.touched_markets` finds). Only
reshapes what the readers return.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine

from arena.read.cohorts import cohort_cards
from arena.web.env import page_path


@dataclass(frozen=True)
class CohortInfo:
    id: int
    name: str
    period_start: datetime
    status: str
    starting_cash_micros: int
    created_at: datetime
    completed_at: datetime | None
    n_agents: int
    href: str


def cohort_infos(engine: Engine, as_of: datetime, ids: Sequence[int] | None = None) -> dict[int, CohortInfo]:
    """cohort id → its card with the link to its page (None: every cohort), by period start then id."""
    return {cid: CohortInfo(c.id, c.name, c.period_start, c.status, c.starting_cash_micros, c.created_at,
                            c.completed_at, c.n_agents, page_path("cohort", c.name))
            for cid, c in cohort_cards(engine, as_of, ids).items()}


@dataclass(frozen=True)
class MarketRef:
    """A market as other pages mention it: its id, its question (untrusted text) and whether it has a page."""

    id: str
    question: str
    href: str  # site-relative path of its page, "" when it has none

    @property
    def label(self) -> str:
        return self.question or self.id


class MarketRefs:
    """MarketRef by id, made once per market however many rows mention it."""

    def __init__(self, questions: Mapping[str, str], pages: set[str]) -> None:
        self.questions, self.pages = questions, pages
        self.cache: dict[str, MarketRef] = {}

    def __call__(self, market_id: Any) -> MarketRef:
        mid = str(market_id) if market_id is not None else ""
        ref = self.cache.get(mid)
        if ref is None:
            linked = mid in self.pages and mid in self.questions
            ref = self.cache[mid] = MarketRef(mid, self.questions.get(mid, ""),
                                              page_path("market", mid) if linked else "")
        return ref
