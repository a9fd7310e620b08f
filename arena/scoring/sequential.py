"""Anytime-valid comparisons: a confidence sequence for the mean of paired per-question Brier differences (pure).

Owns the betting (hedged-capital) confidence sequence of Waudby-Smith & Ramdas, "Estimating means of bounded random
variables by betting" (JRSS-B 2024), with their predictable plug-in bets, and the first time a difference became
significant. Imports only numpy and pandas; never the store or the clock.

Why: a fixed-sample interval (the paired bootstrap) is valid once, at a sample size chosen in advance. A researcher
who looks every day and stops at the first "significant" day inflates the false-win rate far above α. A confidence
sequence (CS) holds at every time at once: P(the true mean ever leaves the CS) ≤ α, so one may look after each
resolution and stop whenever it excludes 0.

How, for differences d_i = Brier_A − Brier_B in [−1, 1] in resolution order (lower Brier is better, so d < 0 means A
is better): map x_i = (d_i + 1) / 2 ∈ [0, 1] with mean μ. For each candidate mean m on a grid, two gamblers bet
against "μ = m": K⁺_t(m) = Π (1 + λ_i (x_i − m)) bets that μ > m, K⁻_t(m) = Π (1 − λ_i (x_i − m)) that μ < m, with
the predictable plug-in λ_i = sqrt(2 log(2/α) / (σ̂²_{i−1} · i · log(i + 1))), σ̂²_{i−1} = (1/4 + Σ_{j<i} (x_j −
μ̂_j)²) / i and μ̂_j = (1/2 + Σ_{k≤j} x_k) / (j + 1) (so λ_i uses only the past), truncated to c/m for K⁺ and c/(1 −
m) for K⁻ (c = 3/4) so the capital stays positive. The hedged capital max(K⁺, K⁻)/2 is a non-negative
martingale under μ = m, so by Ville's inequality m is rejected at time t when it reaches 1/α, with probability ≤ α
ever. The CS at t is the set of grid points not rejected, widened by one grid step on each side (so grid rounding
never narrows it), and intersected over time (the running intersection of a CS is a CS).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

DEFAULT_ALPHA = 0.05
DEFAULT_GRID = 1001  # candidate means on [0, 1]: resolution 0.002 in Brier difference
TRUNCATION = 0.75  # c: bets are capped at c/m (c/(1 − m)): 1/2 and 3/4 are the paper's choices; 3/4 detects sooner


@dataclass(frozen=True)
class ConfidenceSequence:
    """Running bounds on the mean paired difference after each observation (same units as the differences).

    lower, upper: arrays (one per observation, in the order given) — the CS after observation i; estimate: the
    running mean. first_index: the first observation (0-based) after which the CS excludes 0, or None; first_time:
    `times[first_index]` when times were given; sign: −1 if it then lay below 0 (A better: lower Brier), +1 above.
    Empty input gives empty arrays, first_index None and NaN estimates."""

    lower: np.ndarray
    upper: np.ndarray
    estimate: np.ndarray
    alpha: float
    first_index: int | None
    first_time: Any = None
    sign: int = 0

    @property
    def n(self) -> int:
        return int(self.lower.size)

    def frame(self, times: Any = None) -> pd.DataFrame:
        """One row per observation: n (count so far), estimate, lower, upper, excludes_zero (and time)."""
        df = pd.DataFrame({"n": np.arange(1, self.n + 1), "estimate": self.estimate, "lower": self.lower,
                           "upper": self.upper})
        df["excludes_zero"] = (df["lower"] > 0) | (df["upper"] < 0)
        if times is not None:
            df.insert(0, "time", list(times))
        return df


def _plugin_lambdas(x: np.ndarray, alpha: float) -> np.ndarray:
    n = x.size
    i = np.arange(1, n + 1, dtype=float)
    mu_hat = (0.5 + np.cumsum(x)) / (i + 1)  # μ̂_j after j observations
    sq = np.cumsum((x - mu_hat) ** 2)
    var_prev = (0.25 + np.concatenate([[0.0], sq[:-1]])) / i  # σ̂²_{i−1}: only the past
    return np.sqrt(2.0 * np.log(2.0 / alpha) / (var_prev * i * np.log(i + 1.0)))


def confidence_sequence(differences: Any, alpha: float = DEFAULT_ALPHA, times: Any = None,
                        grid: int = DEFAULT_GRID, bound: float = 1.0) -> ConfidenceSequence:
    """The (1 − α) betting confidence sequence for the mean of `differences`, bounded in [−bound, bound].

    differences: paired per-question differences in resolution order, e.g. Brier_A − Brier_B (each in [−1, 1]);
    NaN values (unresolved, void) are dropped before anything else, and `times` with them. times: optional labels
    (dates) of the observations, returned as `first_time`. Raises ValueError for values outside the bound.
    """
    if not 0.0 < alpha < 1.0 or grid < 3 or bound <= 0:
        raise ValueError("need 0 < alpha < 1, grid >= 3 and bound > 0")
    d = np.asarray(differences, dtype=float).ravel()
    keep = ~np.isnan(d)
    t = None if times is None else np.asarray(list(times), dtype=object)[keep]
    d = d[keep]
    if (np.abs(d) > bound * (1 + 1e-12)).any():
        raise ValueError(f"differences must lie in [-{bound}, {bound}]")
    if d.size == 0:
        empty = np.zeros(0)
        return ConfidenceSequence(empty, empty, empty, alpha, None)
    x = np.clip((d / bound + 1.0) / 2.0, 0.0, 1.0)
    lam = _plugin_lambdas(x, alpha)
    m = np.linspace(0.0, 1.0, grid)
    with np.errstate(divide="ignore", invalid="ignore"):
        cap_up = np.where(m > 0, TRUNCATION / m, np.inf)
        cap_down = np.where(m < 1, TRUNCATION / (1.0 - m), np.inf)
    lam_up = np.minimum(lam[:, None], cap_up[None, :])
    lam_down = np.minimum(lam[:, None], cap_down[None, :])
    dev = x[:, None] - m[None, :]
    log_up = np.cumsum(np.log1p(lam_up * dev), axis=0)
    log_down = np.cumsum(np.log1p(-lam_down * dev), axis=0)
    log_hedged = np.maximum(log_up, log_down) + np.log(0.5)
    alive = log_hedged < np.log(1.0 / alpha)
    alive = np.logical_and.accumulate(alive, axis=0)  # running intersection: a rejected mean stays rejected
    step = 1.0 / (grid - 1)
    any_alive = alive.any(axis=1)
    lo_idx = np.where(any_alive, alive.argmax(axis=1), 0)
    hi_idx = np.where(any_alive, grid - 1 - alive[:, ::-1].argmax(axis=1), grid - 1)
    lower_x = np.clip(m[lo_idx] - step, 0.0, 1.0)
    upper_x = np.clip(m[hi_idx] + step, 0.0, 1.0)
    # nothing alive on the grid can only happen between grid points: keep the last interval (never empty)
    lower_x = np.maximum.accumulate(lower_x)
    upper_x = np.minimum.accumulate(np.maximum(upper_x, lower_x))
    lower, upper = (2.0 * lower_x - 1.0) * bound, (2.0 * upper_x - 1.0) * bound
    estimate = np.cumsum(d) / np.arange(1, d.size + 1)
    excl = (lower > 0) | (upper < 0)
    first = int(np.argmax(excl)) if excl.any() else None
    return ConfidenceSequence(lower, upper, estimate, alpha, first,
                              None if first is None or t is None else t[first],
                              0 if first is None else (1 if lower[first] > 0 else -1))


def paired_differences(scores: pd.DataFrame, a: str, b: str, *, agent: str = "agent", question: str = "question",
                       value: str = "brier", time: str = "resolved_at") -> pd.DataFrame:
    """Per question scored by both `a` and `b`: time, question, value_a − value_b, sorted by time (then question).

    scores: one row per (agent, question) with the value (e.g. forecast Brier, 0..1) and the question's resolution
    time; NaN values are dropped. Several rows per (agent, question) are averaged — so passing the market as
    `question` gives the arena's unit of evidence: one observation per market, the mean over the rounds that asked
    it, at the market's resolution time (a market's rounds share its outcome and the seat's error on it; taken
    one by one they are not the independent observations the sequence's guarantee needs).
    """
    need = [agent, question, value, time]
    missing = [c for c in need if c not in scores.columns]
    if missing:
        raise ValueError(f"scores frame lacks column(s) {missing}")
    df = scores[need].dropna(subset=[value])
    wide = df.groupby([question, agent])[value].mean().unstack(agent)
    if a not in wide.columns or b not in wide.columns:
        return pd.DataFrame({time: [], question: [], "difference": []})
    when = df.groupby(question)[time].max()
    out = pd.DataFrame({"difference": wide[a] - wide[b]}).dropna()
    out[time] = when.reindex(out.index)
    out = out.reset_index().sort_values([time, question], kind="stable").reset_index(drop=True)
    return out[[time, question, "difference"]]


def compare_sequentially(scores: pd.DataFrame, a: str, b: str, alpha: float = DEFAULT_ALPHA,
                         **columns: str) -> tuple[ConfidenceSequence, pd.DataFrame]:
    """The CS of a − b over the questions both scored, in resolution order, and its per-observation frame."""
    diffs = paired_differences(scores, a, b, **columns)
    tcol = columns.get("time", "resolved_at")
    cs = confidence_sequence(diffs["difference"].to_numpy(dtype=float), alpha, times=diffs[tcol])
    return cs, cs.frame(diffs[tcol]) if cs.n else cs.frame()


__all__ = ["ConfidenceSequence", "compare_sequentially", "confidence_sequence", "paired_differences"]
