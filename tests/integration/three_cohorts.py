"""Three simulated cohorts of the demo lineup over five weeks (shared by the cache tests)."""

from datetime import datetime, timedelta, timezone

from arena.agents.baselines import demo_lineup
from arena.domain.sizing import CohortRules
from arena.usecases.cohorts import LineupEntry
from arena.usecases.simulation import simulate
from arena.venues.simulated import SimulatedUniverse

START = datetime(2026, 1, 4, tzinfo=timezone.utc)
LATER = datetime(2027, 1, 1, tzinfo=timezone.utc)


def simulate_three_cohorts(engine):  # type: ignore[no-untyped-def]
    """The three cohorts in `engine`'s database (on SQLite copied from one simulation per test process)."""
    from store_template import from_template

    return from_template(engine, "three cohorts", _simulate, lambda _, e: e)


def _simulate(engine):  # type: ignore[no-untyped-def]
    universe = SimulatedUniverse.generate(5, START, weeks=5, markets_per_week=12)
    agents = demo_lineup(universe, 5)
    lineup = [LineupEntry(a.name, "scripted") for a in agents]
    simulate(engine, universe, {a.name: a for a in agents}, START, 3, CohortRules(decision_weeks=2), lineup,
             universe.end + timedelta(days=1), forecast_k=10)
    return engine
