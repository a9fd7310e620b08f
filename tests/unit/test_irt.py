"""IRT-style skill (Rasch-type fit of 1 − Brier), by hand and on planted difficulty."""

import math

import numpy as np
import pandas as pd
import pytest

from arena.scoring.difficulty import difficulty_adjusted_brier
from arena.scoring.irt import irt_skill, rasch_skill
from arena.scoring.registry import METRICS


def test_exact_responses_give_the_logit_of_one_minus_brier():
    # every question alike: sigmoid(θ − β) = 1 − Brier exactly, so the skill on the average question is its logit
    df = pd.DataFrame({"agent": ["a", "b"] * 3, "question": [1, 1, 2, 2, 3, 3], "brier": [0.1, 0.4] * 3})
    out = irt_skill(df, prior_sd=1e4).set_index("agent")
    assert out.loc["a", "irt_skill"] == pytest.approx(math.log(0.9 / 0.1), abs=1e-5)
    assert out.loc["b", "irt_skill"] == pytest.approx(math.log(0.6 / 0.4), abs=1e-5)
    assert out["n"].tolist() == [3, 3]


def test_ridge_stationarity_by_hand():
    # a: Brier 0 everywhere (y = 1): without the prior θ_a would run to infinity; with it, by symmetry θ_b = −θ_a,
    # β = 0 and the score equation 2(1 − σ(t)) = λ t holds (λ = 1 / prior_sd²) for a's y = 1, b's y = 0
    df = pd.DataFrame({"agent": ["a", "b", "a", "b"], "question": [1, 1, 2, 2], "brier": [0.0, 1.0, 0.0, 1.0]})
    fit = rasch_skill(df, prior_sd=2.0)
    t = fit.agents.set_index("agent").loc["a", "theta"]
    assert fit.converged and np.isfinite(t)
    assert 2 * (1 - 1 / (1 + math.exp(-t))) == pytest.approx(0.25 * t, abs=1e-8)
    assert fit.agents.set_index("agent").loc["b", "theta"] == pytest.approx(-t, abs=1e-8)
    assert fit.questions["beta"].tolist() == pytest.approx([0.0, 0.0], abs=1e-8)


def test_empty_and_lonely_inputs_are_nan():
    assert irt_skill(pd.DataFrame({"agent": [], "question": [], "brier": []})).empty
    df = pd.DataFrame({"agent": ["a", "b", "c"], "question": [1, 1, 2], "brier": [0.1, 0.2, np.nan]})
    out = irt_skill(df).set_index("agent")
    assert math.isnan(out.loc["c", "irt_skill"]) and out.loc["c", "n"] == 0
    assert out.loc["a", "irt_skill"] > out.loc["b", "irt_skill"]
    with pytest.raises(ValueError):
        irt_skill(pd.DataFrame({"agent": ["a"], "question": [1], "brier": [1.5]}))


def test_registered_higher_is_better():
    m = METRICS["irt_skill"]
    assert m.higher_is_better and m.unit == "logits" and m.description


def _planted(rng: np.random.Generator) -> pd.DataFrame:
    """6 forecasters (noise sd 0.4 … 2.4, best first), 120 questions, 50 each: the better ones mostly get the hard
    questions (truth near 0.5), so raw mean Brier misorders them."""
    p = np.clip(rng.beta(0.9, 0.9, 120), 1e-6, 1 - 1e-6)
    y = (rng.random(120) < p).astype(float)
    hard = np.abs(p - 0.5) < 0.25
    rows = []
    for i, sd in enumerate(np.arange(1, 7) * 0.4):
        share = 0.9 - 0.8 * i / 5
        w = np.where(hard, share / hard.sum(), (1 - share) / (~hard).sum())
        pick = rng.choice(120, 50, replace=False, p=w / w.sum())
        f = 1 / (1 + np.exp(-(np.log(p[pick] / (1 - p[pick])) + sd * rng.standard_normal(50))))
        rows.append(pd.DataFrame({"agent": i, "question": pick, "brier": (f - y[pick]) ** 2}))
    return pd.concat(rows, ignore_index=True)


def test_adjusted_scores_recover_a_planted_order_on_overlapping_subsets():
    from arena.scoring.validity import spearman

    rng = np.random.default_rng(7)
    raw, adj, irt = [], [], []
    for _ in range(8):
        df = _planted(rng)
        a = difficulty_adjusted_brier(df).sort_values("agent")
        s = irt_skill(df).sort_values("agent")
        truth = np.arange(6)  # agent 0 best
        raw.append(spearman(truth, a["brier"]))
        adj.append(spearman(truth, a["brier_adjusted"]))
        irt.append(spearman(truth, -s["irt_skill"].to_numpy()))
    assert np.mean(adj) > 0.5 and np.mean(irt) > 0.5  # raw Brier is misled by the assignment (about 0 here)
    assert np.mean(adj) > np.mean(raw) + 0.4 and np.mean(irt) > np.mean(raw) + 0.4
