"""IRT-style skill: a Rasch-type (fractional logit) model of each forecast's score, with a skill per forecaster and
a difficulty per question (pure).

Owns the fit and the `irt_skill` metric; imports only numpy, pandas and the registry, never the store or the clock.

Why beside the difficulty-adjusted Brier: the fixed-effects fit is additive on the Brier scale, so a question every
forecaster finds hard moves everyone by the same Brier amount; an item-response model puts skill and difficulty on
the logit scale, where the same skill gap matters less on a question that is nearly certain or hopeless. Each forecast
is an item response y_ij = 1 − Brier_ij in [0, 1] (an affine map of a proper score, so still proper), modelled as

    E[y_ij] = sigmoid(θ_i − β_j)        (θ_i: forecaster i's skill, β_j: question j's difficulty)

and fitted by the Bernoulli quasi-likelihood with fractional targets (the Rasch model of a fractional response).
θ and β get a weak N(0, PRIOR_SD²) prior (a ridge penalty), which pins the constant the likelihood leaves free and
keeps a forecaster with a perfect score everywhere finite. The fit maximises the penalised log-likelihood by
alternating Newton steps on θ and on β (each vectorised over forecasters or questions, clipped to ±1 logit) until no
parameter moves by more than `tol`; after each sweep θ and β are shifted together to the prior's best common
constant (the one direction the likelihood cannot see). Question difficulty is absolute (not relative to who else answered), so
forecasters that answered different or harder questions are comparable, as with the fixed-effects fit.

irt_skill = θ_i − mean_j β_j, in logits: sigmoid(irt_skill) is forecaster i's expected 1 − Brier on a question of
average difficulty (higher is better). Questions with fewer than two forecasters only fix their own difficulty and
are left out; a forecaster left with no question gets NaN.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from arena.scoring.cells import Cells, cells_of
from arena.scoring.registry import register

PRIOR_SD = 10.0  # logits: weak — it only matters where the likelihood alone has no finite maximum
DEFAULT_TOL = 1e-9
DEFAULT_MAX_ITER = 2_000
_MAX_STEP = 1.0

register(
    "irt_skill",
    higher_is_better=True,
    description="IRT skill: Rasch-type fit of 1 - Brier (skill minus question difficulty, logits) on the question "
                "of average difficulty",
    unit="logits",
)


@dataclass(frozen=True)
class RaschFit:
    """agents: agent, n (questions used), irt_skill (θ − mean β, logits), theta;
    questions: question, n (forecasters), beta (logits); iterations; converged."""

    agents: pd.DataFrame
    iterations: int
    converged: bool
    _questions: tuple[Cells, np.ndarray] = field(repr=False)  # the cells fitted and each question's parameter

    @cached_property
    def questions(self) -> pd.DataFrame:  # (built when asked: the boards use only the agents)
        return self._questions[0].question_frame("beta", self._questions[1])


def item_responses(cells: Cells, *, higher_is_better: bool = False) -> np.ndarray:
    """Per cell of `cells`, the response y in [0, 1]: 1 − value for a lower-is-better score in [0, 1] (Brier), value
    itself when `higher_is_better`; a value outside [0, 1] raises ValueError."""
    v = cells.value
    if ((v < 0.0) | (v > 1.0)).any():
        raise ValueError("the score must lie in [0, 1] for the IRT fit")
    return v if higher_is_better else 1.0 - v


def rasch_skill(scores: pd.DataFrame | Cells, *, agent: str = "agent", question: str | Sequence[str] = "question",
                value: str = "brier", higher_is_better: bool = False, prior_sd: float = PRIOR_SD,
                tol: float = DEFAULT_TOL, max_iter: int = DEFAULT_MAX_ITER) -> RaschFit:
    """Fit the model of the module docstring to `scores` (one row per scored forecast with the agent, question and
    value columns; value is a score in [0, 1] such as Brier, lower is better unless `higher_is_better`; several
    rows per (agent, question) cell are averaged, NaN values dropped; `question` may name several columns, see
    `cells`; `scores` may be the cells themselves). Every agent of `scores` gets a row (NaN skill when it has no
    question with another forecaster); empty input gives empty frames."""
    if prior_sd <= 0:
        raise ValueError("prior_sd must be > 0")
    every = cells_of(scores, agent=agent, question=question, value=value)
    y_all = item_responses(every, higher_is_better=higher_is_better)
    keep = every.per_question()[every.question] >= 2
    cells = every.where(keep)
    ai, qj, y = cells.agent, cells.question, y_all[keep]
    a_labels = cells.agents
    n_a, n_q = cells.n_agents, cells.n_questions
    lam = 1.0 / prior_sd**2
    theta, beta = np.zeros(n_a), np.zeros(n_q)
    it, converged = 0, y.size == 0
    while not converged and it < max_iter:
        it += 1
        p = 1.0 / (1.0 + np.exp(-(theta[ai] - beta[qj])))
        grad = np.bincount(ai, weights=y - p, minlength=n_a) - lam * theta
        curv = np.bincount(ai, weights=p * (1 - p), minlength=n_a) + lam
        step_t = np.clip(grad / curv, -_MAX_STEP, _MAX_STEP)
        theta = theta + step_t
        p = 1.0 / (1.0 + np.exp(-(theta[ai] - beta[qj])))
        grad = -np.bincount(qj, weights=y - p, minlength=n_q) - lam * beta
        curv = np.bincount(qj, weights=p * (1 - p), minlength=n_q) + lam
        step_b = np.clip(grad / curv, -_MAX_STEP, _MAX_STEP)
        beta = beta + step_b
        # the likelihood is blind to a common shift of θ and β; the prior's best shift is exact and costs nothing,
        # and taking it here saves the slow crawl the alternating steps would make along that direction
        c = (theta.sum() + beta.sum()) / (n_a + n_q)
        theta, beta = theta - c, beta - c
        shift = max(np.max(np.abs(step_t), initial=0.0), np.max(np.abs(step_b), initial=0.0), abs(c))
        converged = shift <= tol
    na = np.bincount(ai, minlength=n_a)
    has = na > 0
    b_mean = float(beta.mean()) if n_q else 0.0
    agents_out = pd.DataFrame({
        "agent": a_labels, "n": na.astype(np.int64),
        "irt_skill": np.where(has, theta - b_mean, np.nan), "theta": np.where(has, theta, np.nan),
    })
    return RaschFit(agents_out, it, bool(converged), (cells, beta))


def irt_skill(scores: pd.DataFrame, **options: object) -> pd.DataFrame:
    """Per agent: n and `irt_skill` (logits, higher is better), best first; see `rasch_skill`."""
    fit = rasch_skill(scores, **options)  # type: ignore[arg-type]
    out = fit.agents.drop(columns=["theta"])
    return out.sort_values(["irt_skill", "agent"], ascending=[False, True], na_position="last",
                           kind="stable").reset_index(drop=True)


__all__ = ["PRIOR_SD", "RaschFit", "item_responses", "irt_skill", "rasch_skill"]
