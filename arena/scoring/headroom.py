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


def _pair_variances(b: np.ndarray, present: np.ndarray) -> np.ndarray:
    """The sample variances (ddof 1) of every pair of rows' differences over the columns both have, as the
    upper triangle of a k × k matrix (NaN where a pair shares fewer than two columns). `b`: k × n values (any
    number where absent), `present`: k × n booleans. Sums of products, so no loop over the pairs."""
    m = present.astype(float)
    count = m.sum(axis=1, keepdims=True)
    mean = np.where(count > 0, np.where(present, b, 0.0).sum(axis=1, keepdims=True) / np.maximum(count, 1), 0.0)
    bz = np.where(present, b - mean, 0.0)  # each row centred: a pair's variance is unchanged, the sums stay small
    n = m @ m.T
    s1 = bz @ m.T - m @ bz.T  # Σ (b_i − b_j) over shared columns
    s2 = (bz * bz) @ m.T + m @ (bz * bz).T - 2.0 * bz @ bz.T  # Σ (b_i − b_j)²
    with np.errstate(invalid="ignore", divide="ignore"):
        var = (s2 - s1 * s1 / n) / (n - 1.0)
    var = np.where(n >= 2, np.maximum(var, 0.0), np.nan)  # (a rounding error below 0 is 0)
    return np.where(np.triu(np.ones_like(var, dtype=bool), 1), var, np.nan)


def paired_variance(table: pd.DataFrame | np.ndarray) -> float | None:
    """The mean, over the pairs of rows (seats) sharing at least two markets, of the sample variance (ddof 1) of
    their market-level Brier differences; None when no pair does. `table`: seat × market Brier, NaN unanswered
    (a frame, or its values)."""
    values = table.to_numpy(dtype=float) if isinstance(table, pd.DataFrame) else np.asarray(table, dtype=float)
    var = _pair_variances(values, ~np.isnan(values))
    var = var[~np.isnan(var)]
    return float(var.mean()) if var.size else None


def _seat_variances(seats: pd.DataFrame) -> dict[object, float]:
    """cohort → `paired_variance` of its seats' market-level Brier (each seat's mean over the rounds it answered
    a market), for the cohorts with a pair sharing two resolved markets: the (cohort, seat, market) means by one
    integer grouping for all the cohorts, then one small matrix product per cohort."""
    done = seats[seats["outcome_yes"].notna() & seats["probability"].notna()]
    if done.empty:
        return {}
    b = (done["probability"].to_numpy(dtype=float) - done["outcome_yes"].to_numpy(dtype=float)) ** 2
    c, cohorts = pd.factorize(done["cohort"], sort=True)
    a, agents = pd.factorize(done["agent"])
    m, markets = pd.factorize(done["market_id"])
    n_a, n_m = len(agents), len(markets)
    key = (c.astype(np.int64) * n_a + a) * n_m + m
    groups, inverse = np.unique(key, return_inverse=True)  # sorted: by cohort, then seat, then market
    mean = np.bincount(inverse, weights=b) / np.bincount(inverse)
    g_cohort, rest = np.divmod(groups, n_a * n_m)
    g_seat, g_market = np.divmod(rest, n_m)
    # each group's seat and market numbered within its cohort (0, 1, …), without a search per cohort
    seat_key, seat_no = np.unique(g_cohort * n_a + g_seat, return_inverse=True)
    market_key, market_no = np.unique(g_cohort * n_m + g_market, return_inverse=True)
    first_seat = np.searchsorted(seat_key // n_a, g_cohort)
    first_market = np.searchsorted(market_key // n_m, g_cohort)
    seat_no, market_no = seat_no - first_seat, market_no - first_market
    bounds = np.flatnonzero(np.diff(g_cohort)) + 1
    out: dict[object, float] = {}
    for lo, hi in zip([0, *bounds], [*bounds, len(groups)]):
        s_local, m_local = seat_no[lo:hi], market_no[lo:hi]
        if s_local[-1] < 1:  # (sorted by seat within the cohort: the last is the highest) one seat only
            continue
        values = np.zeros((s_local[-1] + 1, m_local.max() + 1))
        present = np.zeros(values.shape, dtype=bool)
        values[s_local, m_local] = mean[lo:hi]
        present[s_local, m_local] = True
        var = _pair_variances(values, present)
        var = var[~np.isnan(var)]
        if var.size:
            out[cohorts[g_cohort[lo]]] = float(var.mean())
    return out


def _none(x: object) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)  # type: ignore[arg-type]


def headrooms(asked: pd.DataFrame, seats: pd.DataFrame, alpha: float = ALPHA, power: float = POWER
              ) -> dict[object, Headroom]:
    """The headroom of every cohort's forecast sets at once (see `headroom`; both frames carry a `cohort`
    column). Cohorts with no asked question are absent."""
    if asked.empty:
        return {}
    z = z_sum(alpha, power)
    by = asked.groupby("cohort", sort=True)
    n_questions, n_markets = by.size(), by["market_id"].nunique()
    in_band, filled = by["in_band"].mean(), by["filled"].mean()
    resolved = asked[asked["outcome_yes"].notna()]
    n_resolved = resolved.groupby("cohort")["market_id"].nunique()
    priced = resolved[resolved["market_price"].notna()]
    y = priced["outcome_yes"].to_numpy(dtype=float)
    per = (pd.DataFrame({"cohort": priced["cohort"].to_numpy(), "market_id": priced["market_id"].to_numpy(),
                         "market": (priced["market_price"].to_numpy(dtype=float) - y) ** 2, "half": (0.5 - y) ** 2})
           .groupby(["cohort", "market_id"], sort=True)[["market", "half"]].mean())
    briers = per.groupby(level=0).mean()
    references = (per["market"] - per["half"]).groupby(level=0).var(ddof=1)
    seat_var = _seat_variances(seats) if len(seats) else {}
    ref_var, market_b, half_b = references.to_dict(), briers["market"].to_dict(), briers["half"].to_dict()
    resolved_n = n_resolved.to_dict()
    out: dict[object, Headroom] = {}
    for c, n_q, n, band, fill in zip(n_questions.index, n_questions.to_numpy(), n_markets.to_numpy(),
                                     in_band.to_numpy(), filled.to_numpy()):
        variance, basis = seat_var.get(c), "seats"
        if variance is None and _none(ref_var.get(c)) is not None:
            variance, basis = float(ref_var[c]), "references"
        if variance is None:
            variance, basis = FALLBACK_SD ** 2, "fallback"
        sd = math.sqrt(variance)
        out[c] = Headroom(
            market_brier=_none(market_b.get(c)), half_brier=_none(half_b.get(c)), in_band_share=float(band),
            min_detectable_difference=z * sd / math.sqrt(int(n)), filled_share=float(fill), n_questions=int(n_q),
            n_markets=int(n), n_resolved=int(resolved_n.get(c, 0)), paired_sd=sd, sd_basis=basis)
    return out


def headroom(asked: pd.DataFrame, seats: pd.DataFrame, alpha: float = ALPHA, power: float = POWER) -> Headroom:
    """The headroom of one cohort's forecast set. `asked`: one row per question asked (market_id, market_price
    in [0, 1] or NaN, in_band, filled, outcome_yes in [0, 1] or NaN while unresolved); `seats`: the seats' stated
    forecasts on it (agent, market_id, probability, outcome_yes). Reference rows do not belong in `seats`."""
    one = headrooms(asked.assign(cohort=0), seats.assign(cohort=0), alpha, power)
    return one.get(0, Headroom(None, None, None, None, None, 0, 0, 0, None, ""))


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


__all__ = ["ALPHA", "FALLBACK_SD", "HEADROOM_FIELDS", "Headroom", "POWER", "headroom", "headrooms",
           "markets_needed", "more_weeks", "paired_variance", "z_sum"]
