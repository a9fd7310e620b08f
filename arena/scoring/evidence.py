"""The unit of evidence, the paired tests and the tiers built on it (pure: numpy, pandas and scipy.stats only).

The unit. A forecast-set market is asked in up to five decision rounds of a cohort but resolves once, and a seat's
error on it persists from round to round: its rounds are not independent questions. So, per cohort and seat, a
market gives **one observation: the mean of the seat's Brier over the rounds that asked it**, every round the same
weight (`market_rows`). The headline is the mean of those observations over the cohort's resolved markets; its
interval, P(first), the tiers, `arena compare` and the confidence sequences all take one observation per market.

Across cohorts a market is one cluster. Consecutive cohorts ask many of the same markets, and a market's outcome
(and a model's view of it) is shared by every cohort that asked it. Pooled statistics therefore resample, or take
the variance over, *distinct markets*: all cohorts' rows on a market move together (`cluster_t_test`,
`pooled_difference`; the boards' bootstrap in `stats.cluster_bootstrap` with the market as the cluster).

The tiers (`paired_tiers`). Each pair of eligible rows gets an exact paired test of "no difference" on its
market-level differences: the mean difference over the units both scored, with a cluster-robust standard error
(clusters = markets; with one unit per market it is the ordinary paired t-test) and Student's t on (markets − 1)
degrees of freedom. p-values are adjusted by Benjamini–Hochberg over every tested pair. No Monte Carlo is
involved, so the tiers do not depend on the bootstrap's seed or number of draws. Rules:

- a pair is tested only with at least `MIN_TIER_MARKETS` markets scored by both (minimum evidence: below it the
  t-test's normal approximation is not to be trusted and a few near-constant differences look "significant");
- a difference smaller than `TIER_RESOLUTION` (below the boards' displayed precision) never separates tiers;
- provisional rows and rows equal to a reference (`same_as`) are not tested and add no pair to the correction;
- a row whose displayed interval lies wholly on the worse side of the leader's is never in the leader's tier.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

MIN_TIER_MARKETS = 10  # markets scored by both rows before a pair is tested at all
TIER_RESOLUTION = 5e-4  # a mean difference below this (half the boards' last Brier digit) never splits tiers
SAME_AS_TOL = 1e-9  # stated probabilities this close on every question are "the same forecasts"
DEFAULT_ALPHA = 0.05
DEFAULT_LEVEL = 0.95

TIER_RULE = (
    "tier = 1 + the number of rows significantly better (exact paired t-test on the per-market Brier differences, "
    f"Benjamini-Hochberg over every tested pair, alpha = {DEFAULT_ALPHA}), made non-decreasing down the table; a pair "
    f"is tested only with at least {MIN_TIER_MARKETS} markets scored by both, a difference below "
    f"{TIER_RESOLUTION} never separates tiers, a row whose interval lies wholly above the leader's is never in the "
    "leader's tier; provisional rows get no tier; a row equal to a reference shares its tier and adds no pair"
)
UNIT_RULE = ("one observation per market: the mean of the seat's Brier over the rounds that asked it (each round "
             "the same weight)")


def market_rows(rows: pd.DataFrame, values: Sequence[str] = ("brier",), *, agent: str = "agent",
                market: str = "market_id", keys: Sequence[str] = ("cohort",)) -> pd.DataFrame:
    """One row per (keys…, agent, market): each of `values` averaged over the market's rows (its rounds; NaN rows
    skipped, so a value missing in some rounds is the mean of the others), `n_rounds` (rows), and the first value of
    every other column. Sorted by the keys, agent and market (a fixed order: sums over it are reproducible).

    rows: e.g. scored forecast rows, one per (cohort, agent, market@round). Key columns that are absent are
    ignored."""
    keys = [k for k in keys if k in rows.columns]
    group = [*keys, agent, market]
    vals = [v for v in values if v in rows.columns]
    if rows.empty:
        return rows.iloc[:0].assign(n_rounds=pd.Series(dtype=np.int64))
    g = rows.groupby(group, sort=True, dropna=False)
    out = g[vals].mean()
    out["n_rounds"] = g.size().astype(np.int64)
    others = [c for c in rows.columns if c not in group and c not in vals]
    if others:
        out = out.join(g[others].first())
    return out.reset_index()


def market_frame(rows: pd.DataFrame, value: str = "brier", *, cohort: str = "cohort", agent: str = "agent",
                 market: str = "market") -> pd.DataFrame:
    """The benchmark's entry point: rows (cohort, agent, market, round, value[, outcome]) → one row per (cohort,
    agent, market) with the mean value over its rounds — the observations every statistic here takes."""
    return market_rows(rows, (value,), agent=agent, market=market, keys=(cohort,))


# -- the paired test -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairedTest:
    """a − b on the units both scored: estimate (mean difference), se (cluster-robust over markets), ci_low/ci_high
    (t interval at `level`), p (two-sided), n (units), markets (clusters), df (markets − 1)."""

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    p: float
    n: int
    markets: int
    level: float

    @property
    def df(self) -> int:
        return max(self.markets - 1, 0)


def cluster_t_test(differences: Any, clusters: Any, level: float = DEFAULT_LEVEL) -> PairedTest:
    """The mean of `differences` (one per unit, e.g. per (cohort, market)) and a cluster-robust t test of 0.

    Units sharing a cluster (a market asked by several cohorts) are one piece of evidence: with G clusters, D_g the
    sum and n_g the count of cluster g's differences and N = Σ n_g, the estimate is d̄ = Σ D_g / N and
    var(d̄) = G / (G − 1) · Σ (D_g − d̄ n_g)² / N², on G − 1 degrees of freedom (with one unit per cluster this is
    the paired t-test exactly). NaN differences are dropped. Below 2 clusters: NaN se, interval and p. A zero
    variance gives p = 1 when the mean is 0 and p = 0 otherwise."""
    d = np.asarray(differences, dtype=float).ravel()
    c = np.asarray(clusters).ravel()
    ok = np.isfinite(d)
    d, c = d[ok], c[ok]
    nan = float("nan")
    n = int(d.size)
    if n == 0:
        return PairedTest(nan, nan, nan, nan, nan, 0, 0, level)
    if c.dtype.kind in "iu" and c.min() >= 0:  # integer codes (a caller's factorized clusters): no hashing
        dsum, cnt = np.bincount(c, weights=d), np.bincount(c).astype(float)
        held = cnt > 0  # (the clusters present, in code order: as factorizing them sorted would give)
        dsum, cnt = dsum[held], cnt[held]
    else:
        codes, uniq = pd.factorize(pd.Series(c), sort=True)
        dsum = np.bincount(codes, weights=d, minlength=len(uniq))
        cnt = np.bincount(codes, minlength=len(uniq)).astype(float)
    g = len(cnt)
    est = float(d.mean())
    if g < 2:
        return PairedTest(est, nan, nan, nan, nan, n, g, level)
    var = g / (g - 1) * float(np.sum((dsum - est * cnt) ** 2)) / n**2
    se = float(np.sqrt(max(var, 0.0)))
    t_q = float(sps.t.ppf(0.5 + level / 2.0, g - 1))
    if se <= 1e-15 * max(1.0, abs(est)):
        p = 1.0 if abs(est) <= 1e-15 else 0.0
        return PairedTest(est, 0.0, est, est, p, n, g, level)
    p = float(2.0 * sps.t.sf(abs(est) / se, g - 1))
    return PairedTest(est, se, est - t_q * se, est + t_q * se, p, n, g, level)


def pooled_difference(rows: pd.DataFrame, a: str, b: str, *, value: str = "brier", cohort: str = "cohort",
                      agent: str = "agent", market: str = "market", level: float = DEFAULT_LEVEL) -> PairedTest:
    """a − b pooled over cohorts, one observation per (cohort, market) (mean over its rounds), the markets as
    clusters (`cluster_t_test`): the cross-cohort comparison of the model pages. rows: (cohort, agent, market,
    [round,] value) — several rows per (cohort, agent, market) are its rounds."""
    obs = market_rows(rows[rows[agent].isin([a, b])], (value,), agent=agent, market=market, keys=(cohort,))
    wide = obs.pivot_table(index=[cohort, market], columns=agent, values=value, aggfunc="mean", sort=True)
    if a not in wide.columns or b not in wide.columns:
        return cluster_t_test([], [], level)
    d = (wide[a] - wide[b]).dropna()
    return cluster_t_test(d.to_numpy(), d.index.get_level_values(market).to_numpy(), level)


def cohort_differences(rows: pd.DataFrame, a: str, b: str, *, value: str = "brier", cohort: str = "cohort",
                       agent: str = "agent", market: str = "market", level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Per cohort: n (markets both scored), the mean market-level difference a − b, its paired t standard error and
    interval at `level` — the forest plot's rows (NaN se and interval below 2 markets)."""
    obs = market_rows(rows[rows[agent].isin([a, b])], (value,), agent=agent, market=market, keys=(cohort,))
    wide = obs.pivot_table(index=[cohort, market], columns=agent, values=value, aggfunc="mean", sort=True)
    out = []
    if a in wide.columns and b in wide.columns:
        d = (wide[a] - wide[b]).dropna()
        for name, part in d.groupby(level=0, sort=True):
            t = cluster_t_test(part.to_numpy(), np.arange(len(part)), level)
            out.append({"cohort": name, "n": t.n, "difference": t.estimate, "se": t.se, "ci_low": t.ci_low,
                        "ci_high": t.ci_high})
    return pd.DataFrame(out, columns=["cohort", "n", "difference", "se", "ci_low", "ci_high"])


def headline_intervals(rows: pd.DataFrame, value: str = "brier", *, cohort: str = "cohort", agent: str = "agent",
                       market: str = "market", n_boot: int = 1000, seed: int = 0,
                       level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """The boards' intervals from benchmark-shaped rows (cohort, agent, market, [round,] value): per agent and
    cohort the paired-bootstrap interval of its headline (markets resampled within the cohort), and per agent
    the overall board's (distinct markets resampled, every cohort's observation on a drawn market with it).
    Returns cohort (None on the overall rows), agent, estimate, ci_low, ci_high."""
    from arena.scoring.stats import cluster_bootstrap, paired_bootstrap

    obs = market_rows(rows, (value,), agent=agent, market=market, keys=(cohort,))
    parts = []
    for name, group in obs.groupby(cohort, sort=True):
        t = paired_bootstrap(group, value, agent=agent, market=market, stratum=None, n_boot=n_boot, seed=seed,
                             level=level, higher_is_better=False, min_resolved=0).table
        parts.append(t[["agent", "estimate", "ci_low", "ci_high"]].assign(cohort=name))
    t = cluster_bootstrap(obs.assign(_all=""), value, agent=agent, market=market, cluster="_all", n_boot=n_boot,
                          seed=seed, level=level).table
    parts.append(t[["agent", "estimate", "ci_low", "ci_high"]].assign(cohort=None))
    out = pd.concat(parts, ignore_index=True)
    return out[["cohort", "agent", "estimate", "ci_low", "ci_high"]]


def market_sequence(rows: pd.DataFrame, a: str, b: str, *, value: str = "brier", agent: str = "agent",
                    market: str = "market", time: str = "resolved_at", alpha: float = DEFAULT_ALPHA) -> Any:
    """The confidence sequence of a − b on one observation per market (the mean over its cohorts' rounds), in the
    order of `time` (the market's resolution) — what the statistics page and `arena compare` show."""
    from arena.scoring.sequential import compare_sequentially

    cs, _ = compare_sequentially(rows, a, b, alpha, agent=agent, question=market, value=value, time=time)
    return cs


# -- tiers ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tiers:
    """agents (labels, in input order), tier (float, NaN = no tier), p and p_adjusted (agents × agents, NaN where a
    pair was not tested), n_markets (agents × agents: markets both scored), tested (number of pairs in the BH
    correction), same_as (agent → the reference it equals, or None)."""

    agents: list[Any]
    tier: np.ndarray
    p: np.ndarray
    p_adjusted: np.ndarray
    n_markets: np.ndarray
    tested: int
    same_as: dict[Any, Any]

    def series(self) -> pd.Series:
        return pd.Series(self.tier, index=pd.Index(self.agents, name="agent"))


def _bh(p: np.ndarray) -> np.ndarray:
    from arena.scoring.stats import benjamini_hochberg

    return benjamini_hochberg(p)


def paired_tiers(obs: pd.DataFrame, *, value: str = "brier", agent: str = "agent", unit: Sequence[str] = ("market_id",),
               cluster: str = "market_id", higher_is_better: bool = False, alpha: float = DEFAULT_ALPHA,
               eligible: Any = None, same_as: dict[Any, Any] | None = None,
               intervals: pd.DataFrame | None = None, min_markets: int = MIN_TIER_MARKETS,
               resolution: float = TIER_RESOLUTION) -> Tiers:
    """Tiers of every agent in `obs` (market-level observations: one row per unit and agent) under the rules of
    the module docstring.

    unit: the columns naming an observation (a cohort board: the market; the overall board: cohort and market);
    cluster: the column whose equal values are one piece of evidence (the market). eligible: agents that may get a
    tier (default: all); same_as: agent → reference agent it equals (gets that reference's tier, not tested);
    intervals: agent, ci_low, ci_high of the displayed interval (for the leader rule). The estimate ordering rows
    is each agent's mean over its own units."""
    unit = list(unit)
    same_as = dict(same_as or {})
    wide = obs.pivot_table(index=unit, columns=agent, values=value, aggfunc="mean", sort=True)
    labels = list(wide.columns)
    k = len(labels)
    x = wide.to_numpy(dtype=float)
    clusters = wide.index.get_level_values(cluster).to_numpy() if len(wide) else np.zeros(0)
    with np.errstate(invalid="ignore"):
        estimate = np.nanmean(x, axis=0) if len(wide) else np.full(k, np.nan)
    loss = -estimate if higher_is_better else estimate
    ok = np.isfinite(loss)
    if eligible is not None:
        allowed = set(eligible)
        ok &= np.array([a in allowed for a in labels], dtype=bool)
    ok &= np.array([a not in same_as for a in labels], dtype=bool)
    p = np.full((k, k), np.nan)
    mean_d = np.full((k, k), np.nan)  # loss of i − loss of j on shared units
    n_mk = np.zeros((k, k), dtype=np.int64)
    codes = pd.factorize(pd.Series(clusters), sort=True)[0] if len(wide) else np.zeros(0, dtype=np.int64)
    for i in range(k):
        for j in range(i + 1, k):
            both = np.isfinite(x[:, i]) & np.isfinite(x[:, j])
            n_mk[i, j] = n_mk[j, i] = np.unique(codes[both]).size
            if not (ok[i] and ok[j]) or n_mk[i, j] < min_markets:
                continue
            t = cluster_t_test(x[both, i] - x[both, j], codes[both])
            sign = -1.0 if higher_is_better else 1.0
            mean_d[i, j], mean_d[j, i] = sign * t.estimate, -sign * t.estimate
            p[i, j] = p[j, i] = t.p
    iu = np.triu_indices(k, k=1)
    p_adj = np.full((k, k), np.nan)
    p_adj[iu] = _bh(p[iu])
    p_adj.T[iu] = p_adj[iu]
    tested = int(np.isfinite(p[iu]).sum())
    with np.errstate(invalid="ignore"):
        # [i, j]: j is significantly better than i
        significant = (mean_d > resolution) & (p_adj < alpha)
    leader = None
    if ok.any():
        leader = int(np.flatnonzero(ok)[np.argmin(np.where(ok, loss, np.inf)[ok])])
    if leader is not None and intervals is not None and len(intervals):
        iv = intervals.set_index("agent")
        if labels[leader] in iv.index:
            lo_l, hi_l = float(iv.at[labels[leader], "ci_low"]), float(iv.at[labels[leader], "ci_high"])
            for i, a in enumerate(labels):
                if i == leader or not ok[i] or a not in iv.index:
                    continue
                lo, hi = float(iv.at[a, "ci_low"]), float(iv.at[a, "ci_high"])
                worse = (lo > hi_l) if not higher_is_better else (hi < lo_l)
                if worse:
                    significant[i, leader] = True
    tiers = 1.0 + significant.sum(axis=1)
    tiers = np.where(ok, tiers, np.nan)
    order = np.argsort(np.where(ok, loss, np.inf), kind="stable")
    order = order[ok[order]]
    if order.size:
        tiers[order] = np.maximum.accumulate(tiers[order])
    for a, ref in same_as.items():
        if a in labels and ref in labels:
            tiers[labels.index(a)] = tiers[labels.index(ref)]
    return Tiers(labels, tiers, p, p_adj, n_mk, tested, same_as)


def equal_to_reference(forecasts: pd.DataFrame, references: Sequence[str], *, agent: str = "agent",
                       question: Sequence[str] = ("question",), probability: str = "probability",
                       tol: float = SAME_AS_TOL) -> dict[Any, Any]:
    """agent → the first of `references` whose stated probability it equals (within `tol`) on every question, both
    having the same questions; references themselves are never listed."""
    question = [q for q in question if q in forecasts.columns]
    wide = forecasts.pivot_table(index=question, columns=agent, values=probability, aggfunc="mean", sort=True)
    out: dict[Any, Any] = {}
    for ref in references:
        if ref not in wide.columns:
            continue
        r = wide[ref].to_numpy(dtype=float)
        for a in wide.columns:
            if a in references or a in out:
                continue
            v = wide[a].to_numpy(dtype=float)
            same_set = np.array_equal(np.isfinite(v), np.isfinite(r))
            if same_set and np.isfinite(r).any() and np.all(np.abs(v[np.isfinite(r)] - r[np.isfinite(r)]) <= tol):
                out[a] = ref
    return out


__all__ = ["DEFAULT_ALPHA", "MIN_TIER_MARKETS", "PairedTest", "TIER_RESOLUTION", "TIER_RULE", "Tiers", "UNIT_RULE",
           "cluster_t_test", "cohort_differences", "equal_to_reference", "headline_intervals", "market_frame",
           "market_rows", "market_sequence",
           "paired_tiers", "pooled_difference"]
