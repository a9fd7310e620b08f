"""Statistics recomputed from stored facts: intervals around the leaderboard's numbers, reproducible draws,
provisional flags, interim scores against current prices, calibration counts, consistency."""

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from sqlmodel import Session, select

from arena.cli import main
from arena.domain.decision import Bet, Decision
from arena.domain.market import YES, Market, MarketKind, Quote, Resolution
from arena.domain.sizing import CohortRules
from arena.money import Money, Price
from arena.services import decide, ingest
from arena.services.cohorts import LineupEntry, start_cohort
from arena.services.score import cohort_leaderboards
from arena.services.statistics import cohort_statistics
from arena.store.engine import make_engine, session_scope
from arena.store.tables import ForecastRow

LATER = datetime(2027, 1, 1, tzinfo=timezone.utc)


@pytest.fixture
def demo_db(db_url, capsys):
    assert main(["demo", "--seed", "5", "--cohorts", "2", "--decision-weeks", "2", "--markets-per-week", "15",
                 "--db", db_url]) == 0
    capsys.readouterr()
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


def test_intervals_bracket_the_leaderboard_and_are_reproducible(demo_db):
    stats = cohort_statistics(demo_db, LATER, n_boot=300, seed=1)
    again = cohort_statistics(demo_db, LATER, n_boot=300, seed=1)
    board = cohort_leaderboards(demo_db, LATER)
    assert set(stats) == set(board["cohort"])
    for name, st in stats.items():
        summary = st.summary().set_index("agent")
        assert summary.equals(again[name].summary().set_index("agent"))
        for rec in board[(board["cohort"] == name) & board["brier"].notna()].to_dict("records"):
            row = summary.loc[rec["agent"]]
            assert row["brier_ci_low"] - 1e-12 <= rec["brier"] <= row["brier_ci_high"] + 1e-12
            assert bool(row["provisional"]) == (rec["n_resolved"] < st.min_resolved)
            assert 0.0 <= row["p_first"] <= 1.0 and row["tier"] >= 1
        assert np.isclose(summary["p_first"].dropna().sum(), 1.0)
        # calibration bins count every resolved forecast-set statement exactly once per agent
        assert (st.murphy["n"] > 0).all()
        for agent, grp in st.reliability.groupby("group"):
            assert grp["count"].sum() == int(st.murphy.set_index("group").loc[agent, "n"])


def test_interim_scores_use_the_current_price_and_say_so(engine):
    t0 = datetime(2026, 1, 4, tzinfo=timezone.utc)
    m = Market(id="sim:1", venue="sim", question="?", close_time=t0 + timedelta(days=30))
    with session_scope(engine) as s:
        ingest.record_observations(s, t0, [m], [Quote("sim:1", {YES: Price.of("0.40")}, t0, t0, source="t")])
        cohort, _ = start_cohort(s, t0, CohortRules(), [LineupEntry("a")], t0)

    class Buy:
        name = "a"

        def decide(self, view):
            return Decision((Bet("sim:1", YES, Money.of(2500), stated_probability=0.9),))

    decide.run_round(engine, cohort, {"a": Buy()}, "r1", t0)
    later = t0 + timedelta(days=3)
    with session_scope(engine) as s:
        ingest.record_observations(s, later, quotes=[Quote("sim:1", {YES: Price.of("0.70")}, later, later, source="t")])
    st = cohort_statistics(engine, later + timedelta(hours=1), n_boot=50)[cohort.name]
    row = st.interim.set_index("agent").loc["a"]
    assert bool(row["provisional"]) and row["n_provisional"] == 1
    assert row["interim_brier"] == pytest.approx((1.0 - 0.7) ** 2)  # max bet → f_YES 1, scored against 0.70
    assert row["interim_market_brier"] == pytest.approx((0.4 - 0.7) ** 2)
    assert st.bootstrap == {} or "brier" not in st.bootstrap  # nothing resolved: no final-score intervals
    with session_scope(engine) as s:
        ingest.record_observations(s, later, resolutions=[("sim:1", Resolution.winner("sim:1", YES))])
    row = cohort_statistics(engine, later + timedelta(hours=2), n_boot=50)[cohort.name].interim.set_index("agent").loc["a"]
    assert not bool(row["provisional"]) and row["interim_brier"] == pytest.approx(0.0)


def test_consistency_of_exclusive_groups_and_multi_outcome_answers(engine):
    t0 = datetime(2026, 1, 4, tzinfo=timezone.utc)
    pair = [Market(id=f"pm:{k}", venue="polymarket", question=f"{k} wins?", close_time=t0 + timedelta(days=9),
                   group_id="pm:event:1", volume_24h=10.0) for k in ("a", "b")]
    mc = Market(id="mf:mc", venue="manifold", question="Who?", kind=MarketKind.MULTI, outcomes=("x", "y"),
                outcome_labels=("X", "Y"), close_time=t0 + timedelta(days=9), volume_24h=1.0)
    quotes = [Quote(m.id, {YES: Price.of("0.5")}, t0, t0, source="t") for m in pair]
    quotes.append(Quote("mf:mc", {"x": Price.of("0.6"), "y": Price.of("0.4")}, t0, t0, source="t"))
    with session_scope(engine) as s:
        ingest.record_observations(s, t0, [*pair, mc], quotes)
        cohort, _ = start_cohort(s, t0, CohortRules(), [LineupEntry("coherent"), LineupEntry("sloppy")], t0)

    class Agent:
        def __init__(self, name, pa, pb):
            self.name, self.pa, self.pb = name, pa, pb

        def decide(self, view):
            return Decision((Bet("mf:mc", "x", Money.of(100), stated_probability=0.8),),
                            forecasts={"pm:a": self.pa, "pm:b": self.pb})

    decide.run_round(engine, cohort, {"coherent": Agent("coherent", 0.7, 0.3), "sloppy": Agent("sloppy", 0.7, 0.7)},
                     "r1", t0)
    with session_scope(engine) as s:
        ingest.record_observations(s, t0 + timedelta(days=10),
                                   resolutions=[("mf:mc", Resolution.winner("mf:mc", "x", ("x", "y")))])
    with Session(engine) as s:
        assert len(s.scalars(select(ForecastRow)).all()) == 6
    c = cohort_statistics(engine, t0 + timedelta(days=11), n_boot=50)[cohort.name].consistency.set_index("agent")
    assert c.loc["coherent", "sum_deviation"] == pytest.approx(0.0)
    assert c.loc["sloppy", "sum_deviation"] == pytest.approx(0.4)
    assert c.loc["coherent", "negation_violation_rate"] == 0.0 and c.loc["sloppy", "negation_violation_rate"] == 1.0
    assert c.loc["coherent", "s_prime"] == pytest.approx(1 - (0.8 - 1) ** 2)
