"""Helpers for the web tests: a small simulated arena (2 weekly cohorts × 7 scripted agents, 2 decision weeks,
12 markets a week) written into the test database, stopped mid-way so some bets are resolved and some
positions are still open — plus hostile text (HTML in a market question, in reasoning, in a raw model response,
in sync and job errors) that every page must escape."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.agents.baselines import demo_lineup
from arena.domain.sizing import CohortRules
from arena.usecases.cohorts import LineupEntry
from arena.usecases.simulation import simulate
from arena.store.engine import session_scope
from arena.store.tables import (
    DecisionRow,
    FillRow,
    JobRunRow,
    MarketRow,
    ModelCallRow,
    RejectionRow,
    SyncErrorRow,
    SyncRunRow,
)
from arena.venues.simulated import SimulatedUniverse

START = datetime(2026, 1, 4, tzinfo=timezone.utc)  # a Sunday
XSS_QUESTION = "Will <script>document.title='pwned'</script> & <b>friends</b> win?"
XSS_REASONING = "Bet <b>big</b> <img src=x onerror=\"document.title='pwned'\"> since 1 < 2 && 3 > 2"
XSS_RAW = "<script>document.title='pwned'</script>{\"bets\": [\"<i>oops</i>\"]}"
XSS_PROMPT = "You are a forecaster. Market: <script>alert(1)</script>"


@dataclass(frozen=True)
class SimArena:
    engine: Engine
    as_of: datetime
    xss_market_id: str
    xss_agent_id: int
    xss_decision_id: int
    xss_question: str = XSS_QUESTION
    xss_reasoning: str = XSS_REASONING
    xss_raw: str = XSS_RAW


def populate(engine: Engine, *, days: int = 17, cohorts: int = 2, decision_weeks: int = 2,
             markets_per_week: int = 12, seed: int = 3) -> SimArena:
    universe = SimulatedUniverse.generate(seed, START, weeks=cohorts + decision_weeks,
                                          markets_per_week=markets_per_week)
    agents = demo_lineup(universe, seed)
    lineup = [LineupEntry(a.name, "scripted") for a in agents]
    report = simulate(engine, universe, {a.name: a for a in agents}, START, cohorts,
                      CohortRules(decision_weeks=decision_weeks), lineup, START + timedelta(days=days - 1),
                      forecast_k=10)
    as_of = START + timedelta(days=report.days)
    with session_scope(engine) as s:
        fill = s.scalars(select(FillRow).where(FillRow.kind == "buy").order_by(FillRow.id)).first()
        assert fill is not None and fill.decision_id is not None
        market = s.get(MarketRow, fill.market_id)
        assert market is not None
        market.question = XSS_QUESTION
        market.url = "javascript:document.title='pwned'"
        market.description = "<iframe src=x></iframe> description"
        s.add(market)
        decision = s.get(DecisionRow, fill.decision_id)
        assert decision is not None
        decision.reasoning = XSS_REASONING
        s.add(decision)
        s.add(ModelCallRow(decision_id=decision.id, attempt=1, prompt=XSS_PROMPT, raw_response=XSS_RAW, parsed=None,
                           error="no JSON object <found>", prompt_tokens=1200, completion_tokens=80,
                           cost_micros=1_234, latency_s=1.5, served_model="test/model", prompt_version="p-test",
                           at=decision.as_of))
        s.add(ModelCallRow(decision_id=decision.id, attempt=2, prompt=XSS_PROMPT + " (repair)",
                           raw_response='{"bets": []}', parsed={"bets": [], "note": "<ok>"}, prompt_tokens=1300,
                           completion_tokens=20, cost_micros=1_500, latency_s=0.8, served_model="test/model",
                           prompt_version="p-test", at=decision.as_of))
        s.add(RejectionRow(decision_id=decision.id, action_index=-1, reason="bad_forecast",
                           message="forecast for '<i>nope</i>' ignored", action={}, at=decision.as_of))
        run = SyncRunRow(venue="manifold", started_at=as_of, finished_at=as_of, status="ok", ok=3, skipped=1,
                         failed=1, markets_changed=2, snapshots_added=3)
        s.add(run)
        s.flush()
        s.add(SyncErrorRow(sync_run_id=run.id, venue="manifold", native_id="m<1>", kind="failed", field="probability",
                           message="not a number: <NaN>", payload_excerpt='{"probability": "<x>"}', at=as_of))
        s.add(JobRunRow(job="mark", period_key="2026-01-05", status="failed", started_at=as_of, finished_at=as_of,
                        error="Traceback: <boom>", counts={}, runner="host:1"))
        s.add(JobRunRow(job="mark", period_key="2026-01-06", status="ok", started_at=as_of - timedelta(seconds=2),
                        finished_at=as_of, counts={"snapshots": 14}, runner="host:1"))
        ids = (market.id, decision.agent_id, decision.id)
    return SimArena(engine, as_of, ids[0], ids[1], ids[2])


@pytest.fixture
def sim_arena(engine: Engine) -> SimArena:
    """The small simulated arena in the test database (on SQLite copied from one simulation per test process)."""
    from store_template import from_template

    return from_template(engine, "sim arena", populate, lambda arena, e: replace(arena, engine=e))


@pytest.fixture
def populate_arena() -> Callable[..., SimArena]:
    """`populate` itself, for tests that want a different size."""
    return populate
