"""Crowd-proxy scores (seed 000): score each forecast against an aggregate of the forecasts on the same question.

Without outcomes, forecaster i's forecast x on question j is scored by (x − ŷ_j)², where ŷ_j aggregates the
forecasts on j. Following the paper, the default aggregate includes every forecaster, i's own forecast too ("for
simplicity we do not leave each forecaster out"); `leave_one_out=True` is its appendix-C variant, which removes the
scored forecast from its own aggregate (proper, slightly larger scores). Four aggregators:

- ``mean``: the arithmetic mean of the forecasts;
- ``median``: the median (mean of the two middle values for an even count);
- ``ext_mean``: the mean extremized as m^α / (m^α + (1 − m)^α) with α = 2 (Witkowski et al.);
- ``logit_pool``: σ(√3 · mean logit(x)) with each x first clipped to [1e-3, 1 − 1e-3] so the logit is finite.

Squared errors always use the raw (unclipped) forecast. Everything is vectorised over all questions at once
(bincount sums and one sort for the medians): no Python loop per question. Pure; imports only numpy and pandas.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from arena.scoring.registry import register

AGGREGATORS: tuple[str, ...] = ("mean", "median", "ext_mean", "logit_pool")
EXTREMIZE_ALPHA = 2.0
LOGIT_POOL_D = float(np.sqrt(3.0))  # Neyman & Roughgarden's d, as used by the paper
CLIP_EPS = 1e-3  # logit pool only: forecasts clipped to [eps, 1 − eps] before taking logits
ZSCORE_DDOF = 0  # the batch's forecasters are the whole population being ranked, not a sample of one
_ZERO_SPREAD = 1e-12  # a std this small (relative to max(1, |mean|)) is float noise around identical scores

_DESCRIPTIONS = {
    "mean": "mean of the forecasts",
    "median": "median of the forecasts",
    "ext_mean": "mean extremized with alpha = 2",
    "logit_pool": "logit pool sigma(sqrt(3) * mean logit), forecasts clipped to [1e-3, 1 - 1e-3]",
}
for _name, _what in _DESCRIPTIONS.items():
    register(
        f"proxy_{_name}",
        higher_is_better=False,
        description=f"Mean squared distance of a forecaster's P(YES) from the crowd aggregate ({_what})",
        unit="squared probability, 0..1",
    )
    register(
        f"z_proxy_{_name}",
        higher_is_better=False,
        description=f"Within-batch z-score of proxy_{_name} across forecasters",
        unit="standard deviations",
    )
register(
    "z_brier",
    higher_is_better=False,
    description="Within-batch z-score of the Brier score across forecasters",
    unit="standard deviations",
)


def score_column(aggregator: str) -> str:
    """Name of the proxy-score column for an aggregator, e.g. 'proxy_logit_pool'."""
    return f"proxy_{aggregator}"


def extremize(p: Any, alpha: float = EXTREMIZE_ALPHA) -> np.ndarray:
    """p^α / (p^α + (1 − p)^α) for probabilities p in [0, 1] (NaN stays NaN). α > 1 pushes p away from 1/2."""
    p = np.asarray(p, dtype=float)
    a, b = p**alpha, (1.0 - p) ** alpha
    return a / (a + b)  # a + b > 0 for every p in [0, 1] and α > 0


def _logit(p: np.ndarray) -> np.ndarray:
    c = np.clip(p, CLIP_EPS, 1.0 - CLIP_EPS)
    return np.log(c) - np.log1p(-c)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _check_aggregators(aggregators: Iterable[str]) -> tuple[str, ...]:
    names = tuple(aggregators)
    unknown = [a for a in names if a not in AGGREGATORS]
    if unknown:
        raise ValueError(f"unknown aggregator(s) {unknown}; choose from {list(AGGREGATORS)}")
    return names


def _probabilities(probability: Any) -> np.ndarray:
    p = np.asarray(probability, dtype=float).ravel()
    bad = ~((p >= 0.0) & (p <= 1.0))  # also catches NaN
    if bad.any():
        raise ValueError(f"probabilities must be numbers in [0, 1]; got {p[bad][:5].tolist()}")
    return p




def _sorted_within_groups(codes: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Permutation sorting rows by (group, probability): an LSD radix sort done with numpy.

    Sort by value, then stable-sort by the low and the high 16 bits of the group code: numpy's stable sort of
    16-bit keys is a radix sort (linear in the rows), where a stable sort of int64 codes and np.lexsort are
    comparison sorts, and it is still exact (bench_scoring.py measures it). Codes are below 2^32 because they
    count rows.
    """
    order = np.argsort(p)
    for shift in (0, 16):
        if shift and codes.size and codes.max() < (1 << shift):
            break  # every code already fits in the bits sorted so far
        digit = ((codes[order] >> shift) & 0xFFFF).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
    return order


def _medians(codes: np.ndarray, p: np.ndarray, n: np.ndarray, leave_one_out: bool) -> np.ndarray:
    """Per-row median of the row's group, optionally with the row itself removed (NaN if nothing is left).

    After sorting within groups, a group of size n starting at `start` has its order statistics at
    start..start+n−1. Its median is the mean of ranks ⌊(n−1)/2⌋ and ⌊n/2⌋. Removing the element of rank r leaves
    m = n − 1 values whose rank k sits at original rank k if k < r, else k + 1 — so the leave-one-out median is
    again two gathers, with that shift. Ties need no care: removing any of several equal values leaves the same
    multiset.
    """
    order = _sorted_within_groups(codes, p)
    v = p[order]
    c = codes[order]
    start = (np.cumsum(n) - n)[c]
    size = n[c]
    if not leave_one_out:
        med = 0.5 * (v[start + (size - 1) // 2] + v[start + size // 2])
    else:
        rank = np.arange(v.size, dtype=np.int64) - start
        m = size - 1
        lo, hi = (m - 1) // 2, m // 2
        lo_idx = start + lo + (lo >= rank)
        hi_idx = start + hi + (hi >= rank)
        alone = m == 0  # a lone forecast has no others to aggregate; its indices above are meaningless
        lo_idx = np.where(alone, 0, lo_idx)
        hi_idx = np.where(alone, 0, hi_idx)
        med = np.where(alone, np.nan, 0.5 * (v[lo_idx] + v[hi_idx]))
    out = np.empty_like(med)
    out[order] = med
    return out


def aggregate_rows(
    group: Any,
    probability: Any,
    *,
    leave_one_out: bool = False,
    aggregators: Iterable[str] = AGGREGATORS,
) -> dict[str, np.ndarray]:
    """Per-row crowd aggregates ŷ in [0, 1] for each aggregator, aligned with the input rows.

    group: one question key per row (any hashable values); probability: each row's forecast P(YES) in [0, 1].
    With leave_one_out the row's own forecast is removed from its aggregate, and a question's lone forecast gets
    NaN. The leave-one-out means are (group sum − own value) / (n − 1), exact up to float rounding.
    """
    names = _check_aggregators(aggregators)
    p = _probabilities(probability)
    keys = group if isinstance(group, pd.Series) else np.asarray(group)
    codes, uniques = pd.factorize(keys, use_na_sentinel=False)
    if codes.size != p.size:
        raise ValueError(f"group has {codes.size} rows but probability has {p.size}")
    return _aggregate_codes(codes.astype(np.int64, copy=False), len(uniques), p, leave_one_out, names)


def _aggregate_codes(
    codes: np.ndarray, n_groups: int, p: np.ndarray, leave_one_out: bool, names: tuple[str, ...]
) -> dict[str, np.ndarray]:
    """`aggregate_rows` on dense group codes 0..n_groups−1 and validated probabilities."""
    n = np.bincount(codes, minlength=n_groups)
    row_n = n[codes].astype(float)

    def group_mean(x: np.ndarray) -> np.ndarray:
        sums = np.bincount(codes, weights=x, minlength=n_groups)
        if not leave_one_out:
            return (sums / n)[codes]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(row_n > 1, (sums[codes] - x) / (row_n - 1), np.nan)

    out: dict[str, np.ndarray] = {}
    if "mean" in names or "ext_mean" in names:
        mean = group_mean(p)
        if "mean" in names:
            out["mean"] = mean
        if "ext_mean" in names:
            out["ext_mean"] = extremize(mean)
    if "median" in names:
        out["median"] = _medians(codes, p, n, leave_one_out)
    if "logit_pool" in names:
        out["logit_pool"] = _sigmoid(LOGIT_POOL_D * group_mean(_logit(p)))
    return {a: out[a] for a in names}


def proxy_score(forecast: Any, aggregate: Any) -> float:
    """Mean of (forecast − aggregate)² over rows with an aggregate, in [0, 1]; NaN when there are none."""
    e = (np.asarray(forecast, dtype=float) - np.asarray(aggregate, dtype=float)) ** 2
    e = e[~np.isnan(e)]
    return float(e.mean()) if e.size else float("nan")


def _frame_codes(frame: pd.DataFrame, columns: Sequence[str]) -> tuple[np.ndarray, int]:
    """Dense codes for the combination of several key columns, numbered in order of first appearance."""
    codes = np.zeros(len(frame), dtype=np.int64)
    count = 1
    for i, col in enumerate(columns):
        c, uniques = pd.factorize(frame[col], use_na_sentinel=False)
        c = c.astype(np.int64, copy=False)
        if i == 0:
            codes, count = c, len(uniques)
        else:
            # combined codes stay below count × len(uniques) ≤ rows², so int64 cannot overflow; re-densify each step
            codes, combined = pd.factorize(codes * len(uniques) + c)
            codes, count = codes.astype(np.int64, copy=False), len(combined)
    return codes, count


def _first_rows(codes: np.ndarray) -> np.ndarray:
    """Row positions where each code first appears, in code order (codes are numbered by first appearance)."""
    if codes.size == 0:
        return codes
    seen_max = np.maximum.accumulate(np.concatenate(([-1], codes[:-1])))
    return np.flatnonzero(codes > seen_max)


def question_columns(frame: pd.DataFrame) -> list[str]:
    """A question is identified within its batch when the frame has a 'batch' column."""
    return ["batch", "question"] if "batch" in frame.columns else ["question"]


def proxy_scores(
    frame: pd.DataFrame,
    *,
    leave_one_out: bool = False,
    by: Sequence[str] | None = None,
    aggregators: Iterable[str] = AGGREGATORS,
) -> pd.DataFrame:
    """Proxy score per forecaster (per batch and forecaster when the frame has a 'batch' column).

    frame: one row per forecast with columns question, forecaster, probability (P(YES) in [0, 1]) and optionally
    batch. Aggregates are taken per question (per batch and question when batch is present). `by` overrides the
    output grouping (default: ['batch', 'forecaster'] or ['forecaster']).

    Returns the `by` columns, n (forecasts), n_proxy (forecasts that had an aggregate to compare with — fewer than
    n only under leave-one-out, where a question's lone forecast has none) and one proxy_<aggregator> column each:
    the mean squared distance in [0, 1], lower is better, NaN when n_proxy is 0. Rows come in order of first
    appearance. Expects one forecast per (question, forecaster); leave-one-out removes the scored row only.
    """
    names = _check_aggregators(aggregators)
    by = list(by) if by is not None else (["batch", "forecaster"] if "batch" in frame.columns else ["forecaster"])
    missing = [c for c in {"question", "probability", *by} if c not in frame.columns]
    if missing:
        raise ValueError(f"forecast frame lacks column(s) {sorted(missing)}")
    p = _probabilities(frame["probability"].to_numpy(dtype=float))
    q_codes, n_questions = _frame_codes(frame, question_columns(frame))
    aggs = _aggregate_codes(q_codes, n_questions, p, leave_one_out, names)

    out_codes, n_out = _frame_codes(frame, by)
    result = frame[by].iloc[_first_rows(out_codes)].reset_index(drop=True)
    result["n"] = np.bincount(out_codes, minlength=n_out)
    scored = None
    for a in names:
        err = (p - aggs[a]) ** 2
        ok = ~np.isnan(err)
        if scored is None:
            scored = np.bincount(out_codes, weights=ok, minlength=n_out)
        sums = np.bincount(out_codes, weights=np.where(ok, err, 0.0), minlength=n_out)
        with np.errstate(divide="ignore", invalid="ignore"):
            result[score_column(a)] = np.where(scored > 0, sums / scored, np.nan)
    result.insert(len(by) + 1, "n_proxy", (scored if scored is not None else np.zeros(n_out)).astype(np.int64))
    return result


def zscores(values: Any, groups: Any = None, *, ddof: int = ZSCORE_DDOF) -> np.ndarray:
    """(x − group mean) / group std for each value, in standard deviations (lower = better for loss scores).

    `groups` labels each value's batch (None: one batch). std uses ddof=0 by default: the forecasters in a batch
    are the population being compared (this matches scipy.stats.zscore). NaN values are ignored in the batch
    statistics and stay NaN; a batch with fewer than 2 values or zero spread gives NaN (no ranking to express).
    """
    x = pd.Series(np.asarray(values, dtype=float))
    g = pd.Series(np.zeros(len(x), dtype=np.int64) if groups is None else np.asarray(groups))
    grouped = x.groupby(g.to_numpy(), sort=False, dropna=False)
    mean = grouped.transform("mean")
    std = grouped.transform("std", ddof=ddof)
    count = grouped.transform("count")
    flat = std.to_numpy() <= _ZERO_SPREAD * np.maximum(1.0, mean.abs().to_numpy())
    with np.errstate(divide="ignore", invalid="ignore"):
        z = ((x - mean) / std).to_numpy()
    return np.where((count.to_numpy() < 2) | flat, np.nan, z)


def within_batch_zscores(
    scores: pd.DataFrame,
    columns: Iterable[str],
    *,
    batch: str | None = "batch",
    ddof: int = ZSCORE_DDOF,
) -> pd.DataFrame:
    """A copy of `scores` (one row per forecaster and batch) with a z_<column> column for each of `columns`.

    z-scores are taken across the forecasters of each batch (the whole frame when `batch` is None or absent).
    """
    out = scores.copy()
    groups = out[batch].to_numpy() if batch is not None and batch in out.columns else None
    for col in columns:
        out[f"z_{col}"] = zscores(out[col].to_numpy(dtype=float), groups, ddof=ddof)
    return out


__all__ = [
    "AGGREGATORS",
    "CLIP_EPS",
    "EXTREMIZE_ALPHA",
    "LOGIT_POOL_D",
    "ZSCORE_DDOF",
    "aggregate_rows",
    "extremize",
    "proxy_score",
    "proxy_scores",
    "question_columns",
    "score_column",
    "within_batch_zscores",
    "zscores",
]
