"""Listing pages read in two steps: each entry kept as its JSON bytes, a head of a few keys decoded from them first,
the whole entry only when it must be parsed (pure; no httpx).

A sync lists every open market of a venue every 15 minutes and, with payload fingerprints
(``venues.fingerprint``), parses only the few whose content changed. Decoding every entry of every page into
Python dicts then costs more than all the rest the sync does with them: 10k Gamma markets are ~50 MB of JSON, and
orjson builds ~900k objects from them to read ~40 keys per market. msgspec instead splits a page into the byte
spans of its entries (validating the JSON as it goes) and decodes from a span only the keys a ``msgspec.Struct``
declares, skipping the rest in C; the whole entry is decoded — as ``VenueHTTP.get_json`` decodes a page — only
for the entries that are parsed.

A page msgspec cannot split (not the expected shape, or JSON it refuses such as ``NaN``) is decoded the usual way
by the caller, so errors and the stdlib's leniency stay exactly those of the page-at-a-time path.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec
import orjson

_UNDECODED = object()


def loads(data: bytes | memoryview) -> Any:
    """JSON as the venues' bodies are decoded: orjson, then the stdlib's json for what orjson refuses (NaN, a
    number past a double's range); ValueError when neither takes it."""
    try:
        return orjson.loads(data)
    except ValueError:
        return json.loads(bytes(data))


class Listed:
    """One entry of a listing page: its JSON bytes (`span`) and the `head` read from them (None when the entry
    has not the head's shape), or — from a page that could not be split — the decoded entry alone."""

    __slots__ = ("span", "head", "_row")

    def __init__(self, span: msgspec.Raw | None, head: Any | None, row: Any = _UNDECODED) -> None:
        self.span, self.head, self._row = span, head, row

    def take_head(self) -> Any | None:
        """The head, forgotten by the entry: a sync reads each head once, and its ~40 fields need not live until
        the sync ends (a second sync of 10k markets peaked at 34.5 MB with every head kept, 16.1 MB without)."""
        head, self.head = self.head, None
        return head

    def row(self) -> Any:
        """The entry decoded whole (`loads`), as a page decoded at once would hold it. Decoded on each call and
        not kept: a sync asks once, for the entries it parses."""
        return self._row if self._row is not _UNDECODED else loads(memoryview(self.span))  # type: ignore[arg-type]


_ARRAY = msgspec.json.Decoder(list[msgspec.Raw])
_KEYSET: dict[str, msgspec.json.Decoder] = {}


def entries(body: bytes) -> list[msgspec.Raw] | None:
    """The byte spans of the entries of `body`, a JSON array; None when `body` is not one msgspec accepts."""
    try:
        return _ARRAY.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def keyset_entries(body: bytes, key: str) -> tuple[list[msgspec.Raw], Any] | None:
    """The byte spans of the entries under `key` of a keyset page (``{key: [...], "next_cursor": …}``) and its
    decoded ``next_cursor`` (None when absent); None when `body` is not that shape."""
    decoder = _KEYSET.get(key)
    if decoder is None:
        page = msgspec.defstruct(f"KeysetPage_{key}", [
            ("entries", list[msgspec.Raw], msgspec.field(name=key)),
            ("next_cursor", Any, msgspec.field(default=None))])
        decoder = _KEYSET[key] = msgspec.json.Decoder(page)
    try:
        page = decoder.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return page.entries, page.next_cursor


def listed(spans: list[msgspec.Raw], head: Callable[[msgspec.Raw], Any | None]) -> list[Listed]:
    """`spans` with their heads read by `head`."""
    return [Listed(span, head(span)) for span in spans]


def decoded(rows: list[Any]) -> list[Listed]:
    """Entries of a page decoded the usual way (no bytes, no head: each is parsed)."""
    return [Listed(None, None, row) for row in rows]


__all__ = ["Listed", "decoded", "entries", "keyset_entries", "listed", "loads"]
