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
- Shapes are checked first by the pydantic models of ``polymarket_payloads`` (stringly arrays, mixed ISO times,
  numeric strings); a malformed payload raises ``ParseError`` naming the field path (``outcomePrices[1]``,
  ``tokens[0].token_id``). This module maps the typed payloads to domain objects and applies the rules below.

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import Decimal
from types import MappingProxyType

from arena.domain.book import OrderBook
from arena.domain.market import NO, YES, Market, MarketKind, MarketStatus, Quote, Resolution
from arena.errors import ParseError
from arena.money import MICRO, Price
from arena.venues import PricePoint
from arena.venues.fields import nested, parse_timestamp, validate
from arena.venues.polymarket_payloads import (
    BookPayload,
    ClobMarketPayload,
    GammaEventPayload,
    GammaMarketPayload,
    KeysetPagePayload,
    MarketResolvedPayload,
    MidpointPayload,
    PricePayload,
    PricesHistoryPayload,
    SpreadPayload,
)

VENUE = "polymarket"
OUTCOMES = (YES, NO)
HALF = Decimal("0.5")

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


# ----------------------------------------------------------------------------------------------- helpers


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
    m = validate(ClobMarketPayload, raw, "clob_market")
    return ClobMarket(
        condition_id=m.condition_id, question_id=m.question_id, closed=bool(m.closed), active=m.active,
        accepting_orders=m.accepting_orders, is_50_50_outcome=m.is_50_50_outcome, neg_risk=bool(m.neg_risk),
        tokens=tuple(ClobToken(token_id=t.token_id, outcome=t.outcome or "", price=t.price, winner=t.winner)
                     for t in m.tokens),
        end_date=m.end_date_iso, taker_base_fee=m.taker_base_fee,
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


def parse_gamma_market(raw: object, *, fetched_at: datetime, clob: ClobMarket | None = None,
                       group_id: str | None = None) -> VenueMarket:
    """Parse one Gamma Market object (from ``/markets``, ``/markets/{id}``, keyset pages or an event).

    ``fetched_at``: when we received it (aware UTC). ``clob``: an optional CLOB market for the same condition,
    used as a second opinion on resolution. ``group_id``: override the group (events pass theirs when they are
    neg-risk; otherwise the first entry of the market's ``events`` is used when the market is neg-risk). Raises ``ParseError`` naming the bad field, or
    ``UnsupportedMarket`` for a market whose outcome count is not 2.
    """
    fetched_at = _utc(fetched_at)
    m = validate(GammaMarketPayload, raw, "market")
    native = m.id
    mid = market_id(native)
    labels = m.outcomes
    prices = m.outcomePrices
    token_list = m.clobTokenIds
    statuses = m.umaResolutionStatuses
    uma_status = m.umaResolutionStatus or ""
    closed = bool(m.closed)
    active = True if m.active is None else m.active
    archived = bool(m.archived)
    accepting = m.acceptingOrders
    enable_book = m.enableOrderBook
    legacy = bool((m.marketMakerAddress or "").strip()) or bool(m.fpmmLive) or not enable_book
    end_date, closed_time, updated_at = m.endDate, m.closedTime, m.updatedAt
    event_id = m.event_id
    neg_risk = bool(m.negRisk)
    if group_id is None:
        # Only a neg-risk event is an exclusive group (exactly one member resolves YES); the members of any
        # other event are independent binaries (date ladders, price thresholds) and must not be checked for
        # Σ P = 1, so they get no group.
        group_id = event_group_id(event_id) if event_id and neg_risk else ""

    resolution, pending = gamma_resolution(
        mid, closed=closed, prices=prices, uma_status=uma_status, uma_statuses=statuses, legacy_amm=legacy,
        resolved_at=m.umaEndDate or closed_time or updated_at, clob=clob, token_ids=token_list, labels=labels)

    if resolution is not None:
        status = MarketStatus.RESOLVED
    elif closed:
        status = MarketStatus.CLOSED
    else:
        status = MarketStatus.OPEN

    volume = m.volumeNum if m.volumeNum is not None else m.volume
    liquidity = m.liquidityNum if m.liquidityNum is not None else m.liquidity
    slug = m.slug or ""
    market = Market(
        id=mid, venue=VENUE, question=m.question, kind=MarketKind.BINARY, outcomes=OUTCOMES,
        outcome_labels=(labels[0], labels[1]),
        close_time=(closed_time or end_date) if closed else end_date,
        status=status, description=m.description or "",
        url=f"https://polymarket.com/market/{slug}" if slug else "",
        category=m.category if isinstance(m.category, str) else "", group_id=group_id,
        volume=volume, volume_24h=m.volume24hr, liquidity=liquidity,
    )

    quote = None
    if prices is not None:
        quote = Quote(
            market_id=mid, prices={YES: Price.of(prices[0])},
            observed_at=_clamp(updated_at, fetched_at), fetched_at=fetched_at,
            bid=m.bestBid, ask=m.bestAsk, source="gamma",
        )

    if closed:
        skip = "closed"
    elif archived:
        skip = "archived"
    elif not active:
        skip = "inactive"
    elif prices is None:
        skip = "no_prices"
    elif m.marketType == "scalar":
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
        skip_reason=skip, native_id=native, condition_id=m.conditionId, question_id=m.questionID, slug=slug,
        token_ids=dict(zip(OUTCOMES, token_list)), outcome_prices=prices or (), closed=closed, active=active,
        archived=archived, accepting_orders=accepting, enable_order_book=enable_book, legacy_amm=legacy,
        neg_risk=neg_risk, neg_risk_market_id=m.negRiskMarketID, neg_risk_other=bool(m.negRiskOther),
        group_item_title=(m.groupItemTitle or "").strip(), event_id=event_id, uma_resolution_status=uma_status,
        uma_resolution_statuses=statuses, end_date=end_date, closed_time=closed_time, updated_at=updated_at,
        fee_rate=m.fee_rate,
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
            rejected.append((_row_key(row, i), exc))
    return parsed, rejected


def _row_key(row: object, i: int) -> str:
    """How a rejected row is named: its id when it has one, else ``#index``."""
    return str(row.get("id")) if isinstance(row, Mapping) and row.get("id") is not None else f"#{i}"


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
    e = validate(GammaEventPayload, raw, "event")
    neg_risk = bool(e.negRisk)  # only then are the members one exclusive group (Market.group_id)
    parsed: list[VenueMarket] = []
    rejected: list[tuple[str, ParseError]] = []
    for i, member in enumerate(e.markets):
        try:
            parsed.append(parse_gamma_market(member, fetched_at=fetched_at,
                                             group_id=event_group_id(e.id) if neg_risk else ""))
        except ParseError as exc:
            rejected.append((_row_key(member, i), exc))
    return GammaEvent(
        id=e.id, slug=e.slug or "", title=e.title or "", neg_risk=neg_risk,
        neg_risk_augmented=bool(e.negRiskAugmented), active=e.active, closed=bool(e.closed), end_date=e.endDate,
        markets=tuple(parsed), rejected=tuple(rejected),
    )


def parse_gamma_events(raw: object, *, fetched_at: datetime) -> list[GammaEvent]:
    """Parse a ``/events`` page (array) or a keyset page (``{"events": [...]}``); a malformed event fails the
    page with the error under its index (``events[2].id``)."""
    rows = raw.get("events") if isinstance(raw, Mapping) else raw
    if not isinstance(rows, list):
        raise ParseError("expected an array of events", field="events")
    events = []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ParseError(f"expected a JSON object, got {type(row).__name__}", field=f"events[{i}]")
        try:
            events.append(parse_gamma_event(row, fetched_at=fetched_at))
        except ParseError as exc:
            raise nested(exc, f"events[{i}]") from None
    return events


def parse_keyset_cursor(raw: object) -> str | None:
    """``next_cursor`` of a keyset page; None (or "") means the last page."""
    return validate(KeysetPagePayload, raw, "keyset_page").next_cursor


# ----------------------------------------------------------------------------------------------- CLOB quotes


def parse_book(raw: object, *, fetched_at: datetime | None = None) -> OrderBook:
    """Parse ``GET /book``. Levels arrive worst-first (bids ascending, asks descending); ``OrderBook.of`` sorts
    them best-first. Sizes become micro-shares (floored). ``observed_at`` = the book's ``timestamp`` (ms) when
    present (clamped to ``fetched_at``), else ``fetched_at``."""
    b = validate(BookPayload, raw, "book")
    observed = b.timestamp
    if fetched_at is not None:
        observed = _clamp(observed, _utc(fetched_at))
    return OrderBook.of(
        [(lv.price, lv.size) for lv in b.bids], [(lv.price, lv.size) for lv in b.asks], token_id=b.asset_id,
        market=b.market, observed_at=observed, tick_size=b.tick_size, min_order_size=b.min_order_size,
        last_trade=b.last_trade_price,
    )


def is_no_orderbook(message: str) -> bool:
    """True for the CLOB's 404 "No orderbook exists for the requested token id" (a closed/unknown token)."""
    return "no orderbook exists" in message.lower()


def parse_midpoint(raw: object) -> Price:
    """``GET /midpoint`` → the mid. Live sends ``{"mid": "0.5"}``; the docs say ``mid_price``; accept both."""
    m = validate(MidpointPayload, raw, "midpoint")
    mid = m.mid if m.mid is not None else m.mid_price
    if mid is None:
        raise ParseError("missing", field="mid")
    return mid


def parse_price(raw: object) -> Price:
    """``GET /price?side=`` → ``{"price": "0.5"}`` (string live, number in the docs). NB: side=BUY is the best
    *bid*, side=SELL the best *ask*; don't decide fills from it — walk the book."""
    return validate(PricePayload, raw, "price").price


def parse_spread(raw: object) -> Decimal:
    """``GET /spread`` → ``{"spread": "0.01"}`` as an exact Decimal in [0, 1]."""
    return validate(SpreadPayload, raw, "spread").spread


def parse_prices_history(raw: object, *, start: datetime | None = None,
                         end: datetime | None = None) -> list[PricePoint]:
    """``GET /prices-history`` → price points sorted by time, one per second-stamp (the last one wins).

    ``t`` is Unix seconds, ``p`` a number (or numeric string) in [0, 1]. Jitter and gaps are kept as they are;
    points outside [``start``, ``end``] are dropped (the API appends a trailing "now" point even for a past
    ``endTs``). An empty ``history`` is normal for resolved markets at low fidelity.
    """
    m = validate(PricesHistoryPayload, raw, "prices_history")
    by_t = {row.t: row.p for row in m.history}
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
    m = validate(MarketResolvedPayload, raw, "ws_event")
    return MarketResolvedEvent(
        condition_id=m.market, winning_asset_id=m.winning_asset_id, winning_outcome=m.winning_outcome or "",
        asset_ids=m.assets_ids, at=m.timestamp,
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
