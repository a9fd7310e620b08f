"""The store and the services on a real database (SQLite by default, PostgreSQL with ARENA_TEST_DATABASE_URL)."""

from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import delete, func, select, text, update
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlmodel import Session

from arena.domain.decision import Bet, Decision
from arena.domain.market import NO, YES, Market, Quote, Resolution
from arena.domain.sizing import CohortRules
from arena.money import Money, Price
from arena.usecases import decide, ingest, mark, settle
from arena.usecases.cohorts import LineupEntry, agents_of, start_cohort
from arena.ops.leases import LeasePolicy, wall_now
from arena.store import repo
from arena.store.engine import current_revision, head_revision, migrate, session_scope
from arena.store.tables import (
    DecisionRow,
    FillRow,
    ForecastRow,
    PortfolioSnapshotRow,
    RejectionRow,
    ResolutionRow,
)

T0 = datetime(2026, 1, 4, tzinfo=timezone.utc)
CLOSE = T0 + timedelta(days=14)


class Scripted:
    """A stand-in agent that returns a fixed decision (or raises)."""

    def __init__(self, name, decision=None, error=None):
        self.name, self.decision, self.error, self.calls = name, decision or Decision(), error, 0

    def decide(self, view):
        self.calls += 1
        if self.error:
            raise self.error
        return self.decision


def seed_market(engine, mid="sim:1", yes="0.40", at=T0):
    m = Market(id=mid, venue="sim", question=f"Will {mid} happen?", close_time=CLOSE, volume_24h=10.0)
    with session_scope(engine) as s:
        ingest.record_observations(s, at, [m], [Quote(mid, {YES: Price.of(yes)}, at, at, source="sim")])
    return m


def new_cohort(engine, names=("alice", "bob"), rules=CohortRules()):
    with session_scope(engine) as s:
        cohort, created = start_cohort(s, T0, rules, [LineupEntry(n) for n in names], T0)
        assert created
        return cohort


def test_migrations_are_versioned_and_idempotent(engine):
    assert current_revision(engine) == head_revision() != "0001"
    migrate(engine)
    assert current_revision(engine) == head_revision()
    migrate(engine, "0001")  # versions step down and up again
    assert current_revision(engine) == "0001"
    migrate(engine)
    assert current_revision(engine) == head_revision()


def test_fills_are_append_only_in_the_database(engine):
    seed_market(engine)
    cohort = new_cohort(engine)
    agent = Scripted("alice", Decision((Bet("sim:1", YES, Money.of(500)),)))
    decide.run_round(engine, cohort, {"alice": agent}, "w1", T0 + timedelta(minutes=5))
    with pytest.raises((DBAPIError, IntegrityError)):
        with session_scope(engine) as s:
            s.execute(update(FillRow).values(cash_micros=0))
    with pytest.raises((DBAPIError, IntegrityError)):
        with session_scope(engine) as s:
            s.execute(delete(FillRow))
    with Session(engine) as s:
        assert s.scalar(select(func.count()).select_from(FillRow)) == 1


def test_cohort_start_is_idempotent_and_freezes_lineup(engine):
    cohort = new_cohort(engine)
    with session_scope(engine) as s:
        again, created = start_cohort(s, T0, CohortRules(starting_cash=Money.of(1)), [LineupEntry("zed")], T0)
        assert not created and again.id == cohort.id
        assert [a.name for a in agents_of(s, cohort.id)] == ["alice", "bob"]
        assert again.starting_cash_micros == Money.of(10_000).micros


def test_round_trades_once_and_rerun_changes_nothing(engine):
    seed_market(engine)
    cohort = new_cohort(engine)
    alice = Scripted("alice", Decision((Bet("sim:1", YES, Money.of(500), stated_probability=0.6),),
                                       forecasts={"sim:1": 0.6}))
    bob = Scripted("bob")
    out = decide.run_round(engine, cohort, {"alice": alice, "bob": bob}, "w1", T0 + timedelta(minutes=5))
    assert [(o.agent, o.status, o.fills) for o in out] == [("alice", "executed", 1), ("bob", "hold", 0)]
    again = decide.run_round(engine, cohort, {"alice": alice, "bob": bob}, "w1", T0 + timedelta(minutes=6))
    assert {o.status for o in again} == {"skipped"} and alice.calls == 1
    with Session(engine) as s:
        fills = s.scalars(select(FillRow)).all()
        assert len(fills) == 1 and fills[0].shares == 1_250_000_000 and fills[0].cash_micros == -500_000_000
        forecasts = s.scalars(select(ForecastRow).order_by(ForecastRow.source)).all()
        assert [(f.source, f.probability, f.market_price_ppm) for f in forecasts] == [
            ("bet", 0.6, 400_000), ("forecast_set", 0.6, 400_000)]


def test_rejected_decision_stores_reasons_and_leaves_ledger_untouched(engine):
    seed_market(engine)
    seed_market(engine, "sim:2", "0.5")
    cohort = new_cohort(engine)
    bad = Scripted("alice", Decision((Bet("sim:1", YES, Money.of(100)), Bet("sim:2", NO, Money.of(3000)),
                                      Bet("sim:404", YES, Money.of(100)))))
    (out, *_) = decide.run_round(engine, cohort, {"alice": bad}, "w1", T0 + timedelta(minutes=5))
    assert out.status == "rejected" and out.fills == 0
    with Session(engine) as s:
        assert s.scalar(select(func.count()).select_from(FillRow)) == 0
        reasons = sorted(r.reason for r in s.scalars(select(RejectionRow)))
        assert reasons == ["over_max_bet", "unknown_market"]
        d = s.scalars(select(DecisionRow)).one()
        assert d.status == "rejected" and d.max_bet_micros == Money.of(2500).micros and len(d.actions) == 3


def test_agent_failure_is_recorded_as_hold_with_reason(engine):
    seed_market(engine)
    cohort = new_cohort(engine)
    boom = Scripted("alice", error=RuntimeError("model said nonsense"))
    (out, *_) = decide.run_round(engine, cohort, {"alice": boom}, "w1", T0)
    assert out.status == "failed"
    with Session(engine) as s:
        d = s.scalars(select(DecisionRow)).one()
        assert "model said nonsense" in d.error and d.status == "failed"


def test_crashed_claim_is_resumed_not_duplicated(engine):
    seed_market(engine)
    cohort = new_cohort(engine, names=("alice",))
    with Session(engine) as s:
        agent_row = agents_of(s, cohort.id)[0]
    # a runner claimed it five minutes ago with a one-second lease, then died before completing it
    dead = LeasePolicy(1.0, clock=lambda: wall_now() - timedelta(minutes=5))
    first = decide.claim(engine, cohort.id, agent_row.id, "w1", T0, lease=dead)
    assert first is not None
    alice = Scripted("alice", Decision((Bet("sim:1", YES, Money.of(100)),)))
    (out,) = decide.run_round(engine, cohort, {"alice": alice}, "w1", T0)
    assert (out.status, out.attempt) == ("executed", 2)
    with Session(engine) as s:
        assert s.scalar(select(func.count()).select_from(DecisionRow)) == 1
        assert s.scalar(select(func.count()).select_from(FillRow)) == 1


def test_a_live_claim_is_not_taken_over(engine):
    seed_market(engine)
    cohort = new_cohort(engine, names=("alice",))
    with Session(engine) as s:
        agent_row = agents_of(s, cohort.id)[0]
    assert decide.claim(engine, cohort.id, agent_row.id, "w1", T0, lease=LeasePolicy(60.0)) is not None
    alice = Scripted("alice", Decision((Bet("sim:1", YES, Money.of(100)),)))
    (out,) = decide.run_round(engine, cohort, {"alice": alice}, "w1", T0)
    assert out.status == "in_progress" and alice.calls == 0  # its holder is alive: left alone
    with Session(engine) as s:
        assert s.scalar(select(func.count()).select_from(FillRow)) == 0


def test_no_look_ahead_quotes_fetched_later_are_invisible(engine):
    seed_market(engine, yes="0.40", at=T0)
    with session_scope(engine) as s:
        ingest.record_observations(s, T0 + timedelta(days=1),
                                   quotes=[Quote("sim:1", {YES: Price.of("0.9")}, T0 + timedelta(hours=1),
                                                 T0 + timedelta(days=1), source="sim")])
    with Session(engine) as s:
        assert repo.latest_quotes(s, T0 + timedelta(hours=2))["sim:1"].yes_price() == Price.of("0.4")
        assert repo.latest_quotes(s, T0 + timedelta(days=2))["sim:1"].yes_price() == Price.of("0.9")


def test_ingest_twice_changes_nothing(engine):
    m = seed_market(engine)
    with session_scope(engine) as s:
        counts = ingest.record_observations(s, T0, [m], [Quote("sim:1", {YES: Price.of("0.40")}, T0, T0,
                                                               source="sim")],
                                            [("sim:1", None)])
    assert (counts.markets_changed, counts.snapshots_added, counts.resolutions_recorded) == (0, 0, 0)


def _bet_and_resolve(engine, resolution, outcome=YES, amount=500):
    seed_market(engine)
    cohort = new_cohort(engine, names=("alice",))
    alice = Scripted("alice", Decision((Bet("sim:1", outcome, Money.of(amount)),)))
    decide.run_round(engine, cohort, {"alice": alice}, "w1", T0 + timedelta(minutes=5))
    with session_scope(engine) as s:
        ingest.record_observations(s, CLOSE, resolutions=[("sim:1", resolution)])
    return cohort


def _cash(engine):
    with Session(engine) as s:
        return Money.of(10_000) + Money(int(s.scalar(select(func.sum(FillRow.cash_micros))) or 0))


def test_settlement_pays_winners_once(engine):
    _bet_and_resolve(engine, Resolution.winner("sim:1", YES, resolved_at=CLOSE))
    c1 = settle.settle_resolved(engine, CLOSE)
    c2 = settle.settle_resolved(engine, CLOSE + timedelta(hours=1))
    assert (c1.settled, c2.settled) == (1, 0)
    assert _cash(engine) == Money.of(10_750)


def test_void_market_refunds_and_cohort_completes_with_final_snapshot(engine):
    cohort = _bet_and_resolve(engine, Resolution.void("sim:1", resolved_at=CLOSE))
    assert settle.settle_resolved(engine, CLOSE).refunded == 1
    assert _cash(engine) == Money.of(10_000)
    assert settle.complete_cohorts(engine, CLOSE) == []  # decision window (5 weeks) not over yet
    end = T0 + timedelta(weeks=5)
    assert settle.complete_cohorts(engine, end) == [cohort.name]
    with Session(engine) as s:
        snap = s.scalars(select(PortfolioSnapshotRow).where(PortfolioSnapshotRow.final)).one()
        assert snap.total_value_micros == Money.of(10_000).micros and snap.open_positions == 0


def test_probabilistic_resolution_pays_p_per_yes_share(engine):
    _bet_and_resolve(engine, Resolution.probabilistic_yes("sim:1", Price.of("0.5")), outcome=NO, amount=600)
    settle.settle_resolved(engine, CLOSE)
    # 600 / 0.60 = 1,000 NO shares × 0.5 = $500
    assert _cash(engine) == Money.of(9_900)


def test_re_resolution_reverses_and_resettles_through_new_fills(engine):
    _bet_and_resolve(engine, Resolution.winner("sim:1", YES))
    settle.settle_resolved(engine, CLOSE)
    assert _cash(engine) == Money.of(10_750)
    with session_scope(engine) as s:  # the venue un-resolves the market ...
        ingest.record_observations(s, CLOSE + timedelta(days=1), resolutions=[("sim:1", None)])
    c = settle.settle_resolved(engine, CLOSE + timedelta(days=1))
    assert (c.reversed, c.settled) == (1, 0) and _cash(engine) == Money.of(9_500)
    with session_scope(engine) as s:  # ... and resolves it NO
        ingest.record_observations(s, CLOSE + timedelta(days=2), resolutions=[("sim:1", Resolution.winner("sim:1", NO))])
    c = settle.settle_resolved(engine, CLOSE + timedelta(days=2))
    assert (c.reversed, c.settled) == (0, 1) and _cash(engine) == Money.of(9_500)
    assert settle.settle_resolved(engine, CLOSE + timedelta(days=3)).settled == 0
    with Session(engine) as s:
        kinds = [f.kind for f in s.scalars(select(FillRow).order_by(FillRow.id))]
        assert kinds == ["buy", "settle", "reversal", "settle"]
        assert [r.kind for r in s.scalars(select(ResolutionRow).order_by(ResolutionRow.version))] == [
            "winner", "unresolved", "winner"]


def test_mark_to_market_values_positions_and_is_idempotent(engine):
    seed_market(engine)
    cohort = new_cohort(engine)
    alice = Scripted("alice", Decision((Bet("sim:1", YES, Money.of(2500)),)))
    decide.run_round(engine, cohort, {"alice": alice, "bob": Scripted("bob")}, "w1", T0 + timedelta(minutes=5))
    day1 = T0 + timedelta(days=1)
    with session_scope(engine) as s:
        ingest.record_observations(s, day1, quotes=[Quote("sim:1", {YES: Price.of("0.512")}, day1, day1, source="sim")])
    first = mark.mark_to_market(engine, day1)
    second = mark.mark_to_market(engine, day1)
    assert (first.snapshots_written, second.snapshots_written) == (2, 0)
    with Session(engine) as s:
        snaps = {r.agent_id: r for r in s.scalars(select(PortfolioSnapshotRow))}
    totals = sorted(r.total_value_micros for r in snaps.values())
    assert totals == [Money.of(10_000).micros, Money.of(10_700).micros]  # seed 001: 7,500 + 3,200


def test_failed_write_leaves_nothing_partial(engine):
    seed_market(engine)
    with pytest.raises(RuntimeError):
        with session_scope(engine) as s:
            ingest.record_observations(s, T0, [Market(id="sim:2", venue="sim", question="?")])
            raise RuntimeError("crash mid-transaction")
    with Session(engine) as s:
        assert repo.get_market(s, "sim:2") is None


def test_database_backend_is_the_one_asked_for(engine, db_url):
    with engine.connect() as c:
        if db_url.startswith("postgresql"):
            assert c.execute(text("select 1")).scalar() == 1 and engine.dialect.name == "postgresql"
        else:
            assert engine.dialect.name == "sqlite"
            assert c.execute(text("PRAGMA foreign_keys")).scalar() == 1
            assert c.execute(text("PRAGMA journal_mode")).scalar() == "wal"


def test_every_model_call_is_stored_and_a_given_up_reply_is_a_hold_with_reason(engine):
    from arena.domain.decision import ModelCall
    from arena.store.tables import ModelCallRow

    seed_market(engine)
    cohort = new_cohort(engine, names=("llm",))
    calls = (ModelCall(1, '[{"role":"user","content":"p"}]', "not json", None, "bad JSON", 100, 5, 0.0012, 0.4,
                       "vendor/model-a", "decision-v1"),
             ModelCall(2, '[{"role":"user","content":"p2"}]', '{"actions": 3}', {"actions": 3}, "actions must be a list",
                       120, 9, 0.0015, 0.5, "vendor/model-a", "decision-v1"))
    agent = Scripted("llm", Decision(calls=calls, error="no valid reply after 2 attempts"))
    (out,) = decide.run_round(engine, cohort, {"llm": agent}, "w1", T0)
    assert out.status == "hold"
    with Session(engine) as s:
        d = s.scalars(select(DecisionRow)).one()
        assert d.error == "no valid reply after 2 attempts"
        rows = s.scalars(select(ModelCallRow).order_by(ModelCallRow.attempt)).all()
        assert [(r.attempt, r.error, r.cost_micros, r.served_model) for r in rows] == [
            (1, "bad JSON", 1200, "vendor/model-a"), (2, "actions must be a list", 1500, "vendor/model-a")]
        assert rows[1].parsed == {"actions": 3}


def test_round_runs_agents_concurrently(engine):
    import threading
    import time as _time

    seed_market(engine)
    names = tuple(f"a{i}" for i in range(6))
    cohort = new_cohort(engine, names=names)
    barrier = threading.Barrier(6, timeout=5)

    class Waits(Scripted):
        def decide(self, view):
            barrier.wait()  # only passes if all six are deciding at the same time
            return Decision()

    t = _time.perf_counter()
    out = decide.run_round(engine, cohort, {n: Waits(n) for n in names}, "w1", T0, concurrency=6)
    assert [o.status for o in out] == ["hold"] * 6 and _time.perf_counter() - t < 5
