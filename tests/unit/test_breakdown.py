"""Skill by horizon and by category on planted forecasts: each question lands in its bucket, and the values are
the market-level Brier − market of the boards, hand-computed."""

from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest

from arena.scoring.breakdown import (HORIZON_BUCKETS, horizon_bucket, horizon_days, skill_by_category,
                                     skill_by_horizon)
from arena.scoring.headline import REF_MARKET, score_forecasts
from arena.domain.question_filter import UNCATEGORIZED, QuestionFilter

T0 = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)


def test_horizon_buckets_by_hand():
    days = [0.5, 7.0, 7.01, 30.0, 30.5, 90.0, 90.1, 400.0, np.nan, -1.0]
    assert horizon_bucket(days).tolist() == ["≤7 d", "≤7 d", "8–30 d", "8–30 d", "31–90 d", "31–90 d", ">90 d",
                                             ">90 d", None, "≤7 d"]
    assert horizon_days([T0, None], [T0 + timedelta(days=3, hours=12), T0]).tolist()[0] == 3.5


def _planted() -> pd.DataFrame:
    """Seat s on four markets, each asked once, resolving YES 3, 20, 60 and 200 days after the decision; it states
    0.9 where the market shows 0.6 (and 0.6 where it shows 0.9 on m4). Categories: m1, m2 sports; m3 politics;
    m4 none. Brier − market per market: m1..m3 (0.1² − 0.4²) = −0.15, m4 (0.4² − 0.1²) = +0.15."""
    rows = []
    for k, (days, cat, p, price) in enumerate([(3, "sports", 0.9, 0.6), (20, "sports", 0.9, 0.6),
                                               (60, "politics", 0.9, 0.6), (200, "", 0.6, 0.9)], start=1):
        rows.append({"cohort": "c", "agent": "s", "market_id": f"m{k}", "question": f"m{k}@r1", "probability": p,
                     "market_price": price, "outcome_yes": 1.0, "decided_at": T0,
                     "resolved_at": T0 + timedelta(days=days), "category": cat})
    return pd.DataFrame(rows)


def _with_facts(frame: pd.DataFrame) -> pd.DataFrame:
    facts = frame[["cohort", "question", "decided_at", "resolved_at", "category"]].drop_duplicates()
    scored = score_forecasts(frame.drop(columns=["decided_at", "resolved_at", "category"]))
    return scored.merge(facts, on=["cohort", "question"], how="left")


def test_each_planted_forecast_lands_in_its_bucket():
    t = skill_by_horizon(_with_facts(_planted()))
    seat = t[t["agent"] == "s"]
    assert seat["group"].tolist() == list(HORIZON_BUCKETS)
    assert seat["n_markets"].tolist() == [1, 1, 1, 1]
    assert seat["brier_minus_market"].tolist() == pytest.approx([-0.15, -0.15, -0.15, 0.15])
    assert seat["cohort"].tolist() == ["c"] * 4
    # the market reference is 0 against itself in every bucket
    assert t[t["agent"] == REF_MARKET]["brier_minus_market"].tolist() == [0.0] * 4


def test_category_breakdown_and_interval():
    t = skill_by_category(_with_facts(_planted()))
    seat = t[t["agent"] == "s"].set_index("group")
    assert list(seat.index) == ["politics", "sports", UNCATEGORIZED]
    assert seat.at["sports", "n_markets"] == 2
    assert seat.at["sports", "brier_minus_market"] == pytest.approx(-0.15)
    assert seat.at["sports", "brier_minus_market_lo"] == pytest.approx(-0.15)  # no spread: a zero-width interval
    assert np.isnan(seat.at["politics", "brier_minus_market_lo"])  # one market: no interval


def test_rounds_of_one_market_are_one_observation_per_bucket_and_pooled_markets_cluster():
    f = _planted().iloc[:1]
    second = f.assign(question="m1@r2", decided_at=T0 + timedelta(days=1), probability=0.7)
    other = pd.concat([f, second]).assign(cohort="d")
    frame = pd.concat([f, second, other], ignore_index=True)
    t = skill_by_horizon(_with_facts(frame), within=())
    seat = t[t["agent"] == "s"]
    # both rounds ≤ 7 days: per cohort one observation, the mean of (−0.15) and (0.3² − 0.4² = −0.07)
    assert seat["n_markets"].tolist() == [2] and seat["n_forecasts"].tolist() == [4]
    assert seat["brier_minus_market"].tolist() == pytest.approx([-0.11])
    assert np.isnan(seat["brier_minus_market_lo"].iloc[0])  # two cohorts, one market: one cluster, no interval


def test_question_filter_window_and_categories():
    decided = [datetime(2026, 1, 4, 23, 59, tzinfo=timezone.utc), datetime(2026, 1, 5, tzinfo=timezone.utc),
               datetime(2026, 1, 18, 23, 0, tzinfo=timezone.utc), datetime(2026, 1, 19, tzinfo=timezone.utc)]
    cats = ["sports", "", "politics", "sports"]
    from datetime import date
    f = QuestionFilter(date(2026, 1, 5), date(2026, 1, 18))
    assert f.mask(decided, cats).tolist() == [False, True, True, False]
    assert QuestionFilter(categories=("sports", UNCATEGORIZED)).mask(decided, cats).tolist() == [True, True, False, True]
    assert f.to_json() == {"from": "2026-01-05", "until": "2026-01-18", "categories": []}
    assert QuestionFilter().to_json() is None
    with pytest.raises(ValueError):
        QuestionFilter(date(2026, 2, 1), date(2026, 1, 1))


def test_the_intervals_are_the_clustered_t_test_of_evidence():
    """Every group's interval equals `evidence.cluster_t_test` on its observations (markets as clusters)."""
    from arena.scoring.evidence import cluster_t_test, market_rows

    rng = np.random.default_rng(4)
    rows = []
    for cohort in ("c1", "c2"):
        for k in range(12):
            for rnd in ("r1", "r2"):
                rows.append({"cohort": cohort, "agent": "s", "market_id": f"m{k}", "question": f"m{k}@{rnd}",
                             "probability": float(rng.uniform(0.05, 0.95)), "market_price": 0.5,
                             "outcome_yes": float(k % 2), "decided_at": T0,
                             "resolved_at": T0 + timedelta(days=5 + 10 * (k % 3)),
                             "category": ["a", "b"][k % 2]})
    scored = _with_facts(pd.DataFrame(rows))
    for within in (("cohort",), ()):
        t = skill_by_category(scored, within=within)
        seat = scored[scored["agent"] == "s"]
        for rec in t[t["agent"] == "s"].to_dict("records"):
            part = seat[seat["category"] == rec["group"]]
            if within:
                part = part[part["cohort"] == rec["cohort"]]
            obs = market_rows(part, ("diff_market",), keys=("cohort",))
            ref = cluster_t_test(obs["diff_market"], obs["market_id"])
            assert rec["n_markets"] == ref.n
            assert rec["brier_minus_market"] == pytest.approx(ref.estimate, abs=1e-12)
            assert rec["brier_minus_market_lo"] == pytest.approx(ref.ci_low, abs=1e-12)
            assert rec["brier_minus_market_hi"] == pytest.approx(ref.ci_high, abs=1e-12)
