"""Venues: where market data comes from — Polymarket (Gamma + CLOB), Manifold, and an offline replay file.

Layout (fetch and parse are separate):

- ``http.py``: the one HTTP layer (injected ``httpx.Client``/transport, User-Agent, timeout, retries with
  backoff + jitter, per-host token-bucket rate limits, injectable sleep and monotonic clock).
- ``polymarket.py`` / ``manifold.py``: clients that only fetch raw JSON (plus thin convenience methods that
  hand the JSON to the pure parsers with the injected clock's ``now()`` as ``fetched_at``).
- ``polymarket_parse.py`` / ``manifold_parse.py``: pure parsers from raw JSON to domain objects
  (``Market``, ``Quote``, ``Resolution``, ``OrderBook``) wrapped in a per-venue ``VenueMarket``. They tolerate
  unknown and missing optional keys and raise ``ParseError`` naming the field path on anything malformed.
- ``polymarket_payloads.py`` / ``manifold_payloads.py``: the venues' JSON shapes as pydantic models (the
  parsers validate with them first); ``fields.py``: the field types they share and ``ValidationError`` →
  ``ParseError``.
- ``listing.py``: listing pages read as their entries' JSON bytes, a head decoded first and the whole entry only
  when parsed, and the JSON decoding rule every body follows (``loads``); ``fingerprint.py``: what a sync
  hashes of a Gamma payload to skip the parse of an unchanged one.
- ``replay.py``: a venue serving a JSON-lines snapshot on a simulated clock without look-ahead.

This package file holds only what both parsers share: the ``UnsupportedMarket`` error, the ``PricePoint``
pair and the ``ParsedMarket`` protocol that both ``VenueMarket`` classes satisfy. It imports no httpx.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple, Protocol

from arena.domain.market import Market, Quote, Resolution
from arena.errors import ParseError
from arena.money import Price


class UnsupportedMarket(ParseError):
    """A well-formed payload for a market the arena cannot trade (a poll, a stonk, a 3-outcome scalar, …).

    A typed skip: ingest catches it, counts it and moves on. ``data["kind"]`` names the venue's market type.
    """

    reason = "unsupported_market"


class PricePoint(NamedTuple):
    """One observation of an outcome's price: ``at`` (aware UTC) and ``price`` (probability in [0, 1])."""

    at: datetime
    price: Price


class ParsedMarket(Protocol):
    """What every venue's ``VenueMarket`` offers, so a sync service can treat venues alike.

    ``resolution`` is set only when the market is *final* by the venue's rules; otherwise ``pending_reason``
    says why not ("open", "closed_undecided", "uma_proposed", …). ``tradable`` is False with a
    ``skip_reason`` for markets that must not receive new paper bets (they may still need settlement).
    """

    @property
    def market(self) -> Market: ...

    @property
    def quote(self) -> Quote | None: ...

    @property
    def resolution(self) -> Resolution | None: ...

    @property
    def pending_reason(self) -> str: ...

    @property
    def tradable(self) -> bool: ...

    @property
    def skip_reason(self) -> str: ...


__all__ = ["ParsedMarket", "PricePoint", "UnsupportedMarket"]
