"""Payload fingerprints: which parts of a venue's market payload its parse reads, hashed before parsing, and the
cheap reads of the few parts left out (pure; no httpx, no clock).

A sync that finds a market's fingerprint unchanged since the parse that last wrote it can skip the parse (see
``services.sync``). It reads each listed Gamma market as its JSON bytes (``venues.listing``) and decodes only a
head of it (``GammaHead``, a ``msgspec.Struct``: the keys the parser declares, every other key skipped at C
speed, the fingerprinted values kept as their raw bytes). The rule for a Gamma market:

- The fingerprint covers exactly the keys ``GammaMarketPayload`` declares (its aliases) as the bytes the venue
  sent, absent keys told apart from nulls, with ``events`` reduced to its events' ids (the parser reads the
  first one's). Equal bytes decode to equal values, so an equal fingerprint means an equal parse; bytes that
  differ but mean the same (spacing, escapes) only cost a parse. ``id`` is not hashed: the stored fingerprint
  is looked up by the market id the native id makes. Keys the parser does not read (``lastTradePrice``,
  ``spread``, ``oneDayPriceChange``, an event's volume …) move with every trade and change nothing the arena
  stores, so they are left out by construction.
- Left out too, and read cheaply on every sync instead (``gamma_volatile``): the activity figures ``volumeNum``,
  ``volume``, ``liquidityNum``, ``liquidity``, ``volume24hr`` (the universe ranks by them; stored with the price)
  and ``updatedAt`` (the quote's observed time). They are validated by the parser's own field readers, so a
  malformed one makes the cheap read fail and the payload is parsed — and rejected — as before.
- A payload the head cannot be read from (not an object, invalid JSON, ``events`` not a list of objects) has no
  fingerprint: it is always parsed, and the parse reports what is wrong with it.
- Salted with the source of the modules that decide what a parse yields and how it is stored (this one, the
  parser, its payload models and field readers, money, the domain market, the store's hashes): a new version of any of
  them invalidates every fingerprint, and the next sync parses everything once.
"""

from __future__ import annotations

import hashlib
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple, Union

import msgspec

from arena.venues.fields import _iso_timestamp, decimal_number
from arena.venues.polymarket_payloads import GammaMarketPayload

VOLATILE = ("volumeNum", "volume", "liquidityNum", "liquidity", "volume24hr", "updatedAt")
GAMMA_KEYS = tuple(k for k in (f.alias or name for name, f in GammaMarketPayload.model_fields.items())
                   if k not in VOLATILE)


# The modules a parse result and its stored form depend on, relative to the package (read, not imported: the
# venues layer imports nothing of the store).
_SALTED = ("venues/fingerprint.py", "venues/listing.py", "venues/polymarket_parse.py",
           "venues/polymarket_payloads.py", "venues/fields.py", "money.py", "domain/market.py", "store/repo.py")


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


_KEYED: Any = None  # a blake2b keyed with the salt, copied for each fingerprint (cheaper than keying each)


class _Event(msgspec.Struct, gc=False):
    """An event of a market's ``events``, reduced to its id (absent ids are left out when encoded)."""

    id: msgspec.Raw = msgspec.UNSET  # type: ignore[assignment]


_ABSENT = msgspec.Raw(b"")  # an absent key's bytes: nothing, where null is b"null"
_HASHED = tuple(k for k in GAMMA_KEYS if k not in ("id", "events"))
# The fingerprinted keys first (their order is the hash's), then the events' ids, then what is read as values.
GammaHead = msgspec.defstruct(
    "GammaHead",
    [(f"k{i}", msgspec.Raw, msgspec.field(default=_ABSENT, name=key)) for i, key in enumerate(_HASHED)]
    + [("events", Union[list[_Event], None], msgspec.field(default=_ABSENT, name="events")),  # type: ignore[list-item]
       ("id", Any, msgspec.field(default=None, name="id"))]
    + [(key, Any, None) for key in VOLATILE],  # named as the keys: `gamma_volatile` reads them by name
    gc=False)
_N_HASHED = len(_HASHED) + 1  # with the events
_HEAD = msgspec.json.Decoder(GammaHead)
_ENCODE = msgspec.json.Encoder().encode
_ASTUPLE = msgspec.structs.astuple


def gamma_head(span: bytes | msgspec.Raw) -> Any | None:
    """The `GammaHead` of one Gamma market's JSON bytes; None when they are not an object of that shape (the
    payload must then be parsed)."""
    try:
        return _HEAD.decode(span)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def gamma_fingerprint(head: Any) -> str:
    """32 hex characters fingerprinting what ``parse_gamma_market`` reads of the payload `head` was read from,
    besides ``VOLATILE`` and the id: its hashed values' bytes (an absent one as nothing, so absent and null
    differ) and its events' ids, encoded as one JSON-like array in C and hashed with the salt as key."""
    global _KEYED
    if _KEYED is None:
        _KEYED = hashlib.blake2b(digest_size=16, key=_salt())
    h = _KEYED.copy()
    h.update(_ENCODE(_ASTUPLE(head)[:_N_HASHED]))
    return h.hexdigest()


class Volatile(NamedTuple):
    """What a sync reads of a payload whose fingerprint is unchanged: activity figures (as the parser reads
    them: ``volumeNum`` before ``volume``, ``liquidityNum`` before ``liquidity``) and the quote's observed time
    (``updatedAt`` clamped to `fetched_at`, as the parser clamps it)."""

    volume: float | None
    volume_24h: float | None
    liquidity: float | None
    observed_at: datetime


def gamma_volatile(raw: Any, fetched_at: datetime) -> Volatile | None:
    """The ``VOLATILE`` parts of `raw` — a decoded payload, or its `GammaHead` (absent read as null in both) —
    read with the parser's own field readers; None when any is malformed (the payload must then be parsed, so
    that it fails exactly as a parse fails). The usual shapes — finite floats, an ISO time in UTC — are taken
    directly (what those readers return for them), the rest through them. A head holds an integer past 64 bits
    as an int where orjson, which decodes a parsed payload, gives a float: the readers make the same float of
    both, or refuse the int (then it is parsed)."""
    get = raw.get if raw.__class__ is dict else raw.__getattribute__
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


__all__ = ["GAMMA_KEYS", "VOLATILE", "GammaHead", "Volatile", "gamma_fingerprint", "gamma_head", "gamma_volatile"]
