"""Payload fingerprints: which parts of a venue's market payload its parse reads, hashed before parsing, and the
cheap reads of the few parts left out (pure; no httpx, no clock).

A sync that finds a market's fingerprint unchanged since the parse that last wrote it can skip the parse (see
``services.sync``). The rule for a Gamma market:

- The fingerprint covers exactly the keys ``GammaMarketPayload`` declares (its aliases), absent keys told apart
  from nulls, with ``events`` reduced to the first event's id (all the parser reads of it). Keys the parser does
  not read (``lastTradePrice``, ``spread``, ``oneDayPriceChange``, an event's volume …) move with every trade
  and change nothing the arena stores, so they are left out by construction.
- Left out too, and read cheaply on every sync instead (``gamma_volatile``): the activity figures ``volumeNum``,
  ``volume``, ``liquidityNum``, ``liquidity``, ``volume24hr`` (the universe ranks by them; stored with the price)
  and ``updatedAt`` (the quote's observed time). They are validated by the parser's own field readers, so a
  malformed one makes the cheap read fail and the payload is parsed — and rejected — as before.
- Salted with the source of the modules that decide what a parse yields and how it is stored (the parser, its
  payload models and field readers, money, the domain market, the store's hashes): a new version of any of
  them invalidates every fingerprint, and the next sync parses everything once.
"""

from __future__ import annotations

import hashlib
import math
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from arena.venues.fields import _iso_timestamp, decimal_number
from arena.venues.polymarket_payloads import GammaMarketPayload

VOLATILE = ("volumeNum", "volume", "liquidityNum", "liquidity", "volume24hr", "updatedAt")
GAMMA_KEYS = tuple(k for k in (f.alias or name for name, f in GammaMarketPayload.model_fields.items())
                   if k not in VOLATILE)
_FIRST_EVENT = "events[0].id"


# The modules a parse result and its stored form depend on, relative to the package (read, not imported: the
# venues layer imports nothing of the store).
_SALTED = ("venues/polymarket_parse.py", "venues/polymarket_payloads.py", "venues/fields.py", "money.py",
           "domain/market.py", "store/repo.py")


def _salt() -> bytes:
    """A digest of the source of the `_SALTED` modules."""
    package = Path(__file__).resolve().parents[1]
    h = hashlib.blake2b(digest_size=16)
    for name in _SALTED:
        try:
            h.update((package / name).read_bytes())
        except OSError:  # no source shipped: the name alone (a new install still parses everything once)
            h.update(name.encode())
    return h.digest()


_SALT: bytes | None = None


def _finite(value: Any) -> bool:
    """False when `value` holds a NaN or an infinity (orjson writes them as null, like None)."""
    cls = value.__class__
    if cls is float:
        return math.isfinite(value)
    if cls is dict:
        return all(_finite(v) for v in value.values())
    if cls is list or cls is tuple:
        return all(_finite(v) for v in value)
    return True


def gamma_fingerprint(raw: object) -> str | None:
    """32 hex characters fingerprinting what ``parse_gamma_market`` reads of `raw` besides ``VOLATILE``; None
    when `raw` is not a JSON object or holds what the fingerprint cannot tell apart (NaN, integers past 64
    bits) — such a payload is always parsed."""
    global _SALT
    if raw.__class__ is not dict:
        return None
    pairs = [(key, raw[key]) for key in GAMMA_KEYS if key in raw]  # type: ignore[index,operator]
    for i, (key, value) in enumerate(pairs):
        cls = value.__class__
        if cls is str or value is None or cls is bool or cls is int:
            continue
        if key == "events" and cls is list and value and value[0].__class__ is dict:
            first = value[0]
            pairs[i] = (_FIRST_EVENT, first["id"]) if "id" in first else (_FIRST_EVENT + " absent", None)
        if not _finite(pairs[i][1]):
            return None
    try:
        data = orjson.dumps(pairs)
    except TypeError:  # an integer past 64 bits, or a value no JSON decoder makes
        return None
    if _SALT is None:
        _SALT = _salt()
    return hashlib.blake2b(data, digest_size=16, key=_SALT).hexdigest()


class Volatile(NamedTuple):
    """What a sync reads of a payload whose fingerprint is unchanged: activity figures (as the parser reads
    them: ``volumeNum`` before ``volume``, ``liquidityNum`` before ``liquidity``) and the quote's observed time
    (``updatedAt`` clamped to `fetched_at`, as the parser clamps it)."""

    volume: float | None
    volume_24h: float | None
    liquidity: float | None
    observed_at: datetime


def gamma_volatile(raw: dict, fetched_at: datetime) -> Volatile | None:
    """The ``VOLATILE`` parts of `raw` read with the parser's own field readers; None when any is malformed (the
    payload must then be parsed, so that it fails exactly as a parse fails)."""
    try:
        volume = decimal_number(raw.get("volumeNum"))
        if volume is None:
            volume = decimal_number(raw.get("volume"))
        liquidity = decimal_number(raw.get("liquidityNum"))
        if liquidity is None:
            liquidity = decimal_number(raw.get("liquidity"))
        volume_24h = decimal_number(raw.get("volume24hr"))
        updated = _iso_timestamp(raw.get("updatedAt"))
    except Exception:  # noqa: BLE001 — any failure means "parse it", which reports it properly
        return None
    observed = fetched_at if updated is None or updated > fetched_at else updated
    return Volatile(volume, volume_24h, liquidity, observed)


__all__ = ["GAMMA_KEYS", "VOLATILE", "Volatile", "gamma_fingerprint", "gamma_volatile"]
