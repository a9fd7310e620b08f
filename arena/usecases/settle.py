"""Settle: turn recorded resolutions into settlement fills, reverse them when a venue re-resolves, and
complete cohorts whose decision window is over and whose every position has settled.

Idempotent: settlement fill keys are unique per position and resolution version, and only positions that
still hold shares (or settlements of an older version) are touched.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import case, func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from arena.clock import utc
from arena.domain import settlement
from arena.domain.fill import Fill, FillKind
from arena.domain.ledger import Position
from arena.money import Money
from arena.usecases.cohorts import cohort_rules, open_position_count
from arena.usecases.mark import mark_to_market
from arena.store import repo
from arena.store.engine import session_scope
from arena.store.tables import CohortRow, FillRow, ResolutionRow

SETTLING = (FillKind.SETTLE.value, FillKind.REFUND.value)


@dataclass
class SettleCounts:
    settled: int = 0
    refunded: int = 0
    reversed: int = 0
    markets: int = 0


def settle_resolved(engine: Engine, now: datetime) -> SettleCounts:
    """Settle every position whose market has a (new) resolution; reverse settlements of superseded ones."""
    counts = SettleCounts()
    with session_scope(engine) as s:
        latest_v = (select(ResolutionRow.market_id, func.max(ResolutionRow.version).label("v"))
                    .group_by(ResolutionRow.market_id).subquery())
        latest = {r.market_id: r for r in s.scalars(
            select(ResolutionRow).join(latest_v, (ResolutionRow.market_id == latest_v.c.market_id)
                                       & (ResolutionRow.version == latest_v.c.v)))}
        if not latest:
            return counts
        # Per position: shares held, and whether a settlement of an older version is still in force
        # (settled in a version and not reversed). Only those groups need work.
        settled_v = func.max(case((col(FillRow.kind).in_(SETTLING), FillRow.resolution_version), else_=None))
        reversals = func.sum(case((FillRow.kind == FillKind.REVERSAL.value, 1), else_=0))
        settles = func.sum(case((col(FillRow.kind).in_(SETTLING), 1), else_=0))
        groups = s.execute(
            select(FillRow.cohort_id, FillRow.agent_id, FillRow.market_id, FillRow.outcome,
                   func.sum(FillRow.shares), settled_v, settles, reversals)
            .where(col(FillRow.market_id).in_(list(latest)))
            .group_by(FillRow.cohort_id, FillRow.agent_id, FillRow.market_id, FillRow.outcome)
        ).all()
        touched: set[str] = set()
        for cohort_id, agent_id, market_id, outcome, shares, sv, n_settle, n_rev in groups:
            row = latest[market_id]
            resolution = repo.resolution_from_row(row)
            in_force = (n_settle or 0) > (n_rev or 0)
            new: list[Fill] = []
            if in_force and sv is not None and sv < row.version:
                new += _reverse_in_force(s, agent_id, market_id, outcome, now)
            held = int(shares or 0) + sum(f.shares for f in new)
            if resolution is not None and held > 0:
                pos = _position(s, agent_id, market_id, outcome, new)
                fill = settlement.settle_position(str(agent_id), pos, resolution, now)
                if fill is not None:
                    new.append(fill)
            for f in new:
                if f.kind is FillKind.REVERSAL:
                    counts.reversed += 1
                elif f.kind is FillKind.REFUND:
                    counts.refunded += 1
                else:
                    counts.settled += 1
            repo.add_fills(s, new, cohort_id)
            if new:
                touched.add(market_id)
        counts.markets = len(touched)
    return counts


def _reverse_in_force(s: Session, agent_id: int, market_id: str, outcome: str, now: datetime) -> list[Fill]:
    rows = s.scalars(select(FillRow).where(col(FillRow.agent_id) == agent_id, col(FillRow.market_id) == market_id,
                                           col(FillRow.outcome) == outcome).order_by(col(FillRow.id))).all()
    reversed_keys = {r.provenance.removeprefix("reverses:") for r in rows if r.kind == FillKind.REVERSAL.value}
    return [settlement.reverse(repo.fill_from_row(r), now) for r in rows
            if r.kind in SETTLING and r.key not in reversed_keys]


def _position(s: Session, agent_id: int, market_id: str, outcome: str, pending: list[Fill]) -> Position:
    shares, cost = s.execute(
        select(func.coalesce(func.sum(FillRow.shares), 0), func.coalesce(func.sum(FillRow.cost_micros), 0))
        .where(col(FillRow.agent_id) == agent_id, col(FillRow.market_id) == market_id,
               col(FillRow.outcome) == outcome)
    ).one()
    shares = int(shares) + sum(f.shares for f in pending)
    cost = int(cost) + sum(f.cost.micros for f in pending)
    return Position(market_id, outcome, shares, Money(cost))


def window_end(cohort: CohortRow) -> datetime:
    """When the cohort's decision window is over (from then on it completes once no position is open)."""
    return utc(cohort.period_start) + timedelta(weeks=cohort_rules(cohort).decision_weeks)


def next_window_end(engine: Engine, after: datetime) -> datetime | None:
    """The first decision-window end after `after` among open cohorts (None: none is to come)."""
    with session_scope(engine) as s:
        ends = [window_end(c) for c in s.scalars(select(CohortRow).where(CohortRow.status == "open"))]
    return min((e for e in ends if e > after), default=None)


def complete_cohorts(engine: Engine, now: datetime) -> list[str]:
    """Complete open cohorts whose decision window is over and that hold no open position; each gets a final
    snapshot written after its last settlement."""
    done = []
    with session_scope(engine) as s:
        candidates = list(s.scalars(select(CohortRow).where(CohortRow.status == "open")))
        ready = []
        for c in candidates:
            if now >= window_end(c) and open_position_count(s, c.id) == 0:  # type: ignore[arg-type]
                ready.append(c.id)
    for cid in ready:
        mark_to_market(engine, now, [cid], final=True)  # type: ignore[list-item]
        with session_scope(engine) as s:
            c = s.get(CohortRow, cid)
            assert c is not None
            c.status, c.completed_at = "completed", now
            s.add(c)
            done.append(c.name)
    return done


