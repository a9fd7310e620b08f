"""Crowd-proxy scores (seed 000): hand-worked aggregates, leave-one-out, z-scores, and a naive reference."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.scoring.proxy import (
    AGGREGATORS,
    aggregate_rows,
    extremize,
    proxy_score,
    proxy_scores,
    within_batch_zscores,
    zscores,
)


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def logit(p: float) -> float:
    return math.log(p / (1.0 - p))


# Three questions: a = {x 0.2, y 0.4, z 0.9}, b = {x 0.5, y 0.7}, c = {x 0.3}
SMALL = pd.DataFrame(
    {
        "question": ["a", "b", "a", "c", "a", "b"],
        "forecaster": ["x", "x", "y", "x", "z", "y"],
        "probability": [0.2, 0.5, 0.4, 0.3, 0.9, 0.7],
    }
)


def by_forecaster(scores: pd.DataFrame) -> pd.DataFrame:
    return scores.set_index("forecaster")


# --- aggregators by hand ---------------------------------------------------------------------------------------


def test_extremize_alpha_2() -> None:
    # 0.8² / (0.8² + 0.2²) = 0.64 / 0.68
    np.testing.assert_allclose(extremize([0.5, 0.8, 0.2, 0.0, 1.0]), [0.5, 0.64 / 0.68, 0.04 / 0.68, 0.0, 1.0])


def test_aggregates_including_own_forecast() -> None:
    agg = aggregate_rows(SMALL["question"], SMALL["probability"])
    # question a: mean 0.5, median 0.4, extremized mean 0.25/(0.25+0.25) = 0.5,
    #   logit pool σ(√3 · (ln 0.25 + ln(2/3) + ln 9)/3)
    # question b: mean 0.6, median 0.6, extremized 0.36/(0.36+0.16), logit pool σ(√3 · (0 + ln(7/3))/2)
    # question c: the lone 0.3 for mean and median, 0.09/(0.09+0.49), σ(√3 · ln(3/7))
    pool_a = sigmoid(math.sqrt(3) * (math.log(0.25) + math.log(2 / 3) + math.log(9)) / 3)
    pool_b = sigmoid(math.sqrt(3) * math.log(7 / 3) / 2)
    pool_c = sigmoid(math.sqrt(3) * math.log(3 / 7))
    rows = ["a", "b", "a", "c", "a", "b"]
    want = {
        "mean": {"a": 0.5, "b": 0.6, "c": 0.3},
        "median": {"a": 0.4, "b": 0.6, "c": 0.3},
        "ext_mean": {"a": 0.5, "b": 0.36 / 0.52, "c": 0.09 / 0.58},
        "logit_pool": {"a": pool_a, "b": pool_b, "c": pool_c},
    }
    for name in AGGREGATORS:
        np.testing.assert_allclose(agg[name], [want[name][q] for q in rows], rtol=1e-12, err_msg=name)


def test_leave_one_out_aggregates() -> None:
    agg = aggregate_rows(SMALL["question"], SMALL["probability"], leave_one_out=True)
    # rows: x@a sees {0.4, 0.9}; x@b sees {0.7}; y@a sees {0.2, 0.9}; x@c sees nothing; z@a {0.2, 0.4}; y@b {0.5}
    np.testing.assert_allclose(agg["mean"], [0.65, 0.7, 0.55, np.nan, 0.3, 0.5])
    np.testing.assert_allclose(agg["median"], [0.65, 0.7, 0.55, np.nan, 0.3, 0.5])
    np.testing.assert_allclose(agg["ext_mean"][0], 0.65**2 / (0.65**2 + 0.35**2))
    np.testing.assert_allclose(agg["logit_pool"][0], sigmoid(math.sqrt(3) * (logit(0.4) + logit(0.9)) / 2))
    assert math.isnan(agg["ext_mean"][3]) and math.isnan(agg["logit_pool"][3])


def test_medians_odd_even_and_leave_one_out_in_shuffled_order() -> None:
    # group g4 = {0.1, 0.3, 0.6, 0.9}: median (0.3+0.6)/2 = 0.45; without 0.1 → 0.6, 0.3 → 0.6, 0.6 → 0.3, 0.9 → 0.3
    # group g3 = {0.1, 0.3, 0.6}: median 0.3; without 0.1 → 0.45, without 0.3 → 0.35, without 0.6 → 0.2
    group = ["g4", "g3", "g4", "g3", "g4", "g3", "g4"]
    p = [0.9, 0.6, 0.1, 0.1, 0.6, 0.3, 0.3]
    with_self = aggregate_rows(group, p, aggregators=["median"])["median"]
    np.testing.assert_allclose(with_self, [0.45, 0.3, 0.45, 0.3, 0.45, 0.3, 0.45])
    loo = aggregate_rows(group, p, leave_one_out=True, aggregators=["median"])["median"]
    np.testing.assert_allclose(loo, [0.3, 0.2, 0.6, 0.45, 0.3, 0.35, 0.6])


def test_leave_one_out_median_with_ties() -> None:
    # {0.5, 0.5, 0.5, 0.2}: removing any 0.5 leaves {0.2, 0.5, 0.5} → 0.5; removing 0.2 leaves 0.5s → 0.5
    loo = aggregate_rows(["q"] * 4, [0.5, 0.5, 0.2, 0.5], leave_one_out=True, aggregators=["median"])["median"]
    np.testing.assert_allclose(loo, [0.5, 0.5, 0.5, 0.5])
    # {0.2, 0.2, 0.8}: removing a 0.2 → (0.2+0.8)/2 = 0.5; removing 0.8 → 0.2
    loo = aggregate_rows(["q"] * 3, [0.2, 0.8, 0.2], leave_one_out=True, aggregators=["median"])["median"]
    np.testing.assert_allclose(loo, [0.5, 0.2, 0.5])


def test_logit_pool_clips_certain_forecasts() -> None:
    # 0 and 1 clip to 1e-3 and 1 − 1e-3: their logits cancel → 0.5
    agg = aggregate_rows(["q", "q"], [0.0, 1.0], aggregators=["logit_pool"])["logit_pool"]
    np.testing.assert_allclose(agg, [0.5, 0.5])
    # two forecasts of 0: the pool is σ(√3 · logit(0.001)), finite; the squared error uses the raw 0
    pooled = sigmoid(math.sqrt(3) * logit(0.001))
    scores = proxy_scores(
        pd.DataFrame({"question": ["q", "q"], "forecaster": ["u", "v"], "probability": [0.0, 0.0]}),
        aggregators=["logit_pool"],
    )
    np.testing.assert_allclose(scores["proxy_logit_pool"], [pooled**2, pooled**2])


# --- proxy scores by hand --------------------------------------------------------------------------------------


def test_proxy_scores_including_own_forecast() -> None:
    s = by_forecaster(proxy_scores(SMALL))
    # mean aggregator: x: ((0.2−0.5)² + (0.5−0.6)² + (0.3−0.3)²)/3 = (0.09 + 0.01 + 0)/3
    #                  y: ((0.4−0.5)² + (0.7−0.6)²)/2 = 0.01;  z: (0.9−0.5)² = 0.16
    np.testing.assert_allclose(s.loc[["x", "y", "z"], "proxy_mean"], [0.10 / 3, 0.01, 0.16])
    # median aggregator: x: (0.2−0.4)² + (0.5−0.6)² + 0 = 0.05 / 3;  y: (0 + 0.01)/2;  z: (0.9−0.4)² = 0.25
    np.testing.assert_allclose(s.loc[["x", "y", "z"], "proxy_median"], [0.05 / 3, 0.005, 0.25])
    assert s.loc[["x", "y", "z"], "n"].tolist() == [3, 2, 1]
    assert s.loc[["x", "y", "z"], "n_proxy"].tolist() == [3, 2, 1]


def test_proxy_scores_leave_one_out_differs_and_drops_lone_forecasts() -> None:
    s = by_forecaster(proxy_scores(SMALL, leave_one_out=True))
    # x: a (0.2−0.65)² = 0.2025, b (0.5−0.7)² = 0.04, c has no others → excluded: (0.2025 + 0.04)/2
    # y: a (0.4−0.55)² = 0.0225, b (0.7−0.5)² = 0.04 → 0.03125;  z: a (0.9−0.3)² = 0.36
    np.testing.assert_allclose(s.loc[["x", "y", "z"], "proxy_mean"], [0.12125, 0.03125, 0.36])
    assert s.loc[["x", "y", "z"], "n"].tolist() == [3, 2, 1]
    assert s.loc[["x", "y", "z"], "n_proxy"].tolist() == [2, 2, 1]
    with_self = by_forecaster(proxy_scores(SMALL))
    assert (s["proxy_mean"] > with_self["proxy_mean"]).all()  # removing oneself pulls the consensus away


def test_single_forecaster_question_under_leave_one_out_gives_nan() -> None:
    frame = pd.DataFrame({"question": ["only"], "forecaster": ["x"], "probability": [0.3]})
    loo = proxy_scores(frame, leave_one_out=True)
    assert loo["n"].tolist() == [1] and loo["n_proxy"].tolist() == [0]
    for name in AGGREGATORS:
        assert math.isnan(loo[f"proxy_{name}"].iloc[0])
    assert proxy_scores(frame)["proxy_mean"].tolist() == [0.0]  # with itself, it is its own consensus


def test_questions_are_pooled_within_their_batch() -> None:
    frame = pd.DataFrame(
        {
            "batch": ["b1", "b1", "b2", "b2"],
            "question": ["q", "q", "q", "q"],
            "forecaster": ["x", "y", "x", "y"],
            "probability": [0.2, 0.4, 0.8, 1.0],
        }
    )
    s = proxy_scores(frame).set_index(["batch", "forecaster"])
    # b1: mean 0.3 → 0.01 each; b2: mean 0.9 → 0.01 each (pooled across batches it would be 0.6)
    np.testing.assert_allclose(s["proxy_mean"], [0.01, 0.01, 0.01, 0.01])
    assert list(s.index) == [("b1", "x"), ("b1", "y"), ("b2", "x"), ("b2", "y")]


def test_mean_aggregator_leave_one_out_scales_exactly() -> None:
    # with n forecasts, x − mean = (n−1)/n · (x − mean of others): the two errors differ by ((n−1)/n)²
    rng = np.random.default_rng(7)
    p = rng.random(5)
    with_self = aggregate_rows(["q"] * 5, p, aggregators=["mean"])["mean"]
    loo = aggregate_rows(["q"] * 5, p, leave_one_out=True, aggregators=["mean"])["mean"]
    np.testing.assert_allclose((p - with_self) ** 2, (4 / 5) ** 2 * (p - loo) ** 2)


def test_empty_input() -> None:
    empty = pd.DataFrame({"question": [], "forecaster": [], "probability": []})
    out = proxy_scores(empty)
    assert len(out) == 0
    assert {"forecaster", "n", "n_proxy", "proxy_mean", "proxy_logit_pool"} <= set(out.columns)
    assert all(len(v) == 0 for v in aggregate_rows([], []).values())
    assert math.isnan(proxy_score([], []))
    assert math.isnan(proxy_score([0.3], [np.nan]))


def test_proxy_score_by_hand() -> None:
    assert proxy_score([0.2, 0.6, 0.1], [0.5, 0.5, np.nan]) == pytest.approx((0.09 + 0.01) / 2)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="probabilities"):
        aggregate_rows(["q"], [1.2])
    with pytest.raises(ValueError, match="probabilities"):
        aggregate_rows(["q"], [np.nan])
    with pytest.raises(ValueError, match="aggregator"):
        aggregate_rows(["q"], [0.5], aggregators=["geometric"])
    with pytest.raises(ValueError, match="column"):
        proxy_scores(pd.DataFrame({"question": ["q"], "probability": [0.5]}))


# --- vectorised vs a naive per-question loop ---------------------------------------------------------------------


def naive_proxy(frame: pd.DataFrame, leave_one_out: bool) -> dict[tuple[str, str], dict[str, float]]:
    """A straightforward reference: loop over questions, and over forecasts within each question."""
    rows = list(frame[["batch", "question", "forecaster", "probability"]].itertuples(index=False, name=None))
    by_question: dict[tuple[str, str], list[tuple[int, float]]] = defaultdict(list)
    for i, (batch, question, _, p) in enumerate(rows):
        by_question[(batch, question)].append((i, p))
    errors: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for members in by_question.values():
        for i, p in members:
            others = [x for j, x in members if j != i] if leave_one_out else [x for _, x in members]
            if not others:
                continue
            mean = sum(others) / len(others)
            clipped = [min(max(x, 1e-3), 1 - 1e-3) for x in others]
            aggregates = {
                "mean": mean,
                "median": statistics.median(others),
                "ext_mean": mean**2 / (mean**2 + (1 - mean) ** 2),
                "logit_pool": sigmoid(math.sqrt(3) * sum(logit(x) for x in clipped) / len(clipped)),
            }
            key = (rows[i][0], rows[i][2])
            for name, agg in aggregates.items():
                errors[key][name].append((p - agg) ** 2)
    return {key: {name: sum(v) / len(v) for name, v in by_agg.items()} for key, by_agg in errors.items()}


def random_forecasts(rng: np.random.Generator, n_questions: int, n_forecasters: int) -> pd.DataFrame:
    rows = []
    for q in range(n_questions):
        batch = f"b{q % 3}"
        k = int(rng.integers(1, n_forecasters + 1))
        for f in rng.choice(n_forecasters, size=k, replace=False):
            p = float(rng.random())
            kind = rng.random()
            if kind < 0.2:
                p = round(p, 1)  # ties
            elif kind < 0.25:
                p = float(rng.integers(0, 2))  # certainty, exercising the logit clip
            rows.append((batch, f"q{q}", f"f{f}", p))
    frame = pd.DataFrame(rows, columns=["batch", "question", "forecaster", "probability"])
    return frame.sample(frac=1.0, random_state=int(rng.integers(1 << 30))).reset_index(drop=True)


@pytest.mark.parametrize("leave_one_out", [False, True])
def test_vectorised_matches_naive_loop(leave_one_out: bool) -> None:
    rng = np.random.default_rng(20240611)
    frame = random_forecasts(rng, n_questions=400, n_forecasters=9)
    fast = proxy_scores(frame, leave_one_out=leave_one_out).set_index(["batch", "forecaster"])
    slow = naive_proxy(frame, leave_one_out)
    for key, row in fast.iterrows():
        for name in AGGREGATORS:
            expected = slow.get(key, {}).get(name, float("nan"))
            got = row[f"proxy_{name}"]
            if math.isnan(expected):
                assert math.isnan(got), (key, name)
            else:
                assert got == pytest.approx(expected, rel=1e-9, abs=1e-12), (key, name)


@settings(max_examples=60, deadline=None)
@given(
    data=st.lists(
        st.tuples(
            st.sampled_from(["q1", "q2", "q3"]),
            st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.5, 0.9, 1.0]) | st.floats(0.0, 1.0),
        ),
        min_size=1,
        max_size=12,
    ),
    leave_one_out=st.booleans(),
)
def test_vectorised_matches_naive_on_generated_cases(data: list[tuple[str, float]], leave_one_out: bool) -> None:
    frame = pd.DataFrame(
        {
            "batch": "all",
            "question": [q for q, _ in data],
            "forecaster": [f"f{i}" for i in range(len(data))],  # one forecast per forecaster: scores per row
            "probability": [p for _, p in data],
        }
    )
    fast = proxy_scores(frame, leave_one_out=leave_one_out).set_index(["batch", "forecaster"])
    slow = naive_proxy(frame, leave_one_out)
    for key, row in fast.iterrows():
        for name in AGGREGATORS:
            expected = slow.get(key, {}).get(name, float("nan"))
            if math.isnan(expected):
                assert math.isnan(row[f"proxy_{name}"])
            else:
                assert row[f"proxy_{name}"] == pytest.approx(expected, rel=1e-9, abs=1e-12)


# --- within-batch z-scores -------------------------------------------------------------------------------------


def test_zscores_by_hand() -> None:
    # {0.1, 0.2, 0.3}: mean 0.2, population std √(0.02/3) → z = ∓0.1/√(0.02/3) = ∓√1.5
    z = zscores([0.1, 0.2, 0.3])
    np.testing.assert_allclose(z, [-math.sqrt(1.5), 0.0, math.sqrt(1.5)], atol=1e-12)


def test_zscores_per_batch_with_degenerate_batches() -> None:
    values = [0.1, 0.3, 0.5, 0.1, 0.1, 0.1, 0.7, 0.2, np.nan, 0.4]
    groups = ["a", "a", "b", "c", "c", "c", "d", "e", "e", "e"]
    z = zscores(values, groups)
    np.testing.assert_allclose(z[:2], [-1.0, 1.0])  # two values: each one population std from the mean
    assert math.isnan(z[2])  # a lone forecaster has no one to compare with
    assert np.isnan(z[3:6]).all()  # identical scores (0.1 three times carries float noise): no spread
    assert math.isnan(z[6])
    np.testing.assert_allclose(z[[7, 9]], [-1.0, 1.0])  # the NaN score is ignored, and stays NaN
    assert math.isnan(z[8])


def test_within_batch_zscores_adds_columns() -> None:
    scores = pd.DataFrame(
        {
            "batch": ["b1", "b1", "b2", "b2"],
            "forecaster": ["x", "y", "x", "y"],
            "brier": [0.1, 0.3, 0.2, 0.2],
            "proxy_logit_pool": [0.02, 0.01, 0.05, 0.03],
        }
    )
    out = within_batch_zscores(scores, ["brier", "proxy_logit_pool"])
    np.testing.assert_allclose(out["z_brier"].iloc[:2], [-1.0, 1.0])
    assert out["z_brier"].iloc[2:].isna().all()
    np.testing.assert_allclose(out["z_proxy_logit_pool"], [1.0, -1.0, 1.0, -1.0])
    assert "z_brier" not in scores.columns  # the input is not modified
    whole = within_batch_zscores(scores, ["brier"], batch=None)
    # pooled {0.1, 0.3, 0.2, 0.2}: mean 0.2, population std √(0.02/4)
    np.testing.assert_allclose(whole["z_brier"], np.array([-0.1, 0.1, 0.0, 0.0]) / math.sqrt(0.005), atol=1e-12)
