"""The one query helper the readers share: a query restricted to rows whose column is one of some keys, or left
whole when the keys are None (every row). Builds queries; runs none."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def where_in(q: Any, column: Any, keys: Sequence[Any] | None) -> Any:
    """`q` restricted to rows whose `column` is one of `keys`; unchanged when `keys` is None (every row)."""
    return q if keys is None else q.where(column.in_(list(keys)))


__all__ = ["where_in"]
