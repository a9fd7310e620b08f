"""Key codes: dense integer codes for the key columns of a long frame (agent, cohort, market, question), numbered in
the keys' sorted order, so scoring can group with `np.bincount` rather than by text (pure).

Owns the factorising of key columns; imports only numpy and pandas, never the store or the clock.

Why: the overall board groups a million rows by agent, by (cohort, market) and by (cohort, question). Grouping by
text columns — or joining two of them into one text key — cost more than the arithmetic done on the groups. Each
column is factorised once (sorted), and several columns combine in mixed radix into one integer, whose order is
the order of the key tuples.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def column_codes(column: pd.Series, *, dropna: bool = True) -> tuple[np.ndarray, pd.Index]:
    """Per row, the code of its value among the sorted distinct values (the labels); a missing value is -1 with
    `dropna`, else a key of its own, sorted last."""
    codes, labels = pd.factorize(column, sort=True, use_na_sentinel=dropna)
    return np.asarray(codes, dtype=np.int64), pd.Index(labels)


def key_codes(frame: pd.DataFrame, columns: Sequence[str], *, dropna: bool = True) -> tuple[np.ndarray, pd.Index]:
    """Per row, the code of its key (the values of `columns`) among the sorted distinct keys present, and those
    keys: an Index for one column, a MultiIndex (named by the columns) for several. With `dropna`, a row missing
    any key value gets -1; without it, a missing value is a key value of its own."""
    if len(columns) == 1:
        codes, labels = column_codes(frame[columns[0]], dropna=dropna)
        return codes, labels.rename(columns[0])
    codes, first = column_codes(frame[columns[0]], dropna=dropna)
    missing = codes < 0
    levels, steps = [first], []
    for column in columns[1:]:
        c, labels = column_codes(frame[column], dropna=dropna)
        missing |= c < 0
        width = max(len(labels), 1)
        # re-densified at every step (np.unique keeps the order), so the mixed-radix integer cannot overflow
        present, dense = np.unique((codes * width + c)[~missing], return_inverse=True)
        codes = np.full(len(frame), -1, dtype=np.int64)
        codes[~missing] = dense
        levels.append(labels)
        steps.append((present, width))
    at = np.arange(steps[-1][0].size)
    digits = []
    for (present, width), labels in zip(reversed(steps), reversed(levels[1:])):
        digits.append(labels.take(present[at] % width))
        at = present[at] // width
    digits.append(first.take(at))
    return codes, pd.MultiIndex.from_arrays(list(reversed(digits)), names=list(columns))


__all__ = ["column_codes", "key_codes"]
