"""The provisional rule, defined once: a score resting on fewer resolved forecasts (or bets) than
PROVISIONAL_MIN_RESOLVED is shown but flagged provisional. Every board, page, the CLI and the README read it from
here. Pure; imports nothing from the arena."""

from __future__ import annotations

from typing import Any

import numpy as np

PROVISIONAL_MIN_RESOLVED = 20
PROVISIONAL_RULE = (f"provisional: fewer than {PROVISIONAL_MIN_RESOLVED} resolved forecasts (bets on bet-only "
                    "tables) behind the score")


def is_provisional(n_resolved: Any, min_resolved: int = PROVISIONAL_MIN_RESOLVED) -> Any:
    """True where `n_resolved` (a count, scalar or array; NaN counts as 0) is below `min_resolved`."""
    n = np.nan_to_num(np.asarray(n_resolved, dtype=float), nan=0.0)
    out = n < min_resolved
    return bool(out) if out.ndim == 0 else out


__all__ = ["PROVISIONAL_MIN_RESOLVED", "PROVISIONAL_RULE", "is_provisional"]
