"""Executable prices: how a paper order would really fill, and the provenance of that price.

Polymarket orders walk the CLOB book fetched at decision time (asks for a buy, bids for a sell, best level
first), recording the average price paid, the mid and so the slippage; an order larger than the visible depth
is rejected (`insufficient_depth`), never filled at a price the book did not show. Where there is no book the
order fills at the venue's probability and the fill's provenance says why: "venue_probability" (Manifold,
simulations, replays, or no book source at all), "venue_probability:no_book" (the CLOB has no book for the
token: closed or unknown), "venue_probability:book_unavailable" (the fetch failed).

Replays have no book, but a replay file may record each day's best bid and ask (`arena.venues.replay`): an order
on a replay market whose quote has them walks a one-level book at the recorded ask (buy) or bid (sell), of
unbounded depth since the file records no sizes, with the venue's fee rule (the record's `fee_rate`, Polymarket's
rate × min(p, 1 − p)), and records the day's recorded price as the mid, so the fill's slippage is ask − p
(provenance "recorded_quote"). A quote recording only the other side fills at the probability,
"venue_probability:one_sided_quote"; a replay without quotes fills exactly as before.

`RoundBooks` is the book source of one decision round: each market's YES book is fetched once, lazily, the
first time any agent trades it, and shared by every agent of the round (the NO book is its complement, as
Polymarket mirrors the two tokens); concurrent agents wanting the same book wait for the one fetch.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from decimal import Decimal

from sqlalchemy import select
from sqlmodel import Session, col

from arena.domain.book import Level, OrderBook, book_for_outcome, walk_buy, walk_sell
from arena.domain.broker import Pricer, PricedOrder, QuotePricer
from arena.domain.market import NO, YES, Market, Quote
from arena.errors import RejectedOrder
from arena.money import MICRO, Money
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


# The recorded quote's size is unknown: the one level is deep enough for any stake the rules allow.
RECORDED_DEPTH = 10**18  # micro-shares


@dataclass
class RecordedQuotePricer:
    """Replay markets whose quote recorded a best bid/ask: walk a one-level book at it, the recorded price as
    the mid. Every other market (and a replay market without a recorded quote) goes to `inner`, unchanged."""

    inner: Pricer
    quotes: Mapping[str, Quote]
    fee_rates: Mapping[str, Decimal] = field(default_factory=dict)
    provenance: str = "recorded_quote"

    def _quote(self, market: Market, outcome: str) -> Quote | None:
        q = self.quotes.get(market.id)
        if market.venue != "replay" or outcome not in (YES, NO) or q is None or (q.bid is None and q.ask is None):
            return None
        return q

    def _book(self, q: Quote, outcome: str) -> OrderBook:
        yes = OrderBook.of(bids=[Level(q.bid, RECORDED_DEPTH)] if q.bid is not None else [],
                           asks=[Level(q.ask, RECORDED_DEPTH)] if q.ask is not None else [])
        return book_for_outcome(yes, outcome)

    def buy(self, market: Market, outcome: str, amount: Money) -> PricedOrder:
        q = self._quote(market, outcome)
        if q is None:
            return self.inner.buy(market, outcome, amount)
        book = self._book(q, outcome)
        if book.best_ask is None:
            return replace(self.inner.buy(market, outcome, amount), provenance="venue_probability:one_sided_quote")
        if book.best_ask.ppm in (0, MICRO):
            raise RejectedOrder(f"{market.id} {outcome} is offered at {book.best_ask}: nothing to buy",
                                reason="untradable_price", market_id=market.id)
        ex = walk_buy(book, amount, fee_rate=self.fee_rates.get(market.id, Decimal(0)))
        if ex.shares <= 0 or ex.price is None:
            raise RejectedOrder(f"{amount} buys no shares at {book.best_ask}", reason="too_small",
                                market_id=market.id)
        return PricedOrder(ex.shares, ex.cash, ex.price, q.price(outcome), self.provenance)

    def sell(self, market: Market, outcome: str, shares: int) -> PricedOrder:
        q = self._quote(market, outcome)
        if q is None:
            return self.inner.sell(market, outcome, shares)
        book = self._book(q, outcome)
        if book.best_bid is None:
            return replace(self.inner.sell(market, outcome, shares), provenance="venue_probability:one_sided_quote")
        ex = walk_sell(book, shares, fee_rate=self.fee_rates.get(market.id, Decimal(0)))
        if ex.price is None:
            raise RejectedOrder(f"no bid for {market.id} {outcome}", reason="no_bids", market_id=market.id)
        return PricedOrder(ex.shares, ex.cash, ex.price, q.price(outcome), self.provenance)


def _fee_rates(rows: Iterable[tuple[str, Mapping | None]]) -> dict[str, Decimal]:
    fees = {}
    for mid, extra in rows:
        rate = (extra or {}).get("fee_rate") or ""
        try:
            fees[mid] = Decimal(rate) if rate else Decimal(0)
        except ArithmeticError:
            fees[mid] = Decimal(0)
    return fees


def pricer_for(session: Session, markets: Mapping[str, Market], quotes: Mapping[str, Quote],
               books: BookSource | None = None) -> Pricer:
    """The pricer for one decision: book-walking for Polymarket when a book source is given, and a one-level
    book at the recorded bid/ask for replay markets whose quote has one."""
    pricer: Pricer = QuotePricer(quotes)
    if books is not None:
        pm = [mid for mid, m in markets.items() if m.venue == "polymarket"]
        rows = session.execute(select(MarketRow.id, MarketRow.extra).where(col(MarketRow.id).in_(pm))).all() if pm else []
        tokens = {mid: (extra or {}).get("token_ids", {}) for mid, extra in rows}
        pricer = BookPricer(QuotePricer(quotes), books, tokens, _fee_rates(rows))
    quoted = [mid for mid, m in markets.items() if m.venue == "replay" and (q := quotes.get(mid)) is not None
              and (q.bid is not None or q.ask is not None)]
    if not quoted:
        return pricer
    rows = session.execute(select(MarketRow.id, MarketRow.extra).where(col(MarketRow.id).in_(quoted))).all()
    return RecordedQuotePricer(pricer, quotes, _fee_rates(rows))
