"""The anytime-valid confidence sequence on paired Brier differences: small known cases and a small null check."""

import numpy as np
import pandas as pd
import pytest

from arena.scoring.sequential import compare_sequentially, confidence_sequence, paired_differences


def test_no_difference_never_excludes_zero_and_the_bounds_only_shrink():
    cs = confidence_sequence(np.zeros(200))
    assert cs.first_index is None and cs.sign == 0
    assert (cs.lower <= 0).all() and (cs.upper >= 0).all()
    assert (np.diff(cs.lower) >= 0).all() and (np.diff(cs.upper) <= 0).all()  # running intersection
    assert cs.lower[0] == -1.0 and cs.upper[0] == 1.0  # one observation says almost nothing
    assert 0 < cs.upper[-1] < 0.05 and cs.lower[-1] == pytest.approx(-cs.upper[-1])  # symmetric data, symmetric CS


def test_a_constant_difference_is_detected_early_with_its_date():
    days = pd.date_range("2026-01-01", periods=100, freq="D")
    cs = confidence_sequence(np.full(100, 0.5), times=days)
    assert cs.sign == 1 and cs.first_index == 11  # hedged capital crosses 1/0.05 after 12 observations
    assert cs.first_time == days[11] and cs.lower[11] > 0 >= cs.lower[10]
    assert cs.lower[-1] > 0.35 and cs.upper[-1] >= 0.5  # the CS still holds the true mean
    worse = confidence_sequence(np.full(100, -0.5))
    assert worse.sign == -1 and worse.first_index == 11
    assert confidence_sequence(np.full(100, 0.5), alpha=0.01).first_index > 11  # stricter level, later


def test_nan_is_dropped_with_its_time_empty_is_nan_and_out_of_range_is_refused():
    cs = confidence_sequence([np.nan, 0.5, 0.5], times=["d0", "d1", "d2"])
    assert cs.n == 2 and list(cs.frame(["d1", "d2"])["time"]) == ["d1", "d2"]
    empty = confidence_sequence([])
    assert empty.n == 0 and empty.first_index is None
    with pytest.raises(ValueError):
        confidence_sequence([1.5])


def test_false_wins_under_no_difference_stay_below_alpha_when_looking_after_every_question():
    rng = np.random.default_rng(3)
    ever = sum(confidence_sequence(rng.uniform(-0.5, 0.5, 200), grid=401).first_index is not None for _ in range(40))
    assert ever / 40 <= 0.05


def test_paired_differences_align_questions_and_sort_by_resolution():
    scores = pd.DataFrame({
        "agent": ["a", "b", "a", "b", "a", "c"],
        "question": ["q2", "q2", "q1", "q1", "q3", "q3"],
        "brier": [0.1, 0.3, 0.5, 0.2, 0.9, 0.0],
        "resolved_at": ["2026-01-02", "2026-01-02", "2026-01-01", "2026-01-01", "2026-01-03", "2026-01-03"],
    })
    d = paired_differences(scores, "a", "b")
    assert list(d["question"]) == ["q1", "q2"] and d["difference"].tolist() == pytest.approx([0.3, -0.2])
    cs, frame = compare_sequentially(scores, "a", "b")
    assert cs.n == 2 and list(frame.columns) == ["time", "n", "estimate", "lower", "upper", "excludes_zero"]
    assert paired_differences(scores, "a", "nobody").empty
