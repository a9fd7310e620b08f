"""Risk from the daily marks (`scoring.risk`): a known equity path's maximum drawdown and Sharpe ratio by hand,
the daily path from snapshots, and None with a reason where too few days were marked."""

from datetime import date

import numpy as np
import pytest

from arena.scoring.registry import METRICS
from arena.scoring.risk import (FLAT, NO_MARK, daily_equity, daily_returns, equity_risk, max_drawdown,
                                sharpe_ratio)

M = 1_000_000  # micro-USD per USD


def test_a_known_path_by_hand():
    # 100 → 110 → 99 → 121 → 108.9 → 119.79: peaks 110 then 121; falls 10 % and 10 %
    equity = np.array([100, 110, 99, 121, 108.9, 119.79]) * M
    dd, why = max_drawdown(equity.astype(np.int64))
    assert why is None and dd == pytest.approx(0.10)
    r = daily_returns(equity.astype(np.int64))
    assert r.tolist() == pytest.approx([0.10, -0.10, 121 / 99 - 1, -0.10, 0.10])
    mean = (0.10 - 0.10 + (121 / 99 - 1) - 0.10 + 0.10) / 5
    sd = np.sqrt(sum((x - mean) ** 2 for x in r) / 4)
    sharpe, why = sharpe_ratio(equity.astype(np.int64))
    assert why is None and sharpe == pytest.approx(mean / sd)


def test_a_deeper_second_fall_is_the_maximum():
    dd, _ = max_drawdown(np.array([100, 80, 120, 60, 70], dtype=np.int64) * M)
    assert dd == pytest.approx(0.5)  # 120 → 60
    assert max_drawdown(np.array([100, 101, 102], dtype=np.int64))[0] == 0.0  # never fell


def test_too_few_days_give_none_with_a_reason():
    assert max_drawdown(np.array([100 * M])) == (None, NO_MARK)
    value, why = sharpe_ratio(np.array([100, 101, 99], dtype=np.int64) * M)
    assert value is None and "fewer than 5 daily returns (2)" in why
    assert sharpe_ratio(np.full(8, 100 * M, dtype=np.int64)) == (None, FLAT)
    risk = equity_risk(np.array([100 * M, 90 * M]))
    assert risk.sharpe is None and risk.max_drawdown == pytest.approx(0.1) and risk.n_returns == 1
    assert "fewer than" in risk.note


def test_daily_equity_keeps_the_last_mark_of_each_day_after_the_start():
    d = [date(2026, 1, 4), date(2026, 1, 5), date(2026, 1, 5), date(2026, 1, 7)]
    path = daily_equity(d, [11, 12, 13, 9], 10)
    # day 1: 11; day 2: 13, its later mark; day 4: 9 (a day without a mark is no point)
    assert path.tolist() == [10, 11, 13, 9] and path.dtype == np.int64


def test_registered_directions():
    assert METRICS["sharpe"].higher_is_better and not METRICS["max_drawdown"].higher_is_better
    assert METRICS["pnl_at_bid"].higher_is_better
