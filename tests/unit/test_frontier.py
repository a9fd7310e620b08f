"""The cost–skill frontier on planted data: a cheaper-and-better model dominates, intervals cover the planted
values, the Pareto frontier is the non-dominated set."""

import numpy as np
import pandas as pd
import pytest

from arena.scoring.frontier import FRONTIER_COLUMNS, cost_skill_frontier, pareto_front


def _planted(skills: dict[str, float], costs: dict[str, float], n_markets: int = 60, seed: int = 1):
    """Market-level observations around each model's planted Brier − market (sd 0.02, shared market noise) and
    100 calls per model around its planted cost per call (micro-USD)."""
    rng = np.random.default_rng(seed)
    shared = rng.normal(0, 0.02, n_markets)
    obs = pd.DataFrame([{"agent": m, "market_id": f"m{k}", "diff_market": s + shared[k] + rng.normal(0, 0.01)}
                        for m, s in skills.items() for k in range(n_markets)])
    calls = pd.DataFrame([{"agent": m, "cost_micros": float(max(0, round(rng.normal(c, c * 0.1))))}
                          for m, c in costs.items() for _ in range(100)])
    return obs, calls, {m: n_markets for m in skills}


def test_a_cheaper_and_better_model_dominates():
    obs, calls, resolved = _planted({"cheap-good": -0.03, "dear-bad": 0.02}, {"cheap-good": 1_000, "dear-bad": 5_000})
    t = cost_skill_frontier(obs, calls, resolved, n_boot=400, seed=3).set_index("model")
    assert list(t.reset_index().columns) == list(FRONTIER_COLUMNS)
    assert t.at["dear-bad", "p_dominated"] > 0.95
    assert t.at["cheap-good", "p_dominated"] < 0.05
    assert bool(t.at["cheap-good", "on_frontier"]) and not bool(t.at["dear-bad", "on_frontier"])
    # cost per resolved forecast: 100 calls of ~1000 micro-USD over 60 resolved forecasts
    assert t.at["cheap-good", "cost_usd"] == pytest.approx(calls[calls.agent == "cheap-good"].cost_micros.sum() / 1e6 / 60)
    assert t.at["cheap-good", "cost_usd_lo"] < t.at["cheap-good", "cost_usd"] < t.at["cheap-good", "cost_usd_hi"]
    lo, hi = t.at["dear-bad", "brier_minus_market_lo"], t.at["dear-bad", "brier_minus_market_hi"]
    assert lo < 0.02 < hi


def test_a_trade_off_leaves_both_on_the_frontier_and_neither_dominated():
    obs, calls, resolved = _planted({"cheap-bad": 0.02, "dear-good": -0.03}, {"cheap-bad": 1_000, "dear-good": 5_000})
    t = cost_skill_frontier(obs, calls, resolved, n_boot=300).set_index("model")
    assert t["on_frontier"].all()
    assert (t["p_dominated"] < 0.05).all()


def test_indistinguishable_models_are_neither_surely_dominated_nor_surely_safe():
    obs, calls, resolved = _planted({"a": 0.0, "b": 0.0}, {"a": 1_000, "b": 1_000}, n_markets=200)
    t = cost_skill_frontier(obs, calls, resolved, n_boot=1000).set_index("model")
    p = t["p_dominated"]
    assert p.max() < 0.6 and p.min() > 0.02  # each is dominated in some draws, neither in most
    assert p.sum() <= 1.0  # two models cannot dominate each other in one draw


def test_a_model_without_a_reported_cost_is_listed_but_never_on_the_frontier():
    obs, calls, resolved = _planted({"a": 0.0, "free": -0.1}, {"a": 1_000, "free": 1})
    calls.loc[calls.agent == "free", "cost_micros"] = np.nan
    t = cost_skill_frontier(obs, calls, resolved, n_boot=50).set_index("model")
    assert np.isnan(t.at["free", "cost_usd"]) and np.isnan(t.at["free", "p_dominated"])
    assert not t.at["free", "on_frontier"] and t.at["a", "on_frontier"]
    assert t.at["a", "p_dominated"] == 0.0  # a model without a cost dominates no one


def test_seeded_and_empty():
    obs, calls, resolved = _planted({"a": 0.0, "b": 0.01}, {"a": 1_000, "b": 900})
    one = cost_skill_frontier(obs, calls, resolved, n_boot=100, seed=5)
    pd.testing.assert_frame_equal(one, cost_skill_frontier(obs, calls, resolved, n_boot=100, seed=5))
    assert cost_skill_frontier(obs.iloc[:0], calls, resolved).empty


def test_pareto_front_by_hand():
    cost = np.array([1.0, 2.0, 3.0, 2.0, np.nan])
    skill = np.array([0.0, -0.1, -0.1, 0.05, -1.0])
    assert pareto_front(cost, skill).tolist() == [True, True, False, False, False]
