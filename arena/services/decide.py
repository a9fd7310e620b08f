"""Decide: one agent's decision in one round — claim, show the view, ask the agent, execute, record.

The decision row is claimed (inserted, unique per agent and round) and committed *before* the agent is asked,
so re-running a round never trades twice; a claim left by a crash is resumed. Fills, forecasts, rejections and
the decision's outcome are then written in one transaction that first re-checks the claim.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from arena.agents.view import Agent, AgentView, MarketView, PositionView
from arena.domain import broker
from arena.domain.decision import Bet, Decision, Sell
from arena.domain.ledger import Ledger
from arena.domain.market import YES, Market, MarketKind, Quote
from arena.domain.sizing import SIZING_VERSION
from arena.domain.valuation import value_position
from arena.money import Money
from arena.services.cohorts import agents_of, cohort_rules
from arena.services.pricing import BookSource, pricer_for
from arena.store import repo
from arena.store.engine import session_scope
from arena.store.tables import AgentRow, CohortRow, DecisionRow, ForecastRow, ModelCallRow, RejectionRow


@dataclass(frozen=True)
class DecisionOutcome:
    agent: str
    status: str  # executed, rejected, hold, failed, skipped (already decided)
    fills: int = 0
    rejections: int = 0


def claim(engine: Engine, cohort_id: int, agent_id: int, round_key: str, now: datetime) -> int | None:
    """Claim the agent's decision for the round; its id, or None if it was already completed (or claimed by a
    concurrent runner that got there first)."""
    try:  # the common case, a fresh claim, is one INSERT
        with session_scope(engine) as s:
            row = DecisionRow(cohort_id=cohort_id, agent_id=agent_id, round_key=round_key, status="claimed",
                              as_of=now, claimed_at=now, sizing_version=SIZING_VERSION)
            s.add(row)
            s.flush()
            return row.id
    except IntegrityError:
        pass
    with session_scope(engine) as s:
        row = s.exec(select(DecisionRow).where(DecisionRow.agent_id == agent_id,
                                              DecisionRow.round_key == round_key)).first()
        return row.id if row is not None and row.status == "claimed" else None  # a crashed claim is resumed


MAX_QUOTE_AGE = timedelta(days=3)


def tradable_markets(session: Session, as_of: datetime, max_age: timedelta = MAX_QUOTE_AGE
                     ) -> tuple[dict[str, Market], dict[str, Quote]]:
    """Markets open at `as_of` with a price fetched by then and no older than `max_age` (a market that left
    the synced universe keeps its last quote, which must not become a price anyone trades at)."""
    quotes = {mid: q for mid, q in repo.latest_quotes(session, as_of).items()
              if (q.fetched_at or q.observed_at) >= as_of - max_age}
    markets = repo.markets_by_id(session, quotes.keys())
    open_markets = {mid: m for mid, m in markets.items() if m.is_open_at(as_of)}
    return open_markets, {mid: quotes[mid] for mid in open_markets}


def forecast_set(markets: Mapping[str, Market], k: int) -> tuple[str, ...]:
    """The K markets every agent of a round is asked to forecast: most traded in 24 h first, ties by id."""
    binary = [m for m in markets.values() if m.kind is MarketKind.BINARY]
    binary.sort(key=lambda m: (-(m.volume_24h or 0.0), m.id))
    return tuple(m.id for m in binary[:k])


def build_view(session: Session, ledger: Ledger, agent_id: str, as_of: datetime, rules: Any,
               markets: Mapping[str, Market], quotes: Mapping[str, Quote], k: int) -> AgentView:
    held = [p for p in ledger.open_positions()]
    held_quotes = repo.latest_quotes(session, as_of, {p.market_id for p in held})
    held_markets = repo.markets_by_id(session, {p.market_id for p in held})
    positions = []
    for p in held:
        q = held_quotes.get(p.market_id)
        price = q.price(p.outcome) if q is not None and (p.outcome in q.prices or YES in q.prices) else None
        pv = value_position(p, price)
        m = held_markets.get(p.market_id)
        positions.append(PositionView(p.market_id, p.outcome, p.shares, p.cost_basis, p.entry_price, price,
                                      pv.value, pv.unrealized, bool(m and m.is_open_at(as_of)),
                                      question=m.question if m else "", outcome_label=m.label(p.outcome) if m else ""))
    views = tuple(MarketView(markets[mid], quotes[mid]) for mid in sorted(markets))
    return AgentView(as_of=as_of, agent_id=agent_id, cash=ledger.cash, max_bet=rules.max_bet(ledger.cash),
                     min_bet=rules.min_bet, positions=tuple(positions), markets=views,
                     forecast_set=forecast_set(markets, k))


def action_json(action: Bet | Sell) -> dict[str, Any]:
    if isinstance(action, Bet):
        return {"type": "BET", "market_id": action.market_id, "outcome": action.outcome,
                "amount": str(action.amount.to_decimal()), "stated_probability": action.stated_probability,
                "rationale": action.rationale}
    return {"type": "SELL", "market_id": action.market_id, "outcome": action.outcome,
            "fraction": str(action.fraction), "rationale": action.rationale}


def decide_one(engine: Engine, cohort: CohortRow, agent_row: AgentRow, agent: Agent, round_key: str,
               as_of: datetime, forecast_k: int = 20, books: BookSource | None = None,
               market_state: tuple[dict[str, Market], dict[str, Quote]] | None = None) -> DecisionOutcome:
    """One agent's decision for the round. `books` (token id → order book) makes Polymarket orders walk the
    live CLOB book; without it every order fills at the venue probability."""
    decision_id = claim(engine, cohort.id, agent_row.id, round_key, as_of)  # type: ignore[arg-type]
    if decision_id is None:
        return DecisionOutcome(agent_row.name, "skipped")
    rules = cohort_rules(cohort)
    with Session(engine, expire_on_commit=False) as s:
        ledger = repo.ledger_for(s, agent_row, cohort)
        markets, quotes = market_state if market_state is not None else tradable_markets(s, as_of)
        view = build_view(s, ledger, str(agent_row.id), as_of, rules, markets, quotes, forecast_k)
        pricer = pricer_for(s, markets, quotes, books)
    error = ""
    try:
        decision = agent.decide(view)
    except Exception as exc:  # the agent's failure is recorded as a HOLD with the reason, never lost
        decision, error = Decision(reasoning=""), f"{type(exc).__name__}: {exc}"
    if decision.error and not error:  # the model's output was given up on: a HOLD, with the reason kept
        error = decision.error
        decision = Decision(forecasts=decision.forecasts, reasoning=decision.reasoning, calls=decision.calls,
                            error=decision.error)
    execution = broker.execute(decision, ledger, markets, pricer, rules, as_of, str(decision_id))
    bad_forecasts = {mid: p for mid, p in decision.forecasts.items()
                     if mid not in markets or not (0.0 <= float(p) <= 1.0)}
    if error and not decision.calls:
        status = "failed"
    elif error:
        status = "hold"
    elif execution.rejections:
        status = "rejected"
    elif decision.is_hold:
        status = "hold"
    else:
        status = "executed"
    with session_scope(engine) as s:
        # Re-check the claim inside the writing transaction: only one runner may complete it.
        done = s.execute(
            update(DecisionRow)
            .where(DecisionRow.id == decision_id, DecisionRow.status == "claimed")  # type: ignore[arg-type]
            .values(status=status, cash_at_start_micros=execution.cash_at_start.micros,
                    max_bet_micros=execution.max_bet.micros, actions=[action_json(a) for a in decision.actions],
                    reasoning=decision.reasoning, error=error, completed_at=as_of)
        )
        if done.rowcount != 1:
            return DecisionOutcome(agent_row.name, "skipped")
        repo.add_fills(s, execution.fills, cohort.id)  # type: ignore[arg-type]
        for call in decision.calls:
            s.add(ModelCallRow(
                decision_id=decision_id, attempt=call.attempt, prompt=call.prompt, raw_response=call.raw_response,
                parsed=dict(call.parsed) if call.parsed is not None else None, error=call.error,
                prompt_tokens=call.prompt_tokens, completion_tokens=call.completion_tokens,
                cost_micros=round(call.cost_usd * 1_000_000) if call.cost_usd is not None else None,
                latency_s=call.latency_s, served_model=call.served_model, prompt_version=call.prompt_version,
                at=as_of))
        for r in execution.rejections:
            action = decision.actions[r.index] if 0 <= r.index < len(decision.actions) else None
            s.add(RejectionRow(decision_id=decision_id, action_index=r.index, reason=r.reason, message=r.message,
                               action=action_json(action) if action else {}, at=as_of))
        for mid, p in bad_forecasts.items():
            s.add(RejectionRow(decision_id=decision_id, action_index=-1, reason="bad_forecast",
                               message=f"forecast for {mid!r} ignored: unknown market or probability {p!r} "
                                       f"outside [0, 1]", action={"market_id": mid}, at=as_of))
        recorded: set[tuple[str, str]] = set()
        for mid, p in decision.forecasts.items():
            if mid in bad_forecasts:
                continue
            s.add(_forecast_row(decision_id, agent_row.id, mid, "forecast_set", float(p), quotes, as_of))
            recorded.add((mid, "forecast_set"))
        if execution.accepted:
            for bet in decision.bets:
                if bet.stated_probability is not None and (bet.market_id, "bet") not in recorded:
                    s.add(_forecast_row(decision_id, agent_row.id, bet.market_id, "bet", bet.stated_probability,
                                        quotes, as_of))
                    recorded.add((bet.market_id, "bet"))
    return DecisionOutcome(agent_row.name, status, len(execution.fills), len(execution.rejections))


def _forecast_row(decision_id: int, agent_id: int | None, market_id: str, source: str, p: float,
                  quotes: Mapping[str, Quote], as_of: datetime) -> ForecastRow:
    q = quotes.get(market_id)
    price = q.prices.get(YES) if q is not None else None
    return ForecastRow(decision_id=decision_id, agent_id=agent_id, market_id=market_id, source=source,
                       probability=p, market_price_ppm=price.ppm if price is not None else None, as_of=as_of)


def run_round(engine: Engine, cohort: CohortRow, agents: Mapping[str, Agent], round_key: str, as_of: datetime,
              forecast_k: int = 20, concurrency: int = 8, books: BookSource | None = None) -> list[DecisionOutcome]:
    """Every agent of `cohort` decides once for `round_key`, up to `concurrency` at a time, so a round of
    model agents takes about as long as its slowest agent. Agents without an implementation are reported
    as "no_agent". Outcomes come back in lineup order."""
    with Session(engine) as s:
        rows = agents_of(s, cohort.id)  # type: ignore[arg-type]
        state = tradable_markets(s, as_of)  # the same for every agent of the round: read once

    def one(row: AgentRow) -> DecisionOutcome:
        impl = agents.get(row.name)
        if impl is None:
            return DecisionOutcome(row.name, "no_agent")
        return decide_one(engine, cohort, row, impl, round_key, as_of, forecast_k, books, state)

    if concurrency <= 1 or len(rows) <= 1:
        return [one(r) for r in rows]
    with ThreadPoolExecutor(max_workers=min(concurrency, len(rows)), thread_name_prefix="decide") as pool:
        return list(pool.map(one, rows))


