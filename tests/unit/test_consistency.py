"""Consistency checks: seed 003's negation arbitrage metric by hand, the 0.01 threshold, multi-outcome sums and
seed 004's S′."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.scoring import registry
from arena.scoring.consistency import (
    ladder_violations,
    VIOLATION_THRESHOLD,
    answer_scores,
    negation_violation,
    negation_violations,
    probability_sums,
    s_prime,
    sum_deviation,
)


def test_consistent_negation_pair_has_no_violation():
    # √(0.7·0.7) + √(0.3·0.3) = 1 → V = −2 log 1 = 0
    assert negation_violation(0.7, 0.3) == pytest.approx(0.0, abs=1e-15)
    assert negation_violation(0.7, 0.3) >= 0.0
    assert negation_violation(0.0, 1.0) == 0.0


def test_violation_by_hand():
    # F(P) = F(¬P) = 0.7: √(0.7·0.3) + √(0.3·0.7) = 2√0.21 = 0.916515…; V = −2 ln 0.916515… = 0.174353…
    expected = -2.0 * math.log(2.0 * math.sqrt(0.21))
    assert expected == pytest.approx(0.1743534, abs=1e-7)
    assert negation_violation(0.7, 0.7) == pytest.approx(expected, rel=1e-12)
    # seed 003's examples: V(0.5, 0.6) ≈ 0.01 and V(0.5, 0.51) ≈ 1e-4
    assert negation_violation(0.5, 0.6) == pytest.approx(0.01, abs=3e-4)
    assert negation_violation(0.5, 0.51) == pytest.approx(1e-4, rel=0.01)
    assert math.isinf(negation_violation(0.0, 0.0))  # sure of both P and ¬P: unbounded arbitrage
    assert np.isnan(negation_violation(np.nan, 0.3))
    assert np.allclose(negation_violation([0.7, 0.7], [0.3, 0.7]), [0.0, expected])
    with pytest.raises(ValueError):
        negation_violation(1.2, 0.3)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.001, 0.999), st.floats(0.001, 0.999))
def test_violation_is_nonnegative_symmetric_and_zero_iff_consistent(a, b):
    v = negation_violation(a, b)
    assert v >= 0.0
    assert v == pytest.approx(negation_violation(b, a), abs=1e-12)  # swapping the roles of P and ¬P
    assert negation_violation(a, 1.0 - a) == pytest.approx(0.0, abs=1e-12)


def test_threshold_and_rate_per_agent():
    pairs = pd.DataFrame({
        "agent": ["a", "a", "a", "a", "b", "c"],
        "p": [0.7, 0.7, 0.5, 0.5, 0.5, np.nan],
        "p_not": [0.3, 0.7, 0.6, 0.55, 0.5, 0.4],
    })
    out = negation_violations(pairs).set_index("agent")
    # a: V = 0, 0.174, 0.0102 (≥ 0.01 fails), 0.0025 (passes) → 2 of 4
    assert out.loc["a", "n_pairs"] == 4 and out.loc["a", "n_violations"] == 2
    assert out.loc["a", "negation_violation_rate"] == pytest.approx(0.5)
    assert out.loc["a", "max_violation"] == pytest.approx(negation_violation(0.7, 0.7))
    assert out.loc["b", "negation_violation_rate"] == 0.0
    assert out.loc["c", "n_pairs"] == 0 and np.isnan(out.loc["c", "negation_violation_rate"])
    assert (out["threshold"] == VIOLATION_THRESHOLD).all() and VIOLATION_THRESHOLD == 0.01
    strict = negation_violations(pairs, threshold=0.001).set_index("agent")
    assert strict.loc["a", "n_violations"] == 3


def test_probability_sums_and_deviation():
    f = pd.DataFrame({
        "agent": ["a", "a", "a", "a", "a", "b", "b", "c", "c"],
        "group_id": ["g1", "g1", "g1", "g2", "g2", "g1", "g1", "g1", "g1"],
        "probability": [0.5, 0.4, 0.3, 0.6, 0.4, 0.2, 0.3, 0.7, 0.6],
        "n_outcomes": [3, 3, 3, 2, 2, 3, 3, 3, 3],
    })
    sums = probability_sums(f, group_size="n_outcomes").set_index(["agent", "group"])
    assert sums.loc[("a", "g1"), "total"] == pytest.approx(1.2)
    assert sums.loc[("a", "g1"), "deviation"] == pytest.approx(0.2)
    assert sums.loc[("a", "g2"), "deviation"] == pytest.approx(0.0)
    assert not sums.loc[("b", "g1"), "complete"] and np.isnan(sums.loc[("b", "g1"), "deviation"])  # 0.5 of 2/3
    assert sums.loc[("c", "g1"), "deviation"] == pytest.approx(0.3)  # incomplete but already above 1
    per_agent = sum_deviation(f, group_size="n_outcomes").set_index("agent")
    assert per_agent.loc["a", "n_groups"] == 2 and per_agent.loc["a", "sum_deviation"] == pytest.approx(0.1)
    assert per_agent.loc["a", "mean_total"] == pytest.approx(1.1)
    assert per_agent.loc["b", "n_groups"] == 0 and np.isnan(per_agent.loc["b", "sum_deviation"])
    # without group sizes every group is taken as complete
    assert sum_deviation(f).set_index("agent").loc["b", "sum_deviation"] == pytest.approx(0.5)


def test_s_prime_cases():
    assert s_prime(True, 1.0) == 1.0  # sure and right
    assert s_prime(False, 1.0) == -1.0  # sure and wrong
    assert s_prime(True, 0.0) == 0.0 and s_prime(False, 0.0) == 0.0  # q = 0: baseline 0 either way
    assert s_prime(True, 0.8) == pytest.approx(1 - 0.04)
    assert s_prime(False, 0.8) == pytest.approx(-0.64)
    out = s_prime([True, False, None], [0.5, 0.5, 0.5])
    assert out[0] == pytest.approx(0.75) and out[1] == pytest.approx(-0.25) and np.isnan(out[2])


def test_answer_scores_per_agent():
    answers = pd.DataFrame({
        "agent": ["a", "a", "a", "b"],
        "answer": ["Trump", "Harris", "Yes", "Trump"],
        "q": [0.8, 0.6, 0.9, 0.3],
        "resolved_answer": ["Trump", "Trump", None, "Trump"],  # the third is unresolved: not scored
    })
    out = answer_scores(answers).set_index("agent")
    assert out.loc["a", "n"] == 2
    assert out.loc["a", "s_prime"] == pytest.approx(((1 - 0.04) + (-0.36)) / 2)
    assert out.loc["a", "answer_accuracy"] == pytest.approx(0.5)
    assert out.loc["b", "s_prime"] == pytest.approx(1 - 0.49)


def test_registered():
    for name in ("sum_deviation", "negation_violation", "negation_violation_rate", "s_prime"):
        assert name in registry.METRICS
    assert registry.higher_is_better("s_prime") and not registry.higher_is_better("negation_violation_rate")


def test_group_answers_pick_the_favourite_and_know_the_winner():
    from arena.scoring.consistency import group_answers

    f = pd.DataFrame({
        "agent": ["a", "a", "a", "b", "b", "b", "c", "a", "a"],
        "group": ["g", "g", "g", "g", "g", "g", "g", "h", "h"],
        "market_id": ["m1", "m2", "m3", "m1", "m2", "m3", "m1", "n1", "n2"],
        "probability": [0.2, 0.5, 0.3, 0.4, 0.4, 0.2, 0.9, 0.6, 0.4],
        "outcome_yes": [0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, np.nan, 0.0],
        "group_size": [3, 3, 3, 3, 3, 3, 3, 2, 2],
    })
    out = group_answers(f).set_index(["agent", "group"])
    assert out.loc[("a", "g"), "answer"] == "m2" and out.loc[("a", "g"), "q"] == 0.5
    assert out.loc[("b", "g"), "answer"] == "m1"  # a tie goes to the smaller id
    assert out.loc[("a", "g"), "resolved_answer"] == "m2"
    assert ("c", "g") not in out.index  # one member of three: incomplete, no answer
    assert pd.isna(out.loc[("a", "h"), "resolved_answer"])  # n1 unresolved: the group is not decided yet
    scores = answer_scores(out.reset_index()).set_index("agent")
    assert scores.loc["a", "n"] == 1 and scores.loc["a", "s_prime"] == pytest.approx(1 - 0.5**2)
    assert scores.loc["b", "s_prime"] == pytest.approx(-(0.4**2))
    assert group_answers(f.iloc[:0]).empty


def test_multi_class_brier_scores_complete_resolved_groups_as_stated():
    from arena.scoring.consistency import multi_class_brier

    rows = []
    for agent, ps in (("a", (0.7, 0.2, 0.1)), ("incoherent", (0.9, 0.9, 0.9))):
        rows += [{"agent": agent, "group": "g@r1", "market_id": f"m{i}", "probability": p,
                  "outcome_yes": 1.0 if i == 0 else 0.0, "group_size": 3} for i, p in enumerate(ps)]
    rows += [{"agent": "partial", "group": "g@r1", "market_id": f"m{i}", "probability": 0.5,
              "outcome_yes": 1.0 if i == 0 else 0.0, "group_size": 3} for i in range(2)]  # 2 of 3 members
    rows += [{"agent": "a", "group": "h@r1", "market_id": f"n{i}", "probability": 0.5,
              "outcome_yes": [1.0, float("nan")][i], "group_size": 2} for i in range(2)]  # not yet resolved
    out = multi_class_brier(pd.DataFrame(rows)).set_index("agent")
    assert sorted(out.index) == ["a", "incoherent"]
    assert out.at["a", "multi_brier"] == pytest.approx(0.3 ** 2 + 0.2 ** 2 + 0.1 ** 2)
    assert out.at["incoherent", "multi_brier"] == pytest.approx(0.1 ** 2 + 2 * 0.9 ** 2)  # not renormalised
    assert out["n_multi"].tolist() == [1, 1]


# -- ladders: P(YES) must not decrease along a ladder's rank -----------------------------------------------------


def test_ladder_violations_count_pairs_and_sum_the_gaps():
    # a three-rung ladder: rank 0 implies rank 1 implies rank 2, so p0 <= p1 <= p2 is coherent
    rows = [("coherent", "L", 0, 0.2), ("coherent", "L", 1, 0.5), ("coherent", "L", 2, 0.5),
            ("flipped", "L", 0, 0.6), ("flipped", "L", 1, 0.4), ("flipped", "L", 2, 0.5),
            ("flipped", "M", 0, 0.3), ("flipped", "M", 1, np.nan),  # an unstated rung: no pair
            ("alone", "L", 0, 0.9)]  # one rung stated: no pair at all
    frame = pd.DataFrame(rows, columns=["agent", "ladder", "rank", "probability"])
    out = ladder_violations(frame).set_index("agent")
    assert out.loc["coherent", "n_ladder_pairs"] == 3 and out.loc["coherent", "ladder_violations"] == 0
    assert out.loc["coherent", "ladder_violation_mean"] == 0.0
    # pairs (0,1): 0.6 > 0.4 by 0.2; (0,2): 0.6 > 0.5 by 0.1; (1,2): 0.4 <= 0.5
    assert out.loc["flipped", "n_ladder_pairs"] == 3 and out.loc["flipped", "ladder_violations"] == 2
    assert out.loc["flipped", "ladder_violation_mean"] == pytest.approx(0.3 / 3)
    assert out.loc["flipped", "ladder_violation_max"] == pytest.approx(0.2)
    assert out.loc["flipped", "n_ladders"] == 1
    assert "alone" not in out.index
    assert registry.higher_is_better("ladder_violation_mean") is False


def test_ladder_violations_on_nothing_and_bad_input():
    empty = pd.DataFrame(columns=["agent", "ladder", "rank", "probability"])
    assert list(ladder_violations(empty).columns)[:3] == ["agent", "n_ladders", "n_ladder_pairs"]
    assert not len(ladder_violations(empty))
    with pytest.raises(ValueError, match="lacks"):
        ladder_violations(pd.DataFrame({"agent": ["a"], "probability": [0.5]}))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ladder_violations(pd.DataFrame({"agent": ["a"], "ladder": ["L"], "rank": [0], "probability": [1.5]}))
