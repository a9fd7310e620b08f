"""Proper scores beside the Brier score: the logarithmic and the spherical score of a binary forecast (pure).

Owns the per-forecast scores and their means; imports only numpy and the registry. A forecast is f = P(YES) in
[0, 1]; the outcome o is the YES payout in [0, 1] (1 YES, 0 NO, a fraction for a probabilistic resolution, NaN for
unresolved or void — excluded). For a fractional outcome a score is extended linearly,
S(f, o) = o · S(f, YES) + (1 − o) · S(f, NO), which keeps it proper (its expectation is maximised by the truth).

- log score (log loss, lower is better, nats): −[o ln f + (1 − o) ln(1 − f)], with f clipped to [1e−6, 1 − 1e−6]
  so a certain forecast that is wrong costs ln(10⁶) ≈ 13.8 nats rather than infinity (one such answer would
  otherwise decide every ranking);
- spherical score (higher is better, 0..1): the probability given to what happened divided by the forecast's
  length, [o f + (1 − o)(1 − f)] / sqrt(f² + (1 − f)²).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.scoring.registry import metric

LOG_CLIP = 1e-6


def _pair(forecast: Any, outcome: Any) -> tuple[np.ndarray, np.ndarray]:
    f, o = np.broadcast_arrays(np.asarray(forecast, dtype=float), np.asarray(outcome, dtype=float))
    for x, what in ((f, "forecast"), (o, "outcome")):
        bad = np.isfinite(x) & ((x < 0.0) | (x > 1.0))
        if bad.any():
            raise ValueError(f"{what} must lie in [0, 1]; got {x[bad][:5].tolist()}")
    return f, o


def log_loss(forecast: Any, outcome: Any) -> np.ndarray:
    """Per-forecast log score in nats (lower is better); NaN where either input is NaN."""
    f, o = _pair(forecast, outcome)
    c = np.clip(f, LOG_CLIP, 1.0 - LOG_CLIP)
    return -(o * np.log(c) + (1.0 - o) * np.log1p(-c))


def spherical(forecast: Any, outcome: Any) -> np.ndarray:
    """Per-forecast spherical score in [0, 1] (higher is better); NaN where either input is NaN."""
    f, o = _pair(forecast, outcome)
    return (o * f + (1.0 - o) * (1.0 - f)) / np.sqrt(f**2 + (1.0 - f) ** 2)


def _mean(x: np.ndarray) -> float:
    x = x[~np.isnan(x)]
    return float(x.mean()) if x.size else float("nan")


@metric("log_score", higher_is_better=False, unit="nats",
        description="Mean log loss of stated P(YES): -[o ln f + (1-o) ln(1-f)], f clipped to [1e-6, 1-1e-6]")
def log_score(forecast: Any, outcome: Any) -> float:
    """Mean log loss over the resolved forecasts (nats, lower is better); NaN when none is resolved."""
    return _mean(np.atleast_1d(log_loss(forecast, outcome)))


@metric("spherical_score", higher_is_better=True, unit="score, 0..1",
        description="Mean spherical score of stated P(YES): probability given to the outcome / forecast length")
def spherical_score(forecast: Any, outcome: Any) -> float:
    """Mean spherical score over the resolved forecasts (0..1, higher is better); NaN when none is resolved."""
    return _mean(np.atleast_1d(spherical(forecast, outcome)))


__all__ = ["LOG_CLIP", "log_loss", "log_score", "spherical", "spherical_score"]
