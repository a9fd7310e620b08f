"""Simulation: drive cohorts through a time-travelling venue day by day with the real engine.

The venue is anything that can say, as of a time t, which markets are listed (with their status at t), their
quote at t and their resolution at t, never looking past t: the simulated universe of `arena demo`, and the
replay venue over recorded markets. Each simulated day runs the same services the scheduler runs in
production: sync, cohort start and decision round on Sundays, settlement, cohort completion, mark to market.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy.engine import Engine

from arena.agents.view import Agent
from arena.clock import utc
from arena.domain.market import Market, MarketStatus, Quote, Resolution
from arena.domain.sizing import CohortRules
from arena.errors import NotFound
from arena.usecases import decide, ingest, mark, settle
from arena.usecases.cohorts import LineupEntry, open_cohorts, start_cohort
from arena.store.engine import session_scope

DAY = timedelta(days=1)


class TimeVenue(Protocol):
    def markets_listed_at(self, t: datetime) -> list[Market]: ...

    def quote_at(self, market_id: str, t: datetime) -> Quote: ...

    def resolution_at(self, market_id: str, t: datetime) -> Resolution | None: ...


@dataclass
class SimulationReport:
    days: int = 0
    cohorts: list[str] = field(default_factory=list)
    decisions: dict[str, int] = field(default_factory=dict)  # status → count
    fills: int = 0
    settled: int = 0
    refunded: int = 0
    completed: list[str] = field(default_factory=list)
    snapshots_added: int = 0


@dataclass
class VenueSync:
    """Copies what a time venue shows at t into the store, skipping markets already final in the store."""

    venue: TimeVenue
    done: set[str] = field(default_factory=set)

    def __call__(self, engine: Engine, now: datetime) -> ingest.IngestCounts:
        markets = [m for m in self.venue.markets_listed_at(now) if m.id not in self.done]
        quotes, resolutions = [], []
        for m in markets:
            try:
                quotes.append(self.venue.quote_at(m.id, now))
            except NotFound:
                pass
            res = self.venue.resolution_at(m.id, now)
            resolutions.append((m.id, res))
            if res is not None and m.status is MarketStatus.RESOLVED:
                self.done.add(m.id)
        extras_of = getattr(self.venue, "extras", None)  # venue details a fill needs later (a replay's fee rate)
        extras = {m.id: e for m in markets if (e := extras_of(m.id))} if extras_of is not None else None
        with session_scope(engine) as s:
            return ingest.record_observations(s, now, markets, quotes, resolutions, extras=extras or None)


def simulate(
    engine: Engine,
    venue: TimeVenue,
    agents: Mapping[str, Agent],
    start: datetime,
    cohorts: int,
    rules: CohortRules,
    lineup: Sequence[LineupEntry],
    until: datetime,
    forecast_k: int = 20,
    newest_k: int = 5,
    on_day: Callable[[datetime], None] | None = None,
) -> SimulationReport:
    """Run `cohorts` weekly cohorts from `start` (a Sunday) until every cohort completes or `until`."""
    report = SimulationReport()
    sync = VenueSync(venue)
    now = start
    while now <= until:
        sync(engine, now)
        week = (now - start).days // 7
        if (now - start).days % 7 == 0:
            if week < cohorts:
                with session_scope(engine) as s:
                    cohort, created = start_cohort(s, now, rules, lineup, now)
                    if created:
                        report.cohorts.append(cohort.name)
            with session_scope(engine) as s:
                # Only cohorts that have opened: a database left by a killed run holds later cohorts already,
                # which must not trade before their own Sunday.
                deciding = [c for c in open_cohorts(s, newest_k)
                            if utc(c.period_start) <= now < utc(c.period_start) + timedelta(weeks=rules.decision_weeks)]
            for cohort in deciding:
                for out in decide.run_round(engine, cohort, agents, f"{now:%Y-%m-%d}",
                                            now + timedelta(minutes=5), forecast_k):
                    report.decisions[out.status] = report.decisions.get(out.status, 0) + 1
                    report.fills += out.fills
        counts = settle.settle_resolved(engine, now + timedelta(hours=1))
        report.settled += counts.settled
        report.refunded += counts.refunded
        report.completed += settle.complete_cohorts(engine, now + timedelta(hours=2))
        report.snapshots_added += mark.mark_to_market(engine, now + timedelta(hours=23)).snapshots_written
        report.days += 1
        if on_day is not None:
            on_day(now)
        if len(report.completed) >= cohorts and week >= cohorts:
            break
        now += DAY
    return report


class PointInTimeVenue(Protocol):
    """What `ReplayTimeVenue` reads of the replay venue (`venues.replay.ReplayVenue`)."""

    def markets_at(self, t: datetime, *, include_resolved: bool = False) -> list[Market]: ...

    def quote_at(self, market_id: str, t: datetime) -> Quote | None: ...

    def resolution_at(self, market_id: str, t: datetime) -> Resolution | None: ...

    def extras(self, market_id: str) -> dict[str, str]: ...


class ReplayTimeVenue:
    """Adapts the replay venue to the simulation loop: every market listed by t (resolved ones included, so
    their resolutions are recorded), quotes only from points visible at t."""

    def __init__(self, venue: PointInTimeVenue) -> None:
        self.venue = venue

    def markets_listed_at(self, t: datetime) -> list[Market]:
        return self.venue.markets_at(t, include_resolved=True)

    def quote_at(self, market_id: str, t: datetime) -> Quote:
        q = self.venue.quote_at(market_id, t)
        if q is None:
            raise NotFound(f"no visible price for {market_id} at {t}")
        return q

    def resolution_at(self, market_id: str, t: datetime) -> Resolution | None:
        return self.venue.resolution_at(market_id, t)

    def extras(self, market_id: str) -> dict[str, str]:
        return self.venue.extras(market_id)
