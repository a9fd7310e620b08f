"""Ablations and replicates: the paired difference of two seats (B − A) over their shared questions, net of
replicate noise, and the run-to-run spread of a seat asked k times per decision (pure: numpy and pandas only;
never the store or the clock).

Replicates. A seat with `replicates = k` states P(YES) k times for each question (independent asks of the same
view). For a question q and seat X, let v̄_X(q) be the mean of its per-replicate values (e.g. the forecast Brier
of each replicate's P(YES)) and v_X1(q) the executed replicate's (replicate 1). The *paired difference* of B vs A
is the mean over shared questions of d(q) = v̄_B(q) − v̄_A(q): it estimates the difference between the seats
(in expectation over their run-to-run noise), not between two particular runs. Averaging k replicates divides
the replicate part of each d(q)'s variance by k, which is what "net of replicate noise" means here; the rest of
the variance is the questions'. The interval is a paired bootstrap that resamples distinct markets (each market
carrying all its cohorts, rounds and replicates: a market shared by cohorts is one cluster) and recomputes the
mean of d: a resampled question brings its replicate mean, whose own noise is thereby counted once — a second
stage resampling replicates within questions would count it twice. `replicate_share` says how much of the
variance of d(q) is run-to-run noise left after averaging (Σ s²_X(q)/k_X(q) over X, over the variance of d).
The executed replicates' difference (the headline's) is reported beside it with its own interval.

Spread. Per seat: `p_sd` — the mean over questions of the standard deviation across replicates of the stated
P(YES) (0..0.5, probability units); `brier_sd` — the standard deviation across replicates r of the forecast
Brier of replicate r's forecasts over the resolved questions every replicate answered (0..1).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from arena.scoring.stats import draw_counts, draw_indices

DEFAULT_N_BOOT = 1000
DEFAULT_LEVEL = 0.95
STATISTICS = ("mean", "total")


@dataclass(frozen=True)
class PairedDifference:
    """B − A on one metric over the questions both answered. For Brier-like metrics (lower is better) a
    negative estimate means B is better. `estimate`/`lo`/`hi`: replicate means (or the mean of the only
    values); `executed*`: replicate 1 only; NaN (never 0) when there is nothing shared. `n`: shared questions;
    `markets`: the resampled units (distinct markets: a market shared by cohorts is one); `p_value`: two-sided
    paired-bootstrap p of "no difference"."""

    metric: str
    a: str
    b: str
    statistic: str
    n: int
    markets: int
    estimate: float
    lo: float
    hi: float
    p_value: float
    executed: float
    executed_lo: float
    executed_hi: float
    replicates_a: int
    replicates_b: int
    replicate_share: float
    level: float

    def to_json(self) -> dict[str, Any]:
        return {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in asdict(self).items()}


def _interval(draws: np.ndarray, level: float) -> tuple[float, float, float]:
    d = draws[np.isfinite(draws)]
    if d.size == 0:
        return float("nan"), float("nan"), float("nan")
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(d, [tail, 1.0 - tail])
    k = min(int((d <= 0).sum()), int((d >= 0).sum()))
    return float(lo), float(hi), float(min(1.0, 2.0 * (k + 1) / (d.size + 1)))


def _bootstrap(units: pd.DataFrame, col: str, statistic: str, n_boot: int, seed: int
               ) -> np.ndarray:
    """Draws of the statistic of `col` (per-question values) resampling distinct markets: a market asked by several
    cohorts is one cluster, all its cohorts' values drawn together."""
    q = units.dropna(subset=[col])
    if q.empty:
        return np.zeros(0)
    g = q.groupby(["market_id"], sort=True)[col].agg(["sum", "count"]).reset_index()
    counts = draw_counts(draw_indices([len(g)], n_boot, seed), len(g))
    num = counts @ g["sum"].to_numpy(dtype=float)
    if statistic == "total":
        return num
    den = counts @ g["count"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den


def paired_difference(scores: pd.DataFrame, a: str, b: str, value: str = "brier", *, metric: str | None = None,
                      statistic: str = "mean", n_boot: int = DEFAULT_N_BOOT, seed: int = 0,
                      level: float = DEFAULT_LEVEL) -> PairedDifference:
    """B − A on `value` over shared questions.

    scores: one row per (agent, question, replicate) with columns agent, cohort, market_id, question, value and
    optionally replicate (absent: every row is replicate 1); NaN values (unresolved, void) are not scored.
    statistic: "mean" (mean over shared questions, units of value) or "total" (sum over them, e.g. P/L in USD
    where a seat without a position on a market has 0 there — pass those zeros in).
    """
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, not {statistic!r}")
    if not 0.0 < level < 1.0:
        raise ValueError("level must lie in (0, 1)")
    df = scores[scores["agent"].isin([a, b])].dropna(subset=[value])
    if "replicate" not in df.columns:
        df = df.assign(replicate=1)
    keys = ["cohort", "market_id", "question"]
    per = df.groupby(keys + ["agent"], sort=True).agg(mean=(value, "mean"), var=(value, "var"),
                                                       k=(value, "count"))
    per["var"] = per["var"].fillna(0.0)
    first = df[df["replicate"] == 1].groupby(keys + ["agent"], sort=True)[value].mean()
    wide = per.unstack("agent")
    nan = float("nan")
    if a not in per.index.get_level_values("agent") or b not in per.index.get_level_values("agent"):
        return PairedDifference(metric or value, a, b, statistic, 0, 0, nan, nan, nan, nan, nan, nan, nan,
                                0, 0, nan, level)
    shared = wide[("mean", a)].notna() & wide[("mean", b)].notna()
    w = wide[shared]
    units = pd.DataFrame({"d": w[("mean", b)] - w[("mean", a)]}, index=w.index).reset_index()
    ex = first.unstack("agent").reindex(w.index)
    units["e"] = (ex[b] - ex[a]).to_numpy() if a in ex.columns and b in ex.columns else nan
    n = len(units)
    if n == 0:
        return PairedDifference(metric or value, a, b, statistic, 0, 0, nan, nan, nan, nan, nan, nan, nan,
                                0, 0, nan, level)
    agg = np.sum if statistic == "total" else np.mean
    est = float(agg(units["d"].to_numpy()))
    lo, hi, p = _interval(_bootstrap(units, "d", statistic, n_boot, seed), level)
    e = units["e"].dropna()
    executed = float(agg(e.to_numpy())) if len(e) else nan
    elo, ehi, _ = _interval(_bootstrap(units, "e", statistic, n_boot, seed), level)
    k_a, k_b = w[("k", a)].to_numpy(dtype=float), w[("k", b)].to_numpy(dtype=float)
    rep_var = (w[("var", a)].to_numpy(dtype=float) / k_a + w[("var", b)].to_numpy(dtype=float) / k_b).mean()
    total_var = float(units["d"].var()) if n > 1 else nan
    # a per-question variance at float-noise level means every question differs alike: no share to speak of
    share = float(min(1.0, rep_var / total_var)) if np.isfinite(total_var) and total_var > 1e-12 else nan
    if k_a.max() <= 1 and k_b.max() <= 1:
        share = nan  # no replicates: nothing to net out
    return PairedDifference(metric or value, a, b, statistic, n, int(units["market_id"].nunique()),
                            est, lo, hi, p, executed, elo, ehi, int(k_a.max()), int(k_b.max()), share, level)


def replicate_spread(forecasts: pd.DataFrame) -> pd.DataFrame:
    """Run-to-run spread per agent: agent, replicates (the most asked), questions (with ≥ 2 replicates), p_sd,
    brier_sd, brier_min, brier_max (NaN where fewer than 2 replicates or nothing resolved).

    forecasts: agent, question (unique within the agent's cohorts, e.g. cohort + market@round), replicate,
    probability (stated P(YES)) and outcome_yes (NaN until resolved)."""
    rows = []
    for agent, f in forecasts.groupby("agent", sort=True):
        k = int(f["replicate"].max()) if len(f) else 0
        by_q = f.groupby("question")["probability"]
        sd = by_q.std(ddof=1)
        multi = sd[by_q.count() >= 2]
        known = f[f["outcome_yes"].notna()]
        brier = pd.Series(dtype=float)
        if len(known) and k >= 2:
            full = known.groupby("question")["replicate"].nunique()
            every = full[full == k].index
            kk = known[known["question"].isin(every)]
            brier = ((kk["probability"] - kk["outcome_yes"]) ** 2).groupby(kk["replicate"]).mean()
        rows.append({"agent": agent, "replicates": k, "questions": int(len(multi)),
                     "p_sd": float(multi.mean()) if len(multi) else float("nan"),
                     "brier_sd": float(brier.std(ddof=1)) if len(brier) >= 2 else float("nan"),
                     "brier_min": float(brier.min()) if len(brier) >= 2 else float("nan"),
                     "brier_max": float(brier.max()) if len(brier) >= 2 else float("nan")})
    return pd.DataFrame(rows, columns=["agent", "replicates", "questions", "p_sd", "brier_sd", "brier_min",
                                       "brier_max"])


__all__ = ["PairedDifference", "paired_difference", "replicate_spread"]
