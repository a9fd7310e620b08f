"""Brier scores of bets: implied confidence from bet size, P(YES) per bet, Brier, skill scores and bands.

"Brier" here always means the binary Brier score on P(YES): (f_yes − outcome)², in [0, 1], lower is better.
Outcomes are the YES payout in [0, 1]: 1 = YES, 0 = NO, a fraction for a probabilistic resolution, NaN for
unresolved or void (excluded everywhere). Pure and vectorised; imports only numpy and pandas.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from arena.scoring.registry import metric, register

MAX_BET_FRACTION = 0.25  # seed 001: the maximum bet is 25 % of cash, and a maximum bet means 100 % confidence
RANDOM_BRIER = 0.25  # Brier of the always-50 % forecaster on a binary outcome
BAND_DECIMALS = 9  # values are rounded this far before banding so float noise (0.1000000000002) never flips a band
NA_BAND = "n/a"
# BSS vs market divides by the market's Brier: below this floor there is nothing meaningful to divide by (a market
# priced 0.9995 on an outcome that happens scores ~0), so the value is NaN with a reason instead of −4,517.
BSS_MARKET_FLOOR = 0.01
BSS_MARKET_MIN = 1.0 - 1.0 / BSS_MARKET_FLOOR  # so bss_vs_market always lies in [−99, 1]

ArrayLike = Any


def _floats(x: ArrayLike) -> np.ndarray:
    return np.asarray(x, dtype=float)


def _scalar_or_array(out: np.ndarray, like: ArrayLike) -> Any:
    """Give back a Python scalar when the caller passed scalars, an array otherwise."""
    return out.item() if np.ndim(like) == 0 and out.ndim == 0 else out


def _check_unit_interval(x: np.ndarray, what: str) -> None:
    bad = np.isfinite(x) & ((x < 0.0) | (x > 1.0))
    if bad.any():
        raise ValueError(f"{what} must lie in [0, 1]; got {x[bad][:5].tolist()}")


def max_bet(cash: ArrayLike, fraction: float = MAX_BET_FRACTION) -> Any:
    """Largest allowed bet in USD for `cash` USD of cash: cash × fraction (25 % by default)."""
    c = _floats(cash)
    return _scalar_or_array(c * fraction, cash)


_PLAIN = (int, float)  # Python numbers (not bool, not Decimal): read without numpy


def implied_confidence(amount: ArrayLike, max_bet: ArrayLike) -> Any:
    """Confidence implied by bet size, in [0, 1]: amount / max_bet, clipped (both in USD).

    A maximum bet means 100 %. NaN where max_bet ≤ 0 or either input is NaN: with no room to bet there is no
    size to read a confidence from.
    """
    if amount.__class__ in _PLAIN and max_bet.__class__ in _PLAIN:  # one bet (a page's action row): no arrays
        a, m = float(amount), float(max_bet)
        if not m > 0 or a != a:
            return math.nan
        return min(max(a / m, 0.0), 1.0)
    a, m = np.broadcast_arrays(_floats(amount), _floats(max_bet))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a huge bet over a tiny max: 100 %
        c = np.where(m > 0, a / m, np.nan)
    return _scalar_or_array(np.clip(c, 0.0, 1.0), amount)


def is_yes(side: ArrayLike) -> np.ndarray:
    """Boolean array: True for a YES bet, False for NO. Accepts booleans or 'YES'/'NO' (any case, spaces ignored)."""
    arr = np.asarray(side)
    if arr.dtype == bool:
        return arr
    # A million bets carry two or three distinct labels: normalise each distinct label once, then index.
    codes, uniques = pd.factorize(arr.astype(object).ravel(), use_na_sentinel=False)
    labels = pd.Series([str(u) for u in uniques], dtype=object).str.strip().str.upper()
    yes_u = (labels == "YES").to_numpy()
    no_u = (labels == "NO").to_numpy()
    if not (yes_u | no_u).all():
        bad = sorted(set(labels[~(yes_u | no_u)]))[:5]
        raise ValueError(f"side must be 'YES' or 'NO'; got {bad}")
    return yes_u[codes].reshape(arr.shape)


def forecast_yes(side: ArrayLike, confidence: ArrayLike) -> Any:
    """P(YES) of a bet in [0, 1]: the confidence for a YES bet, 1 − confidence for a NO bet.

    Betting NO with 80 % confidence says YES has a 20 % chance.
    """
    c = _floats(confidence)
    return _scalar_or_array(np.where(is_yes(side), c, 1.0 - c), confidence)


def kelly_probability(side: ArrayLike, price_yes: ArrayLike, stake_fraction: ArrayLike) -> Any:
    """P(YES) in [0, 1] that would make a Kelly bettor stake `stake_fraction` of cash at YES price `price_yes`.

    Kelly on a binary contract bought at price q with belief p stakes f = (p − q) / (1 − q), so p = q + f(1 − q).
    For a YES bet q is the YES price; for a NO bet q_no = 1 − q_yes gives P(NO) = q_no + f(1 − q_no), and
    P(YES) = 1 − P(NO) = q_yes(1 − f). The result is clipped to [0, 1].
    """
    q = _floats(price_yes)
    f = _floats(stake_fraction)
    q_no = 1.0 - q
    p_yes = np.where(is_yes(side), q + f * (1.0 - q), 1.0 - (q_no + f * (1.0 - q_no)))
    return _scalar_or_array(np.clip(p_yes, 0.0, 1.0), price_yes)


def brier_per_bet(f_yes: ArrayLike, outcome: ArrayLike) -> Any:
    """(f_yes − outcome)² per bet, in [0, 1]; NaN where the outcome is NaN (unresolved or void) or f_yes is NaN."""
    f, o = _floats(f_yes), _floats(outcome)
    _check_unit_interval(f, "f_yes")
    _check_unit_interval(o, "outcome")
    return _scalar_or_array((f - o) ** 2, f_yes)


def _nanmean(x: np.ndarray) -> float:
    x = x[~np.isnan(x)]
    return float(x.mean()) if x.size else float("nan")  # an empty mean is unknown, never a perfect 0


@metric(
    "brier",
    higher_is_better=False,
    description="Mean Brier score of P(YES) implied by bet size, over resolved non-void bets",
    unit="squared probability, 0..1",
)
def brier_score(f_yes: ArrayLike, outcome: ArrayLike) -> float:
    """Mean Brier over bets with both a forecast and an outcome, in [0, 1]; NaN when there are none."""
    return _nanmean(np.atleast_1d(brier_per_bet(f_yes, outcome)))


register(
    "brier_kelly",
    higher_is_better=False,
    description="Mean Brier score of the Kelly-implied P(YES) (stake as a fraction of cash at the bet's price)",
    unit="squared probability, 0..1",
)
register(
    "brier_stated",
    higher_is_better=False,
    description="Mean Brier score of the P(YES) the agent stated with its bets, where it stated one",
    unit="squared probability, 0..1",
)


def brier_skill_score(bs: ArrayLike, bs_ref: ArrayLike) -> Any:
    """1 − BS / BS_ref (unitless; > 0 beats the reference). NaN where BS_ref is 0 or NaN, or BS is NaN."""
    b, r = np.broadcast_arrays(_floats(bs), _floats(bs_ref))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(r > 0, 1.0 - b / r, np.nan)
    return _scalar_or_array(out, bs)


def guarded_skill_vs_market(bs: ArrayLike, bs_market: ArrayLike) -> Any:
    """1 − BS / BS_market where the market's Brier is at least BSS_MARKET_FLOOR, else NaN: the one guard every
    "skill vs the market" cell goes through, so none prints −4,517 (the value lies in [BSS_MARKET_MIN, 1])."""
    m = _floats(bs_market)
    with np.errstate(invalid="ignore"):
        m = np.where(m >= BSS_MARKET_FLOOR, m, np.nan)
    return brier_skill_score(bs, m)


@metric(
    "bss_vs_0_25",
    higher_is_better=True,
    description="Brier skill score against the always-50 % forecaster (reference Brier 0.25)",
    unit="unitless, -3..1",
)
def bss_vs_random(f_yes: ArrayLike, outcome: ArrayLike) -> float:
    """1 − BS / 0.25. The reference is the constant 0.25 even for fractional outcomes, as in seed 001."""
    return float(brier_skill_score(brier_score(f_yes, outcome), RANDOM_BRIER))


@metric(
    "bss_vs_market",
    higher_is_better=True,
    description="Brier skill score against the market's YES price on the same questions; NaN if its Brier < 0.01",
    unit="unitless, -99..1",
)
def bss_vs_market(f_yes: ArrayLike, price_yes: ArrayLike, outcome: ArrayLike) -> float:
    """1 − BS(agent) / BS(market price) over the bets where forecast, price and outcome are all known.

    Both Briers use exactly the same bets so the comparison is like for like. NaN when there are none or when the
    market's Brier is below BSS_MARKET_FLOOR (a near-perfect reference leaves nothing to divide by), so the value
    lies in [1 − 1/BSS_MARKET_FLOOR, 1] = [−99, 1].
    """
    f, q, o = np.broadcast_arrays(_floats(f_yes), _floats(price_yes), _floats(outcome))
    keep = ~(np.isnan(f) | np.isnan(q) | np.isnan(o))
    if not keep.any():
        return float("nan")
    ref = brier_score(q[keep], o[keep])
    return float(brier_skill_score(brier_score(f[keep], o[keep]), ref)) if ref >= BSS_MARKET_FLOOR else float("nan")


def _bands(values: ArrayLike, classify: Any) -> Any:
    x = np.round(_floats(values), BAND_DECIMALS)
    out = np.asarray(classify(np.atleast_1d(x)), dtype=object)
    return out.item() if np.ndim(values) == 0 else out.reshape(np.shape(x))


def brier_band(bs: ArrayLike) -> Any:
    """Seed 001's label for a Brier score: a str for a scalar, an object array for an array.

    Bands are half-open (lo, hi], so a score on a boundary gets the better label: 0 Perfect; (0, 0.10] Excellent;
    (0.10, 0.20] Good; (0.20, 0.25] Fair (0.25 is the random guesser, which the table calls "at or near random");
    (0.25, 0.40] Poor; above 0.40 Very Poor. NaN or a negative value → "n/a".
    """

    def classify(x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.select(
                [np.isnan(x) | (x < 0), x == 0, x <= 0.10, x <= 0.20, x <= 0.25, x <= 0.40],
                [NA_BAND, "Perfect", "Excellent", "Good", "Fair", "Poor"],
                default="Very Poor",
            )

    return _bands(bs, classify)


def return_band(return_pct: ArrayLike) -> Any:
    """Seed 001's label for a return in percent: a str for a scalar, an object array for an array.

    The table's outer bands are strict (> +50 %, < −20 %), so a boundary value belongs to the band nearer zero:
    > 50 Exceptional; (20, 50] Excellent; (5, 20] Good; [−5, 5] Neutral; [−20, −5) Poor; < −20 Very Poor.
    NaN → "n/a".
    """

    def classify(x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.select(
                [np.isnan(x), x > 50, x > 20, x > 5, x >= -5, x >= -20],
                [NA_BAND, "Exceptional", "Excellent", "Good", "Neutral", "Poor"],
                default="Very Poor",
            )

    return _bands(return_pct, classify)


__all__ = [
    "BSS_MARKET_FLOOR",
    "BSS_MARKET_MIN",
    "MAX_BET_FRACTION",
    "NA_BAND",
    "RANDOM_BRIER",
    "brier_band",
    "brier_per_bet",
    "brier_score",
    "brier_skill_score",
    "bss_vs_market",
    "bss_vs_random",
    "forecast_yes",
    "implied_confidence",
    "is_yes",
    "kelly_probability",
    "max_bet",
    "return_band",
]
