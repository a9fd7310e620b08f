"""Consistency of an agent's probabilities across related questions: multi-outcome sums, negation arbitrage
(seed 003) and the single-answer Brier S′ for multi-outcome markets (seed 004).

Probabilities are in [0, 1]. Pure and vectorised (numpy arrays and pandas group-bys, no loop per agent); imports
only numpy, pandas and the registry.

- Sum to one: for a multi-outcome group (a Polymarket neg-risk event, a Manifold multiple-choice market) exactly
  one outcome wins, so an agent's stated P(outcome) over the whole group should sum to 1; we report |Σp − 1|.
- NEGATION (seed 003, Appendix B.2): forecasts F(P) and F(¬P) should satisfy F(P) + F(¬P) = 1. The arbitrage
  violation — the guaranteed log-score profit of a trader who moves both to the nearest consistent pair — is
      V = −2 log( √(F(P)(1 − F(¬P))) + √((1 − F(P))F(¬P)) )   in nats, ≥ 0, 0 iff F(P) + F(¬P) = 1,
  and a pair fails the check when V ≥ 0.01 (seed 003's threshold: ≈ 110 % total on two exclusive outcomes).
  V(0.5, 0.6) ≈ 0.0102; it is +inf when both are 0 or both are 1 (unbounded arbitrage under the log score).
- S′ (seed 004, Appendix A): an agent that picks one answer y with probability q on a multi-outcome question is
  scored S′ = 1 − (q − 1)² if y is the resolved answer and −q² otherwise; in [−1, 1], higher is better, 0 for q = 0.
  A complete exclusive group of binary markets is such a question: `group_answers` takes the member the agent
  gave the highest P(YES) as its answer and that probability as q.
- Ladders (`arena.domain.ladders`): markets of one question at several thresholds or deadlines, ranked so that
  each member's YES implies every later member's YES; coherence requires P(YES) not to decrease along the rank
  (P(> a) ≥ P(> b) for a < b; P(by d1) ≤ P(by d2) for d1 < d2). Every ordered pair i < j of one ladder the
  agent gave both forecasts for is checked; it violates when p_i > p_j, by p_i − p_j.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from arena.scoring.registry import register

VIOLATION_THRESHOLD = 0.01  # seed 003: a check fails when the arbitrage violation is >= 0.01

register(
    "sum_deviation",
    higher_is_better=False,
    description="Mean |sum of stated outcome probabilities - 1| over the agent's complete multi-outcome groups",
    unit="probability, 0..(k-1)",
)
register(
    "negation_violation",
    higher_is_better=False,
    description="Mean arbitrage violation V(F(P), F(not P)) of the agent's negation pairs (seed 003)",
    unit="nats (log-score profit), >= 0",
)
register(
    "negation_violation_rate",
    higher_is_better=False,
    description="Share of the agent's negation pairs whose arbitrage violation is >= 0.01 (seed 003's threshold)",
    unit="fraction, 0..1",
)
register(
    "ladder_violation_mean",
    higher_is_better=False,
    description="Mean over the agent's ladder pairs (i implies j) of max(0, P(i) - P(j)): threshold and date ladders",
    unit="probability, 0..1",
)
register(
    "s_prime",
    higher_is_better=True,
    description="Mean S' of chosen answers on multi-outcome markets: 1-(q-1)^2 if right, -q^2 if wrong (seed 004)",
    unit="score, -1..1",
)
register(
    "answer_accuracy",
    higher_is_better=True,
    description="Share of multi-outcome markets where the agent's chosen answer was the resolved answer",
    unit="fraction, 0..1",
)


def _probabilities(x: Any, what: str) -> np.ndarray:
    p = np.asarray(x, dtype=float)
    bad = ~np.isnan(p) & ~((p >= 0.0) & (p <= 1.0))
    if bad.any():
        raise ValueError(f"{what} must lie in [0, 1]; got {p[bad][:5].tolist()}")
    return p


def _require(frame: pd.DataFrame, columns: list[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} frame lacks column(s) {missing}")


def negation_violation(p: Any, p_not: Any) -> Any:
    """Seed 003's arbitrage violation V(F(P), F(¬P)) in nats (≥ 0; NaN if either is NaN; inf for (0, 0) or (1, 1)).

    V = −2 log(√(F(P)(1 − F(¬P))) + √((1 − F(P))F(¬P))). Float noise below zero (for a consistent pair) is
    clipped to 0. A Python float for scalar inputs, an array otherwise.
    """
    a = _probabilities(p, "F(P)")
    b = _probabilities(p_not, "F(not P)")
    inner = np.sqrt(a * (1.0 - b)) + np.sqrt((1.0 - a) * b)
    with np.errstate(divide="ignore"):
        v = np.maximum(-2.0 * np.log(inner), 0.0)
    v = np.where(np.isnan(inner), np.nan, v)
    return v.item() if np.ndim(p) == 0 and np.ndim(p_not) == 0 else v


def negation_violations(
    pairs: pd.DataFrame,
    *,
    agent: str = "agent",
    p: str = "p",
    p_not: str = "p_not",
    threshold: float = VIOLATION_THRESHOLD,
) -> pd.DataFrame:
    """Per agent: n_pairs, negation_violation (mean V, nats), max_violation, n_violations (V ≥ threshold) and
    negation_violation_rate (n_violations / n_pairs) over its negation pairs with both forecasts.

    pairs: one row per (agent, proposition) with the agent's F(P) in `p` and F(¬P) in `p_not`. Rows with a
    missing forecast are not scored; an agent with none gets n_pairs 0 and NaN. `threshold` is stated in the
    output column `threshold`.
    """
    _require(pairs, [agent, p, p_not], "pairs")
    v = np.atleast_1d(negation_violation(pairs[p].to_numpy(dtype=float), pairs[p_not].to_numpy(dtype=float)))
    scored = ~np.isnan(v)
    frame = pd.DataFrame({
        "agent": pairs[agent].to_numpy(),
        "_v": np.where(scored, v, np.nan),
        "_n": scored.astype(np.int64),
        "_bad": np.where(scored, v >= threshold, False).astype(np.int64),
    })
    out = frame.groupby("agent", sort=True, dropna=False).agg(
        n_pairs=("_n", "sum"), negation_violation=("_v", "mean"), max_violation=("_v", "max"),
        n_violations=("_bad", "sum"),
    ).reset_index()
    with np.errstate(divide="ignore", invalid="ignore"):
        out["negation_violation_rate"] = np.where(out["n_pairs"] > 0, out["n_violations"] / out["n_pairs"], np.nan)
    out["threshold"] = threshold
    return out


def probability_sums(
    forecasts: pd.DataFrame,
    *,
    agent: str = "agent",
    group: str = "group_id",
    probability: str = "probability",
    group_size: str | None = None,
) -> pd.DataFrame:
    """Per (agent, group): n_outcomes (outcomes the agent gave a probability for), total (Σp), deviation
    (|total − 1|) and complete.

    forecasts: one row per (agent, group, outcome) with the stated P(outcome wins). When `group_size` names a
    column with the number of outcomes in the group, a group is complete only if the agent covered all of them.
    An incomplete group is scored only when its partial sum already exceeds 1 (deviation = total − 1, a lower
    bound on the real one); otherwise its deviation is NaN, since a partial sum below 1 shows no inconsistency.
    Without `group_size` every group counts as complete. Rows with a NaN probability are not counted.
    """
    cols = [agent, group, probability] + ([group_size] if group_size else [])
    _require(forecasts, cols, "forecasts")
    p = _probabilities(forecasts[probability].to_numpy(dtype=float), probability)
    frame = pd.DataFrame({"agent": forecasts[agent].to_numpy(), "group": forecasts[group].to_numpy(),
                          "_p": p, "_n": (~np.isnan(p)).astype(np.int64)})
    if group_size:
        frame["_size"] = pd.to_numeric(forecasts[group_size]).to_numpy(dtype=float)
    aggs: dict[str, Any] = {"n_outcomes": ("_n", "sum"), "total": ("_p", "sum")}
    if group_size:
        aggs["_size"] = ("_size", "max")
    out = frame.groupby(["agent", "group"], sort=True, dropna=False).agg(**aggs).reset_index()
    complete = out["n_outcomes"].to_numpy() > 0
    if group_size:
        complete &= out["n_outcomes"].to_numpy() >= out["_size"].to_numpy()
        out = out.drop(columns="_size")
    out["complete"] = complete
    out["total"] = np.where(out["n_outcomes"] > 0, out["total"], np.nan)
    total = out["total"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        over = total > 1.0
    out["deviation"] = np.where(complete, np.abs(total - 1.0), np.where(over, total - 1.0, np.nan))
    return out


def sum_deviation(forecasts: pd.DataFrame, **columns: Any) -> pd.DataFrame:
    """Per agent: n_groups (groups scored, see `probability_sums`), sum_deviation (mean |Σp − 1|), max_deviation
    and mean_total (mean Σp over complete groups; > 1 means the agent over-commits). Same arguments as
    `probability_sums`; NaN for an agent with no scored group.
    """
    sums = probability_sums(forecasts, **columns)
    sums = sums.assign(_scored=sums["deviation"].notna().astype(np.int64),
                       _total=np.where(sums["complete"], sums["total"], np.nan))
    return sums.groupby("agent", sort=True, dropna=False).agg(
        n_groups=("_scored", "sum"), sum_deviation=("deviation", "mean"), max_deviation=("deviation", "max"),
        mean_total=("_total", "mean"),
    ).reset_index()


LADDER_COLUMNS = ["agent", "n_ladders", "n_ladder_pairs", "ladder_violations", "ladder_violation_mean",
                  "ladder_violation_max"]


def ladder_violations(
    forecasts: pd.DataFrame,
    *,
    agent: str = "agent",
    ladder: str = "ladder",
    rank: str = "rank",
    probability: str = "probability",
) -> pd.DataFrame:
    """Per agent: n_ladders (ladders with at least two stated members), n_ladder_pairs (ordered pairs i < j by
    rank within one ladder, both stated), ladder_violations (pairs with p_i > p_j), ladder_violation_mean (mean of
    max(0, p_i − p_j) over the pairs, coherent ones counting 0) and ladder_violation_max.

    forecasts: one row per (agent, ladder, member) with the member's `rank` (P(YES) must not decrease with it:
    `arena.domain.ladders.Ladder.members` order) and the stated P(YES). Rows with a NaN probability are not
    scored; members of equal rank are not compared. An agent with no pair is absent from the output.
    """
    _require(forecasts, [agent, ladder, rank, probability], "forecasts")
    p = _probabilities(forecasts[probability].to_numpy(dtype=float), probability)
    frame = pd.DataFrame({"agent": forecasts[agent].to_numpy(), "ladder": forecasts[ladder].to_numpy(),
                          "rank": pd.to_numeric(forecasts[rank]).to_numpy(dtype=float), "p": p})
    frame = frame[~np.isnan(frame["p"].to_numpy())]
    pairs = frame.merge(frame, on=["agent", "ladder"], suffixes=("_i", "_j"))
    pairs = pairs[pairs["rank_i"] < pairs["rank_j"]]
    if not len(pairs):
        return pd.DataFrame(columns=LADDER_COLUMNS)
    gap = np.maximum(pairs["p_i"].to_numpy() - pairs["p_j"].to_numpy(), 0.0)
    pairs = pairs.assign(_gap=gap, _bad=(gap > 0.0).astype(np.int64))
    out = pairs.groupby("agent", sort=True).agg(
        n_ladders=("ladder", "nunique"), n_ladder_pairs=("_gap", "size"), ladder_violations=("_bad", "sum"),
        ladder_violation_mean=("_gap", "mean"), ladder_violation_max=("_gap", "max"),
    ).reset_index()
    return out[LADDER_COLUMNS]


def s_prime(correct: Any, q: Any) -> Any:
    """Seed 004's S′ per answer: 1 − (q − 1)² when correct, −q² when not; in [−1, 1], higher is better.

    correct: booleans (NaN or None → unscored → NaN); q: the probability the agent gave its chosen answer.
    """
    qq = _probabilities(q, "q")
    c, qq = np.broadcast_arrays(np.asarray(correct, dtype=object), qq)
    known = np.asarray(pd.notna(c), dtype=bool)
    right = np.where(known, c, False).astype(bool)
    out = np.where(known, np.where(right, 1.0 - (qq - 1.0) ** 2, -(qq**2)), np.nan)
    return out.item() if np.ndim(out) == 0 else out


def _member_rows(forecasts: pd.DataFrame, agent: str, group: str, market: str, probability: str, outcome: str,
                 group_size: str) -> pd.DataFrame:
    """One row per (agent, group, member) stated: agent, group, market, p, y (resolved YES value) and size."""
    _require(forecasts, [agent, group, market, probability, outcome, group_size], "forecasts")
    frame = pd.DataFrame({"agent": forecasts[agent].to_numpy(), "group": forecasts[group].to_numpy(),
                          "market": forecasts[market].astype(str).to_numpy(),
                          "p": _probabilities(forecasts[probability].to_numpy(dtype=float), probability),
                          "y": pd.to_numeric(forecasts[outcome]).to_numpy(dtype=float),
                          "size": pd.to_numeric(forecasts[group_size]).to_numpy(dtype=float)})
    return frame[~np.isnan(frame["p"].to_numpy())].drop_duplicates(["agent", "group", "market"])


def group_answers(
    forecasts: pd.DataFrame,
    *,
    agent: str = "agent",
    group: str = "group",
    market: str = "market_id",
    probability: str = "probability",
    outcome: str = "outcome_yes",
    group_size: str = "group_size",
) -> pd.DataFrame:
    """Seed 004's answers on complete exclusive groups of binary markets: one row per (agent, group) whose
    forecasts cover all `group_size` members — `answer` (the member given the highest stated P(YES); ties go
    to the smallest member id), `q` (that probability) and `resolved_answer` (the member that resolved YES,
    when every member has resolved to 0 or 1 and exactly one to 1; else None, and `answer_scores` skips it).

    forecasts: one row per (agent, group, member) with P(YES) and the member's resolved YES value (NaN while
    unresolved or void). Output columns: agent, group, answer, q, resolved_answer.
    """
    frame = _member_rows(forecasts, agent, group, market, probability, outcome, group_size)
    columns = ["agent", "group", "answer", "q", "resolved_answer"]
    if not len(frame):
        return pd.DataFrame(columns=columns)
    n = frame.groupby(["agent", "group"])["market"].transform("size").to_numpy()
    frame = frame[n >= frame["size"].to_numpy()]
    if not len(frame):
        return pd.DataFrame(columns=columns)
    # The answer: highest probability first, then the smallest id (a stable, documented tie-break).
    best = frame.sort_values(["agent", "group", "p", "market"], ascending=[True, True, False, True])
    best = best.drop_duplicates(["agent", "group"])
    # The resolved answer is a property of the group, the same for every agent that covered it.
    y = frame.drop_duplicates(["group", "market"])
    decided = y.groupby("group").agg(known=("y", lambda v: bool(np.isin(v, (0.0, 1.0)).all())),
                                     wins=("y", lambda v: int((v == 1.0).sum())))
    winners = y[y["y"] == 1.0].drop_duplicates("group").set_index("group")["market"]
    resolved = {g: (winners.get(g) if row.known and row.wins == 1 else None) for g, row in decided.iterrows()}
    return pd.DataFrame({"agent": best["agent"].to_numpy(), "group": best["group"].to_numpy(),
                         "answer": best["market"].to_numpy(), "q": best["p"].to_numpy(),
                         "resolved_answer": [resolved.get(g) for g in best["group"]]}, columns=columns)


def multi_class_brier(
    forecasts: pd.DataFrame,
    *,
    agent: str = "agent",
    group: str = "group",
    market: str = "market_id",
    probability: str = "probability",
    outcome: str = "outcome_yes",
    group_size: str = "group_size",
) -> pd.DataFrame:
    """Per agent: n_multi (complete resolved groups scored) and multi_brier, the mean over them of the full
    multi-class Brier score Σ_i (p_i − y_i)² over the group's members (0 best, 2 worst), with the stated P(YES)
    of each member as given — not renormalised, so a set that does not sum to 1 pays for it.

    A group counts when the agent's forecasts cover all `group_size` members and every member has resolved to 0
    or 1 with exactly one 1 (the same groups `group_answers` scores with S′). forecasts: as for `group_answers`.
    """
    frame = _member_rows(forecasts, agent, group, market, probability, outcome, group_size)
    columns = ["agent", "n_multi", "multi_brier"]
    if not len(frame):
        return pd.DataFrame(columns=columns)
    per = frame.assign(sq=(frame["p"] - frame["y"]) ** 2, binary=np.isin(frame["y"], (0.0, 1.0)),
                       win=(frame["y"] == 1.0).astype(int))
    g = per.groupby(["agent", "group"]).agg(n=("market", "size"), size=("size", "max"), score=("sq", "sum"),
                                           known=("binary", "all"), wins=("win", "sum")).reset_index()
    g = g[(g["n"] >= g["size"]) & g["known"] & (g["wins"] == 1)]
    if not len(g):
        return pd.DataFrame(columns=columns)
    return g.groupby("agent", sort=True).agg(n_multi=("score", "size"), multi_brier=("score", "mean")).reset_index()


def answer_scores(
    answers: pd.DataFrame,
    *,
    agent: str = "agent",
    answer: str = "answer",
    q: str = "q",
    resolved: str = "resolved_answer",
) -> pd.DataFrame:
    """Per agent: n (scored answers), s_prime (mean S′, −1..1) and answer_accuracy (share correct).

    answers: one row per chosen answer — the agent, the outcome it picked (`answer`), the probability it gave that
    outcome (`q`) and the market's resolved answer (`resolved`; None/NaN while unresolved or when void, and then
    the row is not scored). Answers match when their string forms are equal (outcome keys, not free text).
    """
    _require(answers, [agent, answer, q, resolved], "answers")
    res = answers[resolved]
    known = res.notna().to_numpy() & answers[answer].notna().to_numpy()
    correct = answers[answer].astype(str).to_numpy() == res.astype(str).to_numpy()
    qq = _probabilities(answers[q].to_numpy(dtype=float), q)
    known &= ~np.isnan(qq)
    score = np.where(correct, 1.0 - (qq - 1.0) ** 2, -(qq**2))
    frame = pd.DataFrame({
        "agent": answers[agent].to_numpy(),
        "_n": known.astype(np.int64),
        "_s": np.where(known, score, np.nan),
        "_c": np.where(known, correct.astype(float), np.nan),
    })
    return frame.groupby("agent", sort=True, dropna=False).agg(
        n=("_n", "sum"), s_prime=("_s", "mean"), answer_accuracy=("_c", "mean")
    ).reset_index()


__all__ = [
    "VIOLATION_THRESHOLD",
    "answer_scores",
    "LADDER_COLUMNS",
    "group_answers",
    "ladder_violations",
    "multi_class_brier",
    "negation_violation",
    "negation_violations",
    "probability_sums",
    "s_prime",
    "sum_deviation",
]
