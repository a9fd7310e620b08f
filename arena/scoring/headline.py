"""The headline score: the Brier score of each agent's stated P(YES) on its cohort's forecast set, with the two
reference forecasters (always-0.5 and the market) scored on exactly the same questions, and the agent's skill
against the market in forms that cannot blow up.

A question is one market at one decision round (`market@round`): every agent of a cohort states P(YES) on the
same questions at the same time. The unit of evidence is the market (`scoring.evidence`): the headline averages,
per cohort and agent, one observation per resolved market — the mean Brier over the rounds that asked it. The
market reference's forecast is the YES price the agents saw at decision time. Outcomes are the YES payout in
[0, 1]; unresolved and void questions are not scored. Every asked question counts for every seat: one it did not
answer arrives as a stated 0.5 with `answered` False (`store.frames.forecast_set_frame`), so leaving a question
out never scores better than stating 0.5.

Pure and vectorised; imports only numpy, pandas and the scoring registry.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from arena.scoring.brier import BSS_MARKET_FLOOR, BSS_MARKET_MIN
from arena.scoring.evidence import market_rows
from arena.scoring.registry import register

REF_HALF = "always-0.5 (reference)"
REF_MARKET = "market (reference)"
REFERENCE_AGENTS = (REF_HALF, REF_MARKET)
REFERENCE_KIND = "reference"

register(
    "forecast_brier",
    higher_is_better=False,
    description="Headline: mean over the forecast set's markets of the Brier of the stated P(YES) (rounds averaged)",
    unit="squared probability, 0..1",
)
register(
    "brier_minus_market",
    higher_is_better=False,
    description="Forecast Brier minus the market price's Brier on the same forecast questions (< 0 beats the market)",
    unit="squared probability, -1..1",
)

REQUIRED = ("agent", "market_id", "question", "probability", "outcome_yes")


def score_forecasts(forecasts: pd.DataFrame, *, references: bool = True) -> pd.DataFrame:
    """Scored forecast rows, with the reference forecasters' rows appended.

    forecasts: one row per (agent, question) with agent, market_id, question, probability (stated P(YES) in
    [0, 1]), outcome_yes (YES payout in [0, 1]; NaN when unresolved or void) and optionally cohort, kind and
    market_price (the YES price the agent saw, in [0, 1]; NaN when unknown).

    Returns the rows (references with kind "reference": always-0.5 states 0.5 and the market states the
    question's price — the median of the prices its agents saw, which is one snapshot in practice) with added
    brier ((probability − outcome)², NaN unless resolved), brier_market (the price's Brier on that question,
    NaN without a price) and diff_market (brier − brier_market, in [−1, 1]).
    """
    missing = [c for c in REQUIRED if c not in forecasts.columns]
    if missing:
        raise ValueError(f"forecasts frame lacks column(s) {missing}")
    rows = forecasts.copy()
    if "market_price" not in rows.columns:
        rows["market_price"] = np.nan
    if "kind" not in rows.columns:
        rows["kind"] = ""
    for col in ("probability", "outcome_yes", "market_price"):
        rows[col] = pd.to_numeric(rows[col], errors="raise").astype(float)
        x = rows[col].to_numpy()
        if (np.isfinite(x) & ((x < 0) | (x > 1))).any():
            raise ValueError(f"{col} must lie in [0, 1]")
    keys = ["cohort", "question"] if "cohort" in rows.columns else ["question"]
    per_q = rows.groupby(keys, sort=True, dropna=False).agg(
        market_id=("market_id", "first"), outcome_yes=("outcome_yes", "first"),
        market_price=("market_price", "median")).reset_index()
    # every row of a question is scored with the question's price, so agent and market meet on the same numbers
    rows = rows.drop(columns=["market_price"]).merge(per_q[keys + ["market_price"]], on=keys, how="left")
    if references and len(per_q):
        half = per_q.assign(agent=REF_HALF, kind=REFERENCE_KIND, probability=0.5)
        market = per_q.assign(agent=REF_MARKET, kind=REFERENCE_KIND, probability=per_q["market_price"])
        market = market[market["probability"].notna()]
        rows = pd.concat([rows, half, market], ignore_index=True)
    p = rows["probability"].to_numpy(dtype=float)
    o = rows["outcome_yes"].to_numpy(dtype=float)
    q = rows["market_price"].to_numpy(dtype=float)
    rows["brier"] = (p - o) ** 2
    rows["brier_market"] = (q - o) ** 2
    rows["diff_market"] = rows["brier"] - rows["brier_market"]
    return rows


def bss_vs_market_guarded(brier: float, brier_market: float,
                          floor: float = BSS_MARKET_FLOOR) -> tuple[float, str]:
    """(1 − brier / brier_market, "") where the market's Brier on the same questions is at least `floor`; else
    (NaN, the reason). The value then lies in [1 − 1/floor, 1]."""
    if not (np.isfinite(brier) and np.isfinite(brier_market)):
        return float("nan"), "no resolved forecast with a market price"
    if brier_market < floor:
        return float("nan"), f"market Brier {brier_market:.4f} < {floor}: too small to divide by"
    return float(1.0 - brier / brier_market), ""


def forecast_summary(scored: pd.DataFrame, *, keys: list[str] | None = None,
                     within: list[str] | None = None) -> pd.DataFrame:
    """Per agent (and cohort when present): kind, n_asked (questions asked, resolved or not), n_answered (those
    it stated a P(YES) for: rows with `answered` False were imputed as 0.5; a frame without that column, and the
    references, answered every row), n_forecasts (resolved questions scored, the imputed ones included),
    n_markets (resolved markets), forecast_brier, brier_minus_market (over markets with a price), bss_vs_market and
    bss_vs_market_note. NaN, never 0, where nothing is scored.

    The market is the unit of evidence (`scoring.evidence`): a market's rounds are first averaged into one
    observation per (cohort, agent, market), every round the same weight; forecast_brier is the mean of those
    observations, brier_minus_market the mean of their (Brier − market's Brier), bss_vs_market 1 − Σ Brier / Σ
    market's Brier over the markets with a price. keys: the output rows (default cohort and agent, or agent);
    within: what besides agent and market names an observation (default: cohort when present) — the overall board
    passes keys ["agent"], within ["cohort"], so a model's observations are its (cohort, market) pairs."""
    has_cohort = "cohort" in scored.columns
    keys = keys if keys is not None else (["cohort", "agent"] if has_cohort else ["agent"])
    within = within if within is not None else (["cohort"] if has_cohort else [])
    answered = (scored["answered"].astype(object).fillna(True).astype(bool) if "answered" in scored.columns
                else pd.Series(True, index=scored.index))
    counts = scored.assign(_scored=scored["brier"].notna(), _answered=answered.to_numpy(dtype=bool)).groupby(
        keys, sort=True, dropna=False).agg(kind=("kind", "first"), n_asked=("_answered", "size"),
                                           n_answered=("_answered", "sum"), n_forecasts=("_scored", "sum"))
    resolved = scored[scored["brier"].notna()]
    both = resolved["diff_market"].notna()
    resolved = resolved[[*dict.fromkeys([*within, *keys, "market_id"]), "brier", "diff_market", "brier_market"]].assign(
        _b_both=resolved["brier"].where(both), _m_both=resolved["brier_market"].where(both))
    mk = market_rows(resolved, ("brier", "diff_market", "_b_both", "_m_both"), market="market_id",
                     keys=[k for k in dict.fromkeys([*within, *keys]) if k != "agent"])
    per = mk.groupby(keys, sort=True, dropna=False).agg(
        n_markets=("market_id", "size"), forecast_brier=("brier", "mean"), brier_minus_market=("diff_market", "mean"),
        _b=("_b_both", "mean"), _m=("_m_both", "mean"))
    out = counts.join(per, how="left").reset_index()
    for c in ("n_asked", "n_answered", "n_forecasts"):
        out[c] = out[c].astype(np.int64)
    out["n_markets"] = out["n_markets"].fillna(0).astype(np.int64)
    guarded = [bss_vs_market_guarded(b, m) for b, m in zip(out["_b"], out["_m"])]
    out["bss_vs_market"] = [g[0] for g in guarded]
    out["bss_vs_market_note"] = [g[1] for g in guarded]
    return out.drop(columns=["_b", "_m"])


__all__ = [
    "BSS_MARKET_FLOOR",
    "BSS_MARKET_MIN",
    "REFERENCE_AGENTS",
    "REFERENCE_KIND",
    "REF_HALF",
    "REF_MARKET",
    "bss_vs_market_guarded",
    "forecast_summary",
    "score_forecasts",
]
