"""Across cohorts: DerSimonian–Laird random-effects meta-analysis of per-cohort paired differences (pure).

Owns the per-cohort paired difference (mean and standard error of value_A − value_B over the questions both agents
answered in that cohort) and the random-effects pooling of those differences; imports only numpy, pandas and the
standard library, never the store or the clock.

Why random effects: cohorts are different weeks with different questions, so two models' true difference may
itself vary from week to week (τ² > 0). A fixed-effect pool would then claim "better in general" from a few weeks
in which one model was much better; the random-effects estimate widens its interval by τ², and I² says what share of
the spread between cohorts is real heterogeneity rather than noise — "better in general" versus "better in some
weeks".

DerSimonian & Laird (1986), for k cohorts with estimates y_i and variances v_i = se_i²:
    w_i = 1 / v_i,  ȳ_FE = Σ w_i y_i / Σ w_i,  Q = Σ w_i (y_i − ȳ_FE)²,  df = k − 1,
    τ² = max(0, (Q − df) / (Σ w_i − Σ w_i² / Σ w_i)),
    w*_i = 1 / (v_i + τ²),  μ̂ = Σ w*_i y_i / Σ w*_i,  se(μ̂) = 1 / sqrt(Σ w*_i),  interval μ̂ ± z · se,
    I² = max(0, (Q − df) / Q) × 100 %  (0 when Q = 0).

With few cohorts the DL interval is too narrow (it treats the estimated τ² as known; the benchmark measures about
91 % coverage of a 95 % interval with 5 cohorts), so the Hartung–Knapp–Sidik–Jonkman interval is given beside it:
    se_HK² = Σ w*_i (y_i − μ̂)² / ((k − 1) Σ w*_i),  interval μ̂ ± t_{k−1} · se_HK
(Student's t quantile computed here: numpy has none, and scipy is not a dependency).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import math
from functools import lru_cache

import numpy as np
import pandas as pd

DEFAULT_LEVEL = 0.95


@dataclass(frozen=True)
class MetaAnalysis:
    """A random-effects pool. estimate, se, ci_low, ci_high in the units of the inputs; tau2 (their units squared);
    i2 in percent; q and df (Cochran's Q on df = k − 1); fixed_estimate / fixed_se the fixed-effect pool;
    weights: the random-effects weights (share of the total, 0..1) in input order, for a forest plot;
    hk_se, hk_ci_low, hk_ci_high: the Hartung–Knapp–Sidik–Jonkman standard error and interval (NaN below 2 cohorts)."""

    k: int
    estimate: float
    se: float
    ci_low: float
    ci_high: float
    tau2: float
    i2: float
    q: float
    df: int
    fixed_estimate: float
    fixed_se: float
    level: float
    weights: np.ndarray
    hk_se: float = float("nan")
    hk_ci_low: float = float("nan")
    hk_ci_high: float = float("nan")

    def as_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in ("k", "estimate", "se", "ci_low", "ci_high", "tau2", "i2", "q", "df",
                                              "fixed_estimate", "fixed_se", "level", "hk_se", "hk_ci_low",
                                              "hk_ci_high")}


@lru_cache(maxsize=256)  # pure, and a benchmark asks for the same few quantiles thousands of times
def t_quantile(p: float, df: float) -> float:
    """Student's t quantile: the x with P(T_df <= x) = p, for 0 < p < 1 and df > 0 (bisection on the CDF, whose
    integral from 0 is taken by Simpson's rule on 4,000 intervals of the density; error below 1e-8)."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError("need 0 < p < 1 and df > 0")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)

    def cdf(x: float) -> float:
        grid = np.linspace(0.0, x, 4001)
        dens = np.exp(log_c - (df + 1) / 2 * np.log1p(grid**2 / df))
        h = x / 4000
        return 0.5 + h / 3 * (dens[0] + dens[-1] + 4 * dens[1:-1:2].sum() + 2 * dens[2:-1:2].sum())

    lo, hi = 0.0, 1.0
    while cdf(hi) < p:
        lo, hi = hi, hi * 2
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2


def dersimonian_laird(estimates: Any, standard_errors: Any, level: float = DEFAULT_LEVEL) -> MetaAnalysis:
    """Random-effects pool of per-cohort `estimates` with their `standard_errors` (same length).

    Pairs with a NaN, or a standard error that is not positive, are left out (a cohort with one question has no
    standard error). No usable pair gives NaN everywhere (k = 0); one gives that estimate with τ² = 0 and I² NaN.
    """
    if not 0.0 < level < 1.0:
        raise ValueError("level must lie in (0, 1)")
    y_all = np.asarray(estimates, dtype=float).ravel()
    se_all = np.asarray(standard_errors, dtype=float).ravel()
    if y_all.shape != se_all.shape:
        raise ValueError("estimates and standard errors differ in length")
    ok = np.isfinite(y_all) & np.isfinite(se_all) & (se_all > 0)
    y, v = y_all[ok], se_all[ok] ** 2
    k = int(y.size)
    weights = np.full(y_all.shape, np.nan)
    nan = float("nan")
    if k == 0:
        return MetaAnalysis(0, nan, nan, nan, nan, nan, nan, nan, 0, nan, nan, level, weights)
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    w = 1.0 / v
    fixed = float(np.sum(w * y) / np.sum(w))
    q = float(np.sum(w * (y - fixed) ** 2))
    df = k - 1
    c = float(np.sum(w) - np.sum(w**2) / np.sum(w))
    tau2 = max(0.0, (q - df) / c) if df > 0 and c > 0 else 0.0
    w_star = 1.0 / (v + tau2)
    est = float(np.sum(w_star * y) / np.sum(w_star))
    se = float(1.0 / np.sqrt(np.sum(w_star)))
    i2 = (max(0.0, (q - df) / q) * 100.0 if q > 0 else 0.0) if df > 0 else nan
    weights[ok] = w_star / np.sum(w_star)
    hk_se = hk_lo = hk_hi = nan
    if df > 0:
        hk_se = float(np.sqrt(np.sum(w_star * (y - est) ** 2) / (df * np.sum(w_star))))
        t = t_quantile(0.5 + level / 2.0, df)
        hk_lo, hk_hi = est - t * hk_se, est + t * hk_se
    return MetaAnalysis(k, est, se, est - z * se, est + z * se, tau2, i2, q, df, fixed,
                        float(1.0 / np.sqrt(np.sum(w))), level, weights, hk_se, hk_lo, hk_hi)


def cohort_differences(scores: pd.DataFrame, a: str, b: str, *, cohort: str = "cohort", agent: str = "agent",
                       question: str = "question", value: str = "brier", level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Per cohort: n (questions both answered), the mean of value_a − value_b, its standard error sd / sqrt(n)
    (NaN below 2 questions), a normal interval at `level` and the DerSimonian–Laird weight — a forest plot's rows.

    scores: one row per (cohort, agent, question) with the value (e.g. forecast Brier, 0..1); several rows per cell
    are averaged, NaN values dropped.
    """
    need = [cohort, agent, question, value]
    missing = [c for c in need if c not in scores.columns]
    if missing:
        raise ValueError(f"scores frame lacks column(s) {missing}")
    df = scores[need].dropna(subset=[value])
    cell = df[df[agent].isin([a, b])].groupby([cohort, question, agent])[value].mean().unstack(agent)
    return differences_from_cells(cell.rename_axis(index=["cohort", "question"]), a, b, level)


def score_cells(scores: pd.DataFrame, *, cohort: str = "cohort", agent: str = "agent", question: str = "question",
                value: str = "brier") -> pd.DataFrame:
    """Every agent's mean value per (cohort, question): index (cohort, question), one column per agent — computed
    once, then `differences_from_cells` takes any pair from it."""
    df = scores[[cohort, agent, question, value]].dropna(subset=[value])
    return (df.groupby([cohort, question, agent])[value].mean().unstack(agent)
            .rename_axis(index=["cohort", "question"]))


def _moments(codes: np.ndarray, k: int, d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cohort code 0..k-1: n (finite differences), their mean and its standard error (NaN below 2)."""
    ok = np.isfinite(d)
    c, d = codes[ok], d[ok]
    n = np.bincount(c, minlength=k)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.bincount(c, weights=d, minlength=k) / n
        ss = np.bincount(c, weights=(d - mean[c]) ** 2, minlength=k)
        sd = np.where(n > 1, np.sqrt(ss / (n - 1)), np.nan)
        se = sd / np.sqrt(n)
    return n, mean, se


def differences_from_cells(cell: pd.DataFrame, a: str, b: str, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """`cohort_differences` from a `score_cells` table (vectorised: one bincount per sum, so a page can compare
    every pair of forecasters at once)."""
    cols = ["cohort", "n", "difference", "se", "ci_low", "ci_high", "weight"]
    if cell.empty or a not in cell.columns or b not in cell.columns:
        return pd.DataFrame({c: pd.Series(dtype=float if c != "cohort" else object) for c in cols})
    codes, cohorts = pd.factorize(cell.index.get_level_values("cohort"), sort=True)
    n, mean, se = _moments(codes, len(cohorts), cell[a].to_numpy(dtype=float) - cell[b].to_numpy(dtype=float))
    keep = n > 0
    out = pd.DataFrame({"cohort": np.asarray(cohorts, dtype=object)[keep], "n": n[keep], "difference": mean[keep],
                        "se": se[keep]})
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    out["ci_low"], out["ci_high"] = out["difference"] - z * out["se"], out["difference"] + z * out["se"]
    out["weight"] = dersimonian_laird(out["difference"], out["se"], level).weights
    return out[cols]


def pair_differences(cell: pd.DataFrame, models: Sequence[str]) -> pd.DataFrame:
    """`differences_from_cells`' n, difference and se for every pair (model, versus) at once: each of `models`
    against every other column of the `score_cells` table. One row per (model, versus, cohort) with a shared
    question, pairs in order and cohorts sorted within each; the numbers are those of `differences_from_cells`,
    bit for bit (the same sums in the same order)."""
    cols = ["model", "versus", "cohort", "n", "difference", "se"]
    if cell.empty:
        return pd.DataFrame({c: pd.Series(dtype=object if c in ("model", "versus", "cohort") else float)
                             for c in cols})
    codes, cohorts = pd.factorize(cell.index.get_level_values("cohort"), sort=True)
    names = [str(c) for c in cell.columns]
    values = cell.to_numpy(dtype=float)
    k = len(cohorts)
    cohort_names = np.asarray(cohorts, dtype=object)
    parts: dict[str, list[np.ndarray]] = {c: [] for c in cols}
    for model in models:
        if model not in names:
            continue
        i = names.index(model)
        for j, other in enumerate(names):
            if j == i:
                continue
            n, mean, se = _moments(codes, k, values[:, i] - values[:, j])
            keep = n > 0
            m = int(keep.sum())
            for col, v in (("model", np.full(m, model, dtype=object)), ("versus", np.full(m, other, dtype=object)),
                           ("cohort", cohort_names[keep]), ("n", n[keep]), ("difference", mean[keep]),
                           ("se", se[keep])):
                parts[col].append(v)
    if not parts["n"]:
        return pair_differences(cell.iloc[:0], models)
    return pd.DataFrame({c: np.concatenate(v) for c, v in parts.items()})


def meta_compare(scores: pd.DataFrame, a: str, b: str, level: float = DEFAULT_LEVEL,
                 **columns: str) -> tuple[MetaAnalysis, pd.DataFrame]:
    """The random-effects pool of a − b across cohorts, and the per-cohort rows (forest plot)."""
    rows = cohort_differences(scores, a, b, level=level, **columns)
    return dersimonian_laird(rows["difference"], rows["se"], level), rows


__all__ = ["MetaAnalysis", "cohort_differences", "dersimonian_laird", "differences_from_cells", "meta_compare",
           "pair_differences", "score_cells", "t_quantile"]
