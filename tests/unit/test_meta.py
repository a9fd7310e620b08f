"""DerSimonian–Laird random effects, checked by hand and on the textbook BCG vaccine trials."""

import math

import numpy as np
import pandas as pd
import pytest

from arena.scoring.meta import (cohort_differences, dersimonian_laird, differences_from_cells, meta_compare,
                                pair_differences, score_cells, t_quantile)

# Colditz et al. (1994): 13 BCG vaccine trials (vaccinated TB+, TB−, control TB+, TB−), the classic example of
# heterogeneous effects. The DerSimonian–Laird figures below are the ones every meta-analysis package prints for
# it (log risk ratio −0.7141, se 0.1787, 95 % CI −1.0644 to −0.3638, τ² 0.3088, I² 92.12 %, Q 152.23 on 12 df).
BCG = [(4, 119, 11, 128), (6, 300, 29, 274), (3, 228, 11, 209), (62, 13536, 248, 12619), (33, 5036, 47, 5761),
       (180, 1361, 372, 1079), (8, 2537, 10, 619), (505, 87886, 499, 87892), (29, 7470, 45, 7232),
       (17, 1699, 65, 1600), (186, 50448, 141, 27197), (5, 2493, 3, 2338), (27, 16886, 29, 17825)]


def test_bcg_trials_match_the_textbook_figures():
    y = [math.log(a / (a + b)) - math.log(c / (c + d)) for a, b, c, d in BCG]
    v = [1 / a - 1 / (a + b) + 1 / c - 1 / (c + d) for a, b, c, d in BCG]
    r = dersimonian_laird(y, np.sqrt(v))
    assert r.k == 13 and r.df == 12
    assert r.estimate == pytest.approx(-0.7141, abs=5e-5) and r.se == pytest.approx(0.1787, abs=5e-5)
    assert (r.ci_low, r.ci_high) == pytest.approx((-1.0644, -0.3638), abs=5e-5)
    assert r.tau2 == pytest.approx(0.3088, abs=5e-5) and r.i2 == pytest.approx(92.12, abs=5e-3)
    assert r.q == pytest.approx(152.2330, abs=5e-4)
    assert r.weights.sum() == pytest.approx(1.0)


def test_two_cohorts_by_hand():
    # y = 0, 2 with v = 0.5 each: w = 2, 2; fixed mean 1; Q = 2·1 + 2·1 = 4 on 1 df; C = 4 − 8/4 = 2;
    # τ² = (4 − 1)/2 = 1.5; w* = 1/2 each; se = 1; I² = 3/4.
    r = dersimonian_laird([0.0, 2.0], [math.sqrt(0.5)] * 2)
    assert (r.estimate, r.se, r.tau2, r.i2, r.q) == pytest.approx((1.0, 1.0, 1.5, 75.0, 4.0))
    assert r.ci_high - r.estimate == pytest.approx(1.959964, abs=1e-6)
    # Hartung-Knapp: Σ w*(y − μ)² / ((k − 1) Σ w*) = (0.5 + 0.5) / 1 = 1, and t(0.975, 1 df) = 12.7062
    assert r.hk_se == pytest.approx(1.0) and r.hk_ci_high == pytest.approx(1.0 + 12.706205, abs=1e-5)
    homogeneous = dersimonian_laird([0.0, 1.0], [1.0, 1.0])  # Q = 0.5 < df: τ² = 0, I² = 0, fixed = random
    assert homogeneous.tau2 == 0.0 and homogeneous.i2 == 0.0 and homogeneous.estimate == homogeneous.fixed_estimate


def test_t_quantiles_match_the_tables():
    for df, q in ((1, 12.706205), (4, 2.776445), (9, 2.262157), (19, 2.093024)):
        assert t_quantile(0.975, df) == pytest.approx(q, abs=1e-6)
    assert t_quantile(0.995, 3) == pytest.approx(5.840909, abs=1e-6) and t_quantile(0.025, 4) == pytest.approx(-2.776445)
    with pytest.raises(ValueError):
        t_quantile(1.0, 3)


def test_degenerate_inputs_are_nan_not_zero():
    r = dersimonian_laird([], [])
    assert r.k == 0 and math.isnan(r.estimate) and math.isnan(r.ci_low)
    one = dersimonian_laird([0.2, np.nan, 0.3], [0.1, 0.1, 0.0])  # only the first is usable
    assert one.k == 1 and one.estimate == pytest.approx(0.2) and math.isnan(one.i2) and math.isnan(one.hk_ci_low)
    with pytest.raises(ValueError):
        dersimonian_laird([1.0], [1.0, 2.0])


def test_cohort_differences_make_the_forest_plot_rows():
    rows = []
    for cohort, shift in (("w1", 0.1), ("w2", 0.3)):
        for q, base in enumerate([0.1, 0.2, 0.4]):
            rows += [(cohort, "a", f"q{q}", base + shift + 0.01 * q), (cohort, "b", f"q{q}", base)]
    scores = pd.DataFrame(rows, columns=["cohort", "agent", "question", "brier"])
    r, forest = meta_compare(scores, "a", "b")
    assert list(forest["cohort"]) == ["w1", "w2"] and list(forest["n"]) == [3, 3]
    assert forest["difference"].tolist() == pytest.approx([0.11, 0.31])
    assert forest["se"].tolist() == pytest.approx([0.01 / math.sqrt(3)] * 2)
    assert r.k == 2 and r.tau2 > 0 and r.i2 > 90  # two weeks that disagree: heterogeneity, not a general effect
    assert forest["weight"].sum() == pytest.approx(1.0)
    assert cohort_differences(scores, "a", "zz").empty


def test_every_pair_at_once_gives_each_pairs_rows_bit_for_bit():
    """`pair_differences` (every pair in one pass, what the model pages use) against `differences_from_cells`
    pair by pair, on ragged cells: agents missing from cohorts, unanswered questions, one-question cohorts."""
    rng = np.random.default_rng(7)
    rows = []
    for c in range(6):
        for q in range(int(rng.integers(1, 9))):
            for a in "abcde":
                if rng.random() < 0.8 and not (a == "e" and c < 3):  # e joins late; holes elsewhere
                    rows.append((f"w{c}", a, f"q{q}", float(rng.random())))
    cells = score_cells(pd.DataFrame(rows, columns=["cohort", "agent", "question", "brier"]))
    every = pair_differences(cells, ["a", "c", "e"])
    assert set(every["model"]) == {"a", "c", "e"} and set(every["versus"]) == set("abcde")
    for (model, versus), got in every.groupby(["model", "versus"], sort=False):
        one = differences_from_cells(cells, model, versus)
        assert list(got["cohort"]) == list(one["cohort"])
        for col in ("n", "difference", "se"):
            assert np.array_equal(got[col].to_numpy(dtype=float), one[col].to_numpy(dtype=float), equal_nan=True)
    assert len(every) == sum(len(differences_from_cells(cells, m, v)) for m in "ace" for v in "abcde" if v != m)
    assert pair_differences(cells.iloc[:0], ["a"]).empty
