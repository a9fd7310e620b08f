"""A forecast set's headroom: how much room it leaves to tell forecasters apart (pure: numpy/pandas in, numbers
out; imports nothing from the arena's I/O).

A set of near-certain questions separates nobody: every sensible forecaster says about the price, the market's
Brier on it is tiny, and the Brier differences between seats are too small to detect at the set's size. The
headroom of a cohort's set says so in four numbers:

- `market_brier`: the market's Brier on the set — per resolved market the mean over the rounds that asked it of
  (YES price at decision time − outcome)², then the mean over markets (a market is the unit of evidence; a
  question whose round showed no price is left out of this mean);
- `half_brier`: always-0.5's Brier on the same markets, (0.5 − outcome)² — 0.25 on YES/NO outcomes, lower where
  a market resolved to a fraction;
- `in_band_share`: the share of the set's questions (market@round) whose price lay in the cohort's band;
- `min_detectable_difference`: the smallest Brier difference between two seats that a paired two-sided test at
  level α = 0.05 detects with power 0.8 at the set's size:

      MDD = (z_{1−α/2} + z_{power}) · sd / √n,    z_{0.975} + z_{0.8} = 1.960 + 0.842 = 2.802

  `n` is the number of distinct markets the set asked (what it will weigh once they have resolved); `sd` the
  standard deviation of the paired market-level differences, from the arena's own rows: for every pair of
  seats, d_m = Brier_a(m) − Brier_b(m) over the resolved markets both answered (each seat's Brier on a market is
  its mean over the rounds that asked it), the pairs' sample variances (ddof 1) averaged over the pairs with at
  least two markets, sd the root of that mean (`sd_basis` "seats"). With fewer than two seats, or no pair
  sharing two resolved markets, the pair market − always-0.5 stands in ("references"); with fewer than two
  resolved markets priced, `FALLBACK_SD` ("fallback").

`FALLBACK_SD` = 0.2 is the sd of the Brier difference between two forecasts 0.2 apart (0.5 and 0.7) on a
question that is a fair coin: d = (p − q)(p + q − 2y) = 0.16 or −0.24 with equal chance.

`markets_needed` and `more_weeks` invert the formula: the markets a difference δ needs,
n = ((z_{1−α/2} + z_{power}) · sd / δ)², and the weeks still to go at a given number of new markets a week.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from itertools import combinations
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd

ALPHA = 0.05
POWER = 0.8
FALLBACK_SD = 0.2
HEADROOM_FIELDS = ("market_brier", "half_brier", "in_band_share", "min_detectable_difference", "filled_share",
                   "n_questions", "n_markets", "n_resolved", "paired_sd", "sd_basis")


def z_sum(alpha: float = ALPHA, power: float = POWER) -> float:
    """z_{1−α/2} + z_{power} of the standard normal (2.8016 at α 0.05, power 0.8)."""
    if not (0 < alpha < 1 and 0 < power < 1):
        raise ValueError(f"alpha and power must lie in (0, 1), got {alpha}, {power}")
    nd = NormalDist()
    return nd.inv_cdf(1 - alpha / 2) + nd.inv_cdf(power)


@dataclass(frozen=True)
class Headroom:
    """A forecast set's headroom (see the module docstring); None where nothing has resolved or been asked."""

    market_brier: float | None
    half_brier: float | None
    in_band_share: float | None
    min_detectable_difference: float | None
    filled_share: float | None  # questions taken from outside the band because too few were in it
    n_questions: int  # market@round asked
    n_markets: int  # distinct markets asked
    n_resolved: int  # of those, resolved
    paired_sd: float | None
    sd_basis: str  # "seats", "references", "fallback" or "" (nothing asked)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _mean(x: pd.Series) -> float | None:
    return float(x.mean()) if len(x) else None


def _seat_markets(seats: pd.DataFrame) -> pd.DataFrame:
    """agent × market table of each seat's market-level Brier (the mean over the rounds it answered)."""
    done = seats[seats["outcome_yes"].notna() & seats["probability"].notna()]
    if done.empty:
        return pd.DataFrame()
    b = (done["probability"].astype(float) - done["outcome_yes"].astype(float)) ** 2
    return b.groupby([done["agent"], done["market_id"]], sort=True).mean().unstack("market_id")


def paired_variance(table: pd.DataFrame) -> float | None:
    """The mean, over the pairs of rows (seats) sharing at least two markets, of the sample variance (ddof 1) of
    their market-level Brier differences; None when no pair does. `table`: seat × market Brier, NaN unanswered."""
    values = table.to_numpy(dtype=float)
    variances = []
    for i, j in combinations(range(len(values)), 2):
        d = values[i] - values[j]
        d = d[~np.isnan(d)]
        if len(d) >= 2:
            variances.append(float(np.var(d, ddof=1)))
    return float(np.mean(variances)) if variances else None


def headroom(asked: pd.DataFrame, seats: pd.DataFrame, alpha: float = ALPHA, power: float = POWER) -> Headroom:
    """The headroom of one cohort's forecast set. `asked`: one row per question asked (market_id, market_price
    in [0, 1] or NaN, in_band, filled, outcome_yes in [0, 1] or NaN while unresolved); `seats`: the seats' stated
    forecasts on it (agent, market_id, probability, outcome_yes). Reference rows do not belong in `seats`."""
    if asked.empty:
        return Headroom(None, None, None, None, None, 0, 0, 0, None, "")
    n_markets = int(asked["market_id"].nunique())
    resolved = asked[asked["outcome_yes"].notna()]
    priced = resolved[resolved["market_price"].notna()]
    y = priced["outcome_yes"].astype(float)
    market = ((priced["market_price"].astype(float) - y) ** 2).groupby(priced["market_id"], sort=True).mean()
    half = ((0.5 - y) ** 2).groupby(priced["market_id"], sort=True).mean()
    variance = paired_variance(_seat_markets(seats)) if len(seats) else None
    basis = "seats"
    if variance is None and len(market) >= 2:
        variance, basis = float(np.var((market - half).to_numpy(), ddof=1)), "references"
    if variance is None:
        variance, basis = FALLBACK_SD ** 2, "fallback"
    sd = math.sqrt(variance)
    return Headroom(
        market_brier=_mean(market), half_brier=_mean(half),
        in_band_share=float(asked["in_band"].astype(bool).mean()),
        min_detectable_difference=z_sum(alpha, power) * sd / math.sqrt(n_markets),
        filled_share=float(asked["filled"].astype(bool).mean()),
        n_questions=int(len(asked)), n_markets=n_markets, n_resolved=int(resolved["market_id"].nunique()),
        paired_sd=sd, sd_basis=basis)


def markets_needed(delta: float, sd: float, alpha: float = ALPHA, power: float = POWER) -> int:
    """Distinct resolved markets a paired test needs to detect a Brier difference `delta` > 0 with paired sd `sd`."""
    if delta <= 0:
        raise ValueError(f"the difference must be positive, got {delta}")
    return max(2, math.ceil((z_sum(alpha, power) * sd / delta) ** 2))


def more_weeks(delta: float, sd: float, n_now: int, markets_per_week: float, alpha: float = ALPHA,
               power: float = POWER) -> int | None:
    """Weeks still needed to detect `delta` at `markets_per_week` new resolved markets a week, with `n_now`
    already resolved: 0 when enough are; None when no new markets come."""
    short = markets_needed(delta, sd, alpha, power) - n_now
    if short <= 0:
        return 0
    if markets_per_week <= 0:
        return None
    return math.ceil(short / markets_per_week)


__all__ = ["ALPHA", "FALLBACK_SD", "HEADROOM_FIELDS", "Headroom", "POWER", "headroom", "markets_needed",
           "more_weeks", "paired_variance", "z_sum"]
