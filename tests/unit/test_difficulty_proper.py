"""Difficulty-adjusted Brier (two-way fixed effects) and the log and spherical scores, by hand."""

import math

import numpy as np
import pandas as pd
import pytest

import arena.scoring  # noqa: F401  (the package import completes the registry)
from arena.scoring.difficulty import difficulty_adjusted_brier, two_way_fixed_effects
from arena.scoring.proper import log_loss, log_score, spherical, spherical_score
from arena.scoring.registry import METRICS


def frame(rows):
    return pd.DataFrame(rows, columns=["agent", "question", "brier"])


def test_overlapping_subsets_by_hand():
    # A: q1 0.1, q2 0.3; B: q2 0.5, q3 0.7. Exact fit (a_A = 0): b = 0.1, 0.3, 0.5, a_B = 0.2; mean b = 0.3.
    # Raw means 0.2 vs 0.6 mostly reflect B's harder question; on the shared q2 B is worse by 0.2.
    out = difficulty_adjusted_brier(frame([("A", "q1", 0.1), ("A", "q2", 0.3), ("B", "q2", 0.5), ("B", "q3", 0.7)]))
    assert list(out["agent"]) == ["A", "B"]
    assert out["brier"].tolist() == pytest.approx([0.2, 0.6])
    assert out["brier_adjusted"].tolist() == pytest.approx([0.3, 0.5], abs=1e-8)


def test_the_adjustment_reverses_a_ranking_made_by_easy_questions():
    # "good" is 0.05 better on every question but answered only the hard ones; "lucky" got the easy ones too
    diff = {"e1": 0.02, "e2": 0.04, "h1": 0.40, "h2": 0.50}
    rows = [("good", q, diff[q] - 0.05) for q in ("h1", "h2")] + [("lucky", q, d) for q, d in diff.items()]
    out = difficulty_adjusted_brier(frame(rows)).set_index("agent")
    assert out.loc["good", "brier"] > out.loc["lucky", "brier"]  # raw Brier ranks the wrong agent first
    assert out.loc["lucky", "brier_adjusted"] - out.loc["good", "brier_adjusted"] == pytest.approx(0.05, abs=1e-8)


def test_dense_design_gives_the_raw_mean_and_degenerate_input_is_nan():
    rng = np.random.default_rng(0)
    rows = [(a, f"q{j}", rng.uniform()) for a in "abc" for j in range(6)]
    fit = two_way_fixed_effects(frame(rows))
    assert fit.converged and fit.agents["adjusted"].tolist() == pytest.approx(fit.agents["raw"].tolist(), abs=1e-8)
    assert (fit.agents["component"] == 0).all()
    lonely = two_way_fixed_effects(frame([("a", "q1", 0.2), ("b", "q2", 0.4), ("c", "q3", np.nan)]))
    assert lonely.agents["component"].tolist() == [0, 1, 2]  # no shared question: not comparable across groups
    assert lonely.agents.set_index("agent").loc["c", "n"] == 0
    assert math.isnan(lonely.agents.set_index("agent").loc["c", "adjusted"])
    assert two_way_fixed_effects(frame([])).agents.empty


def test_log_and_spherical_scores_by_hand():
    assert log_loss(0.8, 1.0) == pytest.approx(-math.log(0.8))
    assert log_loss(0.8, 0.0) == pytest.approx(-math.log(0.2))
    assert log_loss(0.0, 1.0) == pytest.approx(-math.log(1e-6))  # clipped: finite
    assert log_loss(0.8, 0.25) == pytest.approx(0.25 * -math.log(0.8) + 0.75 * -math.log(0.2))
    assert spherical(0.8, 1.0) == pytest.approx(0.8 / math.sqrt(0.68))
    assert spherical(0.5, 0.0) == pytest.approx(0.5 / math.sqrt(0.5))
    assert log_score([0.8, 0.3, 0.6], [1.0, 0.0, np.nan]) == pytest.approx((-math.log(0.8) - math.log(0.7)) / 2)
    assert math.isnan(log_score([], [])) and math.isnan(spherical_score([0.3], [np.nan]))
    with pytest.raises(ValueError):
        spherical(1.2, 1.0)


def test_proper_means_the_truth_scores_best_in_expectation():
    p = 0.3
    f = np.linspace(0.01, 0.99, 99)
    exp_log = p * log_loss(f, 1.0) + (1 - p) * log_loss(f, 0.0)
    exp_sph = p * spherical(f, 1.0) + (1 - p) * spherical(f, 0.0)
    assert f[np.argmin(exp_log)] == pytest.approx(p) and f[np.argmax(exp_sph)] == pytest.approx(p)


def test_new_scores_are_registered_with_their_direction():
    assert not METRICS["log_score"].higher_is_better and METRICS["spherical_score"].higher_is_better
    assert not METRICS["brier_adjusted"].higher_is_better
    assert METRICS["log_score"].fn is log_score
