"""Pure parsers for Polymarket payloads (Gamma markets/events, CLOB book/midpoint/price/history/market, WS).

Owns the mapping from Polymarket's raw JSON to arena domain objects and Polymarket's resolution rules.
Imports no httpx and never reads the clock: ``fetched_at`` is always passed in.

Conventions
-----------
- Arena market id: ``"polymarket:" + Gamma id``. Outcome index 0 → ``YES``, index 1 → ``NO``; the venue's labels
  ("Yes"/"No", team names, "Up"/"Down", …) are kept in ``Market.outcome_labels`` and never interpreted.
- ``Quote.prices = {YES: outcomePrices[0]}``; ``bid``/``ask`` are Gamma's ``bestBid``/``bestAsk`` (the first
  outcome's token). ``observed_at`` = ``updatedAt`` (clamped to ``fetched_at`` — nothing is observed after we
  fetched it), else ``fetched_at``.
- ``Market.close_time`` = ``closedTime`` once closed, else the scheduled ``endDate``. Markets often trade past
  ``endDate``; we deliberately stop new paper bets there (the outcome may already be known).
- Token ids, condition ids and Gamma ids stay ``str`` (token ids exceed 64 bits).

Resolution rules for a Gamma market (``gamma_resolution``), in order
--------------------------------------------------------------------
1. ``closed`` is not true → pending ``"open"`` (terminal-looking prices on an open market settle nothing).
2. no ``outcomePrices`` → pending ``"no_prices"`` (placeholder members never resolve).
3. ``umaResolutionStatus`` is a non-final UMA state (proposed, disputed, …) → pending ``"uma_proposed"`` /
   ``"uma_disputed"``: a proposal can be disputed and flipped, so we never settle early.
4. every price is 0 → pending ``"legacy_unresolvable"`` (2020-era AMM markets; Gamma cannot settle them).
5. exactly one price equals 1 and all others equal 0 (exact decimal comparison) → WINNER = that index's
   outcome. If a CLOB second opinion is supplied and names a different winner → pending ``"clob_disagrees"``.
6. every price equals 0.5 → a 50-50 (PROBABILISTIC, 0.5 per share of either side) **only with confirmation**:
   ``umaResolutionStatus == "resolved"``; or the singular status is absent and the last entry of
   ``umaResolutionStatuses`` is "resolved"; or the CLOB market (``closed`` and ``is_50_50_outcome: true``, or
   both tokens ``winner: false`` at price 0.5) confirms it. Otherwise pending ``"fifty_fifty_unconfirmed"``
   (a dead market can sit at 0.5/0.5 while halted) — poll again, and flag it for a human after some days.
7. a legacy AMM market with any other prices → ``"legacy_unresolvable"``; anything else →
   ``"closed_undecided"`` (halted, or waiting for the oracle). Poll again later.

``umaResolutionStatuses`` (the history) is informational only except in rule 6; ``acceptingOrders`` and
``active`` are never used to decide resolution (resolved markets keep ``acceptingOrders: true``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import ROUND_FLOOR, Decimal
from types import MappingProxyType
from typing import Any

from arena.domain.book import OrderBook
from arena.domain.market import NO, YES, Market, MarketKind, MarketStatus, Quote, Resolution
from arena.venues.fields import bool_field as _bool
from arena.venues.fields import text_field as _text
from arena.errors import ParseError
from arena.money import MICRO, MoneyError, Price, parse_decimal_price
from arena.venues import PricePoint, UnsupportedMarket

VENUE = "polymarket"
OUTCOMES = (YES, NO)
HALF = Decimal("0.5")
MAX_SHARES = Decimal(10) ** 15  # larger sizes are garbage, not liquidity

# pending reasons
OPEN = "open"
NO_PRICES = "no_prices"
UMA_PROPOSED = "uma_proposed"
UMA_DISPUTED = "uma_disputed"
LEGACY_UNRESOLVABLE = "legacy_unresolvable"
FIFTY_FIFTY_UNCONFIRMED = "fifty_fifty_unconfirmed"
CLOB_DISAGREES = "clob_disagrees"
CLOSED_UNDECIDED = "closed_undecided"

# UMA states that mean "an answer exists but is not final"
NON_FINAL_UMA = {"proposed": UMA_PROPOSED, "disputed": UMA_DISPUTED, "challenged": UMA_DISPUTED,
                 "requested": UMA_PROPOSED, "pending": UMA_PROPOSED}


def market_id(native_id: str) -> str:
    """The arena id of a Gamma market id."""
    return f"{VENUE}:{native_id}"


def event_group_id(event_id: str) -> str:
    """The ``Market.group_id`` for the members of a Gamma event."""
    return f"{VENUE}:event:{event_id}"


# ----------------------------------------------------------------------------------------------- field readers


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, str) and value.strip() == "")


def _get(raw: Mapping[str, Any], key: str) -> Any:
    return raw.get(key)


def _require_mapping(raw: object, what: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise ParseError(f"expected a JSON object, got {type(raw).__name__}", field=what)
    return raw


def _id(raw: Mapping[str, Any], key: str, *, required: bool = True) -> str:
    value = raw.get(key)
    if _missing(value):
        if required:
            raise ParseError("missing", field=key)
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ParseError(f"expected a string id, got {type(value).__name__}", field=key)
    return str(value).strip()






def _number(raw: Mapping[str, Any], key: str) -> float | None:
    """A number or numeric string (Gamma sends ``volume`` as a string, ``volumeNum`` as a number)."""
    value = raw.get(key)
    if _missing(value):
        return None
    try:
        d = parse_decimal_price(value)
    except MoneyError as exc:
        raise ParseError(str(exc), field=key) from exc
    return float(d)


def _price_value(value: object, fld: str) -> Price:
    try:
        return Price.of(value)
    except MoneyError as exc:
        raise ParseError(str(exc), field=fld) from exc


def _opt_price(raw: Mapping[str, Any], key: str) -> Price | None:
    value = raw.get(key)
    if _missing(value):
        return None
    return _price_value(value, key)


def _exact(value: object, fld: str) -> Decimal:
    try:
        d = parse_decimal_price(value)
    except MoneyError as exc:
        raise ParseError(str(exc), field=fld) from exc
    if not Decimal(0) <= d <= Decimal(1):
        raise ParseError(f"price outside [0, 1]: {value!r}", field=fld)
    return d


def decode_array(raw: Mapping[str, Any], key: str) -> list[Any] | None:
    """A Gamma "stringly" array: a JSON-encoded string (or, from ``/public-search?optimized=true``, a real list).

    Missing, null and "" → None. Anything that does not decode to a list → ``ParseError`` naming ``key``.
    """
    value = raw.get(key)
    if _missing(value):
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ParseError(f"not a JSON-encoded array: {value[:60]!r}", field=key) from exc
    if not isinstance(value, list):
        raise ParseError(f"expected an array, got {type(value).__name__}", field=key)
    return value


def _str_items(items: list[Any], key: str) -> list[str]:
    out = []
    for i, item in enumerate(items):
        if isinstance(item, bool) or not isinstance(item, (str, int)):
            raise ParseError(f"item {i} is not a string: {item!r}", field=key)
        out.append(str(item))
    return out


def parse_timestamp(value: object, fld: str) -> datetime | None:
    """An aware UTC datetime from Gamma's mixed ISO formats; None for null/"".

    Accepts ``…Z``, fractional seconds of any length, a space separator with a short offset
    (``2025-03-28 04:34:20+00``), ``+00:00:00`` offsets and date-only strings (midnight UTC). A naive value
    is taken to be UTC.
    """
    if _missing(value):
        return None
    if not isinstance(value, str):
        raise ParseError(f"expected an ISO-8601 string, got {type(value).__name__}", field=fld)
    text = value.strip()
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        normalized = text.replace(" ", "T", 1)
        if normalized.endswith("Z"):
            normalized = normalized[:-1] + "+00:00"
        if len(normalized) >= 3 and normalized[-3] in "+-" and normalized[-2:].isdigit():
            normalized += ":00"
        try:
            dt = datetime.fromisoformat(normalized)
        except ValueError as exc:
            raise ParseError(f"not an ISO-8601 timestamp: {value!r}", field=fld) from exc
    if dt.tzinfo is None:
        return dt.replace(tzinfo=timezone.utc)
    try:
        return dt.astimezone(timezone.utc)
    except OverflowError as exc:
        raise ParseError(f"timestamp out of range: {value!r}", field=fld) from exc


def _epoch_ms(value: object, fld: str) -> datetime | None:
    if _missing(value):
        return None
    if isinstance(value, bool):
        raise ParseError("expected epoch milliseconds", field=fld)
    try:
        ms = int(Decimal(str(value).strip()))
        return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    except (ArithmeticError, ValueError, OverflowError, OSError) as exc:
        raise ParseError(f"not epoch milliseconds: {value!r}", field=fld) from exc


def _micro_shares(value: object, fld: str) -> int:
    """Share sizes ("192.3") → micro-shares, floored (understating depth never creates money)."""
    try:
        d = parse_decimal_price(value)
    except MoneyError as exc:
        raise ParseError(str(exc), field=fld) from exc
    if d < 0:
        raise ParseError(f"negative size {value!r}", field=fld)
    if d > MAX_SHARES:
        raise ParseError(f"size out of range: {value!r}", field=fld)
    try:
        return int((d * MICRO).to_integral_value(rounding=ROUND_FLOOR))
    except ArithmeticError as exc:
        raise ParseError(f"size out of range: {value!r}", field=fld) from exc


def _clamp(observed: datetime | None, fetched_at: datetime) -> datetime:
    if observed is None or observed > fetched_at:
        return fetched_at
    return observed


def _utc(when: datetime) -> datetime:
    if when.tzinfo is None:
        raise ValueError("fetched_at must be timezone-aware (UTC)")
    return when.astimezone(timezone.utc)


# ----------------------------------------------------------------------------------------------- CLOB market


@dataclass(frozen=True)
class ClobToken:
    """One outcome token of a CLOB market. ``price`` as the CLOB reports it (1/0 after resolution)."""

    token_id: str
    outcome: str
    price: Price | None
    winner: bool


@dataclass(frozen=True)
class ClobMarket:
    """``GET /markets/{condition_id}`` on the CLOB: the authoritative ``winner`` flags (a second opinion)."""

    condition_id: str
    question_id: str
    closed: bool
    active: bool | None
    accepting_orders: bool | None
    is_50_50_outcome: bool | None
    neg_risk: bool
    tokens: tuple[ClobToken, ...]
    end_date: datetime | None = None
    taker_base_fee: int | None = None

    def winner_token(self) -> ClobToken | None:
        """The single token flagged ``winner`` on a closed market, else None."""
        winners = [t for t in self.tokens if t.winner]
        return winners[0] if self.closed and len(winners) == 1 else None

    def winner_index(self, token_ids: Sequence[str] = (), labels: Sequence[str] = ()) -> int | None:
        """The winner's index in Gamma's outcome order: matched by token id, else by label, else CLOB order."""
        token = self.winner_token()
        if token is None:
            return None
        if token_ids and token.token_id in token_ids:
            return list(token_ids).index(token.token_id)
        if labels and token.outcome in labels:
            return list(labels).index(token.outcome)
        return self.tokens.index(token)

    def confirms_50_50(self) -> bool:
        if not self.closed:
            return False
        if self.is_50_50_outcome:
            return True
        return bool(self.tokens) and all(
            (not t.winner) and t.price is not None and t.price.ppm == MICRO // 2 for t in self.tokens)

    def resolution(self, arena_market_id: str, yes_token_id: str | None = None,
                   resolved_at: datetime | None = None) -> Resolution | None:
        """The CLOB's own verdict: a winner (YES if the winning token is the YES token / first token), a
        confirmed 50-50, or None while undecided."""
        if not self.closed:
            return None
        token = self.winner_token()
        if token is not None:
            if yes_token_id is not None:
                outcome = YES if token.token_id == yes_token_id else NO
            else:
                outcome = OUTCOMES[self.tokens.index(token)] if self.tokens.index(token) < 2 else NO
            return Resolution.winner(arena_market_id, outcome, resolved_at=resolved_at, source="clob")
        if self.confirms_50_50():
            return Resolution.probabilistic_yes(arena_market_id, Price(MICRO // 2), resolved_at=resolved_at,
                                                source="clob")
        return None


def parse_clob_market(raw: object) -> ClobMarket:
    """Parse CLOB ``GET /markets/{condition_id}`` (prices are JSON numbers here)."""
    m = _require_mapping(raw, "clob_market")
    tokens_raw = m.get("tokens")
    if tokens_raw is None:
        tokens_raw = []
    if not isinstance(tokens_raw, list):
        raise ParseError("expected an array", field="tokens")
    tokens = []
    for i, t in enumerate(tokens_raw):
        t = _require_mapping(t, f"tokens[{i}]")
        winner = t.get("winner")
        if winner is not None and not isinstance(winner, bool):
            raise ParseError(f"expected a boolean, got {winner!r}", field=f"tokens[{i}].winner")
        tokens.append(ClobToken(
            token_id=_id(t, "token_id"),
            outcome=_text(t, "outcome"),
            price=_opt_price(t, "price"),
            winner=bool(winner),
        ))
    fee = m.get("taker_base_fee")
    return ClobMarket(
        condition_id=_id(m, "condition_id"),
        question_id=_id(m, "question_id", required=False),
        closed=bool(_bool(m, "closed")),
        active=_bool(m, "active"),
        accepting_orders=_bool(m, "accepting_orders"),
        is_50_50_outcome=_bool(m, "is_50_50_outcome"),
        neg_risk=bool(_bool(m, "neg_risk")),
        tokens=tuple(tokens),
        end_date=parse_timestamp(m.get("end_date_iso"), "end_date_iso"),
        taker_base_fee=fee if isinstance(fee, int) and not isinstance(fee, bool) else None,
    )


# ----------------------------------------------------------------------------------------------- Gamma market


@dataclass(frozen=True)
class VenueMarket:
    """A parsed Gamma market: the domain ``Market`` + its ``Quote`` and ``Resolution``, and Polymarket extras.

    ``resolution`` is set only when final (module docstring rules); then ``pending_reason`` is "". ``tradable``
    is False (with ``skip_reason``) when no new paper bet may be placed: closed, archived, inactive, placeholder
    without prices, scalar or legacy AMM, not accepting orders, no token ids, or ``endDate`` already passed at
    ``fetched_at`` (Gamma keeps such markets open while the outcome may already be known).
    For a closed market ``quote`` still carries ``outcomePrices`` (the payout vector once resolved).
    ``token_ids`` maps ``YES``/``NO`` to the CLOB token ids (use them for ``/book`` and ``/prices-history``).
    """

    market: Market
    quote: Quote | None
    resolution: Resolution | None
    pending_reason: str
    tradable: bool
    skip_reason: str
    native_id: str
    condition_id: str = ""
    question_id: str = ""
    slug: str = ""
    token_ids: Mapping[str, str] = field(default_factory=dict)
    outcome_prices: tuple[Decimal, ...] = ()
    closed: bool = False
    active: bool = True
    archived: bool = False
    accepting_orders: bool | None = None
    enable_order_book: bool | None = None
    legacy_amm: bool = False
    neg_risk: bool = False
    neg_risk_market_id: str = ""
    neg_risk_other: bool = False
    group_item_title: str = ""
    event_id: str = ""
    uma_resolution_status: str = ""
    uma_resolution_statuses: tuple[str, ...] = ()
    end_date: datetime | None = None
    closed_time: datetime | None = None
    updated_at: datetime | None = None
    fee_rate: Decimal | None = None  # taker fee rate from feeSchedule when fees are enabled

    def __post_init__(self) -> None:
        object.__setattr__(self, "token_ids", MappingProxyType(dict(self.token_ids)))

    def token_for(self, outcome: str) -> str:
        """The CLOB token id of ``YES``/``NO``; raises KeyError when the market has none."""
        return self.token_ids[outcome]


def gamma_resolution(arena_market_id: str, *, closed: bool, prices: Sequence[Decimal] | None,
                     uma_status: str = "", uma_statuses: Sequence[str] = (), legacy_amm: bool = False,
                     resolved_at: datetime | None = None, clob: ClobMarket | None = None,
                     token_ids: Sequence[str] = (), labels: Sequence[str] = ()) -> tuple[Resolution | None, str]:
    """Apply the module's resolution rules. Returns ``(resolution, "")`` when final, else ``(None, reason)``."""
    if not closed:
        return None, OPEN
    if prices is None or len(prices) == 0:
        return None, NO_PRICES
    status = uma_status.strip().lower()
    if status in NON_FINAL_UMA:
        return None, NON_FINAL_UMA[status]
    if all(p == 0 for p in prices):
        return None, LEGACY_UNRESOLVABLE
    ones = [i for i, p in enumerate(prices) if p == 1]
    zeros = [i for i, p in enumerate(prices) if p == 0]
    if len(ones) == 1 and len(zeros) == len(prices) - 1:
        index = ones[0]
        if index >= len(OUTCOMES):
            return None, CLOSED_UNDECIDED
        if clob is not None:
            clob_index = clob.winner_index(token_ids, labels)
            if clob_index is not None and clob_index != index:
                return None, CLOB_DISAGREES
        return Resolution.winner(arena_market_id, OUTCOMES[index], resolved_at=resolved_at, source="gamma"), ""
    if all(p == HALF for p in prices):
        history_says_resolved = (not status and bool(uma_statuses)
                                 and uma_statuses[-1].strip().lower() == "resolved")
        confirmed = status == "resolved" or history_says_resolved or (clob is not None and clob.confirms_50_50())
        if confirmed:
            return Resolution.probabilistic_yes(arena_market_id, Price(MICRO // 2), resolved_at=resolved_at,
                                                source="gamma"), ""
        return None, FIFTY_FIFTY_UNCONFIRMED
    if legacy_amm:
        return None, LEGACY_UNRESOLVABLE
    return None, CLOSED_UNDECIDED


def _fee_rate(m: Mapping[str, Any]) -> Decimal | None:
    if not _bool(m, "feesEnabled"):
        return None
    schedule = m.get("feeSchedule")
    if schedule is None:
        return None
    schedule = _require_mapping(schedule, "feeSchedule")
    rate = schedule.get("rate")
    if _missing(rate):
        return None
    return _exact(rate, "feeSchedule.rate")


def parse_gamma_market(raw: object, *, fetched_at: datetime, clob: ClobMarket | None = None,
                       group_id: str | None = None) -> VenueMarket:
    """Parse one Gamma Market object (from ``/markets``, ``/markets/{id}``, keyset pages or an event).

    ``fetched_at``: when we received it (aware UTC). ``clob``: an optional CLOB market for the same condition,
    used as a second opinion on resolution. ``group_id``: override the group (events pass theirs when they are
    neg-risk; otherwise the first entry of the market's ``events`` is used when the market is neg-risk). Raises ``ParseError`` naming the bad field, or
    ``UnsupportedMarket`` for a market whose outcome count is not 2.
    """
    fetched_at = _utc(fetched_at)
    m = _require_mapping(raw, "market")
    native = _id(m, "id")
    mid = market_id(native)
    question = _text(m, "question", required=True)

    labels_raw = decode_array(m, "outcomes")
    if labels_raw is None:
        raise ParseError("missing", field="outcomes")
    labels = _str_items(labels_raw, "outcomes")
    if len(labels) != 2:
        raise UnsupportedMarket(f"{len(labels)} outcomes; only 2-outcome markets are supported",
                                field="outcomes", kind=f"{len(labels)}-outcome")

    prices_raw = decode_array(m, "outcomePrices")
    prices: tuple[Decimal, ...] | None = None
    if prices_raw is not None:
        if len(prices_raw) != len(labels):
            raise ParseError(f"{len(prices_raw)} prices for {len(labels)} outcomes", field="outcomePrices")
        prices = tuple(_exact(p, f"outcomePrices[{i}]") for i, p in enumerate(prices_raw))

    tokens_raw = decode_array(m, "clobTokenIds")
    token_list: list[str] = []
    if tokens_raw is not None:
        token_list = _str_items(tokens_raw, "clobTokenIds")
        if len(token_list) != len(labels):
            raise ParseError(f"{len(token_list)} token ids for {len(labels)} outcomes", field="clobTokenIds")
        if any(not t.strip() for t in token_list):
            raise ParseError("empty token id", field="clobTokenIds")

    statuses_raw = decode_array(m, "umaResolutionStatuses")
    statuses = tuple(_str_items(statuses_raw, "umaResolutionStatuses")) if statuses_raw is not None else ()
    uma_status = _text(m, "umaResolutionStatus")

    closed = bool(_bool(m, "closed"))
    active_flag = _bool(m, "active")
    active = True if active_flag is None else active_flag
    archived = bool(_bool(m, "archived"))
    accepting = _bool(m, "acceptingOrders")
    enable_book = _bool(m, "enableOrderBook")
    fpmm_live = bool(_bool(m, "fpmmLive"))
    mm_address = _text(m, "marketMakerAddress")
    legacy = bool(mm_address.strip()) or fpmm_live or not enable_book

    end_date = parse_timestamp(m.get("endDate"), "endDate")
    closed_time = parse_timestamp(m.get("closedTime"), "closedTime")
    updated_at = parse_timestamp(m.get("updatedAt"), "updatedAt")
    uma_end = parse_timestamp(m.get("umaEndDate"), "umaEndDate")

    event_id = ""
    events = m.get("events")
    if events is not None:
        if not isinstance(events, list):
            raise ParseError("expected an array", field="events")
        if events:
            event_id = _id(_require_mapping(events[0], "events[0]"), "id", required=False)
    if group_id is None:
        # Only a neg-risk event is an exclusive group (exactly one member resolves YES); the members of any
        # other event are independent binaries (date ladders, price thresholds) and must not be checked for
        # Σ P = 1, so they get no group.
        group_id = event_group_id(event_id) if event_id and _bool(m, "negRisk") else ""

    resolution, pending = gamma_resolution(
        mid, closed=closed, prices=prices, uma_status=uma_status, uma_statuses=statuses, legacy_amm=legacy,
        resolved_at=uma_end or closed_time or updated_at, clob=clob, token_ids=token_list, labels=labels)

    if resolution is not None:
        status = MarketStatus.RESOLVED
    elif closed:
        status = MarketStatus.CLOSED
    else:
        status = MarketStatus.OPEN

    volume = _number(m, "volumeNum")
    if volume is None:
        volume = _number(m, "volume")
    liquidity = _number(m, "liquidityNum")
    if liquidity is None:
        liquidity = _number(m, "liquidity")
    slug = _text(m, "slug")
    category = m.get("category")

    market = Market(
        id=mid, venue=VENUE, question=question, kind=MarketKind.BINARY, outcomes=OUTCOMES,
        outcome_labels=(labels[0], labels[1]),
        close_time=(closed_time or end_date) if closed else end_date,
        status=status, description=_text(m, "description"),
        url=f"https://polymarket.com/market/{slug}" if slug else "",
        category=category if isinstance(category, str) else "", group_id=group_id,
        volume=volume, volume_24h=_number(m, "volume24hr"), liquidity=liquidity,
    )

    quote = None
    if prices is not None:
        quote = Quote(
            market_id=mid, prices={YES: _price_value(prices[0], "outcomePrices[0]")},
            observed_at=_clamp(updated_at, fetched_at), fetched_at=fetched_at,
            bid=_opt_price(m, "bestBid"), ask=_opt_price(m, "bestAsk"), source="gamma",
        )

    if closed:
        skip = "closed"
    elif archived:
        skip = "archived"
    elif not active:
        skip = "inactive"
    elif prices is None:
        skip = "no_prices"
    elif m.get("marketType") == "scalar":
        skip = "scalar"  # Long/Short legacy scalar markets pay by a range, not 1/0
    elif legacy:
        skip = "legacy_amm"
    elif accepting is False:
        skip = "not_accepting_orders"
    elif not token_list:
        skip = "no_token_ids"
    elif end_date is not None and end_date <= fetched_at:
        skip = "past_end_date"  # still trading after its scheduled end: the outcome may already be known
    else:
        skip = ""

    return VenueMarket(
        market=market, quote=quote, resolution=resolution, pending_reason=pending, tradable=not skip,
        skip_reason=skip, native_id=native, condition_id=_id(m, "conditionId", required=False),
        question_id=_id(m, "questionID", required=False), slug=slug,
        token_ids=dict(zip(OUTCOMES, token_list)), outcome_prices=prices or (), closed=closed, active=active,
        archived=archived, accepting_orders=accepting, enable_order_book=enable_book, legacy_amm=legacy,
        neg_risk=bool(_bool(m, "negRisk")), neg_risk_market_id=_id(m, "negRiskMarketID", required=False),
        neg_risk_other=bool(_bool(m, "negRiskOther")), group_item_title=_text(m, "groupItemTitle").strip(),
        event_id=event_id, uma_resolution_status=uma_status, uma_resolution_statuses=statuses,
        end_date=end_date, closed_time=closed_time, updated_at=updated_at, fee_rate=_fee_rate(m),
    )


def parse_gamma_markets(raw: object, *, fetched_at: datetime) -> tuple[list[VenueMarket], list[tuple[str, ParseError]]]:
    """Parse a ``/markets`` page (a JSON array) or a keyset page (``{"markets": [...]}``).

    Returns (parsed markets, [(id or "#index", error)]) so one bad row never loses the page.
    """
    rows = raw.get("markets") if isinstance(raw, Mapping) else raw
    if not isinstance(rows, list):
        raise ParseError("expected an array of markets", field="markets")
    parsed: list[VenueMarket] = []
    rejected: list[tuple[str, ParseError]] = []
    for i, row in enumerate(rows):
        try:
            parsed.append(parse_gamma_market(row, fetched_at=fetched_at))
        except ParseError as exc:
            key = str(row.get("id")) if isinstance(row, Mapping) and row.get("id") is not None else f"#{i}"
            rejected.append((key, exc))
    return parsed, rejected


# ----------------------------------------------------------------------------------------------- Gamma event


@dataclass(frozen=True)
class GammaEvent:
    """A Gamma event: a question group. ``neg_risk``: exactly one member resolves YES (otherwise independent).

    ``markets`` are the parsed members (placeholders included, marked not tradable); ``rejected`` lists the
    members that failed to parse as (id, error).
    """

    id: str
    slug: str
    title: str
    neg_risk: bool
    neg_risk_augmented: bool
    active: bool | None
    closed: bool
    end_date: datetime | None
    markets: tuple[VenueMarket, ...]
    rejected: tuple[tuple[str, ParseError], ...] = ()

    @property
    def group_id(self) -> str:
        return event_group_id(self.id)


def parse_gamma_event(raw: object, *, fetched_at: datetime) -> GammaEvent:
    """Parse one Gamma Event with its ``markets[]`` (each member becomes its own binary ``VenueMarket``)."""
    e = _require_mapping(raw, "event")
    event_id = _id(e, "id")
    neg_risk = bool(_bool(e, "negRisk"))  # only then are the members one exclusive group (Market.group_id)
    members = e.get("markets")
    if members is None:
        members = []  # include_markets=false drops the key
    if not isinstance(members, list):
        raise ParseError("expected an array", field="markets")
    parsed: list[VenueMarket] = []
    rejected: list[tuple[str, ParseError]] = []
    for i, member in enumerate(members):
        try:
            parsed.append(parse_gamma_market(member, fetched_at=fetched_at,
                                             group_id=event_group_id(event_id) if neg_risk else ""))
        except ParseError as exc:
            key = str(member.get("id")) if isinstance(member, Mapping) and member.get("id") is not None else f"#{i}"
            rejected.append((key, exc))
    return GammaEvent(
        id=event_id, slug=_text(e, "slug"), title=_text(e, "title"), neg_risk=neg_risk,
        neg_risk_augmented=bool(_bool(e, "negRiskAugmented")), active=_bool(e, "active"),
        closed=bool(_bool(e, "closed")), end_date=parse_timestamp(e.get("endDate"), "endDate"),
        markets=tuple(parsed), rejected=tuple(rejected),
    )


def parse_gamma_events(raw: object, *, fetched_at: datetime) -> list[GammaEvent]:
    """Parse a ``/events`` page (array) or a keyset page (``{"events": [...]}``)."""
    rows = raw.get("events") if isinstance(raw, Mapping) else raw
    if not isinstance(rows, list):
        raise ParseError("expected an array of events", field="events")
    return [parse_gamma_event(row, fetched_at=fetched_at) for row in rows]


def parse_keyset_cursor(raw: object) -> str | None:
    """``next_cursor`` of a keyset page; None (or "") means the last page."""
    page = _require_mapping(raw, "keyset_page")
    cursor = page.get("next_cursor")
    if _missing(cursor):
        return None
    if not isinstance(cursor, str):
        raise ParseError(f"expected a string cursor, got {type(cursor).__name__}", field="next_cursor")
    return cursor


# ----------------------------------------------------------------------------------------------- CLOB quotes


def parse_book(raw: object, *, fetched_at: datetime | None = None) -> OrderBook:
    """Parse ``GET /book``. Levels arrive worst-first (bids ascending, asks descending); ``OrderBook.of`` sorts
    them best-first. Sizes become micro-shares (floored). ``observed_at`` = the book's ``timestamp`` (ms) when
    present (clamped to ``fetched_at``), else ``fetched_at``."""
    b = _require_mapping(raw, "book")
    sides: dict[str, list[tuple[Price, int]]] = {}
    for side in ("bids", "asks"):
        levels = b.get(side)
        if levels is None:
            levels = []
        if not isinstance(levels, list):
            raise ParseError("expected an array", field=side)
        out = []
        for i, lv in enumerate(levels):
            lv = _require_mapping(lv, f"{side}[{i}]")
            if _missing(lv.get("price")):
                raise ParseError("missing", field=f"{side}[{i}].price")
            if _missing(lv.get("size")):
                raise ParseError("missing", field=f"{side}[{i}].size")
            out.append((_price_value(lv.get("price"), f"{side}[{i}].price"),
                        _micro_shares(lv.get("size"), f"{side}[{i}].size")))
        sides[side] = out
    observed = _epoch_ms(b.get("timestamp"), "timestamp")
    if fetched_at is not None:
        observed = _clamp(observed, _utc(fetched_at))
    min_size = b.get("min_order_size")
    return OrderBook.of(
        sides["bids"], sides["asks"], token_id=_id(b, "asset_id", required=False),
        market=_id(b, "market", required=False), observed_at=observed,
        tick_size=_opt_price(b, "tick_size"),
        min_order_size=None if _missing(min_size) else _micro_shares(min_size, "min_order_size"),
        last_trade=_opt_price(b, "last_trade_price"),
    )


def is_no_orderbook(message: str) -> bool:
    """True for the CLOB's 404 "No orderbook exists for the requested token id" (a closed/unknown token)."""
    return "no orderbook exists" in message.lower()


def parse_midpoint(raw: object) -> Price:
    """``GET /midpoint`` → the mid. Live sends ``{"mid": "0.5"}``; the docs say ``mid_price``; accept both."""
    m = _require_mapping(raw, "midpoint")
    for key in ("mid", "mid_price"):
        if not _missing(m.get(key)):
            return _price_value(m.get(key), key)
    raise ParseError("missing", field="mid")


def parse_price(raw: object) -> Price:
    """``GET /price?side=`` → ``{"price": "0.5"}`` (string live, number in the docs). NB: side=BUY is the best
    *bid*, side=SELL the best *ask*; don't decide fills from it — walk the book."""
    m = _require_mapping(raw, "price")
    if _missing(m.get("price")):
        raise ParseError("missing", field="price")
    return _price_value(m.get("price"), "price")


def parse_spread(raw: object) -> Decimal:
    """``GET /spread`` → ``{"spread": "0.01"}`` as an exact Decimal in [0, 1]."""
    m = _require_mapping(raw, "spread")
    if _missing(m.get("spread")):
        raise ParseError("missing", field="spread")
    return _exact(m.get("spread"), "spread")


def parse_prices_history(raw: object, *, start: datetime | None = None,
                         end: datetime | None = None) -> list[PricePoint]:
    """``GET /prices-history`` → price points sorted by time, one per second-stamp (the last one wins).

    ``t`` is Unix seconds, ``p`` a number (or numeric string) in [0, 1]. Jitter and gaps are kept as they are;
    points outside [``start``, ``end``] are dropped (the API appends a trailing "now" point even for a past
    ``endTs``). An empty ``history`` is normal for resolved markets at low fidelity.
    """
    m = _require_mapping(raw, "prices_history")
    rows = m.get("history")
    if rows is None:
        raise ParseError("missing", field="history")
    if not isinstance(rows, list):
        raise ParseError("expected an array", field="history")
    by_t: dict[int, Price] = {}
    for i, row in enumerate(rows):
        row = _require_mapping(row, f"history[{i}]")
        t = row.get("t")
        if isinstance(t, bool) or not isinstance(t, (int, float)) or t != t or t in (float("inf"), float("-inf")):
            raise ParseError(f"expected Unix seconds, got {t!r}", field=f"history[{i}].t")
        if t != int(t) or not 0 <= t < 10**11:
            raise ParseError(f"expected whole Unix seconds, got {t!r}", field=f"history[{i}].t")
        if _missing(row.get("p")):
            raise ParseError("missing", field=f"history[{i}].p")
        by_t[int(t)] = _price_value(row.get("p"), f"history[{i}].p")
    points = [PricePoint(datetime.fromtimestamp(t, tz=timezone.utc), p) for t, p in sorted(by_t.items())]
    if start is not None:
        points = [pt for pt in points if pt.at >= _utc(start)]
    if end is not None:
        points = [pt for pt in points if pt.at <= _utc(end)]
    return points


@dataclass(frozen=True)
class MarketResolvedEvent:
    """The CLOB market WebSocket's ``market_resolved`` push (reference; the arena polls)."""

    condition_id: str
    winning_asset_id: str
    winning_outcome: str
    asset_ids: tuple[str, ...]
    at: datetime | None


def parse_ws_market_resolved(raw: object) -> MarketResolvedEvent:
    m = _require_mapping(raw, "ws_event")
    if m.get("event_type") != "market_resolved":
        raise ParseError(f"not a market_resolved event: {m.get('event_type')!r}", field="event_type")
    assets = m.get("assets_ids") or []
    if not isinstance(assets, list):
        raise ParseError("expected an array", field="assets_ids")
    return MarketResolvedEvent(
        condition_id=_id(m, "market"), winning_asset_id=_id(m, "winning_asset_id"),
        winning_outcome=_text(m, "winning_outcome"), asset_ids=tuple(_str_items(assets, "assets_ids")),
        at=_epoch_ms(m.get("timestamp"), "timestamp"),
    )


__all__ = [
    "CLOB_DISAGREES",
    "CLOSED_UNDECIDED",
    "ClobMarket",
    "ClobToken",
    "FIFTY_FIFTY_UNCONFIRMED",
    "GammaEvent",
    "LEGACY_UNRESOLVABLE",
    "MarketResolvedEvent",
    "NO_PRICES",
    "OPEN",
    "UMA_DISPUTED",
    "UMA_PROPOSED",
    "VENUE",
    "VenueMarket",
    "decode_array",
    "event_group_id",
    "gamma_resolution",
    "is_no_orderbook",
    "market_id",
    "parse_book",
    "parse_clob_market",
    "parse_gamma_event",
    "parse_gamma_events",
    "parse_gamma_market",
    "parse_gamma_markets",
    "parse_keyset_cursor",
    "parse_midpoint",
    "parse_price",
    "parse_prices_history",
    "parse_spread",
    "parse_timestamp",
    "parse_ws_market_resolved",
]
