"""Question difficulty, published: the fitted difficulty of every resolved forecast-set question of a cohort, from
the two fits the boards already make (pure: numpy and pandas only; never the store or the clock).

A question is a cohort's market@round. Per cohort, on the same rows as the boards' brier_adjusted and irt_skill —
every seat's resolved forecast-set rows, an unanswered question scored as a stated 0.5, with the two reference
forecasters (always-0.5 and the market's price) — this module reads each question's parameter from:

- `difficulty` — the two-way fixed-effects fit of the Brier (`scoring.difficulty`), s_ij = a_i + b_j, as
  b_j − mean b: how much higher every forecaster's Brier is on this question than on the cohort's average
  question (Brier units; > 0 harder). A forecaster's expected Brier on it is its brier_adjusted + difficulty.
- `irt_difficulty` — the Rasch-type fit of 1 − Brier (`scoring.irt`), as β_j − mean β in logits (> 0 harder):
  a forecaster's expected 1 − Brier on it is sigmoid(irt_skill − irt_difficulty). NaN for a question fewer than
  two forecasters scored (the IRT fit leaves it out).

Both are relative to the cohort's own resolved questions, so they move as more of its questions resolve.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from arena.scoring.cells import score_cells
from arena.scoring.difficulty import two_way_fixed_effects
from arena.scoring.headline import score_forecasts
from arena.scoring.irt import rasch_skill

COLUMNS = ("cohort", "market_id", "round", "question", "n_forecasters", "market_price", "outcome_yes",
           "market_brier", "mean_brier", "difficulty", "irt_difficulty")


def _empty() -> pd.DataFrame:
    kinds = {"cohort": object, "market_id": object, "round": object, "question": object, "n_forecasters": np.int64}
    return pd.DataFrame({c: pd.Series(dtype=kinds.get(c, float)) for c in COLUMNS})


def question_difficulty(forecasts: pd.DataFrame) -> pd.DataFrame:
    """One row per resolved forecast-set question of each cohort (COLUMNS), by cohort (in order of first
    appearance) and question: n_forecasters (seats and references that scored it), market_price (the YES price
    shown), outcome_yes, market_brier (the price's Brier), mean_brier (over the forecasters, references
    included), difficulty and irt_difficulty (module docstring).

    forecasts: the cohorts' forecast-set rows (`store.frames.forecast_set_frame`: cohort, agent, market_id,
    question (market@round), probability, market_price, outcome_yes[, answered])."""
    if forecasts is None or not len(forecasts):
        return _empty()
    f = forecasts if "cohort" in forecasts.columns else forecasts.assign(cohort="")
    parts = []
    for cohort, rows in f.groupby("cohort", sort=False):
        scored = score_forecasts(rows)
        resolved = scored[scored["brier"].notna()]
        if not len(resolved):
            continue
        cells = score_cells(resolved, agent="agent", question="question", value="brier")
        fe = two_way_fixed_effects(cells).questions
        fe = fe.assign(difficulty=fe["difficulty"] - fe["difficulty"].mean())
        irt = rasch_skill(cells).questions
        irt = irt.assign(irt_difficulty=irt["beta"] - irt["beta"].mean() if len(irt) else irt["beta"])
        per_q = resolved.groupby("question", sort=True).agg(
            market_id=("market_id", "first"), market_price=("market_price", "first"),
            outcome_yes=("outcome_yes", "first"), market_brier=("brier_market", "first"),
            mean_brier=("brier", "mean")).reset_index()
        out = (fe.rename(columns={"n": "n_forecasters"})[["question", "n_forecasters", "difficulty"]]
               .merge(irt[["question", "irt_difficulty"]], on="question", how="left")
               .merge(per_q, on="question", how="left"))
        out["round"] = [q[len(m) + 1:] for q, m in zip(out["question"], out["market_id"])]
        parts.append(out.assign(cohort=cohort))
    if not parts:
        return _empty()
    out = pd.concat(parts, ignore_index=True)
    out["n_forecasters"] = out["n_forecasters"].astype(np.int64)
    return out[list(COLUMNS)]


__all__ = ["COLUMNS", "question_difficulty"]
