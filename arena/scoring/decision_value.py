"""Decision value: the return a fixed betting rule makes on a seat's *stated* forecasts at the prices it saw, so
seats compare on what their forecasts are worth to a bettor whatever their own bet sizing (pure: numpy and
pandas in, numbers out; imports no store, no clock).

The rule, on every forecast-set question a seat answered, with q its stated P(YES), p the YES price it saw and o
the YES payout at resolution (1 or 0; a probabilistic resolution's fraction):

- a binary contract at the shown price: q > p buys YES at p, q < p buys NO at 1 − p, q = p does not bet;
- the stake is quarter-Kelly, capped as the arena caps a bet: s = min(KELLY_FRACTION · f*, MAX_BET_FRACTION) of a
  bankroll of 1, with f* = (q − p) / (1 − p) for YES and (p − q) / p for NO (the Kelly fraction of a contract
  that pays 1 and costs its price). With the defaults the cap never binds (f* ≤ 1, so s ≤ 0.25); it is kept so
  a smaller cap or a larger fraction stays faithful to the arena's rules;
- settled at resolution: the return on the bankroll is s · (o / p − 1) for YES, s · ((1 − o) / (1 − p) − 1) for
  NO. Unresolved and void questions are not counted yet (NaN); a question without a price at least one ppm
  inside (0, 1) (the arena's price resolution) is not bettable and not counted.

An **imputed row does not bet** (return 0 on the question, counted): the 0.5 a seat is scored with on a question
it left out is the arena's stand-in, not the seat's view, and 0.5 against the price would give it an edge (or a
loss) only by the accident of where the price stands. Counted as a return of 0 — the value of stating the price
itself — leaving a question out can neither add to a seat's decision value nor hide a loss behind fewer
questions.

`decision_value` is the mean return per question, one observation per market (the mean over the rounds that
asked it, `evidence.market_rows`), as a fraction of the bankroll: +0.01 means the rule made 1 % of the bankroll
per question on average. Each bet is sized on a fresh bankroll of 1 (no compounding), so a seat's value does not
depend on the order its questions resolved in. Its interval resamples markets: the paired bootstrap within a
cohort (`stats.paired_bootstrap`), distinct markets across cohorts on the overall board
(`stats.cluster_bootstrap`). The market reference (q = p everywhere) never bets: its value is 0 exactly.

What it rewards. With t the question's true chance, a question's expected return is
KELLY_FRACTION · (q − p)(t − p) / (p (1 − p)) on either side (while the cap does not bind): linear in q, so a seat
earns by moving from the price towards the truth, and noise around its forecasts costs it nothing on average,
only spread — unlike the headline's proper score, which charges for it. The 1 / (p (1 − p)) weight makes cheap
contracts near 0 or 1 dominate the spread: read the value with its interval.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from arena.scoring.evidence import market_rows
from arena.scoring.registry import register
from arena.scoring.stats import DEFAULT_LEVEL, DEFAULT_N_BOOT, cluster_bootstrap, paired_bootstrap

KELLY_FRACTION = 0.25  # quarter-Kelly
# the arena's cap on one bet as a share of the cash: CohortRules.max_bet_fraction's default (`domain.sizing`, which
# scoring does not import; a test holds the two equal)
MAX_BET_FRACTION = 0.25
PRICE_TICK = 1e-6  # the arena's price resolution (1 ppm): a price within it of 0 or 1 is not bettable
RETURN = "decision_return"  # the per-row column `with_decision_returns` adds
FIELDS = ("decision_value", "decision_value_lo", "decision_value_hi")

DECISION_VALUE = register(
    "decision_value", higher_is_better=True, unit="fraction of bankroll per question",
    description="mean return per question of quarter-Kelly bets (capped like the arena's) on the stated "
                "forecasts at the prices seen, settled at resolution; imputed rows do not bet",
)


def kelly_stake(q: Any, p: Any, *, fraction: float = KELLY_FRACTION, cap: float = MAX_BET_FRACTION
                ) -> tuple[np.ndarray, np.ndarray]:
    """(stake, buys_yes): the rule's stake as a fraction of the bankroll (0 where it does not bet; NaN where p is
    not at least one ppm inside (0, 1) or q is unknown) and whether it buys YES, for stated P(YES) `q` at YES
    price `p`."""
    q = np.asarray(q, dtype=float)
    p = np.asarray(p, dtype=float)
    ok = np.isfinite(q) & np.isfinite(p) & (p >= PRICE_TICK) & (p <= 1.0 - PRICE_TICK)
    yes = q > p
    with np.errstate(all="ignore"):
        full = np.where(yes, (q - p) / (1.0 - p), (p - q) / p)
    stake = np.where(ok, np.minimum(fraction * np.clip(full, 0.0, None), cap), np.nan)
    return stake, yes


def decision_returns(q: Any, p: Any, outcome: Any, bets: Any = True, *, fraction: float = KELLY_FRACTION,
                     cap: float = MAX_BET_FRACTION) -> np.ndarray:
    """The rule's settled return per question (fraction of the bankroll; see the module docstring): NaN where the
    question is unresolved, void or has no bettable price; 0 where it does not bet (q = p, or `bets` False — an
    imputed row)."""
    stake, yes = kelly_stake(q, p, fraction=fraction, cap=cap)
    p = np.asarray(p, dtype=float)
    o = np.asarray(outcome, dtype=float)
    with np.errstate(all="ignore"):
        gain = np.where(yes, o / p - 1.0, (1.0 - o) / (1.0 - p) - 1.0)
    with np.errstate(all="ignore"):
        out = np.where(stake > 0.0, stake * gain, 0.0)
    out = np.where(np.broadcast_to(np.asarray(bets, dtype=bool), out.shape), out, 0.0)
    return np.where(np.isfinite(stake) & np.isfinite(o), out, np.nan)


def _bets(rows: pd.DataFrame) -> np.ndarray:
    """True on a stated row: `answered` is not False (reference rows, which carry no `answered`, state theirs)."""
    if "answered" not in rows.columns:
        return np.ones(len(rows), dtype=bool)
    return np.array([a is not False and a is not np.False_ for a in rows["answered"].tolist()], dtype=bool)


def with_decision_returns(rows: pd.DataFrame, where: Any = None, **rule: float) -> pd.DataFrame:
    """`rows` (probability, market_price, outcome_yes[, answered]) with the `decision_return` column; with
    `where` (a boolean mask), only those rows' returns are (re)computed and the others kept."""
    def col(name: str) -> np.ndarray:
        return rows[name].to_numpy(dtype=float) if name in rows.columns else np.full(len(rows), np.nan)

    r = decision_returns(col("probability"), col("market_price"), col("outcome_yes"), _bets(rows), **rule)
    if where is not None and RETURN in rows.columns:
        r = np.where(np.asarray(where, dtype=bool), r, rows[RETURN].to_numpy(dtype=float))
    return rows.assign(**{RETURN: r})


def _table(res: Any) -> pd.DataFrame:
    t = res.table
    return pd.DataFrame({"agent": t["agent"], "decision_value": t["estimate"], "decision_value_lo": t["ci_low"],
                         "decision_value_hi": t["ci_high"]})


def _observations(rows: pd.DataFrame, keys: tuple[str, ...]) -> pd.DataFrame:
    counted = rows[np.isfinite(rows[RETURN].to_numpy(dtype=float))]
    return market_rows(counted, (RETURN,), keys=keys)


def cohort_decision_values(rows: pd.DataFrame, *, n_boot: int = DEFAULT_N_BOOT, seed: int = 0,
                           level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """cohort, agent and FIELDS per cohort: the mean of the per-market observations of `decision_return` (rows
    with a `cohort` column, e.g. `with_decision_returns` of the scored forecast rows) and its paired-bootstrap
    interval, the cohort's markets resampled, every seat on the same draws."""
    obs = _observations(rows, ("cohort",))
    parts = []
    for cohort, group in obs.groupby("cohort", sort=False):
        res = paired_bootstrap(group, RETURN, metric="decision_value", higher_is_better=True, market="market_id",
                               stratum=None, n_boot=n_boot, seed=seed, level=level, min_resolved=0)
        parts.append(_table(res).assign(cohort=cohort))
    if not parts:
        return pd.DataFrame(columns=["cohort", "agent", *FIELDS])
    return pd.concat(parts, ignore_index=True)[["cohort", "agent", *FIELDS]]


def pooled_decision_values(rows: pd.DataFrame, *, n_boot: int = DEFAULT_N_BOOT, seed: int = 0,
                           level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """agent and FIELDS across cohorts: the mean over a model's (cohort, market) observations, and its interval
    resampling distinct markets (every cohort's observation on a drawn market comes with it)."""
    if "cohort" not in rows.columns:
        rows = rows.assign(cohort="")
    obs = _observations(rows, ("cohort",)).assign(_all="")
    if not len(obs):
        return pd.DataFrame(columns=["agent", *FIELDS])
    res = cluster_bootstrap(obs, RETURN, higher_is_better=True, market="market_id", cluster="_all",
                            n_boot=n_boot, seed=seed, level=level)
    return _table(res)


__all__ = ["DECISION_VALUE", "FIELDS", "KELLY_FRACTION", "MAX_BET_FRACTION", "RETURN", "cohort_decision_values",
           "decision_returns", "kelly_stake", "pooled_decision_values", "with_decision_returns"]
