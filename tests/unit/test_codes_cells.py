"""Key codes, score cells and the coded cluster bootstrap, against plain pandas groupings and naive loops."""

import numpy as np
import pandas as pd
import pytest

from arena.scoring.cells import score_cells
from arena.scoring.codes import key_codes
from arena.scoring.difficulty import two_way_fixed_effects
from arena.scoring.irt import rasch_skill
from arena.scoring.stats import cluster_bootstrap, cluster_design, cluster_draw_counts


def _frame(rng: np.random.Generator, n: int = 400, with_nan: bool = False) -> pd.DataFrame:
    cohorts = np.array([f"c{i}" for i in (1, 2, 10, 11, 3)], dtype=object)
    cohort = cohorts[rng.integers(0, cohorts.size, n)]
    if with_nan:
        cohort[rng.random(n) < 0.05] = None
    return pd.DataFrame({
        "cohort": pd.array(cohort, dtype="str"),
        "question": pd.array([f"m{j}@r{j % 3}" for j in rng.integers(0, 12, n)], dtype="str"),
        "market_id": [f"m{j}" for j in rng.integers(0, 12, n)],
        "agent": rng.choice(["zeta", "alpha", "mid", "ref:market"], n),
        "brier": np.where(rng.random(n) < 0.1, np.nan, rng.random(n)),
        "other": rng.normal(0.0, 0.1, n),
    })


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("columns", [["cohort", "question"], ["agent", "cohort", "question"]])
def test_key_codes_number_keys_in_sorted_tuple_order(seed, columns):
    df = _frame(np.random.default_rng(seed), with_nan=True)
    codes, keys = key_codes(df, columns, dropna=False)
    expected = df.groupby(columns, sort=True, dropna=False).ngroup().to_numpy()
    assert codes.tolist() == expected.tolist()
    assert list(keys) == list(df.groupby(columns, sort=True, dropna=False).size().index)
    dropped, _ = key_codes(df, columns)
    assert ((dropped == -1) == df["cohort"].isna().to_numpy()).all()
    one, labels = key_codes(df, ["agent"])
    assert list(labels[one]) == df["agent"].tolist() and list(labels) == sorted(set(df["agent"]))


@pytest.mark.parametrize("seed", range(5))
def test_score_cells_are_the_groupby_means(seed):
    df = _frame(np.random.default_rng(seed))
    df.loc[df["agent"] == "mid", "brier"] = np.nan  # an agent with no scored row keeps its label and no cell
    cells = score_cells(df, question=["cohort", "question"])
    means = df.dropna(subset=["brier"]).groupby(["agent", "cohort", "question"], sort=True)["brier"]
    expected = means.mean()
    assert cells.value.tolist() == pytest.approx(expected.to_numpy().tolist(), rel=1e-12)
    assert cells.rows.tolist() == means.size().tolist()
    got = [(cells.agents[a], *cells.questions[q]) for a, q in zip(cells.agent, cells.question)]
    assert got == list(expected.index)
    assert list(cells.agents) == sorted(set(df["agent"])) and cells.per_agent()[list(cells.agents).index("mid")] == 0


def _components_by_search(df: pd.DataFrame) -> list[int]:
    """Forecasters joined by shared questions, numbered by their first forecaster (sorted names), by plain search."""
    scored = df.dropna(subset=["brier"])
    agents = sorted(set(df["agent"]))
    by_q = scored.groupby("q")["agent"].apply(set)
    label: dict[str, int] = {}
    for a in agents:
        if a in label:
            continue
        label[a], todo = len(set(label.values())), [a]
        while todo:
            x = todo.pop()
            for group in by_q[by_q.apply(lambda g, x=x: x in g)]:
                for y in group - set(label):
                    label[y] = label[a]
                    todo.append(y)
    return [label[a] for a in agents]


@pytest.mark.parametrize("seed", range(6))
def test_fits_on_two_question_columns_equal_the_fits_on_one_joined_column(seed):
    rng = np.random.default_rng(seed)
    df = _frame(rng, n=150)
    df["agent"] = rng.choice([f"a{i}" for i in range(9)], len(df))  # sparse: several components may form
    df["q"] = df["cohort"].astype(str) + "\x1f" + df["question"].astype(str)
    two = two_way_fixed_effects(df, question=["cohort", "question"])
    one = two_way_fixed_effects(df, question="q")
    assert two.agents["adjusted"].tolist() == pytest.approx(one.agents["adjusted"].tolist(), abs=1e-9, nan_ok=True)
    assert two.agents["component"].tolist() == _components_by_search(df)
    assert len(two.questions) == df.dropna(subset=["brier"])["q"].nunique()
    assert two.questions["difficulty"].tolist() == pytest.approx(one.questions["difficulty"].tolist(), abs=1e-9)
    r2, r1 = rasch_skill(df, question=["cohort", "question"]), rasch_skill(df, question="q")
    assert r2.agents["irt_skill"].tolist() == pytest.approx(r1.agents["irt_skill"].tolist(), abs=1e-9, nan_ok=True)
    assert r2.questions["n"].tolist() == r1.questions["n"].tolist() and (r2.questions["n"] >= 2).all()


@pytest.mark.parametrize("seed", range(4))
def test_cluster_bootstrap_equals_a_naive_loop_over_its_draws(seed):
    """Odd seeds have rows without a cohort: resampled as a cohort of their own, not counted in n_clusters."""
    rng = np.random.default_rng(seed)
    df = _frame(rng, with_nan=bool(seed % 2))
    res = cluster_bootstrap(df, "brier", n_boot=40, seed=seed)
    scored = df.dropna(subset=["brier"]).reset_index(drop=True)
    grouped = scored.groupby(["cohort", "market_id"], sort=True, dropna=False)
    key = grouped.ngroup().to_numpy()  # each row's market key, numbered cohort by cohort
    sizes = grouped.size().groupby(level=0, dropna=False).size().to_numpy()
    counts = cluster_draw_counts(sizes, 40, seed)
    assert scored["cohort"].isna().any() == bool(seed % 2)
    for agent, row in res.table.set_index("agent").iterrows():
        mine = (scored["agent"] == agent).to_numpy()
        w = counts[:, key[mine]]
        with np.errstate(invalid="ignore", divide="ignore"):
            naive = (w * scored["brier"].to_numpy()[mine]).sum(axis=1) / w.sum(axis=1)
        assert res.draws[agent].to_numpy() == pytest.approx(naive, nan_ok=True)
        assert row["estimate"] == pytest.approx(scored["brier"][mine].mean())
        assert row["n_clusters"] == scored["cohort"][mine].nunique() and row["n"] == mine.sum()


def test_one_design_serves_every_statistic_of_its_frame_and_no_other():
    df = _frame(np.random.default_rng(9))
    design = cluster_design(df)
    for value in ("brier", "other"):
        alone = cluster_bootstrap(df, value, n_boot=30)
        shared = cluster_bootstrap(df, value, n_boot=30, design=design)
        pd.testing.assert_frame_equal(alone.table, shared.table)
        pd.testing.assert_frame_equal(alone.draws, shared.draws)
    with pytest.raises(ValueError, match="another frame"):
        cluster_bootstrap(df.iloc[:10], "brier", n_boot=5, design=design)
