"""CSV cells that a spreadsheet will not run: every CSV the arena writes passes its text through here.

A cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return is read by Excel, LibreOffice and Google
Sheets as a formula (`=HYPERLINK(…)`, `=cmd|…`), so a forecaster name, a market question or a model's rationale
could run when the export is opened. Such a cell gets a leading apostrophe (the OWASP advice), which the
spreadsheets show as text. A cell that is a number as a whole (exact money like "-12.50", "1e-3") is left as
it is: it is data, not a formula."""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def neutralise(value: Any) -> Any:
    """The cell as written safely (non-strings unchanged)."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def safe_frame(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with every text cell and column name neutralised (a copy when anything changed)."""
    changes = {}
    for c in df.columns:
        if df[c].dtype == object or str(df[c].dtype) in ("string", "str"):
            risky = [i for i, v in zip(df.index, df[c]) if neutralise(v) is not v]
            if risky:
                changes[c] = risky
    renamed = {c: neutralise(c) for c in df.columns if isinstance(c, str) and neutralise(c) != c}
    if not changes and not renamed:
        return df
    out = df.copy()
    for c, rows in changes.items():  # only the cells that change: the column keeps its type and other cells
        out[c] = out[c].astype(object)
        out.loc[rows, c] = [neutralise(v) for v in out.loc[rows, c]]
    return out.rename(columns=renamed) if renamed else out


__all__ = ["FORMULA_START", "neutralise", "safe_frame"]
