"""A cohort's board is the same to the last bit whichever cohorts share the `cohort_boards` call.

The board cache computes the cohorts it misses in batches of any make-up, and a reader without the cache computes
every cohort at once; pandas' grouped means choose their kernel from the whole frame (a NaN anywhere in it, or
group ids out of order, leave the fast path), so a batch computation gave a cohort's means a last digit apart
depending on its neighbours."""

from __future__ import annotations

import numpy as np
import pandas as pd
from arena.scoring.board import cohort_boards


def _frames(n_cohorts: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Cohorts of 4 agents: the first's bets all resolved (no NaN in its Brier column), the others with open
    bets (NaN), questions asked in two rounds, prices and stakes of many digits."""
    rng = np.random.default_rng(seed)
    forecasts, bets, ports = [], [], []
    for c in range(n_cohorts):
        cohort = f"c{c:02d}"
        agents = [f"m{k}" for k in range(4)]
        outcomes = {f"q{m}": float(rng.integers(0, 2)) for m in range(12)}
        for a in agents:
            for m in range(12):
                for rnd in ("r1", "r2"):
                    forecasts.append(dict(cohort=cohort, agent=a, market_id=f"q{m}", question=f"q{m}@{rnd}",
                                          probability=float(rng.uniform(0.01, 0.99)),
                                          market_price=float(rng.uniform(0.05, 0.95)),
                                          outcome_yes=outcomes[f"q{m}"] if m < 10 else np.nan))
            for m in range(12):
                open_bet = c > 0 and m >= 9
                bets.append(dict(cohort=cohort, agent=a, market_id=f"q{m}", side=str(rng.choice(["YES", "NO"])),
                                 amount=float(rng.uniform(1, 250)), max_bet=250.0,
                                 cash_at_decision=float(rng.uniform(500, 1000)),
                                 price_yes_at_bet=float(rng.uniform(0.05, 0.95)),
                                 stated_probability=float(rng.uniform(0.01, 0.99)),
                                 outcome_yes=np.nan if open_bet else outcomes[f"q{m}"]))
            ports.append(dict(cohort=cohort, agent=a, starting_balance=1000.0,
                              total_value=float(rng.uniform(800, 1200))))
    return pd.DataFrame(forecasts), pd.DataFrame(bets), pd.DataFrame(ports)


def _of(frame: pd.DataFrame, cohorts: list[str]) -> pd.DataFrame:
    return frame[frame["cohort"].isin(cohorts)].reset_index(drop=True)


def test_a_cohorts_board_does_not_depend_on_the_cohorts_computed_with_it():
    f, b, p = _frames(6, 0)
    opts = dict(n_boot=20, seed=3)
    together = cohort_boards(f, b, p, **opts)
    for subset in (["c00"], ["c00", "c03"], ["c02", "c04", "c05"]):
        alone = cohort_boards(_of(f, subset), _of(b, subset), _of(p, subset), **opts)
        for c in subset:
            pd.testing.assert_frame_equal(alone[c], together[c], check_exact=True)
    assert list(together) == [f"c{c:02d}" for c in range(6)]
