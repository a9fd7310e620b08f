"""Job: the decision round for the newest K open cohorts, ticking hourly: the week's first tick decides, later
ticks resume claims stranded by a dead runner and retry failed decisions (the run stays "incomplete" until
nothing is left to come back for). Polymarket orders walk the CLOB book fetched live at decision time."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from arena.clock import SystemClock
from arena.config import default_config
from arena.usecases.cohorts import week_start
from arena.usecases.lifecycle import RetryPolicy, decision_round, pending, round_needs_work
from arena.ops.operations import JobOutcome, reopen, run_once
from arena.usecases.pricing import BookSource
from arena.jobs.runtime import Runtime, current

NAME = "decision_round"


def book_source(rt: Runtime) -> BookSource | None:
    """The books orders walk: the runtime's own, else the Polymarket client's live `/book` — only when the
    clock is real time (a simulated or past decision must not see today's book)."""
    if rt.books is not None:
        return rt.books
    live = rt.live_books if rt.live_books is not None else isinstance(rt.clock, SystemClock)
    if not live:
        return None
    from arena.jobs.sync import client_for

    return lambda token_id: client_for(rt, "polymarket").book(token_id)  # the client is built on first use


def period_of(now: datetime) -> str:
    """The run's period: the week (its Sunday) — one round per week, the later ticks coming back to it."""
    return week_start(now).date().isoformat()


def run() -> JobOutcome:
    rt = current()
    now = rt.clock.now()
    config = rt.config or default_config()

    def body() -> dict:
        rounds = decision_round(rt.engine, now, config, rt.environ, books=book_source(rt), lease=rt.lease(),
                                limits=rt.endpoint_limits)
        counts: dict = {c: dict(Counter(o.status for o in outs)) for c, outs in rounds.items()}
        counts["pending"] = pending(rounds, RetryPolicy.of(config, now), now)
        return counts

    period = period_of(now)
    if round_needs_work(rt.engine, now, config, rt.lease()):  # e.g. a killed `arena round` left a claim behind
        reopen(rt.engine, NAME, period)
    return run_once(rt.engine, NAME, period, rt.clock, body, lease=rt.lease(),
                    incomplete=lambda counts: bool(counts.get("pending")))
