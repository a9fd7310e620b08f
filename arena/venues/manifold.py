"""Manifold client: fetches raw JSON from API v0 (``https://api.manifold.markets/v0``).

Owns request shapes and paging only; parsing lives in ``manifold_parse`` (the convenience methods at the
bottom call it with the injected clock's ``now()`` as ``fetched_at``). Transport policy lives in
``http.VenueHTTP`` (default limit 400 requests/min, under Manifold's 500/min per IP).

Every v0 query schema is strict (an unknown parameter → 400), so each method takes exactly the parameters
its endpoint lists, under Pythonic names mapped to Manifold's camelCase, and sends nothing else (None values
are dropped). Paging:

- ``/markets``: ``before=<id of the last market of the previous page>``; the walk ends on an empty page.
- ``/bets``: ``order=asc`` with ``after=<id of the last bet>``; ``limit`` ≤ 1000 (the docs' maximum — the
  code allows 10,000 — we stay with the documented bound). The server turns the cursor into a
  ``createdTime`` bound and can skip bets sharing that millisecond; pages are deduplicated by id, and
  ``probability_history`` tolerates overlap.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import httpx

from arena.clock import Clock, SystemClock
from arena.errors import ParseError
from arena.money import Price
from arena.venues import PricePoint
from arena.venues.http import InvalidRequest, VenueHTTP
from arena.venues.manifold_parse import (
    MarketsPage,
    VenueMarket,
    parse_bets,
    parse_manifold_market,
    parse_manifold_markets,
    parse_market_prob,
    parse_market_probs,
    probability_history,
)

MANIFOLD_URL = "https://api.manifold.markets/v0"
MAX_MARKETS_LIMIT = 1000
MAX_BETS_LIMIT = 1000
MAX_SEARCH_OFFSET = 1000
MAX_PROBS_IDS = 100
MARKET_SORTS = frozenset({"created-time", "updated-time", "last-bet-time", "last-comment-time"})
ORDERS = frozenset({"asc", "desc"})


def _limit(limit: int, maximum: int, name: str = "limit", minimum: int = 1) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not minimum <= limit <= maximum:
        raise InvalidRequest(f"{name} must be an int in [{minimum}, {maximum}], got {limit!r}")
    return limit


def _list(body: object, what: str) -> list[Any]:
    if not isinstance(body, list):
        raise ParseError(f"expected an array, got {type(body).__name__}", field=what)
    return body


class ManifoldClient:
    """Read-only Manifold v0 client. ``get_*``/``iter_*``/``search_markets`` return raw JSON; ``market``,
    ``markets_page``, ``probability_history`` … return parsed objects with ``fetched_at = clock.now()``."""

    def __init__(self, http: VenueHTTP, *, clock: Clock | None = None, base_url: str = MANIFOLD_URL) -> None:
        self.http = http
        self.clock = clock or SystemClock()
        self.base_url = base_url.rstrip("/")

    @classmethod
    def with_transport(cls, transport: httpx.BaseTransport, *, clock: Clock | None = None,
                       **http_options: Any) -> ManifoldClient:
        return cls(VenueHTTP(transport=transport, **http_options), clock=clock)

    # ------------------------------------------------------------------------------------------- raw
    def get_markets_page(self, *, limit: int = 500, sort: str | None = None, order: str | None = None,
                         before: str | None = None, user_id: str | None = None,
                         group_id: str | None = None) -> list[Any]:
        """``GET /v0/markets`` (LiteMarkets, newest first by default)."""
        _limit(limit, MAX_MARKETS_LIMIT, minimum=0)
        if sort is not None and sort not in MARKET_SORTS:
            raise InvalidRequest(f"sort must be one of {sorted(MARKET_SORTS)}, got {sort!r}")
        if order is not None and order not in ORDERS:
            raise InvalidRequest(f"order must be asc or desc, got {order!r}")
        body = self.http.get_json(f"{self.base_url}/markets", {
            "limit": limit, "sort": sort, "order": order, "before": before, "userId": user_id,
            "groupId": group_id,
        })
        return _list(body, "markets")

    def iter_markets(self, *, page_size: int = 500, sort: str | None = None, order: str | None = None,
                     user_id: str | None = None, group_id: str | None = None,
                     max_pages: int | None = None) -> Iterator[Any]:
        """Every market, page by page with ``before=<last id>``, until an empty page (or ``max_pages``)."""
        before: str | None = None
        pages = 0
        seen: set[str] = set()
        while max_pages is None or pages < max_pages:
            rows = self.get_markets_page(limit=page_size, sort=sort, order=order, before=before,
                                         user_id=user_id, group_id=group_id)
            pages += 1
            if not rows:
                return
            last = rows[-1].get("id") if isinstance(rows[-1], Mapping) else None
            if not isinstance(last, str) or not last:
                raise ParseError("the last market of a page has no id to page from", field="id")
            for row in rows:
                rid = row.get("id") if isinstance(row, Mapping) else None
                if isinstance(rid, str):
                    if rid in seen:
                        continue
                    seen.add(rid)
                yield row
            if last == before:
                raise ParseError(f"before={last!r} did not advance", field="id")
            before = last

    def search_markets(self, term: str = "", *, sort: str | None = None, filter: str | None = None,
                       contract_type: str | None = None, topic_slug: str | None = None,
                       creator_id: str | None = None, limit: int = 100, offset: int | None = None,
                       before_time: int | None = None, liquidity: int | None = None, token: str | None = None,
                       include_lite_answers: bool | None = None) -> list[Any]:
        """``GET /v0/search-markets``. ``before_time`` (ms) is a cursor valid only with ``sort="newest"``."""
        _limit(limit, MAX_MARKETS_LIMIT)
        if offset is not None:
            _limit(offset, MAX_SEARCH_OFFSET, "offset", minimum=0)
        if before_time is not None and sort != "newest":
            raise InvalidRequest("beforeTime only works with sort=newest")
        body = self.http.get_json(f"{self.base_url}/search-markets", {
            "term": term, "sort": sort, "filter": filter, "contractType": contract_type, "topicSlug": topic_slug,
            "creatorId": creator_id, "limit": limit, "offset": offset, "beforeTime": before_time,
            "liquidity": liquidity, "token": token, "includeLiteAnswers": include_lite_answers,
        })
        return _list(body, "markets")

    def get_market(self, contract_id: str) -> Any:
        """``GET /v0/market/{id}`` (FullMarket, with ``answers`` for multiple choice)."""
        return self.http.get_json(f"{self.base_url}/market/{contract_id}")

    def get_market_by_slug(self, slug: str) -> Any:
        return self.http.get_json(f"{self.base_url}/slug/{slug}")

    def get_market_prob(self, contract_id: str) -> Any:
        return self.http.get_json(f"{self.base_url}/market/{contract_id}/prob")

    def get_market_probs(self, contract_ids: Sequence[str]) -> Any:
        """``GET /v0/market-probs?ids=…`` for at most 100 ids."""
        ids = list(contract_ids)
        if not 1 <= len(ids) <= MAX_PROBS_IDS:
            raise InvalidRequest(f"market-probs takes 1..{MAX_PROBS_IDS} ids, got {len(ids)}")
        return self.http.get_json(f"{self.base_url}/market-probs", {"ids": ids})

    def get_bets_page(self, *, contract_id: str | None = None, contract_slug: str | None = None,
                      user_id: str | None = None, username: str | None = None, answer_id: str | None = None,
                      limit: int = MAX_BETS_LIMIT, before: str | None = None, after: str | None = None,
                      before_time: int | None = None, after_time: int | None = None,
                      order: str | None = "asc", kinds: str | None = None,
                      min_amount: float | None = None) -> list[Any]:
        """``GET /v0/bets``. Defaults to ascending order (oldest first), for ``after=`` paging."""
        _limit(limit, MAX_BETS_LIMIT)
        if order is not None and order not in ORDERS:
            raise InvalidRequest(f"order must be asc or desc, got {order!r}")
        if before is not None and after is not None:
            raise InvalidRequest("give before or after, not both")
        body = self.http.get_json(f"{self.base_url}/bets", {
            "contractId": contract_id, "contractSlug": contract_slug, "userId": user_id, "username": username,
            "answerId": answer_id, "limit": limit, "before": before, "after": after, "beforeTime": before_time,
            "afterTime": after_time, "order": order, "kinds": kinds, "minAmount": min_amount,
        })
        return _list(body, "bets")

    def iter_bets(self, contract_id: str, *, answer_id: str | None = None, page_size: int = MAX_BETS_LIMIT,
                  max_pages: int | None = None) -> Iterator[Any]:
        """All bets on a contract, oldest first, via ``after=<last bet id>`` until an empty page."""
        after: str | None = None
        pages = 0
        seen: set[str] = set()
        while max_pages is None or pages < max_pages:
            rows = self.get_bets_page(contract_id=contract_id, answer_id=answer_id, limit=page_size,
                                      after=after, order="asc")
            pages += 1
            if not rows:
                return
            fresh = 0
            for row in rows:
                rid = row.get("id") if isinstance(row, Mapping) else None
                if isinstance(rid, str):
                    if rid in seen:
                        continue
                    seen.add(rid)
                fresh += 1
                yield row
            last = rows[-1].get("id") if isinstance(rows[-1], Mapping) else None
            if not isinstance(last, str) or not last:
                raise ParseError("the last bet of a page has no id to page from", field="id")
            if fresh == 0:
                return  # only repeats: the cursor is not advancing
            after = last

    # ------------------------------------------------------------------------------------------- parsed
    def market(self, contract_id: str) -> VenueMarket:
        """The FullMarket parsed (raises ``UnsupportedMarket`` for polls, stonks, …)."""
        raw = self.get_market(contract_id)
        return parse_manifold_market(raw, fetched_at=self.clock.now())

    def markets_page(self, *, limit: int = 500, before: str | None = None, sort: str | None = None) -> MarketsPage:
        raw = self.get_markets_page(limit=limit, before=before, sort=sort)
        return parse_manifold_markets(raw, fetched_at=self.clock.now())

    def prob(self, contract_id: str) -> Price | dict[str, Price]:
        return parse_market_prob(self.get_market_prob(contract_id))

    def probs(self, contract_ids: Sequence[str]) -> dict[str, Price | dict[str, Price]]:
        return parse_market_probs(self.get_market_probs(contract_ids))

    def probability_history(self, contract_id: str, *, answer_id: str | None = None,
                            max_pages: int | None = 50) -> list[PricePoint]:
        """P(YES) (or of ``answer_id``) over time from the contract's bets (capped at ``max_pages`` pages)."""
        rows = list(self.iter_bets(contract_id, answer_id=answer_id, max_pages=max_pages))
        return probability_history(parse_bets(rows), answer_id=answer_id)


__all__ = ["MANIFOLD_URL", "ManifoldClient"]
