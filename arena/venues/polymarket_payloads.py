"""Typed shapes of Polymarket's JSON (Gamma markets/events, CLOB market/book/quotes/history, WS events) as pydantic
models: each field's type carries the venue's quirks (stringly arrays, mixed ISO times, numeric strings) and
rejects a malformed value with the arena's message. Owns shapes only, no arena rules (pure; no httpx, no clock).

Fields are declared in the order ``polymarket_parse`` reads them, so the first error reported is the one the
hand-written readers raised first. Checks that depend on an earlier field (price count vs outcome count, a
volume read only when ``volumeNum`` is absent) read it from ``info.data``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timezone
from decimal import ROUND_FLOOR, Decimal
from typing import Annotated, Any

import orjson
from pydantic import BeforeValidator, Field, PlainValidator, ValidationInfo

from arena.money import MICRO, MoneyError, Price, parse_decimal_price
from arena.venues.fields import (
    DecimalNumber,
    Flag,
    IsoTimestamp,
    NullableList,
    OptionalId,
    OptionalPrice,
    Payload,
    RequiredPrice,
    RequiredText,
    Text,
    VenueId,
    blank,
    decimal_number,
    exact_probability,
    fail,
    unsupported,
)

MAX_SHARES = Decimal(10) ** 15  # larger sizes are garbage, not liquidity


# ----------------------------------------------------------------------------------------------- value checks


def decode_array(value: object) -> list[Any] | None:
    """A Gamma "stringly" array: a JSON-encoded string (or, from ``/public-search?optimized=true``, a real list).
    Missing, null and "" → None."""
    if value is None:
        return None
    if isinstance(value, str):
        if not value.strip():
            return None
        try:  # orjson is the fast path for the usual array of strings; json has the last word on the rest
            decoded = orjson.loads(value)  # (it refuses NaN and lone surrogates, and makes big integers floats)
        except orjson.JSONDecodeError:
            decoded = None
        if decoded.__class__ is not list or any(item.__class__ is not str for item in decoded):
            try:
                decoded = json.loads(value)
            except ValueError:
                fail(f"not a JSON-encoded array: {value[:60]!r}")
        value = decoded
    if not isinstance(value, list):
        fail(f"expected an array, got {type(value).__name__}")
    return value


def _str_items(items: list[Any]) -> list[str]:
    for i, item in enumerate(items):
        if isinstance(item, bool) or not isinstance(item, (str, int)):
            fail(f"item {i} is not a string: {item!r}")
    return [str(item) for item in items]


def _outcome_labels(value: object, info: ValidationInfo) -> list[str]:
    items = decode_array(value)
    if items is None:
        fail("missing")
    labels = _str_items(items)
    if len(labels) != 2:
        unsupported(f"{len(labels)} outcomes; only 2-outcome markets are supported", f"{len(labels)}-outcome", info,
                    ("id", "question"))
    return labels


def _outcome_prices(value: object, info: ValidationInfo) -> tuple[Decimal, ...] | None:
    items = decode_array(value)
    if items is None:
        return None
    labels = info.data.get("outcomes")
    if labels is not None and len(items) != len(labels):
        fail(f"{len(items)} prices for {len(labels)} outcomes")
    return tuple(exact_probability(p, f"[{i}]") for i, p in enumerate(items))


def _token_ids(value: object, info: ValidationInfo) -> tuple[str, ...]:
    items = decode_array(value)
    if items is None:
        return ()
    tokens = _str_items(items)
    labels = info.data.get("outcomes")
    if labels is not None and len(tokens) != len(labels):
        fail(f"{len(tokens)} token ids for {len(labels)} outcomes")
    if any(not t.strip() for t in tokens):
        fail("empty token id")
    return tuple(tokens)


def _str_array(value: object) -> tuple[str, ...]:
    items = decode_array(value)
    return () if items is None else tuple(_str_items(items))


def _first_event_id(value: object) -> str:
    """The id of a market's first event (the only one the arena reads)."""
    if value is None:
        return ""
    if not isinstance(value, list):
        fail("expected an array")
    if not value:
        return ""
    first = value[0]
    if not isinstance(first, Mapping):
        fail(f"expected a JSON object, got {type(first).__name__}", "[0]")
    event_id = first.get("id")
    if blank(event_id):
        return ""
    if isinstance(event_id, bool) or not isinstance(event_id, (str, int)):
        fail(f"expected a string id, got {type(event_id).__name__}", "[0].id")
    return str(event_id).strip()


def _fallback_number(value: object, info: ValidationInfo) -> float | None:
    """``volume`` / ``liquidity``: read only when the numeric twin (``volumeNum``, ``liquidityNum``) is absent."""
    twin = {"volume": "volumeNum", "liquidity": "liquidityNum"}[str(info.field_name)]
    if info.data.get(twin) is not None:
        return None
    return decimal_number(value)


def _quote_price(value: object, info: ValidationInfo) -> Price | None:
    """``bestBid`` / ``bestAsk``: only read for a market with prices (they belong to its quote)."""
    if info.data.get("outcomePrices") is None or blank(value):
        return None
    try:
        return Price.of(value)
    except MoneyError as exc:
        fail(str(exc))


def _fee_rate(value: object, info: ValidationInfo) -> Decimal | None:
    """``feeSchedule.rate`` when ``feesEnabled``, else None (the schedule of a fee-free market is ignored)."""
    if not info.data.get("feesEnabled") or value is None:
        return None
    if not isinstance(value, Mapping):
        fail(f"expected a JSON object, got {type(value).__name__}")
    rate = value.get("rate")
    return None if blank(rate) else exact_probability(rate, ".rate")


def _epoch_ms(value: object) -> datetime | None:
    if blank(value):
        return None
    if isinstance(value, bool):
        fail("expected epoch milliseconds")
    try:
        ms = int(Decimal(str(value).strip()))
        return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    except (ArithmeticError, ValueError, OverflowError, OSError):
        fail(f"not epoch milliseconds: {value!r}")


def micro_shares(value: object) -> int:
    """Share sizes ("192.3") → micro-shares, floored (understating depth never creates money)."""
    try:
        d = parse_decimal_price(value)
    except MoneyError as exc:
        fail(str(exc))
    if d < 0:
        fail(f"negative size {value!r}")
    if d > MAX_SHARES:
        fail(f"size out of range: {value!r}")
    try:
        return int((d * MICRO).to_integral_value(rounding=ROUND_FLOOR))
    except ArithmeticError:
        fail(f"size out of range: {value!r}")


def _required_shares(value: object) -> int:
    if blank(value):
        fail("missing")
    return micro_shares(value)


def _optional_shares(value: object) -> int | None:
    return None if blank(value) else micro_shares(value)


def _unix_seconds(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value in (
            float("inf"), float("-inf")):
        fail(f"expected Unix seconds, got {value!r}")
    if value != int(value) or not 0 <= value < 10**11:
        fail(f"expected whole Unix seconds, got {value!r}")
    return int(value)


def _required_spread(value: object) -> Decimal:
    if blank(value):
        fail("missing")
    return exact_probability(value)


def _fallback_mid(value: object, info: ValidationInfo) -> Price | None:
    """``mid_price`` (the docs' name) is read only when ``mid`` (the live name) is absent."""
    if info.data.get("mid") is not None or blank(value):
        return None
    try:
        return Price.of(value)
    except MoneyError as exc:
        fail(str(exc))


def _resolved_event_type(value: object) -> str:
    if value != "market_resolved":
        fail(f"not a market_resolved event: {value!r}")
    return "market_resolved"


def _asset_ids(value: object) -> tuple[str, ...]:
    if not value:
        return ()
    if not isinstance(value, list):
        fail("expected an array")
    return tuple(_str_items(value))


def _cursor(value: object) -> str | None:
    if blank(value):
        return None
    if not isinstance(value, str):
        fail(f"expected a string cursor, got {type(value).__name__}")
    return value


def _null_is_empty(value: object) -> object:
    return [] if value is None else value


def _not_null(value: object) -> object:
    if value is None:
        fail("missing")
    return value


def _int_or_none(value: object) -> int | None:
    """``taker_base_fee``: an int, anything else (absent, null, a string) is no fee figure."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _winner(value: object) -> bool:
    if value is not None and not isinstance(value, bool):
        fail(f"expected a boolean, got {value!r}")
    return bool(value)


Raw = Any  # kept as sent, interpreted by the parser (never an error)
StringlyLabels = Annotated[list[str], PlainValidator(_outcome_labels)]
StringlyPrices = Annotated[tuple[Decimal, ...] | None, PlainValidator(_outcome_prices)]
StringlyTokenIds = Annotated[tuple[str, ...], PlainValidator(_token_ids)]
StringlyStrings = Annotated[tuple[str, ...], PlainValidator(_str_array)]
EpochMs = Annotated[datetime | None, PlainValidator(_epoch_ms)]


# ----------------------------------------------------------------------------------------------- Gamma


class GammaMarketPayload(Payload):
    """One Gamma Market object (``/markets``, ``/markets/{id}``, keyset pages, an event's ``markets[]``)."""

    id: VenueId
    question: RequiredText
    outcomes: StringlyLabels  # venue labels, exactly two
    outcomePrices: StringlyPrices = None  # exact decimals in [0, 1], one per outcome; None for placeholders
    clobTokenIds: StringlyTokenIds = ()
    umaResolutionStatuses: StringlyStrings = ()
    umaResolutionStatus: Text = None
    closed: Flag = None
    active: Flag = None
    archived: Flag = None
    acceptingOrders: Flag = None
    enableOrderBook: Flag = None
    fpmmLive: Flag = None
    marketMakerAddress: Text = None
    endDate: IsoTimestamp = None
    closedTime: IsoTimestamp = None
    updatedAt: IsoTimestamp = None
    umaEndDate: IsoTimestamp = None
    event_id: Annotated[str, PlainValidator(_first_event_id)] = Field("", alias="events")
    negRisk: Flag = None
    volumeNum: DecimalNumber = None
    volume: Annotated[float | None, PlainValidator(_fallback_number)] = None
    liquidityNum: DecimalNumber = None
    liquidity: Annotated[float | None, PlainValidator(_fallback_number)] = None
    slug: Text = None
    category: Raw = None
    description: Text = None
    volume24hr: DecimalNumber = None
    bestBid: Annotated[Price | None, PlainValidator(_quote_price)] = None
    bestAsk: Annotated[Price | None, PlainValidator(_quote_price)] = None
    marketType: Raw = None
    conditionId: OptionalId = ""
    questionID: OptionalId = ""
    negRiskMarketID: OptionalId = ""
    negRiskOther: Flag = None
    groupItemTitle: Text = None
    feesEnabled: Flag = None
    fee_rate: Annotated[Decimal | None, PlainValidator(_fee_rate)] = Field(None, alias="feeSchedule")


class GammaEventPayload(Payload):
    """One Gamma Event; ``markets`` are left raw so that each member is validated (and rejected) on its own."""

    id: VenueId
    negRisk: Flag = None
    markets: NullableList = []  # include_markets=false drops the key
    slug: Text = None
    title: Text = None
    negRiskAugmented: Flag = None
    active: Flag = None
    closed: Flag = None
    endDate: IsoTimestamp = None


class KeysetPagePayload(Payload):
    next_cursor: Annotated[str | None, PlainValidator(_cursor)] = None


# ----------------------------------------------------------------------------------------------- CLOB


class ClobTokenPayload(Payload):
    winner: Annotated[bool, PlainValidator(_winner)] = False
    token_id: VenueId
    outcome: Text = None
    price: OptionalPrice = None


class ClobMarketPayload(Payload):
    """CLOB ``GET /markets/{condition_id}`` (prices are JSON numbers here)."""

    tokens: Annotated[list[ClobTokenPayload], BeforeValidator(_null_is_empty)] = []
    condition_id: VenueId
    question_id: OptionalId = ""
    closed: Flag = None
    active: Flag = None
    accepting_orders: Flag = None
    is_50_50_outcome: Flag = None
    neg_risk: Flag = None
    end_date_iso: IsoTimestamp = None
    taker_base_fee: Annotated[int | None, PlainValidator(_int_or_none)] = None


class BookLevelPayload(Payload):
    price: RequiredPrice
    size: Annotated[int, PlainValidator(_required_shares)]  # micro-shares, floored


class BookPayload(Payload):
    """``GET /book``: levels worst-first, sizes as strings, ``timestamp`` in epoch ms."""

    bids: Annotated[list[BookLevelPayload], BeforeValidator(_null_is_empty)] = []  # worst first
    asks: Annotated[list[BookLevelPayload], BeforeValidator(_null_is_empty)] = []
    timestamp: EpochMs = None
    asset_id: OptionalId = ""
    market: OptionalId = ""
    tick_size: OptionalPrice = None
    min_order_size: Annotated[int | None, PlainValidator(_optional_shares)] = None
    last_trade_price: OptionalPrice = None


class MidpointPayload(Payload):
    mid: OptionalPrice = None  # live
    mid_price: Annotated[Price | None, PlainValidator(_fallback_mid)] = None  # the docs


class PricePayload(Payload):
    price: RequiredPrice


class SpreadPayload(Payload):
    spread: Annotated[Decimal, PlainValidator(_required_spread)]


class HistoryPointPayload(Payload):
    t: Annotated[int, PlainValidator(_unix_seconds)] = Field(None, validate_default=True)  # Unix seconds
    p: RequiredPrice


class PricesHistoryPayload(Payload):
    history: Annotated[list[HistoryPointPayload], BeforeValidator(_not_null)]


class MarketResolvedPayload(Payload):
    """The CLOB market WebSocket's ``market_resolved`` push."""

    event_type: Annotated[str, PlainValidator(_resolved_event_type)] = Field(None, validate_default=True)
    assets_ids: Annotated[tuple[str, ...], PlainValidator(_asset_ids)] = ()
    market: VenueId
    winning_asset_id: VenueId
    winning_outcome: Text = None
    timestamp: EpochMs = None


__all__ = [
    "BookLevelPayload",
    "BookPayload",
    "ClobMarketPayload",
    "ClobTokenPayload",
    "GammaEventPayload",
    "GammaMarketPayload",
    "HistoryPointPayload",
    "KeysetPagePayload",
    "MarketResolvedPayload",
    "MidpointPayload",
    "PricePayload",
    "PricesHistoryPayload",
    "SpreadPayload",
    "decode_array",
    "micro_shares",
]
