"""Skill by horizon and by topic: Brier − market (the boards' `brier_minus_market`) broken down by how far a
question's resolution lay from its decision and by its market's category, per seat and per model (pure: numpy,
pandas and the other scoring modules; no store, no clock).

The unit of evidence is the market (`scoring.evidence`): within a group, one observation per (cohort, seat,
market) — the mean over the market's rounds in that group of (Brier − the market price's Brier) — and the value
is the mean of those observations, with a t interval clustered by market (`evidence.cluster_t_test`'s, for every
group at once: a market
asked by several cohorts is one piece of evidence). A market's rounds may fall in two horizon buckets (its first
round 40 days before resolution, its last 25): it is then one observation in each. A category is the market's,
so a market is in one category.

Horizon: days = (resolution time − decision time) / 86 400 s, a fraction of a day, bucketed as
≤ 7, (7, 30], (30, 90] and > 90 days (labelled "≤7 d", "8–30 d", "31–90 d", ">90 d").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from scipy import stats as sps

from arena.scoring.evidence import DEFAULT_LEVEL, market_rows

HORIZON_EDGES = (7.0, 30.0, 90.0)  # days: a bucket holds (previous edge, edge]
HORIZON_BUCKETS = ("≤7 d", "8–30 d", "31–90 d", ">90 d")
HORIZON_RULE = ("days from the round's decision to the market's resolution, bucketed ≤ 7, (7, 30], (30, 90], > 90 "
                "(a fraction of a day counts: 7.5 days is in 8–30)")
BREAKDOWN_COLUMNS = ("agent", "group", "n_markets", "n_forecasts", "brier_minus_market", "brier_minus_market_lo",
                     "brier_minus_market_hi")
UNCATEGORIZED = "uncategorized"  # the name of a market's empty category, in tables and for --category


def category_name(category: Any) -> str:
    """The shown category of a market: its own, or UNCATEGORIZED when empty or missing."""
    text = "" if category is None or (isinstance(category, float) and np.isnan(category)) else str(category).strip()
    return text or UNCATEGORIZED


def horizon_days(decided_at: Any, resolved_at: Any) -> np.ndarray:
    """(resolved_at − decided_at) in days (float; NaN where either is missing). Times: aware or naive UTC."""
    d, r = (pd.to_datetime(t if isinstance(t, pd.Series) else pd.Series(t, dtype=object), utc=True)
            for t in (decided_at, resolved_at))  # (a column of times already typed is not parsed again)
    return ((r - d).dt.total_seconds() / 86_400.0).to_numpy(dtype=float)


def horizon_bucket(days: Any) -> np.ndarray:
    """The HORIZON_BUCKETS label of each number of days (object array; None where NaN). A negative number (a
    resolution recorded before the decision: a venue's late report) goes in the first bucket."""
    d = np.asarray(days, dtype=float)
    at = np.searchsorted(np.asarray(HORIZON_EDGES), d, side="left")  # d == 7 → 0: "≤7 d"
    labels = np.array(HORIZON_BUCKETS, dtype=object)[np.minimum(at, len(HORIZON_BUCKETS) - 1)]
    return np.where(np.isfinite(d), labels, None)


def with_groups(scored: pd.DataFrame) -> pd.DataFrame:
    """Scored forecast rows with `horizon` (HORIZON_BUCKETS label) and `topic` (`category_name`) columns, from
    their decided_at, resolved_at and category columns."""
    codes, categories = pd.factorize(scored["category"])  # (each distinct category named once; missing: −1)
    names = np.array([category_name(c) for c in categories] + [UNCATEGORIZED], dtype=object)
    return scored.assign(horizon=horizon_bucket(horizon_days(scored["decided_at"], scored["resolved_at"])),
                         topic=list(names[codes]))


def skill_breakdown(scored: pd.DataFrame, by: str, *, within: Sequence[str] = ("cohort",),
                    level: float = DEFAULT_LEVEL, order: Sequence[str] | None = None) -> pd.DataFrame:
    """Brier − market per (within…, agent, group of `by`), in BREAKDOWN_COLUMNS (within's columns first).

    scored: `headline.score_forecasts` rows (agent, market_id, brier, diff_market and the `by` column; cohort for
    `within`). within: ("cohort",) gives one row per seat of each cohort; () pools a model's cohorts, each
    (cohort, market) one observation, markets as clusters. n_markets: the observations; n_forecasts: the resolved
    questions behind them. lo/hi: the clustered t interval at `level` (NaN below two markets). order: the groups'
    order (default sorted); rows come by within, agent, then group."""
    within = [w for w in within if w in scored.columns]
    cols = [*within, *BREAKDOWN_COLUMNS]
    if not len(scored):
        return pd.DataFrame(columns=cols)
    ok = scored["brier"].notna() & scored["diff_market"].notna() & scored[by].notna()
    keep = list(dict.fromkeys([*within, *(["cohort"] if "cohort" in scored.columns else []), "agent", "market_id",
                               by, "diff_market"]))
    rows = scored.loc[ok, keep]
    if "cohort" not in rows.columns:
        rows = rows.assign(cohort="")
    obs = market_rows(rows, ("diff_market",), keys=("cohort", by))
    groups = list(order) if order is not None else sorted(pd.unique(obs[by]).tolist())
    rank = {g: i for i, g in enumerate(groups)}
    key = [*within, "agent", by]
    # `evidence.cluster_t_test` for every group at once: per group the clusters' (markets') sums D and counts n
    clusters = obs.groupby([*key, "market_id"], sort=True).agg(d=("diff_market", "sum"), n=("diff_market", "size"))
    per = obs.groupby(key, sort=True).agg(n_markets=("diff_market", "size"), n_forecasts=("n_rounds", "sum"),
                                          brier_minus_market=("diff_market", "mean"))
    est = per["brier_minus_market"].reindex(clusters.index.droplevel("market_id")).to_numpy()
    resid = clusters.assign(r=(clusters["d"].to_numpy() - est * clusters["n"].to_numpy()) ** 2)
    by_group = resid.groupby(level=list(range(len(key))), sort=True).agg(g=("n", "size"), ss=("r", "sum"))
    g = by_group["g"].to_numpy(dtype=float)
    n = per["n_markets"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt(np.maximum(g / (g - 1) * by_group["ss"].to_numpy() / n ** 2, 0.0))
        half = np.where(g >= 2, sps.t.ppf(0.5 + level / 2.0, np.maximum(g - 1, 1)) * se, np.nan)
    m = per["brier_minus_market"].to_numpy(dtype=float)
    half = np.where(se <= 1e-15 * np.maximum(1.0, np.abs(m)), np.where(g >= 2, 0.0, np.nan), half)
    table = per.reset_index().rename(columns={by: "group"}).assign(
        brier_minus_market_lo=m - half, brier_minus_market_hi=m + half)[cols]
    table["n_markets"] = table["n_markets"].astype(np.int64)
    table["n_forecasts"] = table["n_forecasts"].astype(np.int64)
    if not len(table):
        return table
    table["_g"] = table["group"].map(lambda g: rank.get(g, len(rank)))
    return table.sort_values([*within, "agent", "_g"], kind="stable").drop(columns="_g").reset_index(drop=True)


def skill_by_horizon(scored: pd.DataFrame, **options: Any) -> pd.DataFrame:
    """`skill_breakdown` by HORIZON_BUCKETS (rows need decided_at and resolved_at, or a `horizon` column)."""
    rows = scored if "horizon" in scored.columns else with_groups(scored)
    return skill_breakdown(rows, "horizon", order=HORIZON_BUCKETS, **options)


def skill_by_category(scored: pd.DataFrame, **options: Any) -> pd.DataFrame:
    """`skill_breakdown` by the market's category (rows need a category column, or a `topic` column)."""
    rows = scored if "topic" in scored.columns else with_groups(scored)
    return skill_breakdown(rows, "topic", **options)


def breakdown_records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """A breakdown as JSON rows: NaN as None, counts as int."""
    out = []
    for rec in table.to_dict("records"):
        row = {}
        for k, v in rec.items():
            if isinstance(v, (float, np.floating)):
                v = None if not np.isfinite(v) else float(v)
            elif isinstance(v, np.integer):
                v = int(v)
            row[k] = v
        out.append(row)
    return out


__all__ = ["BREAKDOWN_COLUMNS", "UNCATEGORIZED", "category_name", "HORIZON_BUCKETS", "HORIZON_EDGES", "HORIZON_RULE", "breakdown_records",
           "horizon_bucket", "horizon_days", "skill_breakdown", "skill_by_category", "skill_by_horizon",
           "with_groups"]
