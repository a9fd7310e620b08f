"""Statistics recomputed from stored facts: intervals around the leaderboard's numbers, reproducible draws,
provisional flags, interim scores against current prices, calibration counts, consistency."""

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from store_template import from_template
from sqlmodel import Session, select

from arena.cli import main
from arena.domain.decision import Bet, Decision
from arena.domain.market import YES, Market, MarketKind, Quote, Resolution
from arena.domain.sizing import CohortRules
from arena.money import Money, Price
from arena.usecases import decide, ingest
from arena.usecases.cohorts import LineupEntry, start_cohort
from arena.read.score import cohort_leaderboards
from arena.read.statistics import cohort_statistics
from arena.store.engine import make_engine, session_scope
from arena.store.tables import ForecastRow

LATER = datetime(2027, 1, 1, tzinfo=timezone.utc)


@pytest.fixture
def demo_db(engine, capsys):
    """A two-cohort demo, run by the CLI (on SQLite once per test process, copied into each test's database)."""
    def run_demo(target):  # type: ignore[no-untyped-def]
        url = target.url.render_as_string(hide_password=False)
        assert main(["demo", "--seed", "5", "--cohorts", "2", "--decision-weeks", "2", "--markets-per-week", "15",
                     "--db", url]) == 0

    from_template(engine, "statistics demo", run_demo)
    capsys.readouterr()
    return engine


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


def test_interim_scores_use_the_current_price_and_say_so(engine, one_bet_cohort):
    cohort, t0, later = one_bet_cohort(engine, 2500)
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
    # the venue's own prices (0.5 and 0.5) as the reference row
    assert c.loc["market", "sum_deviation"] == pytest.approx(0.0) and c.loc["market", "negation_violation_rate"] == 0.0
    assert bool(c.loc["market", "reference"]) and not bool(c.loc["sloppy", "reference"])


def test_partial_groups_and_s_prime_on_complete_groups(engine):
    t0 = datetime(2026, 1, 4, tzinfo=timezone.utc)
    close = t0 + timedelta(days=9)
    trio = [Market(id=f"pm:{k}", venue="polymarket", question=f"{k}?", close_time=close, group_id="pm:event:3",
                   volume_24h=1.0) for k in ("x", "y", "z")]
    prices = {"pm:x": "0.6", "pm:y": "0.3", "pm:z": "0.2"}  # the venue's prices sum to 1.1
    with session_scope(engine) as s:
        ingest.record_observations(s, t0, trio, [Quote(k, {YES: Price.of(v)}, t0, t0, source="t")
                                                 for k, v in prices.items()])
        cohort, _ = start_cohort(s, t0, CohortRules(), [LineupEntry("full"), LineupEntry("part-low"),
                                                        LineupEntry("part-high")], t0)

    class Agent:
        def __init__(self, forecasts):
            self.forecasts = forecasts

        def decide(self, view):
            return Decision((), forecasts=self.forecasts)

    agents = {"full": Agent({"pm:x": 0.2, "pm:y": 0.7, "pm:z": 0.1}),
              "part-low": Agent({"pm:x": 0.3, "pm:y": 0.3}),  # 2 of 3 members, Σ 0.6: no inconsistency shown
              "part-high": Agent({"pm:x": 0.9, "pm:y": 0.5})}  # 2 of 3, Σ 1.4: over 1 already
    decide.run_round(engine, cohort, agents, "r1", t0)
    with session_scope(engine) as s:
        ingest.record_observations(s, t0 + timedelta(days=10), resolutions=[
            ("pm:x", Resolution.winner("pm:x", "NO")), ("pm:y", Resolution.winner("pm:y", YES)),
            ("pm:z", Resolution.winner("pm:z", "NO"))])
    c = cohort_statistics(engine, t0 + timedelta(days=11), n_boot=50)[cohort.name].consistency.set_index("agent")
    assert c.loc["full", "sum_deviation"] == pytest.approx(0.0) and c.loc["full", "n_groups"] == 1
    assert c.loc["part-low", "n_groups"] == 0 and np.isnan(c.loc["part-low", "sum_deviation"])
    assert c.loc["part-high", "sum_deviation"] == pytest.approx(0.4)
    assert c.loc["market", "sum_deviation"] == pytest.approx(0.1)
    # S′ on the complete group: "full" picked pm:y at 0.7 and pm:y won; the market picked pm:x at 0.6 and lost
    assert c.loc["full", "s_prime"] == pytest.approx(1 - (0.7 - 1) ** 2) and c.loc["full", "n_answers"] == 1
    assert c.loc["market", "s_prime"] == pytest.approx(-(0.6**2))
    assert np.isnan(c.loc["part-low", "n_answers"])  # an incomplete group gives no answer
    assert "n_pairs" not in c.columns  # a three-member group is no negation pair
    # the multi-class Brier of the complete group: Σ (p − y)² over x (NO), y (YES), z (NO), stated as given
    assert c.loc["full", "multi_brier"] == pytest.approx(0.2 ** 2 + 0.3 ** 2 + 0.1 ** 2)
    assert c.loc["market", "multi_brier"] == pytest.approx(0.6 ** 2 + 0.7 ** 2 + 0.2 ** 2)  # Σ 1.1 pays too
    assert np.isnan(c.loc["part-low", "n_multi"]) and np.isnan(c.loc["part-high", "multi_brier"])


def test_ladder_coherence_of_seats_and_of_the_venues_prices(engine):
    """Planted ladders: a threshold ladder ("above $100k/$110k/$120k") and a date ladder ("by January 20 /
    February 10"); a coherent seat has no violation, an incoherent one has every pair counted with its gap, and
    the venue's own prices at decision time are checked as the reference row "market"."""
    t0 = datetime(2026, 1, 4, tzinfo=timezone.utc)
    rungs = [Market(id=f"pm:t{x}", venue="polymarket", question=f"Will BTC close above ${x}k on January 13?",
                    close_time=t0 + timedelta(days=9), volume_24h=1.0) for x in (100, 110, 120)]
    dates = [Market(id=f"pm:{key}", venue="polymarket", question=f"Will X happen by {day}, 2026?",
                    close_time=close, volume_24h=1.0)
             for key, day, close in (("d1", "January 20", datetime(2026, 1, 20, tzinfo=timezone.utc)),
                                     ("d2", "February 10", datetime(2026, 2, 10, tzinfo=timezone.utc)))]
    prices = {"pm:t100": "0.7", "pm:t110": "0.5", "pm:t120": "0.55", "pm:d1": "0.3", "pm:d2": "0.4"}
    with session_scope(engine) as s:
        ingest.record_observations(s, t0, [*rungs, *dates], [Quote(k, {YES: Price.of(v)}, t0, t0, source="t")
                                                             for k, v in prices.items()])
        cohort, _ = start_cohort(s, t0, CohortRules(), [LineupEntry("coherent"), LineupEntry("incoherent"),
                                                        LineupEntry("partial")], t0)

    class Agent:
        def __init__(self, forecasts):
            self.forecasts = forecasts

        def decide(self, view):
            assert set(self.forecasts) <= set(view.forecast_set)
            return Decision((), forecasts=self.forecasts)

    agents = {"coherent": Agent({"pm:t100": 0.8, "pm:t110": 0.6, "pm:t120": 0.4, "pm:d1": 0.2, "pm:d2": 0.5}),
              "incoherent": Agent({"pm:t100": 0.3, "pm:t110": 0.5, "pm:t120": 0.6, "pm:d1": 0.7, "pm:d2": 0.4}),
              "partial": Agent({"pm:t100": 0.3})}  # one rung stated: no pair
    decide.run_round(engine, cohort, agents, "r1", t0)
    c = cohort_statistics(engine, t0 + timedelta(days=1), n_boot=50)[cohort.name].consistency.set_index("agent")
    assert c.loc["coherent", "n_ladder_pairs"] == 4 and c.loc["coherent", "ladder_violations"] == 0
    assert c.loc["coherent", "ladder_violation_mean"] == 0.0
    # above $120k > above $110k by 0.1, > above $100k by 0.3; $110k > $100k by 0.2; by January > by February by 0.3
    assert c.loc["incoherent", "n_ladder_pairs"] == 4 and c.loc["incoherent", "ladder_violations"] == 4
    assert c.loc["incoherent", "ladder_violation_mean"] == pytest.approx((0.1 + 0.3 + 0.2 + 0.3) / 4)
    assert c.loc["incoherent", "n_ladders"] == 2
    assert "partial" not in c.index  # no pair, and no other check to report
    # the venue's prices: above $120k at 0.55 over above $110k at 0.5 is the one broken pair
    assert c.loc["market", "n_ladder_pairs"] == 4 and c.loc["market", "ladder_violations"] == 1
    assert c.loc["market", "ladder_violation_mean"] == pytest.approx(0.05 / 4)
    assert bool(c.loc["market", "reference"]) and c.index[-1] == "market"
    assert "n_groups" not in c.columns  # ladders are no exclusive groups: no Σ P check on them


def test_demo_consistency_has_rows_for_agents_and_the_market_reference(demo_db):
    """The demo's universe holds exclusive groups, the forecast set takes some whole, and every agent plus the
    venue's own prices ("market") gets Σ P, negation-pair and S′ numbers."""
    stats = cohort_statistics(demo_db, LATER, n_boot=50)
    for name, st in stats.items():
        c = st.consistency.set_index("agent")
        assert "market" in c.index and bool(c.loc["market", "reference"]) and not c.drop("market")["reference"].any()
        assert c.index[-1] == "market"  # the reference row comes last
        assert (c["n_groups"] > 0).all() and (c["n_answers"] > 0).all(), name
        # the market follower states the price: it is exactly as (in)consistent as the market
        for col in ("sum_deviation", "s_prime", "multi_brier"):
            assert c.loc["market-follower", col] == pytest.approx(c.loc["market", col])
        # always-0.5 says 0.5 to every member: Σ = k/2, so a 3- or 4-member group is off by 0.5 or 1
        assert c.loc["always-0.5", "sum_deviation"] > 0.0
        assert ((c["s_prime"] >= -1) & (c["s_prime"] <= 1)).all()
    assert any("n_pairs" in st.consistency and st.consistency["n_pairs"].fillna(0).gt(0).any()
               for st in stats.values())  # seed 003's negation check ran on a two-member group
    for name, st in stats.items():  # the demo's ladders are in every forecast set and checked for every seat
        c = st.consistency.set_index("agent")
        assert (c["n_ladder_pairs"] > 0).all(), name
        assert c.loc["market-follower", "ladder_violations"] == c.loc["market", "ladder_violations"]
        assert c.loc["always-0.5", "ladder_violations"] == 0  # equal forecasts never break the order
    assert sum(int(st.consistency.set_index("agent").loc["oracle-noisy", "ladder_violations"])
               for st in stats.values()) > 0  # independent noise on each rung breaks the order now and then
