"""Plain values for the page dataclasses: a number or NaN ("unknown", never 0), nested config as one line of
text. Imports nothing of the arena.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd


NAN = float("nan")


def num(v: Any) -> float:
    """`v` as a float; NaN for None, NaN/NA or anything that is not a number."""
    try:
        return NAN if v is None or pd.isna(v) else float(v)
    except (TypeError, ValueError):
        return NAN


def flat(value: Any) -> str:
    """A stored config or rule value as one line: dicts and lists as sorted JSON, anything else as str()."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return str(value)
