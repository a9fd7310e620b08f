"""Question difficulty: a difficulty-adjusted Brier from a two-way fixed-effects fit (question + forecaster) (pure).

Owns the fit and the adjusted score; imports only numpy, pandas and the registry, never the store or the clock.

Why: agents that answered different questions are not comparable on their raw mean Brier — one that happened to
get the easy questions looks skilled. Following ForecastBench's difficulty adjustment, each score is modelled as

    s_ij = a_i + b_j + e_ij        (a_i: forecaster i's effect, b_j: question j's difficulty)

fitted by least squares over the cells observed, and forecaster i's adjusted score is a_i + mean_j b_j: the score it
would have on the average question of the whole set, on the Brier scale (0..1, lower is better). a_i + b̄ is
identified whatever constant the fit moves between the two sets of effects, as long as the forecasters and questions
form one connected group (each pair linked by shared questions); in a design with separate groups the adjustment
compares forecasters only within a group, and `component` says which one. With every forecaster on every
question it equals the raw mean score.

The fit alternates the two closed-form updates a_i = mean_j∈Q_i (s_ij − b_j) and b_j = mean_i∈F_j (s_ij − a_i)
(block coordinate descent on the normal equations, which converges to the least-squares solution) until no effect
moves by more than `tol`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from arena.scoring.cells import Cells, cells_of
from arena.scoring.registry import register

DEFAULT_TOL = 1e-10
DEFAULT_MAX_ITER = 10_000

register(
    "brier_adjusted",
    higher_is_better=False,
    description="Difficulty-adjusted Brier: forecaster effect of a two-way fixed-effects fit, on the average question",
    unit="Brier, 0..1",
)


@dataclass(frozen=True)
class FixedEffects:
    """agents: agent, n (questions scored), raw (mean score), adjusted (a_i + mean b), effect (a_i), component;
    questions: question, n (forecasters), difficulty (b_j: higher is harder for a lower-is-better score);
    iterations: sweeps the fit took; converged: whether it met the tolerance."""

    agents: pd.DataFrame
    iterations: int
    converged: bool
    _questions: tuple[Cells, np.ndarray] = field(repr=False)  # the cells fitted and each question's parameter

    @cached_property
    def questions(self) -> pd.DataFrame:  # (built when asked: the boards use only the agents)
        return self._questions[0].question_frame("difficulty", self._questions[1])


def _components(cells: Cells) -> np.ndarray:
    """Connected component of each forecaster in the forecaster–question graph, numbered by first forecaster.

    Two forecasters are linked when they share a question; the union–find runs over the distinct (first forecaster
    of a question, forecaster) links, at most one per pair of forecasters, rather than over every cell."""
    n_a = cells.n_agents
    first = np.full(cells.n_questions, n_a, dtype=np.int64)
    np.minimum.at(first, cells.question, cells.agent)
    links = np.unique(first[cells.question] * n_a + cells.agent) if cells.agent.size else np.zeros(0, np.int64)
    parent = list(range(n_a))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in zip((links // n_a).tolist(), (links % n_a).tolist()):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    roots = [find(a) for a in range(n_a)]
    labels = {r: i for i, r in enumerate(dict.fromkeys(roots))}
    return np.array([labels[r] for r in roots], dtype=np.int64)


def two_way_fixed_effects(scores: pd.DataFrame | Cells, *, agent: str = "agent",
                          question: str | Sequence[str] = "question", value: str = "brier", tol: float = DEFAULT_TOL,
                          max_iter: int = DEFAULT_MAX_ITER) -> FixedEffects:
    """Fit s_ij = a_i + b_j by least squares over the (agent, question) cells of `scores`.

    scores: one row per scored forecast with the agent, question and value (e.g. Brier, 0..1) columns; several rows
    per cell are averaged into one cell (each cell counts once); NaN values are dropped. An agent whose every value
    is NaN keeps a row with n = 0 and NaN scores. Empty input gives empty frames. `question` may name several
    columns (a cohort and its question), and `scores` may be the cells themselves: see `cells`.
    """
    cells = cells_of(scores, agent=agent, question=question, value=value)
    ai, qj, s = cells.agent, cells.question, cells.value
    n_a, n_q = cells.n_agents, cells.n_questions
    na, nq = cells.per_agent(), cells.per_question()
    a = np.zeros(n_a)
    b = np.zeros(n_q)
    it, converged = 0, s.size == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = np.bincount(ai, weights=s, minlength=n_a) / na
        while not converged and it < max_iter:
            it += 1
            a_new = np.where(na > 0, np.bincount(ai, weights=s - b[qj], minlength=n_a) / np.maximum(na, 1), 0.0)
            b_new = np.bincount(qj, weights=s - a_new[ai], minlength=n_q) / np.maximum(nq, 1)
            shift = max(np.max(np.abs(a_new - a), initial=0.0), np.max(np.abs(b_new - b), initial=0.0))
            a, b = a_new, b_new
            converged = shift <= tol
    b_mean = float(b.mean()) if n_q else float("nan")
    comp = _components(cells) if n_a else np.zeros(0, dtype=np.int64)
    has = na > 0
    agents_out = pd.DataFrame({
        "agent": cells.agents, "n": na.astype("int64"), "raw": np.where(has, raw, np.nan),
        "adjusted": np.where(has, a + b_mean, np.nan), "effect": np.where(has, a, np.nan), "component": comp,
    })
    return FixedEffects(agents_out, it, bool(converged), (cells, b))


def difficulty_adjusted_brier(scores: pd.DataFrame, **options: Any) -> pd.DataFrame:
    """Per agent: n, raw mean Brier and `brier_adjusted` (see the module docstring), best (lowest) first."""
    fit = two_way_fixed_effects(scores, **options)
    out = fit.agents.rename(columns={"raw": "brier", "adjusted": "brier_adjusted"})
    return out.sort_values(["brier_adjusted", "agent"], na_position="last", kind="stable").reset_index(drop=True)


__all__ = ["FixedEffects", "difficulty_adjusted_brier", "two_way_fixed_effects"]
