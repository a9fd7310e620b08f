"""Brier scoring of bets: every worked number of seed 001, plus hand-computed edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.scoring.brier import (
    brier_band,
    brier_per_bet,
    brier_score,
    brier_skill_score,
    bss_vs_market,
    bss_vs_random,
    forecast_yes,
    implied_confidence,
    is_yes,
    kelly_probability,
    max_bet,
    return_band,
)


# --- implied confidence: seed 001's table -------------------------------------------------------------------


def test_max_bet_is_a_quarter_of_cash() -> None:
    assert max_bet(10_000) == 2_500
    assert max_bet(8_000) == 2_000


def test_implied_confidence_with_10000_cash() -> None:
    conf = implied_confidence([2_500, 1_250, 500, 50], max_bet(10_000))
    np.testing.assert_allclose(conf, [1.00, 0.50, 0.20, 0.02])


def test_implied_confidence_with_8000_cash() -> None:
    conf = implied_confidence([2_000, 500], max_bet(8_000))
    np.testing.assert_allclose(conf, [1.00, 0.25])


def test_implied_confidence_is_clipped_and_nan_without_room_to_bet() -> None:
    conf = implied_confidence([3_000, -5, 100, np.nan], [2_500, 2_500, 0, 2_500])
    assert conf[0] == 1.0  # an over-limit bet is still "100 %"
    assert conf[1] == 0.0
    assert math.isnan(conf[2])  # max bet 0: no size to read
    assert math.isnan(conf[3])


def test_implied_confidence_of_scalars_is_a_float() -> None:
    c = implied_confidence(1_250, 2_500)
    assert isinstance(c, float) and c == 0.5


def test_implied_confidence_of_one_bet_is_the_array_path_element_for_element() -> None:
    # one bet (a page's action) is read without numpy: the same number, or NaN, as the vectorised path gives
    inf, nan = math.inf, math.nan
    values = [0, 1, 3, 7, 1_250, 2_500, 3_000, 10**15 + 7, -5, 0.1, 1e-300, 1e308, -0.0, inf, -inf, nan]
    pairs = [(a, m) for a in values for m in values]
    vectorised = implied_confidence([a for a, _ in pairs], [m for _, m in pairs])
    for (a, m), v in zip(pairs, vectorised):
        one = implied_confidence(a, m)
        assert isinstance(one, float)
        assert (math.isnan(one) and math.isnan(v)) or one == v, (a, m, one, v)


# --- f_YES ------------------------------------------------------------------------------------------------------


def test_forecast_yes_of_yes_and_no_bets() -> None:
    # seed 001: "Betting NO with 80% confidence means you think YES has only 20% chance"
    np.testing.assert_allclose(forecast_yes(["YES", "NO"], [0.8, 0.8]), [0.8, 0.2])


def test_side_labels_are_case_and_space_insensitive_and_booleans_work() -> None:
    assert is_yes([" yes", "No", "YES"]).tolist() == [True, False, True]
    assert is_yes(np.array([True, False])).tolist() == [True, False]
    with pytest.raises(ValueError, match="side"):
        is_yes(["YES", "MAYBE"])


# --- Brier per bet: seed 001's table ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("side", "confidence", "outcome", "expected"),
    [
        ("YES", 0.80, 1.0, 0.04),  # (0.8 − 1)²
        ("YES", 0.80, 0.0, 0.64),  # (0.8 − 0)²
        ("NO", 0.80, 1.0, 0.64),  # f_YES 0.2: (0.2 − 1)²
        ("NO", 0.80, 0.0, 0.04),  # (0.2 − 0)²
    ],
)
def test_seed_brier_examples(side: str, confidence: float, outcome: float, expected: float) -> None:
    f = forecast_yes(side, confidence)
    assert brier_per_bet(f, outcome) == pytest.approx(expected)


def test_brier_of_a_probabilistic_resolution_and_a_void_bet() -> None:
    out = brier_per_bet([0.8, 0.8], [0.5, np.nan])
    assert out[0] == pytest.approx(0.09)  # (0.8 − 0.5)²
    assert math.isnan(out[1])  # NaN outcome = unresolved or void: not scored


def test_brier_rejects_values_outside_the_unit_interval() -> None:
    with pytest.raises(ValueError, match="outcome"):
        brier_per_bet([0.5], [2.0])
    with pytest.raises(ValueError, match="f_yes"):
        brier_per_bet([1.5], [1.0])


def test_mean_brier_excludes_unresolved_bets() -> None:
    # (0.04 + 0.64) / 2; the third bet is unresolved
    assert brier_score([0.8, 0.2, 0.5], [1.0, 1.0, np.nan]) == pytest.approx(0.34)


def test_mean_brier_of_nothing_is_nan_not_perfect() -> None:
    assert math.isnan(brier_score([], []))
    assert math.isnan(brier_score([0.7, 0.1], [np.nan, np.nan]))


# --- skill scores ---------------------------------------------------------------------------------------------------


def test_seed_brier_skill_score_example() -> None:
    assert brier_skill_score(0.15, 0.25) == pytest.approx(0.40)


def test_brier_skill_score_is_nan_for_a_zero_or_missing_reference() -> None:
    out = brier_skill_score([0.1, 0.1, np.nan, 0.25], [0.0, np.nan, 0.25, 0.25])
    assert math.isnan(out[0]) and math.isnan(out[1]) and math.isnan(out[2])
    assert out[3] == 0.0  # same as the reference


def test_bss_vs_random() -> None:
    # BS = (0.04 + 0.64) / 2 = 0.34 → 1 − 0.34 / 0.25 = −0.36 (worse than a coin)
    assert bss_vs_random([0.8, 0.8], [1.0, 0.0]) == pytest.approx(-0.36)
    assert math.isnan(bss_vs_random([], []))


def test_bss_vs_market_uses_the_same_bets_for_both() -> None:
    # agent: (0.9−1)² = 0.01, (0.3−0)² = 0.09 → 0.05; market: (0.6−1)² = 0.16, (0.5−0)² = 0.25 → 0.205.
    # The third bet has no price and the fourth no outcome: both drop out of *both* Briers.
    f = [0.9, 0.3, 0.0, 0.5]
    q = [0.6, 0.5, np.nan, 0.5]
    o = [1.0, 0.0, 1.0, np.nan]
    assert bss_vs_market(f, q, o) == pytest.approx(1 - 0.05 / 0.205)


def test_bss_vs_market_nan_when_empty_or_market_perfect() -> None:
    assert math.isnan(bss_vs_market([], [], []))
    assert math.isnan(bss_vs_market([0.7, 0.2], [1.0, 0.0], [1.0, 0.0]))


# --- Kelly-implied probability -------------------------------------------------------------------------------------


def test_kelly_probability_by_hand() -> None:
    # YES at 0.4 staking half the cash: 0.4 + 0.5 × 0.6 = 0.7
    # NO at YES price 0.7 (NO price 0.3) staking half: P(NO) = 0.3 + 0.5 × 0.7 = 0.65 → P(YES) = 0.35
    np.testing.assert_allclose(kelly_probability(["YES", "NO"], [0.4, 0.7], [0.5, 0.5]), [0.7, 0.35])


def test_kelly_probability_limits() -> None:
    # no stake: the market price; the whole cash: certainty; more than the cash: clipped
    np.testing.assert_allclose(kelly_probability(["YES", "NO"], [0.4, 0.7], [0.0, 0.0]), [0.4, 0.7])
    np.testing.assert_allclose(kelly_probability(["YES", "NO"], [0.4, 0.7], [1.0, 1.0]), [1.0, 0.0])
    np.testing.assert_allclose(kelly_probability(["YES", "NO"], [0.4, 0.7], [1.5, 1.5]), [1.0, 0.0])


@given(
    p=st.floats(0.0, 1.0),
    q=st.floats(0.01, 0.99),
)
def test_kelly_probability_inverts_the_kelly_stake(p: float, q: float) -> None:
    # A believer in P(YES) = p facing YES price q stakes (p − q)/(1 − q) on YES when p > q,
    # and (q − p)/q on NO otherwise (NO price 1 − q, P(NO) = 1 − p). Reading the stake back must give p.
    if p >= q:
        side, stake = "YES", (p - q) / (1 - q)
    else:
        side, stake = "NO", ((1 - p) - (1 - q)) / (1 - (1 - q))
    assert kelly_probability(side, q, stake) == pytest.approx(p, abs=1e-9)


# --- interpretation bands -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bs", "band"),
    [
        (0.0, "Perfect"),
        (0.04, "Excellent"),
        (0.10, "Excellent"),  # a boundary belongs to the better band
        (0.1000001, "Good"),
        (0.20, "Good"),
        (0.2000001, "Fair"),
        (0.25, "Fair"),  # the random guesser is "at or near random"
        (0.26, "Poor"),
        (0.40, "Poor"),
        (0.41, "Very Poor"),
        (1.0, "Very Poor"),
        (float("nan"), "n/a"),
    ],
)
def test_brier_band(bs: float, band: str) -> None:
    assert brier_band(bs) == band


def test_brier_band_ignores_float_noise_and_works_on_arrays() -> None:
    assert brier_band(0.1 + 1e-15) == "Excellent"
    assert brier_band(np.array([0.0, 0.3, np.nan])).tolist() == ["Perfect", "Poor", "n/a"]


@pytest.mark.parametrize(
    ("ret", "band"),
    [
        (50.01, "Exceptional"),
        (50.0, "Excellent"),  # the table's "> +50 %" is strict
        (20.01, "Excellent"),
        (20.0, "Good"),
        (7.0, "Good"),  # seed 001's +7.0 %
        (5.0, "Neutral"),
        (0.0, "Neutral"),
        (-5.0, "Neutral"),
        (-5.01, "Poor"),
        (-20.0, "Poor"),  # the table's "< −20 %" is strict
        (-20.01, "Very Poor"),
        (-100.0, "Very Poor"),
        (float("nan"), "n/a"),
    ],
)
def test_return_band(ret: float, band: str) -> None:
    assert return_band(ret) == band


def test_return_band_of_an_array() -> None:
    assert return_band([60.0, -30.0]).tolist() == ["Exceptional", "Very Poor"]
