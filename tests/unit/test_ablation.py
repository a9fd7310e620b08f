"""The paired difference of two seats net of replicate noise, and the run-to-run spread, on hand-computed data."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from arena.scoring.ablation import paired_difference, replicate_spread


def frame(rows):  # type: ignore[no-untyped-def]
    return pd.DataFrame(rows, columns=["agent", "cohort", "market_id", "question", "replicate", "brier"])


ROWS = [
    # question q1: A's replicates 0.30, 0.10 (mean 0.20); B's 0.05, 0.15 (mean 0.10) → d = −0.10; executed −0.25
    ("A", "c", "m1", "q1", 1, 0.30), ("A", "c", "m1", "q1", 2, 0.10),
    ("B", "c", "m1", "q1", 1, 0.05), ("B", "c", "m1", "q1", 2, 0.15),
    # q2: A 0.40 (one replicate), B 0.20, 0.40 (mean 0.30) → d = −0.10; executed −0.20
    ("A", "c", "m2", "q2", 1, 0.40),
    ("B", "c", "m2", "q2", 1, 0.20), ("B", "c", "m2", "q2", 2, 0.40),
    # q3 only A: not shared; q4: B unresolved (NaN) → not shared
    ("A", "c", "m3", "q3", 1, 0.90),
    ("A", "c", "m4", "q4", 1, 0.50), ("B", "c", "m4", "q4", 1, float("nan")),
]


def test_paired_difference_uses_replicate_means_over_shared_questions():
    d = paired_difference(frame(ROWS), "A", "B", "brier", n_boot=200, seed=1)
    assert d.n == 2 and d.markets == 2
    assert d.estimate == pytest.approx(-0.10)
    assert d.executed == pytest.approx(-0.225)  # replicate 1 only: (−0.25 − 0.20) / 2
    assert d.lo == pytest.approx(-0.10) and d.hi == pytest.approx(-0.10)  # both questions differ by exactly −0.1
    assert (d.replicates_a, d.replicates_b) == (2, 2)
    assert d.p_value == pytest.approx(2 / 201)  # never 0: the smallest p of 200 draws
    # per-question variance of d is 0, so the replicate share is undefined rather than a made-up number
    assert math.isnan(d.replicate_share)


def test_replicate_noise_share_and_interval_contain_the_estimate():
    rng = np.random.default_rng(0)
    rows = []
    for q in range(60):
        base = rng.uniform(0.05, 0.4)
        for r in (1, 2, 3):
            rows.append(("A", "c", f"m{q}", f"q{q}", r, base + rng.normal(0, 0.05)))
            rows.append(("B", "c", f"m{q}", f"q{q}", r, base - 0.03 + rng.normal(0, 0.05)))
    d = paired_difference(frame(rows), "A", "B", "brier", n_boot=300)
    assert d.lo <= d.estimate <= d.hi < 0  # the planted −0.03 is found, with its sign
    assert d.lo < -0.03 < d.hi
    # d's variance is all replicate noise here: 2 · 0.05² / 3 per question
    assert 0.6 < d.replicate_share <= 1.0
    assert (d.executed_hi - d.executed_lo) > (d.hi - d.lo)  # one replicate is noisier than the mean of three


def test_paired_difference_of_totals_and_of_nothing():
    pnl = pd.DataFrame({"agent": ["A", "B", "A", "B"], "cohort": "c", "market_id": ["m1", "m1", "m2", "m2"],
                        "question": ["m1", "m1", "m2", "m2"], "pnl": [10.0, 30.0, -5.0, 0.0]})
    d = paired_difference(pnl, "A", "B", "pnl", statistic="total", n_boot=100)
    assert d.estimate == pytest.approx(25.0) and d.executed == pytest.approx(25.0)
    assert d.lo <= 25.0 <= d.hi
    empty = paired_difference(frame(ROWS), "A", "Z", "brier")
    assert empty.n == 0 and math.isnan(empty.estimate) and empty.to_json()["estimate"] is None
    with pytest.raises(ValueError):
        paired_difference(frame(ROWS), "A", "B", "brier", statistic="median")


def test_replicate_spread_per_agent():
    f = pd.DataFrame({
        "agent": ["A"] * 4 + ["B"] * 2,
        "question": ["q1", "q1", "q2", "q2", "q1", "q2"],
        "replicate": [1, 2, 1, 2, 1, 1],
        "probability": [0.6, 0.8, 0.3, 0.3, 0.5, 0.5],
        "outcome_yes": [1.0, 1.0, 0.0, 0.0, 1.0, 0.0],
    })
    s = replicate_spread(f).set_index("agent")
    assert s.at["A", "replicates"] == 2 and s.at["A", "questions"] == 2
    assert s.at["A", "p_sd"] == pytest.approx((np.std([0.6, 0.8], ddof=1) + 0.0) / 2)
    b1, b2 = (0.16 + 0.09) / 2, (0.04 + 0.09) / 2  # replicate 1's and 2's Brier over both questions
    assert s.at["A", "brier_sd"] == pytest.approx(np.std([b1, b2], ddof=1))
    assert (s.at["A", "brier_min"], s.at["A", "brier_max"]) == (pytest.approx(b2), pytest.approx(b1))
    assert s.at["B", "replicates"] == 1 and math.isnan(s.at["B", "p_sd"]) and math.isnan(s.at["B", "brier_sd"])
