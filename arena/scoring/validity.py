"""Validity of the crowd-proxy score: how well an agent's proxy score (available before resolution) tracks its
final Brier score, measured by Pearson and Spearman correlations of within-cohort z-scores.

Seed 000 compares forecasters within a batch, so both scores are z-scored within each cohort first (ddof 0, as in
`proxy.zscores`) and the z-scores of every agent-cohort are then pooled; a positive correlation means the proxy
ranks agents the way the Brier will (both are losses). Spearman is Pearson on ranks with ties given their average
rank, implemented with numpy (no scipy). Fewer than 3 usable agents → NaN. Pure; imports numpy, pandas and the
other scoring modules.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from arena.scoring.proxy import zscores
from arena.scoring.registry import register

MIN_AGENTS = 3

register(
    "proxy_validity_pearson",
    higher_is_better=True,
    description="Pearson correlation of within-cohort z-scores of crowd-proxy score and final Brier across agents",
    unit="correlation, -1..1",
)
register(
    "proxy_validity_spearman",
    higher_is_better=True,
    description="Spearman rank correlation of within-cohort z-scores of crowd-proxy score and final Brier",
    unit="correlation, -1..1",
)


def rank_average(values: Any) -> np.ndarray:
    """1-based ranks of a 1-D array with tied values sharing their average rank; NaN stays NaN (and is not ranked).

    E.g. [10, 20, 20, 30] → [1, 2.5, 2.5, 4].
    """
    x = np.asarray(values, dtype=float).ravel()
    out = np.full(x.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(x))
    if ok.size == 0:
        return out
    order = ok[np.argsort(x[ok], kind="stable")]
    xs = x[order]
    new_run = np.concatenate(([True], xs[1:] != xs[:-1]))
    run_id = np.cumsum(new_run) - 1
    starts = np.flatnonzero(new_run)
    ends = np.concatenate((starts[1:], [xs.size]))  # exclusive
    avg = (starts + 1 + ends) / 2.0  # mean of the 1-based positions start+1 .. end
    out[order] = avg[run_id]
    return out


def pearson(x: Any, y: Any) -> float:
    """Pearson correlation over the pairs where both are finite; NaN with fewer than 3 pairs or no spread."""
    a, b = np.asarray(x, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    ok = np.isfinite(a) & np.isfinite(b)
    a, b = a[ok], b[ok]
    if a.size < MIN_AGENTS:
        return float("nan")
    da, db = a - a.mean(), b - b.mean()
    denom = np.sqrt((da * da).sum() * (db * db).sum())
    if not denom > 0:
        return float("nan")
    return float(np.clip((da * db).sum() / denom, -1.0, 1.0))


def spearman(x: Any, y: Any) -> float:
    """Spearman correlation (Pearson on average ranks) over the pairs where both are finite; NaN below 3 pairs."""
    a, b = np.asarray(x, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    ok = np.isfinite(a) & np.isfinite(b)
    return pearson(rank_average(a[ok]), rank_average(b[ok]))


def _zscored(scores: pd.DataFrame, proxy: str, brier: str, cohort: str | None) -> tuple[np.ndarray, np.ndarray]:
    missing = [c for c in (proxy, brier) if c not in scores.columns]
    if missing:
        raise ValueError(f"scores frame lacks column(s) {missing}")
    p = pd.to_numeric(scores[proxy]).to_numpy(dtype=float)
    b = pd.to_numeric(scores[brier]).to_numpy(dtype=float)
    ok = np.isfinite(p) & np.isfinite(b)  # z-score over the agents that have both scores
    groups = scores[cohort].to_numpy() if cohort is not None and cohort in scores.columns else None
    zp = np.full(p.shape, np.nan)
    zb = np.full(b.shape, np.nan)
    if ok.any():
        g = None if groups is None else groups[ok]
        zp[ok] = zscores(p[ok], g)
        zb[ok] = zscores(b[ok], g)
    return zp, zb


def proxy_validity(
    scores: pd.DataFrame,
    *,
    proxy: str = "crowd_proxy",
    brier: str = "brier",
    cohort: str | None = "cohort",
) -> dict[str, float]:
    """Correlation between agents' crowd-proxy scores and final Brier scores, over within-cohort z-scores.

    scores: one row per agent (per cohort and agent), e.g. the leaderboard, with `proxy` and `brier` columns and
    optionally `cohort`. Only agents with both scores count; a cohort with fewer than 2 of them, or with no spread,
    gives no z-scores. Returns n (agent-cohorts used), n_cohorts, proxy_validity_pearson and
    proxy_validity_spearman (NaN when n < 3).
    """
    zp, zb = _zscored(scores, proxy, brier, cohort)
    ok = np.isfinite(zp) & np.isfinite(zb)
    n_cohorts = (int(pd.Series(scores[cohort].to_numpy()[ok]).nunique(dropna=False))
                 if cohort is not None and cohort in scores.columns else int(ok.any()))
    return {
        "n": int(ok.sum()),
        "n_cohorts": n_cohorts,
        "proxy_validity_pearson": pearson(zp, zb),
        "proxy_validity_spearman": spearman(zp, zb),
    }


def proxy_validity_by_cohort(
    scores: pd.DataFrame,
    *,
    proxy: str = "crowd_proxy",
    brier: str = "brier",
    cohort: str = "cohort",
) -> pd.DataFrame:
    """The same correlations within each cohort (z-scoring does not change a within-cohort correlation):
    one row per cohort with n, proxy_validity_pearson and proxy_validity_spearman (NaN below 3 agents)."""
    if cohort not in scores.columns:
        raise ValueError(f"scores frame lacks column {cohort!r}")
    rows = []
    for key, part in scores.groupby(cohort, sort=True, dropna=False):  # one row per cohort: a handful, not per row
        res = proxy_validity(part, proxy=proxy, brier=brier, cohort=None)
        rows.append({"cohort": key, "n": res["n"], "proxy_validity_pearson": res["proxy_validity_pearson"],
                     "proxy_validity_spearman": res["proxy_validity_spearman"]})
    return pd.DataFrame(rows, columns=["cohort", "n", "proxy_validity_pearson", "proxy_validity_spearman"])


__all__ = [
    "MIN_AGENTS",
    "pearson",
    "proxy_validity",
    "proxy_validity_by_cohort",
    "rank_average",
    "spearman",
]
