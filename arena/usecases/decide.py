"""Decide: one agent's decision in one round — claim, show the view, ask the agent, execute, record.

The decision row is claimed (inserted, unique per agent and round) and committed *before* the agent is asked,
so re-running a round never trades twice. A claim carries a lease, renewed by the round's heartbeat while the
agent thinks; a claim whose runner died is resumed once its lease has expired, never while it is alive. A
decision that failed (no decision could be had: missing key, endpoint refused or down, timeouts) may be
claimed again, a bounded number of times (`RetryPolicy`); each try is kept as a `decision_attempts` row and its
model calls are numbered after the earlier tries'. Fills, forecasts, rejections and the decision's outcome are
written in one transaction that first re-checks that the claim is still this runner's.

Statuses: executed, rejected, hold (the agent decided, or its replies were given up on — the model's doing),
failed (the agent could not be asked or did not answer — retryable).

Replicates: a seat frozen with `replicates = k` (k > 1) is asked the same view k times independently, in
replicate order, under the one claim. **Replicate 1's actions are the ones executed** — always, whatever the
others answered: it is exactly the decision a k = 1 seat would have made (choosing, say, the first replicate
that parsed would skew the executed decisions towards the answers that parse), and it is known without
waiting for a vote. Every replicate's stated forecasts are stored (`forecasts.replicate`), every model call says
which replicate it served, and each replicate 2..k is committed (a `decision_replicates` row, its calls and
forecasts) as soon as it answers, in a transaction that re-checks the claim; replicate 1 is committed with the
decision's fills. A decision resumed after a crash, or retried after a failure, asks only the replicates not
yet recorded (and the failed ones again), then replicate 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
import dataclasses
import itertools
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, or_, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from arena.agents.redact import scrub, scrub_decision
from arena.agents.view import Agent, AgentView, MarketView, PositionView
from arena.domain import broker
from arena.domain import forecast_set as forecast_set_rules
from arena.domain.decision import Bet, Decision, Sell
from arena.domain.ledger import Ledger
from arena.domain.market import YES, Market, MarketKind, Quote
from arena.domain.sizing import SIZING_VERSION
from arena.domain.valuation import value_position
from arena.usecases.asked_set import round_set
from arena.usecases.call_journal import StoreCallJournal, abandon_in_flight, complete_journaled, hold, record_calls
from arena.usecases.cohorts import agents_of, cohort_rules
from arena.ops.leases import Heartbeat, LeasePolicy, runner_id
from arena.usecases.market_facts import StoreMarketFacts
from arena.usecases.pricing import BookSource, RoundBooks, pricer_for
from arena.store import repo
from arena.store.engine import session_scope
from arena.store.tables import (AgentRow, CohortRow, DecisionAttemptRow, DecisionReplicateRow, DecisionRow,
                                ForecastRow, RejectionRow)


@dataclass(frozen=True)
class DecisionOutcome:
    agent: str
    # executed, rejected, hold, failed; skipped (already decided, or failed with no retry allowed),
    # in_progress (claimed by a live runner elsewhere), lost (this runner's lease was taken over), no_agent
    status: str
    fills: int = 0
    rejections: int = 0
    attempt: int = 0  # the try this outcome was (1 = first), 0 when nothing was tried


@dataclass(frozen=True)
class Claim:
    decision_id: int
    attempt: int  # 1 for a fresh claim; each resumption or retry adds one
    token: str  # the holder, as written in `claimed_by`


_claims = itertools.count(1)


def claim_decision(engine: Engine, cohort_id: int, agent_id: int, round_key: str, now: datetime, *,
                   lease: LeasePolicy | None = None, retry_below: int = 0) -> tuple[Claim | None, str]:
    """Claim the agent's decision for the round: (the claim, "claimed"), or (None, why not): "skipped" (it
    was completed, or failed and `retry_below` does not allow another try) or "in_progress" (a live runner
    holds it). A claim whose lease expired is resumed; a failed decision is claimed again while its attempts
    are below `retry_below`. Both are conditional UPDATEs, so only one runner wins."""
    lease = lease or LeasePolicy.from_env()
    token = f"{runner_id()}.d{next(_claims)}"
    try:  # the common case, a fresh claim, is one INSERT
        with session_scope(engine) as s:
            row = DecisionRow(cohort_id=cohort_id, agent_id=agent_id, round_key=round_key, status="claimed",
                              as_of=now, claimed_at=now, sizing_version=SIZING_VERSION, claimed_by=token,
                              lease_until=lease.until(), attempts=1)
            s.add(row)
            s.flush()
            return Claim(row.id, 1, token), "claimed"  # type: ignore[arg-type]
    except IntegrityError:
        pass
    wall = lease.now()
    takeover = and_(col(DecisionRow.status) == "claimed",
                    or_(col(DecisionRow.lease_until).is_(None), col(DecisionRow.lease_until) < wall))
    retry = and_(col(DecisionRow.status) == "failed", col(DecisionRow.attempts) < retry_below)
    mine = (col(DecisionRow.agent_id) == agent_id, col(DecisionRow.round_key) == round_key)
    with session_scope(engine) as s:
        res = s.execute(
            update(DecisionRow).where(*mine, or_(takeover, retry))
            .values(status="claimed", claimed_by=token, lease_until=lease.until(), attempts=DecisionRow.attempts + 1,
                    as_of=now, claimed_at=now, completed_at=None, error="")
        )
        row = s.exec(select(DecisionRow).where(*mine)).first()
        if res.rowcount == 1 and row is not None:
            return Claim(row.id, row.attempts, token), "claimed"  # type: ignore[arg-type]
        if row is not None and row.status == "claimed":
            return None, "in_progress"
        return None, "skipped"


def claim(engine: Engine, cohort_id: int, agent_id: int, round_key: str, now: datetime, *,
          lease: LeasePolicy | None = None) -> int | None:
    """The claimed decision's id, or None if it was already completed or a live runner holds it."""
    c, _ = claim_decision(engine, cohort_id, agent_id, round_key, now, lease=lease)
    return c.decision_id if c is not None else None


class ClaimBeat:
    """The leases of the decisions a round is working on, renewed together by one heartbeat."""

    def __init__(self, engine: Engine, lease: LeasePolicy) -> None:
        self.engine, self.lease = engine, lease
        self._held: dict[int, str] = {}
        self._lock = threading.Lock()

    def hold(self, c: Claim) -> None:
        with self._lock:
            self._held[c.decision_id] = c.token

    def release(self, c: Claim) -> None:
        with self._lock:
            self._held.pop(c.decision_id, None)

    def renew(self) -> None:
        with self._lock:
            held = dict(self._held)
        if not held:
            return
        with session_scope(self.engine) as s:
            for decision_id, token in held.items():
                s.execute(update(DecisionRow)
                          .where(col(DecisionRow.id) == decision_id, col(DecisionRow.claimed_by) == token,
                                 DecisionRow.status == "claimed")
                          .values(lease_until=self.lease.until()))


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


def tradable_counts(session: Session, times: Iterable[datetime], max_age: timedelta = MAX_QUOTE_AGE
                    ) -> dict[datetime, int]:
    """time → how many markets `tradable_markets` finds then (the same rule), with the quotes counted in the
    database and the market rows read once for all the times."""
    fresh = {t: repo.fresh_quote_ids(session, t, max_age) for t in set(times)}
    markets = repo.markets_by_id(session, set().union(*fresh.values())) if fresh else {}
    return {t: sum(1 for mid in ids if mid in markets and markets[mid].is_open_at(t)) for t, ids in fresh.items()}


# The selection rules live in the pure domain (`arena.domain.forecast_set`); the round's set is chosen once and
# stored (`arena.usecases.asked_set`). The old names stay importable from here.
FORECAST_GROUPS, GROUP_MAX_MEMBERS = forecast_set_rules.FORECAST_GROUPS, forecast_set_rules.GROUP_MAX_MEMBERS
exclusive_groups = forecast_set_rules.exclusive_groups
forecast_set = forecast_set_rules.volume_set  # the volume-v1 rule, by market id


def build_view(session: Session, ledger: Ledger, agent_id: str, as_of: datetime, rules: Any,
               markets: Mapping[str, Market], quotes: Mapping[str, Quote], asked: Sequence[str]) -> AgentView:
    """The agent's view at `as_of`: its book, the tradable markets, and the round's forecast set `asked` (the
    stored set's markets that are still tradable: a resumed round does not ask a market that has closed since)."""
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
                     forecast_set=tuple(mid for mid in asked if mid in markets),
                     prompt_version=getattr(rules, "prompt_version", ""))


def action_json(action: Bet | Sell) -> dict[str, Any]:
    if isinstance(action, Bet):
        return {"type": "BET", "market_id": action.market_id, "outcome": action.outcome,
                "amount": str(action.amount.to_decimal()), "stated_probability": action.stated_probability,
                "rationale": action.rationale}
    return {"type": "SELL", "market_id": action.market_id, "outcome": action.outcome,
            "fraction": str(action.fraction), "rationale": action.rationale}


def decide_one(engine: Engine, cohort: CohortRow, agent_row: AgentRow, agent: Agent, round_key: str,
               as_of: datetime, forecast_k: int = 20, books: BookSource | None = None,
               market_state: tuple[dict[str, Market], dict[str, Quote]] | None = None, *,
               lease: LeasePolicy | None = None, retry_below: int = 0,
               beat: ClaimBeat | None = None) -> DecisionOutcome:
    """One agent's decision for the round. `books` (token id → order book) makes Polymarket orders walk the
    live CLOB book; without it every order fills at the venue probability. `retry_below`: a failed decision
    is tried again while its attempts are fewer (0: never). `beat` renews the claim's lease while it runs."""
    c, why = claim_decision(engine, cohort.id, agent_row.id, round_key, as_of, lease=lease,  # type: ignore[arg-type]
                            retry_below=retry_below)
    if c is None:
        return DecisionOutcome(agent_row.name, why)
    return decide_claimed(engine, cohort, agent_row, agent, c, as_of, forecast_k, books, market_state, beat=beat)


def decide_claimed(engine: Engine, cohort: CohortRow, agent_row: AgentRow, agent: Agent, c: Claim,
                   as_of: datetime, forecast_k: int = 20, books: BookSource | None = None,
                   market_state: tuple[dict[str, Market], dict[str, Quote]] | None = None, *,
                   beat: ClaimBeat | None = None) -> DecisionOutcome:
    """The decision of a seat already claimed (by `claim_decision` or the decision queue): ask, execute,
    record — written only while the claim is still this runner's. `beat` renews the claim's lease meanwhile."""
    if beat is not None:
        beat.hold(c)
    try:
        return _decide_claimed(engine, cohort, agent_row, agent, c, as_of, forecast_k, books, market_state)
    finally:
        if beat is not None:
            beat.release(c)


def _decide_claimed(engine: Engine, cohort: CohortRow, agent_row: AgentRow, agent: Agent, c: Claim,
                    as_of: datetime, forecast_k: int, books: BookSource | None,
                    market_state: tuple[dict[str, Market], dict[str, Quote]] | None) -> DecisionOutcome:
    decision_id = c.decision_id
    rules = cohort_rules(cohort)
    with Session(engine, expire_on_commit=False) as s:
        ledger = repo.ledger_for(s, agent_row, cohort)
        markets, quotes = market_state if market_state is not None else tradable_markets(s, as_of)
        round_key = s.exec(select(DecisionRow.round_key).where(DecisionRow.id == decision_id)).one()
    asked = round_set(engine, cohort, round_key, as_of, markets, quotes, forecast_k)  # the stored set, or chosen now
    with Session(engine, expire_on_commit=False) as s:
        view = build_view(s, ledger, str(agent_row.id), as_of, rules, markets, quotes, asked.market_ids)
        view = replace(view, facts=StoreMarketFacts(engine, as_of))  # what tools may read: as of the decision
        pricer = pricer_for(s, markets, quotes, books)
    k = replicates_of(agent_row)
    if c.attempt > 1:  # taken over or retried: calls a previous runner left in flight never got a reply
        with session_scope(engine) as s:
            if hold(s, decision_id, c.token):
                abandon_in_flight(s, decision_id)
    journal = StoreCallJournal(engine, decision_id, c.token, c.attempt, 1, as_of)
    decision, error = _ask(agent, replace(view, journal=journal))  # replicate 1: the executed one
    if k > 1 and not _record_replicates(engine, agent_row, agent, c, view, markets, quotes, as_of, k):
        complete_journaled(engine, journal, decision.calls)
        return DecisionOutcome(agent_row.name, "lost", attempt=c.attempt)
    if decision.error and not error:  # the model's output was given up on: a HOLD, with the reason kept
        error = decision.error
        decision = Decision(forecasts=decision.forecasts, reasoning=decision.reasoning, calls=decision.calls,
                            error=decision.error, failed=decision.failed)
    execution = broker.execute(decision, ledger, markets, pricer, rules, as_of, str(decision_id))
    bad_forecasts = {mid: p for mid, p in decision.forecasts.items()
                     if mid not in markets or not (0.0 <= float(p) <= 1.0)}
    if error and (decision.failed or not decision.calls):  # no decision could be had: retryable
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
            .where(col(DecisionRow.id) == decision_id, col(DecisionRow.status) == "claimed",
                   DecisionRow.claimed_by == c.token)
            .values(status=status, cash_at_start_micros=execution.cash_at_start.micros,
                    max_bet_micros=execution.max_bet.micros, actions=[action_json(a) for a in decision.actions],
                    reasoning=decision.reasoning, error=error, completed_at=as_of, lease_until=None)
        )
        lost = done.rowcount != 1  # our lease expired and another runner took the decision over
        if not lost:
            _write_decision(s, cohort, agent_row, c, decision, error, status, execution, bad_forecasts, quotes,
                            as_of, journal, k)
    if lost:
        complete_journaled(engine, journal, decision.calls)
        return DecisionOutcome(agent_row.name, "lost", attempt=c.attempt)
    return DecisionOutcome(agent_row.name, status, len(execution.fills), len(execution.rejections), c.attempt)


def _write_decision(s: Session, cohort: CohortRow, agent_row: AgentRow, c: Claim, decision: Decision, error: str,
                    status: str, execution: broker.Execution, bad_forecasts: Mapping[str, Any],
                    quotes: Mapping[str, Quote], as_of: datetime, journal: StoreCallJournal, k: int) -> None:
    """Everything the completed decision adds besides its row: fills, its try, its calls, rejections and
    forecasts (inside the transaction that completed the row)."""
    decision_id = c.decision_id
    repo.add_fills(s, execution.fills, cohort.id)  # type: ignore[arg-type]
    s.add(DecisionAttemptRow(decision_id=decision_id, attempt=c.attempt, status=status, error=error,
                             runner=c.token, model_calls=len(decision.calls), as_of=as_of))
    # a retry's calls are numbered after the earlier tries' (which are kept)
    record_calls(s, decision_id, c.attempt, 1, decision.calls, as_of, journal,
                 numbered_after=c.attempt > 1 or k > 1, failure=error)
    if k > 1:
        s.add(DecisionReplicateRow(decision_id=decision_id, replicate=1, status=status,
                                   actions=[action_json(a) for a in decision.actions],
                                   reasoning=decision.reasoning, error=error, decision_attempt=c.attempt,
                                   model_calls=len(decision.calls), as_of=as_of))
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


def replicates_of(agent_row: AgentRow) -> int:
    """How many independent asks the seat's frozen lineup entry asks for (1 when it says nothing)."""
    k = (agent_row.config or {}).get("replicates", 1)
    return k if isinstance(k, int) and not isinstance(k, bool) and k >= 1 else 1


def _ask(agent: Agent, view: AgentView) -> tuple[Decision, str]:
    """The agent's decision, with anything token-like scrubbed from its texts (whatever the agent: what it
    writes is stored, rendered, exported and backed up), or a failed one with the reason."""
    try:
        return scrub_decision(agent.decide(view)), ""
    except Exception as exc:  # the agent's failure is recorded as failed with the reason, never lost
        return Decision(reasoning="", failed=True), scrub(f"{type(exc).__name__}: {exc}")


def _record_replicates(engine: Engine, agent_row: AgentRow, agent: Agent, c: Claim, view: AgentView,
                       markets: Mapping[str, Market], quotes: Mapping[str, Quote], as_of: datetime, k: int) -> bool:
    """Ask replicates 2..k not yet recorded for the decision (a failed one again), committing each as it
    answers; False when the claim was lost to another runner meanwhile (nothing more is written)."""
    with Session(engine) as s:
        done = dict(s.exec(select(DecisionReplicateRow.replicate, DecisionReplicateRow.status)
                           .where(DecisionReplicateRow.decision_id == c.decision_id)).all())
    for r in range(2, k + 1):
        if r in done and done[r] != "failed":
            continue
        journal = StoreCallJournal(engine, c.decision_id, c.token, c.attempt, r, as_of)
        decision, error = _ask(agent, dataclasses.replace(view, replicate=r, journal=journal))
        error = error or decision.error
        status = ("failed" if error and (decision.failed or not decision.calls)
                  else "hold" if error or decision.is_hold else "answered")
        with session_scope(engine) as s:
            # re-check (and lock) the claim: only its holder writes
            lost = not hold(s, c.decision_id, c.token)
            if not lost:
                _write_replicate(s, c, r, r in done, status, decision, error, journal, agent_row, markets, quotes,
                                 as_of)
        if lost:  # the claim was taken over meanwhile: only the calls this ask made are completed
            complete_journaled(engine, journal, decision.calls)
            return False
    return True


def _write_replicate(s: Session, c: Claim, r: int, again: bool, status: str, decision: Decision, error: str,
                     journal: StoreCallJournal, agent_row: AgentRow, markets: Mapping[str, Market],
                     quotes: Mapping[str, Quote], as_of: datetime) -> None:
    """Replicate r's row (`again`: replacing a failed one), calls and stated forecasts."""
    values = dict(status=status, actions=[action_json(a) for a in decision.actions],
                  reasoning=decision.reasoning, error=error, decision_attempt=c.attempt,
                  model_calls=len(decision.calls), as_of=as_of)
    if again:
        s.execute(update(DecisionReplicateRow)
                  .where(col(DecisionReplicateRow.decision_id) == c.decision_id,
                         DecisionReplicateRow.replicate == r).values(**values))
    else:
        s.add(DecisionReplicateRow(decision_id=c.decision_id, replicate=r, **values))
    record_calls(s, c.decision_id, c.attempt, r, decision.calls, as_of, journal, numbered_after=True, failure=error)
    if status != "failed":
        for mid, p in decision.forecasts.items():
            if mid in markets and 0.0 <= float(p) <= 1.0:
                s.add(_forecast_row(c.decision_id, agent_row.id, mid, "forecast_set", float(p), quotes, as_of,
                                    replicate=r))


def _forecast_row(decision_id: int, agent_id: int | None, market_id: str, source: str, p: float,
                  quotes: Mapping[str, Quote], as_of: datetime, replicate: int = 1) -> ForecastRow:
    q = quotes.get(market_id)
    price = q.prices.get(YES) if q is not None else None
    return ForecastRow(decision_id=decision_id, agent_id=agent_id, market_id=market_id, source=source,
                       probability=p, market_price_ppm=price.ppm if price is not None else None, as_of=as_of,
                       replicate=replicate)


def run_round(engine: Engine, cohort: CohortRow, agents: Mapping[str, Agent], round_key: str, as_of: datetime,
              forecast_k: int = 20, concurrency: int = 8, books: BookSource | None = None, *,
              lease: LeasePolicy | None = None, retry_below: int = 0) -> list[DecisionOutcome]:
    """Every agent of `cohort` decides once for `round_key`, up to `concurrency` at a time, so a round of
    model agents takes about as long as its slowest agent. Agents without an implementation are reported
    as "no_agent". Outcomes come back in lineup order. One heartbeat renews the leases of the decisions in
    progress; `retry_below` lets failed decisions be tried again (see `decide_one`)."""
    lease = lease or LeasePolicy.from_env()
    if books is not None and not isinstance(books, RoundBooks):
        books = RoundBooks(books)  # each book fetched once for the whole round, shared by its agents
    with Session(engine) as s:
        rows = agents_of(s, cohort.id)  # type: ignore[arg-type]
        state = tradable_markets(s, as_of)  # the same for every agent of the round: read once
    round_set(engine, cohort, round_key, as_of, *state, forecast_k)  # chosen and stored before any seat is asked
    beat = ClaimBeat(engine, lease)

    def one(row: AgentRow) -> DecisionOutcome:
        impl = agents.get(row.name)
        if impl is None:
            return DecisionOutcome(row.name, "no_agent")
        return decide_one(engine, cohort, row, impl, round_key, as_of, forecast_k, books, state, lease=lease,
                          retry_below=retry_below, beat=beat)

    with Heartbeat(beat.renew, lease.heartbeat_every, name="lease-decisions"):
        if concurrency <= 1 or len(rows) <= 1:
            return [one(r) for r in rows]
        with ThreadPoolExecutor(max_workers=min(concurrency, len(rows)), thread_name_prefix="decide") as pool:
            return list(pool.map(one, rows))
