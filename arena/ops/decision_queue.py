"""The decision queue: a round seen as the seats that still need a decision, claimed one at a time by whichever
runner (a worker process, a worker's thread) asks next.

A seat needs a decision for a round when it has no decision row for the round yet, when its claim's lease has
expired (the runner died), or when its decision failed and may be tried again (`retry_below`). `claim_next`
finds such seats and claims them in one transaction. On PostgreSQL the seats' agent rows are locked with
``FOR UPDATE SKIP LOCKED`` while they are claimed, so concurrent runners each take a different seat instead of
queueing on the same one; everywhere the claim itself is the guarantee — a fresh claim is an INSERT the
unique (agent, round) key admits once, a takeover or retry a conditional UPDATE only one runner wins — so a
seat is never decided twice and none is lost.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, and_, or_, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import col

from arena.domain.sizing import SIZING_VERSION
from arena.usecases.decide import Claim
from arena.ops.leases import LeasePolicy, runner_id
from arena.store.engine import session_scope
from arena.store.tables import AgentRow, DecisionRow


@dataclass(frozen=True)
class Queued:
    """A seat claimed from the queue: its claim, and the cohort and agent it decides for."""

    claim: Claim
    cohort_id: int
    agent_id: int


_tokens = itertools.count(1)


def needs_decision(round_key: str, wall: datetime, retry_below: int) -> ColumnElement[bool]:
    """The condition on an outer-joined decision row under which its seat still needs a decision."""
    stranded = and_(col(DecisionRow.status) == "claimed",
                    or_(col(DecisionRow.lease_until).is_(None), col(DecisionRow.lease_until) < wall))
    retryable = and_(col(DecisionRow.status) == "failed", col(DecisionRow.attempts) < retry_below)
    return or_(col(DecisionRow.id).is_(None), stranded, retryable)


def claim_next(engine: Engine, cohort_ids: Sequence[int], round_key: str, now: datetime, *,
               lease: LeasePolicy | None = None, retry_below: int = 0, limit: int = 1,
               kinds: Sequence[str] | None = None, skip: Collection[int] = ()) -> list[Queued]:
    """Claim up to `limit` seats of `cohort_ids` (of the agent `kinds` this runner can rebuild, None: any;
    not the agent ids in `skip`, e.g. those this pass already tried) that need a decision for `round_key`,
    lowest agent id first; [] when none is left that it may take now."""
    if not cohort_ids:
        return []
    lease = lease or LeasePolicy.from_env()
    wall = lease.now()
    out: list[Queued] = []
    with session_scope(engine) as s:
        q = (select(col(AgentRow.id), col(AgentRow.cohort_id), col(DecisionRow.id))
             .outerjoin(DecisionRow, and_(col(DecisionRow.agent_id) == AgentRow.id,
                                          col(DecisionRow.round_key) == round_key))
             .where(col(AgentRow.cohort_id).in_(list(cohort_ids)),
                    needs_decision(round_key, wall, retry_below),
                    *([col(AgentRow.kind).in_(list(kinds))] if kinds is not None else []),
                    *([col(AgentRow.id).not_in(list(skip))] if skip else []))
             .order_by(col(AgentRow.id)).limit(limit))
        if engine.dialect.name == "postgresql":
            q = q.with_for_update(of=AgentRow, skip_locked=True)
        for agent_id, cohort_id, decision_id in s.execute(q).all():
            token = f"{runner_id()}.q{next(_tokens)}"
            if decision_id is None:  # a fresh claim: one INSERT, admitted once by the unique (agent, round) key
                try:
                    with s.begin_nested():
                        row = DecisionRow(cohort_id=cohort_id, agent_id=agent_id, round_key=round_key,
                                          status="claimed", as_of=now, claimed_at=now,
                                          sizing_version=SIZING_VERSION, claimed_by=token,
                                          lease_until=lease.until(), attempts=1)
                        s.add(row)
                        s.flush()
                except IntegrityError:  # another runner claimed it between our read and our write
                    continue
                out.append(Queued(Claim(row.id, 1, token), cohort_id, agent_id))  # type: ignore[arg-type]
                continue
            # a dead runner's claim, or a failed decision with tries left: a conditional UPDATE only one wins
            res = s.execute(
                update(DecisionRow).where(col(DecisionRow.id) == decision_id,
                                          needs_decision(round_key, wall, retry_below))
                .values(status="claimed", claimed_by=token, lease_until=lease.until(),
                        attempts=DecisionRow.attempts + 1, as_of=now, claimed_at=now, completed_at=None, error="")
                .returning(col(DecisionRow.attempts)))
            attempts = res.scalar()
            if attempts is not None:
                out.append(Queued(Claim(decision_id, int(attempts), token), cohort_id, agent_id))
    return out


def open_seats(engine: Engine, cohort_ids: Sequence[int], round_key: str, *, lease: LeasePolicy | None = None,
               retry_below: int = 0, kinds: Sequence[str] | None = None) -> int:
    """How many seats of `cohort_ids` still need a decision for `round_key` now (claimed by nobody alive)."""
    from sqlalchemy import func

    if not cohort_ids:
        return 0
    lease = lease or LeasePolicy.from_env()
    with session_scope(engine) as s:
        return int(s.scalar(
            select(func.count()).select_from(AgentRow)
            .outerjoin(DecisionRow, and_(col(DecisionRow.agent_id) == AgentRow.id,
                                         col(DecisionRow.round_key) == round_key))
            .where(col(AgentRow.cohort_id).in_(list(cohort_ids)),
                   needs_decision(round_key, lease.now(), retry_below),
                   *([col(AgentRow.kind).in_(list(kinds))] if kinds is not None else []))) or 0)


__all__ = ["Queued", "claim_next", "needs_decision", "open_seats"]
