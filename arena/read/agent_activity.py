"""What the agents did, as their pages show it: each agent's seat, fills, decisions with their rejections and
model calls, and how many forecasts each decision stated — one query per table for every agent or a few; and
every agent's name. Reads the store; never writes.

Each reader takes `as_of` and filters nothing by it: it relies on a store copied as of that time
(`read.point_in_time.store_as_of`), where a fact recorded later does not exist and a decision completed later is
still "claimed". Must not import the web.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from arena.read.where_in import where_in
from arena.store.tables import AgentRow, DecisionRow, FillRow, ForecastRow, ModelCallRow, RejectionRow


class AgentSeat(NamedTuple):
    id: int
    cohort_id: int
    name: str
    kind: str
    model_id: str
    config: Any  # as stored (JSON)


class AgentFill(NamedTuple):
    """A stored fill as the agent pages read it. A tuple rather than the database row: `closed_positions` reads
    fields by name many times per fill, and a field of a SQLAlchemy row is a lookup through the row's key map
    where a named tuple's is an index."""

    id: int
    agent_id: int
    at: datetime
    kind: str
    market_id: str
    outcome: str
    shares: int
    price_ppm: int
    cash_micros: int
    cost_micros: int
    decision_id: int | None


class AgentDecision(NamedTuple):
    id: int
    agent_id: int
    round_key: str
    status: str
    as_of: datetime
    completed_at: datetime | None
    cash_at_start_micros: int | None
    max_bet_micros: int | None
    sizing_version: str
    actions: Any  # as stored (JSON list)
    reasoning: str
    error: str


class AgentRejection(NamedTuple):
    decision_id: int
    action_index: int
    reason: str
    message: str
    at: datetime


class AgentCall(NamedTuple):
    decision_id: int
    attempt: int
    at: datetime
    served_model: str
    prompt_version: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_micros: int | None
    latency_s: float | None
    error: str
    prompt: str
    raw_response: str
    parsed: Any
    provider: str | None
    upstream_model: str | None
    upstream_base: str | None
    reasoning_content: str | None
    tool_calls: Any


@dataclass(frozen=True)
class AgentActivity:
    """The agents' facts: fills by id, decisions by time then id, rejections by id, model calls by decision then
    attempt; `n_forecasts`: decision id → its stated forecast-set forecasts (first replicate)."""

    agents: list[AgentSeat]
    fills: list[AgentFill]
    decisions: list[AgentDecision]
    rejections: list[AgentRejection]
    calls: list[AgentCall]
    n_forecasts: dict[int, int]


def agent_activity(engine: Engine, as_of: datetime, agent_ids: Sequence[int] | None = None) -> AgentActivity:
    """The facts of the agents `agent_ids` (None: every agent), one query per table; no agent: empty lists.
    Relies on a store copied as of `as_of`."""
    with engine.connect() as conn:
        aq = select(AgentRow.id, AgentRow.cohort_id, AgentRow.name, AgentRow.kind, AgentRow.model_id,
                    AgentRow.config)
        agents = [AgentSeat._make(r) for r in conn.execute(where_in(aq, AgentRow.id, agent_ids)).all()]
        if not agents:
            return AgentActivity([], [], [], [], [], {})
        ids = None if agent_ids is None else [a[0] for a in agents]
        fq = select(FillRow.id, FillRow.agent_id, FillRow.at, FillRow.kind, FillRow.market_id, FillRow.outcome,
                    FillRow.shares, FillRow.price_ppm, FillRow.cash_micros, FillRow.cost_micros,
                    FillRow.decision_id).order_by(FillRow.id)
        fills = [AgentFill._make(r) for r in conn.execute(where_in(fq, FillRow.agent_id, ids))]
        dq = select(DecisionRow.id, DecisionRow.agent_id, DecisionRow.round_key, DecisionRow.status,
                    DecisionRow.as_of, DecisionRow.completed_at, DecisionRow.cash_at_start_micros,
                    DecisionRow.max_bet_micros, DecisionRow.sizing_version, DecisionRow.actions,
                    DecisionRow.reasoning, DecisionRow.error).order_by(DecisionRow.as_of, DecisionRow.id)
        decisions = [AgentDecision._make(r) for r in conn.execute(where_in(dq, DecisionRow.agent_id, ids)).all()]
        rq = (select(RejectionRow.decision_id, RejectionRow.action_index, RejectionRow.reason, RejectionRow.message,
                     RejectionRow.at).join(DecisionRow, DecisionRow.id == RejectionRow.decision_id)
              .order_by(RejectionRow.id))
        rejections = [AgentRejection._make(r) for r in conn.execute(where_in(rq, DecisionRow.agent_id, ids)).all()]
        cq = (select(ModelCallRow.decision_id, ModelCallRow.attempt, ModelCallRow.at, ModelCallRow.served_model,
                     ModelCallRow.prompt_version, ModelCallRow.prompt_tokens, ModelCallRow.completion_tokens,
                     ModelCallRow.cost_micros, ModelCallRow.latency_s, ModelCallRow.error, ModelCallRow.prompt,
                     ModelCallRow.raw_response, ModelCallRow.parsed, ModelCallRow.provider,
                     ModelCallRow.upstream_model, ModelCallRow.upstream_base, ModelCallRow.reasoning_content,
                     ModelCallRow.tool_calls)
              .join(DecisionRow, DecisionRow.id == ModelCallRow.decision_id)
              .order_by(ModelCallRow.decision_id, ModelCallRow.attempt))
        calls = [AgentCall._make(r) for r in conn.execute(where_in(cq, DecisionRow.agent_id, ids)).all()]
        oq = (select(ForecastRow.decision_id, func.count()).where(ForecastRow.source == "forecast_set",
                                                                  ForecastRow.replicate == 1)
              .group_by(ForecastRow.decision_id))
        n_forecasts = dict(conn.execute(where_in(oq, ForecastRow.agent_id, ids)).all())
    return AgentActivity(agents, fills, decisions, rejections, calls, n_forecasts)


def agent_names(engine: Engine, as_of: datetime) -> list[str]:
    """Every distinct agent name (a model's name across cohorts). Relies on a store copied as of `as_of`."""
    with engine.connect() as conn:
        return list(conn.scalars(select(AgentRow.name).distinct()))


__all__ = ["AgentActivity", "AgentCall", "AgentDecision", "AgentFill", "AgentRejection", "AgentSeat",
           "agent_activity", "agent_names"]
