"""A forecast set's headroom (scoring.headroom), on numbers worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from arena.scoring.headroom import FALLBACK_SD, headroom, markets_needed, more_weeks, paired_variance, z_sum

NAN = float("nan")


def asked() -> pd.DataFrame:
    # m1 asked in two rounds (0.6, then 0.8) and resolved YES; m2 once at 0.3, resolved NO; m3 once at 0.02 — out
    # of band, filled — and still open
    return pd.DataFrame({"market_id": ["m1", "m1", "m2", "m3"], "market_price": [0.6, 0.8, 0.3, 0.02],
                         "in_band": [True, True, True, False], "filled": [False, False, False, True],
                         "outcome_yes": [1.0, 1.0, 0.0, NAN]})


def seats() -> pd.DataFrame:
    rows = [("a", "m1", 0.7, 1.0), ("a", "m1", 0.7, 1.0), ("a", "m2", 0.2, 0.0), ("a", "m3", 0.1, NAN),
            ("b", "m1", 0.5, 1.0), ("b", "m1", 0.5, 1.0), ("b", "m2", 0.5, 0.0), ("b", "m3", 0.5, NAN)]
    return pd.DataFrame(rows, columns=["agent", "market_id", "probability", "outcome_yes"])


def test_z_sum_is_the_two_normal_quantiles():
    assert z_sum() == pytest.approx(1.959964 + 0.841621, abs=1e-6)
    with pytest.raises(ValueError):
        z_sum(alpha=0)


def test_the_market_and_half_briers_are_market_level_means_and_the_shares_count_questions():
    h = headroom(asked(), seats())
    # m1: mean of 0.4² and 0.2² = 0.10; m2: 0.3² = 0.09; the open m3 is not scored
    assert h.market_brier == pytest.approx(0.095) and h.half_brier == pytest.approx(0.25)
    assert (h.in_band_share, h.filled_share) == (0.75, 0.25)
    assert (h.n_questions, h.n_markets, h.n_resolved) == (4, 3, 2)


def test_the_detectable_difference_comes_from_the_seats_paired_differences():
    h = headroom(asked(), seats())
    # a − b per market: m1 0.09 − 0.25 = −0.16, m2 0.04 − 0.25 = −0.21: sample variance 0.00125
    assert h.sd_basis == "seats" and h.paired_sd == pytest.approx(math.sqrt(0.00125))
    assert h.min_detectable_difference == pytest.approx(z_sum() * math.sqrt(0.00125) / math.sqrt(3))


def test_one_seat_falls_back_to_market_minus_half_then_to_the_fixed_sd():
    one = seats()[seats()["agent"] == "a"]
    h = headroom(asked(), one)
    # market − always-0.5 per market: m1 0.10 − 0.25, m2 0.09 − 0.25: sample variance 0.00005
    assert h.sd_basis == "references" and h.paired_sd == pytest.approx(math.sqrt(0.00005))
    early = asked().assign(outcome_yes=[1.0, 1.0, NAN, NAN])  # one market resolved: no variance to take
    h = headroom(early, one)
    assert h.sd_basis == "fallback" and h.paired_sd == FALLBACK_SD
    assert h.min_detectable_difference == pytest.approx(z_sum() * FALLBACK_SD / math.sqrt(3))


def test_fallback_sd_is_that_of_two_forecasts_apart_on_a_coin():
    d = np.array([(0.5 - y) ** 2 - (0.7 - y) ** 2 for y in (0.0, 1.0)])
    assert np.sqrt(np.mean((d - d.mean()) ** 2)) == pytest.approx(FALLBACK_SD)


def test_an_empty_set_has_no_headroom_and_nothing_resolved_has_no_briers():
    h = headroom(asked().iloc[0:0], seats().iloc[0:0])
    assert h.market_brier is None and h.min_detectable_difference is None and h.n_markets == 0
    h = headroom(asked().assign(outcome_yes=NAN), seats().assign(outcome_yes=NAN))
    assert h.market_brier is None and h.half_brier is None and h.in_band_share == 0.75


def test_headrooms_of_many_cohorts_equal_each_cohorts_own():
    from arena.scoring.headroom import headrooms

    a, b = asked(), asked().assign(market_price=[0.5, 0.5, 0.9, 0.5], in_band=[True, True, True, True])
    sa, sb = seats(), seats().assign(probability=[0.6, 0.8, 0.1, 0.5, 0.3, 0.3, 0.3, 0.3])
    both = headrooms(pd.concat([a.assign(cohort="A"), b.assign(cohort="B")]),
                     pd.concat([sa.assign(cohort="A"), sb.assign(cohort="B")]))
    for got, want in ((both["A"], headroom(a, sa)), (both["B"], headroom(b, sb))):
        assert got.to_json() == pytest.approx(want.to_json())
    assert both["A"] != both["B"]


def test_paired_variance_needs_a_pair_sharing_two_markets():
    t = pd.DataFrame([[0.1, NAN, 0.3], [0.2, 0.2, NAN]], index=["a", "b"], columns=["m1", "m2", "m3"])
    assert paired_variance(t) is None
    t = pd.DataFrame([[0.1, 0.0, 0.3], [0.2, 0.2, 0.2], [0.0, 0.1, 0.2]], index=list("abc"))
    expected = np.mean([np.var([-0.1, -0.2, 0.1], ddof=1), np.var([0.1, -0.1, 0.1], ddof=1),
                        np.var([0.2, 0.1, 0.0], ddof=1)])
    assert paired_variance(t) == pytest.approx(expected)


def test_markets_needed_and_more_weeks_invert_the_formula():
    # (2.8016 × 0.2 / 0.05)² = 125.58 → 126 markets
    assert markets_needed(0.05, 0.2) == 126
    assert more_weeks(0.05, 0.2, n_now=26, markets_per_week=20) == 5
    assert more_weeks(0.05, 0.2, n_now=200, markets_per_week=20) == 0
    assert more_weeks(0.05, 0.2, n_now=26, markets_per_week=0) is None
    with pytest.raises(ValueError):
        markets_needed(0, 0.2)


def test_a_models_projection_uses_its_market_level_differences_and_its_pace():
    from arena.read.headroom import model_projection

    rows = pd.DataFrame({"market_id": ["m1", "m1", "m2", "m3"], "probability": [0.7, 0.9, 0.2, 0.5],
                         "market_price": [0.6, 0.8, 0.3, 0.5], "outcome_yes": [1.0, 1.0, 0.0, NAN]})
    p = model_projection(rows, asked_weeks=2.0, n_asked=10, deltas=(0.05, 0.5))
    # model − market per market: m1 mean(0.09, 0.01) − mean(0.16, 0.04) = −0.05; m2 0.04 − 0.09 = −0.05 → sd 0
    assert p.sd_basis == "model" and p.sd == pytest.approx(0.0, abs=1e-7) and (p.n_asked, p.n_resolved) == (10, 2)
    assert p.per_week == 5.0 and [r.markets for r in p.rows] == [2, 2] and p.rows[0].more_weeks == 0
    one = model_projection(rows[rows["market_id"] == "m1"], asked_weeks=2.0, n_asked=10, deltas=(0.05,))
    assert one.sd_basis == "fallback" and one.sd == FALLBACK_SD
    # (2.8016 × 0.2 / 0.05)² → 126 markets; 116 beyond the 10 asked at 5 a week → 24 weeks
    assert one.rows[0].markets == 126 and one.rows[0].more_weeks == 24


def test_paired_variance_with_gaps_equals_the_pair_by_pair_loop():
    rng = np.random.default_rng(3)
    values = rng.uniform(0, 1, (6, 15))
    values[rng.uniform(size=values.shape) < 0.3] = np.nan
    expected = []
    for i in range(6):
        for j in range(i + 1, 6):
            d = values[i] - values[j]
            d = d[~np.isnan(d)]
            if len(d) >= 2:
                expected.append(np.var(d, ddof=1))
    assert paired_variance(pd.DataFrame(values)) == pytest.approx(np.mean(expected), rel=1e-12)
