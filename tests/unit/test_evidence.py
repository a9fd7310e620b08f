"""The market as the unit of evidence: per-market observations, the paired-test tiers (stable across seeds and
draws, never splitting on tiny evidence, never keeping a wholly-worse row with the leader, showing a copy of a
reference once), the market-clustered pools and the confidence sequences on one observation per market — each
checked on data shaped like the arena's: several rounds per market, a persistent per-market error, cohorts that
share markets."""

import numpy as np
import pandas as pd
import pytest

from arena.scoring.board import cohort_board, overall_board
from arena.scoring.evidence import (MIN_TIER_MARKETS, cluster_t_test, cohort_differences, equal_to_reference,
                                    headline_intervals, market_frame, market_rows, market_sequence, paired_tiers,
                                    pooled_difference)
from arena.scoring.headline import REF_HALF, REF_MARKET
from arena.scoring.sequential import compare_sequentially
from arena.scoring.stats import cluster_bootstrap


def _world(rng, n_markets, rounds, skills, *, market_sd=0.08, round_sd=0.02, cohort="c1", markets=None,
           truth=None):
    """Forecast rows of one cohort: each market has a true probability, an outcome drawn from it, a price near
    it; a seat with skill s states truth + (1 − s)·(a persistent per-market error + a per-round error)."""
    markets = markets if markets is not None else [f"m{i:03d}" for i in range(n_markets)]
    truth = truth if truth is not None else rng.uniform(0.1, 0.9, len(markets))
    outcome = (rng.random(len(markets)) < truth).astype(float)
    price = np.clip(truth + rng.normal(0, 0.1, len(markets)), 0.02, 0.98)
    rows = []
    for name, skill in skills.items():
        persistent = rng.normal(0, market_sd, len(markets)) * (1 - skill) * 4
        for r in range(rounds):
            p = np.clip(truth + persistent + rng.normal(0, round_sd, len(markets)), 0.01, 0.99)
            rows.append(pd.DataFrame({"cohort": cohort, "agent": name, "market_id": markets,
                                      "question": [f"{m}@{r}" for m in markets], "probability": p,
                                      "outcome_yes": outcome, "market_price": price, "round": r}))
    return pd.concat(rows, ignore_index=True)


def _no_bets():
    return pd.DataFrame({c: pd.Series(dtype=float) for c in ("agent", "side", "amount", "max_bet", "outcome_yes")})


def _ports(agents):
    return pd.DataFrame({"agent": list(agents), "starting_balance": 1000.0, "total_value": 1000.0})


def test_a_market_is_one_observation_the_mean_over_its_rounds():
    rows = pd.DataFrame({"cohort": "c", "agent": "a", "market": ["m1", "m1", "m1", "m2"], "round": [0, 1, 2, 0],
                         "brier": [0.1, 0.2, 0.6, 0.5]})
    obs = market_frame(rows).set_index("market")
    assert obs.at["m1", "brier"] == pytest.approx(0.3) and obs.at["m1", "n_rounds"] == 3
    assert obs.at["m2", "brier"] == pytest.approx(0.5)
    # the headline is the mean over markets (0.4), not over market@round rows (0.35)
    f = pd.DataFrame({"agent": "a", "market_id": ["m1", "m1", "m1", "m2"], "question": ["1@0", "1@1", "1@2", "2@0"],
                      "probability": [np.sqrt(0.1), np.sqrt(0.2), np.sqrt(0.6), np.sqrt(0.5)],
                      "outcome_yes": 0.0, "market_price": 0.5})
    board = cohort_board(f, _no_bets(), _ports(["a"]), n_boot=20).set_index("agent")
    assert board.at["a", "forecast_brier"] == pytest.approx(0.4)
    assert board.at["a", "n_forecasts"] == 4 and board.at["a", "n_markets"] == 2


def _separated_board(seed=0):
    rng = np.random.default_rng(seed)
    return _world(rng, 60, 3, {"sharp": 0.9, "good": 0.6, "noisy": 0.0})


def test_tiers_are_equal_across_seeds_and_between_1000_and_10000_draws():
    f = _separated_board()
    boards = [cohort_board(f, _no_bets(), _ports(["sharp", "good", "noisy"]), n_boot=1000, seed=s)
              for s in range(6)]
    boards.append(cohort_board(f, _no_bets(), _ports(["sharp", "good", "noisy"]), n_boot=10_000, seed=0))
    tiers = [b.set_index("agent")["tier"].sort_index() for b in boards]
    for t in tiers[1:]:
        pd.testing.assert_series_equal(t, tiers[0])
    assert tiers[0].nunique() >= 2  # the board does separate: the equality is not that of an all-1 column
    # the intervals still move with the seed (they are a bootstrap); the tiers do not
    lo = [b.set_index("agent").at["noisy", "forecast_brier_lo"] for b in boards]
    assert len(set(lo)) > 1


def test_a_row_whose_interval_lies_wholly_above_the_leaders_is_never_in_its_tier():
    checked = 0
    for seed in range(8):
        f = _separated_board(seed)
        board = cohort_board(f, _no_bets(), _ports(["sharp", "good", "noisy"]), n_boot=400, seed=seed)
        lead = board.iloc[0]
        above = board[board["forecast_brier_lo"] > lead["forecast_brier_hi"]]
        assert (above["tier"] > lead["tier"]).all()
        checked += len(above)
    assert checked >= 4  # the rule was exercised


def test_the_leader_rule_holds_even_when_the_paired_test_does_not_reject():
    # two rows on 12 markets, b wholly above a in the displayed intervals yet with p ≥ alpha: made to hold
    obs = pd.DataFrame({"agent": ["a"] * 12 + ["b"] * 12, "market_id": [f"m{i}" for i in range(12)] * 2,
                        "brier": [0.1] * 12 + [0.1 + 0.3 * (i % 2) for i in range(12)]})
    iv = pd.DataFrame({"agent": ["a", "b"], "ci_low": [0.09, 0.2], "ci_high": [0.11, 0.3]})
    without = paired_tiers(obs, alpha=1e-9)
    with_iv = paired_tiers(obs, alpha=1e-9, intervals=iv)
    assert list(without.tier) == [1.0, 1.0] and list(with_iv.tier) == [1.0, 2.0]


def test_tiny_evidence_never_splits_rows():
    # four resolved markets, every difference 2.5e-7 and all alike: a t-test would call it certain
    obs = pd.DataFrame({"agent": ["a"] * 4 + ["b"] * 4, "market_id": ["m1", "m2", "m3", "m4"] * 2,
                        "brier": [0.1, 0.2, 0.3, 0.4] + [0.1 + 2.5e-7, 0.2 + 2.5e-7, 0.3 + 2.5e-7, 0.4 + 2.5e-7]})
    t = paired_tiers(obs)
    assert list(t.tier) == [1.0, 1.0] and t.tested == 0
    # enough markets, but a difference below the displayed precision: still one tier
    n = 3 * MIN_TIER_MARKETS
    rng = np.random.default_rng(1)
    base = rng.uniform(0, 0.5, n)
    obs = pd.DataFrame({"agent": ["a"] * n + ["b"] * n, "market_id": [f"m{i}" for i in range(n)] * 2,
                        "brier": np.r_[base, base + 1e-5 + rng.normal(0, 1e-7, n)]})
    t = paired_tiers(obs)
    assert t.tested == 1 and t.p[0, 1] < 1e-6 and list(t.tier) == [1.0, 1.0]


def test_a_copy_of_a_reference_is_shown_once_and_adds_no_pair():
    rng = np.random.default_rng(3)
    f = _world(rng, 40, 2, {"sharp": 0.9, "noisy": 0.0})
    copier = f[f["agent"] == "sharp"].assign(agent="market-follower", probability=lambda d: d["market_price"])
    f = pd.concat([f, copier], ignore_index=True)
    board = cohort_board(f, _no_bets(), _ports(["sharp", "noisy", "market-follower"]), n_boot=200)
    rows = board.set_index("agent")
    assert rows.at["market-follower", "same_as"] == REF_MARKET
    assert rows.at["sharp", "same_as"] is None and rows.at[REF_MARKET, "same_as"] is None
    assert rows.at["market-follower", "tier"] == rows.at[REF_MARKET, "tier"]
    from arena.scoring.headline import score_forecasts as _scored_forecasts
    scored = _scored_forecasts(f.drop(columns=["cohort"]))
    assert equal_to_reference(scored, [REF_HALF, REF_MARKET]) == {"market-follower": REF_MARKET}
    obs = market_rows(scored[scored["brier"].notna()], ("brier",), keys=())
    t = paired_tiers(obs, same_as={"market-follower": REF_MARKET})
    t_without = paired_tiers(obs[obs["agent"] != "market-follower"])
    assert t.tested == t_without.tested == 6  # four rows without the copy: six pairs, the copy adds none
    one_off = f.copy()
    one_off.loc[one_off.index[-1], "probability"] = 0.5  # one question differs: no longer a copy
    assert equal_to_reference(_scored_forecasts(one_off.drop(columns=["cohort"])), [REF_MARKET]) == {}


def test_provisional_rows_get_no_tier():
    rng = np.random.default_rng(4)
    f = _world(rng, 40, 1, {"sharp": 0.9, "noisy": 0.0})
    late = f[(f["agent"] == "sharp") & (f["market_id"] < "m005")].assign(agent="late")  # 5 resolved forecasts
    board = cohort_board(pd.concat([f, late]), _no_bets(), _ports(["sharp", "noisy", "late"]), n_boot=200)
    rows = board.set_index("agent")
    assert bool(rows.at["late", "provisional"]) and np.isnan(rows.at["late", "tier"])
    assert rows.drop(index="late")["tier"].notna().all()


def test_seats_of_equal_skill_are_told_apart_at_most_at_the_nominal_rate():
    """200 boards, each with six seats of one skill (25 markets × 3 rounds, a persistent per-market error and a
    per-round one): the share of boards where any two sit in different tiers stays within the 5 % level
    (BH over the 15 pairs controls the family-wise rate under the complete null), with Monte-Carlo slack."""
    rng = np.random.default_rng(2026)
    split = 0
    boards = 200
    for _ in range(boards):
        f = _world(rng, 25, 3, {f"s{i}": 0.5 for i in range(6)}, market_sd=0.05, round_sd=0.03)
        obs = market_rows(f.assign(brier=(f["probability"] - f["outcome_yes"]) ** 2), ("brier",))
        t = paired_tiers(obs)
        split += int(np.nanmax(t.tier) > 1)
    rate = split / boards
    assert rate <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / boards)  # 0.081: the level plus two Monte-Carlo errors


def test_cluster_t_test_is_the_paired_t_test_with_one_unit_per_market():
    from scipy import stats

    rng = np.random.default_rng(5)
    d = rng.normal(0.01, 0.05, 30)
    t = cluster_t_test(d, np.arange(30))
    ref = stats.ttest_1samp(d, 0.0)
    assert t.p == pytest.approx(ref.pvalue, rel=1e-10) and t.df == 29
    assert t.se == pytest.approx(d.std(ddof=1) / np.sqrt(30))


def test_cluster_t_test_on_integer_codes_is_the_test_on_the_names_bit_for_bit():
    """A caller may pass its clusters factorized in sorted order (the model pages do, for 420 tests over one set of
    cells): the codes it passes may skip values (markets whose differences are all NaN) and repeat."""
    rng = np.random.default_rng(8)
    names = np.array([f"m{i:03d}" for i in rng.integers(0, 60, 400)], dtype=object)
    d = rng.normal(0.0, 0.1, 400)
    d[rng.random(400) < 0.3] = np.nan
    codes = pd.factorize(names, sort=True)[0]
    for cut in (400, 5, 1):
        by_name, by_code = cluster_t_test(d[:cut], names[:cut]), cluster_t_test(d[:cut], codes[:cut])
        assert np.array_equal(np.array(list(vars(by_name).values()), dtype=float),
                              np.array(list(vars(by_code).values()), dtype=float), equal_nan=True)
    assert cluster_t_test(d, codes).markets == len(set(names[np.isfinite(d)])) > 2


def _shared(rng, cohorts=4, n=30, rounds=2):
    """`cohorts` cohorts asking the same n markets (one outcome per market, a model's per-market error shared
    by every cohort that asked it)."""
    markets = [f"m{i:03d}" for i in range(n)]
    truth = rng.uniform(0.1, 0.9, n)
    outcome = (rng.random(n) < truth).astype(float)
    err = {a: rng.normal(0, s, n) for a, s in (("a", 0.05), ("b", 0.25))}
    rows = []
    for c in range(cohorts):
        for a in ("a", "b"):
            for r in range(rounds):
                p = np.clip(truth + err[a] + rng.normal(0, 0.02, n), 0.01, 0.99)
                rows.append(pd.DataFrame({"cohort": f"c{c}", "agent": a, "market_id": markets,
                                          "question": [f"{m}@{r}" for m in markets], "probability": p,
                                          "outcome_yes": outcome, "market_price": truth}))
    return pd.concat(rows, ignore_index=True)


def test_the_overall_interval_widens_when_cohorts_share_markets():
    f = _shared(np.random.default_rng(6))
    board = overall_board(f, _no_bets(), _ports([]).assign(cohort=[]), n_boot=1000).set_index("model")
    width = board.at["b", "forecast_brier_hi"] - board.at["b", "forecast_brier_lo"]
    # the old design: cohorts as independent clusters, markets resampled within each
    f2 = f.assign(brier=(f["probability"] - f["outcome_yes"]) ** 2)
    obs = market_rows(f2, ("brier",), keys=("cohort",))
    old = cluster_bootstrap(obs, "brier", n_boot=1000, cluster="cohort").table.set_index("agent")
    old_width = old.at["b", "ci_high"] - old.at["b", "ci_low"]
    assert width > 1.5 * old_width  # four cohorts on the same markets carry one cohort's evidence, not four
    # the pooled difference counts distinct markets too
    pooled = pooled_difference(f2.rename(columns={"market_id": "market"}), "a", "b")
    assert pooled.markets == 30 and pooled.n == 120
    naive = cluster_t_test(obs.pivot_table(index=["cohort", "market_id"], columns="agent", values="brier").eval("a - b"),
                           np.arange(120))
    assert pooled.ci_high - pooled.ci_low > 1.5 * (naive.ci_high - naive.ci_low)
    per = cohort_differences(f2.rename(columns={"market_id": "market"}), "a", "b")
    assert list(per["n"]) == [30] * 4


def test_pooled_interval_covers_under_shared_markets():
    """Coverage of the market-clustered 95 % interval for a − b when 4 cohorts share 30 markets (300 worlds):
    the true difference is the expectation over markets, estimated by the mean over many worlds' samples."""
    rng = np.random.default_rng(7)
    hits, ests = [], []
    worlds = []
    for _ in range(300):
        f = _shared(rng, cohorts=4, n=30, rounds=1)
        f = f.assign(brier=(f["probability"] - f["outcome_yes"]) ** 2).rename(columns={"market_id": "market"})
        worlds.append(pooled_difference(f, "a", "b"))
    truth = np.mean([w.estimate for w in worlds])
    hits = [w.ci_low <= truth <= w.ci_high for w in worlds]
    assert 0.91 <= np.mean(hits) <= 0.99


def test_sequences_on_markets_keep_false_wins_within_alpha_under_daily_peeking():
    """The null (two seats of one skill), four rounds per market with a persistent per-market error: one
    observation per market keeps the share of paths whose sequence ever excludes 0 within α = 0.05 (200 paths of
    150 markets, looked at after every resolution); taking market@round rows one by one does not."""
    rng = np.random.default_rng(11)
    paths, alpha = 200, 0.05
    by_market, by_round = 0, 0
    for _ in range(paths):
        f = _world(rng, 150, 4, {"a": 0.3, "b": 0.3}, market_sd=0.08, round_sd=0.01)
        f = f.assign(brier=(f["probability"] - f["outcome_yes"]) ** 2,
                     resolved_at=f["market_id"].str[1:].astype(int))
        cs, _ = compare_sequentially(f, "a", "b", alpha, question="market_id", value="brier", time="resolved_at")
        by_market += cs.first_index is not None
        rounds, _ = compare_sequentially(f, "a", "b", alpha, question="question", value="brier", time="resolved_at")
        by_round += rounds.first_index is not None
    assert cs.n == 150 and rounds.n == 600
    assert by_market / paths <= alpha
    assert by_round > by_market  # the per-round sequence overstates the evidence


def test_the_benchmark_entry_points_take_cohort_agent_market_round_rows():
    rng = np.random.default_rng(12)
    f = _shared(rng, cohorts=2, n=20, rounds=3)
    rows = pd.DataFrame({"cohort": f["cohort"], "agent": f["agent"], "market": f["market_id"],
                         "round": f["question"].str.split("@").str[1].astype(int),
                         "brier": (f["probability"] - f["outcome_yes"]) ** 2, "outcome": f["outcome_yes"]})
    iv = headline_intervals(rows, n_boot=200)
    assert len(iv) == 2 * 2 + 2 and (iv["ci_low"] <= iv["estimate"]).all() and (iv["estimate"] <= iv["ci_high"]).all()
    overall = iv[iv["cohort"].isna()].set_index("agent")
    assert overall.at["a", "estimate"] == pytest.approx(market_frame(rows).query("agent == 'a'")["brier"].mean())
    cs = market_sequence(rows.assign(resolved_at=rows["market"].str[1:].astype(int)), "a", "b")
    assert cs.n == 20  # one observation per distinct market, its cohorts and rounds averaged
