"""Self-healing jobs: kill -9 a real child process in the middle of `decision_round`, `settle` and `mark`
(SQLite, or PostgreSQL with ARENA_TEST_DATABASE_URL); once its lease has expired the next tick takes the
period over and completes it — nothing lost, duplicated or stuck, fills unique, and every agent's cash equals
its bankroll plus the sum of its fills' cash flows. Then leases and retries in-process."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlmodel import Session

import healing_child
from arena.clock import FixedClock, utc
from arena.config import default_config, parse_config
from arena.domain.market import NO, YES, Market, Quote, Resolution
from arena.domain.sizing import CohortRules
from arena.money import Price
from arena.usecases import decide, ingest, lifecycle
from arena.usecases.cohorts import LineupEntry, start_cohort
from arena.ops.leases import LeasePolicy, wall_now
from arena.ops.operations import claim, run_once
from arena.store.engine import session_scope
from arena.store.tables import (
    AgentRow,
    CohortRow,
    DecisionAttemptRow,
    DecisionRow,
    FillRow,
    JobRunRow,
    ModelCallRow,
    PortfolioSnapshotRow,
)
from arena.jobs import runtime
from arena.jobs.scheduler import run_now

CHILD = Path(healing_child.__file__)
T0 = datetime(2026, 1, 4, 0, 5, tzinfo=timezone.utc)  # a Sunday, five past midnight
SEATS = ("a", "b", "blocker")
RULES = CohortRules(decision_weeks=1)


def seed(engine) -> CohortRow:  # type: ignore[no-untyped-def]
    markets = [Market(id=f"sim:{i}", venue="sim", question=f"q{i}?", close_time=T0 + timedelta(days=3),
                      volume_24h=10.0 * i) for i in (1, 2)]
    quotes = [Quote(m.id, {YES: Price.of("0.40")}, T0 - timedelta(hours=1), T0 - timedelta(hours=1), source="t")
              for m in markets]
    with session_scope(engine) as s:
        ingest.record_observations(s, T0 - timedelta(hours=1), markets, quotes)
        cohort, _ = start_cohort(s, T0 - timedelta(minutes=5), RULES, [LineupEntry(n) for n in SEATS], T0)
        return cohort


def bet_round(engine, cohort) -> None:  # type: ignore[no-untyped-def]
    agents = {n: healing_child.Better(n) for n in SEATS}
    outs = decide.run_round(engine, cohort, agents, "2026-01-04", T0)
    assert {o.status for o in outs} == {"executed"}


def kill_mid_job(job: str, db_url: str, at: datetime, tmp_path: Path) -> None:
    """Start the job in a child with a one-second lease, wait until it is blocked mid-job, kill -9 it."""
    marker = tmp_path / f"{job}.blocked"
    env = dict(os.environ, ARENA_LEASE_SECONDS="1")
    proc = subprocess.Popen([sys.executable, str(CHILD), job, db_url, at.isoformat(), str(marker)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            if proc.poll() is not None:
                out, err = proc.communicate()
                pytest.fail(f"the child ended before blocking: {out.decode()} {err.decode()[-3000:]}")
            assert time.monotonic() < deadline, "the child never reached the middle of the job"
            time.sleep(0.02)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL


def job_run(engine, job: str) -> JobRunRow:  # type: ignore[no-untyped-def]
    with Session(engine) as s:
        return s.scalars(select(JobRunRow).where(JobRunRow.job == job)).one()


def wait_out_leases(engine) -> None:  # type: ignore[no-untyped-def]
    """Sleep until every lease the dead child held has expired (read from the database: no guessing)."""
    with Session(engine) as s:
        leases = [utc(t) for t in s.scalars(select(JobRunRow.lease_until)) if t is not None]
        leases += [utc(t) for t in s.scalars(select(DecisionRow.lease_until)) if t is not None]
    if leases:
        time.sleep(max(0.0, (max(leases) - wall_now()).total_seconds()) + 0.05)


def next_tick(engine, at: datetime, monkeypatch, job: str):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(lifecycle, "build_agent", healing_child.scripted_agent)
    runtime.configure(runtime.Runtime(engine, FixedClock(at), config=default_config()))
    return run_now(job)


def assert_books_balance(engine) -> None:  # type: ignore[no-untyped-def]
    """Fills unique; nothing stuck; cash = bankroll + Σ fill cash flows (and never negative)."""
    with Session(engine) as s:
        keys = s.scalars(select(FillRow.key)).all()
        assert len(keys) == len(set(keys))
        assert s.scalar(select(func.count()).select_from(JobRunRow).where(JobRunRow.status == "running")) == 0
        assert s.scalar(select(func.count()).select_from(DecisionRow).where(DecisionRow.status == "claimed")) == 0
        for agent in s.scalars(select(AgentRow)):
            cohort = s.get(CohortRow, agent.cohort_id)
            flows = s.scalar(select(func.coalesce(func.sum(FillRow.cash_micros), 0))
                             .where(FillRow.agent_id == agent.id))
            cash = cohort.starting_cash_micros + int(flows)
            assert cash >= 0
            for snap in s.scalars(select(PortfolioSnapshotRow).where(PortfolioSnapshotRow.agent_id == agent.id)):
                assert snap.cash_micros == cash


def test_killed_decision_round_is_taken_over_after_its_lease(engine, db_url, tmp_path, monkeypatch):
    cohort = seed(engine)
    kill_mid_job("decision_round", db_url, T0, tmp_path)
    with Session(engine) as s:  # the child died with two decisions written and the blocker's claimed
        assert sorted(s.scalars(select(DecisionRow.status))) == ["claimed", "executed", "executed"]
        assert s.scalar(select(func.count()).select_from(FillRow)) == 4
    assert job_run(engine, "decision_round").status == "running"
    assert next_tick(engine, T0, monkeypatch, "decision_round").status == "skipped"  # its lease still holds
    wait_out_leases(engine)
    out = next_tick(engine, T0 + timedelta(hours=1), monkeypatch, "decision_round")
    assert out.status == "ok" and out.counts[cohort.name] == {"executed": 1, "skipped": 2}
    run = job_run(engine, "decision_round")
    assert (run.status, run.attempts) == ("ok", 2)
    with Session(engine) as s:
        decisions = {d.agent_id: d for d in s.scalars(select(DecisionRow))}
        names = {a.id: a.name for a in s.scalars(select(AgentRow))}
        assert sorted((names[k], d.status, d.attempts) for k, d in decisions.items()) == [
            ("a", "executed", 1), ("b", "executed", 1), ("blocker", "executed", 2)]
        per_agent = s.execute(select(FillRow.agent_id, func.count()).group_by(FillRow.agent_id)).all()
        assert sorted(n for _, n in per_agent) == [2, 2, 2]  # one bet per market per agent, none twice
    assert_books_balance(engine)


def test_killed_settle_is_completed_by_the_next_tick(engine, db_url, tmp_path, monkeypatch):
    cohort = seed(engine)
    bet_round(engine, cohort)
    at = T0 + timedelta(days=8)
    with session_scope(engine) as s:
        ingest.record_observations(s, at - timedelta(days=1), resolutions=[
            ("sim:1", Resolution.winner("sim:1", YES)), ("sim:2", Resolution.winner("sim:2", NO))])
    kill_mid_job("settle", db_url, at, tmp_path)
    with Session(engine) as s:  # settled, but the cohort not yet completed
        assert s.scalar(select(func.count()).select_from(FillRow).where(FillRow.kind == "settle")) == 6
        assert s.get(CohortRow, cohort.id).status == "open"
    wait_out_leases(engine)
    out = next_tick(engine, at, monkeypatch, "settle")
    assert out.status == "ok" and out.counts["settled"] == 0 and out.counts["completed_cohorts"] == [cohort.name]
    assert job_run(engine, "settle").attempts == 2
    with Session(engine) as s:
        assert s.scalar(select(func.count()).select_from(FillRow).where(FillRow.kind == "settle")) == 6
        assert s.get(CohortRow, cohort.id).status == "completed"
        finals = s.scalars(select(PortfolioSnapshotRow).where(PortfolioSnapshotRow.final)).all()
        assert len(finals) == 3 and all(f.open_positions == 0 for f in finals)
    assert_books_balance(engine)


def test_killed_mark_is_completed_by_the_next_tick(engine, db_url, tmp_path, monkeypatch):
    cohort = seed(engine)
    bet_round(engine, cohort)
    at = T0 + timedelta(days=1)
    kill_mid_job("mark", db_url, at, tmp_path)
    with Session(engine) as s:
        assert s.scalar(select(func.count()).select_from(PortfolioSnapshotRow)) == 0
    wait_out_leases(engine)
    out = next_tick(engine, at, monkeypatch, "mark")
    assert out.status == "ok" and out.counts["snapshots"] == 3
    assert job_run(engine, "mark").attempts == 2
    assert next_tick(engine, at, monkeypatch, "mark").status == "skipped"
    with Session(engine) as s:
        assert s.scalar(select(func.count()).select_from(PortfolioSnapshotRow)) == 3
    assert_books_balance(engine)


# --- in-process: leases and retries ---------------------------------------------------------------------------


def test_a_heartbeat_keeps_a_long_job_claimed_and_a_dead_one_is_taken_over(engine):
    clock = FixedClock(T0)
    lease = LeasePolicy(0.3)
    seen = []

    def body():  # runs for several leases: the heartbeat must keep renewing the claim meanwhile
        first = job_run(engine, "j").heartbeat_at
        deadline = time.monotonic() + 10
        while job_run(engine, "j").heartbeat_at == first and time.monotonic() < deadline:
            time.sleep(0.02)
        seen.append(run_once(engine, "j", "p", clock, lambda: {}, lease=lease).status)
        return {}

    assert run_once(engine, "j", "p", clock, body, lease=lease).status == "ok"
    assert seen == ["skipped"]  # a renewed lease: the second claimant stays out
    dead = LeasePolicy(1.0, clock=lambda: wall_now() - timedelta(minutes=5))  # claimed, then the holder died
    assert claim(engine, "k", "q", T0, dead) is not None
    assert claim(engine, "k", "q", T0, lease) is not None  # its lease long expired: taken over
    assert claim(engine, "k", "q", T0, lease) is None  # but not from a live holder
    assert job_run(engine, "k").attempts == 2


class Flaky:
    """Fails (as an unreachable endpoint would) `failures` times, then bets."""

    def __init__(self, name: str, failures: int) -> None:
        self.name, self.failures = name, failures

    def decide(self, view):  # type: ignore[no-untyped-def]
        if self.failures:
            self.failures -= 1
            raise ConnectionError("model endpoint unreachable")
        return healing_child.Better(self.name).decide(view)


def config(attempts: int = 3, window: int = 24):  # type: ignore[no-untyped-def]
    return parse_config(f"[operations]\ndecision_attempts = {attempts}\nretry_window_hours = {window}\n")


def test_failed_decisions_are_retried_by_later_ticks_a_bounded_number_of_times(engine, monkeypatch):
    seed(engine)
    flaky = {"a": Flaky("a", 2), "b": Flaky("b", 5), "blocker": Flaky("blocker", 0)}
    monkeypatch.setattr(lifecycle, "build_agent", lambda row, *a, **k: flaky[row.name])
    runtime.configure(runtime.Runtime(engine, clock := FixedClock(T0), config=config(attempts=3)))
    statuses = []
    for _ in range(5):
        out = run_now("decision_round")
        statuses.append((out.status, out.counts.get("pending")))
        clock.advance(timedelta(hours=1))
    # ticks 1 and 2 leave failures to retry; tick 3 is a's third (successful) try and b's last failed one
    assert statuses == [("incomplete", 2), ("incomplete", 2), ("ok", 0), ("skipped", None), ("skipped", None)]
    with Session(engine) as s:
        names = {a.id: a.name for a in s.scalars(select(AgentRow))}
        got = {names[d.agent_id]: (d.status, d.attempts) for d in s.scalars(select(DecisionRow))}
        assert got == {"a": ("executed", 3), "b": ("failed", 3), "blocker": ("executed", 1)}
        tries = [(names[s.get(DecisionRow, t.decision_id).agent_id], t.attempt, t.status)
                 for t in s.scalars(select(DecisionAttemptRow).order_by(DecisionAttemptRow.id))]
        assert sorted(tries) == [("a", 1, "failed"), ("a", 2, "failed"), ("a", 3, "executed"),
                                 ("b", 1, "failed"), ("b", 2, "failed"), ("b", 3, "failed"),
                                 ("blocker", 1, "executed")]
        errors = [d.error for d in s.scalars(select(DecisionRow)) if d.status == "failed"]
        assert errors and "unreachable" in errors[0]
    assert_books_balance(engine)


def test_no_retry_outside_the_window_and_retry_failed_by_hand(engine, monkeypatch):
    seed(engine)
    flaky = {"a": Flaky("a", 1), "b": Flaky("b", 0), "blocker": Flaky("blocker", 0)}
    monkeypatch.setattr(lifecycle, "build_agent", lambda row, *a, **k: flaky[row.name])
    cfg = config(attempts=3, window=0)  # the window closes at the round's start: no automatic retries
    out = lifecycle.decision_round(engine, T0, cfg, {})
    assert sorted(o.status for outs in out.values() for o in outs) == ["executed", "executed", "failed"]
    again = lifecycle.decision_round(engine, T0 + timedelta(hours=1), cfg, {})
    assert sorted(o.status for outs in again.values() for o in outs) == ["skipped"] * 3
    by_hand = lifecycle.decision_round(engine, T0 + timedelta(hours=2), cfg, {}, retry_failed=True)
    assert sorted((o.agent, o.status, o.attempt) for outs in by_hand.values() for o in outs) == [
        ("a", "executed", 2), ("b", "skipped", 0), ("blocker", "skipped", 0)]
    assert_books_balance(engine)


def test_a_claim_stranded_by_a_killed_round_command_is_resumed_by_the_next_tick(engine, monkeypatch):
    cohort = seed(engine)
    seated = {"a", "b"}  # the blocker's seat is not run by the job's first tick ...
    monkeypatch.setattr(lifecycle, "build_agent",
                        lambda row, *a, **k: healing_child.Better(row.name) if row.name in seated else None)
    runtime.configure(runtime.Runtime(engine, clock := FixedClock(T0), config=default_config()))
    assert run_now("decision_round").status == "ok"
    with Session(engine) as s:  # ... but by an `arena round` that was killed after claiming it
        blocker = s.scalars(select(AgentRow).where(AgentRow.name == "blocker")).one()
    dead = LeasePolicy(1.0, clock=lambda: wall_now() - timedelta(minutes=5))
    assert decide.claim(engine, cohort.id, blocker.id, "2026-01-04", T0, lease=dead) is not None
    seated.add("blocker")
    clock.advance(timedelta(hours=1))
    out = run_now("decision_round")
    assert out.status == "ok" and out.counts[cohort.name] == {"executed": 1, "skipped": 2}
    assert job_run(engine, "decision_round").attempts == 2
    clock.advance(timedelta(hours=1))
    assert run_now("decision_round").status == "skipped"  # nothing left: the finished run stays finished
    assert_books_balance(engine)


# --- the render children die with the scheduler -----------------------------------------------------------------


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in state  # killed, not yet reaped by init


def _wait_gone(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while not _gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


CHILD_OF_KILLED = """
import sys, threading, time
from arena.web.fork import Forked
pid_file = sys.argv[1]
def work():
    open(pid_file + ".tmp", "w").write("x")
    threading.Event().wait()
child = Forked(work)
open(pid_file, "w").write(str(child.pid))
threading.Event().wait()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_render_child_dies_with_its_killed_parent(tmp_path):
    pid_file = tmp_path / "child.pid"
    parent = subprocess.Popen([sys.executable, "-c", CHILD_OF_KILLED, str(pid_file)])
    try:
        deadline = time.monotonic() + 30
        while not (pid_file.exists() and Path(str(pid_file) + ".tmp").exists()):
            assert time.monotonic() < deadline and parent.poll() is None
            time.sleep(0.02)
        child = int(pid_file.read_text())
        assert not _gone(child)
    finally:
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
    died = _wait_gone(child)
    if not died:  # leave nothing behind, then fail
        os.kill(child, signal.SIGKILL)
    assert died


def test_end_children_stops_the_render_children(tmp_path):
    from arena.web import fork

    started = tmp_path / "started"
    child = fork.Forked(lambda: (started.write_text("x"), threading.Event().wait()) and {})
    deadline = time.monotonic() + 30
    while not started.exists():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert child.pid in fork.children
    assert fork.end_children() == 1
    with pytest.raises(RuntimeError):
        child.join()
    assert child.pid not in fork.children and _gone(child.pid)
