"""The call journal: a decision's model calls written down before they are sent.

A model call costs money the moment it is sent, so it is on record from then on: the agent tells the journal
(`AgentView.journal`) before each request, and the journal inserts a `model_calls` row with status "in_flight",
the prompt as sent and the next call number of the decision — in a transaction that first re-checks that this
runner still holds the decision's claim (a runner whose claim was taken over sends nothing more). The finished
decision completes those rows with the replies ("done"). A row no reply ever completed is "abandoned": by the
runner that takes the decision over (its previous holder died or lost its lease mid-call), or by the runner
itself when the agent failed before the reply was recorded. An abandoned call keeps its prompt and number; its
cost is unknown (NULL), never silently zero.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from arena.domain.decision import ModelCall
from arena.store.engine import session_scope
from arena.store.tables import DecisionRow, ModelCallRow

IN_FLIGHT = "in flight: sent, no reply recorded yet"
TAKEN_OVER = ("abandoned: its runner stopped (killed, or its lease expired) before the reply was recorded; "
              "the decision was taken over")


class ClaimLost(RuntimeError):
    """The runner no longer holds the decision's claim: no further model call may be made for it."""


class StoreCallJournal:
    """The journal of one ask (a decision's try, one replicate) under one claim. `rows` maps the agent's call
    number (1, 2, … as in `Decision.calls`) to the `model_calls` row written for it; `offset` is the number of
    calls the decision had on record before this ask's first, so its calls are numbered after them."""

    def __init__(self, engine: Engine, decision_id: int, token: str, decision_attempt: int, replicate: int,
                 at: datetime) -> None:
        self.engine, self.decision_id, self.token = engine, decision_id, token
        self.decision_attempt, self.replicate, self.at = decision_attempt, replicate, at
        self.rows: dict[int, int] = {}
        self.offset: int | None = None

    def started(self, attempt: int, prompt: str, prompt_version: str) -> None:
        with session_scope(self.engine) as s:
            if not hold(s, self.decision_id, self.token):
                raise ClaimLost(f"decision {self.decision_id} was taken over by another runner; call not sent")
            if self.offset is None:
                self.offset = last_call_number(s, self.decision_id)
            row = ModelCallRow(decision_id=self.decision_id, attempt=self.offset + attempt,
                               decision_attempt=self.decision_attempt, replicate=self.replicate, prompt=prompt,
                               prompt_version=prompt_version, status="in_flight", error=IN_FLIGHT, at=self.at)
            s.add(row)
            s.flush()
            self.rows[attempt] = row.id  # type: ignore[assignment]


def hold(s: Session, decision_id: int, token: str) -> bool:
    """Whether `token` still holds the decision's claim, locking the decision row for the rest of `s`'s
    transaction (an UPDATE to the same value), so no takeover interleaves with what the holder writes next."""
    res = s.execute(update(DecisionRow)
                    .where(col(DecisionRow.id) == decision_id, col(DecisionRow.status) == "claimed",
                           col(DecisionRow.claimed_by) == token).values(claimed_by=token))
    return res.rowcount == 1


def last_call_number(s: Session, decision_id: int) -> int:
    """The highest call number on record for the decision (0: none)."""
    return s.scalar(select(func.max(ModelCallRow.attempt))
                    .where(col(ModelCallRow.decision_id) == decision_id)) or 0


def abandon_in_flight(s: Session, decision_id: int, reason: str = TAKEN_OVER, *,
                      only: list[int] | None = None) -> int:
    """Mark the decision's calls still in flight abandoned (`only`: just those rows); how many were."""
    q = update(ModelCallRow).where(col(ModelCallRow.decision_id) == decision_id,
                                   col(ModelCallRow.status) == "in_flight")
    if only is not None:
        if not only:
            return 0
        q = q.where(col(ModelCallRow.id).in_(only))
    return s.execute(q.values(status="abandoned", error=reason)).rowcount


def call_values(call: ModelCall) -> dict[str, object]:
    """The columns of a completed call (what the reply brought), for an insert or for completing its row."""
    return dict(prompt=call.prompt, raw_response=call.raw_response,
                parsed=dict(call.parsed) if call.parsed is not None else None, error=call.error,
                prompt_tokens=call.prompt_tokens, completion_tokens=call.completion_tokens,
                cost_micros=round(call.cost_usd * 1_000_000) if call.cost_usd is not None else None,
                latency_s=call.latency_s, served_model=call.served_model, prompt_version=call.prompt_version,
                provider=call.provider, tool_calls=[dict(t) for t in call.tool_calls] or None,
                upstream_model=call.upstream_model, upstream_base=call.upstream_base,
                reasoning_content=call.reasoning_content, status="done")


def record_calls(s: Session, decision_id: int, decision_attempt: int, replicate: int, calls: tuple[ModelCall, ...],
                 at: datetime, journal: StoreCallJournal | None, *, numbered_after: bool,
                 failure: str = "") -> None:
    """The ask's calls on record: the journal's rows completed with their replies, calls the journal never saw
    inserted after the decision's last number (`numbered_after`) or at their own, and journal rows no reply
    came for marked abandoned (with `failure`, the agent's error, when there is one)."""
    written = journal.rows if journal is not None else {}
    offset = journal.offset if journal is not None and journal.offset is not None else None
    if offset is None:
        offset = 0
        if numbered_after:
            s.flush()
            offset = last_call_number(s, decision_id)
    for call in calls:
        if call.attempt in written:
            s.execute(update(ModelCallRow).where(col(ModelCallRow.id) == written[call.attempt])
                      .values(**call_values(call)))
        else:
            s.add(ModelCallRow(decision_id=decision_id, attempt=call.attempt + offset,
                               decision_attempt=decision_attempt, replicate=replicate, at=at,
                               **call_values(call)))  # type: ignore[arg-type]
    answered = {c.attempt for c in calls}
    orphans = [rid for n, rid in written.items() if n not in answered]
    why = "abandoned: the ask failed before this call's reply was recorded" + (f" ({failure})" if failure else "")
    abandon_in_flight(s, decision_id, why, only=orphans)


def complete_journaled(engine: Engine, journal: StoreCallJournal | None, calls: tuple[ModelCall, ...]) -> None:
    """A runner that lost its claim still completes the rows of the calls it made (they were sent and cost
    money), but writes nothing else for the decision."""
    if journal is None or not journal.rows:
        return
    with session_scope(engine) as s:
        for call in calls:
            if call.attempt in journal.rows:
                s.execute(update(ModelCallRow)
                          .where(col(ModelCallRow.id) == journal.rows[call.attempt])
                          .values(**call_values(call)))


__all__ = ["ClaimLost", "StoreCallJournal", "abandon_in_flight", "complete_journaled", "hold", "record_calls"]
