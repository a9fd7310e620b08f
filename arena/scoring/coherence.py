"""Coherence of an agent's bets with its own stated beliefs: how far the Kelly-implied P(YES) of each bet lies from
the P(YES) the agent stated with it, and how often a bet's side contradicts the agent's stated edge.

Pure and vectorised; imports only numpy and the scoring registry.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.scoring.brier import is_yes
from arena.scoring.registry import metric


def _floats(x: Any) -> np.ndarray:
    return np.atleast_1d(np.asarray(x, dtype=float))


@metric(
    "coherence_gap",
    higher_is_better=False,
    description="Mean |stated P(YES) − Kelly-implied P(YES)| over the agent's bets with both (0 = fully coherent)",
    unit="probability, 0..1",
)
def coherence_gap(stated: Any, p_kelly: Any) -> float:
    """Mean absolute gap in [0, 1] between stated and Kelly-implied P(YES) over bets where both are known; NaN when
    there is no such bet (never 0)."""
    s, k = np.broadcast_arrays(_floats(stated), _floats(p_kelly))
    keep = ~(np.isnan(s) | np.isnan(k))
    return float(np.abs(s[keep] - k[keep]).mean()) if keep.any() else float("nan")


def contradicts(side: Any, stated: Any, price_yes: Any) -> np.ndarray:
    """Per bet: 1.0 when the side contradicts the agent's stated edge, 0.0 when not, NaN when unknown.

    A YES bet contradicts when the stated P(YES) is below the YES price paid (the agent says YES is overpriced
    and buys it); a NO bet contradicts when the stated P(YES) is above the YES price at the bet (NO costs
    1 − that price, so the agent says NO is overpriced and buys it). A stated P(YES) equal to the price is no
    contradiction (no edge either way).
    """
    s, q = np.broadcast_arrays(_floats(stated), _floats(price_yes))
    yes = np.broadcast_to(np.atleast_1d(is_yes(np.atleast_1d(np.asarray(side, dtype=object)))), s.shape)
    with np.errstate(invalid="ignore"):
        bad = np.where(yes, s < q, s > q)
    return np.where(np.isnan(s) | np.isnan(q), np.nan, bad.astype(float))


@metric(
    "contradicting_bets",
    higher_is_better=False,
    description="Share of the agent's bets whose side contradicts its own stated P(YES) versus the price paid",
    unit="share, 0..1",
)
def contradicting_share(side: Any, stated: Any, price_yes: Any) -> float:
    """Share in [0, 1] of bets (with a stated P(YES) and a price) that contradict the stated edge; NaN if none."""
    c = contradicts(side, stated, price_yes)
    c = c[~np.isnan(c)]
    return float(c.mean()) if c.size else float("nan")


__all__ = ["coherence_gap", "contradicting_share", "contradicts"]
