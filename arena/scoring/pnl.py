"""Portfolio scores as floats: total value, P/L, return %, position value and win rate.

Money is exact in the ledger (integer micro-USD); these functions take dollars as floats because scoring is
statistics over many agents, not bookkeeping. Pure and vectorised; imports only numpy (and brier for sides).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.scoring.brier import ArrayLike, _floats, _scalar_or_array, is_yes
from arena.scoring.registry import metric, register


def total_value(cash: float, position_values: ArrayLike) -> float:
    """Cash plus the marked value of every open position, in USD.

    No positions is a real portfolio (all cash), so an empty `position_values` gives `cash`, not NaN; a NaN among
    the position values (an unmarkable position) makes the total NaN rather than silently undercounting.
    """
    v = np.atleast_1d(_floats(position_values))
    return float(cash) + float(v.sum())


register(
    "total_value",
    higher_is_better=True,
    description="Cash plus the marked value of open positions",
    unit="USD",
    fn=total_value,
)


@metric("pnl", higher_is_better=True, description="Total value minus starting balance", unit="USD")
def profit_loss(total: ArrayLike, starting_balance: ArrayLike) -> Any:
    """P/L in USD: total value − starting balance (vectorised; NaN propagates)."""
    return _scalar_or_array(_floats(total) - _floats(starting_balance), total)


register(
    "pnl_at_bid",
    higher_is_better=True,
    description="P/L with open positions marked at the bid (what selling them would fetch), where bids are recorded",
    unit="USD",
)


@metric(
    "return_pct",
    higher_is_better=True,
    description="P/L as a percentage of the starting balance",
    unit="percent",
)
def return_pct(total: ArrayLike, starting_balance: ArrayLike) -> Any:
    """Return in percent: (total − starting) / starting × 100. NaN where the starting balance is not positive."""
    t, s = np.broadcast_arrays(_floats(total), _floats(starting_balance))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(s > 0, (t - s) / s * 100.0, np.nan)
    return _scalar_or_array(out, total)


def position_value(shares: ArrayLike, side: ArrayLike, price_yes: ArrayLike) -> Any:
    """Marked value in USD of `shares` shares: shares × YES price for YES, shares × (1 − YES price) for NO.

    At resolution the price is the payout (1 / 0, or the fraction of a probabilistic resolution).
    """
    n, q = _floats(shares), _floats(price_yes)
    return _scalar_or_array(n * np.where(is_yes(side), q, 1.0 - q), shares)


def bet_won(side: ArrayLike, outcome_yes: ArrayLike, price_yes_at_bet: ArrayLike | None = None) -> Any:
    """1.0 if the bet won, 0.0 if it lost, NaN if it does not count (unresolved, void, or undecidable).

    Binary resolution (outcome 0 or 1): a bet wins when its side matches the outcome (seed 001), whatever the price.
    Probabilistic resolution (0 < outcome < 1): neither side "matches", so a bet counts as won when its side's
    payout per share beats the price it paid per share — i.e. when the bet made money: for YES, outcome > YES price;
    for NO, 1 − outcome > 1 − YES price. A tie is a loss (nothing gained). Without a price it is NaN (excluded).
    """
    yes = is_yes(side)
    o = _floats(outcome_yes)
    q = np.full(np.shape(o), np.nan) if price_yes_at_bet is None else _floats(price_yes_at_bet)
    yes, o, q = np.broadcast_arrays(yes, o, q)
    side_payout = np.where(yes, o, 1.0 - o)
    side_price = np.where(yes, q, 1.0 - q)
    with np.errstate(invalid="ignore"):
        binary = (o == 0.0) | (o == 1.0)
        fractional = (o > 0.0) & (o < 1.0)
        won = np.where(binary, side_payout == 1.0, side_payout > side_price).astype(float)
    undecided = ~(binary | fractional) | (fractional & np.isnan(q))  # NaN / out-of-range outcome, or no price
    return _scalar_or_array(np.where(undecided, np.nan, won), outcome_yes)


@metric(
    "win_rate",
    higher_is_better=True,
    description="Share of resolved bets whose side won (probabilistic resolutions: the side's payout beat its price)",
    unit="fraction, 0..1",
)
def win_rate(side: ArrayLike, outcome_yes: ArrayLike, price_yes_at_bet: ArrayLike | None = None) -> float:
    """Mean of `bet_won` over bets that count, in [0, 1]; NaN when none count."""
    w = np.atleast_1d(bet_won(side, outcome_yes, price_yes_at_bet))
    w = w[~np.isnan(w)]
    return float(w.mean()) if w.size else float("nan")


__all__ = ["bet_won", "position_value", "profit_loss", "return_pct", "total_value", "win_rate"]
