"""Portfolio scores as floats: seed 001's worked numbers and the win-rate rule."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.scoring.brier import return_band
from arena.scoring.pnl import bet_won, position_value, profit_loss, return_pct, total_value, win_rate


def test_seed_portfolio_example() -> None:
    # cash $7,500 + positions $3,200 = $10,700 → P/L +$700, +7.0 %
    total = total_value(7_500.0, [2_000.0, 1_200.0])
    assert total == pytest.approx(10_700.0)
    assert profit_loss(total, 10_000.0) == pytest.approx(700.0)
    assert return_pct(total, 10_000.0) == pytest.approx(7.0)
    assert return_band(return_pct(total, 10_000.0)) == "Good"


def test_total_value_without_positions_is_the_cash_and_nan_if_a_position_cannot_be_marked() -> None:
    assert total_value(9_000.0, []) == 9_000.0
    assert math.isnan(total_value(9_000.0, [100.0, np.nan]))


def test_pnl_and_return_are_vectorised() -> None:
    np.testing.assert_allclose(profit_loss([12_000.0, 8_000.0], [10_000.0, 10_000.0]), [2_000.0, -2_000.0])
    np.testing.assert_allclose(return_pct([12_000.0, 8_000.0], [10_000.0, 10_000.0]), [20.0, -20.0])


def test_return_pct_is_nan_without_a_positive_start() -> None:
    out = return_pct([100.0, 100.0, 100.0], [0.0, -5.0, np.nan])
    assert np.isnan(out).all()


def test_seed_settlement_example_in_floats() -> None:
    # $500 on YES at 0.40 → 1,250 shares; YES resolves → each pays $1 → $1,250; realized +$750
    shares = 500.0 / 0.40
    assert shares == pytest.approx(1_250.0)
    assert position_value(shares, "YES", 1.0) == pytest.approx(1_250.0)
    assert position_value(shares, "YES", 1.0) - 500.0 == pytest.approx(750.0)


def test_position_value_of_a_no_position_uses_the_no_price() -> None:
    # 100 NO shares with YES at 0.3: each worth 0.7
    assert position_value(100.0, "NO", 0.3) == pytest.approx(70.0)
    np.testing.assert_allclose(position_value([10.0, 10.0], ["YES", "NO"], [0.25, 0.25]), [2.5, 7.5])


def test_bet_won_on_binary_resolutions() -> None:
    won = bet_won(["YES", "YES", "NO", "NO", "YES"], [1.0, 0.0, 0.0, 1.0, np.nan])
    assert won[:4].tolist() == [1.0, 0.0, 1.0, 0.0]
    assert math.isnan(won[4])  # unresolved / void: does not count


def test_bet_won_on_binary_resolutions_ignores_the_price() -> None:
    # seed 001: winning means the side matches the outcome, even if the price made the bet a poor one
    assert bet_won("YES", 1.0, 1.0) == 1.0


def test_bet_won_on_probabilistic_resolutions_compares_payout_with_price() -> None:
    won = bet_won(
        ["YES", "YES", "NO", "NO", "YES", "YES"],
        [0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
        [0.4, 0.6, 0.6, 0.4, 0.5, np.nan],
    )
    # YES paid 0.4, gets 0.5: won. YES paid 0.6, gets 0.5: lost.
    # NO at YES 0.6 paid 0.4, gets 0.5: won. NO at YES 0.4 paid 0.6, gets 0.5: lost.
    # Paid exactly the payout: nothing gained, lost. No price known: undecidable, NaN.
    assert won[:5].tolist() == [1.0, 0.0, 1.0, 0.0, 0.0]
    assert math.isnan(won[5])


def test_win_rate_by_hand() -> None:
    # YES/YES ✓, NO/YES ✗, NO/NO ✓, unresolved excluded → 2 / 3
    assert win_rate(["YES", "NO", "NO", "YES"], [1.0, 1.0, 0.0, np.nan]) == pytest.approx(2 / 3)


def test_win_rate_of_nothing_is_nan() -> None:
    assert math.isnan(win_rate([], []))
    assert math.isnan(win_rate(["YES"], [np.nan]))
