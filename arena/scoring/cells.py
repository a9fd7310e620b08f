"""Score cells: one (forecaster, question) cell per pair that has a score, with the mean of its rows, as integer
codes — the design both question-difficulty fits (`difficulty`, `irt`) are fitted on (pure).

Owns the grouping of a long score frame into cells; imports only numpy and pandas, never the store or the clock.

Why integer codes: the overall board fits a million forecasts (20 models × 100k cohort questions). Grouping by the
text columns, and joining a cohort and a question into one text key, cost more than the fits themselves; here the
keys are coded once (`codes`) and a cell is the integer `agent * n_questions + question`, summed with
`np.bincount`. A question may be named by several columns (a cohort and its market@round): its label is then the
tuple of their values, ordered as the tuples sort.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from arena.scoring.codes import column_codes, key_codes

# Up to this many (agent × question) slots the cells are summed by a dense bincount; beyond it, by a sort.
_DENSE_SLOTS = 50_000_000


@dataclass(frozen=True)
class Cells:
    """agents: every agent of the frame (sorted, also those without a scored row); questions: every question with a
    scored cell (sorted); per cell, in (agent, question) order: agent and question codes into those labels, `value`
    (the mean of the cell's rows) and `rows` (how many rows it has)."""

    agents: pd.Index
    questions: pd.Index
    agent: np.ndarray
    question: np.ndarray
    value: np.ndarray
    rows: np.ndarray

    @property
    def n_agents(self) -> int:
        return len(self.agents)

    @property
    def n_questions(self) -> int:
        return len(self.questions)

    def per_agent(self) -> np.ndarray:
        """Cells per agent (the questions it scored), as floats."""
        return np.bincount(self.agent, minlength=self.n_agents).astype(float)

    def per_question(self) -> np.ndarray:
        """Cells per question (the forecasters that scored it), as floats."""
        return np.bincount(self.question, minlength=self.n_questions).astype(float)

    def question_frame(self, name: str, values: np.ndarray) -> pd.DataFrame:
        """question (its label, or the tuple of its columns' values), n (forecasters on it) and `name` (a value
        per question, in question order, e.g. a fitted difficulty)."""
        labels = list(self.questions) if self.questions.nlevels > 1 else self.questions
        return pd.DataFrame({"question": labels, "n": self.per_question().astype(np.int64), name: values})

    def where(self, keep: np.ndarray) -> Cells:
        """The cells where `keep` holds, questions renumbered to those left (agents keep every label)."""
        used = np.zeros(self.n_questions, dtype=bool)
        used[self.question[keep]] = True
        renumber = np.cumsum(used) - 1
        return Cells(self.agents, self.questions[used], self.agent[keep], renumber[self.question[keep]],
                     self.value[keep], self.rows[keep])


def cells_of(scores: pd.DataFrame | Cells, **columns: str | Sequence[str]) -> Cells:
    """`scores` itself when it is already cells (so two fits share one grouping), else `score_cells(scores, ...)`."""
    return scores if isinstance(scores, Cells) else score_cells(scores, **columns)  # type: ignore[arg-type]


def score_cells(scores: pd.DataFrame, *, agent: str = "agent", question: str | Sequence[str] = "question",
                value: str = "brier") -> Cells:
    """The cells of `scores` (one row per scored forecast): rows with a NaN value, or without an agent or a
    question, are left out; an agent with no row left keeps its label (and no cell)."""
    columns = [question] if isinstance(question, str) else list(question)
    need = [agent, *columns, value]
    missing = [c for c in need if c not in scores.columns]
    if missing:
        raise ValueError(f"scores frame lacks column(s) {missing}")
    a_code, agents = column_codes(scores[agent])
    q_code, questions = key_codes(scores, columns)
    v = pd.to_numeric(scores[value], errors="raise").to_numpy(dtype=float)
    keep = np.isfinite(v) & (a_code >= 0) & (q_code >= 0)
    a_code, q_code, v = a_code[keep], q_code[keep], v[keep]
    n_q = len(questions)
    width = max(n_q, 1)  # a cell's slot is agent * width + question
    slot = a_code * width + q_code
    if len(agents) * n_q <= _DENSE_SLOTS:
        n = np.bincount(slot, minlength=len(agents) * n_q)
        present = np.flatnonzero(n)
        rows = n[present]
        total = np.bincount(slot, weights=v, minlength=len(agents) * n_q)[present]
    else:
        present, inverse, rows = np.unique(slot, return_inverse=True, return_counts=True)
        total = np.bincount(inverse, weights=v, minlength=present.size)
    used = np.zeros(n_q, dtype=bool)
    used[present % width] = True
    renumber = np.cumsum(used) - 1
    return Cells(agents, questions[used], present // width, renumber[present % width], total / rows,
                 rows.astype(np.int64))


__all__ = ["Cells", "cells_of", "score_cells"]
