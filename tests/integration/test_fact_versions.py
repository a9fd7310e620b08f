"""Fact versions (migration 0018): every write that can change what a cohort's pages or a market show raises
the cohort's or the market's version in the same transaction — through the arena's code or by hand in SQL —
and a write of bookkeeping only (a sync's hashes, a heartbeat's lease) does not."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError

from arena.domain.market import YES, Market, Quote, Resolution, ResolutionKind
from arena.money import Price
from arena.read.fact_versions import cohort_versions, market_versions
from arena.store.engine import session_scope
from arena.store.tables import (AgentRow, DecisionRow, FillRow, ForecastQuestionRow, ForecastRow, ModelCallRow,
                                PortfolioSnapshotRow, RejectionRow)
from arena.domain.sizing import CohortRules
from arena.usecases import ingest
from arena.usecases.cohorts import LineupEntry, start_cohort


@pytest.fixture
def arena(engine, one_bet_cohort):  # type: ignore[no-untyped-def]
    """The one-bet cohort (its agent holds YES on sim:1) and a second open cohort with no fact on sim:1."""
    cohort, t0, later = one_bet_cohort(engine, 2000)
    with session_scope(engine) as s:
        other, _ = start_cohort(s, t0, CohortRules(), [LineupEntry("b")], t0, name="other")
    return cohort.id, other.id, later


def _cv(engine) -> dict[int, int]:  # type: ignore[no-untyped-def]
    with engine.connect() as c:
        return cohort_versions(c, [r[0] for r in c.execute(text("SELECT id FROM cohorts"))])


def _mv(engine, market: str = "sim:1") -> int:  # type: ignore[no-untyped-def]
    with engine.connect() as c:
        return market_versions(c, [market])[market]


def _sql(engine, statement: str, **params) -> None:  # type: ignore[no-untyped-def]
    with engine.begin() as c:
        c.execute(text(statement), params)


def _ids(engine, cohort: int) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        agent = s.scalars(select(AgentRow).where(AgentRow.cohort_id == cohort)).one()
        decision = s.scalars(select(DecisionRow).where(DecisionRow.cohort_id == cohort)).one()
        return agent.id, decision.id  # type: ignore[return-value]


def test_a_round_through_the_arena_raised_the_cohort_and_the_markets_version(engine, arena):
    cohort, other, _ = arena
    versions = _cv(engine)
    assert versions[cohort] > versions[other] > 0  # the round's decision, fill and forecast on top of its creation
    assert _mv(engine) >= 2  # two price snapshots


def test_each_fact_of_a_cohort_raises_its_version_and_no_other(engine, arena):
    cohort, other, later = arena
    agent, decision = _ids(engine, cohort)
    writes = {
        "fill": FillRow(key="k-extra", cohort_id=cohort, agent_id=agent, market_id="sim:1", outcome=YES, kind="buy",
                        shares=1, cash_micros=-1, cost_micros=1, at=later),
        "decision": DecisionRow(cohort_id=cohort, agent_id=agent, round_key="r2", as_of=later, claimed_at=later),
        "forecast": ForecastRow(decision_id=decision, agent_id=agent, market_id="sim:1", source="forecast_set",
                                probability=0.5, as_of=later),
        "rejection": RejectionRow(decision_id=decision, action_index=-1, reason="x", message="m", at=later),
        "model call": ModelCallRow(decision_id=decision, attempt=1, prompt="p", at=later),
        "portfolio snapshot": PortfolioSnapshotRow(cohort_id=cohort, agent_id=agent, as_of=later, cash_micros=1,
                                                   positions_value_micros=0, total_value_micros=1),
        "forecast question": ForecastQuestionRow(cohort_id=cohort, round_key="r2", market_id="sim:1", position=0,
                                                 in_band=True, as_of=later),
    }
    for what, row in writes.items():
        before = _cv(engine)
        with session_scope(engine) as s:
            s.add(row)
        after = _cv(engine)
        assert after[cohort] > before[cohort], what
        assert after[other] == before[other], what


def test_one_statement_of_many_rows_raises_each_cohort_and_market_once_or_more(engine, arena):
    cohort, other, later = arena
    agent, _ = _ids(engine, cohort)
    with session_scope(engine) as s:
        other_agent = s.scalars(select(AgentRow).where(AgentRow.cohort_id == other)).one().id
    before = _cv(engine)
    _sql(engine, "INSERT INTO portfolio_snapshots (cohort_id, agent_id, as_of, cash_micros, positions_value_micros, "
                 "total_value_micros, open_positions, unpriced_positions, final) VALUES "
                 "(:c, :a, :t1, 1, 0, 1, 0, 0, false), (:c, :a, :t2, 1, 0, 1, 0, 0, false), "
                 "(:o, :b, :t1, 1, 0, 1, 0, 0, false)",
         c=cohort, a=agent, o=other, b=other_agent, t1=later, t2=later + timedelta(hours=1))
    after = _cv(engine)
    assert after[cohort] > before[cohort] and after[other] > before[other]
    market = _mv(engine)
    _sql(engine, "INSERT INTO price_snapshots (market_id, outcome, price_ppm, observed_at, fetched_at, source) "
                 "VALUES ('sim:1', 'YES', 1000, :t, :t, 'a'), ('sim:1', 'YES', 2000, :t, :t, 'b')",
         t=later + timedelta(hours=1))
    assert _mv(engine) > market


def test_hand_edits_raise_the_version_and_a_heartbeat_does_not(engine, arena):
    cohort, other, later = arena
    agent, decision = _ids(engine, cohort)
    edits = [
        ("UPDATE decisions SET reasoning = 'edited' WHERE id = :d", {"d": decision}),
        ("UPDATE forecasts SET probability = 0.2 WHERE decision_id = :d", {"d": decision}),
        ("INSERT INTO rejections (decision_id, action_index, reason, message, action, at) "
         "VALUES (:d, 0, 'hand', 'by hand', '{}', :t)", {"d": decision, "t": later}),
        ("DELETE FROM rejections WHERE decision_id = :d", {"d": decision}),
        ("INSERT INTO portfolio_snapshots (cohort_id, agent_id, as_of, cash_micros, positions_value_micros, "
         "total_value_micros, open_positions, unpriced_positions, final) VALUES (:c, :a, :t, 1, 0, 1, 0, 0, false)",
         {"c": cohort, "a": agent, "t": later}),
        ("UPDATE portfolio_snapshots SET total_value_micros = 2 WHERE cohort_id = :c", {"c": cohort}),
        ("UPDATE agents SET model_id = 'edited' WHERE id = :a", {"a": agent}),
        ("UPDATE cohorts SET status = 'completed' WHERE id = :c", {"c": cohort}),
    ]
    for statement, params in edits:
        before = _cv(engine)
        _sql(engine, statement, **params)
        after = _cv(engine)
        assert after[cohort] > before[cohort], statement
        assert after[other] == before[other], statement
    before = _cv(engine)
    _sql(engine, "UPDATE decisions SET lease_until = :t WHERE id = :d", t=later + timedelta(minutes=5), d=decision)
    assert _cv(engine) == before


def test_a_price_snapshot_raises_the_market_and_the_cohorts_holding_it_open(engine, arena):
    cohort, other, later = arena
    before, market = _cv(engine), _mv(engine)
    t = later + timedelta(hours=1)
    with session_scope(engine) as s:
        ingest.record_observations(s, t, quotes=[Quote("sim:1", {YES: Price.of("0.75")}, t, t, source="t")])
    after = _cv(engine)
    assert _mv(engine) > market
    assert after[cohort] > before[cohort]  # it holds YES on sim:1
    assert after[other] == before[other]  # nothing of it on sim:1
    # by hand: an inserted, edited and deleted snapshot each count
    for statement in ("INSERT INTO price_snapshots (market_id, outcome, price_ppm, observed_at, fetched_at, source) "
                      "VALUES ('sim:1', 'YES', 760000, :t, :t, 'hand')",
                      "UPDATE price_snapshots SET price_ppm = 770000 WHERE source = 'hand'",
                      "DELETE FROM price_snapshots WHERE source = 'hand'"):
        before, market = _cv(engine), _mv(engine)
        _sql(engine, statement, t=t + timedelta(minutes=1))
        assert _mv(engine) > market, statement
        assert _cv(engine)[cohort] > before[cohort], statement


def test_a_forecast_set_question_holds_a_market_and_a_completed_cohort_does_not(engine, arena):
    cohort, other, later = arena
    with session_scope(engine) as s:
        s.add(ForecastQuestionRow(cohort_id=other, round_key="r1", market_id="sim:1", position=0, in_band=True,
                                  as_of=later))
    _sql(engine, "UPDATE cohorts SET status = 'completed' WHERE id = :c", c=cohort)
    before, market = _cv(engine), _mv(engine)
    t = later + timedelta(hours=2)
    with session_scope(engine) as s:
        ingest.record_observations(s, t, quotes=[Quote("sim:1", {YES: Price.of("0.10")}, t, t, source="t")])
    after = _cv(engine)
    assert _mv(engine) > market
    assert after[other] > before[other]  # it asked sim:1 in a forecast set
    assert after[cohort] == before[cohort]  # completed: its own facts move it, not its markets'


def test_a_resolution_and_a_shown_field_raise_the_market_and_its_holders(engine, arena):
    cohort, other, later = arena
    t = later + timedelta(hours=3)
    before, market = _cv(engine), _mv(engine)
    with session_scope(engine) as s:
        ingest.record_observations(s, t, resolutions=[
            ("sim:1", Resolution("sim:1", ResolutionKind.WINNER, {YES: Price.of("1"), "NO": Price.of("0")},
                                 resolved_at=t, source="t"))])
    assert _mv(engine) > market
    assert _cv(engine)[cohort] > before[cohort]
    assert _cv(engine)[other] == before[other]
    before, market = _cv(engine), _mv(engine)
    m = Market(id="sim:1", venue="sim", question="A reworded question?", close_time=later + timedelta(days=27))
    with session_scope(engine) as s:
        ingest.record_observations(s, t, [m])
    assert _mv(engine) > market
    assert _cv(engine)[cohort] > before[cohort]
    assert _cv(engine)[other] == before[other]
    before, market = _cv(engine), _mv(engine)
    _sql(engine, "UPDATE markets SET category = 'by hand' WHERE id = 'sim:1'")
    assert _mv(engine) > market and _cv(engine)[cohort] > before[cohort]


def test_a_sync_that_changes_nothing_shown_raises_nothing(engine, arena):
    cohort, other, later = arena
    t = later + timedelta(minutes=30)  # the same price on the same day: no snapshot is stored
    m = Market(id="sim:1", venue="sim", question="?", close_time=later - timedelta(days=3) + timedelta(days=30))
    before, market = _cv(engine), _mv(engine)
    with session_scope(engine) as s:
        ingest.record_observations(s, t, [m], [Quote("sim:1", {YES: Price.of("0.70")}, t, t, source="t")])
    _sql(engine, "UPDATE markets SET updated_at = :t, content_hash = 'x', description_hash = 'y', quote_hash = 'z', "
                 "payload_hash = 'p', quote_at = :t WHERE id = 'sim:1'", t=t)
    assert _mv(engine) == market
    assert _cv(engine) == before


def test_versions_are_never_deleted(engine, arena):
    cohort, _, _ = arena
    for statement in ("DELETE FROM cohort_versions", "DELETE FROM market_versions"):
        with pytest.raises(DBAPIError):
            _sql(engine, statement)
    assert _cv(engine)[cohort] > 0 and _mv(engine) > 0
