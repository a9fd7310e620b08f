"""The worker: one of any number of processes that share a database (PostgreSQL) and work through the week's
decision rounds together, each seat decided exactly once.

A worker runs **passes**. A pass takes the deciding cohorts at the pass's time (the newest open cohorts whose
decision window is open, as the decision-round job does), reads the tradable markets once, and lets
`concurrency` threads take seats from the decision queue (`decision_queue.claim_next`: SKIP LOCKED on
PostgreSQL, unique claims everywhere) until none is left; each seat is decided by the same code as the
scheduler's round (`decide.decide_claimed`), with the claim's lease renewed by one heartbeat. A worker that dies
leaves claims whose leases expire; a later pass of any worker (or the scheduler's hourly tick) takes them over.

Failed decisions (endpoint down, missing key) are retried by a pass only every `retry_every` (wall clock), so a
failing endpoint is not hammered, and only within the round's retry window and attempts — the same
`RetryPolicy` as the job. Model calls go through one shared HTTP client whose transport holds an endpoint slot
per call (`endpoint_slots`), so per-endpoint concurrency limits hold across all workers on PostgreSQL.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from arena.agents.corpus import Corpus
from arena.agents.view import Agent, AgentView
from arena.clock import Clock, SystemClock
from arena.config import AGENT_KINDS, ArenaConfig
from arena.domain.decision import Decision
from arena.errors import ConfigError
from arena.usecases import decide
from arena.usecases.asked_set import round_set
from arena.usecases.cohorts import agents_of, week_start
from arena.ops.decision_queue import claim_next, open_seats
from arena.ops.endpoint_slots import EndpointLimits, LimitedTransport, slots_for
from arena.ops.leases import Heartbeat, LeasePolicy, runner_id, wall_now
from arena.usecases.lifecycle import RetryPolicy, build_agent, deciding_cohorts
from arena.usecases.pricing import BookSource, RoundBooks
from arena.store.tables import AgentRow, CohortRow, DecisionRow


@dataclass
class PassReport:
    """What one pass did: when (the arena's clock), over how many cohorts, each decided seat's outcome, and
    how many seats were left that nobody alive holds and no pass may take yet (failed, waiting for a retry)."""

    at: datetime
    cohorts: int = 0
    outcomes: Counter = field(default_factory=Counter)
    in_progress_elsewhere: int = 0
    open_seats: int = 0
    seconds: float = 0.0

    @property
    def decided(self) -> int:
        return sum(self.outcomes.values())

    @property
    def round_done(self) -> bool:
        """Every seat of the deciding cohorts has a decision that no pass needs to take (done or failed)."""
        return self.open_seats == 0 and self.in_progress_elsewhere == 0

    def line(self) -> str:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items())) or "nothing to decide"
        return (f"{runner_id()} pass at {self.at:%Y-%m-%d %H:%M} UTC: {self.cohorts} cohort(s), {counts} "
                f"in {self.seconds:.1f} s; held elsewhere {self.in_progress_elsewhere}, left {self.open_seats}")


class _Unbuildable:
    """A seat whose frozen entry cannot be rebuilt here: its claim is completed as failed, with the reason."""

    def __init__(self, name: str) -> None:
        self.name = name

    def decide(self, view: AgentView) -> Decision:
        raise ConfigError(f"agent {self.name!r}: its frozen lineup entry cannot be rebuilt by this version",
                          reason="unbuildable")


class Worker:
    """Decides seats from the queue, `concurrency` at a time, pass after pass (see the module docstring)."""

    def __init__(self, engine: Engine, config: ArenaConfig, environ: Mapping[str, str], clock: Clock, *,
                 concurrency: int = 8, limits: EndpointLimits | None = None, lease: LeasePolicy | None = None,
                 books: BookSource | None = None, transport: httpx.BaseTransport | None = None,
                 live: bool | None = None, retry_every_s: float = 600.0,
                 log: Callable[[str], None] | None = None) -> None:
        self.engine, self.config, self.environ, self.clock = engine, config, environ, clock
        self.concurrency = max(1, concurrency)
        self.lease = lease or LeasePolicy.from_env(default=config.operations.lease_seconds)
        self.books = books
        self.live = isinstance(clock, SystemClock) if live is None else live
        self.retry_every_s = retry_every_s
        self.log = log
        self.limits = limits or EndpointLimits()
        self._slots = slots_for(engine) if self.limits else None
        inner = transport or httpx.HTTPTransport(limits=httpx.Limits(max_connections=64,
                                                                     max_keepalive_connections=32))
        wrapped = LimitedTransport(self.limits, self._slots, inner) if self._slots is not None else inner
        self.client = httpx.Client(transport=wrapped)
        self._agents: dict[int, Agent] = {}
        self._corpora: dict[str, Corpus] = {}  # corpus_search seats share each corpus file (path → corpus)
        self._agents_lock = threading.Lock()
        self._last_retry = float("-inf")

    def close(self) -> None:
        self.client.close()
        if self._slots is not None:
            self._slots.close()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _agent(self, row: AgentRow) -> Agent:
        with self._agents_lock:
            if row.id not in self._agents:
                agent = build_agent(row, self.environ, max_markets=self.config.cohort.prompt_markets,
                                    client=self.client, live=self.live, corpora=self._corpora)
                self._agents[row.id] = agent if agent is not None else _Unbuildable(row.name)  # type: ignore[index]
            return self._agents[row.id]  # type: ignore[index]

    def drain(self, stop: threading.Event | None = None) -> PassReport:
        """One pass: decide seats until the queue has none this worker may take now (or `stop` is set)."""
        stop = stop or threading.Event()
        started = time.perf_counter()
        now = self.clock.now()
        report = PassReport(now)
        cohorts = deciding_cohorts(self.engine, now, self.config.cohort.newest_cohorts)
        report.cohorts = len(cohorts)
        if not cohorts:
            return report
        round_key = f"{week_start(now):%Y-%m-%d}"
        retry = RetryPolicy.of(self.config, now).retry_below(now)
        retrying = retry > 0 and time.monotonic() - self._last_retry >= self.retry_every_s
        if retrying:
            self._last_retry = time.monotonic()
        retry_below = retry if retrying else 0
        by_id: dict[int, CohortRow] = {c.id: c for c in cohorts}  # type: ignore[misc]
        with Session(self.engine) as s:
            state = decide.tradable_markets(s, now)  # the same for every seat of the pass: read once
            rows = {r.id: r for c in cohorts for r in agents_of(s, c.id)}  # type: ignore[arg-type]
        books = RoundBooks(self.books) if self.books is not None else None
        k = self.config.cohort.forecast_set_size
        for c in cohorts:  # each round's set chosen and stored before any of its seats is asked
            round_set(self.engine, c, round_key, now, *state, k)
        beat = decide.ClaimBeat(self.engine, self.lease)
        ids = list(by_id)
        lock = threading.Lock()

        tried: set[int] = set()  # a seat is tried at most once per pass (a failing endpoint is not hammered)
        claiming = threading.Lock() if retry_below else contextlib.nullcontext()

        def loop() -> None:
            while not stop.is_set():
                with claiming:  # a retrying pass claims one at a time, so `tried` is never read stale
                    got = claim_next(self.engine, ids, round_key, now, lease=self.lease, retry_below=retry_below,
                                     kinds=AGENT_KINDS, skip=tuple(tried))
                    if got:
                        tried.add(got[0].agent_id)
                if not got:
                    return
                q = got[0]
                row = rows[q.agent_id]
                out = decide.decide_claimed(self.engine, by_id[q.cohort_id], row, self._agent(row), q.claim, now,
                                            k, books, state, beat=beat)
                with lock:
                    report.outcomes[out.status] += 1

        with Heartbeat(beat.renew, self.lease.heartbeat_every, name="lease-worker"):
            if self.concurrency == 1:
                loop()
            else:
                with ThreadPoolExecutor(self.concurrency, thread_name_prefix="worker") as pool:
                    for f in [pool.submit(loop) for _ in range(self.concurrency)]:
                        f.result()
        report.open_seats = open_seats(self.engine, ids, round_key, lease=self.lease, kinds=AGENT_KINDS)
        report.in_progress_elsewhere = self._held_elsewhere(ids, round_key)
        report.seconds = time.perf_counter() - started
        return report

    def _held_elsewhere(self, cohort_ids: list[int], round_key: str) -> int:
        """Claims of the round held by a live runner (their lease not expired)."""
        with Session(self.engine) as s:
            return int(s.scalar(select(func.count()).select_from(DecisionRow).where(
                col(DecisionRow.cohort_id).in_(cohort_ids), col(DecisionRow.round_key) == round_key,
                col(DecisionRow.status) == "claimed", col(DecisionRow.lease_until) >= wall_now())) or 0)

    def run(self, *, until_done: bool = False, poll_s: float = 10.0, stop: threading.Event | None = None,
            before_pass: Callable[[], Any] | None = None) -> list[PassReport]:
        """Pass after pass, `poll_s` apart when a pass found nothing to do, until `stop` is set — or, with
        `until_done`, until a pass finds the round done (every seat decided or failed; claims of workers that
        died are waited out and taken over). `before_pass` runs first in each pass (e.g. the jobs this worker
        also runs)."""
        stop = stop or threading.Event()
        reports: list[PassReport] = []
        while not stop.is_set():
            if before_pass is not None:
                before_pass()
            report = self.drain(stop)
            reports.append(report)
            if self.log is not None and (report.decided or not until_done):
                self.log(report.line())
            if until_done and report.round_done:
                break
            if not report.decided:
                stop.wait(poll_s)
        return reports


__all__ = ["PassReport", "Worker"]
