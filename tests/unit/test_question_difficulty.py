"""Published question difficulty on planted data: a question every forecaster gets wrong is the hardest, one every
forecaster gets right the easiest, unresolved questions are not published, and the two fits agree in order."""

import math

import numpy as np
import pandas as pd
import pytest

from arena.scoring.question_difficulty import COLUMNS, question_difficulty


def _rows():
    rng = np.random.default_rng(4)
    rows = []
    for cohort in ("c1", "c2"):
        for m in range(12):
            outcome = float(m % 2)
            for rnd in ("2026-01-05", "2026-01-12"):
                for agent in ("a", "b", "c"):
                    if m == 0:  # planted hard: everyone is confidently wrong (outcome NO, they say YES)
                        p = 0.9
                    elif m == 1:  # planted easy: everyone is confidently right (outcome YES)
                        p = 0.97
                    else:
                        p = float(np.clip(0.5 + (outcome - 0.5) * rng.uniform(-0.4, 0.9), 0.02, 0.98))
                    rows.append(dict(cohort=cohort, agent=agent, market_id=f"sim:{m}", question=f"sim:{m}@{rnd}",
                                     probability=p, market_price=0.5, outcome_yes=outcome, answered=True))
        # an open question: asked, not resolved
        for agent in ("a", "b", "c"):
            rows.append(dict(cohort=cohort, agent=agent, market_id="sim:open", question="sim:open@2026-01-05",
                             probability=0.4, market_price=0.5, outcome_yes=np.nan, answered=True))
    return pd.DataFrame(rows)


def test_planted_hard_and_easy_questions():
    out = question_difficulty(_rows())
    assert list(out.columns) == list(COLUMNS)
    assert "sim:open" not in set(out["market_id"])  # only resolved questions are published
    assert len(out) == 2 * 12 * 2 and set(out["round"]) == {"2026-01-05", "2026-01-12"}
    for cohort, part in out.groupby("cohort"):
        part = part.set_index("question")
        assert part["difficulty"].mean() == pytest.approx(0.0, abs=1e-9)  # relative to the cohort's average
        hardest, easiest = part["difficulty"].idxmax(), part["difficulty"].idxmin()
        assert hardest.startswith("sim:0@") and easiest.startswith("sim:1@")
        assert part["irt_difficulty"].idxmax().startswith("sim:0@")
        assert part["irt_difficulty"].idxmin().startswith("sim:1@")
        # 3 seats + always-0.5 + the market's price scored every question
        assert set(part["n_forecasters"]) == {5}
        hard = part.loc["sim:0@2026-01-05"]
        assert hard["market_brier"] == pytest.approx(0.25) and hard["outcome_yes"] == 0.0
        # everyone's Brier on it, references included: (0.81 × 3 + 0.25 + 0.25) / 5
        assert hard["mean_brier"] == pytest.approx((0.81 * 3 + 0.25 * 2) / 5)
        # with every forecaster on every question, the fixed-effects difficulty is the question's mean Brier
        # minus the mean over questions
        assert hard["difficulty"] == pytest.approx(hard["mean_brier"] - part["mean_brier"].mean())


def test_nothing_resolved_gives_an_empty_table_with_the_columns():
    f = _rows()
    out = question_difficulty(f[f["outcome_yes"].isna()])
    assert len(out) == 0 and list(out.columns) == list(COLUMNS)
    assert len(question_difficulty(pd.DataFrame())) == 0


def test_a_question_without_a_price_is_fitted_without_a_market_brier():
    f = _rows()
    f = f[f["cohort"] == "c1"]
    lone = pd.DataFrame([dict(cohort="c1", agent="a", market_id="sim:lone", question="sim:lone@2026-01-05",
                              probability=0.3, market_price=np.nan, outcome_yes=1.0, answered=True)])
    out = question_difficulty(pd.concat([f, lone], ignore_index=True)).set_index("question")
    # the seat and always-0.5 scored it (no price: no market reference) — two forecasters, so both fits hold it
    assert out.loc["sim:lone@2026-01-05", "n_forecasters"] == 2
    assert math.isfinite(out.loc["sim:lone@2026-01-05", "irt_difficulty"])
    assert math.isnan(out.loc["sim:lone@2026-01-05", "market_brier"])
