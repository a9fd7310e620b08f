"""Skill by horizon and by topic: Brier − market (the boards' `brier_minus_market`) broken down by how far a
question's resolution lay from its decision and by its market's category, per seat and per model (pure: numpy,
pandas and the other scoring modules; no store, no clock).

The unit of evidence is the market (`scoring.evidence`): within a group, one observation per (cohort, seat,
market) — the mean over the market's rounds in that group of (Brier − the market price's Brier) — and the value
is the mean of those observations, with a t interval clustered by market (`evidence.cluster_t_test`: a market
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

from arena.scoring.evidence import DEFAULT_LEVEL, cluster_t_test, market_rows
from arena.scoring.question_filter import category_name

HORIZON_EDGES = (7.0, 30.0, 90.0)  # days: a bucket holds (previous edge, edge]
HORIZON_BUCKETS = ("≤7 d", "8–30 d", "31–90 d", ">90 d")
HORIZON_RULE = ("days from the round's decision to the market's resolution, bucketed ≤ 7, (7, 30], (30, 90], > 90 "
                "(a fraction of a day counts: 7.5 days is in 8–30)")
BREAKDOWN_COLUMNS = ("agent", "group", "n_markets", "n_forecasts", "brier_minus_market", "brier_minus_market_lo",
                     "brier_minus_market_hi")


def horizon_days(decided_at: Any, resolved_at: Any) -> np.ndarray:
    """(resolved_at − decided_at) in days (float; NaN where either is missing). Times: aware or naive UTC."""
    d = pd.to_datetime(pd.Series(decided_at, dtype=object), utc=True)
    r = pd.to_datetime(pd.Series(resolved_at, dtype=object), utc=True)
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
    return scored.assign(horizon=horizon_bucket(horizon_days(scored["decided_at"], scored["resolved_at"])),
                         topic=[category_name(c) for c in scored["category"]])


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
    out = []
    for key, part in obs.groupby([*within, "agent", by], sort=False):
        key = key if isinstance(key, tuple) else (key,)
        t = cluster_t_test(part["diff_market"].to_numpy(dtype=float), part["market_id"].to_numpy(), level)
        out.append({**dict(zip(within, key[:len(within)])), "agent": key[len(within)], "group": key[-1],
                    "n_markets": int(len(part)), "n_forecasts": int(part["n_rounds"].sum()),
                    "brier_minus_market": t.estimate, "brier_minus_market_lo": t.ci_low,
                    "brier_minus_market_hi": t.ci_high})
    table = pd.DataFrame(out, columns=cols)
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


__all__ = ["BREAKDOWN_COLUMNS", "HORIZON_BUCKETS", "HORIZON_EDGES", "HORIZON_RULE", "breakdown_records",
           "horizon_bucket", "horizon_days", "skill_breakdown", "skill_by_category", "skill_by_horizon",
           "with_groups"]
