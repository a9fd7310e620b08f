"""A board as a reader sees it, on the site and in the terminal: a seat whose forecasts equal a reference's on
every question (its `same_as` names that reference) is one row with it — "market-follower = market" — and rows
whose rank key reads the same at the precision it is shown with share a rank ("2="). The JSON and CSV boards keep
the exact ranks and every row. Pure: a frame in, a frame out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from arena.scoring.board import rank_with_ties
from arena.scoring.registry import METRICS

REFERENCE = "reference"
REFERENCE_SUFFIX = " (reference)"

# Decimals a board column is shown with (site and terminal alike); a fraction shown as a whole percent has 2.
SHOWN_DIGITS: dict[str, int] = {
    "forecast_brier": 3, "brier_minus_market": 3, "bss_vs_market": 2, "implied_brier": 3, "bss_vs_0_25": 2,
    "kelly_brier": 3, "stated_brier": 3, "coherence_gap": 3, "contradicting_bets": 2, "pnl": 2, "return_pct": 1,
    "win_rate": 2, "crowd_proxy": 4, "log_score": 3, "spherical_score": 3, "brier_adjusted": 3, "irt_skill": 2,
    "decision_value": 4, "sharpe": 2, "max_drawdown": 3, "pnl_at_bid": 2,
}
_METRIC_OF = {"implied_brier": "brier", "kelly_brier": "brier_kelly", "stated_brier": "brier_stated"}


def _missing(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def twin_of(value: Any) -> str:
    """A `same_as` cell as text: the reference's name, "" when the row has none."""
    return "" if _missing(value) else str(value)


def shown_name(name: str, same_as: Any) -> str:
    """"market-follower = market" for a seat equal to the reference "market (reference)" ("always-0.5 =
    reference" where the reference's short name is the seat's own); the name alone else."""
    twin = twin_of(same_as)
    if not twin:
        return name
    short = twin.removesuffix(REFERENCE_SUFFIX)
    return f"{name} = {short if short != name else REFERENCE}"


def merge_twins(frame: pd.DataFrame, name_key: str) -> pd.DataFrame:
    """The board without the reference rows some seat's `same_as` names: that seat's row stands for both."""
    if frame is None or "same_as" not in frame.columns or not len(frame):
        return frame
    named = {twin_of(v) for v in frame["same_as"].tolist()} - {""}
    if not named:
        return frame
    kinds = frame["kind"].astype(str) if "kind" in frame.columns else pd.Series("", index=frame.index)
    drop = frame[name_key].astype(str).isin(named) & (kinds == REFERENCE)
    return frame[~drop].reset_index(drop=True)


def _higher_is_better(rank_by: str) -> bool:
    m = METRICS.get(_METRIC_OF.get(rank_by, rank_by))
    return bool(m.higher_is_better) if m is not None else False


def shown_values(values: Sequence[Any], digits: int) -> np.ndarray:
    """Each value as the number its shown text reads ("{:.3f}"), NaN where unknown."""
    out = np.full(len(values), np.nan)
    for i, v in enumerate(values):
        if not _missing(v) and math.isfinite(float(v)):
            out[i] = float(f"{float(v):.{digits}f}")
    return out


def shown_rank_labels(values: Sequence[Any], digits: int = 3, higher_is_better: bool = False) -> tuple[str, ...]:
    """Rank labels of rows already in order, by values as shown with `digits` decimals: "2=" for a shared rank,
    "" for an unknown value (a list ordered by a reported column, such as the bet-size Brier)."""
    _, labels = rank_with_ties(shown_values(values, digits), higher_is_better)
    return tuple(label or "" for label in labels)


def shown_ranks(frame: pd.DataFrame, rank_by: str) -> pd.DataFrame:
    """`rank` and `rank_label` recomputed on the rank key as shown: two rows whose scores print alike share a rank.
    The rows keep their order (rounding keeps it); a board without the rank key is returned as it is."""
    if frame is None or not len(frame) or rank_by not in frame.columns or "rank_label" not in frame.columns:
        return frame
    digits = SHOWN_DIGITS.get(rank_by, 3)
    ranks, labels = rank_with_ties(shown_values(frame[rank_by].tolist(), digits), _higher_is_better(rank_by))
    out = frame.copy()
    out["rank"] = ranks
    out["rank_label"] = pd.Series(labels, index=out.index, dtype=object)  # None stays None (unranked)
    return out


def shown_board(frame: pd.DataFrame, rank_by: str, name_key: str | None = None) -> pd.DataFrame:
    """The board as shown: twins merged, then ranks by the shown values (a merged reference no longer takes a rank)."""
    if frame is None or not len(frame):
        return frame
    key = name_key or ("model" if "model" in frame.columns else "agent")
    return shown_ranks(merge_twins(frame, key), rank_by)


__all__ = ["SHOWN_DIGITS", "merge_twins", "shown_board", "shown_name", "shown_rank_labels", "shown_ranks",
           "shown_values", "twin_of"]
