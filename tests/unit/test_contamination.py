"""The contamination guard's rule (`domain.contamination`), on hand-made market paths: a question is contaminated
for a model when its market resolved, or its YES price had settled beyond [0.02, 0.98], before the model's cutoff
instant (the day after `knowledge_cutoff`, 00:00 UTC)."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pandas as pd
import pytest

from arena.domain.contamination import (CLEAN, RESOLVED, SETTLED, beyond_band, cutoff_instant, model_age_days,
                                         verdict, verdicts)

CUTOFF_DAY = date(2025, 6, 30)
CUT = datetime(2025, 7, 1, tzinfo=timezone.utc)  # the first instant the model does not know
SECOND = timedelta(seconds=1)


def t(day: int, hour: int = 0) -> datetime:
    return datetime(2025, 6, day, hour, tzinfo=timezone.utc)


def test_the_cutoff_instant_is_the_start_of_the_next_day_utc():
    assert cutoff_instant(CUTOFF_DAY) == CUT
    assert cutoff_instant(date(2024, 12, 31)) == datetime(2025, 1, 1, tzinfo=timezone.utc)


def test_the_band_ends_are_inside():
    assert [beyond_band(p) for p in (19_999, 20_000, 500_000, 980_000, 980_001)] == [True, False, False, False, True]


@pytest.mark.parametrize("resolved_at, expected", [
    (CUT - SECOND, RESOLVED),  # one second before the cutoff: the model could know it
    (CUT, CLEAN),  # exactly at the cutoff instant: the first moment it does not cover
    (CUT + SECOND, CLEAN),
    (None, CLEAN),
])
def test_resolved_before_the_cutoff_and_exactly_at_it(resolved_at, expected):
    assert verdict(CUT, resolved_at, [(t(1), 500_000)]) == expected


@pytest.mark.parametrize("path, expected", [
    ([(t(1), 500_000), (t(20), 990_000)], SETTLED),  # settled YES ten days before the cutoff
    ([(t(1), 500_000), (t(20), 10_000)], SETTLED),  # settled NO
    ([(t(1), 500_000), (t(20), 990_000), (t(25), 600_000)], CLEAN),  # settled, then came back in: not settled
    ([(t(1), 990_000), (t(25), 600_000), (t(29), 995_000)], SETTLED),  # came back in, then settled again
    ([(t(1), 500_000), (CUT - SECOND, 999_000)], SETTLED),  # the last price before the cutoff is what counts
    ([(t(1), 500_000), (CUT, 999_000)], CLEAN),  # a price observed at the cutoff is after it
    ([(t(1), 500_000), (CUT + timedelta(days=3), 999_000)], CLEAN),  # settles after the cutoff: clean
    ([(t(1), 980_000)], CLEAN),  # 0.98 itself is inside the band
    ([(t(1), 20_000)], CLEAN),  # 0.02 too
    ([(CUT + SECOND, 999_000)], CLEAN),  # no price before the cutoff: nothing had settled
    ([], CLEAN),
])
def test_a_price_settled_before_the_cutoff_and_one_that_unsettled(path, expected):
    assert verdict(CUT, None, path) == expected
    assert verdict(CUT, None, list(reversed(path))) == expected  # the order of the points does not matter


def test_the_vectorised_rule_agrees_with_the_scalar_one_row_by_row():
    paths = {
        "a": [(t(1), 500_000), (t(20), 990_000)],
        "b": [(t(1), 500_000), (t(20), 990_000), (t(25), 600_000)],
        "c": [(t(1), 500_000)],
        "d": [],
        "e": [(t(10), 10_000)],
    }
    resolved = {"c": CUT - SECOND, "e": CUT + timedelta(days=1)}
    later = cutoff_instant(date(2025, 6, 22))  # a second model whose cutoff falls between b's moves
    questions = pd.DataFrame({"market_id": ["a", "b", "c", "d", "e", "b", "a", "c"],
                              "cutoff": [CUT] * 5 + [later, later, CUT + timedelta(days=30)]},
                             index=[10, 11, 12, 13, 14, 15, 16, 17])
    prices = pd.DataFrame([(m, when, p) for m, path in paths.items() for when, p in path],
                          columns=["market_id", "observed_at", "price_ppm"])
    res = pd.DataFrame({"market_id": list(resolved), "resolved_at": list(resolved.values())})
    got = verdicts(questions, res, prices)
    assert list(got.index) == list(questions.index)
    expected = [verdict(c, resolved.get(m), paths[m]) for m, c in zip(questions["market_id"], questions["cutoff"])]
    assert list(got) == expected == [SETTLED, CLEAN, RESOLVED, CLEAN, SETTLED, SETTLED, SETTLED, RESOLVED]
    assert list(verdicts(questions.iloc[:0], res, prices)) == []
    assert list(verdicts(questions, res.iloc[:0], prices.iloc[:0])) == [CLEAN] * len(questions)


def test_equal_observation_times_take_the_price_recorded_last():
    prices = pd.DataFrame({"market_id": ["a", "a"], "observed_at": [t(5), t(5)], "price_ppm": [990_000, 500_000]})
    questions = pd.DataFrame({"market_id": ["a"], "cutoff": [CUT]})
    assert list(verdicts(questions, pd.DataFrame(columns=["market_id", "resolved_at"]), prices)) == [CLEAN]


def test_model_age_counts_whole_days_from_the_release_day():
    assert model_age_days(datetime(2025, 7, 1, 0, 5, tzinfo=timezone.utc), date(2025, 6, 1)) == 30
    assert model_age_days(datetime(2025, 6, 1, 23, 59, tzinfo=timezone.utc), date(2025, 6, 1)) == 0
    assert model_age_days(datetime(2025, 5, 31, 12, tzinfo=timezone.utc), date(2025, 6, 1)) == -1


def test_the_pre_cutoff_line_scores_the_contaminated_rows_with_the_market_as_unit():
    from arena.domain.contamination import pre_cutoff_lines

    rows = pd.DataFrame({
        "cohort": ["c"] * 4 + ["d"],
        "agent": ["a", "a", "a", "b", "a"],
        "market_id": ["m1", "m1", "m2", "m1", "m3"],
        "probability": [0.9, 0.7, 0.2, 0.5, 0.4],
        "outcome_yes": [1.0, 1.0, float("nan"), 0.0, 1.0],
    })
    got = pre_cutoff_lines(rows, ["cohort", "agent"]).set_index(["cohort", "agent"])
    # a on m1: rounds 0.01 and 0.09 → 0.05; m2 unresolved (counted, not scored)
    assert got.loc[("c", "a"), "n_contaminated"] == 3
    assert got.loc[("c", "a"), "pre_cutoff_brier"] == pytest.approx(0.05)
    assert got.loc[("c", "b"), "pre_cutoff_brier"] == pytest.approx(0.25)
    overall = pre_cutoff_lines(rows, ["agent"]).set_index("agent")
    assert overall.loc["a", "n_contaminated"] == 4
    assert overall.loc["a", "pre_cutoff_brier"] == pytest.approx((0.05 + 0.36) / 2)  # (cohort, market) pooled
    assert list(pre_cutoff_lines(rows.iloc[:0], ["agent"]).columns) == ["agent", "n_contaminated", "pre_cutoff_brier"]


def test_the_methodology_pages_worked_example_is_computed_by_the_rule():
    from arena.web.contamination_example import contamination_example

    rows = dict(contamination_example().rows)
    assert [v for k, v in rows.items() if k[:2] in ("A:", "B:", "C:", "D:")] == ["resolved", "settled", "clean",
                                                                                    "clean"]
    assert rows["n_contaminated"] == "2"
    assert rows["pre_cutoff_brier: mean of (0.97 − 1)² and (0.95 − 1)²"] == "0.0017"
    assert rows["headline on the clean questions: mean of (0.70 − 1)² and (0.40 − 0)²"] == "0.1250"
    assert rows["model_age_days at 2025-06-01 00:05 (released 07-01: after the decision)"] == "-30"
