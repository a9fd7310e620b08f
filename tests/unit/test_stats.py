"""Paired stratified bootstrap: hand-computed tiny cases, BH by hand, reproducibility, missing cells, and the
vectorised draws against a naive per-draw pandas loop on the very same draws."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.scoring import registry
from arena.scoring.stats import (
    TABLE_COLUMNS,
    benjamini_hochberg,
    bootstrap_bet_metrics,
    draw_counts,
    draw_indices,
    first_probabilities,
    pairwise_p_values,
    paired_bootstrap,
    significance_tiers,
)


def long_frame(values: dict[str, list[float]], cohort: list[str] | None = None) -> pd.DataFrame:
    """agent → per-market values (NaN = the agent did not bet there), markets m0, m1, …"""
    rows = []
    for agent, vals in values.items():
        for i, v in enumerate(vals):
            if not np.isnan(v):
                row = {"agent": agent, "market_id": f"m{i}", "brier": v}
                if cohort is not None:
                    row["cohort"] = cohort[i]
                rows.append(row)
    return pd.DataFrame(rows)


# -- hand-computed cases ---------------------------------------------------------------------------------------


def test_agent_better_on_every_market_ranks_first_with_probability_one():
    rng = np.random.default_rng(3)
    base = rng.uniform(0.1, 0.5, 40)
    frame = long_frame({"good": list(base), "bad": list(base + 0.05), "worse": list(base + 0.2)})
    res = paired_bootstrap(frame, "brier", n_boot=200, seed=1)
    t = res.table.set_index("agent")
    assert list(res.table["agent"]) == ["good", "bad", "worse"]
    assert t.loc["good", "p_first"] == 1.0 and t.loc["bad", "p_first"] == 0.0
    assert res.p_value.loc["good", "bad"] == pytest.approx(2 / 201)  # the smallest p a 200-draw bootstrap gives
    assert t.loc["bad", "p_vs_first"] == pytest.approx(2 / 201)
    assert list(t["tier"]) == [1.0, 2.0, 3.0]
    assert t.loc["bad", "pct_beat_first"] == 0.0 and np.isnan(t.loc["good", "pct_beat_first"])
    assert t.loc["bad", "diff_vs_first"] == pytest.approx(0.05)
    assert res.diff.loc["worse", "good"] == pytest.approx(0.2)
    assert t.loc["good", "estimate"] == pytest.approx(base.mean())
    assert res.first == "good"


def test_identical_agents_have_p_one_and_share_the_tier():
    base = list(np.linspace(0.0, 0.8, 30))
    frame = long_frame({"a": base, "b": base, "c": base})
    res = paired_bootstrap(frame, "brier", n_boot=100, seed=0)
    p = res.p_value.to_numpy()
    assert np.allclose(p[~np.eye(3, dtype=bool)], 1.0)
    assert np.isnan(np.diag(p)).all()
    assert (res.table["tier"] == 1).all()
    assert (res.table["rank"] == 1).all()
    assert np.allclose(res.table["p_first"], 1 / 3)  # ties split
    assert (res.table["pct_beat_first"].dropna() == 0).all()


def test_higher_is_better_flips_the_order():
    frame = long_frame({"x": [10.0, 20.0, 30.0] * 10, "y": [0.0, 10.0, 20.0] * 10})
    frame = frame.rename(columns={"brier": "pnl"})
    res = paired_bootstrap(frame, "pnl", n_boot=50)
    assert res.higher_is_better is True  # from the registry: P/L, higher is better
    assert res.table["agent"].iloc[0] == "x"
    assert res.table.set_index("agent").loc["x", "p_first"] == 1.0


def test_direction_must_be_known():
    frame = long_frame({"x": [0.1, 0.2]}).rename(columns={"brier": "mystery"})
    with pytest.raises(ValueError, match="higher_is_better"):
        paired_bootstrap(frame, "mystery", n_boot=5)
    assert paired_bootstrap(frame, "mystery", n_boot=5, higher_is_better=False).table["estimate"].iloc[0] == (
        pytest.approx(0.15))


def test_benjamini_hochberg_against_hand_computation():
    # sorted: 0.005 (k=1), 0.01 (k=2), 0.03 (k=3), 0.04 (k=4); m·p/k = 0.02, 0.02, 0.04, 0.04
    assert np.allclose(benjamini_hochberg([0.01, 0.04, 0.03, 0.005]), [0.02, 0.04, 0.04, 0.02])
    # step-up minimum: 0.01·4/1 = 0.04, 0.02·4/2 = 0.04, 0.03·4/3 = 0.04, 0.5·4/4 = 0.5
    assert np.allclose(benjamini_hochberg([0.5, 0.03, 0.02, 0.01]), [0.5, 0.04, 0.04, 0.04])
    # monotonicity fix: 0.04·3/2 = 0.06 but 0.041·3/3 = 0.041 is smaller further up → 0.041
    assert np.allclose(benjamini_hochberg([0.04, 0.041, 0.001]), [0.041, 0.041, 0.003])
    out = benjamini_hochberg([0.2, np.nan, 0.9])  # NaN is not a test: m = 2
    assert np.isnan(out[1]) and np.allclose(out[[0, 2]], [0.4, 0.9])
    assert benjamini_hochberg([]).size == 0
    assert np.allclose(benjamini_hochberg([0.8, 0.9]), [0.9, 0.9])  # capped, never above 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
def test_benjamini_hochberg_properties(ps):
    p = np.array(ps)
    adj = benjamini_hochberg(p)
    assert (adj >= p - 1e-15).all() and (adj <= 1.0).all()
    order = np.argsort(p, kind="stable")
    assert (np.diff(adj[order]) >= -1e-15).all()  # adjusted p-values keep the order of the raw ones


def test_pairwise_p_values_by_hand():
    # 4 draws of 2 agents: differences a − b = −1, −1, −1, +1 → #≤0 = 3, #≥0 = 1 → p = 2·(1 + 1)/5 = 0.8
    draws = np.array([[0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    p, used = pairwise_p_values(draws)
    assert p[0, 1] == pytest.approx(0.8) and p[1, 0] == pytest.approx(0.8)
    assert used[0, 1] == 4
    # a NaN draw is left out of the pair: 3 draws all negative → p = 2·1/4
    draws = np.array([[0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [np.nan, 0.0]])
    p, used = pairwise_p_values(draws)
    assert p[0, 1] == pytest.approx(0.5) and used[0, 1] == 3


def test_first_probabilities_split_ties():
    draws = np.array([[0.1, 0.1, 0.3], [0.2, 0.1, np.nan], [np.nan, np.nan, np.nan]])
    # draw 0: a and b tie (½ each); draw 1: b; draw 2 has no value and is not counted
    assert np.allclose(first_probabilities(draws, higher_is_better=False), [0.25, 0.75, 0.0])
    assert np.allclose(first_probabilities(draws, higher_is_better=True), [0.5, 0.0, 0.5])


def test_significance_tiers_rule():
    est = np.array([0.10, 0.11, 0.20, np.nan])
    padj = np.full((4, 4), 1.0)
    padj[0, 2] = padj[2, 0] = 0.01  # only a vs c is significant
    tiers = significance_tiers(est, padj, higher_is_better=False)
    assert tiers[:3].tolist() == [1.0, 1.0, 2.0] and np.isnan(tiers[3])
    # made non-decreasing down the table: b (2nd) is significantly worse than a, c (3rd) is not → c gets b's tier
    padj = np.full((3, 3), 1.0)
    padj[0, 1] = padj[1, 0] = 0.01
    assert significance_tiers(est[:3], padj, False).tolist() == [1.0, 2.0, 2.0]


# -- draws: strata, reproducibility, missing cells -------------------------------------------------------------


def test_draws_stay_within_their_stratum_and_are_reproducible():
    idx = draw_indices([3, 5, 2], 50, seed=7)
    assert idx.shape == (50, 10)
    assert ((idx[:, :3] >= 0) & (idx[:, :3] < 3)).all()
    assert ((idx[:, 3:8] >= 3) & (idx[:, 3:8] < 8)).all()
    assert ((idx[:, 8:] >= 8) & (idx[:, 8:] < 10)).all()
    assert np.array_equal(idx, draw_indices([3, 5, 2], 50, seed=7))
    assert not np.array_equal(idx, draw_indices([3, 5, 2], 50, seed=8))
    assert np.array_equal(idx[20:30], draw_indices([3, 5, 2], 10, seed=7, first_draw=20))  # chunking is invisible
    counts = draw_counts(idx, 10)
    assert np.allclose(counts[:, :3].sum(axis=1), 3) and np.allclose(counts[:, 3:8].sum(axis=1), 5)


def test_same_seed_same_result_and_prefix_property():
    rng = np.random.default_rng(0)
    frame = long_frame({a: list(rng.random(25)) for a in "abcd"}, cohort=["c1"] * 10 + ["c2"] * 15)
    r1 = paired_bootstrap(frame, "brier", n_boot=60, seed=42)
    r2 = paired_bootstrap(frame, "brier", n_boot=60, seed=42)
    r3 = paired_bootstrap(frame, "brier", n_boot=20, seed=42)
    pd.testing.assert_frame_equal(r1.table, r2.table)
    pd.testing.assert_frame_equal(r1.draws.iloc[:20], r3.draws)
    assert not r1.draws.equals(paired_bootstrap(frame, "brier", n_boot=60, seed=43).draws)


def test_missing_cells_average_over_the_agents_own_markets():
    # a bets on m0..m3; b only on m0 and m3
    frame = long_frame({"a": [0.1, 0.2, 0.3, 0.4], "b": [0.0, np.nan, np.nan, 0.6]})
    res = paired_bootstrap(frame, "brier", n_boot=300, seed=5, min_resolved=3)
    t = res.table.set_index("agent")
    assert t.loc["a", "estimate"] == pytest.approx(0.25) and t.loc["b", "estimate"] == pytest.approx(0.3)
    assert t.loc["b", "n_markets"] == 2 and t.loc["b", "n"] == 2
    assert bool(t.loc["b", "provisional"]) and not bool(t.loc["a", "provisional"])
    idx = draw_indices([4], 300, seed=5)
    counts = draw_counts(idx, 4)
    b_has = (counts[:, 0] + counts[:, 3]) > 0
    assert np.array_equal(np.isfinite(res.draws["b"].to_numpy()), b_has)  # NaN exactly when none of b's markets
    assert t.loc["b", "draws_used"] == b_has.sum() < 300
    with np.errstate(invalid="ignore"):
        expected_b = (counts[:, 0] * 0.0 + counts[:, 3] * 0.6) / (counts[:, 0] + counts[:, 3])
    assert np.allclose(res.draws["b"].to_numpy()[b_has], expected_b[b_has])
    # % more accurate than No. 1 (a) on markets both scored: m0 (0.0 < 0.1, better) and m3 (0.6 > 0.4) → 50 %
    assert t.loc["b", "pct_beat_first"] == 50.0 and t.loc["b", "n_common_first"] == 2


def test_several_rows_per_market_and_unscored_rows():
    frame = pd.DataFrame({
        "agent": ["a", "a", "a", "b", "b", "c"],
        "market_id": ["m0", "m0", "m1", "m0", "m1", "m0"],
        "brier": [0.1, 0.3, 0.5, 0.2, np.nan, np.nan],  # NaN rows: unresolved, not scored
    })
    res = paired_bootstrap(frame, "brier", n_boot=30)
    t = res.table.set_index("agent")
    assert t.loc["a", "estimate"] == pytest.approx(0.3) and t.loc["a", "n"] == 3 and t.loc["a", "n_markets"] == 2
    assert t.loc["c", "n"] == 0 and np.isnan(t.loc["c", "estimate"]) and np.isnan(t.loc["c", "ci_low"])
    assert res.table["agent"].iloc[-1] == "c"  # an agent without a score sorts last
    assert list(res.table.columns) == list(TABLE_COLUMNS)


def test_skill_and_total_statistics():
    frame = pd.DataFrame({
        "agent": ["a", "a", "b", "b"], "market_id": ["m0", "m1", "m0", "m1"],
        "brier": [0.04, 0.16, 0.36, 0.0], "brier_market": [0.09, 0.25, 0.25, 0.09], "pnl": [5.0, -1.0, 2.0, 3.0],
    })
    res = paired_bootstrap(frame, "brier", statistic="skill", reference="brier_market", metric="bss_vs_market",
                           n_boot=40)
    t = res.table.set_index("agent")
    assert res.higher_is_better
    assert t.loc["a", "estimate"] == pytest.approx(1 - 0.20 / 0.34)
    assert t.loc["b", "estimate"] == pytest.approx(1 - 0.36 / 0.34)
    const = paired_bootstrap(frame, "brier", statistic="skill", reference=0.25, metric="bss_vs_0_25", n_boot=10)
    assert const.table.set_index("agent").loc["a", "estimate"] == pytest.approx(1 - 0.10 / 0.25)
    total = paired_bootstrap(frame, "pnl", statistic="total", n_boot=10).table.set_index("agent")
    assert total.loc["a", "estimate"] == 4.0 and total.loc["b", "estimate"] == 5.0


def test_provisional_flag_per_agent_cohort_and_threshold_stated():
    frame = long_frame({"a": [0.1] * 30, "b": [0.2] * 30}, cohort=["c1"] * 25 + ["c2"] * 5)
    res = paired_bootstrap(frame, "brier", n_boot=10, min_resolved=20)
    assert not res.table["provisional"].any()
    cells = res.cells.set_index(["stratum", "agent"])
    assert cells.loc[("c1", "a"), "n"] == 25 and not cells.loc[("c1", "a"), "provisional"]
    assert cells.loc[("c2", "a"), "n"] == 5 and cells.loc[("c2", "a"), "provisional"]
    assert res.min_resolved == 20 and "20" in res.notes["provisional"]


def test_empty_input_gives_empty_results_not_zero():
    empty = pd.DataFrame({"agent": [], "market_id": [], "brier": []})
    res = paired_bootstrap(empty, "brier", n_boot=10)
    assert res.table.empty and res.first is None
    only_nan = pd.DataFrame({"agent": ["a"], "market_id": ["m"], "brier": [np.nan]})
    t = paired_bootstrap(only_nan, "brier", n_boot=10).table
    assert t["n"].iloc[0] == 0 and np.isnan(t["estimate"].iloc[0]) and np.isnan(t["p_first"].iloc[0])


def test_metrics_are_registered():
    for name in ("p_first", "pct_beat_first", "p_vs_first", "p_vs_first_adj", "tier"):
        assert name in registry.METRICS


# -- vectorised versus a naive loop on the same draws ----------------------------------------------------------


def naive_bootstrap(frame: pd.DataFrame, n_boot: int, seed: int) -> pd.DataFrame:
    """Per draw: build the resampled long frame (market copies included) and group-by mean, in pandas."""
    scored = frame[frame["brier"].notna()]
    markets = (scored[["cohort", "market_id"]].drop_duplicates()
               .sort_values(["cohort", "market_id"]).reset_index(drop=True))
    sizes = markets.groupby("cohort", sort=True).size().to_numpy()
    idx = draw_indices(sizes, n_boot, seed)
    agents = sorted(frame["agent"].unique())
    out = []
    for b in range(n_boot):
        drawn = markets.iloc[idx[b]].reset_index(drop=True)
        sample = drawn.merge(scored, on=["cohort", "market_id"], how="inner")  # each copy brings all its rows
        out.append(sample.groupby("agent")["brier"].mean().reindex(agents))
    return pd.DataFrame(out).reset_index(drop=True)


def test_vectorised_draws_equal_a_naive_loop_on_the_same_draws():
    rng = np.random.default_rng(11)
    rows = []
    for cohort, n_markets in (("c1", 7), ("c2", 4), ("c3", 9)):
        for m in range(n_markets):
            for agent in ("a", "b", "c", "d"):
                if rng.random() < 0.7:  # missing cells
                    for _ in range(int(rng.integers(1, 3))):  # sometimes two bets on a market
                        rows.append({"cohort": cohort, "agent": agent, "market_id": f"{cohort}-{m}",
                                     "brier": float(rng.random())})
    frame = pd.DataFrame(rows)
    res = paired_bootstrap(frame, "brier", n_boot=40, seed=9)
    naive = naive_bootstrap(frame, 40, 9)
    vec = res.draws.to_numpy()
    assert np.array_equal(np.isnan(vec), np.isnan(naive.to_numpy()))
    assert np.allclose(vec, naive.to_numpy(), equal_nan=True)
    lo, hi = np.nanquantile(naive.to_numpy(), [0.025, 0.975], axis=0)
    t = res.table.set_index("agent").loc[sorted(frame["agent"].unique())]
    assert np.allclose(t["ci_low"], lo) and np.allclose(t["ci_high"], hi)


def test_bootstrap_bet_metrics_match_the_leaderboard():
    from arena.scoring.leaderboard import leaderboard, per_bet_scores

    rng = np.random.default_rng(12)
    n = 60
    bets = pd.DataFrame({
        "cohort": "w1",
        "agent": rng.choice(["a", "b", "c"], n),
        "market_id": [f"m{i}" for i in rng.integers(0, 25, n)],
        "side": rng.choice(["YES", "NO"], n),
        "amount": rng.uniform(50, 2500, n),
        "max_bet": 2500.0,
        "outcome_yes": rng.choice([0.0, 1.0, np.nan], n),
        "price_yes_at_bet": rng.uniform(0.05, 0.95, n),
    })
    scored = per_bet_scores(bets)
    results = bootstrap_bet_metrics(scored, n_boot=30, seed=3)
    assert set(results) == {"brier", "brier_stated", "bss_vs_0_25", "bss_vs_market"}
    board = leaderboard(bets, pd.DataFrame({"agent": ["a", "b", "c"], "starting_balance": 1e4,
                                            "total_value": 1e4})).set_index("agent")
    for name in ("brier", "bss_vs_0_25", "bss_vs_market"):
        est = results[name].table.set_index("agent")["estimate"]
        assert np.allclose(est.loc[board.index], board[name], equal_nan=True), name
    assert results["bss_vs_market"].higher_is_better and not results["brier"].higher_is_better
