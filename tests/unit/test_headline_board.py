"""The headline (forecast Brier on the forecast set), the reference rows, skill vs the market, coherence, the one
provisional rule, ranks with ties and the bootstrap across cohorts — hand-computed cases and bounded properties."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.config import parse_config
from arena.errors import ConfigError
from arena.scoring.board import (
    BOARD_COLUMNS,
    RANK_CHOICES,
    check_rank_by,
    cohort_board,
    overall_bet_part,
    overall_board,
    overall_forecast_part,
    rank_with_ties,
)
from arena.scoring.brier import BSS_MARKET_FLOOR, BSS_MARKET_MIN
from arena.scoring.coherence import coherence_gap, contradicting_share, contradicts
from arena.scoring.headline import REF_HALF, REF_MARKET, bss_vs_market_guarded, forecast_summary, score_forecasts
from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED, is_provisional
from arena.scoring.registry import METRICS
from arena.scoring.stats import DEFAULT_MIN_RESOLVED, cluster_bootstrap, cluster_draw_counts


def _forecasts():
    # two agents, three questions: q1 YES, q2 NO, q3 probabilistic 0.3, q4 unresolved (NaN), market prices known
    return pd.DataFrame({
        "agent": ["a"] * 4 + ["b"] * 4,
        "market_id": ["m1", "m2", "m3", "m4"] * 2,
        "question": ["m1@r", "m2@r", "m3@r", "m4@r"] * 2,
        "probability": [0.9, 0.2, 0.5, 0.7, 0.6, 0.6, 0.1, 0.4],
        "market_price": [0.7, 0.4, 0.3, 0.5, 0.7, 0.4, 0.3, 0.5],
        "outcome_yes": [1.0, 0.0, 0.3, np.nan] * 2,
    })


def test_forecast_brier_is_hand_computed_with_references_on_the_same_questions():
    scored = score_forecasts(_forecasts())
    s = forecast_summary(scored).set_index("agent")
    assert set(s.index) == {"a", "b", REF_HALF, REF_MARKET}
    a = (0.1**2 + 0.2**2 + 0.2**2) / 3
    b = (0.4**2 + 0.6**2 + 0.2**2) / 3
    market = (0.3**2 + 0.4**2 + 0.0**2) / 3
    assert s.at["a", "forecast_brier"] == pytest.approx(a)
    assert s.at["b", "forecast_brier"] == pytest.approx(b)
    assert s.at[REF_HALF, "forecast_brier"] == pytest.approx((0.25 + 0.25 + 0.2**2) / 3)
    assert s.at[REF_MARKET, "forecast_brier"] == pytest.approx(market)
    assert s.at["a", "n_forecasts"] == 3  # the unresolved question is not scored
    assert s.at["a", "brier_minus_market"] == pytest.approx(a - market)
    assert s.at["a", "bss_vs_market"] == pytest.approx(1 - a / market)
    assert s.at[REF_MARKET, "kind"] == "reference"


def test_void_and_unresolved_questions_are_not_scored_and_nothing_scored_is_nan_not_zero():
    f = _forecasts().assign(outcome_yes=np.nan)
    s = forecast_summary(score_forecasts(f)).set_index("agent")
    assert (s["n_forecasts"] == 0).all()
    assert s["forecast_brier"].isna().all() and s["bss_vs_market"].isna().all()
    assert (s["bss_vs_market_note"] != "").all()


def test_bss_vs_market_is_guarded_by_the_floor():
    assert bss_vs_market_guarded(0.2, 0.1) == (pytest.approx(-1.0), "")
    value, note = bss_vs_market_guarded(0.04, 0.0000011)  # the −4,517 of the issue
    assert math.isnan(value) and "too small" in note
    assert bss_vs_market_guarded(1.0, BSS_MARKET_FLOOR)[0] == pytest.approx(BSS_MARKET_MIN)


def test_coherence_statistics_hand_computed():
    # Kelly-implied p: YES at 0.4 staking 0.5 of cash → 0.4 + 0.5·0.6 = 0.7; stated 0.6 → gap 0.1
    assert coherence_gap([0.6, 0.2, np.nan], [0.7, 0.5, 0.3]) == pytest.approx((0.1 + 0.3) / 2)
    assert math.isnan(coherence_gap([np.nan], [0.5]))
    # YES at 0.6 stated 0.5 contradicts; YES at 0.4 stated 0.5 does not; NO with YES price 0.3 stated 0.5
    # contradicts (NO costs 0.7 but the agent says NO is worth 0.5); NO with YES price 0.7 stated 0.5 does not;
    # stated = price: no edge, no contradiction; no stated p: unknown
    c = contradicts(["YES", "YES", "NO", "NO", "YES", "NO"], [0.5, 0.5, 0.5, 0.5, 0.4, np.nan],
                    [0.6, 0.4, 0.3, 0.7, 0.4, 0.5])
    assert c[:5].tolist() == [1.0, 0.0, 1.0, 0.0, 0.0] and math.isnan(c[5])
    assert contradicting_share(["YES", "NO"], [0.5, 0.5], [0.6, 0.7]) == pytest.approx(0.5)


def test_ranks_show_ties_as_ties():
    ranks, labels = rank_with_ties([0.2, 0.1, 0.2, np.nan, 0.3], higher_is_better=False)
    assert labels == ["2=", "1", "2=", None, "4"]
    assert ranks[:3].tolist() == [2, 1, 2] and math.isnan(ranks[3])
    _, up = rank_with_ties([1.0, 3.0, 3.0], higher_is_better=True)
    assert up == ["3", "1=", "1="]


def test_one_provisional_rule():
    assert DEFAULT_MIN_RESOLVED == PROVISIONAL_MIN_RESOLVED
    assert is_provisional(PROVISIONAL_MIN_RESOLVED - 1) and not is_provisional(PROVISIONAL_MIN_RESOLVED)
    assert is_provisional([np.nan, 100]).tolist() == [True, False]


def test_rank_keys_are_registered_metrics_and_the_config_validates_them():
    for key in RANK_CHOICES:
        assert check_rank_by(key) == key
    for name in ("forecast_brier", "brier_minus_market", "coherence_gap", "contradicting_bets"):
        assert name in METRICS and METRICS[name].description
    with pytest.raises(ValueError, match="forecast_brier"):
        check_rank_by("brier_band")
    assert parse_config("[leaderboard]\nrank_by = \"pnl\"\n").leaderboard.rank_by == "pnl"
    assert parse_config("").leaderboard.rank_by == "forecast_brier"
    with pytest.raises(ConfigError, match="rank_by"):
        parse_config("[leaderboard]\nrank_by = \"luck\"\n")
    with pytest.raises(ConfigError, match="unknown key"):
        parse_config("[leaderboard]\nrankby = \"pnl\"\n")


# -- beating the market is a tested statement -------------------------------------------------------------------


def _skill_cohort(n_markets: int, agent_noise: float, market_noise: float, seed: int) -> pd.DataFrame:
    """One forecaster with logit noise `agent_noise` around the truth; the market with `market_noise`."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0.05, 0.95, n_markets)
    outcome = (rng.random(n_markets) < truth).astype(float)
    logit = np.log(truth / (1 - truth))

    def noisy(sd: float) -> np.ndarray:
        return 1 / (1 + np.exp(-(logit + sd * rng.standard_normal(n_markets))))

    ids = [f"m{i}" for i in range(n_markets)]
    return pd.DataFrame({"agent": "skilled", "market_id": ids, "question": [i + "@r" for i in ids],
                         "probability": noisy(agent_noise), "market_price": noisy(market_noise),
                         "outcome_yes": outcome})


def _empty_bets():
    return pd.DataFrame({c: pd.Series(dtype=float) for c in ("agent", "side", "amount", "max_bet", "outcome_yes")})


def _portfolios(agents):
    return pd.DataFrame({"agent": agents, "starting_balance": 1000.0, "total_value": 1000.0})


def test_a_planted_skill_beats_the_market_inside_the_bootstrap():
    board = cohort_board(_skill_cohort(400, 0.0, 1.5, 1), _empty_bets(), _portfolios(["skilled"]), n_boot=300)
    row = board.set_index("agent").loc["skilled"]
    assert row["brier_minus_market_hi"] < 0  # the whole interval is below 0: beats the market
    market = board.set_index("agent").loc[REF_MARKET]
    assert row["tier"] < market["tier"] or row["rank"] < market["rank"]
    assert row["tier"] == 1 and market["tier"] > 1


def test_a_forecaster_no_better_than_the_market_cannot_be_told_apart():
    f = _skill_cohort(300, 1.0, 1.0, 2)
    f["probability"] = np.clip(f["market_price"] + np.random.default_rng(3).normal(0, 0.005, len(f)), 0, 1)
    board = cohort_board(f, _empty_bets(), _portfolios(["skilled"]), n_boot=300).set_index("agent")
    row = board.loc["skilled"]
    assert row["brier_minus_market_lo"] <= 0 <= row["brier_minus_market_hi"]
    assert row["tier"] == board.loc[REF_MARKET, "tier"]


# -- the overall board from parts kept across calls ------------------------------------------------------------


def _two_cohorts():
    rng = np.random.default_rng(11)
    frames = []
    for c, seed in (("c1", 1), ("c2", 2)):
        for agent, noise in (("sharp", 0.3), ("blunt", 1.5)):
            f = _skill_cohort(40, noise, 0.8, seed).assign(agent=agent, cohort=c)
            frames.append(f)
    forecasts = pd.concat(frames, ignore_index=True)
    n = 60
    bets = pd.DataFrame({
        "cohort": rng.choice(["c1", "c2"], n), "agent": rng.choice(["sharp", "blunt"], n),
        "market_id": [f"m{i}" for i in rng.integers(0, 40, n)], "side": rng.choice(["YES", "NO"], n),
        "amount": rng.uniform(1, 250, n), "max_bet": 250.0, "cash_at_decision": 1000.0,
        "price_yes_at_bet": rng.uniform(0.05, 0.95, n), "stated_probability": rng.uniform(0, 1, n),
        "outcome_yes": rng.choice([0.0, 1.0, np.nan], n)})
    return forecasts, bets


@pytest.mark.parametrize("rank_by", ["forecast_brier", "bss_vs_market", "log_score", "implied_brier", "pnl",
                                     "irt_skill"])
def test_the_overall_board_from_kept_parts_equals_the_board_computed_whole(rank_by):
    """A caller keeps the forecast and bet parts while only the portfolios move (a price): the board from those
    parts and the new portfolios is the board computed from the three frames, and the parts are not changed."""
    forecasts, bets = _two_cohorts()
    options = dict(rank_by=rank_by, n_boot=60, seed=4)
    fpart, bpart = overall_forecast_part(forecasts, **options), overall_bet_part(bets, **options)
    kept = (fpart.table.copy(), bpart.per.copy())
    kinds = {"sharp": "llm", "blunt": "baseline"}
    for total in ([900.0, 1100.0, 1000.0, 1000.0], [950.0, 1300.0, 700.0, 1010.0]):
        ports = pd.DataFrame({"cohort": ["c1", "c1", "c2", "c2"], "agent": ["sharp", "blunt"] * 2,
                              "starting_balance": 1000.0, "total_value": total})
        whole = overall_board(forecasts, bets, ports, kinds=kinds, **options)
        parted = overall_board(forecasts, bets, ports, kinds=kinds, **options, forecast_part=fpart, bet_part=bpart)
        pd.testing.assert_frame_equal(whole, parted, check_exact=True)
        assert whole.set_index("model")["pnl"].to_dict()["sharp"] == total[0] + total[2] - 2000.0
    pd.testing.assert_frame_equal(fpart.table, kept[0], check_exact=True)
    pd.testing.assert_frame_equal(bpart.per, kept[1], check_exact=True)
    # and a part of other frames gives another board: the parts are what the board is made of
    other = overall_forecast_part(forecasts.assign(probability=1 - forecasts["probability"]), **options)
    moved = overall_board(forecasts, bets, ports, kinds=kinds, **options, forecast_part=other, bet_part=bpart)
    assert not moved["forecast_brier"].equals(whole["forecast_brier"])


# -- no value outside its documented range ---------------------------------------------------------------------

RANGES = {
    "forecast_brier": (0, 1), "forecast_brier_lo": (0, 1), "forecast_brier_hi": (0, 1),
    "brier_minus_market": (-1, 1), "brier_minus_market_lo": (-1, 1), "brier_minus_market_hi": (-1, 1),
    "bss_vs_market": (BSS_MARKET_MIN, 1), "implied_brier": (0, 1), "kelly_brier": (0, 1), "stated_brier": (0, 1),
    "bss_vs_0_25": (-3, 1), "win_rate": (0, 1), "crowd_proxy": (0, 1), "coherence_gap": (0, 1),
    "contradicting_bets": (0, 1),
    # the rule loses at most its stake, which the cap bounds; a cheap contract can pay many times it
    "decision_value": (-0.25, np.inf), "decision_value_lo": (-0.25, np.inf), "decision_value_hi": (-0.25, np.inf),
}

unit = st.floats(0.0, 1.0, allow_nan=False)


@settings(max_examples=8, deadline=None)
@given(st.lists(st.tuples(unit, unit, unit, unit, st.sampled_from([0.0, 1.0, 0.5, np.nan])), min_size=1,
                max_size=12),
       st.lists(st.tuples(st.sampled_from(["a", "b"]), st.sampled_from(["YES", "NO"]), st.floats(0.0, 1.0),
                          st.floats(0.01, 0.99), unit, st.sampled_from([0.0, 1.0, np.nan])), max_size=6))
def test_every_board_value_stays_in_its_documented_range(questions, bet_rows):
    rows = []
    for i, (pa, pb, price, _, outcome) in enumerate(questions):
        for agent, p in (("a", pa), ("b", pb)):
            rows.append({"cohort": "c1" if i % 2 else "c2", "agent": agent, "market_id": f"m{i}",
                         "question": f"m{i}@r", "probability": p, "market_price": price, "outcome_yes": outcome})
    forecasts = pd.DataFrame(rows)
    bets = pd.DataFrame([{"cohort": "c1", "agent": a, "market_id": "m0", "side": s, "amount": 250.0 * frac,
                          "max_bet": 250.0, "cash_at_decision": 1000.0, "price_yes_at_bet": q,
                          "stated_probability": p, "outcome_yes": o} for a, s, frac, q, p, o in bet_rows],
                        columns=["cohort", "agent", "market_id", "side", "amount", "max_bet", "cash_at_decision",
                                 "price_yes_at_bet", "stated_probability", "outcome_yes"])
    ports = pd.DataFrame({"cohort": ["c1", "c1", "c2", "c2"], "agent": ["a", "b", "a", "b"],
                          "starting_balance": 1000.0, "total_value": [900.0, 1100.0, 1000.0, 1000.0]})
    boards = [cohort_board(forecasts[forecasts["cohort"] == c], bets[bets["cohort"] == c],
                           ports[ports["cohort"] == c], n_boot=20) for c in ("c1", "c2")]
    boards.append(overall_board(forecasts, bets, ports, n_boot=20).rename(columns={"model": "agent"}))
    for board in boards:
        assert set(BOARD_COLUMNS) <= set(board.columns)
        for col, (lo, hi) in RANGES.items():
            x = board[col].to_numpy(dtype=float)
            x = x[np.isfinite(x)]
            assert ((x >= lo - 1e-12) & (x <= hi + 1e-12)).all(), (col, x)
        both = board[["forecast_brier", "forecast_brier_lo", "forecast_brier_hi"]].dropna().to_numpy(dtype=float)
        assert ((both[:, 1] <= both[:, 0] + 1e-12) & (both[:, 0] <= both[:, 2] + 1e-12)).all()
        dv = board[["decision_value", "decision_value_lo", "decision_value_hi"]].dropna().to_numpy(dtype=float)
        assert ((dv[:, 1] <= dv[:, 0] + 1e-12) & (dv[:, 0] <= dv[:, 2] + 1e-12)).all()


# -- the bootstrap across cohorts -------------------------------------------------------------------------------


def test_cluster_draws_resample_cohorts_then_markets_within_them():
    counts = cluster_draw_counts([3, 2, 4], 50, seed=5)
    assert counts.shape == (50, 9)
    # every drawn copy of a cohort brings as many markets as it has: totals are multiples … summing to 9
    assert (counts.sum(axis=1) % 1 == 0).all()
    sizes = np.array([3, 2, 4])
    blocks = np.stack([counts[:, :3].sum(1) / 3, counts[:, 3:5].sum(1) / 2, counts[:, 5:].sum(1) / 4], axis=1)
    assert np.allclose(blocks, np.round(blocks)) and (blocks.sum(axis=1) == 3).all()
    assert (counts @ np.ones(9) == blocks @ sizes).all()
    # the draws depend only on (seed, draws, sizes): a fresh computation equals the memoised one, which is read-only
    from arena.scoring.stats import _cluster_draw_counts

    np.testing.assert_array_equal(counts, _cluster_draw_counts(np.array([3, 2, 4]), 50, 5))
    assert cluster_draw_counts([3, 2, 4], 50, seed=5) is counts and not counts.flags.writeable
    assert not np.array_equal(counts, cluster_draw_counts([3, 2, 4], 50, seed=6))


def test_cluster_bootstrap_intervals_cover_the_true_mean():
    """Synthetic cohorts with a cohort effect: the 95 % interval of the pooled mean covers the true mean in
    roughly 95 % of replications (bounded: 80 replications × 200 draws)."""
    rng = np.random.default_rng(11)
    covered = 0
    reps = 80
    for r in range(reps):
        rows = []
        for c in range(8):
            effect = rng.normal(0, 0.05)
            for m in range(15):
                rows.append({"cohort": c, "market_id": m, "agent": "x",
                             "value": 0.2 + effect + rng.normal(0, 0.1)})
        res = cluster_bootstrap(pd.DataFrame(rows), "value", n_boot=200, seed=r)
        t = res.table.iloc[0]
        covered += t["ci_low"] <= 0.2 <= t["ci_high"]
    assert 0.85 <= covered / reps <= 1.0


def test_cluster_bootstrap_estimate_is_the_pooled_mean_and_tiers_separate_clear_differences():
    rows = [{"cohort": c, "market_id": m, "agent": a, "value": base + 0.01 * ((m * 7 + c) % 3)}
            for c in range(5) for m in range(20) for a, base in (("good", 0.1), ("bad", 0.3))]
    res = cluster_bootstrap(pd.DataFrame(rows), "value", n_boot=200)
    t = res.table.set_index("agent")
    assert t.at["good", "estimate"] == pytest.approx(np.mean([r["value"] for r in rows if r["agent"] == "good"]))
    assert t.at["good", "tier"] == 1 and t.at["bad", "tier"] == 2
    assert (t["ci_low"] <= t["estimate"]).all() and (t["estimate"] <= t["ci_high"]).all()


def test_seed_tables_bss_vs_market_no_longer_blows_up():
    from arena.scoring.brier import bss_vs_market
    from arena.scoring.leaderboard import leaderboard

    # the case: the market priced 0.9995 on an outcome that happened; the bet's implied P(YES) 0.8
    assert math.isnan(bss_vs_market([0.8], [0.9995], [1.0]))
    assert bss_vs_market([0.8, 0.3], [0.6, 0.5], [1.0, 0.0]) == pytest.approx(1 - (0.04 + 0.09) / (0.16 + 0.25))
    bets = pd.DataFrame({"agent": ["a"], "side": ["YES"], "amount": [200.0], "max_bet": [250.0],
                         "outcome_yes": [1.0], "price_yes_at_bet": [0.9995]})
    board = leaderboard(bets, pd.DataFrame({"agent": ["a"], "starting_balance": [1000.0], "total_value": [1000.0]}))
    assert math.isnan(board.at[0, "bss_vs_market"]) and board.at[0, "brier"] == pytest.approx(0.04)
