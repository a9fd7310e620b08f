"""Executable prices: how a paper order would really fill, and the provenance of that price.

Polymarket orders walk the CLOB book fetched at decision time (asks for a buy, bids for a sell, best level
first), recording the average price paid, the mid and so the slippage; an order larger than the visible depth
is rejected (`insufficient_depth`), never filled at a price the book did not show. Where there is no book
(Manifold, simulations, replays, a closed Polymarket book) the order fills at the venue's probability and the
fill says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from sqlalchemy import select
from sqlmodel import Session

from arena.domain.book import OrderBook, book_for_outcome, walk_buy, walk_sell
from arena.domain.broker import PricedOrder, QuotePricer
from arena.domain.market import NO, YES, Market, Quote
from arena.errors import RejectedOrder
from arena.money import Money
from arena.store.tables import MarketRow

BookSource = Callable[[str], "OrderBook | None"]  # token id → its book, None when the venue has none


@dataclass
class BookPricer:
    """Walks Polymarket books; everything else (and a market without a book) goes to `fallback`."""

    fallback: QuotePricer
    books: BookSource
    token_ids: Mapping[str, Mapping[str, str]]  # market id → {YES: token, NO: token}
    fee_rates: Mapping[str, Decimal] = field(default_factory=dict)
    _cache: dict[str, OrderBook | None] = field(default_factory=dict)

    def _book(self, market: Market, outcome: str) -> OrderBook | None:
        tokens = self.token_ids.get(market.id)
        if market.venue != "polymarket" or not tokens or outcome not in (YES, NO):
            return None
        token = tokens.get(outcome)
        if token is not None:
            if token not in self._cache:
                self._cache[token] = self.books(token)
            if self._cache[token] is not None:
                return self._cache[token]
        yes = tokens.get(YES)
        if outcome == NO and yes is not None:  # derive the NO book from the YES book (Polymarket mirrors them)
            if yes not in self._cache:
                self._cache[yes] = self.books(yes)
            if self._cache[yes] is not None:
                return book_for_outcome(self._cache[yes], NO)  # type: ignore[arg-type]
        return None

    def buy(self, market: Market, outcome: str, amount: Money) -> PricedOrder:
        book = self._book(market, outcome)
        if book is None:
            return self.fallback.buy(market, outcome, amount)
        ex = walk_buy(book, amount, fee_rate=self.fee_rates.get(market.id, Decimal(0)))
        if ex.shares <= 0 or ex.price is None:
            raise RejectedOrder(f"{amount} buys no shares on the book of {market.id}", reason="too_small")
        return PricedOrder(ex.shares, ex.cash, ex.price, ex.mid, "clob_book")

    def sell(self, market: Market, outcome: str, shares: int) -> PricedOrder:
        book = self._book(market, outcome)
        if book is None:
            return self.fallback.sell(market, outcome, shares)
        ex = walk_sell(book, shares, fee_rate=self.fee_rates.get(market.id, Decimal(0)))
        if ex.price is None:
            raise RejectedOrder(f"no bids for {market.id} {outcome}", reason="no_bids")
        return PricedOrder(ex.shares, ex.cash, ex.price, ex.mid, "clob_book")


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
