"""Polymarket client: fetches raw JSON from Gamma (metadata) and the CLOB (books, quotes, history).

Owns request shapes and paging only; parsing lives in ``polymarket_parse`` (the convenience methods at the
bottom just call it with the injected clock's ``now()`` as ``fetched_at``). Transport policy (User-Agent,
retries, rate limits) lives in ``http.VenueHTTP``.

Paging: ``/markets`` and ``/events`` use ``offset`` up to 2000 (Gamma answers 422 beyond), advancing by the
number of rows actually received and stopping on an empty page. A listing that goes deeper switches to
``/markets/keyset`` (``/events/keyset``) and follows ``next_cursor`` until it is absent; keyset pages are
silently clamped, so page length is never used as an end signal. The keyset walk starts from the beginning
(a cursor cannot be derived from an offset), and rows already yielded are skipped by id.

Parameters are checked client-side against each endpoint's documented list (an unknown name raises
``InvalidRequest``); ``order`` must be camelCase (snake_case → 422 on Gamma). ``/prices-history`` rules are
enforced before sending: ``interval`` ∈ {1h, 6h, 1d, 1w, 1m, max, all}; ``1m`` (one month) needs fidelity ≥ 10
and ``1w`` fidelity ≥ 5; ``startTs``/``endTs`` are Unix seconds, given together, at most 15 days apart, and not
combined with ``interval``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any, TypeVar

import httpx

from arena.clock import Clock, SystemClock
from arena.domain.book import OrderBook
from arena.errors import ParseError
from arena.money import Price
from arena.venues import PricePoint
from arena.venues.fingerprint import gamma_head
from arena.venues.http import InvalidRequest, VenueHTTP, VenueHTTPError, decode_json
from arena.venues.listing import Listed, decoded, entries, keyset_entries, listed
from arena.venues.polymarket_parse import (
    ClobMarket,
    GammaEvent,
    VenueMarket,
    is_no_orderbook,
    parse_book,
    parse_clob_market,
    parse_gamma_event,
    parse_gamma_market,
    parse_keyset_cursor,
    parse_midpoint,
    parse_price,
    parse_prices_history,
)

GAMMA_URL = "https://gamma-api.polymarket.com"
CLOB_URL = "https://clob.polymarket.com"
MAX_OFFSET = 2000
MAX_HISTORY_WINDOW_S = 15 * 24 * 3600
HISTORY_INTERVALS = frozenset({"1h", "6h", "1d", "1w", "1m", "max", "all"})
MIN_FIDELITY = {"1m": 10, "1w": 5}
T = TypeVar("T")

_COMMON_MARKET_FILTERS = frozenset({
    "order", "ascending", "id", "slug", "clob_token_ids", "condition_ids", "question_ids",
    "market_maker_address", "liquidity_num_min", "liquidity_num_max", "volume_num_min", "volume_num_max",
    "start_date_min", "start_date_max", "end_date_min", "end_date_max", "tag_id", "related_tags", "tag_match",
    "closed", "active", "archived", "uma_resolution_status", "include_tag", "cyom", "game_id",
    "sports_market_types", "rewards_min_size", "rfq_enabled", "decimalized", "locale",
})
_COMMON_EVENT_FILTERS = frozenset({
    "order", "ascending", "id", "slug", "tag_id", "tag_slug", "exclude_tag_id", "related_tags", "active",
    "archived", "closed", "featured", "cyom", "liquidity_min", "liquidity_max", "volume_min", "volume_max",
    "start_date_min", "start_date_max", "end_date_min", "end_date_max", "recurrence", "series_id",
    "title_search", "include_chat", "include_template", "include_markets",
})


def _check_filters(filters: Mapping[str, Any], allowed: frozenset[str], endpoint: str) -> None:
    unknown = sorted(set(filters) - allowed)
    if unknown:
        raise InvalidRequest(f"{endpoint} does not take {', '.join(unknown)}", params=unknown)
    order = filters.get("order")
    if order is not None:
        fields = [f.strip() for f in str(order).split(",")]
        if any("_" in f or not f for f in fields):
            raise InvalidRequest(f"{endpoint}: order fields must be camelCase (e.g. volume24hr), got {order!r}",
                                 params=["order"])


def _paginate(path: str, offset_page: Callable[[int], list[T]],
              keyset_page: Callable[[str | None], tuple[list[T], str | None]],
              row_id: Callable[[T], str | None]) -> Iterator[T]:
    """Every row of a Gamma listing: offset pages up to ``MAX_OFFSET``, then keyset pages from the start, rows
    already yielded skipped by `row_id` (see the module's paging notes)."""
    seen: set[str] = set()

    def fresh(rows: list[T]) -> Iterator[T]:
        for row in rows:
            rid = row_id(row)
            if rid is not None:
                if rid in seen:
                    continue
                seen.add(rid)
            yield row

    offset = 0
    while True:
        rows = offset_page(offset)
        if not rows:
            return  # an empty page is the end; a short page is not
        yield from fresh(rows)
        offset += len(rows)
        if offset > MAX_OFFSET:
            break
    cursor: str | None = None
    cursors: set[str] = set()
    while True:
        rows, cursor = keyset_page(cursor)
        yield from fresh(rows)
        if cursor is None:
            return
        if cursor in cursors:
            raise ParseError(f"{path}/keyset repeated cursor {cursor!r}", field="next_cursor")
        cursors.add(cursor)


def _array(body: Any, what: str) -> list[Any]:
    """An offset page's rows: `body` must be a JSON array."""
    if not isinstance(body, list):
        raise ParseError(f"expected an array, got {type(body).__name__}", field=what)
    return body


def _keyset_body(body: Any, what: str) -> tuple[list[Any], str | None]:
    """A keyset page's rows and next cursor: `body` must be ``{what: [...], next_cursor}``."""
    if not isinstance(body, Mapping) or not isinstance(body.get(what), list):
        raise ParseError(f"expected {{{what}: [...], next_cursor}}", field=what)
    return list(body[what]), parse_keyset_cursor(body)


def _listed_id(entry: Listed) -> str | None:
    """The id `_row_id` reads, of a listed entry (from its head, or its decoded row)."""
    if entry.head is not None:
        value = entry.head.id
        return None if value is None else str(value)
    return _row_id(entry.row())


def _check_page(limit: int, offset: int | None = None) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidRequest(f"limit must be a positive int, got {limit!r}")
    if offset is not None and (isinstance(offset, bool) or not isinstance(offset, int) or
                               not 0 <= offset <= MAX_OFFSET):
        raise InvalidRequest(f"offset must be in [0, {MAX_OFFSET}], got {offset!r}; use keyset paging")


def _row_id(row: object) -> str | None:
    if isinstance(row, Mapping) and row.get("id") is not None:
        return str(row.get("id"))
    return None


def check_history_params(*, interval: str | None, fidelity: int | None, start_ts: int | None,
                         end_ts: int | None) -> None:
    """Raise ``InvalidRequest`` for a ``/prices-history`` query the CLOB would reject (see module docstring)."""
    if fidelity is not None and (isinstance(fidelity, bool) or not isinstance(fidelity, int) or fidelity < 1):
        raise InvalidRequest(f"fidelity is a positive number of minutes, got {fidelity!r}")
    if interval is not None:
        if interval not in HISTORY_INTERVALS:
            raise InvalidRequest(f"interval must be one of {sorted(HISTORY_INTERVALS)}, got {interval!r}")
        if start_ts is not None or end_ts is not None:
            raise InvalidRequest("give either interval or startTs/endTs, not both")
        minimum = MIN_FIDELITY.get(interval)
        if minimum is not None and (fidelity is None or fidelity < minimum):
            raise InvalidRequest(f"interval {interval!r} needs fidelity >= {minimum} minutes, got {fidelity!r}")
        return
    if start_ts is None and end_ts is None:
        raise InvalidRequest("give interval or startTs and endTs")
    if start_ts is None or end_ts is None:
        raise InvalidRequest("startTs and endTs go together")
    for name, ts in (("startTs", start_ts), ("endTs", end_ts)):
        if isinstance(ts, bool) or not isinstance(ts, int) or ts < 0:
            raise InvalidRequest(f"{name} must be Unix seconds, got {ts!r}")
        if ts >= 10**11:
            raise InvalidRequest(f"{name}={ts} looks like milliseconds; the CLOB wants seconds")
    if end_ts <= start_ts:
        raise InvalidRequest("endTs must be after startTs")
    if end_ts - start_ts > MAX_HISTORY_WINDOW_S:
        raise InvalidRequest(f"startTs..endTs spans {end_ts - start_ts} s; the CLOB allows at most 15 days")


class PolymarketClient:
    """Read-only Gamma + CLOB client. ``get_*``/``iter_*`` return raw JSON; the nouns (``market``, ``book``, …)
    return parsed domain objects with ``fetched_at = clock.now()``."""

    def __init__(self, http: VenueHTTP, *, clock: Clock | None = None, gamma_url: str = GAMMA_URL,
                 clob_url: str = CLOB_URL) -> None:
        self.http = http
        self.clock = clock or SystemClock()
        self.gamma_url = gamma_url.rstrip("/")
        self.clob_url = clob_url.rstrip("/")

    @classmethod
    def with_transport(cls, transport: httpx.BaseTransport, *, clock: Clock | None = None,
                       **http_options: Any) -> PolymarketClient:
        """A client over ``transport`` (e.g. ``httpx.MockTransport``); ``http_options`` go to ``VenueHTTP``."""
        return cls(VenueHTTP(transport=transport, **http_options), clock=clock)

    # ------------------------------------------------------------------------------------------- Gamma, raw
    def _offset_page(self, path: str, what: str, allowed: Any, limit: int, offset: int,
                     filters: dict[str, Any]) -> list[Any]:
        """One offset page of a Gamma listing (a JSON array)."""
        _check_page(limit, offset)
        _check_filters(filters, allowed, path)
        return _array(self.http.get_json(f"{self.gamma_url}{path}", {"limit": limit, "offset": offset, **filters}),
                      what)

    def _keyset_page(self, path: str, what: str, allowed: Any, limit: int, after_cursor: str | None,
                     filters: dict[str, Any]) -> tuple[list[Any], str | None]:
        """One keyset page of a Gamma listing → (rows, next_cursor or None)."""
        _check_page(limit)
        _check_filters(filters, allowed, f"{path}/keyset")
        return _keyset_body(self.http.get_json(f"{self.gamma_url}{path}/keyset",
                                               {"limit": limit, "after_cursor": after_cursor, **filters}), what)

    def get_markets_page(self, *, limit: int = 100, offset: int = 0, **filters: Any) -> list[Any]:
        """One ``GET /markets`` page (a JSON array). ``filters`` use Gamma's names (``closed=True``, ``order=…``)."""
        return self._offset_page("/markets", "markets", _COMMON_MARKET_FILTERS, limit, offset, filters)

    def get_markets_keyset_page(self, *, limit: int = 100, after_cursor: str | None = None,
                                **filters: Any) -> tuple[list[Any], str | None]:
        """One ``GET /markets/keyset`` page → (rows, next_cursor or None)."""
        return self._keyset_page("/markets", "markets", _COMMON_MARKET_FILTERS, limit, after_cursor, filters)

    def iter_markets(self, *, page_size: int = 100, **filters: Any) -> Iterator[Any]:
        """Every market matching ``filters``: offset pages up to offset 2000, then keyset pages (deduped by id)."""
        yield from self._iter_listing("/markets", "markets", _COMMON_MARKET_FILTERS, page_size, filters)

    def get_market(self, native_id: str, *, include_tag: bool | None = None) -> Any:
        """``GET /markets/{id}`` — ignores the ``closed=false`` listing default, so it is the settlement lookup."""
        return self.http.get_json(f"{self.gamma_url}/markets/{native_id}", {"include_tag": include_tag})

    def get_events_page(self, *, limit: int = 100, offset: int = 0, **filters: Any) -> list[Any]:
        return self._offset_page("/events", "events", _COMMON_EVENT_FILTERS, limit, offset, filters)

    def get_events_keyset_page(self, *, limit: int = 100, after_cursor: str | None = None,
                               **filters: Any) -> tuple[list[Any], str | None]:
        return self._keyset_page("/events", "events", _COMMON_EVENT_FILTERS, limit, after_cursor, filters)

    def iter_events(self, *, page_size: int = 100, **filters: Any) -> Iterator[Any]:
        yield from self._iter_listing("/events", "events", _COMMON_EVENT_FILTERS, page_size, filters)

    def get_event(self, event_id: str) -> Any:
        return self.http.get_json(f"{self.gamma_url}/events/{event_id}")

    def iter_listed_markets(self, *, page_size: int = 100, **filters: Any) -> Iterator[Listed]:
        """``iter_markets``'s markets as ``listing.Listed`` entries — each one's JSON bytes with its
        ``fingerprint.GammaHead`` read, decoded whole only when asked — for a sync that parses only the changed
        ones. A page that cannot be split is decoded as ``iter_markets`` decodes it (its entries have no head)."""
        _check_filters(filters, _COMMON_MARKET_FILTERS, "/markets")
        url = f"{self.gamma_url}/markets"

        def offset_page(offset: int) -> list[Listed]:
            _check_page(page_size, offset)
            response = self.http.get(url, {"limit": page_size, "offset": offset, **filters})
            spans = entries(response.content)
            if spans is None:
                return decoded(_array(decode_json(response), "markets"))
            return listed(spans, gamma_head)

        def keyset_page(cursor: str | None) -> tuple[list[Listed], str | None]:
            _check_page(page_size)
            response = self.http.get(f"{url}/keyset", {"limit": page_size, "after_cursor": cursor, **filters})
            page = keyset_entries(response.content, "markets")
            if page is None:
                rows, cursor = _keyset_body(decode_json(response), "markets")
                return decoded(rows), cursor
            spans, cursor = page
            return listed(spans, gamma_head), parse_keyset_cursor({"next_cursor": cursor})

        yield from _paginate("/markets", offset_page, keyset_page, _listed_id)

    def _iter_listing(self, path: str, key: str, allowed: frozenset[str], page_size: int,
                      filters: Mapping[str, Any]) -> Iterator[Any]:
        _check_filters(filters, allowed, path)
        offset_page = self.get_markets_page if key == "markets" else self.get_events_page
        keyset_page = self.get_markets_keyset_page if key == "markets" else self.get_events_keyset_page
        yield from _paginate(path, lambda offset: offset_page(limit=page_size, offset=offset, **filters),
                             lambda cursor: keyset_page(limit=page_size, after_cursor=cursor, **filters), _row_id)

    # ------------------------------------------------------------------------------------------- CLOB, raw
    def get_book(self, token_id: str) -> Any | None:
        """``GET /book?token_id=`` → raw book, or None for the 404 "No orderbook exists" (closed/unknown token)."""
        try:
            return self.http.get_json(f"{self.clob_url}/book", {"token_id": token_id})
        except VenueHTTPError as exc:
            if exc.status == 404 and is_no_orderbook(exc.venue_message or exc.body):
                return None
            raise

    def get_midpoint(self, token_id: str) -> Any:
        return self.http.get_json(f"{self.clob_url}/midpoint", {"token_id": token_id})

    def get_price(self, token_id: str, side: str) -> Any:
        """``GET /price``: side BUY → best *bid*, SELL → best *ask* (the CLOB's maker-side convention)."""
        if side not in ("BUY", "SELL"):
            raise InvalidRequest(f"side must be BUY or SELL, got {side!r}")
        return self.http.get_json(f"{self.clob_url}/price", {"token_id": token_id, "side": side})

    def get_spread(self, token_id: str) -> Any:
        return self.http.get_json(f"{self.clob_url}/spread", {"token_id": token_id})

    def get_prices_history(self, token_id: str, *, interval: str | None = None, fidelity: int | None = None,
                           start_ts: int | None = None, end_ts: int | None = None) -> Any:
        """``GET /prices-history`` for a **token id** (not a condition id); rules checked before sending."""
        check_history_params(interval=interval, fidelity=fidelity, start_ts=start_ts, end_ts=end_ts)
        return self.http.get_json(f"{self.clob_url}/prices-history", {
            "market": token_id, "interval": interval, "fidelity": fidelity, "startTs": start_ts, "endTs": end_ts,
        })

    def get_clob_market(self, condition_id: str) -> Any:
        """``GET /markets/{condition_id}`` on the CLOB (``tokens[].winner``: the resolution second opinion)."""
        return self.http.get_json(f"{self.clob_url}/markets/{condition_id}")

    # ------------------------------------------------------------------------------------------- parsed
    def market(self, native_id: str) -> VenueMarket:
        """The Gamma market parsed, fetched now."""
        raw = self.get_market(native_id)
        return parse_gamma_market(raw, fetched_at=self.clock.now())

    def market_for_settlement(self, native_id: str) -> VenueMarket:
        """The Gamma market, re-judged with the CLOB's ``winner`` flags when it is closed (second opinion).

        A CLOB 404 leaves the Gamma verdict alone. Costs one extra request for closed markets only.
        """
        raw = self.get_market(native_id)
        fetched_at = self.clock.now()
        vm = parse_gamma_market(raw, fetched_at=fetched_at)
        if not vm.closed or not vm.condition_id:
            return vm
        try:
            clob = parse_clob_market(self.get_clob_market(vm.condition_id))
        except VenueHTTPError as exc:
            if exc.status == 404:
                return vm
            raise
        return parse_gamma_market(raw, fetched_at=fetched_at, clob=clob)

    def markets(self, *, page_size: int = 100, **filters: Any) -> Iterator[VenueMarket | ParseError]:
        """Parsed markets of ``iter_markets``; a malformed row is yielded as its ``ParseError`` (never lost)."""
        for row in self.iter_markets(page_size=page_size, **filters):
            try:
                yield parse_gamma_market(row, fetched_at=self.clock.now())
            except ParseError as exc:
                yield exc

    def event(self, event_id: str) -> GammaEvent:
        return parse_gamma_event(self.get_event(event_id), fetched_at=self.clock.now())

    def book(self, token_id: str) -> OrderBook | None:
        raw = self.get_book(token_id)
        return None if raw is None else parse_book(raw, fetched_at=self.clock.now())

    def midpoint(self, token_id: str) -> Price:
        return parse_midpoint(self.get_midpoint(token_id))

    def price(self, token_id: str, side: str) -> Price:
        return parse_price(self.get_price(token_id, side))

    def clob_market(self, condition_id: str) -> ClobMarket:
        return parse_clob_market(self.get_clob_market(condition_id))

    def prices_history(self, token_id: str, *, interval: str | None = None, fidelity: int | None = None,
                       start: datetime | None = None, end: datetime | None = None) -> list[PricePoint]:
        """Price points of ``token_id``: either an ``interval`` preset or a [start, end] window (≤ 15 days),
        clipped to the window (the CLOB appends a trailing "now" point)."""
        start_ts = int(start.timestamp()) if start is not None else None
        end_ts = int(end.timestamp()) if end is not None else None
        raw = self.get_prices_history(token_id, interval=interval, fidelity=fidelity, start_ts=start_ts,
                                      end_ts=end_ts)
        return parse_prices_history(raw, start=start, end=end)


__all__ = ["CLOB_URL", "GAMMA_URL", "MAX_OFFSET", "PolymarketClient", "check_history_params"]
