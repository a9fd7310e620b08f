"""Executable prices: how a paper order would really fill, and the provenance of that price.

Polymarket orders walk the CLOB book fetched at decision time (asks for a buy, bids for a sell, best level
first), recording the average price paid, the mid and so the slippage; an order larger than the visible depth
is rejected (`insufficient_depth`), never filled at a price the book did not show. Where there is no book the
order fills at the venue's probability and the fill's provenance says why: "venue_probability" (Manifold,
simulations, replays, or no book source at all), "venue_probability:no_book" (the CLOB has no book for the
token: closed or unknown), "venue_probability:book_unavailable" (the fetch failed).

`RoundBooks` is the book source of one decision round: each market's YES book is fetched once, lazily, the
first time any agent trades it, and shared by every agent of the round (the NO book is its complement, as
Polymarket mirrors the two tokens); concurrent agents wanting the same book wait for the one fetch.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from decimal import Decimal

from sqlalchemy import select
from sqlmodel import Session

from arena.domain.book import OrderBook, book_for_outcome, walk_buy, walk_sell
from arena.domain.broker import PricedOrder, QuotePricer
from arena.domain.market import NO, YES, Market, Quote
from arena.errors import RejectedOrder
from arena.money import Money
from arena.store.tables import MarketRow

log = logging.getLogger(__name__)

BookSource = Callable[[str], "OrderBook | None"]  # token id → its book, None when the venue has none


class BookUnavailable(Exception):
    """The book could not be fetched (the venue erred or was unreachable): fall back, and say so."""


class RoundBooks:
    """A decision round's books: `fetch(token)` is called at most once per token for the whole round, lazily
    and thread-safely; a fetch that raises is remembered as unavailable (not retried within the round)."""

    def __init__(self, fetch: BookSource) -> None:
        self._fetch = fetch
        self._lock = threading.Lock()
        self._books: dict[str, Future[OrderBook | None]] = {}
        self.fetches = 0

    def __call__(self, token_id: str) -> OrderBook | None:
        with self._lock:
            fut = self._books.get(token_id)
            mine = fut is None
            if fut is None:
                fut = self._books[token_id] = Future()
                self.fetches += 1
        if mine:  # fetched outside the lock: agents wanting other books are not held up
            try:
                fut.set_result(self._fetch(token_id))
            except Exception as exc:  # noqa: BLE001 - any venue failure means "no book": fall back, with provenance
                log.warning("order book %s unavailable: %s", token_id, exc)
                fut.set_exception(BookUnavailable(f"{type(exc).__name__}: {exc}"))
        return fut.result()


@dataclass
class BookPricer:
    """Walks Polymarket books; everything else (and a market without a book) goes to `fallback`, with the
    reason in the fill's provenance. Only the YES token's book is fetched: the NO book is its complement."""

    fallback: QuotePricer
    books: BookSource
    token_ids: Mapping[str, Mapping[str, str]]  # market id → {YES: token, NO: token}
    fee_rates: Mapping[str, Decimal] = field(default_factory=dict)

    def _book(self, market: Market, outcome: str) -> tuple[OrderBook | None, str]:
        """The book to walk, or None and the provenance of the fallback price."""
        tokens = self.token_ids.get(market.id)
        if market.venue != "polymarket" or not tokens or outcome not in (YES, NO):
            return None, self.fallback.provenance
        token = tokens.get(YES)
        if token is None:
            return None, f"{self.fallback.provenance}:no_book"
        try:
            yes = self.books(token)
        except BookUnavailable:
            return None, f"{self.fallback.provenance}:book_unavailable"
        if yes is None:
            return None, f"{self.fallback.provenance}:no_book"
        return book_for_outcome(yes, outcome), "clob_book"

    def buy(self, market: Market, outcome: str, amount: Money) -> PricedOrder:
        book, provenance = self._book(market, outcome)
        if book is None:
            return replace(self.fallback.buy(market, outcome, amount), provenance=provenance)
        ex = walk_buy(book, amount, fee_rate=self.fee_rates.get(market.id, Decimal(0)))
        if ex.shares <= 0 or ex.price is None:
            raise RejectedOrder(f"{amount} buys no shares on the book of {market.id}", reason="too_small")
        return PricedOrder(ex.shares, ex.cash, ex.price, ex.mid, provenance)

    def sell(self, market: Market, outcome: str, shares: int) -> PricedOrder:
        book, provenance = self._book(market, outcome)
        if book is None:
            return replace(self.fallback.sell(market, outcome, shares), provenance=provenance)
        ex = walk_sell(book, shares, fee_rate=self.fee_rates.get(market.id, Decimal(0)))
        if ex.price is None:
            raise RejectedOrder(f"no bids for {market.id} {outcome}", reason="no_bids")
        return PricedOrder(ex.shares, ex.cash, ex.price, ex.mid, provenance)


def pricer_for(session: Session, markets: Mapping[str, Market], quotes: Mapping[str, Quote],
               books: BookSource | None = None) -> QuotePricer | BookPricer:
    """The pricer for one decision: book-walking for Polymarket when a book source is given."""
    fallback = QuotePricer(quotes)
    if books is None:
        return fallback
    pm = [mid for mid, m in markets.items() if m.venue == "polymarket"]
    rows = session.execute(select(MarketRow.id, MarketRow.extra).where(MarketRow.id.in_(pm))).all() if pm else []  # type: ignore[attr-defined]
    tokens = {mid: (extra or {}).get("token_ids", {}) for mid, extra in rows}
    fees = {}
    for mid, extra in rows:
        rate = (extra or {}).get("fee_rate") or ""
        try:
            fees[mid] = Decimal(rate) if rate else Decimal(0)
        except ArithmeticError:
            fees[mid] = Decimal(0)
    return BookPricer(fallback, books, tokens, fees)
