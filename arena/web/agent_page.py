"""The agent page: its leaderboard row, equity, open and closed positions, fills and every decision with its
actions, rejections and model calls — per decision the models (→ the upstream model behind a proxy), providers,
tokens, cost and tool calls, and per call its reasoning and each tool call with its result. Built for every agent
(None) or a few from what `read.agent_activity` reads (one query per table); only reshapes.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlalchemy.engine import Engine

from arena.clock import utc
from arena.domain.closed_position import closed_positions
from arena.money import MICRO
from arena.scoring.brier import implied_confidence
from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED
from arena.read.agent_activity import agent_activity
from arena.read.touched_markets import market_questions, touched_market_ids
from arena.web.boards import AgentScore, Standings, load_standings, BoardRow, board_rows, shown_rows
from arena.web.charts import Chart, equity_chart
from arena.web.refs import CohortInfo, cohort_infos, MarketRef, MarketRefs
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
    facts = agent_activity(engine, as_of, agent_ids)
    agents, fills, decisions = facts.agents, facts.fills, facts.decisions
    rejections, calls, n_forecasts = facts.rejections, facts.calls, facts.n_forecasts
    if not agents:
        return {}
    cohort_ids = sorted({a[1] for a in agents})
    infos = cohort_infos(engine, as_of, None if agent_ids is None else cohort_ids)
    mentioned: set[str] | None = None
    if agent_ids is not None:
        mentioned = {f[4] for f in fills}
        for d in decisions:
            mentioned |= {str(a.get("market_id")) for a in (d[9] or []) if isinstance(a, dict)}
    refs = MarketRefs(market_questions(engine, as_of, mentioned), touched_market_ids(engine, as_of, mentioned))

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
