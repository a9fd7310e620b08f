"""The cost–skill frontier: per model, USD per resolved forecast against Brier − market, both with bootstrap
intervals, the Pareto frontier of the point estimates, and the bootstrap probability that another model is both
cheaper and better (`p_dominated`). Pure: numpy and pandas only; seeded, no clock.

Cost: a model's reported call costs summed, divided by its resolved forecasts (the boards' n_forecasts). Its
interval resamples the model's calls (with replacement, as many as it made; a call with no reported cost counts
0, as the sum does) with the resolved forecasts held fixed; above `EXACT_CALLS` calls the resampled sum is drawn
from the normal law with the bootstrap's own mean and variance (n·mean, n·variance of the calls' costs).

Skill: Brier − market, the mean of the model's market-level observations (one per cohort and market, its rounds
averaged: `scoring.evidence`). Its interval resamples distinct markets, every model on the same draws, a drawn
market bringing every cohort's observation on it (as the overall board's interval does).

Each draw pairs a cost draw with a skill draw for every model; a model is dominated in a draw when another model
is strictly cheaper and strictly better (lower Brier − market) in that draw. `p_dominated` is the share of draws
in which it is. A draw in which a model has no observation (none of its markets drawn) counts as not dominated
for it and lets it dominate no one. On the point estimates, a model is on the frontier when no other model is at
least as cheap and at least as good and better in one of the two.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

DEFAULT_DRAWS = 1000
DEFAULT_LEVEL = 0.95
EXACT_CALLS = 50_000  # above this many calls a model's resampled cost sum is drawn from its normal approximation
FRONTIER_COLUMNS = ("model", "cost_usd", "cost_usd_lo", "cost_usd_hi", "brier_minus_market", "brier_minus_market_lo",
                    "brier_minus_market_hi", "n_calls", "n_resolved", "n_markets", "on_frontier", "p_dominated")
FRONTIER_RULE = ("cost: USD per resolved forecast, its interval resampling the model's calls; skill: Brier − market, "
                 "its interval resampling distinct markets (every model on the same draws); p_dominated: the share "
                 "of joint draws in which another model is both strictly cheaper and strictly better")


def pareto_front(cost: np.ndarray, skill: np.ndarray) -> np.ndarray:
    """True where no other point has cost ≤ and skill ≤ (lower is better on both) with one of them strictly."""
    c, s = np.asarray(cost, dtype=float), np.asarray(skill, dtype=float)
    ok = np.isfinite(c) & np.isfinite(s)
    out = np.zeros(c.size, dtype=bool)
    for i in np.flatnonzero(ok):
        weak = ok & (c <= c[i]) & (s <= s[i]) & ((c < c[i]) | (s < s[i]))
        out[i] = not weak.any()
    return out


def _cost_draws(costs: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """n_boot resampled sums of `costs` (one model's calls, micro-USD)."""
    n = costs.size
    if n == 0:
        return np.zeros(n_boot)
    if n > EXACT_CALLS:
        return rng.normal(n * costs.mean(), np.sqrt(n * costs.var()), size=n_boot)
    out = np.empty(n_boot)
    block = max(1, 5_000_000 // n)  # draws per block: at most a few million indices in memory
    for start in range(0, n_boot, block):
        stop = min(n_boot, start + block)
        out[start:stop] = costs[rng.integers(0, n, size=(stop - start, n))].sum(axis=1)
    return out


def cost_skill_frontier(observations: pd.DataFrame, calls: pd.DataFrame, resolved: Mapping[str, int], *,
                        n_boot: int = DEFAULT_DRAWS, seed: int = 0, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """The frontier table, one row per model with calls, a resolved forecast and a skill (FRONTIER_COLUMNS, in
    model order; cost_usd in USD, NaN where no call reported a cost — such a model is not on the frontier and
    its p_dominated is NaN).

    observations: market-level rows (agent, market_id, diff_market; one per cohort and market); calls: one row per
    model call (agent, cost_micros; NaN: not reported); resolved: model → its resolved forecasts."""
    reported = calls.groupby("agent")["cost_micros"].apply(lambda s: bool(s.notna().any()))
    obs = observations[observations["diff_market"].notna()]
    models = sorted(m for m in reported.index if resolved.get(m, 0) > 0 and m in set(obs["agent"]))
    if not models:
        return pd.DataFrame(columns=list(FRONTIER_COLUMNS))
    obs = obs[obs["agent"].isin(models)]
    codes, markets = pd.factorize(obs["market_id"], sort=True)
    col = {m: j for j, m in enumerate(models)}
    j = obs["agent"].map(col).to_numpy()
    k, n_m = len(markets), len(models)
    sums = np.zeros((k, n_m))
    counts = np.zeros((k, n_m))
    np.add.at(sums, (codes, j), obs["diff_market"].to_numpy(dtype=float))
    np.add.at(counts, (codes, j), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        skill = sums.sum(axis=0) / counts.sum(axis=0)
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(k, np.full(k, 1.0 / k), size=n_boot).astype(float)  # markets drawn, per draw
    with np.errstate(invalid="ignore", divide="ignore"):
        skill_b = (weights @ sums) / (weights @ counts)  # draws × models; NaN: none of its markets drawn
    cost = np.full(n_m, np.nan)
    cost_b = np.full((n_boot, n_m), np.nan)
    n_calls = np.zeros(n_m, dtype=np.int64)
    by_model = dict(iter(calls.groupby("agent", sort=True)))
    for m in models:
        c = by_model[m]["cost_micros"].to_numpy(dtype=float)
        n_calls[col[m]] = c.size
        if not reported[m]:
            continue
        c = np.nan_to_num(c, nan=0.0)
        per = 1e6 * resolved[m]  # micro-USD → USD, per resolved forecast
        cost[col[m]] = c.sum() / per
        cost_b[:, col[m]] = _cost_draws(c, n_boot, rng) / per
    a = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore"):
        ok_b = np.isfinite(cost_b) & np.isfinite(skill_b)
        cheaper = cost_b[:, None, :] < cost_b[:, :, None]  # [b, i, j]: j cheaper than i
        better = skill_b[:, None, :] < skill_b[:, :, None]
        dominated = (cheaper & better & ok_b[:, None, :] & ok_b[:, :, None]).any(axis=2)
    p_dom = dominated.mean(axis=0)
    p_dom[~np.isfinite(cost)] = np.nan

    def q(x: np.ndarray, p: float) -> np.ndarray:
        out = np.full(x.shape[1], np.nan)
        for i in range(x.shape[1]):
            v = x[:, i][np.isfinite(x[:, i])]
            if v.size:
                out[i] = np.quantile(v, p)
        return out

    return pd.DataFrame({
        "model": models, "cost_usd": cost, "cost_usd_lo": q(cost_b, a), "cost_usd_hi": q(cost_b, 1 - a),
        "brier_minus_market": skill, "brier_minus_market_lo": q(skill_b, a), "brier_minus_market_hi": q(skill_b, 1 - a),
        "n_calls": n_calls, "n_resolved": [int(resolved[m]) for m in models],
        "n_markets": counts.sum(axis=0).astype(np.int64), "on_frontier": pareto_front(cost, skill),
        "p_dominated": p_dom,
    }, columns=list(FRONTIER_COLUMNS))


__all__ = ["DEFAULT_DRAWS", "EXACT_CALLS", "FRONTIER_COLUMNS", "FRONTIER_RULE", "cost_skill_frontier", "pareto_front"]
