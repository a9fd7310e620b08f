"""Typed readers for fields of a venue's JSON object, shared by the venue parsers: each returns the value or
raises ParseError naming the field (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arena.errors import ParseError


def text_field(raw: Mapping[str, Any], key: str, *, required: bool = False) -> str:
    """A string field; "" when absent or null unless `required` (then missing or blank is an error)."""
    value = raw.get(key)
    if value is None:
        if required:
            raise ParseError("missing", field=key)
        return ""
    if not isinstance(value, str):
        raise ParseError(f"expected a string, got {type(value).__name__}", field=key)
    if required and not value.strip():
        raise ParseError("empty", field=key)
    return value


def bool_field(raw: Mapping[str, Any], key: str) -> bool | None:
    """A boolean field; None when absent or null."""
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise ParseError(f"expected a boolean, got {value!r}", field=key)
    return value
