"""The boards: one row per agent of a cohort, and one per model across cohorts, with the headline (forecast Brier
on the forecast set, with its interval and tier), the reference forecasters, skill against the market, the other
proper scores and the difficulty-adjusted scores on the same questions, seed 001's bet-size metrics kept as named
columns, the Kelly-implied Brier, coherence, money and the crowd proxy; ranked by a configurable registered metric
with ties shown as ties.

Pure: takes frames already read from the store (see `cohort_board`), returns DataFrames; imports only numpy,
pandas and the other scoring modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from arena.scoring.beyond_market import beyond_market_table
from arena.scoring.brier import RANDOM_BRIER, brier_band
from arena.scoring.cells import score_cells
from arena.scoring.decision_value import cohort_decision_values, pooled_decision_values, with_decision_returns
from arena.scoring.coherence import contradicts
from arena.scoring.difficulty import difficulty_adjusted_brier
from arena.scoring.evidence import equal_to_reference, market_rows, paired_tiers
from arena.scoring.headline import (REFERENCE_AGENTS, REFERENCE_KIND, bss_vs_market_guarded, forecast_summary,
                                    score_forecasts)
from arena.scoring.irt import irt_skill
from arena.scoring.leaderboard import bet_table, crowd_proxy, per_bet_scores, with_money
from arena.scoring.pnl import return_pct as return_pct_of
from arena.scoring.proper import log_loss, spherical
from arena.scoring.provisional import is_provisional
from arena.scoring.registry import METRICS
from arena.scoring.stats import (DEFAULT_ALPHA, DEFAULT_LEVEL, DEFAULT_N_BOOT, cluster_bootstrap, cluster_design,
                                 paired_bootstrap)

# Board column → the registered metric it shows; the rank key is one of these columns.
RANK_METRICS: Mapping[str, str] = {
    "forecast_brier": "forecast_brier",
    "brier_minus_market": "brier_minus_market",
    "bss_vs_market": "bss_vs_market",
    "implied_brier": "brier",
    "kelly_brier": "brier_kelly",
    "stated_brier": "brier_stated",
    "bss_vs_0_25": "bss_vs_0_25",
    "pnl": "pnl",
    "return_pct": "return_pct",
    "win_rate": "win_rate",
    "crowd_proxy": "crowd_proxy",
    "coherence_gap": "coherence_gap",
    "contradicting_bets": "contradicting_bets",
    # proper scores and difficulty-adjusted scores on the forecast set's questions
    "log_score": "log_score",
    "spherical_score": "spherical_score",
    "brier_adjusted": "brier_adjusted",
    "irt_skill": "irt_skill",
    # decision value and risk: ranked by, they order the rows and get no tier (null)
    "decision_value": "decision_value",
    "pnl_at_bid": "pnl_at_bid",
    "sharpe": "sharpe",
    "max_drawdown": "max_drawdown",
}
RANK_CHOICES = tuple(RANK_METRICS)
RISK_COLUMNS = ("decision_value", "decision_value_lo", "decision_value_hi", "sharpe", "max_drawdown", "risk_note",
                "pnl_at_bid")
DEFAULT_RANK_BY = "forecast_brier"
KINDS = ("llm", "baseline", "reference")

BOARD_COLUMNS = (
    "agent", "kind", "rank", "rank_label", "tier", "provisional", "same_as",
    "forecast_brier", "forecast_brier_lo", "forecast_brier_hi", "n_forecasts", "n_markets", "n_asked", "n_answered",
    "brier_minus_market", "brier_minus_market_lo", "brier_minus_market_hi", "bss_vs_market", "bss_vs_market_note",
    "implied_brier", "implied_brier_band", "bss_vs_0_25", "kelly_brier", "stated_brier", "n_bets", "n_resolved_bets",
    "pnl", "return_pct", "win_rate", "crowd_proxy", "coherence_gap", "contradicting_bets",
    *("log_score", "spherical_score", "brier_adjusted", "irt_skill"),
    # decision value and risk (`decision_value`, `risk`): the fixed rule's return, the daily marks' Sharpe and
    # drawdown, the P/L marked at the bid
    *RISK_COLUMNS,
    # information beyond the market (`scoring.beyond_market`): an encompassing test and the price-copy index
    *("beyond_market", "beyond_market_lo", "beyond_market_hi", "beyond_market_note", "price_copy"),
)
OVERALL_COLUMNS = ("model", "n_cohorts") + BOARD_COLUMNS[1:]

# The rank key's interval and tier come from a bootstrap of these per-row values: forecast rows …
_FORECAST_BOOT: dict[str, dict[str, Any]] = {
    "forecast_brier": {"value": "brier"},
    "brier_minus_market": {"value": "diff_market"},
    "bss_vs_market": {"value": "brier", "statistic": "skill", "reference": "brier_market"},
}
# … or bet rows (`leaderboard.per_bet_scores`); other rank keys have no tier (null).
_BET_BOOT: dict[str, dict[str, Any]] = {
    "implied_brier": {"value": "brier"},
    "kelly_brier": {"value": "brier_kelly"},
    "stated_brier": {"value": "brier_stated"},
    "bss_vs_0_25": {"value": "brier", "statistic": "skill", "reference": "_quarter"},
}
# … or the forecast rows' other proper scores (means over questions, so the same paired bootstrap applies);
# brier_adjusted and irt_skill are fitted over every forecaster at once: no bootstrap, their tier is null.
_PROPER_BOOT: dict[str, dict[str, Any]] = {
    "log_score": {"value": "log_loss"},
    "spherical_score": {"value": "spherical"},
}
FITTED = ("brier_adjusted", "irt_skill")
# The forecast-set rank keys' tiers: an exact paired test on this per-market value (`evidence.paired_tiers`; a
# difference of Brier − market between two rows is their Brier difference, and bss_vs_market orders rows as the
# Brier does on the markets both scored), not the bootstrap, so they do not move with the seed or the draws.
_TESTED: dict[str, tuple[str, bool]] = {
    "forecast_brier": ("brier", False),
    "brier_minus_market": ("brier", False),
    "bss_vs_market": ("brier", False),
    "log_score": ("log_loss", False),
    "spherical_score": ("spherical", True),
}
_MARKET_VALUES = ("brier", "brier_market", "diff_market", "log_loss", "spherical")
_TIE_RTOL = 1e-12


def check_rank_by(rank_by: str) -> str:
    """`rank_by` when it is a board column backed by a registered metric; ValueError listing the choices else."""
    if rank_by not in RANK_METRICS or RANK_METRICS[rank_by] not in METRICS:
        raise ValueError(f"unknown rank key {rank_by!r}; choose from {', '.join(RANK_CHOICES)}")
    return rank_by


def higher_is_better(rank_by: str) -> bool:
    return METRICS[RANK_METRICS[check_rank_by(rank_by)]].higher_is_better


def rank_with_ties(values: Any, higher_is_better: bool) -> tuple[np.ndarray, list[str | None]]:
    """Competition ranks (1 = best; equal values share the better rank, the next rank skips) and labels where a
    shared rank reads "1="; NaN values get no rank (NaN, None)."""
    v = np.asarray(values, dtype=float)
    loss = -v if higher_is_better else v
    ok = np.isfinite(loss)
    ranks = np.full(v.shape, np.nan)
    labels: list[str | None] = [None] * v.size
    for i in np.flatnonzero(ok):
        tol = _TIE_RTOL * np.maximum(1.0, np.maximum(np.abs(loss[ok]), abs(loss[i])))
        same = np.abs(loss[ok] - loss[i]) <= tol
        better = (loss[ok] < loss[i]) & ~same
        ranks[i] = 1 + int(better.sum())
        labels[i] = f"{int(ranks[i])}=" if int(same.sum()) > 1 else str(int(ranks[i]))
    return ranks, labels


def _empty_forecasts() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=float if c in ("probability", "outcome_yes", "market_price") else object)
                         for c in ("agent", "market_id", "question", "probability", "outcome_yes", "market_price")})


def _with_proper(scored: pd.DataFrame) -> pd.DataFrame:
    """Scored forecast rows plus per-row log_loss (nats) and spherical (0..1), NaN unless resolved."""
    p = scored["probability"].to_numpy(dtype=float)
    o = scored["outcome_yes"].to_numpy(dtype=float)
    return scored.assign(log_loss=log_loss(p, o), spherical=spherical(p, o))


def _proper_means(markets: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Means over the market-level observations (`evidence.market_rows`) of log loss and spherical score."""
    return markets.groupby(keys, sort=True).agg(log_score=("log_loss", "mean"),
                                                 spherical_score=("spherical", "mean")).reset_index()


def _fitted(resolved: pd.DataFrame, question: str | list[str] = "question") -> pd.DataFrame:
    """agent, brier_adjusted and irt_skill, fitted on the resolved forecast rows' Brier (references included:
    they answer every question, which links the design); `question` may name several columns (cohort, question)."""
    cells = score_cells(resolved, agent="agent", question=question, value="brier")
    adj = difficulty_adjusted_brier(cells)[["agent", "brier_adjusted"]]
    return adj.merge(irt_skill(cells)[["agent", "irt_skill"]], on="agent", how="outer")


def _interval(result: Any, name: str) -> pd.DataFrame:
    t = result.table
    return pd.DataFrame({"agent": t["agent"], name + "_lo": t["ci_low"], name + "_hi": t["ci_high"],
                         "_tier_" + name: t["tier"]})


def _kind_of(agent: str, kinds: Mapping[str, str], scored_kind: Any) -> str:
    if scored_kind == REFERENCE_KIND:
        return REFERENCE_KIND
    k = kinds.get(agent, "baseline")
    return k if k in KINDS else "baseline"


def _finish(table: pd.DataFrame, key: str, rank_by: str, tier: pd.Series | None, columns: tuple[str, ...]
            ) -> pd.DataFrame:
    hib = higher_is_better(rank_by)
    for c in columns:
        if c not in table.columns:
            table[c] = np.nan
    ranks, labels = rank_with_ties(table[rank_by].to_numpy(dtype=float), hib)
    table["rank"] = ranks
    table["rank_label"] = labels
    table["provisional"] = is_provisional(table["n_forecasts"].to_numpy(dtype=float))
    # provisional rows get no tier, whatever the rank key
    table["tier"] = np.where(table["provisional"], np.nan,
                             tier.to_numpy(dtype=float) if tier is not None else np.nan)
    if "same_as" in columns:
        table["same_as"] = table["same_as"].astype(object).where(table["same_as"].notna(), None)
        table["n_markets"] = table["n_markets"].fillna(0).astype(np.int64)
    table["bss_vs_market_note"] = table["bss_vs_market_note"].astype(object).fillna(
        "no resolved forecast with a market price")
    table["implied_brier_band"] = brier_band(table["implied_brier"].to_numpy(dtype=float))
    table["_ref"] = table["kind"] == REFERENCE_KIND
    table = table.sort_values(["rank", "_ref", key], na_position="last", kind="stable")
    return table[list(columns)].reset_index(drop=True)


def _decision_scored(forecasts: pd.DataFrame) -> pd.DataFrame:
    """Scored forecast rows (`headline.score_forecasts`) with the fixed rule's `decision_return`: a seat's row at
    the price it saw, a reference row (added by the scoring) at the question's price."""
    scored = score_forecasts(with_decision_returns(forecasts))
    return with_decision_returns(scored, where=(scored["kind"] == REFERENCE_KIND).to_numpy())


def _money_risk(portfolios: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """keys, pnl_at_bid (USD), sharpe, max_drawdown and risk_note of each portfolio row (NaN/None where the
    portfolios frame does not carry them)."""
    out = portfolios[keys].copy()
    if "value_at_bid" in portfolios.columns:
        out["pnl_at_bid"] = (portfolios["value_at_bid"].astype(float)
                             - portfolios["starting_balance"].astype(float)).to_numpy()
    for c in ("sharpe", "max_drawdown"):
        if c in portfolios.columns:
            out[c] = portfolios[c].astype(float).to_numpy()
    if "risk_note" in portfolios.columns:
        out["risk_note"] = portfolios["risk_note"].astype(object).where(portfolios["risk_note"].notna(), None)
    return out


def _coherence(scored_bets: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    if not len(scored_bets):
        return pd.DataFrame(columns=keys + ["coherence_gap", "contradicting_bets"])
    stated = (scored_bets["stated_probability"].to_numpy(dtype=float) if "stated_probability" in scored_bets
              else np.full(len(scored_bets), np.nan))
    price = (scored_bets["price_yes_at_bet"].to_numpy(dtype=float) if "price_yes_at_bet" in scored_bets
             else np.full(len(scored_bets), np.nan))
    frame = scored_bets.assign(_gap=np.abs(stated - scored_bets["p_kelly"].to_numpy(dtype=float)),
                               _contra=contradicts(scored_bets["side"].to_numpy(), stated, price))
    return frame.groupby(keys, sort=True).agg(coherence_gap=("_gap", "mean"),
                                              contradicting_bets=("_contra", "mean")).reset_index()


def cohort_boards(
    forecasts: pd.DataFrame | None,
    bets: pd.DataFrame,
    portfolios: pd.DataFrame,
    *,
    kinds: Mapping[str, str] | None = None,
    rank_by: str = DEFAULT_RANK_BY,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
    alpha: float = DEFAULT_ALPHA,
) -> dict[Any, pd.DataFrame]:
    """Every cohort's board (cohort → its `cohort_board`), from frames that carry a `cohort` column, listed in
    order of first appearance in `portfolios`, then `forecasts`: `finish_cohort_board` of its `cohort_part`.

    Each cohort is computed from its own rows alone, so its board is the same to the last bit whichever other
    cohorts share the call: pandas' grouped means are not (their summation depends on the frame's size, a last
    digit apart), and the board cache computes the cohorts it misses in batches of any make-up.
    """
    check_rank_by(rank_by)
    options = dict(rank_by=rank_by, n_boot=n_boot, seed=seed, level=level, alpha=alpha)
    out = {}
    for cohort, (f, b, p) in split_by_cohort(forecasts, bets, portfolios).items():
        out[cohort] = finish_cohort_board(cohort_part(f, b, **options), p, kinds=kinds, rank_by=rank_by)
    return out


def split_by_cohort(forecasts: pd.DataFrame | None, bets: pd.DataFrame, portfolios: pd.DataFrame
                    ) -> dict[Any, tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]]:
    """cohort → its rows of the three frames (each in frame order, empty where it has none), for every cohort of
    `portfolios`, then `forecasts`, in order of first appearance."""
    f = forecasts if forecasts is not None and len(forecasts) else _empty_forecasts().assign(cohort=[])
    order = list(pd.unique(pd.concat([portfolios["cohort"], f["cohort"]], ignore_index=True)))
    frames = (f, bets, portfolios)
    parts = [dict(iter(frame.groupby("cohort", sort=False))) if len(frame) else {} for frame in frames]
    return {c: tuple(p.get(c, frame.iloc[:0]) for p, frame in zip(parts, frames))  # type: ignore[misc]
            for c in order}


@dataclass(frozen=True)
class CohortPart:
    """What one cohort's board takes from its forecast set and bets alone (`cohort_part`): everything but the
    money, which `finish_cohort_board` joins from the portfolios. A mark (new portfolio values, nothing else)
    leaves it as it was, with its bootstraps and fits."""

    summary: pd.DataFrame  # `headline.forecast_summary`: cohort, agent, the headline, kind (references' too)
    bets: pd.DataFrame  # `leaderboard.bet_table`: cohort, agent, the seed-001 bet columns
    proxy: pd.DataFrame | None  # `leaderboard.crowd_proxy`: cohort, agent, crowd_proxy (None: no forecasts)
    coherence: pd.DataFrame  # cohort, agent, coherence_gap, contradicting_bets
    values: pd.DataFrame  # `decision_value.cohort_decision_values`
    per: pd.DataFrame | None  # cohort, agent, intervals, the rank key's tier, proper means, fits, beyond-market
    same: pd.DataFrame  # cohort, agent, same_as: the reference row whose forecasts the row equals


def cohort_part(
    forecasts: pd.DataFrame | None,
    bets: pd.DataFrame,
    *,
    rank_by: str = DEFAULT_RANK_BY,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
    alpha: float = DEFAULT_ALPHA,
) -> CohortPart:
    """One cohort's `CohortPart` from its forecast-set rows and bets (with a `cohort` column): its per-agent
    columns, and its own paired bootstrap (its markets resampled, every agent and reference on the same draws)."""
    check_rank_by(rank_by)
    keys = ["cohort", "agent"]
    opts = dict(n_boot=n_boot, seed=seed, level=level, alpha=alpha, stratum=None, market="market_id")
    f = forecasts if forecasts is not None and len(forecasts) else _empty_forecasts().assign(cohort=[])
    scored = _with_proper(_decision_scored(f))
    summary = forecast_summary(scored)
    proxy = crowd_proxy(f[["cohort", "agent", "question", "probability"]]) if len(f) else None
    scored_bets = per_bet_scores(bets) if len(bets) else bets
    coherence = _coherence(scored_bets, keys)
    values = cohort_decision_values(scored, n_boot=n_boot, seed=seed, level=level)

    extra = []  # per cohort: intervals of the headline and of brier_minus_market, and the rank key's tier
    resolved = scored[scored["brier"].notna()]
    # the unit of evidence: one observation per (cohort, agent, market), its rounds averaged (`scoring.evidence`)
    markets = market_rows(resolved, _MARKET_VALUES, keys=("cohort",))
    same = {c: equal_to_reference(g, REFERENCE_AGENTS) for c, g in scored.groupby("cohort", sort=False)}
    provisional = {(c, a): bool(is_provisional(n)) for c, a, n in zip(summary["cohort"], summary["agent"],
                                                                      summary["n_forecasts"])}
    by_cohort = dict(iter(resolved.groupby("cohort", sort=False)))
    resolved_bets = scored_bets[scored_bets["resolved"]].assign(_quarter=RANDOM_BRIER) if len(scored_bets) else None
    for cohort, group in markets.groupby("cohort", sort=False):
        part = pd.DataFrame({"agent": pd.unique(group["agent"])})
        shown: dict[str, pd.DataFrame] = {}
        for name, spec in _FORECAST_BOOT.items():
            if name == "bss_vs_market" and name != rank_by:
                continue
            res = paired_bootstrap(group, metric=RANK_METRICS[name], **spec, **opts)
            shown[name] = res.table[["agent", "ci_low", "ci_high"]]
            iv = _interval(res, name).drop(columns=["_tier_" + name])
            if name == "bss_vs_market":
                iv = iv.drop(columns=[name + "_lo", name + "_hi"])
            part = part.merge(iv, on="agent", how="left")
        if rank_by in _TESTED:
            value, hib = _TESTED[rank_by]
            eligible = [a for a in part["agent"] if not provisional.get((cohort, a), True)]
            tiers = paired_tiers(group, value=value, unit=("market_id",), cluster="market_id", higher_is_better=hib,
                                 alpha=alpha, eligible=eligible, same_as=same.get(cohort),
                                 intervals=shown.get(rank_by) if rank_by in ("forecast_brier", "brier_minus_market")
                                 else None)
            part = part.merge(tiers.series().rename("_tier_" + rank_by).reset_index(), on="agent", how="left")
        part = part.merge(_proper_means(group, ["agent"]), on="agent", how="left")
        part = part.merge(_fitted(by_cohort[cohort]), on="agent", how="left")
        extra.append(part.assign(cohort=cohort))
    for cohort, group in scored.groupby("cohort", sort=False):  # every seat of the cohort, on the same draws
        extra.append(beyond_market_table(group, n_boot=n_boot, seed=seed, level=level).assign(cohort=cohort))
    if rank_by in _BET_BOOT and resolved_bets is not None:
        for cohort, group in resolved_bets.groupby("cohort", sort=False):
            res = paired_bootstrap(group, metric=RANK_METRICS[rank_by], **_BET_BOOT[rank_by], **opts)
            extra.append(pd.DataFrame({"cohort": cohort, "agent": res.table["agent"],
                                       "_tier_" + rank_by: res.table["tier"]}))
    per = pd.concat(extra, ignore_index=True).groupby(keys, sort=False).first().reset_index() if extra else None
    same_rows = pd.DataFrame([(c, a, r) for c, of in same.items() for a, r in of.items()],
                             columns=["cohort", "agent", "same_as"], dtype=object)
    return CohortPart(summary, bet_table(bets), proxy, coherence, values, per, same_rows)


def finish_cohort_board(part: CohortPart, portfolios: pd.DataFrame, *, kinds: Mapping[str, str] | None = None,
                        rank_by: str = DEFAULT_RANK_BY) -> pd.DataFrame:
    """One cohort's board from its `CohortPart` and its portfolios (with a `cohort` column): the money joined,
    the kinds named, the rows ranked (`cohort_board`)."""
    kinds = kinds or {}
    keys = ["cohort", "agent"]
    summary = part.summary
    seed001 = with_money(part.bets, portfolios, part.proxy)
    seed001 = seed001.rename(columns={
        "brier": "implied_brier", "brier_kelly": "kelly_brier", "brier_stated": "stated_brier",
        "n_resolved": "n_resolved_bets"}).drop(columns=["brier_band", "return_band", "bss_vs_market"])
    table = summary.drop(columns=["kind"]).merge(seed001, on=keys, how="outer").merge(
        summary[keys + ["kind"]], on=keys, how="left")
    table = table.merge(part.coherence, on=keys, how="left")
    table = table.merge(part.values, on=keys, how="left")
    if len(portfolios) and "cohort" in portfolios.columns:
        table = table.merge(_money_risk(portfolios, keys), on=keys, how="left")
    if part.per is not None:
        table = table.merge(part.per, on=keys, how="left")
    table["kind"] = [_kind_of(a, kinds, k) for a, k in zip(table["agent"], table["kind"])]
    for c in ("n_forecasts", "n_asked", "n_answered"):
        table[c] = table[c].fillna(0).astype(np.int64)
    same = {(c, a): r for c, a, r in part.same.itertuples(index=False)}
    table["same_as"] = [same.get((c, a)) for c, a in zip(table["cohort"], table["agent"])]
    tier_col = "_tier_" + rank_by
    tier = table[tier_col] if tier_col in table.columns else None
    return _finish(table.drop(columns=["cohort"]).reset_index(drop=True), "agent", rank_by,
                   tier.reset_index(drop=True) if tier is not None else None, BOARD_COLUMNS)


def cohort_board(
    forecasts: pd.DataFrame | None,
    bets: pd.DataFrame,
    portfolios: pd.DataFrame,
    **options: Any,
) -> pd.DataFrame:
    """One cohort's board: a row per agent and per reference forecaster, in BOARD_COLUMNS, best first.

    forecasts: the cohort's forecast-set rows (see `headline.score_forecasts`: agent, market_id, question,
    probability, outcome_yes, market_price). bets: `leaderboard.per_bet_scores` input. portfolios: agent,
    starting_balance, total_value (USD). options: kinds (agent → "llm" or "baseline"; references are
    "reference"), rank_by, n_boot, seed, level, alpha.

    forecast_brier_lo/hi and brier_minus_market_lo/hi are paired-bootstrap percentile intervals (markets
    resampled, every agent and reference on the same draws); tier is the significance tier of the rank key
    (null for keys without a bootstrap: pnl, return_pct, win_rate, crowd_proxy, coherence_gap, contradicting_bets,
    the fitted brier_adjusted and irt_skill, and decision_value, pnl_at_bid, sharpe and max_drawdown). decision_value
    and its interval are `decision_value.cohort_decision_values`; pnl_at_bid, sharpe, max_drawdown and risk_note
    come from the portfolios frame's value_at_bid and risk columns where it has them (NaN/None otherwise).
    log_score and spherical_score are means over the resolved questions; brier_adjusted (`difficulty`) and
    irt_skill (`irt`) are fitted over every row of the cohort, the references included. beyond_market (with its
    _lo/_hi interval, markets resampled, and beyond_market_note) and price_copy come from `beyond_market` on each
    row's answered forecasts. Values are NaN (null) where nothing is scored — never 0.
    """
    one = "cohort"

    def tagged(frame: pd.DataFrame | None) -> pd.DataFrame | None:
        return None if frame is None else frame.assign(cohort=one)

    boards = cohort_boards(tagged(forecasts), tagged(bets), tagged(portfolios), **options)  # type: ignore[arg-type]
    return boards.get(one, _finish(pd.DataFrame({"agent": [], "kind": [], "n_forecasts": [], "n_asked": [],
                                                 "n_answered": [], "forecast_brier": [],
                                                 "bss_vs_market_note": [], "implied_brier": []}),
                                   "agent", options.get("rank_by", DEFAULT_RANK_BY), None, BOARD_COLUMNS))


@dataclass(frozen=True)
class ForecastPart:
    """What the overall board takes from the forecast frame alone (`overall_forecast_part`): per model its
    forecast summary, proper-score means, fitted scores and bootstrap intervals; the tiers bootstrapped; the
    (model, cohort) pairs forecast; and the crowd proxy's mean over cohorts."""

    table: pd.DataFrame
    tiers: Mapping[str, pd.Series]
    pairs: pd.DataFrame  # agent, cohort of every scored forecast row
    proxy: pd.DataFrame | None  # agent, crowd_proxy (None without forecasts)


@dataclass(frozen=True)
class BetPart:
    """What the overall board takes from the bet frame alone (`overall_bet_part`): per model its bet metrics and
    coherence (None without bets), and the rank key's tier when it is a bet metric."""

    per: pd.DataFrame | None
    tier: pd.Series | None


def _overall_risk(portfolios: pd.DataFrame) -> pd.DataFrame:
    """Per model across its cohorts: pnl_at_bid the total (NaN unless every cohort's is known), sharpe and
    max_drawdown the means of the cohorts' values that are defined."""
    risk = _money_risk(portfolios, ["agent"])
    out = pd.DataFrame({"agent": pd.unique(risk["agent"])})
    g = risk.groupby("agent", sort=False)
    if "pnl_at_bid" in risk.columns:
        known = g["pnl_at_bid"].apply(lambda x: x.notna().all())
        out["pnl_at_bid"] = out["agent"].map(g["pnl_at_bid"].sum().where(known))
    for c in ("sharpe", "max_drawdown"):
        if c in risk.columns:
            out[c] = out["agent"].map(g[c].mean())
    return out


def _overall_options(rank_by: str, n_boot: int, seed: int, level: float, alpha: float) -> dict[str, Any]:
    check_rank_by(rank_by)
    return dict(n_boot=n_boot, seed=seed, level=level, alpha=alpha, market="market_id", cluster="cohort")


def overall_forecast_part(forecasts: pd.DataFrame | None, *, rank_by: str = DEFAULT_RANK_BY,
                          n_boot: int = DEFAULT_N_BOOT, seed: int = 0, level: float = DEFAULT_LEVEL,
                          alpha: float = DEFAULT_ALPHA) -> ForecastPart:
    """The overall board's forecast columns, from every cohort's forecast set (see `overall_board`)."""
    opts = _overall_options(rank_by, n_boot, seed, level, alpha)
    scored = _with_proper(_decision_scored(forecasts if forecasts is not None and len(forecasts)
                                           else _empty_forecasts()))
    if "cohort" not in scored.columns:
        scored["cohort"] = ""
    # a model's observations are its (cohort, market) pairs, each the mean over that cohort's rounds of the market
    table = forecast_summary(scored, keys=["agent"], within=["cohort"])
    table = table.merge(pooled_decision_values(scored, n_boot=n_boot, seed=seed, level=level), on="agent", how="left")
    resolved = scored[scored["brier"].notna()]
    tiers: dict[str, pd.Series] = {}
    if len(resolved):
        markets = market_rows(resolved, _MARKET_VALUES, keys=("cohort",)).assign(_all="")
        # questions are per cohort: the same market@round in two cohorts is two questions
        table = table.merge(_proper_means(markets, ["agent"]), on="agent", how="left").merge(
            _fitted(resolved, ["cohort", "question"]), on="agent", how="left")
        # Across cohorts a market is one cluster: one "cluster" holding every distinct market, so each draw
        # resamples distinct markets and every cohort's observation on a drawn market comes with it.
        design = cluster_design(markets, market="market_id", cluster="_all")
        shown: dict[str, pd.DataFrame] = {}
        for name, spec in _FORECAST_BOOT.items():
            if name != rank_by and name == "bss_vs_market":
                continue
            res = cluster_bootstrap(markets, higher_is_better=higher_is_better(name), **spec, **opts, design=design)
            shown[name] = res.table[["agent", "ci_low", "ci_high"]]
            if name != "bss_vs_market":
                table = table.merge(_interval(res, name).drop(columns=["_tier_" + name]), on="agent", how="left")
        n_of = dict(zip(table["agent"], table["n_forecasts"]))
        eligible = [a for a, n in n_of.items() if not is_provisional(n)]
        same = equal_to_reference(scored, REFERENCE_AGENTS, question=("cohort", "question"))
        table = table.assign(same_as=table["agent"].map(same))
        # the headline's tiers always (the Brier's paired differences also order brier_minus_market and, on the
        # markets both scored, bss_vs_market), and the rank key's when it is another tested forecast key
        for name in dict.fromkeys(["forecast_brier", rank_by]):
            if name not in _TESTED:
                continue
            value, hib = _TESTED[name]
            tiers[name] = paired_tiers(
                markets, value=value, unit=("cohort", "market_id"), cluster="market_id", higher_is_better=hib,
                alpha=alpha, eligible=eligible, same_as=same,
                intervals=shown.get(name) if name in ("forecast_brier", "brier_minus_market") else None,
            ).series()
    if len(scored):
        # distinct markets drawn, every cohort's rows on a drawn market with it; a cohort's market is the unit
        table = table.merge(beyond_market_table(scored, unit=("cohort", "market_id"), n_boot=n_boot, seed=seed,
                                                level=level), on="agent", how="left")
    proxy = None
    if forecasts is not None and len(forecasts):
        f = forecasts if "cohort" in forecasts.columns else forecasts.assign(cohort="")
        proxy = crowd_proxy(f[["cohort", "agent", "question", "probability"]]).groupby("agent")["crowd_proxy"].mean(
            ).reset_index()
    return ForecastPart(table, tiers, scored[["agent", "cohort"]].drop_duplicates().reset_index(drop=True), proxy)


def overall_bet_part(bets: pd.DataFrame, *, rank_by: str = DEFAULT_RANK_BY, n_boot: int = DEFAULT_N_BOOT,
                     seed: int = 0, level: float = DEFAULT_LEVEL, alpha: float = DEFAULT_ALPHA) -> BetPart:
    """The overall board's bet columns, from every cohort's bets (see `overall_board`)."""
    opts = _overall_options(rank_by, n_boot, seed, level, alpha)
    scored_bets = per_bet_scores(bets) if len(bets) else None
    if scored_bets is None:
        return BetPart(None, None)
    per = scored_bets.groupby("agent", sort=True).agg(
        n_bets=("agent", "size"), n_resolved_bets=("resolved", "sum"), implied_brier=("brier", "mean"),
        kelly_brier=("brier_kelly", "mean"), stated_brier=("brier_stated", "mean"), win_rate=("won", "mean"))
    per["bss_vs_0_25"] = 1.0 - per["implied_brier"] / RANDOM_BRIER
    per = per.reset_index().merge(_coherence(scored_bets, ["agent"]), on="agent", how="left")
    tier = None
    if rank_by in _BET_BOOT:
        rb = scored_bets[scored_bets["resolved"]].assign(_quarter=RANDOM_BRIER, _all="")
        if len(rb):
            res = cluster_bootstrap(rb, higher_is_better=higher_is_better(rank_by), **_BET_BOOT[rank_by], **opts)
            tier = res.table.set_index("agent")["tier"]
    return BetPart(per, tier)


def overall_board(
    forecasts: pd.DataFrame | None,
    bets: pd.DataFrame,
    portfolios: pd.DataFrame,
    *,
    kinds: Mapping[str, str] | None = None,
    rank_by: str = DEFAULT_RANK_BY,
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
    alpha: float = DEFAULT_ALPHA,
    forecast_part: ForecastPart | None = None,
    bet_part: BetPart | None = None,
) -> pd.DataFrame:
    """Per model across cohorts (an agent's name is its model), in OVERALL_COLUMNS, best first.

    The frames are those of `cohort_board` for every cohort, each with a `cohort` column. Forecast and bet scores
    are pooled over all of a model's observations — per cohort one per market, its rounds averaged (a cohort with
    more resolved markets weighs more); their intervals come from `stats.cluster_bootstrap` resampling distinct
    markets (a market shared by several cohorts is one cluster: all its cohorts' rows move together), and the
    forecast rank keys' tier from `evidence.paired_tiers` (paired t-tests clustered by market, BH-adjusted). pnl is the
    total over cohorts, return_pct the mean of the cohorts' returns, crowd_proxy the mean of its cohort values.
    log_score and spherical_score pool questions like the Brier; brier_adjusted and irt_skill are one fit over
    every cohort's questions (a question is a cohort's market@round); beyond_market is one regression over a
    model's (cohort, market) observations, its interval resampling distinct markets.

    `forecast_part` and `bet_part`, when given, are `overall_forecast_part(forecasts, ...)` and
    `overall_bet_part(bets, ...)` with the same options, computed before (a caller keeps them across calls in
    which only the other frames changed: a price moves the portfolios alone); the board is the same.
    """
    check_rank_by(rank_by)
    options = dict(rank_by=rank_by, n_boot=n_boot, seed=seed, level=level, alpha=alpha)
    kinds = kinds or {}
    fpart = forecast_part if forecast_part is not None else overall_forecast_part(forecasts, **options)
    bpart = bet_part if bet_part is not None else overall_bet_part(bets, **options)
    table, tiers = fpart.table.copy(), dict(fpart.tiers)  # (a kept part is never changed)
    n_cohorts = pd.concat([fpart.pairs, portfolios[["agent", "cohort"]] if "cohort" in portfolios else None]
                          ).groupby("agent")["cohort"].nunique().rename("n_cohorts")
    if bpart.per is not None:
        table = table.merge(bpart.per, on="agent", how="outer")
        if bpart.tier is not None:
            tiers[rank_by] = bpart.tier
    if len(portfolios):
        money = portfolios.assign(
            pnl=portfolios["total_value"].astype(float) - portfolios["starting_balance"].astype(float),
            return_pct=np.atleast_1d(return_pct_of(portfolios["total_value"].to_numpy(dtype=float),
                                                   portfolios["starting_balance"].to_numpy(dtype=float))))
        table = table.merge(money.groupby("agent").agg(pnl=("pnl", "sum"), return_pct=("return_pct", "mean"))
                            .reset_index(), on="agent", how="outer")
        table = table.merge(_overall_risk(portfolios), on="agent", how="left")
    if fpart.proxy is not None:
        table = table.merge(fpart.proxy, on="agent", how="left")
    if "kind" not in table.columns:
        table["kind"] = None
    table["kind"] = [_kind_of(a, kinds, k) for a, k in zip(table["agent"], table["kind"])]
    for c in ("n_forecasts", "n_asked", "n_answered"):
        table[c] = table[c].fillna(0).astype(np.int64)
    table["n_cohorts"] = table["agent"].map(n_cohorts).fillna(0).astype(np.int64)
    if "bss_vs_market_note" not in table.columns:
        table["bss_vs_market_note"] = None
    tier = table["agent"].map(tiers[rank_by]) if rank_by in tiers else None
    out = _finish(table, "agent", rank_by, tier, ("agent", "n_cohorts") + BOARD_COLUMNS[1:])
    return out.rename(columns={"agent": "model"})


__all__ = [
    "BOARD_COLUMNS",
    "BetPart",
    "CohortPart",
    "ForecastPart",
    "DEFAULT_RANK_BY",
    "FITTED",
    "KINDS",
    "OVERALL_COLUMNS",
    "RANK_CHOICES",
    "RANK_METRICS",
    "RISK_COLUMNS",
    "bss_vs_market_guarded",
    "check_rank_by",
    "cohort_board",
    "cohort_boards",
    "cohort_part",
    "finish_cohort_board",
    "higher_is_better",
    "overall_board",
    "overall_bet_part",
    "overall_forecast_part",
    "rank_with_ties",
    "split_by_cohort",
]
