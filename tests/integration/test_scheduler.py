"""The scheduler on an injected clock: jobs fire when due, missed runs coalesce, a period runs once even with
two schedulers on one database, and a failed run is retried by the next tick."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import apscheduler.executors.base
import apscheduler.schedulers.base
import pytest
from sqlalchemy import select
from sqlmodel import Session

from arena.clock import FixedClock
from arena.domain.decision import Bet, Decision
from arena.domain.market import YES, Market, Quote, Resolution
from arena.domain.sizing import CohortRules
from arena.money import Money, Price
from arena.usecases import decide, ingest
from arena.usecases.cohorts import LineupEntry, start_cohort
from arena.store.engine import session_scope
from arena.store.tables import FillRow, JobRunRow, PortfolioSnapshotRow
from arena.jobs import runtime
from arena.jobs.scheduler import build_scheduler, run_now

SAT_2300 = datetime(2026, 1, 3, 23, 0, 5, tzinfo=timezone.utc)


class FakeDatetime(datetime):
    """APScheduler reads `datetime.now`; in these tests that is the injected clock."""

    clock: FixedClock

    @classmethod
    def now(cls, tz=None):  # type: ignore[override]
        t = cls.clock.now()
        return t.astimezone(tz) if tz is not None else t.replace(tzinfo=None)


@pytest.fixture
def clock(engine, monkeypatch, tmp_path):
    c = FixedClock(SAT_2300)
    FakeDatetime.clock = c
    monkeypatch.setattr(apscheduler.schedulers.base, "datetime", FakeDatetime)
    monkeypatch.setattr(apscheduler.executors.base, "datetime", FakeDatetime)
    runtime.configure(runtime.Runtime(engine, c, backup_dir=tmp_path / "backups"))
    return c


def runs(engine, job=None):
    with Session(engine) as s:
        q = select(JobRunRow).order_by(JobRunRow.id)
        if job:
            q = q.where(JobRunRow.job == job)
        return [(r.job, r.period_key, r.status) for r in s.scalars(q)]


def scheduler(only=("mark", "settle", "backup")):
    sch = build_scheduler(runtime.current(), manual=True, only=only)
    sch.start()
    return sch


def test_jobs_fire_when_due_and_missed_runs_coalesce(engine, clock):
    sch = scheduler()
    try:
        sch.tick()
        assert runs(engine) == []  # nothing is due at Saturday 23:00
        clock.set(datetime(2026, 1, 4, 0, 0, 30, tzinfo=timezone.utc))
        sch.tick()
        assert sorted(j for j, _, st in runs(engine) if st == "ok" and j != "render") == ["mark", "settle"]
        # the site is rendered after each of them (here without a site directory: recorded, nothing written)
        assert sorted(p.split("@")[0] for _, p, _ in runs(engine, "render")) == ["mark", "settle"]
        assert [p for _, p, _ in runs(engine, "mark")] == ["2026-01-04T00:00:00+00:00"]
        # three days pass unseen: each job runs once, for the latest period (coalesced), not once per miss
        clock.set(datetime(2026, 1, 7, 3, 35, tzinfo=timezone.utc))
        sch.tick()
        assert [p for _, p, _ in runs(engine, "mark")] == ["2026-01-04T00:00:00+00:00", "2026-01-07T00:00:00+00:00"]
        assert len(runs(engine, "settle")) == 2 and len(runs(engine, "backup")) == 1
        assert list((runtime.current().backup_dir or ".").glob("arena-*")) or engine.dialect.name != "sqlite"
    finally:
        sch.shutdown()


def test_a_second_run_in_the_same_period_changes_nothing(engine, clock):
    clock.set(datetime(2026, 1, 4, 0, 0, 30, tzinfo=timezone.utc))
    with session_scope(engine) as s:
        start_cohort(s, clock.now(), CohortRules(), [LineupEntry("a")], clock.now())
    assert run_now("mark").status == "ok"
    assert run_now("mark").status == "skipped"
    with Session(engine) as s:
        assert len(s.scalars(select(PortfolioSnapshotRow)).all()) == 1


def _position_in_resolved_market(engine, now):
    m = Market(id="sim:1", venue="sim", question="?", close_time=now + timedelta(days=7))
    with session_scope(engine) as s:
        ingest.record_observations(s, now, [m], [Quote("sim:1", {YES: Price.of("0.5")}, now, now, source="t")])
        cohort, _ = start_cohort(s, now, CohortRules(), [LineupEntry("a")], now)

    class Buy:
        name = "a"

        def decide(self, view):
            return Decision((Bet("sim:1", YES, Money.of(100)),))

    decide.run_round(engine, cohort, {"a": Buy()}, "r1", now)
    with session_scope(engine) as s:
        ingest.record_observations(s, now, resolutions=[("sim:1", Resolution.winner("sim:1", YES))])


def test_two_schedulers_on_one_database_do_not_double_settle(engine, clock):
    clock.set(datetime(2026, 1, 4, 1, 0, 5, tzinfo=timezone.utc))
    _position_in_resolved_market(engine, clock.now())
    barrier = threading.Barrier(2)
    outcomes = []

    def scheduler_process():
        barrier.wait()
        outcomes.append(run_now("settle").status)

    threads = [threading.Thread(target=scheduler_process) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["ok", "skipped"]
    # and two APScheduler instances sharing the job store: the second finds nothing left to do
    a, b = scheduler(("settle",)), scheduler(("settle",))
    try:
        clock.set(datetime(2026, 1, 4, 2, 0, 5, tzinfo=timezone.utc))
        a.tick()
        b.tick()
    finally:
        a.shutdown()
        b.shutdown()
    with Session(engine) as s:
        assert len(s.scalars(select(FillRow).where(FillRow.kind == "settle")).all()) == 1
    assert [st for _, _, st in runs(engine, "settle")] == ["ok", "ok"]


def test_a_failed_run_is_recorded_and_retried(engine, clock, monkeypatch):
    clock.set(datetime(2026, 1, 4, 1, 0, 5, tzinfo=timezone.utc))
    _position_in_resolved_market(engine, clock.now())
    import arena.jobs.settle

    real = arena.jobs.settle.settle_resolved
    monkeypatch.setattr(arena.jobs.settle, "settle_resolved", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("db gone")))
    out = run_now("settle")
    assert out.status == "failed" and "db gone" in out.error
    with Session(engine) as s:
        assert s.scalars(select(FillRow).where(FillRow.kind == "settle")).all() == []
    monkeypatch.setattr(arena.jobs.settle, "settle_resolved", real)
    assert run_now("settle").status == "ok"  # the same period, claimed again
    with Session(engine) as s:
        row = s.scalars(select(JobRunRow).where(JobRunRow.job == "settle")).one()
        assert (row.status, row.attempts) == ("ok", 2)
        assert len(s.scalars(select(FillRow).where(FillRow.kind == "settle")).all()) == 1
