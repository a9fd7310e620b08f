"""Calibration: reliability bins, ECE and the Murphy decomposition, on hand cases and synthetic forecasters."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.scoring import registry
from arena.scoring.calibration import (
    assign_bins,
    bin_edges,
    expected_calibration_error,
    murphy_by_group,
    murphy_decomposition,
    reliability_table,
)


def test_hand_case_reliability_table_and_ece():
    # bin 1 [0.1, 0.2): forecasts 0.1, 0.1 with outcomes 0, 1 → mean 0.1, freq 0.5
    # bin 8 [0.8, 0.9): forecasts 0.8, 0.8, 0.8, 0.8 with outcomes 1, 1, 1, 0 → mean 0.8, freq 0.75
    f = [0.1, 0.1, 0.8, 0.8, 0.8, 0.8]
    o = [0, 1, 1, 1, 1, 0]
    t = reliability_table(f, o)
    assert len(t) == 10 and t["count"].sum() == 6
    assert t.loc[1, "count"] == 2 and t.loc[1, "mean_forecast"] == pytest.approx(0.1)
    assert t.loc[1, "observed_freq"] == pytest.approx(0.5)
    assert t.loc[8, "count"] == 4 and t.loc[8, "observed_freq"] == pytest.approx(0.75)
    assert t.loc[0, "count"] == 0 and np.isnan(t.loc[0, "mean_forecast"])  # empty bins are kept, NaN
    # ECE = 2/6 · |0.5 − 0.1| + 4/6 · |0.75 − 0.8| = 0.4/3 + 0.2/6 = 1/6
    assert expected_calibration_error(f, o) == pytest.approx(1 / 6)


def test_hand_case_murphy_terms():
    f = [0.1, 0.1, 0.8, 0.8, 0.8, 0.8]
    o = [0, 1, 1, 1, 1, 0]
    d = murphy_decomposition(f, o)
    # ō = 4/6; REL = 2/6·0.4² + 4/6·0.05²; RES = 2/6·(0.5 − 2/3)² + 4/6·(0.75 − 2/3)²; UNC = 2/3·1/3
    assert d["reliability"] == pytest.approx(2 / 6 * 0.16 + 4 / 6 * 0.0025)
    assert d["resolution"] == pytest.approx(2 / 6 * (1 / 6) ** 2 + 4 / 6 * (1 / 12) ** 2)
    assert d["uncertainty"] == pytest.approx(2 / 9)
    brier = np.mean((np.array(f) - np.array(o)) ** 2)
    assert d["brier"] == pytest.approx(brier)
    assert d["brier"] == pytest.approx(d["reliability"] - d["resolution"] + d["uncertainty"], abs=1e-15)
    assert d["within_bin_variance"] == pytest.approx(0.0, abs=1e-15)
    assert d["n"] == 6


def test_murphy_identity_exact_when_forecasts_sit_on_bin_values():
    rng = np.random.default_rng(1)
    values = (np.arange(10) + 0.5) / 10  # the bin centres
    f = rng.choice(values, 5000)
    o = (rng.random(5000) < np.clip(f + 0.1, 0, 1)).astype(float)
    d = murphy_decomposition(f, o, n_bins=10)
    assert d["within_bin_variance"] == pytest.approx(0.0, abs=1e-15)
    assert d["within_bin_covariance"] == pytest.approx(0.0, abs=1e-15)
    assert d["brier"] == pytest.approx(d["reliability"] - d["resolution"] + d["uncertainty"], abs=1e-12)
    # the same over distinct values
    e = murphy_decomposition(f, o, n_bins=None)
    assert e["reliability"] == pytest.approx(d["reliability"], abs=1e-12)


def test_five_term_identity_holds_for_continuous_forecasts_and_fractional_outcomes():
    rng = np.random.default_rng(2)
    f = rng.random(3000)
    o = np.where(rng.random(3000) < 0.1, np.round(rng.random(3000), 2), (rng.random(3000) < f).astype(float))
    for strategy in ("uniform", "quantile"):
        d = murphy_decomposition(f, o, n_bins=7, strategy=strategy)
        closed = (d["reliability"] - d["resolution"] + d["uncertainty"]
                  + d["within_bin_variance"] - d["within_bin_covariance"])
        assert d["brier"] == pytest.approx(closed, abs=1e-12)
        assert d["brier"] == pytest.approx(np.mean((f - o) ** 2), abs=1e-12)
    assert murphy_decomposition(f, o, n_bins=None)["reliability"] == pytest.approx(np.mean((f - o) ** 2))


def test_perfectly_calibrated_forecaster_has_ece_near_zero():
    rng = np.random.default_rng(3)
    f = rng.random(200_000)
    o = (rng.random(f.size) < f).astype(float)
    assert expected_calibration_error(f, o) < 0.01
    assert expected_calibration_error(f, o, strategy="quantile") < 0.01
    over = np.clip(0.5 + 1.8 * (f - 0.5), 0, 1)  # same information, overconfident
    assert expected_calibration_error(over, o) > 0.1


def test_equal_mass_bins():
    f = np.linspace(0.0, 1.0, 100)
    edges = bin_edges(f, 4, "quantile")
    counts = np.bincount(assign_bins(f, edges), minlength=4)
    assert counts.tolist() == [25, 25, 25, 25]
    tied = bin_edges([0.3] * 50 + [0.7] * 50, 10, "quantile")  # ties merge edges: fewer bins, never empty ranges
    assert (np.diff(tied) > 0).all()
    assert assign_bins([0.0, 0.1, 0.999, 1.0], np.linspace(0, 1, 11)).tolist() == [0, 1, 9, 9]
    tenths = np.arange(10) / 10  # 0.3 must not fall below the edge linspace puts at 0.30000000000000004
    assert assign_bins(tenths, np.linspace(0, 1, 11)).tolist() == list(range(10))
    with pytest.raises(ValueError):
        bin_edges(f, 4, "weird")


def test_empty_and_unscored_give_nan():
    assert np.isnan(expected_calibration_error([], []))
    d = murphy_decomposition([0.3, np.nan], [np.nan, 1.0])
    assert d["n"] == 0 and np.isnan(d["brier"]) and np.isnan(d["reliability"])
    t = reliability_table([], [])
    assert len(t) == 10 and (t["count"] == 0).all()
    with pytest.raises(ValueError):
        murphy_decomposition([1.2], [1.0])


def test_by_group_matches_single_group_calls():
    rng = np.random.default_rng(4)
    f = rng.random(600)
    o = (rng.random(600) < f).astype(float)
    g = rng.choice(["x", "y", "z"], 600)
    by = murphy_by_group(f, o, g).set_index("group")
    for name in "xyz":
        single = murphy_decomposition(f[g == name], o[g == name])
        for k, v in single.items():
            assert by.loc[name, k] == pytest.approx(v, abs=1e-12)
    grid = reliability_table(f, o, groups=g)
    assert len(grid) == 30 and grid.groupby("group")["count"].sum().to_dict() == pd.Series(g).value_counts().to_dict()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10), st.integers(0, 1)), min_size=1, max_size=60))
def test_identity_on_grid_forecasts_property(pairs):
    f = np.array([a / 10 for a, _ in pairs])
    o = np.array([float(b) for _, b in pairs])
    d = murphy_decomposition(f, o, n_bins=None)
    assert d["brier"] == pytest.approx(d["reliability"] - d["resolution"] + d["uncertainty"], abs=1e-12)
    assert 0 <= d["ece"] <= 1


def test_registered():
    for name in ("ece", "reliability", "resolution", "uncertainty"):
        assert name in registry.METRICS
    assert registry.higher_is_better("resolution") and not registry.higher_is_better("ece")
