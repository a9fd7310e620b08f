"""What a model's calls cost: calls, tokens and the reported cost (exact micro-USD) summed over every seat that
model held, and the cost per resolved forecast; and each call's cost, for the cost–skill frontier. Reads the
stored model calls; never writes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import col

from arena.store.tables import AgentRow, DecisionRow, ModelCallRow


@dataclass(frozen=True)
class Cost:
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_micros: int | None  # None: no call reported a cost
    resolved_forecasts: int

    @property
    def per_resolved_forecast_micros(self) -> int | None:
        if self.cost_micros is None or not self.resolved_forecasts:
            return None
        return self.cost_micros // self.resolved_forecasts


def model_costs(engine: Engine, names: Sequence[str] | None) -> dict[str, Cost]:
    """model → its calls, tokens and reported cost, summed over its seats (None: every model); `resolved_forecasts`
    is 0 here (the caller knows it from the boards: see `Cost` per page)."""
    q = (select(AgentRow.name, func.count(), func.coalesce(func.sum(ModelCallRow.prompt_tokens), 0),
                func.coalesce(func.sum(ModelCallRow.completion_tokens), 0), func.sum(ModelCallRow.cost_micros))
         .join(DecisionRow, DecisionRow.id == ModelCallRow.decision_id)
         .join(AgentRow, AgentRow.id == DecisionRow.agent_id).group_by(AgentRow.name))
    if names is not None:
        q = q.where(col(AgentRow.name).in_(list(names)))
    with engine.connect() as conn:
        return {str(n): Cost(int(c), int(p), int(t), None if cost is None else int(cost), 0)
                for n, c, p, t, cost in conn.execute(q).all()}


def call_costs(engine: Engine, names: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per stored model call: agent (the model: its seat's name) and cost_micros (float; NaN where the
    call reported no cost) — what `scoring.frontier` resamples. names: only these models (None: every one).

    In the order of the calls' natural keys (seat, round, call number), not of their row ids: seats that decide
    at once write their calls in any order, and the seeded bootstrap must draw the same calls from the same
    facts."""
    q = (select(AgentRow.name, ModelCallRow.cost_micros)
         .join(DecisionRow, DecisionRow.id == ModelCallRow.decision_id)
         .join(AgentRow, AgentRow.id == DecisionRow.agent_id)
         .order_by(AgentRow.name, AgentRow.cohort_id, DecisionRow.round_key, ModelCallRow.decision_attempt,
                   ModelCallRow.replicate, ModelCallRow.attempt))
    if names is not None:
        q = q.where(col(AgentRow.name).in_(list(names)))
    with engine.connect() as conn:
        rows = conn.execute(q).all()
    return pd.DataFrame({"agent": [str(r[0]) for r in rows],
                         "cost_micros": pd.Series([r[1] for r in rows], dtype=object).astype(float)})
