"""The agent page: its leaderboard row, equity, open and closed positions, fills and every decision with its
actions, rejections and model calls — per decision the models (→ the upstream model behind a proxy), providers,
tokens, cost and tool calls, and per call its reasoning and each tool call with its result. Built for every agent
(None) or a few, one query per table.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any, NamedTuple

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from arena.clock import utc
from arena.domain.closed_position import closed_positions
from arena.money import MICRO
from arena.scoring.brier import implied_confidence
from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED
from arena.store.tables import AgentRow, DecisionRow, FillRow, ForecastRow, ModelCallRow, RejectionRow
from arena.web.boards import AgentScore, Standings, load_standings, BoardRow, board_rows, shown_rows
from arena.web.charts import Chart, equity_chart
from arena.web.refs import where_in, CohortInfo, cohort_infos, site_market_ids, market_questions, MarketRef, MarketRefs
from arena.web.skill_luck import SkillLuck, skill_luck
from arena.web.values import NAN, num, flat


@dataclass(frozen=True)
class AgentInfo:
    id: int
    name: str
    kind: str
    model_id: str
    config: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class OpenPosition:
    market: MarketRef
    outcome: str
    shares: int
    cost_micros: int
    price_ppm: int | None
    value_micros: int
    unrealized_micros: int
    priced: bool


@dataclass(frozen=True)
class ClosedPosition:
    market: MarketRef
    outcome: str
    bought_micros: int  # Σ stakes of its BUY fills
    returned_micros: int  # Σ cash of its SELL / SETTLE / REFUND / REVERSAL fills
    realized_micros: int  # returned − bought: the fold of the position's cash deltas
    closed_by: str  # kind of its last fill
    closed_at: datetime


@dataclass(frozen=True)
class FillView:
    id: int
    at: datetime
    kind: str
    market: MarketRef
    outcome: str
    shares: int
    price_ppm: int | None
    cash_micros: int
    cost_micros: int
    decision_id: int | None


@dataclass(frozen=True)
class ActionView:
    index: int
    type: str
    market: MarketRef
    outcome: str
    amount_micros: int | None
    amount_text: str  # as the agent gave it, when it is not a valid amount
    fraction: str
    stated_probability: float
    implied_confidence: float  # amount / max bet, clipped to [0, 1] (seed 001); NaN for sells
    rationale: str
    rejected: bool


@dataclass(frozen=True)
class RejectionView:
    action_index: int
    reason: str
    message: str
    at: datetime


@dataclass(frozen=True)
class ToolView:
    name: str
    arguments: str
    result: str


@dataclass(frozen=True)
class CallView:
    attempt: int
    at: datetime
    served_model: str
    prompt_version: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_micros: int | None
    latency_s: float
    error: str
    prompt: str
    raw_response: str
    parsed: str  # the parsed decision as indented JSON, "" when parsing failed
    provider: str = ""
    upstream_model: str = ""  # behind a proxy: the model it routed to ("" when it said nothing)
    upstream_base: str = ""
    reasoning: str = ""
    tools: tuple[ToolView, ...] = ()


@dataclass(frozen=True)
class CallsSummary:
    """A decision's model calls at a glance: the models (as served, → upstream behind a proxy), providers,
    tokens, cost (None when no call reported one) and tool calls."""

    n_calls: int
    models: tuple[str, ...]
    providers: tuple[str, ...]
    prompt_tokens: int
    completion_tokens: int
    cost_micros: int | None
    n_tools: int

    @classmethod
    def of(cls, calls: Sequence[CallView]) -> CallsSummary:
        costs = [c.cost_micros for c in calls if c.cost_micros is not None]
        return cls(len(calls),
                   tuple(dict.fromkeys(c.served_model + (f" → {c.upstream_model}" if c.upstream_model else "")
                                       for c in calls if c.served_model or c.upstream_model)),
                   tuple(dict.fromkeys(c.provider for c in calls if c.provider)),
                   sum(c.prompt_tokens or 0 for c in calls), sum(c.completion_tokens or 0 for c in calls),
                   sum(costs) if costs else None, sum(len(c.tools) for c in calls))


@dataclass(frozen=True)
class DecisionView:
    id: int
    round_key: str
    status: str
    as_of: datetime
    completed_at: datetime | None
    cash_at_start_micros: int | None
    max_bet_micros: int | None
    sizing_version: str
    actions: tuple[ActionView, ...]
    reasoning: str
    error: str
    rejections: tuple[RejectionView, ...]
    calls: tuple[CallView, ...]
    n_forecasts: int  # stated forecasts of the round's forecast set (shown on the market pages)
    n_fills: int
    usage: CallsSummary | None = None  # None for a decision without model calls (a scripted agent's)


@dataclass(frozen=True)
class AgentPage:
    as_of: datetime
    agent: AgentInfo
    cohort: CohortInfo
    score: AgentScore
    headline: BoardRow | None  # the agent's row of its cohort's headline board (None when not computed)
    equity: Chart
    open_positions: tuple[OpenPosition, ...]
    closed_positions: tuple[ClosedPosition, ...]
    fills: tuple[FillView, ...]
    decisions: tuple[DecisionView, ...]
    provisional_min: int
    skill_luck: SkillLuck | None = None  # None: no bet yet


class _Fill(NamedTuple):
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


def _amount_micros(text: Any) -> int | None:
    """A stake as the decision recorded it (a decimal string of USD) in micro-USD; None if it is not one."""
    if type(text) is str and text.isdigit():
        return int(text) * MICRO  # whole dollars: the common case, without Decimal
    try:
        d = Decimal(str(text))
    except (InvalidOperation, ValueError):
        return None
    if not d.is_finite():
        return None
    return int((d * MICRO).to_integral_value())


def _action(index: int, a: Any, max_bet: int | None, refs: MarketRefs, rejected: set[int]) -> ActionView:
    a = a if isinstance(a, dict) else {"type": "?", "rationale": flat(a)}
    typ = str(a.get("type", ""))
    amount = _amount_micros(a.get("amount")) if a.get("amount") is not None else None
    conf = float(implied_confidence(amount, max_bet)) if typ == "BET" and amount is not None and max_bet else NAN
    return ActionView(
        index=index, type=typ, market=refs(a.get("market_id")), outcome=str(a.get("outcome", "")),
        amount_micros=amount, amount_text="" if amount is not None else flat(a.get("amount", "")),
        fraction=flat(a.get("fraction", "")), stated_probability=num(a.get("stated_probability")),
        implied_confidence=conf, rationale=flat(a.get("rationale", "")), rejected=index in rejected,
    )


def agent_contexts(engine: Engine, as_of: datetime, agent_ids: Sequence[int] | None = None,
                   standings: Standings | None = None,
                   luck: Mapping[tuple[str, str], SkillLuck] | None = None) -> dict[int, AgentPage]:
    """Agent pages by agent id (None: every agent), from one query per table (`luck`: the `skill_luck` of their
    cohorts when the caller already has it)."""
    with engine.connect() as conn:
        aq = select(AgentRow.id, AgentRow.cohort_id, AgentRow.name, AgentRow.kind, AgentRow.model_id,
                    AgentRow.config)
        agents = conn.execute(where_in(aq, AgentRow.id, agent_ids)).all()
        if not agents:
            return {}
        cohort_ids = sorted({a[1] for a in agents})
        infos = cohort_infos(conn, None if agent_ids is None else cohort_ids)
        ids = None if agent_ids is None else [a[0] for a in agents]

        fq = select(FillRow.id, FillRow.agent_id, FillRow.at, FillRow.kind, FillRow.market_id, FillRow.outcome,
                    FillRow.shares, FillRow.price_ppm, FillRow.cash_micros, FillRow.cost_micros,
                    FillRow.decision_id).order_by(FillRow.id)
        fills = [_Fill._make(r) for r in conn.execute(where_in(fq, FillRow.agent_id, ids))]
        dq = select(DecisionRow.id, DecisionRow.agent_id, DecisionRow.round_key, DecisionRow.status,
                    DecisionRow.as_of, DecisionRow.completed_at, DecisionRow.cash_at_start_micros,
                    DecisionRow.max_bet_micros, DecisionRow.sizing_version, DecisionRow.actions,
                    DecisionRow.reasoning, DecisionRow.error).order_by(DecisionRow.as_of, DecisionRow.id)
        decisions = conn.execute(where_in(dq, DecisionRow.agent_id, ids)).all()
        rq = (select(RejectionRow.decision_id, RejectionRow.action_index, RejectionRow.reason, RejectionRow.message,
                     RejectionRow.at).join(DecisionRow, DecisionRow.id == RejectionRow.decision_id)
              .order_by(RejectionRow.id))
        rejections = conn.execute(where_in(rq, DecisionRow.agent_id, ids)).all()
        cq = (select(ModelCallRow.decision_id, ModelCallRow.attempt, ModelCallRow.at, ModelCallRow.served_model,
                     ModelCallRow.prompt_version, ModelCallRow.prompt_tokens, ModelCallRow.completion_tokens,
                     ModelCallRow.cost_micros, ModelCallRow.latency_s, ModelCallRow.error, ModelCallRow.prompt,
                     ModelCallRow.raw_response, ModelCallRow.parsed, ModelCallRow.provider,
                     ModelCallRow.upstream_model, ModelCallRow.upstream_base, ModelCallRow.reasoning_content,
                     ModelCallRow.tool_calls)
              .join(DecisionRow, DecisionRow.id == ModelCallRow.decision_id)
              .order_by(ModelCallRow.decision_id, ModelCallRow.attempt))
        calls = conn.execute(where_in(cq, DecisionRow.agent_id, ids)).all()
        oq = (select(ForecastRow.decision_id, func.count()).where(ForecastRow.source == "forecast_set",
                                                                  ForecastRow.replicate == 1)
              .group_by(ForecastRow.decision_id))
        n_forecasts = dict(conn.execute(where_in(oq, ForecastRow.agent_id, ids)).all())

        mentioned: set[str] | None = None
        if ids is not None:
            mentioned = {f[4] for f in fills}
            for d in decisions:
                mentioned |= {str(a.get("market_id")) for a in (d[9] or []) if isinstance(a, dict)}
        refs = MarketRefs(market_questions(conn, mentioned), site_market_ids(conn, mentioned))

    st = standings or load_standings(engine, as_of, None if agent_ids is None else cohort_ids)
    head: dict[tuple[str, str], BoardRow] = {}
    shown = {infos[c].name for c in cohort_ids}  # the boards of these agents' cohorts only
    for b in (st.boards.cohorts if st.boards is not None else []):
        if b.name not in shown:
            continue
        for r in board_rows(shown_rows(b, st.boards.rank_by)):
            head[(b.name, r.name)] = r

    by_agent_fills: dict[int, list[Any]] = defaultdict(list)
    for f in fills:
        by_agent_fills[f[1]].append(f)
    rej_by_decision: dict[int, list[RejectionView]] = defaultdict(list)
    for did, idx, reason, message, at in rejections:
        rej_by_decision[did].append(RejectionView(int(idx), reason, message, utc(at)))
    calls_by_decision: dict[int, list[CallView]] = defaultdict(list)
    for (did, attempt, at, served, pver, ptok, ctok, cost, lat, err, prompt, raw, parsed, provider, upstream,
         base, reasoning, tools) in calls:
        calls_by_decision[did].append(CallView(
            int(attempt), utc(at), served, pver, ptok, ctok, cost, num(lat), err, prompt, raw,
            json.dumps(parsed, indent=2, sort_keys=True, ensure_ascii=False) if parsed is not None else "",
            provider or "", upstream or "", base or "", reasoning or "",
            tuple(ToolView(flat(t.get("name", "")), flat(t.get("arguments", "")), flat(t.get("result", "")))
                  for t in (tools or []) if isinstance(t, dict))))
    fills_by_decision = Counter(f[10] for f in fills if f[10] is not None)
    dec_by_agent: dict[int, list[DecisionView]] = defaultdict(list)
    for (did, aid, round_key, status, d_as_of, completed, cash0, maxbet, sver, actions, reasoning, error) in decisions:
        rejected = {r.action_index for r in rej_by_decision.get(did, [])}
        dec_by_agent[aid].append(DecisionView(
            id=did, round_key=round_key, status=status, as_of=utc(d_as_of),
            completed_at=utc(completed) if completed else None, cash_at_start_micros=cash0, max_bet_micros=maxbet,
            sizing_version=sver,
            actions=tuple(_action(i, a, maxbet, refs, rejected) for i, a in enumerate(actions or [])),
            reasoning=reasoning, error=error, rejections=tuple(rej_by_decision.get(did, ())),
            calls=tuple(calls_by_decision.get(did, ())), n_forecasts=int(n_forecasts.get(did, 0)),
            n_fills=fills_by_decision.get(did, 0),
            usage=CallsSummary.of(calls_by_decision[did]) if did in calls_by_decision else None,
        ))

    if luck is None:
        luck = skill_luck(engine, as_of, None if agent_ids is None else [infos[c].name for c in cohort_ids])
    out = {}
    for aid, cid, name, kind, model_id, config in agents:
        info = infos[cid]
        score = st.rows[aid]
        opens = tuple(
            OpenPosition(refs(p["market_id"]), str(p["outcome"]), int(p["shares"]), int(p["cost"]),
                         int(p["price_ppm"]) if bool(p["priced"]) else None, int(p["value"]),
                         int(p["unrealized"]), bool(p["priced"]))
            for p in sorted(st.positions.get(aid, ()), key=lambda p: (str(p["market_id"]), str(p["outcome"]))))
        out[aid] = AgentPage(
            as_of=as_of,
            agent=AgentInfo(aid, name, kind, model_id,
                            tuple((str(k), flat(v)) for k, v in sorted((config or {}).items()))),
            cohort=info, score=score, headline=head.get((info.name, name)),
            equity=equity_chart("Total value (cash + marked positions)", [(name, st.curves.get(aid, ()))],
                                info.starting_cash_micros),
            open_positions=opens,
            closed_positions=tuple(ClosedPosition(refs(c.market_id), c.outcome, c.bought_micros, c.returned_micros,
                                                  c.realized_micros, c.closed_by, c.closed_at)
                                   for c in closed_positions(by_agent_fills.get(aid, []))),
            fills=tuple(FillView(f[0], f[2], f[3], refs(f[4]), f[5], f[6], f[7], f[8], f[9], f[10])
                        for f in by_agent_fills.get(aid, [])),
            decisions=tuple(reversed(dec_by_agent.get(aid, []))), provisional_min=PROVISIONAL_MIN_RESOLVED,
            skill_luck=luck.get((info.name, name)),
        )
    return out
