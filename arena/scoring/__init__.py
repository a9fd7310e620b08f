"""Pure scoring: numpy/pandas arrays in, numbers out (Brier, P/L, crowd proxy, leaderboard).

Imports only numpy, pandas and the standard library — never httpx, sqlmodel, jinja2 or apscheduler — and never
reads the clock. Every metric is registered in `registry.METRICS` with its direction, unit and a one-line description;
importing this package imports the metric modules so the registry is complete.
"""

from arena.scoring import (  # noqa: F401  (importing registers the metrics)
    brier,
    calibration,
    consistency,
    decision_value,
    decomposition,
    difficulty,
    interim,
    irt,
    leaderboard,
    meta,
    pnl,
    proper,
    proxy,
    risk,
    sequential,
    stats,
    validity,
)
from arena.scoring.registry import METRICS, Metric, register

__all__ = ["METRICS", "Metric", "brier", "leaderboard", "pnl", "proxy", "register"]
