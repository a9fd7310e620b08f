"""Risk of a seat's book from its daily marks: the Sharpe ratio of its daily returns and its maximum drawdown
(pure: numpy in, numbers out; imports no store, no clock).

The equity path. A seat's marked equity (cash + positions at the marks' prices, integer micro-USD) is taken once
per UTC calendar day — the last portfolio snapshot of the day — preceded by its starting cash (the book before
its first trade). `daily_equity` builds it; money stays integer until the ratios below.

- **Daily returns** r_d = E_d / E_{d−1} − 1 between consecutive points of that path (a day without a mark is no
  point: the next return spans the gap).
- **Sharpe** = mean(r) / sd(r) (sample sd, n − 1), per day and **not annualised**: a cohort lives a few weeks and
  paper cash earns nothing, so there is no risk-free rate to subtract and no year to scale to (× √365 would
  annualise it). None, with a reason, below `MIN_RETURNS` daily returns or when the equity never moved (sd 0).
- **Maximum drawdown** = the largest fall from a running peak, as a fraction of that peak:
  max_t (max_{s ≤ t} E_s − E_t) / max_{s ≤ t} E_s, in [0, 1]; 0 when the equity never fell below a previous
  peak. Higher is worse. None, with a reason, before the first daily mark.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena.scoring.registry import register

MIN_RETURNS = 5  # daily returns before a Sharpe ratio is reported
NO_MARK = "no daily mark yet"
FLAT = "the equity never moved"

SHARPE = register("sharpe", higher_is_better=True, unit="per day",
                  description="Sharpe ratio of the daily returns of the marked equity (mean / sd, not annualised)")
MAX_DRAWDOWN = register("max_drawdown", higher_is_better=False, unit="fraction of the peak",
                        description="largest fall of the daily marked equity from a running peak, as a share of it")


@dataclass(frozen=True)
class EquityRisk:
    """sharpe (per day) and max_drawdown (0..1) of one equity path, None where not defined; note says why the
    Sharpe ratio (or both) is missing; n_returns counts the daily returns."""

    sharpe: float | None
    max_drawdown: float | None
    n_returns: int
    note: str | None = None


def daily_equity(days: Sequence[Any], values_micros: Sequence[int], start_micros: int) -> np.ndarray:
    """The equity path (int64 micro-USD): `start_micros`, then the last of `values_micros` on each of `days` (the
    UTC calendar day of each mark — any sortable key, e.g. a `date` — with the marks in time order), in day order."""
    last: dict[Any, int] = {}
    for day, v in zip(days, values_micros):
        last[day] = int(v)  # a later mark of the same day replaces an earlier one
    return np.asarray([int(start_micros)] + [last[d] for d in sorted(last)], dtype=np.int64)


def daily_returns(equity: Any) -> np.ndarray:
    """r_d = E_d / E_{d−1} − 1 of an equity path (floats; a step from a non-positive equity is NaN)."""
    e = np.asarray(equity, dtype=np.int64)
    if e.size < 2:
        return np.zeros(0)
    prev, cur = e[:-1].astype(float), e[1:].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(prev > 0, cur / prev - 1.0, np.nan)


def sharpe_ratio(equity: Any, min_returns: int = MIN_RETURNS) -> tuple[float | None, str | None]:
    """(Sharpe per day, None) of an equity path, or (None, the reason)."""
    r = daily_returns(equity)
    r = r[np.isfinite(r)]
    if r.size < max(min_returns, 2):
        return None, f"fewer than {max(min_returns, 2)} daily returns ({r.size})"
    sd = float(np.std(r, ddof=1))
    if sd <= 0.0:
        return None, FLAT
    return float(np.mean(r)) / sd, None


def max_drawdown(equity: Any) -> tuple[float | None, str | None]:
    """(largest fall from a running peak as a share of that peak, None), or (None, the reason)."""
    e = np.asarray(equity, dtype=np.int64)
    if e.size < 2:
        return None, NO_MARK
    peak = np.maximum.accumulate(e)
    fall = peak - e  # integer micro-USD
    ok = peak > 0
    if not ok.any():
        return None, "no positive equity"
    return float(np.max(np.where(ok, fall / np.where(ok, peak, 1), 0.0))), None


def equity_risk(equity: Any, min_returns: int = MIN_RETURNS) -> EquityRisk:
    """Sharpe and maximum drawdown of one equity path (`daily_equity`), with the reason for a missing one."""
    sharpe, why = sharpe_ratio(equity, min_returns)
    dd, why_dd = max_drawdown(equity)
    return EquityRisk(sharpe, dd, int(max(np.asarray(equity).size - 1, 0)), why_dd or why)


__all__ = ["EquityRisk", "FLAT", "MAX_DRAWDOWN", "MIN_RETURNS", "NO_MARK", "SHARPE", "daily_equity",
           "daily_returns", "equity_risk", "max_drawdown", "sharpe_ratio"]
