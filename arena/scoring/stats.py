"""Uncertainty for leaderboards: a paired, stratified bootstrap over markets and the rankings read from it.

Owns the resampling of markets (events) within strata (cohorts), percentile intervals, the probability of ranking
first, pairwise bootstrap p-values with Benjamini–Hochberg adjustment, seed 002's "% more accurate than No. 1",
significance tiers and the provisional flag. Pure and vectorised; imports only numpy, pandas and the registry —
never the store, the venues or the clock.

How a draw works (ForecastBench's question bootstrap, made paired): the unit of resampling is a market within its
stratum. Draw b picks, in every stratum s with n_s markets, n_s markets with replacement; *every agent is scored on
that same draw*, so agents are compared on the same luck. Rather than rebuilding a frame per draw, a draw is a row
of a count matrix C (draws × markets, C[b, m] = how many times market m was drawn) and each agent's sums come from
matrix products with per-(market, agent) matrices:

    numerator   N[m, a] = sum of agent a's values on market m (0 where it has none)
    rows        K[m, a] = number of agent a's rows on market m (0 = missing cell)
    statistic   mean:  (C @ N) / (C @ K)         — the mean over the agent's own rows in the draw
                skill: 1 − (C @ N) / (C @ R)     — R[m, a] = sum of the reference (e.g. the market's Brier)
                total: C @ N                     — e.g. total P/L over the markets drawn

Missing cells (an agent that did not bet on every market) need no imputation: each draw averages over the agent's
own markets among those drawn, weighting a market by the agent's rows on it, so with C = 1 (the sample itself) the
estimate is exactly the plain mean over the agent's rows — the leaderboard number. A draw that contains none of an
agent's markets gives NaN for that agent; such draws are left out of that agent's interval and of its pairwise
comparisons (`draws_used` counts the rest). Several rows per (agent, market) — several bets — are all kept; the
market carries all of them into a draw.

Reproducibility: draw b uses its own generator, numpy's default_rng(SeedSequence(seed, spawn_key=(b,))), so the
draws depend only on (seed, b, the strata sizes) — not on chunking, and the first k draws of a long run equal a
k-draw run. `draw_indices` exposes exactly the draws the bootstrap uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from arena.scoring.codes import column_codes, key_codes
from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED
from arena.scoring.registry import METRICS, register

STATISTICS = ("mean", "skill", "total")
DEFAULT_N_BOOT = 1000
DEFAULT_LEVEL = 0.95
DEFAULT_ALPHA = 0.05
DEFAULT_MIN_RESOLVED = PROVISIONAL_MIN_RESOLVED  # the one provisional rule (scoring/provisional.py)
_CHUNK_CELLS = 4_000_000  # draws are processed in chunks of about this many (draw, market) cells (~32 MB)
_PAIR_CELLS = 2_000_000  # pairwise differences are accumulated in chunks of about this many (draw, pair) cells
_TIE_RTOL = 1e-12  # two statistics this close (relative to max(1, |x|)) are a tie: float noise, not a difference

TIER_RULE = (
    "tier = 1 + the number of agents with a better estimate whose pairwise difference from this agent has a "
    "Benjamini-Hochberg-adjusted bootstrap p-value below alpha (adjusted over all pairs), made non-decreasing "
    "down the table; agents that share a tier are not distinguishable at that level"
)
P_VALUE_RULE = (
    "two-sided paired-bootstrap p-value of the difference in the statistic: 2 * min(#draws with difference <= 0, "
    "#draws with difference >= 0) + 1 correction, i.e. min(1, 2 * (min(k_le, k_ge) + 1) / (draws + 1)), so a "
    "finite bootstrap never reports p = 0; its smallest value is 2 / (draws + 1)"
)
INTERVAL_RULE = "percentile interval of the statistic over the bootstrap draws in which the agent had a market"

register(
    "p_first",
    higher_is_better=True,
    description="Share of bootstrap draws (markets resampled within cohorts) where the agent ranks first, ties split",
    unit="probability, 0..1",
)
register(
    "pct_beat_first",
    higher_is_better=True,
    description="Percent of the markets scored by both where this agent scored better than the No. 1 agent (seed 002)",
    unit="percent",
)
register(
    "p_vs_first",
    higher_is_better=False,
    description="Paired-bootstrap two-sided p-value of the difference from No. 1 (small = clearly different)",
    unit="probability, 0..1",
)
register(
    "p_vs_first_adj",
    higher_is_better=False,
    description="p_vs_first adjusted by Benjamini-Hochberg over the comparisons with No. 1 (not a skill)",
    unit="probability, 0..1",
)
register(
    "tier",
    higher_is_better=False,
    description="Significance tier: 1 + agents significantly better (BH-adjusted p < 0.05; forecast keys: exact "
    "paired t-tests on per-market differences, bet keys: paired bootstrap)",
    unit="rank",
)


@dataclass(frozen=True)
class BootstrapResult:
    """A bootstrapped leaderboard for one statistic.

    table: one row per agent, best first — agent, n (rows scored, e.g. resolved bets), n_markets, provisional,
        estimate (the statistic on the sample), se (bootstrap standard deviation), ci_low / ci_high (percentile
        interval at `level`), draws_used, rank (1 = best estimate; equal estimates share the lower rank), tier,
        p_first, diff_vs_first (estimate − No. 1's), p_vs_first, p_vs_first_adj, pct_beat_first (percent),
        n_common_first (markets scored by both). Units are the statistic's (e.g. Brier in 0..1).
    diff: agents × agents, estimate(row) − estimate(column).
    p_value, p_adjusted: agents × agents two-sided bootstrap p-values, raw and BH-adjusted over all unordered pairs
        (NaN on the diagonal and where no draw had both agents).
    cells: per (stratum, agent) row counts and the provisional flag (stratum is None without strata).
    draws: draws × agents values of the statistic (NaN where the agent had no market in the draw).
    notes: the rules behind the columns, in words, for display.
    """

    metric: str
    statistic: str
    higher_is_better: bool
    n_boot: int
    seed: int
    level: float
    alpha: float
    min_resolved: int
    table: pd.DataFrame
    diff: pd.DataFrame
    p_value: pd.DataFrame
    p_adjusted: pd.DataFrame
    cells: pd.DataFrame
    draws: pd.DataFrame = field(repr=False)
    notes: dict[str, str] = field(default_factory=dict)

    @property
    def first(self) -> Any:
        """The No. 1 agent (best estimate), or None when no agent has an estimate."""
        ok = self.table[np.isfinite(self.table["estimate"].to_numpy(dtype=float))]
        return ok["agent"].iloc[0] if len(ok) else None


TABLE_COLUMNS = (
    "agent", "n", "n_markets", "provisional", "estimate", "se", "ci_low", "ci_high", "draws_used", "rank", "tier",
    "p_first", "diff_vs_first", "p_vs_first", "p_vs_first_adj", "pct_beat_first", "n_common_first",
)


# -- building blocks ------------------------------------------------------------------------------------------


def benjamini_hochberg(p_values: Any) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (step-up, FDR), same shape as the input, capped at 1.

    adj_(i) = min over k ≥ i of m · p_(k) / k, with p_(1) ≤ … ≤ p_(m) the m finite p-values; NaN stays NaN and
    does not count in m. Reject at FDR q exactly where adj ≤ q.
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    flat = p.ravel()
    ok = np.flatnonzero(np.isfinite(flat))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(flat[ok], kind="stable")]
    scaled = flat[order] * m / np.arange(1, m + 1)
    adjusted = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    res = out.ravel()
    res[order] = adjusted
    return res.reshape(p.shape)


def draw_indices(stratum_sizes: Any, n_boot: int, seed: int = 0, *, first_draw: int = 0) -> np.ndarray:
    """The markets drawn: an int array (n_boot × total markets) of market positions.

    Markets are numbered stratum by stratum (stratum s owns positions start_s .. start_s + n_s − 1, in the order of
    `stratum_sizes`); in every draw each stratum's block holds n_s positions drawn uniformly with replacement from
    that stratum. Draw b (counting from `first_draw`) uses default_rng(SeedSequence(seed, spawn_key=(b,))).
    """
    sizes = np.asarray(stratum_sizes, dtype=np.int64).ravel()
    if (sizes < 0).any():
        raise ValueError("stratum sizes must be non-negative")
    total = int(sizes.sum())
    starts = np.repeat(np.cumsum(sizes) - sizes, sizes)
    width = np.repeat(sizes, sizes).astype(float)
    # floor(u · n_s) is uniform on 0..n_s−1 (to 2^-53): one generator call per draw whatever the strata
    pick = np.floor(_uniforms(seed, first_draw, n_boot, total) * width).astype(np.int64)
    return starts + np.minimum(pick, np.maximum(width.astype(np.int64) - 1, 0))


_UNIFORM_CACHE: dict[tuple[int, int, int], np.ndarray] = {}
_UNIFORM_CACHE_LIMIT = 8_000_000  # doubles kept per entry (64 MB); larger requests are not cached


def _uniforms(seed: int, first_draw: int, n_boot: int, total: int) -> np.ndarray:
    """U[i, :total] = default_rng(SeedSequence(seed, spawn_key=(first_draw + i,))).random(total).

    A generator's first k doubles do not depend on how many are asked for, so the widest matrix computed for a
    (seed, first_draw, n_boot) serves every narrower request: the many bootstraps of one scoring run (a metric
    per cohort) create each draw's generator once instead of once per metric."""
    key = (int(seed), int(first_draw), int(n_boot))
    cached = _UNIFORM_CACHE.get(key)
    if cached is not None and cached.shape[1] >= total:
        return cached[:, :total]
    u = np.empty((n_boot, total))
    for i in range(n_boot):
        u[i] = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(first_draw + i,))).random(total)
    if n_boot * total <= _UNIFORM_CACHE_LIMIT:
        if len(_UNIFORM_CACHE) >= 4:
            _UNIFORM_CACHE.pop(next(iter(_UNIFORM_CACHE)))
        _UNIFORM_CACHE[key] = u
    return u


def draw_counts(indices: np.ndarray, n_markets: int) -> np.ndarray:
    """Count matrix (draws × markets, float): how many times each market appears in each row of `indices`."""
    n_draws = indices.shape[0]
    flat = (np.arange(n_draws, dtype=np.int64)[:, None] * n_markets + indices).ravel()
    return np.bincount(flat, minlength=n_draws * n_markets).reshape(n_draws, n_markets).astype(float)


def _ties(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.abs(x - y) <= _TIE_RTOL * np.maximum(1.0, np.maximum(np.abs(x), np.abs(y)))


def _statistic(num: np.ndarray, den: np.ndarray, rows: np.ndarray, statistic: str) -> np.ndarray:
    """The statistic from summed numerators, denominators and row counts; NaN where the agent has no row."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if statistic == "mean":
            out = num / rows
        elif statistic == "skill":
            out = np.where(den > 0, 1.0 - num / den, np.nan)
        else:
            out = num.astype(float, copy=True)
    return np.where(rows > 0, out, np.nan)


def pairwise_p_values(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided bootstrap p-values for every pair of columns of `draws` (draws × agents).

    For each pair (i, j), d_b = draws[b, i] − draws[b, j] over the draws where both are finite (a difference within
    float noise counts as 0): p = min(1, 2 · (min(#d ≤ 0, #d ≥ 0) + 1) / (#draws + 1)). Returns (p, n_draws_used),
    both agents × agents; p is NaN on the diagonal and where no draw has both.
    """
    n_boot, n_agents = draws.shape
    le = np.zeros((n_agents, n_agents), dtype=np.int64)
    ge = np.zeros((n_agents, n_agents), dtype=np.int64)
    valid = np.zeros((n_agents, n_agents), dtype=np.int64)
    step = max(1, _PAIR_CELLS // max(1, n_agents * n_agents))
    for lo in range(0, n_boot, step):
        m = draws[lo : lo + step]
        a, b = m[:, :, None], m[:, None, :]
        ok = ~(np.isnan(a) | np.isnan(b))
        tie = ok & _ties(a, b)
        with np.errstate(invalid="ignore"):
            le += ((a < b) & ok | tie).sum(axis=0)
            ge += ((a > b) & ok | tie).sum(axis=0)
        valid += ok.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.minimum(1.0, 2.0 * (np.minimum(le, ge) + 1) / (valid + 1))
    p = np.where(valid > 0, p, np.nan)
    np.fill_diagonal(p, np.nan)
    return p, valid


def first_probabilities(draws: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """Per agent, the share of draws in which it is best (ties split equally), over draws with any finite value."""
    loss = -draws if higher_is_better else draws
    finite = np.isfinite(loss)
    usable = finite.any(axis=1)
    if not usable.any():
        return np.full(draws.shape[1], np.nan)
    loss = loss[usable]
    finite = finite[usable]
    best = np.min(np.where(finite, loss, np.inf), axis=1, keepdims=True)
    is_best = finite & _ties(np.where(finite, loss, np.inf), best)
    share = is_best / is_best.sum(axis=1, keepdims=True)
    return share.mean(axis=0)


def significance_tiers(
    estimates: Any, p_adjusted: Any, higher_is_better: bool, alpha: float = DEFAULT_ALPHA
) -> np.ndarray:
    """Tier per agent (see TIER_RULE): 1 + #agents with a better estimate and BH-adjusted p < alpha against it,
    then made non-decreasing when agents are listed best first. NaN for an agent without an estimate."""
    est = np.asarray(estimates, dtype=float)
    padj = np.asarray(p_adjusted, dtype=float)
    loss = -est if higher_is_better else est
    with np.errstate(invalid="ignore"):
        better = (loss[None, :] < loss[:, None]) & ~_ties(loss[None, :], loss[:, None])  # [i, j]: j beats i
        significant = better & (padj < alpha)
    tiers = 1.0 + significant.sum(axis=1)
    finite = np.isfinite(loss)
    tiers = np.where(finite, tiers, np.nan)
    order = np.argsort(np.where(finite, loss, np.inf), kind="stable")
    order = order[finite[order]]
    tiers[order] = np.maximum.accumulate(tiers[order]) if order.size else tiers[order]
    return tiers


# -- the bootstrap ------------------------------------------------------------------------------------------


def _direction(metric: str, statistic: str, higher_is_better: bool | None) -> bool:
    if higher_is_better is not None:
        return bool(higher_is_better)
    if statistic == "skill":
        return True
    if metric in METRICS:
        return METRICS[metric].higher_is_better
    raise ValueError(f"metric {metric!r} is not registered: pass higher_is_better")


def _codes(frame: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Dense codes for the key columns, numbered in sorted key order (NaN keys are kept as their own key)."""
    grouped = frame.groupby(columns, sort=True, dropna=False)
    codes = grouped.ngroup().to_numpy(dtype=np.int64)
    keys = grouped.size().reset_index()[columns]
    return codes, keys


def _percentile_intervals(draws: np.ndarray, level: float
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per column of `draws` (draws × agents): the finite draws used, the percentile interval at `level` and the
    standard error (ddof 1); NaN where a column has no finite draw (se: fewer than two)."""
    n_agents = draws.shape[1]
    used = np.isfinite(draws).sum(axis=0)
    tail = (1.0 - level) / 2.0
    lo, hi, se = (np.full(n_agents, np.nan) for _ in range(3))
    ok = used > 0
    if ok.any():
        with np.errstate(invalid="ignore"):
            q = np.nanquantile(draws[:, ok], [tail, 1.0 - tail], axis=0)
        lo[ok], hi[ok] = q[0], q[1]
        two = used > 1
        se[two] = np.nanstd(draws[:, two], axis=0, ddof=1)
    return used, lo, hi, se


def _pairwise_adjusted(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairwise p-values of `pairwise_p_values` and their symmetric BH-adjusted matrix (NaN diagonal)."""
    n_agents = draws.shape[1]
    p_value, _ = pairwise_p_values(draws)
    iu = np.triu_indices(n_agents, k=1)
    p_adj = np.full((n_agents, n_agents), np.nan)
    p_adj[iu] = benjamini_hochberg(p_value[iu])
    p_adj.T[iu] = p_adj[iu]
    return p_value, p_adj


def paired_bootstrap(
    scores: pd.DataFrame,
    value: str,
    *,
    statistic: str = "mean",
    reference: str | float | None = None,
    metric: str | None = None,
    higher_is_better: bool | None = None,
    agent: str = "agent",
    market: str = "market_id",
    stratum: str | None = "cohort",
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
    alpha: float = DEFAULT_ALPHA,
    min_resolved: int = DEFAULT_MIN_RESOLVED,
) -> BootstrapResult:
    """Bootstrap a leaderboard statistic by resampling markets within strata, every agent on the same draws.

    scores: a long frame with one row per scored unit — per bet (e.g. `leaderboard.per_bet_scores` output), per
        forecast or per (agent, market) — with the `agent` and `market` columns, the `value` column and, when
        present, the `stratum` column (cohort; markets are resampled within it; without it the frame is one
        stratum). A row whose value (or reference column) is NaN is not scored (unresolved, void); an agent with
        only such rows still gets a table row with n = 0 and NaN scores.
    value: the column to average, e.g. "brier" (0..1, lower is better), "pnl" per market (USD), or a per-forecast
        crowd-proxy error (0..1).
    statistic: "mean" — mean of value over the agent's rows (units of value); "skill" — 1 − Σ value / Σ reference
        over the agent's rows (unitless), with `reference` a column (e.g. "brier_market" → bss_vs_market) or a
        constant (0.25 → bss_vs_0_25); "total" — sum of value over the agent's rows (e.g. total P/L in USD).
    metric: the registry name the result is labelled with (default: `value`); its registered direction is used
        unless `higher_is_better` is given ("skill" defaults to higher is better).
    n_boot, seed, level, alpha: draws, the seed of numpy's generator, the interval level (0.95 → 2.5 % and 97.5 %
        percentiles) and the significance level of the tiers (on BH-adjusted p-values).
    min_resolved: an agent (and an agent-cohort in `cells`) with fewer scored rows than this is provisional.

    Returns a `BootstrapResult`. Everything is NaN (never 0) where there is nothing to score.
    """
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, not {statistic!r}")
    if statistic == "skill" and reference is None:
        raise ValueError("statistic='skill' needs a reference column or constant")
    if n_boot < 1 or not 0 < level < 1 or not 0 < alpha < 1 or min_resolved < 0:
        raise ValueError("need n_boot >= 1, 0 < level < 1, 0 < alpha < 1 and min_resolved >= 0")
    metric = metric or value
    hib = _direction(metric, statistic, higher_is_better)
    ref_col = reference if isinstance(reference, str) else None
    needed = [agent, market, value] + ([ref_col] if ref_col else [])
    missing = [c for c in needed if c not in scores.columns]
    if missing:
        raise ValueError(f"scores frame lacks column(s) {missing}")
    use_strata = stratum is not None and stratum in scores.columns

    agent_labels = pd.Index(pd.unique(scores[agent])).sort_values() if len(scores) else pd.Index([])
    vals = pd.to_numeric(scores[value], errors="raise").to_numpy(dtype=float)
    keep = ~np.isnan(vals)
    if ref_col:
        ref_vals = pd.to_numeric(scores[ref_col], errors="raise").to_numpy(dtype=float)
        keep &= ~np.isnan(ref_vals)
    if np.isinf(vals[keep]).any():
        raise ValueError(f"{value} has infinite values")
    frame = scores.loc[keep]
    vals = vals[keep]
    n_agents = len(agent_labels)
    a_code = agent_labels.get_indexer(frame[agent])
    if use_strata:
        frame = frame.assign(_stratum=frame[stratum].to_numpy())
    else:
        frame = frame.assign(_stratum=0)
    m_code, m_keys = _codes(frame, ["_stratum", market])
    n_markets = len(m_keys)
    stratum_sizes = m_keys.groupby("_stratum", sort=True, dropna=False).size().to_numpy()

    cell = m_code * n_agents + a_code
    size = n_markets * n_agents
    num = np.bincount(cell, weights=vals, minlength=size).reshape(n_markets, n_agents)
    rows = np.bincount(cell, minlength=size).reshape(n_markets, n_agents).astype(float)
    if statistic == "skill":
        ref_w = ref_vals[keep] if ref_col else np.full(vals.size, float(reference))  # type: ignore[arg-type]
        den = np.bincount(cell, weights=ref_w, minlength=size).reshape(n_markets, n_agents)
        stacked = np.hstack([num, den, rows])
    else:
        den = rows
        stacked = np.hstack([num, rows])

    def stat_of(sums: np.ndarray) -> np.ndarray:
        s_num = sums[..., :n_agents]
        s_rows = sums[..., -n_agents:]
        s_den = sums[..., n_agents : 2 * n_agents] if statistic == "skill" else s_rows
        return _statistic(s_num, s_den, s_rows, statistic)

    estimate = stat_of(stacked.sum(axis=0)) if n_agents else np.zeros(0)
    draws = np.full((n_boot, n_agents), np.nan)
    if n_markets and n_agents:
        step = max(1, _CHUNK_CELLS // n_markets)
        for lo in range(0, n_boot, step):
            k = min(step, n_boot - lo)
            counts = draw_counts(draw_indices(stratum_sizes, k, seed, first_draw=lo), n_markets)
            draws[lo : lo + k] = stat_of(counts @ stacked)

    draws_used, ci_low, ci_high, se = _percentile_intervals(draws, level)
    p_first = first_probabilities(draws, hib) if n_agents else np.zeros(0)
    p_value, p_adj = _pairwise_adjusted(draws)
    tiers = significance_tiers(estimate, p_adj, hib, alpha)
    diff = estimate[:, None] - estimate[None, :]

    # order, rank and the comparisons with No. 1
    loss = -estimate if hib else estimate
    order = np.lexsort((np.arange(n_agents), np.where(np.isfinite(loss), loss, np.inf)))
    rank = pd.Series(loss).rank(method="min").to_numpy()
    has_est = np.isfinite(loss)
    first = int(order[0]) if has_est.any() else None

    n_rows = rows.sum(axis=0)
    n_mk = (rows > 0).sum(axis=0)
    diff_first = np.full(n_agents, np.nan)
    p_first_cmp = np.full(n_agents, np.nan)
    p_first_adj = np.full(n_agents, np.nan)
    pct_beat = np.full(n_agents, np.nan)
    n_common = np.zeros(n_agents, dtype=np.int64)
    if first is not None:
        diff_first = estimate - estimate[first]
        others = np.arange(n_agents) != first
        p_first_cmp[others] = p_value[others, first]
        p_first_adj[others] = benjamini_hochberg(p_value[others, first])
        per_market = _statistic(num, den, rows, statistic)
        market_loss = -per_market if hib else per_market
        both = np.isfinite(market_loss) & np.isfinite(market_loss[:, [first]])
        ref_loss = market_loss[:, [first]]
        with np.errstate(invalid="ignore"):
            beat = both & (market_loss < ref_loss) & ~_ties(market_loss, ref_loss)
        n_common = both.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            pct = np.where(n_common > 0, 100.0 * beat.sum(axis=0) / n_common, np.nan)
        pct_beat = np.where(others, pct, np.nan)

    table = pd.DataFrame(
        {
            "agent": agent_labels.to_numpy(),
            "n": n_rows.astype(np.int64),
            "n_markets": n_mk.astype(np.int64),
            "provisional": n_rows < min_resolved,
            "estimate": estimate,
            "se": se,
            "ci_low": ci_low,
            "ci_high": ci_high,
            "draws_used": draws_used.astype(np.int64),
            "rank": rank,
            "tier": tiers,
            "p_first": p_first,
            "diff_vs_first": diff_first,
            "p_vs_first": p_first_cmp,
            "p_vs_first_adj": p_first_adj,
            "pct_beat_first": pct_beat,
            "n_common_first": n_common.astype(np.int64),
        },
        columns=list(TABLE_COLUMNS),
    ).iloc[order].reset_index(drop=True)

    cell_keys = ["_stratum", agent]
    if len(frame):
        cells = frame.groupby(cell_keys, sort=True, dropna=False).size().rename("n").reset_index()
    else:
        cells = pd.DataFrame({"_stratum": [], agent: [], "n": []})
    cells = cells.rename(columns={"_stratum": "stratum", agent: "agent"})
    if not use_strata:
        cells["stratum"] = None
    cells["n"] = cells["n"].astype(np.int64)
    cells["provisional"] = cells["n"] < min_resolved

    labels = agent_labels.rename("agent")
    notes = {
        "statistic": {
            "mean": f"mean of {value} over the agent's scored rows",
            "skill": f"1 - sum({value}) / sum({reference}) over the agent's scored rows",
            "total": f"sum of {value} over the agent's scored rows",
        }[statistic],
        "resampling": (f"{n_boot} draws of markets with replacement within each "
                       f"{'stratum (' + str(stratum) + ')' if use_strata else 'sample (no strata)'}; "
                       "every agent scored on the same draw; missing cells use the agent's own markets in the draw"),
        "interval": f"{level:.0%} {INTERVAL_RULE}",
        "p_value": P_VALUE_RULE,
        "tier": TIER_RULE.replace("alpha", f"alpha = {alpha}"),
        "provisional": f"provisional: fewer than {min_resolved} scored (resolved) rows",
        "pct_beat_first": "percent of markets scored by both where the agent's per-market statistic beat No. 1's",
        "seed": f"numpy default_rng(SeedSequence({seed}, spawn_key=(draw,)))",
    }
    return BootstrapResult(
        metric=metric,
        statistic=statistic,
        higher_is_better=hib,
        n_boot=n_boot,
        seed=seed,
        level=level,
        alpha=alpha,
        min_resolved=min_resolved,
        table=table,
        diff=pd.DataFrame(diff, index=labels, columns=labels),
        p_value=pd.DataFrame(p_value, index=labels, columns=labels),
        p_adjusted=pd.DataFrame(p_adj, index=labels, columns=labels),
        cells=cells[["stratum", "agent", "n", "provisional"]],
        draws=pd.DataFrame(draws, columns=labels),
        notes=notes,
    )


BET_METRICS: dict[str, dict[str, Any]] = {
    "brier": {"value": "brier"},
    "brier_stated": {"value": "brier_stated"},
    "bss_vs_0_25": {"value": "brier", "statistic": "skill", "reference": 0.25},
    "bss_vs_market": {"value": "brier", "statistic": "skill", "reference": "brier_market"},
}


def bootstrap_bet_metrics(scored_bets: pd.DataFrame, metrics: Any = tuple(BET_METRICS), **options: Any
                          ) -> dict[str, BootstrapResult]:
    """`paired_bootstrap` of the leaderboard's per-bet metrics on the same draws (same seed, same markets).

    scored_bets: `leaderboard.per_bet_scores` output (agent, market_id, brier, brier_market, brier_stated and
    optionally cohort). metrics: names from BET_METRICS (brier; brier_stated; bss_vs_0_25 = 1 − Σbrier / (0.25·n);
    bss_vs_market = 1 − Σbrier / Σbrier_market over bets with both). options go to `paired_bootstrap`
    (n_boot, seed, level, alpha, min_resolved, stratum, …). A metric whose column is absent is skipped. Draws
    coincide across metrics whenever their scored markets coincide, since draws depend only on the seed and the
    strata sizes.
    """
    out = {}
    for name in metrics:
        spec = BET_METRICS[name]
        needed = [spec["value"]] + ([spec["reference"]] if isinstance(spec.get("reference"), str) else [])
        if all(c in scored_bets.columns for c in needed):
            out[name] = paired_bootstrap(scored_bets, metric=name, **spec, **options)
    return out


# -- the bootstrap across cohorts ------------------------------------------------------------------------------


def cluster_draw_counts(cluster_sizes: Any, n_boot: int, seed: int = 0) -> np.ndarray:
    """Two-stage draws (n_boot × total markets, float counts): each draw picks as many clusters (cohorts) as
    there are, with replacement, then within every picked copy of a cluster as many of its markets as it has,
    with replacement. Markets are numbered cluster by cluster as in `draw_indices`.

    A cluster picked w times contributes w independent resamples of its n markets, i.e. multinomial(w·n, 1/n)
    counts. One generator, default_rng(SeedSequence(seed, spawn_key=(1,))) — a stream apart from
    `draw_indices`'s — draws all clusters' picks, then each cluster's counts for every draw at once, so the draws
    depend on (seed, n_boot, the cluster sizes).
    """
    sizes = np.asarray(cluster_sizes, dtype=np.int64).ravel()
    if (sizes < 0).any():
        raise ValueError("cluster sizes must be non-negative")
    # A board bootstraps several metrics over the same clusters: the last draws are kept (read-only) and reused.
    memo_key = (int(seed), int(n_boot), sizes.tobytes())
    if _CLUSTER_MEMO and _CLUSTER_MEMO[0] == memo_key:
        return _CLUSTER_MEMO[1]
    counts = _cluster_draw_counts(sizes, n_boot, seed)
    counts.setflags(write=False)
    _CLUSTER_MEMO[:] = [memo_key, counts]
    return counts


_CLUSTER_MEMO: list[Any] = []  # [key, counts] of the last `cluster_draw_counts` call


def _cluster_draw_counts(sizes: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    n_clusters = sizes.size
    starts = np.cumsum(sizes) - sizes
    counts = np.zeros((n_boot, int(sizes.sum())))
    if n_clusters == 0:
        return counts
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,)))
    picks = rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=n_boot)
    for c in range(n_clusters):
        n = int(sizes[c])
        if n:
            counts[:, starts[c] : starts[c] + n] = rng.multinomial(picks[:, c] * n, np.full(n, 1.0 / n))
    return counts


@dataclass(frozen=True)
class ClusterBootstrapResult:
    """table: one row per agent, best first — agent, n (rows scored), n_clusters (clusters with a row), estimate
    (pooled statistic on the sample), se, ci_low, ci_high, draws_used, tier. p_adjusted: agents × agents
    BH-adjusted pairwise p-values. draws: draws × agents."""

    table: pd.DataFrame
    p_adjusted: pd.DataFrame
    draws: pd.DataFrame = field(repr=False)


@dataclass(frozen=True)
class ClusterDesign:
    """The keys of a score frame as codes, made once for every statistic bootstrapped from it: agents (sorted
    labels), per row its agent's code and its (cluster, market) key's code (keys numbered in sorted order, so a
    cluster's keys are consecutive), and per key a code of its cluster (-1 for a missing cluster value)."""

    agents: pd.Index
    agent: np.ndarray
    key: np.ndarray
    cluster_of_key: np.ndarray


def cluster_design(scores: pd.DataFrame, *, agent: str = "agent", market: str = "market_id",
                   cluster: str = "cohort") -> ClusterDesign:
    """The `ClusterDesign` of `scores` (a missing key value is a key value of its own)."""
    missing = [c for c in (agent, market, cluster) if c not in scores.columns]
    if missing:
        raise ValueError(f"scores frame lacks column(s) {missing}")
    a_code, agents = column_codes(scores[agent], dropna=False)
    key, keys = key_codes(scores, [cluster, market], dropna=False)
    return ClusterDesign(agents, a_code, key, np.asarray(keys.codes[0], dtype=np.int64))


def cluster_bootstrap(
    scores: pd.DataFrame,
    value: str,
    *,
    statistic: str = "mean",
    reference: str | None = None,
    higher_is_better: bool = False,
    agent: str = "agent",
    market: str = "market_id",
    cluster: str = "cohort",
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
    alpha: float = DEFAULT_ALPHA,
    design: ClusterDesign | None = None,
) -> ClusterBootstrapResult:
    """Bootstrap a pooled statistic across clusters: resample clusters (cohorts), then markets within each drawn
    cluster (`cluster_draw_counts`); every agent is scored on the same draw, so differences are paired.

    scores: one row per scored unit with the agent, market, cluster and value columns (NaN value = not scored).
    statistic: "mean" (the pooled mean of value over the agent's rows: its estimate is the plain mean over all its
    rows in every cluster) or "skill" (1 − Σ value / Σ reference over the agent's rows). The interval is the
    percentile interval at `level`; tiers follow TIER_RULE on BH-adjusted paired p-values at `alpha`. An agent
    absent from a drawn set of clusters is NaN in that draw and that draw is left out of its interval.
    design: `cluster_design(scores, ...)` when several statistics are bootstrapped from one frame (it is made here
    otherwise).
    """
    if statistic not in ("mean", "skill") or (statistic == "skill" and reference is None):
        raise ValueError("statistic must be 'mean', or 'skill' with a reference column")
    if n_boot < 1 or not 0 < level < 1 or not 0 < alpha < 1:
        raise ValueError("need n_boot >= 1, 0 < level < 1 and 0 < alpha < 1")
    needed = [agent, market, cluster, value] + ([reference] if reference else [])
    missing = [c for c in needed if c not in scores.columns]
    if missing:
        raise ValueError(f"scores frame lacks column(s) {missing}")
    design = design if design is not None else cluster_design(scores, agent=agent, market=market, cluster=cluster)
    if design.agent.size != len(scores):
        raise ValueError("the cluster design was made from another frame")
    labels = design.agents
    vals = pd.to_numeric(scores[value], errors="raise").to_numpy(dtype=float)
    keep = np.isfinite(vals)
    ref = None
    if statistic == "skill":
        ref = pd.to_numeric(scores[reference], errors="raise").to_numpy(dtype=float)
        keep &= np.isfinite(ref)
    vals = vals[keep]
    n_agents = len(labels)
    a_code = design.agent[keep]
    present, m_code = np.unique(design.key[keep], return_inverse=True)  # the markets scored, in key order
    m_code = m_code.astype(np.int64, copy=False)
    n_markets = present.size
    of_market = design.cluster_of_key[present]
    firsts = np.flatnonzero(np.r_[True, of_market[1:] != of_market[:-1]]) if n_markets else np.zeros(0, np.int64)
    sizes = np.diff(np.r_[firsts, n_markets])  # markets per cluster: a cluster's keys are consecutive
    cell = m_code * n_agents + a_code
    size = n_markets * n_agents
    num = np.bincount(cell, weights=vals, minlength=size).reshape(n_markets, n_agents)
    rows = np.bincount(cell, minlength=size).reshape(n_markets, n_agents).astype(float)
    den = (np.bincount(cell, weights=ref[keep], minlength=size).reshape(n_markets, n_agents)  # type: ignore[index]
           if ref is not None else rows)
    estimate = _statistic(num.sum(axis=0), den.sum(axis=0), rows.sum(axis=0), statistic)
    draws = np.full((n_boot, n_agents), np.nan)
    if n_markets and n_agents:
        counts = cluster_draw_counts(sizes, n_boot, seed)
        draws = _statistic(counts @ num, counts @ den, counts @ rows, statistic)
    used, lo, hi, se = _percentile_intervals(draws, level)
    p_value, p_adj = _pairwise_adjusted(draws)
    tiers = significance_tiers(estimate, p_adj, higher_is_better, alpha)
    row_cluster = of_market[m_code]
    named = row_cluster >= 0  # (a missing cluster value is resampled as a cluster but, as ever, not counted)
    seats = np.unique(row_cluster[named] * max(n_agents, 1) + a_code[named])  # (cluster, agent) pairs
    n_clusters = np.bincount(seats % max(n_agents, 1), minlength=n_agents).astype(np.int64)
    loss = -estimate if higher_is_better else estimate
    order = np.lexsort((np.arange(n_agents), np.where(np.isfinite(loss), loss, np.inf)))
    table = pd.DataFrame({
        "agent": labels.to_numpy(), "n": rows.sum(axis=0).astype(np.int64), "n_clusters": n_clusters,
        "estimate": estimate, "se": se, "ci_low": lo, "ci_high": hi, "draws_used": used.astype(np.int64),
        "tier": tiers,
    }).iloc[order].reset_index(drop=True)
    names = labels.rename("agent")
    return ClusterBootstrapResult(table, pd.DataFrame(p_adj, index=names, columns=names),
                                  pd.DataFrame(draws, columns=names))


__all__ = [
    "BET_METRICS",
    "ClusterBootstrapResult",
    "ClusterDesign",
    "cluster_bootstrap",
    "cluster_design",
    "cluster_draw_counts",
    "BootstrapResult",
    "bootstrap_bet_metrics",
    "DEFAULT_MIN_RESOLVED",
    "STATISTICS",
    "TABLE_COLUMNS",
    "benjamini_hochberg",
    "draw_counts",
    "draw_indices",
    "first_probabilities",
    "pairwise_p_values",
    "paired_bootstrap",
    "significance_tiers",
]
