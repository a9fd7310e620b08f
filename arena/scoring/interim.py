"""Interim, market-relative scores: PROVISIONAL Brier scores that treat the current market price as the outcome
of markets that have not resolved yet (seed 002 §3.3), and skill against the market on the agent's own bets.

ForecastBench scores an unresolved market question against the market's value (the previous day's price) until it
resolves. Here an open bet or stated forecast is scored against `price_yes_now`, the latest YES price fetched at or
before the scoring moment (the caller picks it; nothing here reads a clock), and a resolved one against its
outcome. Every interim column is labelled `interim_*` and the rows scored against a price are counted in
`n_provisional`: a provisional score moves with the market and is replaced by the real one at resolution. Void
bets are never scored. "Brier" is the binary Brier on P(YES), 0..1, lower is better.

Pure and vectorised; imports only numpy, pandas and the other scoring modules.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from arena.scoring.brier import brier_per_bet, guarded_skill_vs_market
from arena.scoring.leaderboard import per_bet_scores
from arena.scoring.registry import register

PRICE_NOW = "price_yes_now"

register(
    "interim_brier",
    higher_is_better=False,
    description="PROVISIONAL Brier of size-implied P(YES): resolved bets vs outcome, open bets vs current market price",
    unit="squared probability, 0..1",
)
register(
    "interim_brier_stated",
    higher_is_better=False,
    description="PROVISIONAL Brier of stated P(YES): resolved vs outcome, unresolved vs current market price",
    unit="squared probability, 0..1",
)
register(
    "interim_market_brier",
    higher_is_better=False,
    description="PROVISIONAL Brier of the market's YES price at each of the agent's bets (same provisional outcomes)",
    unit="squared probability, 0..1",
)
register(
    "interim_bss_vs_market",
    higher_is_better=True,
    description="PROVISIONAL skill vs the market on the agent's own bets: 1 - interim_brier / interim_market_brier",
    unit="unitless, <= 1",
)
register(
    "market_brier",
    higher_is_better=False,
    description="Brier of the market's YES price at each of the agent's resolved bets (the market on exactly its bets)",
    unit="squared probability, 0..1",
)


def _floats(frame: pd.DataFrame, name: str) -> np.ndarray:
    if name in frame.columns:
        return pd.to_numeric(frame[name], errors="raise").to_numpy(dtype=float)
    return np.full(len(frame), np.nan)


def provisional_outcome(outcome: Any, price_now: Any, void: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """(outcome used, provisional flag) per row: the outcome where known; else the current YES price (provisional);
    NaN for a void row or an unresolved one without a price. Outcomes and prices are in [0, 1]."""
    o = np.atleast_1d(np.asarray(outcome, dtype=float))
    q = np.broadcast_to(np.asarray(price_now, dtype=float), o.shape)
    v = np.zeros(o.shape, bool) if void is None else np.broadcast_to(np.asarray(void, dtype=bool), o.shape)
    resolved = ~np.isnan(o) & ~v
    provisional = np.isnan(o) & ~v & ~np.isnan(q)
    used = np.where(resolved, o, np.where(provisional, q, np.nan))
    return used, provisional


def interim_per_bet(bets: pd.DataFrame, *, price_now: str = PRICE_NOW) -> pd.DataFrame:
    """A copy of the per-bet frame with provisional outcomes and interim Briers.

    bets: raw bets as `leaderboard.per_bet_scores` takes them (it is applied when `f_yes` is absent) or its
    output, plus `price_now`: the YES price in [0, 1] at the scoring moment (NaN if unknown).
    Adds: outcome_used (outcome, or the current price when unresolved), provisional (bool: scored against a
    price), interim_brier (f_yes), interim_brier_stated (stated_probability), interim_brier_market
    (price_yes_at_bet) — each (p − outcome_used)², NaN where a term is missing.
    """
    scored = bets if "f_yes" in bets.columns else per_bet_scores(bets)
    if price_now not in scored.columns:
        raise ValueError(f"bets frame lacks the current-price column {price_now!r}")
    out = scored.copy()
    void = out["void"].fillna(False).astype(bool).to_numpy() if "void" in out.columns else None
    outcome = _floats(out, "outcome") if "outcome" in out.columns else _floats(out, "outcome_yes")
    used, provisional = provisional_outcome(outcome, _floats(out, price_now), void)
    out["outcome_used"] = used
    out["provisional"] = provisional
    out["interim_brier"] = np.atleast_1d(brier_per_bet(_floats(out, "f_yes"), used))
    out["interim_brier_stated"] = np.atleast_1d(brier_per_bet(_floats(out, "stated_probability"), used))
    out["interim_brier_market"] = np.atleast_1d(brier_per_bet(_floats(out, "price_yes_at_bet"), used))
    return out


def _table(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Group the per-row interim columns into the per-agent interim table."""
    agent = frame["interim_brier"].to_numpy(dtype=float)
    market = frame["interim_brier_market"].to_numpy(dtype=float)
    both = ~(np.isnan(agent) | np.isnan(market))
    resolved_both = both & ~frame["provisional"].to_numpy(dtype=bool)
    scored = ~np.isnan(agent)
    work = frame[keys].assign(
        _rows=1,
        _scored=scored.astype(np.int64),
        _prov=(frame["provisional"].to_numpy(dtype=bool) & scored).astype(np.int64),
        _agent=agent,
        _stated=frame["interim_brier_stated"].to_numpy(dtype=float),
        _a_both=np.where(both, agent, np.nan),
        _m_both=np.where(both, market, np.nan),
        _m_res=np.where(resolved_both, market, np.nan),
    )
    t = work.groupby(keys, sort=True, dropna=False).agg(
        n=("_rows", "sum"), n_scored=("_scored", "sum"), n_provisional=("_prov", "sum"),
        interim_brier=("_agent", "mean"), interim_brier_stated=("_stated", "mean"),
        _a_both=("_a_both", "mean"), interim_market_brier=("_m_both", "mean"), market_brier=("_m_res", "mean"),
    ).reset_index()
    t["interim_bss_vs_market"] = guarded_skill_vs_market(t["_a_both"].to_numpy(),
                                                         t["interim_market_brier"].to_numpy(dtype=float))
    t["provisional"] = t["n_provisional"] > 0
    return t.drop(columns="_a_both")


def interim_scores(bets: pd.DataFrame, *, price_now: str = PRICE_NOW) -> pd.DataFrame:
    """PROVISIONAL scores per agent (per cohort and agent when `bets` has a cohort column).

    Columns: the keys; n (bets), n_scored (bets with an interim Brier), n_provisional (of those, scored against
    the current price); interim_brier, interim_brier_stated, interim_market_brier (the market's price at each
    bet, on exactly the bets where the agent's interim Brier and the market's both exist) and
    interim_bss_vs_market = 1 − interim_brier(on those bets) / interim_market_brier; market_brier (the market on
    exactly the agent's resolved bets — the final, non-provisional reference); provisional (n_provisional > 0).
    NaN where there is nothing to score.
    """
    per_bet = interim_per_bet(bets, price_now=price_now)
    keys = ["cohort", "agent"] if "cohort" in per_bet.columns else ["agent"]
    return _table(per_bet, keys)


def interim_forecast_scores(
    forecasts: pd.DataFrame,
    *,
    probability: str = "probability",
    outcome: str = "outcome_yes",
    price_now: str = PRICE_NOW,
    price_at_forecast: str = "price_yes_at_forecast",
) -> pd.DataFrame:
    """PROVISIONAL Brier of stated forecasts (e.g. a cohort's fixed forecast set) per agent (and cohort).

    forecasts: agent, `probability` (stated P(YES)), `outcome` (YES payout, NaN while unresolved; optional),
    `price_now` (current YES price) and optionally `price_at_forecast` (the market when the forecast was made, for
    the market-relative columns) and void. Same columns as `interim_scores`, with interim_brier computed from the
    stated probability (interim_brier_stated repeats it).
    """
    for c in ("agent", probability, price_now):
        if c not in forecasts.columns:
            raise ValueError(f"forecasts frame lacks column {c!r}")
    void = forecasts["void"].fillna(False).astype(bool).to_numpy() if "void" in forecasts.columns else None
    used, provisional = provisional_outcome(_floats(forecasts, outcome), _floats(forecasts, price_now), void)
    frame = forecasts.copy()
    frame["outcome_used"] = used
    frame["provisional"] = provisional
    frame["interim_brier_stated"] = np.atleast_1d(brier_per_bet(_floats(forecasts, probability), used))
    frame["interim_brier"] = frame["interim_brier_stated"]
    frame["interim_brier_market"] = np.atleast_1d(brier_per_bet(_floats(forecasts, price_at_forecast), used))
    keys = ["cohort", "agent"] if "cohort" in frame.columns else ["agent"]
    return _table(frame, keys)


__all__ = [
    "PRICE_NOW",
    "interim_forecast_scores",
    "interim_per_bet",
    "interim_scores",
    "provisional_outcome",
]
