"""How one page mentions another: a cohort's card (`CohortInfo`), a market's reference (`MarketRef`, with a link
only when the market has a page) and which markets get a page — plus the one query helper the page builders
share (`where_in`: every key, or only the given ones). Reads the store; never writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, union
from sqlalchemy.engine import Connection

from arena.clock import utc
from arena.store.tables import AgentRow, CohortRow, FillRow, ForecastRow, MarketRow
from arena.web.env import page_path


def where_in(q: Any, column: Any, keys: Sequence[Any] | None) -> Any:
    """`q` restricted to rows whose `column` is one of `keys`; unchanged when `keys` is None (every row)."""
    return q if keys is None else q.where(column.in_(list(keys)))


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


def cohort_infos(conn: Connection, ids: Sequence[int] | None = None) -> dict[int, CohortInfo]:
    n_agents = (select(AgentRow.cohort_id, func.count().label("n")).group_by(AgentRow.cohort_id).subquery())
    q = (select(CohortRow.id, CohortRow.name, CohortRow.period_start, CohortRow.status,
                CohortRow.starting_cash_micros, CohortRow.created_at, CohortRow.completed_at, n_agents.c.n)
         .outerjoin(n_agents, n_agents.c.cohort_id == CohortRow.id).order_by(CohortRow.period_start, CohortRow.id))
    out = {}
    for cid, name, start, status, cash, created, completed, n in conn.execute(where_in(q, CohortRow.id, ids)).all():
        out[cid] = CohortInfo(cid, name, utc(start), status, int(cash), utc(created),
                              utc(completed) if completed else None, int(n or 0), page_path("cohort", name))
    return out


def site_market_ids(conn: Connection, among: Iterable[str] | None = None) -> set[str]:
    """The markets that get a page: those the arena touched (traded or forecast by some agent) — of `among`
    only, when given (one page's worth of ids)."""
    fq, oq = select(FillRow.market_id).distinct(), select(ForecastRow.market_id).distinct()
    if among is not None:
        ids = sorted(set(among))
        if not ids:
            return set()
        fq = fq.where(FillRow.market_id.in_(ids))  # type: ignore[attr-defined]
        oq = oq.where(ForecastRow.market_id.in_(ids))  # type: ignore[attr-defined]
    return {r[0] for r in conn.execute(union(fq, oq)).all()}


def market_questions(conn: Connection, ids: Iterable[str] | None) -> dict[str, str]:
    q = select(MarketRow.id, MarketRow.question)
    if ids is not None:
        ids = sorted(set(ids))
        if not ids:
            return {}
        q = q.where(MarketRow.id.in_(ids))  # type: ignore[attr-defined]
    return dict(conn.execute(q).all())


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
