"""Interim (market-relative, provisional) scores and the validity of the crowd proxy against the final Brier."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.scoring import registry
from arena.scoring.interim import interim_forecast_scores, interim_per_bet, interim_scores, provisional_outcome
from arena.scoring.validity import pearson, proxy_validity, proxy_validity_by_cohort, rank_average, spearman


def bets() -> pd.DataFrame:
    # max_bet 100: amount 80 → confidence 0.8. YES at 0.8 → f 0.8; NO at 0.8 → f 0.2
    return pd.DataFrame({
        "agent": ["a", "a", "a", "b"],
        "market_id": ["m1", "m2", "m3", "m1"],
        "side": ["YES", "YES", "NO", "YES"],
        "amount": [80.0, 80.0, 80.0, 50.0],
        "max_bet": [100.0] * 4,
        "outcome_yes": [1.0, np.nan, np.nan, 1.0],  # m1 resolved YES; m2, m3 open (m3 void)
        "void": [False, False, True, False],
        "price_yes_at_bet": [0.6, 0.5, 0.3, 0.6],
        "price_yes_now": [1.0, 0.7, 0.4, 1.0],
        "stated_probability": [0.9, np.nan, 0.1, 0.5],
    })


def test_provisional_outcome():
    used, prov = provisional_outcome([1.0, np.nan, np.nan, np.nan], [0.9, 0.7, np.nan, 0.5],
                                     [False, False, False, True])
    assert used[0] == 1.0 and used[1] == 0.7 and np.isnan(used[2]) and np.isnan(used[3])
    assert prov.tolist() == [False, True, False, False]


def test_interim_per_bet_scores_open_bets_against_the_current_price():
    out = interim_per_bet(bets())
    assert out["provisional"].tolist() == [False, True, False, False]
    assert out["interim_brier"].iloc[0] == pytest.approx(0.04)  # (0.8 − 1)²
    assert out["interim_brier"].iloc[1] == pytest.approx(0.01)  # (0.8 − 0.7)², against the price now
    assert np.isnan(out["interim_brier"].iloc[2])  # void: never scored
    assert out["interim_brier_market"].iloc[1] == pytest.approx(0.04)  # market at bet 0.5 vs 0.7
    assert out["interim_brier_stated"].iloc[0] == pytest.approx(0.01)


def test_interim_scores_per_agent_and_market_relative_skill():
    t = interim_scores(bets()).set_index("agent")
    a = t.loc["a"]
    assert a["n"] == 3 and a["n_scored"] == 2 and a["n_provisional"] == 1 and a["provisional"]
    assert a["interim_brier"] == pytest.approx((0.04 + 0.01) / 2)
    # the market on exactly a's two scored bets: (0.6 − 1)² = 0.16 and (0.5 − 0.7)² = 0.04
    assert a["interim_market_brier"] == pytest.approx(0.10)
    assert a["interim_bss_vs_market"] == pytest.approx(1 - 0.025 / 0.10)
    assert a["market_brier"] == pytest.approx(0.16)  # resolved bets only: the final reference
    b = t.loc["b"]
    assert not b["provisional"] and b["interim_brier"] == pytest.approx(0.25)  # 0.5 on a YES win
    # no open bet → interim equals the resolved-only numbers
    assert b["interim_market_brier"] == pytest.approx(b["market_brier"])


def test_interim_forecasts_and_empty():
    f = pd.DataFrame({"agent": ["a", "a", "b"], "probability": [0.2, 0.9, 0.5], "outcome_yes": [0.0, np.nan, np.nan],
                      "price_yes_now": [0.1, 0.6, np.nan], "price_yes_at_forecast": [0.3, 0.5, 0.5]})
    t = interim_forecast_scores(f).set_index("agent")
    assert t.loc["a", "interim_brier"] == pytest.approx((0.04 + 0.09) / 2)
    assert t.loc["a", "n_provisional"] == 1
    assert t.loc["a", "interim_market_brier"] == pytest.approx((0.09 + 0.01) / 2)
    assert t.loc["b", "n_scored"] == 0 and np.isnan(t.loc["b", "interim_brier"])  # no price, no outcome: NaN
    with pytest.raises(ValueError):
        interim_scores(bets().drop(columns="price_yes_now"))


def test_rank_average_and_correlations_by_hand():
    assert rank_average([10, 20, 20, 30]).tolist() == [1.0, 2.5, 2.5, 4.0]
    r = rank_average([3.0, np.nan, 1.0])
    assert r[0] == 2.0 and np.isnan(r[1]) and r[2] == 1.0
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert np.isnan(pearson([1, 2], [1, 2]))  # fewer than 3
    assert np.isnan(pearson([1, 1, 1], [1, 2, 3]))  # no spread
    # Spearman is monotone-invariant: exp does not change it
    x = np.array([0.1, 0.5, 0.3, 0.9])
    assert spearman(x, np.exp(x * 10)) == pytest.approx(1.0)
    # hand: ranks x = [1, 2.5, 2.5, 4], y = [1, 2, 3, 4] → Pearson of the ranks
    xr, yr = np.array([1, 2.5, 2.5, 4]), np.array([1, 2, 3, 4.0])
    expected = np.corrcoef(xr, yr)[0, 1]
    assert spearman([1, 2, 2, 3], [10, 20, 30, 40]) == pytest.approx(expected)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=30))
def test_rank_average_matches_pandas(values):
    assert np.allclose(rank_average(values), pd.Series(values).rank(method="average").to_numpy())


def test_proxy_validity_uses_within_cohort_zscores():
    # cohort c2 is c1 shifted and scaled (an easier or harder week): its z-scores are identical to c1's, so the
    # pooled z-score correlation is that of one cohort, while pooling raw scores would mix the levels
    proxy1, brier1 = np.array([0.01, 0.02, 0.03, 0.05]), np.array([0.10, 0.12, 0.15, 0.14])
    scores = pd.DataFrame({
        "cohort": ["c1"] * 4 + ["c2"] * 4,
        "agent": list("abcd") * 2,
        "crowd_proxy": np.concatenate([proxy1, 0.5 + 10 * proxy1]),
        "brier": np.concatenate([brier1, 0.2 + 2 * brier1]),
    })
    res = proxy_validity(scores)
    assert res["n"] == 8 and res["n_cohorts"] == 2
    assert res["proxy_validity_pearson"] == pytest.approx(pearson(proxy1, brier1))
    # ranks within c1: proxy 1, 2, 3, 4 and brier 1, 2, 4, 3 → 1 − 6·(0+0+1+1)/(4·15) = 0.8; duplicated → same
    assert spearman(proxy1, brier1) == pytest.approx(0.8)
    # pooled, each z-score appears twice up to float noise, which may order the near-twins either way
    assert res["proxy_validity_spearman"] == pytest.approx(0.8, abs=0.05)
    assert pearson(scores["crowd_proxy"], scores["brier"]) != pytest.approx(res["proxy_validity_pearson"])
    by = proxy_validity_by_cohort(scores).set_index("cohort")
    assert by.loc["c1", "proxy_validity_spearman"] == pytest.approx(0.8)
    few = proxy_validity(scores.iloc[:2])
    assert np.isnan(few["proxy_validity_pearson"]) and np.isnan(few["proxy_validity_spearman"])
    with_nan = scores.assign(brier=[np.nan] + list(scores["brier"].iloc[1:]))
    assert proxy_validity(with_nan)["n"] == 7


def test_registered():
    for name in ("interim_brier", "interim_bss_vs_market", "market_brier", "proxy_validity_spearman"):
        assert name in registry.METRICS
    assert "PROVISIONAL" in registry.METRICS["interim_brier"].description


def test_interim_skill_vs_market_is_guarded_like_every_bss_vs_market_cell():
    """A market whose Brier on the agent's bets is ≈ 0 leaves nothing to divide by: NaN, not −4,517."""
    from arena.scoring.brier import BSS_MARKET_MIN, guarded_skill_vs_market

    assert np.isnan(guarded_skill_vs_market(0.04, 0.0000098))
    assert guarded_skill_vs_market(0.04, 0.08) == pytest.approx(0.5)
    assert guarded_skill_vs_market(1.0, 0.01) == pytest.approx(BSS_MARKET_MIN)  # the bound of the range
    bets = pd.DataFrame({"agent": ["a"], "side": ["YES"], "amount": [500.0], "max_bet": [2500.0],
                         "outcome_yes": [np.nan], "price_yes_at_bet": [0.9995], "price_yes_now": [0.9999],
                         "cash_at_decision": [10000.0]})
    row = interim_scores(bets).iloc[0]
    assert row["interim_market_brier"] < 0.01 and np.isnan(row["interim_bss_vs_market"])
