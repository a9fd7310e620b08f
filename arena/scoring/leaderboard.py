"""The scoring leaderboard: one row of forecasting and portfolio scores per agent, from per-bet facts.

Pure: takes DataFrames already read from the store (floats in USD, probabilities in [0, 1]) and returns
DataFrames; imports only numpy, pandas and the other scoring modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from arena.scoring.brier import (
    RANDOM_BRIER,
    brier_band,
    brier_per_bet,
    brier_skill_score,
    forecast_yes,
    guarded_skill_vs_market,
    implied_confidence,
    is_yes,
    kelly_probability,
    return_band,
)
from arena.scoring.pnl import bet_won, profit_loss, return_pct
from arena.scoring.proxy import AGGREGATORS, proxy_scores, score_column
from arena.scoring.registry import metric, register

REQUIRED_BET_COLUMNS = ("agent", "side", "amount", "max_bet", "outcome_yes")
REQUIRED_PORTFOLIO_COLUMNS = ("agent", "starting_balance", "total_value")
LEADERBOARD_COLUMNS = (
    "n_bets",
    "n_resolved",
    "brier",
    "brier_kelly",
    "brier_stated",
    "bss_vs_0_25",
    "bss_vs_market",
    "pnl",
    "return_pct",
    "win_rate",
    "brier_band",
    "return_band",
    "crowd_proxy",
)

register(
    "crowd_proxy",
    higher_is_better=False,
    description="Crowd-proxy score: mean squared distance of the agent's stated P(YES) from the other agents' pool",
    unit="squared probability, 0..1",
)


def _require(frame: pd.DataFrame, columns: tuple[str, ...], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} frame lacks column(s) {missing}")


def _column(frame: pd.DataFrame, name: str) -> np.ndarray:
    """A float column, or all-NaN when the optional column is absent."""
    if name in frame.columns:
        return pd.to_numeric(frame[name], errors="raise").to_numpy(dtype=float)
    return np.full(len(frame), np.nan)


def per_bet_scores(bets: pd.DataFrame) -> pd.DataFrame:
    """A copy of `bets` with the per-bet quantities the leaderboard averages.

    bets: one row per bet with agent, side ('YES'/'NO'), amount and max_bet (USD), outcome_yes (YES payout in
    [0, 1], NaN if unresolved) and optionally cohort, market_id, cash_at_decision (USD), price_yes_at_bet,
    void (bool; a void bet is never scored) and stated_probability (the agent's stated P(YES), NaN if none).

    Adds: confidence and f_yes (implied by size), resolved (bool), outcome (outcome_yes, NaN unless resolved),
    brier, p_kelly, brier_kelly, brier_stated, brier_market (the YES price's Brier on that bet) and won (1/0/NaN).
    """
    _require(bets, REQUIRED_BET_COLUMNS, "bets")
    out = bets.copy()
    void = out["void"].fillna(False).astype(bool).to_numpy() if "void" in out.columns else np.zeros(len(out), bool)
    outcome = _column(out, "outcome_yes")
    resolved = ~np.isnan(outcome) & ~void
    outcome = np.where(resolved, outcome, np.nan)
    side = is_yes(out["side"].to_numpy())  # (booleans: read once, not by each score below)
    price = _column(out, "price_yes_at_bet")
    cash = _column(out, "cash_at_decision")
    with np.errstate(divide="ignore", invalid="ignore"):
        stake_fraction = np.where(cash > 0, _column(out, "amount") / cash, np.nan)

    out["confidence"] = np.atleast_1d(implied_confidence(_column(out, "amount"), _column(out, "max_bet")))
    out["f_yes"] = np.atleast_1d(forecast_yes(side, out["confidence"].to_numpy()))
    out["resolved"] = resolved
    out["outcome"] = outcome
    out["brier"] = np.atleast_1d(brier_per_bet(out["f_yes"].to_numpy(), outcome))
    out["p_kelly"] = np.atleast_1d(kelly_probability(side, price, stake_fraction))
    out["brier_kelly"] = np.atleast_1d(brier_per_bet(out["p_kelly"].to_numpy(), outcome))
    out["brier_stated"] = np.atleast_1d(brier_per_bet(_column(out, "stated_probability"), outcome))
    out["brier_market"] = np.atleast_1d(brier_per_bet(price, outcome))
    out["won"] = np.atleast_1d(bet_won(side, outcome, price))
    return out


def _keys(frame: pd.DataFrame) -> list[str]:
    return ["cohort", "agent"] if "cohort" in frame.columns else ["agent"]


def _bet_table(scored: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    # bss_vs_market compares agent and market on exactly the bets where both Briers exist
    both = ~(np.isnan(scored["brier"].to_numpy()) | np.isnan(scored["brier_market"].to_numpy()))
    frame = scored.assign(
        _agent_on_both=np.where(both, scored["brier"], np.nan),
        _market_on_both=np.where(both, scored["brier_market"], np.nan),
    )
    table = frame.groupby(keys, sort=False, dropna=False).agg(
        n_bets=("agent", "size"),
        n_resolved=("resolved", "sum"),
        brier=("brier", "mean"),
        brier_kelly=("brier_kelly", "mean"),
        brier_stated=("brier_stated", "mean"),
        win_rate=("won", "mean"),
        _agent_on_both=("_agent_on_both", "mean"),
        _market_on_both=("_market_on_both", "mean"),
    )
    table["bss_vs_0_25"] = brier_skill_score(table["brier"].to_numpy(), RANDOM_BRIER)
    # a market Brier too small to divide by gives NaN, not −4,517
    table["bss_vs_market"] = guarded_skill_vs_market(table["_agent_on_both"].to_numpy(),
                                                     table["_market_on_both"].to_numpy(dtype=float))
    return table.drop(columns=["_agent_on_both", "_market_on_both"]).reset_index()


def crowd_proxy(
    forecasts: pd.DataFrame,
    *,
    leave_one_out: bool = False,
    aggregator: str = "logit_pool",
) -> pd.DataFrame:
    """Crowd-proxy score per agent (and cohort, when given) from stated forecasts.

    forecasts: agent, question, probability (stated P(YES) in [0, 1]) and optionally cohort or batch. Questions
    are pooled within a cohort (or batch), since agents of different cohorts forecast at different times. The
    default aggregator is the logit pool, which the paper found tracks Brier best. Returns the keys and crowd_proxy.
    """
    if aggregator not in AGGREGATORS:
        raise ValueError(f"unknown aggregator {aggregator!r}; choose from {list(AGGREGATORS)}")
    _require(forecasts, ("agent", "question", "probability"), "forecasts")
    frame = forecasts
    if "batch" not in frame.columns and "cohort" in frame.columns:
        frame = frame.assign(batch=frame["cohort"])
    keys = _keys(frame)
    # a question's pool is a sum over its rows: summed in a fixed order, the same rows in another order give
    # the same bits (two identical runs record the seats' answers in different orders)
    order = [c for c in dict.fromkeys([*keys, "question", "agent"]) if c in frame.columns]
    frame = frame.sort_values(order, kind="stable")
    scores = proxy_scores(frame, leave_one_out=leave_one_out, by=keys, aggregators=[aggregator])
    return scores[keys + [score_column(aggregator)]].rename(columns={score_column(aggregator): "crowd_proxy"})


def leaderboard(
    bets: pd.DataFrame,
    portfolios: pd.DataFrame,
    forecasts: pd.DataFrame | None = None,
    *,
    leave_one_out: bool = False,
    proxy_aggregator: str = "logit_pool",
) -> pd.DataFrame:
    """One row per agent (per cohort and agent when `bets` has a cohort column) with every leaderboard score.

    bets: see `per_bet_scores`. portfolios: agent (and optionally cohort), starting_balance and total_value in USD.
    forecasts: optional stated forecasts for the crowd proxy (see `crowd_proxy`); without it crowd_proxy is NaN.

    Columns: the keys, then n_bets, n_resolved, brier (size-implied P(YES)), brier_kelly, brier_stated,
    bss_vs_0_25, bss_vs_market, pnl (USD), return_pct (percent), win_rate (0..1), brier_band, return_band,
    crowd_proxy. Scores are NaN (bands "n/a") where there is nothing to score — never 0. An agent with a portfolio
    but no bets still gets a row (n_bets 0). Sorted by cohort, then Brier (best first, NaN last), then agent.
    """
    proxy = (crowd_proxy(forecasts, leave_one_out=leave_one_out, aggregator=proxy_aggregator)
             if forecasts is not None and len(forecasts) else None)
    return with_money(bet_table(bets), portfolios, proxy)


def bet_table(bets: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard's bet columns (n_bets, n_resolved, brier, brier_kelly, brier_stated, win_rate, bss_vs_0_25,
    bss_vs_market) per agent, or per cohort and agent when `bets` has a cohort column: what `leaderboard` takes
    from the bets alone."""
    keys = _keys(bets) if "agent" in bets.columns else ["agent"]
    return _bet_table(per_bet_scores(bets), keys)


def with_money(table: pd.DataFrame, portfolios: pd.DataFrame, proxy: pd.DataFrame | None) -> pd.DataFrame:
    """`leaderboard`'s rows from its bet columns (`bet_table`), the portfolios (agent and optionally cohort,
    starting_balance and total_value in USD) and the crowd proxy (`crowd_proxy`, None: NaN)."""
    _require(portfolios, REQUIRED_PORTFOLIO_COLUMNS, "portfolios")
    keys = _keys(table)
    money = portfolios.copy()
    total = pd.to_numeric(money["total_value"]).to_numpy(dtype=float)
    start = pd.to_numeric(money["starting_balance"]).to_numpy(dtype=float)
    money["pnl"] = np.atleast_1d(profit_loss(total, start))
    money["return_pct"] = np.atleast_1d(return_pct(total, start))
    money_keys = [k for k in keys if k in money.columns]
    extra_keys = [k for k in _keys(money) if k not in keys]  # e.g. cohort known only from the portfolio
    table = table.merge(money[money_keys + extra_keys + ["pnl", "return_pct"]], on=money_keys, how="outer")
    keys = keys + extra_keys
    table["n_bets"] = table["n_bets"].fillna(0).astype(np.int64)
    table["n_resolved"] = table["n_resolved"].fillna(0).astype(np.int64)

    if proxy is not None:
        on = [k for k in keys if k in proxy.columns]
        table = table.merge(proxy[on + ["crowd_proxy"]], on=on, how="left")
    else:
        table["crowd_proxy"] = np.nan

    table["brier_band"] = brier_band(table["brier"].to_numpy(dtype=float))
    table["return_band"] = return_band(table["return_pct"].to_numpy(dtype=float))
    ordered = table[keys + list(LEADERBOARD_COLUMNS)]
    sort_keys = [k for k in ("cohort",) if k in keys] + ["brier", "agent"]
    return ordered.sort_values(sort_keys, na_position="last", kind="stable").reset_index(drop=True)


@metric(
    "model_brier_across_cohorts",
    higher_is_better=False,
    description="A model's mean Brier over all its resolved bets in every cohort (pooled, not a mean of means)",
    unit="squared probability, 0..1",
)
def model_brier_across_cohorts(
    bets: pd.DataFrame, model_of: Mapping[str, str] | pd.Series | None = None
) -> pd.DataFrame:
    """Per model: n_resolved and brier = the mean of every individual bet Brier of that model's agents.

    Seed 001 pools the bets rather than averaging per-cohort means, so a cohort with more resolved bets weighs
    more. The model comes from a `model` column of `bets`, or from `model_of` (agent → model).
    """
    scored = per_bet_scores(bets)
    if model_of is not None:
        mapping: Any = model_of
        scored["model"] = scored["agent"].map(mapping)
    elif "model" not in scored.columns:
        raise ValueError("bets need a 'model' column, or pass model_of (agent → model)")
    out = scored.groupby("model", sort=True, dropna=False).agg(
        n_resolved=("resolved", "sum"), brier=("brier", "mean")
    )
    out["n_resolved"] = out["n_resolved"].astype(np.int64)
    return out.reset_index()


__all__ = [
    "LEADERBOARD_COLUMNS",
    "bet_table",
    "crowd_proxy",
    "leaderboard",
    "model_brier_across_cohorts",
    "per_bet_scores",
    "with_money",
]
