"""Workers: `arena worker` processes share a week's decision round through the decision queue — every seat
decided exactly once, however many workers (threads in one process, or real processes on PostgreSQL), a
killed worker's seats taken over once its lease expires, and per-endpoint concurrency limits held across
processes (measured at the stand-in endpoint). Model calls go to the local stand-in, never the network."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select, text
from sqlmodel import Session

from standin import StandinServer, hold_responder
from arena.clock import FixedClock
from arena.config import parse_config
from arena.domain.market import YES, Market, Quote
from arena.errors import InputError
from arena.money import Price
from arena.usecases import ingest
from arena.ops.decision_queue import claim_next, open_seats
from arena.ops.endpoint_slots import EndpointLimits, LimitedTransport, Slots
from arena.ops.leases import LeasePolicy
from arena.usecases.lifecycle import start_current_cohort
from arena.ops.worker import Worker
from arena.store.engine import session_scope
from arena.store.tables import AgentRow, DecisionAttemptRow, DecisionRow, FillRow, ModelCallRow

ROOT = Path(__file__).resolve().parents[2]
SUNDAY = datetime(2026, 3, 1, tzinfo=timezone.utc)
AT = SUNDAY + timedelta(minutes=5)
KEY = "WORKER_TEST_KEY"


def config_text(base_url: str, n: int, timeout_s: float = 60) -> str:
    seats = "".join(f'[[agents]]\nname = "m{i:03d}"\nmodel = "m{i:03d}"\nbase_url = "{base_url}"\n'
                    f'api_key_env = "{KEY}"\nmax_repairs = 0\nmax_retries = 0\ntimeout_s = {timeout_s}\n'
                    for i in range(n))
    return f"baselines = false\n[cohort]\nforecast_set_size = 3\n{seats}"


def seed(engine, base_url: str, n: int):  # type: ignore[no-untyped-def]
    config = parse_config(config_text(base_url, n))
    markets = [Market(id=f"sim:{i}", venue="sim", question=f"Will {i} happen?",
                      close_time=SUNDAY + timedelta(days=20), volume_24h=float(100 - i)) for i in range(6)]
    with session_scope(engine) as s:
        ingest.record_observations(s, SUNDAY, markets, [Quote(m.id, {YES: Price.of("0.5")}, SUNDAY, SUNDAY,
                                                             source="t") for m in markets])
    start_current_cohort(engine, SUNDAY, config)
    return config


def assert_each_seat_once(engine, n: int) -> list[str]:  # type: ignore[no-untyped-def]
    """Every seat has one completed decision, tried once, with one model call; the runners that decided."""
    with Session(engine) as s:
        decisions = s.scalars(select(DecisionRow)).all()
        assert len(decisions) == n
        assert len({d.agent_id for d in decisions}) == n
        assert {d.status for d in decisions} == {"hold"}, Counter(d.status for d in decisions)
        attempts = s.scalars(select(DecisionAttemptRow)).all()
        assert len(attempts) == n and len({a.decision_id for a in attempts}) == n
        assert s.scalar(select(func.count()).select_from(ModelCallRow)) == n
        return [a.runner for a in attempts]


# -- endpoint limits -------------------------------------------------------------------------------------------

def test_endpoint_limits_parse_and_match_the_longest_prefix():
    limits = EndpointLimits.parse(["4", "https://openrouter.ai/api/v1=16", "http://127.0.0.1:8000/v1=2"])
    assert limits.default == 4
    assert limits.endpoint("https://openrouter.ai/api/v1/chat/completions") == ("https://openrouter.ai:443/api/v1", 16)
    assert limits.endpoint("http://127.0.0.1:8000/v1/chat/completions") == ("http://127.0.0.1:8000/v1", 2)
    # another path on a limited host, and another host: the default, counted per origin
    assert limits.endpoint("https://openrouter.ai/other") == ("https://openrouter.ai:443", 4)
    assert limits.endpoint("http://example.test/v1/chat/completions") == ("http://example.test:80", 4)
    assert EndpointLimits.parse([]).endpoint("http://x.test/") == ("http://x.test:80", None)
    assert not EndpointLimits.parse(None)
    for bad in ("0", "x", "https://a.test=-1", "ftp://a.test=3", "a.test=3"):
        with pytest.raises(InputError) as exc:
            EndpointLimits.parse([bad])
        assert "URL=N" in exc.value.fix or "base_url" in exc.value.fix


def test_a_slot_is_held_until_the_response_is_closed():
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b'{"ok": true}')

    slots = Slots()
    transport = LimitedTransport(EndpointLimits.parse(["1"]), slots, httpx.MockTransport(answer))
    with httpx.Client(transport=transport) as client:
        with client.stream("POST", "http://a.test/v1/chat/completions") as first:
            got_second = threading.Event()

            def second() -> None:
                client.post("http://a.test/v1/chat/completions")
                got_second.set()

            t = threading.Thread(target=second)
            t.start()
            assert not got_second.wait(0.3)  # the one slot is held while the first response is open
            first.read()
        assert got_second.wait(5)  # closing the first response gave the slot back
        t.join()
        # another endpoint has slots of its own
        assert client.post("http://b.test/v1/chat/completions").status_code == 200


# -- the queue ------------------------------------------------------------------------------------------------

def test_the_queue_gives_each_seat_to_one_claimer(engine):
    with StandinServer(default=hold_responder()) as server:
        seed(engine, server.base_url, 30)
    with Session(engine) as s:
        cohort_ids = sorted({r.cohort_id for r in s.scalars(select(AgentRow))})
    lease = LeasePolicy(60)
    claimed: list[int] = []
    lock = threading.Lock()

    def claimer() -> None:
        while True:
            got = claim_next(engine, cohort_ids, "2026-03-01", AT, lease=lease, limit=2)
            if not got:
                return
            with lock:
                claimed.extend(q.agent_id for q in got)

    threads = [threading.Thread(target=claimer) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(claimed) == 30 and len(set(claimed)) == 30
    assert open_seats(engine, cohort_ids, "2026-03-01", lease=lease) == 0
    # a claim whose lease expired is a seat again, taken over once with its attempt counted
    with session_scope(engine) as s:
        s.execute(DecisionRow.__table__.update().where(DecisionRow.agent_id == claimed[0])  # type: ignore[attr-defined]
                  .values(lease_until=AT - timedelta(days=1)))
    assert open_seats(engine, cohort_ids, "2026-03-01", lease=lease) == 1
    again = claim_next(engine, cohort_ids, "2026-03-01", AT, lease=lease, limit=5)
    assert [(q.agent_id, q.claim.attempt) for q in again] == [(claimed[0], 2)]


def test_two_workers_in_one_process_decide_each_seat_once(engine):
    n = 24
    with StandinServer(default=hold_responder(), latency_s=0.05) as server:
        config = seed(engine, server.base_url, n)
        stop = threading.Event()
        workers = [Worker(engine, config, {KEY: "k"}, FixedClock(AT), concurrency=4, live=False,
                          limits=EndpointLimits.parse(["3"])) for _ in range(2)]
        reports: list = []
        threads = [threading.Thread(target=lambda w=w: reports.append(w.run(until_done=True, poll_s=0.1, stop=stop)))
                   for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        for w in workers:
            w.close()
        assert len(server.requests) == n
        assert 1 <= server.max_in_flight <= 3  # one process: its semaphore holds the limit
    assert_each_seat_once(engine, n)
    decided = sum(r.decided for rs in reports for r in rs)
    assert decided == n


def test_a_worker_with_nothing_deciding_stops_when_told_until_done(engine):
    with StandinServer(default=hold_responder()) as server:
        config = seed(engine, server.base_url, 2)
    later = FixedClock(SUNDAY + timedelta(weeks=6))  # after the 5-week decision window: no cohort decides
    with Worker(engine, config, {KEY: "k"}, later, live=False) as w:
        reports = w.run(until_done=True, poll_s=0.01)
    assert len(reports) == 1 and reports[0].cohorts == 0 and reports[0].round_done


# -- real processes on PostgreSQL -------------------------------------------------------------------------------

def _pg_only(engine) -> None:  # type: ignore[no-untyped-def]
    if engine.dialect.name != "postgresql":
        pytest.skip("worker processes sharing a round need PostgreSQL (set ARENA_TEST_DATABASE_URL)")


def _start_worker(db_url: str, config_path: Path, *extra: str, lease: str = "30") -> subprocess.Popen:
    env = dict(os.environ, **{KEY: "k", "ARENA_LEASE_SECONDS": lease, "PYTHONPATH": str(ROOT)})
    return subprocess.Popen([sys.executable, "-m", "arena", "worker", "--db", db_url, "--config", str(config_path),
                             "--at", AT.isoformat(), "--poll", "0.2", *extra], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("workers", [2, 4])
def test_worker_processes_never_decide_a_seat_twice_and_hold_the_endpoint_limit(engine, db_url, tmp_path, workers):
    _pg_only(engine)
    n, limit = 40, 5
    with StandinServer(default=hold_responder(), latency_s=0.15) as server:
        seed(engine, server.base_url, n)
        cfg = tmp_path / "arena.toml"
        cfg.write_text(config_text(server.base_url, n))
        procs = [_start_worker(db_url, cfg, "--until-done", "--concurrency", "4", "--endpoint-limit", str(limit))
                 for _ in range(workers)]
        outs = [p.communicate(timeout=180) for p in procs]
        for p, (out, err) in zip(procs, outs):
            assert p.returncode == 0, err[-3000:]
        assert len(server.requests) == n  # one model call per seat: none asked twice
        assert 1 < server.max_in_flight <= limit  # the limit held across the processes
    runners = assert_each_seat_once(engine, n)
    processes = {r.split("/")[0] for r in runners}  # host:pid of each deciding runner
    assert len(processes) >= 2, "the round was not shared between the workers"
    assert sum(int(o.rsplit(" decision(s)", 1)[0].rsplit(" ", 1)[1]) for o, _ in outs) == n


def test_a_killed_worker_s_seats_are_taken_over_once_its_lease_expires(engine, db_url, tmp_path):
    _pg_only(engine)
    n = 6
    with StandinServer(default=hold_responder(), latency_s=30) as server:
        seed(engine, server.base_url, n)
        cfg = tmp_path / "arena.toml"
        cfg.write_text(config_text(server.base_url, n))
        victim = _start_worker(db_url, cfg, "--concurrency", "3", lease="1")
        deadline = time.monotonic() + 60
        while len(server.requests) < 3:  # three seats claimed, their model calls hanging
            assert victim.poll() is None, victim.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "the worker never asked the model"
            time.sleep(0.05)
        os.kill(victim.pid, signal.SIGKILL)
        victim.communicate()
        with Session(engine) as s:
            held = s.scalars(select(DecisionRow.agent_id).where(DecisionRow.status == "claimed")).all()
        assert len(held) == 3
        server.latency_s = 0.0
        rescuer = _start_worker(db_url, cfg, "--until-done", "--concurrency", "2", lease="1")
        out, err = rescuer.communicate(timeout=120)
        assert rescuer.returncode == 0, err[-3000:]
    with Session(engine) as s:
        rows = s.scalars(select(DecisionRow)).all()
        assert len(rows) == n and {r.status for r in rows} == {"hold"}
        assert sorted(r.agent_id for r in rows if r.attempts == 2) == sorted(held)  # taken over, counted
        assert all(r.attempts == 1 for r in rows if r.agent_id not in held)
        keys = s.scalars(select(FillRow.key)).all()
        assert len(keys) == len(set(keys))
        assert s.scalar(select(func.count()).select_from(DecisionRow).where(DecisionRow.status == "claimed")) == 0
        # the calls the victim had in flight are on record, abandoned, before the rescuer's own
        ids = {r.id: r.agent_id for r in rows}
        calls = s.scalars(select(ModelCallRow).order_by(ModelCallRow.decision_id, ModelCallRow.attempt)).all()
        taken = [(c.attempt, c.decision_attempt, c.status) for c in calls if ids[c.decision_id] in held]
        assert taken == [(1, 1, "abandoned"), (2, 2, "done")] * 3
        assert all(c.prompt and c.cost_micros is None for c in calls if c.status == "abandoned")
        assert {c.status for c in calls if ids[c.decision_id] not in held} == {"done"}


def test_a_killed_worker_s_orphaned_calls_still_count_against_the_endpoint_limit(engine, db_url, tmp_path):
    """The endpoint keeps answering the calls of a worker killed mid-call; their slots stay taken until those
    calls' timeouts run out, so the worker already waiting beside it never pushes the endpoint past the limit
    (without the holds it would take the freed slots at once: 3 orphans + 5)."""
    _pg_only(engine)
    n, limit = 8, 5
    with StandinServer(default=hold_responder(), latency_s=6.0) as server:
        seed(engine, server.base_url, n)
        cfg = tmp_path / "arena.toml"
        cfg.write_text(config_text(server.base_url, n, timeout_s=7))
        victim = _start_worker(db_url, cfg, "--concurrency", "3", "--endpoint-limit", str(limit), lease="1")
        deadline = time.monotonic() + 60
        while len(server.requests) < 3:
            assert victim.poll() is None, victim.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "the worker never asked the model"
            time.sleep(0.02)
        rescuer = _start_worker(db_url, cfg, "--until-done", "--concurrency", "5", "--endpoint-limit", str(limit),
                                lease="1")
        while len(server.requests) < limit:  # the rescuer's calls fill the two slots the victim leaves
            assert rescuer.poll() is None, rescuer.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "the second worker never asked the model"
            time.sleep(0.02)
        os.kill(victim.pid, signal.SIGKILL)  # its calls are still being answered
        victim.communicate()
        with Session(engine) as s:  # the victim's calls still out (all three, unless it was very slow)
            victims = (DecisionRow.claimed_by.contains(f":{victim.pid}/")  # type: ignore[union-attr]
                       | (DecisionRow.attempts > 1))  # (or already taken over by the rescuer)
            orphans = s.scalar(select(func.count()).select_from(ModelCallRow)
                               .join(DecisionRow, DecisionRow.id == ModelCallRow.decision_id)
                               .where(victims, ModelCallRow.decision_attempt == 1,
                                      ModelCallRow.status.in_(("in_flight", "abandoned"))))  # type: ignore[attr-defined]
        assert orphans >= 1
        out, err = rescuer.communicate(timeout=240)
        assert rescuer.returncode == 0, err[-3000:]
        assert len(server.requests) == n + orphans  # the orphans were answered by the endpoint all the same
        assert server.max_in_flight == limit, server.max_in_flight
    with Session(engine) as s:
        assert {r.status for r in s.scalars(select(DecisionRow))} == {"hold"}
        assert s.scalar(select(func.count()).select_from(ModelCallRow)
                        .where(ModelCallRow.status == "abandoned")) == orphans


def test_a_failing_endpoint_is_tried_once_per_pass_and_retried_by_a_later_pass(engine):
    with StandinServer(default=hold_responder()) as server:
        config = seed(engine, server.base_url, 2)
    # the stand-in has stopped: every model call is refused, so every decision fails (retryable)
    with Worker(engine, config, {KEY: "k"}, FixedClock(AT), live=False, retry_every_s=3600) as w:
        first, second = w.drain(), w.drain()
    assert first.outcomes == Counter(failed=2)  # not three tries each in one pass
    assert second.decided == 0  # the retry interval has not passed
    with Worker(engine, config, {KEY: "k"}, FixedClock(AT), live=False, retry_every_s=0) as w:
        third = w.drain()
    assert third.outcomes == Counter(failed=2)
    with Session(engine) as s:
        assert sorted(s.scalars(select(DecisionRow.attempts))) == [2, 2]
        assert s.scalar(select(func.count()).select_from(DecisionAttemptRow)) == 4


def test_the_scheduler_s_round_holds_the_endpoint_limit_too(engine):
    from arena.usecases.lifecycle import decision_round

    n = 10
    with StandinServer(default=hold_responder(), latency_s=0.1) as server:
        config = seed(engine, server.base_url, n)
        rounds = decision_round(engine, AT, config, {KEY: "k"}, concurrency=8, limits=EndpointLimits.parse(["2"]))
        assert [o.status for outs in rounds.values() for o in outs] == ["hold"] * n
        assert server.max_in_flight == 2  # eight threads, two slots
    assert_each_seat_once(engine, n)


def test_a_dead_sessions_slot_is_free_only_once_its_call_s_hold_runs_out(engine):
    _pg_only(engine)
    from arena.ops.endpoint_slots import PostgresSlots

    dead, alive = PostgresSlots(engine), PostgresSlots(engine)
    try:
        sem, _, _ = dead.acquire("http://e.test:80/v1", 1, hold_s=1.5)
        dead._drop()  # the process died: its connection, and its advisory lock, are gone; its hold is not
        sem.release()  # (and its in-process semaphore with it: here the two "processes" share one)
        started = time.monotonic()
        token = alive.acquire("http://e.test:80/v1", 1, hold_s=30)
        waited = time.monotonic() - started
        assert waited >= 1.0, waited  # not taken while the orphaned call could still be running
        alive.release(token)
        again = alive.acquire("http://e.test:80/v1", 1, hold_s=30)  # a released slot is free at once
        alive.release(again)
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM endpoint_holds")).scalar() == 0
    finally:
        dead.close()
        alive.close()


def test_postgres_slots_are_exclusive_across_sessions_and_never_re_entered(engine):
    _pg_only(engine)
    from arena.ops.endpoint_slots import PostgresSlots

    a, b = PostgresSlots(engine), PostgresSlots(engine)  # two sessions: two processes' slot connections
    try:
        first = a.acquire("http://e.test:80/v1", 2)
        second = a.acquire("http://e.test:80/v1", 2)  # the same session: the other slot, not the held one again
        assert {first[2], second[2]} == {0, 1}
        got = threading.Event()
        t = threading.Thread(target=lambda: (b.release(b.acquire("http://e.test:80/v1", 2)), got.set()))
        t.start()
        assert not got.wait(0.5)  # both slots are held by the other session
        a.release(first)
        assert got.wait(10)  # freed: the other session takes it
        t.join()
        a.release(second)
    finally:
        a.close()
        b.close()
