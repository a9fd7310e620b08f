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
- Salted with the source of the modules that decide what a parse yields and how it is stored (this one, the
  parser, its payload models and field readers, money, the domain market, the store's hashes): a new version of any of
  them invalidates every fingerprint, and the next sync parses everything once.
"""

from __future__ import annotations

import hashlib
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from arena.venues.fields import _iso_timestamp, decimal_number
from arena.venues.polymarket_payloads import GammaMarketPayload

VOLATILE = ("volumeNum", "volume", "liquidityNum", "liquidity", "volume24hr", "updatedAt")
GAMMA_KEYS = tuple(k for k in (f.alias or name for name, f in GammaMarketPayload.model_fields.items())
                   if k not in VOLATILE)


# The modules a parse result and its stored form depend on, relative to the package (read, not imported: the
# venues layer imports nothing of the store).
_SALTED = ("venues/fingerprint.py", "venues/polymarket_parse.py", "venues/polymarket_payloads.py",
           "venues/fields.py", "money.py", "domain/market.py", "store/repo.py")


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


_KEYSET = frozenset(GAMMA_KEYS)
_EVENTS = GAMMA_KEYS.index("events")
_PLAIN = frozenset((str, bool, int, type(None)))  # what needs no NaN check


def gamma_fingerprint(raw: object) -> str | None:
    """32 hex characters fingerprinting what ``parse_gamma_market`` reads of `raw` besides ``VOLATILE``; None
    when `raw` is not a JSON object or holds what the fingerprint cannot tell apart (NaN, integers past 64
    bits) — such a payload is always parsed.

    Hashed: the values of ``GAMMA_KEYS`` in their order (absent read as null), the sorted names of the absent
    ones (so absent and null differ), and the first event's id when ``events`` is a list starting with an
    object (its value is then hashed as null, the id apart: no raw value can stand for the reduced one). The
    values are read with one ``map`` and the absent names with one set difference, both in C: this runs on
    every listed market of every sync."""
    global _SALT
    if raw.__class__ is not dict:
        return None
    values = list(map(raw.get, GAMMA_KEYS))  # type: ignore[attr-defined]
    event: object = 0
    events = values[_EVENTS]
    if events.__class__ is list and events and events[0].__class__ is dict:  # type: ignore[attr-defined]
        first = events[0]  # type: ignore[index]
        event = [first["id"]] if "id" in first else []
        values[_EVENTS] = None
        if not _finite(event):
            return None
    kinds = set(map(type, values))
    if not kinds <= _PLAIN:  # a float or a container among the values (bestBid, bestAsk, feeSchedule …)
        for value in values:
            cls = value.__class__
            if cls is float:
                if not math.isfinite(value):  # type: ignore[arg-type]
                    return None
            elif cls not in _PLAIN and not _finite(value):
                return None
    absent = _KEYSET.difference(raw)  # type: ignore[arg-type]
    try:
        data = orjson.dumps([values, sorted(absent) if absent else (), event])
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
    payload must then be parsed, so that it fails exactly as a parse fails). The usual shapes — finite floats,
    an ISO time in UTC — are taken directly (what those readers return for them), the rest through them."""
    get = raw.get
    try:
        volume = get("volumeNum")
        if volume.__class__ is not float or not math.isfinite(volume):
            volume = decimal_number(volume)
            if volume is None:
                volume = decimal_number(get("volume"))
        liquidity = get("liquidityNum")
        if liquidity.__class__ is not float or not math.isfinite(liquidity):
            liquidity = decimal_number(liquidity)
            if liquidity is None:
                liquidity = decimal_number(get("liquidity"))
        volume_24h = get("volume24hr")
        if volume_24h.__class__ is not float or not math.isfinite(volume_24h):
            volume_24h = decimal_number(volume_24h)
        text = get("updatedAt")
        updated = _utc_iso(text) if text.__class__ is str else None
        if updated is None:
            updated = _iso_timestamp(text)
    except Exception:  # noqa: BLE001 — any failure means "parse it", which reports it properly
        return None
    observed = fetched_at if updated is None or updated > fetched_at else updated
    return Volatile(volume, volume_24h, liquidity, observed)


def _utc_iso(text: str) -> datetime | None:
    """`text` read by `datetime.fromisoformat` when that gives a UTC time (``…Z``, ``+00:00``): what
    ``_iso_timestamp`` returns for it. None for anything else, which ``_iso_timestamp`` then reads."""
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    return dt if dt.tzinfo is timezone.utc else None


__all__ = ["GAMMA_KEYS", "VOLATILE", "Volatile", "gamma_fingerprint", "gamma_volatile"]
