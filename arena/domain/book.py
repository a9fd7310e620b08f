"""Order books and walking them for paper fills (pure; imports no httpx and reads no clock).

Owns ``OrderBook`` (price levels of one outcome token), ``walk_buy`` / ``walk_sell`` and their ``Execution``.

Units: prices are ``Price`` (ppm of $1 per share); sizes and executed shares are **micro-shares** (int);
cash is ``Money`` (micro-USD).

Rounding (never creates money): each level contributes exactly ``shares × price``; the total is rounded once,
**up** for what a buyer pays and **down** for what a seller receives. Shares bought at a level are the floor of
what the remaining stake affords, so ``cost ≤ stake`` always.

Depth rule: a buy that the visible asks cannot absorb (or a sell the bids cannot) is **rejected** with
``InsufficientDepth`` (a ``RejectedOrder`` carrying the would-be partial ``Execution``), unless the caller
passes ``allow_partial=True``; then the visible depth is taken and ``Execution.complete`` is False.

Fees: Polymarket's taker fee is ``fee_rate × min(p, 1 − p) × shares`` per level (default rate 0). A buy's fee
is paid out of the stake (cost + fee ≤ stake); a sell's fee is deducted from the proceeds.

NO side of a binary market: Polymarket mirrors every order across the two complementary tokens, so the NO
token's own book and the complement of the YES book (``ask_no = 1 − bid_yes``, ``bid_no = 1 − ask_yes``) are
the same liquidity. Prefer the NO token's fetched book; ``OrderBook.complement()`` / ``book_for_outcome`` derive
it from the YES book when only that one was fetched.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from arena.domain.market import NO, YES
from arena.errors import RejectedOrder
from arena.money import MICRO, Money, Price

# 1 micro-share × 1 ppm = 1e-12 USD; with a fee rate in ppm the finest unit is 1e-18 USD ("atto").
_ATTO_PER_MICRO_USD = MICRO * MICRO


@dataclass(frozen=True, order=True)
class Level:
    """``size`` micro-shares offered at ``price``."""

    price: Price
    size: int

    def __post_init__(self) -> None:
        if not isinstance(self.size, int) or isinstance(self.size, bool) or self.size < 0:
            raise ValueError(f"level size must be a non-negative int of micro-shares, got {self.size!r}")


@dataclass(frozen=True)
class OrderBook:
    """One outcome token's book. ``bids`` best (highest) first, ``asks`` best (lowest) first.

    Build with ``OrderBook.of(...)``, which sorts, merges equal prices and drops empty levels, whatever order
    the venue sent (Polymarket sends both sides worst-first).
    """

    bids: tuple[Level, ...] = ()
    asks: tuple[Level, ...] = ()
    token_id: str = ""
    market: str = ""  # the venue's market key (Polymarket condition id)
    observed_at: datetime | None = None
    tick_size: Price | None = None
    min_order_size: int | None = None  # micro-shares
    last_trade: Price | None = None

    def __post_init__(self) -> None:
        if any(nxt.price >= prev.price for prev, nxt in zip(self.bids, self.bids[1:])):
            raise ValueError("bids must be strictly descending (use OrderBook.of)")
        if any(nxt.price <= prev.price for prev, nxt in zip(self.asks, self.asks[1:])):
            raise ValueError("asks must be strictly ascending (use OrderBook.of)")
        if any(lv.size == 0 for lv in self.bids + self.asks):
            raise ValueError("empty levels are not kept (use OrderBook.of)")

    @classmethod
    def of(cls, bids: Iterable[Level | tuple[Price, int]], asks: Iterable[Level | tuple[Price, int]],
           **kw: object) -> OrderBook:
        bids_sorted = _merge(bids, best_high=True)
        asks_sorted = _merge(asks, best_high=False)
        return cls(bids=bids_sorted, asks=asks_sorted, **kw)  # type: ignore[arg-type]

    @property
    def best_bid(self) -> Price | None:
        return self.bids[0].price if self.bids else None

    @property
    def best_ask(self) -> Price | None:
        return self.asks[0].price if self.asks else None

    @property
    def mid(self) -> Price | None:
        """(best bid + best ask) / 2, rounded down to a ppm; None when either side is empty."""
        if not self.bids or not self.asks:
            return None
        return Price((self.bids[0].price.ppm + self.asks[0].price.ppm) // 2)

    @property
    def spread(self) -> int | None:
        """best ask − best bid in ppm (negative if crossed); None when a side is empty."""
        if not self.bids or not self.asks:
            return None
        return self.asks[0].price.ppm - self.bids[0].price.ppm

    def depth(self, side: str) -> int:
        """Total micro-shares on ``side`` ("bids" or "asks")."""
        return sum(lv.size for lv in getattr(self, side))

    def complement(self, token_id: str = "") -> OrderBook:
        """The complementary outcome's book: its asks are 1 − our bids, its bids are 1 − our asks."""
        return OrderBook.of(
            bids=[Level(lv.price.complement(), lv.size) for lv in self.asks],
            asks=[Level(lv.price.complement(), lv.size) for lv in self.bids],
            token_id=token_id, market=self.market, observed_at=self.observed_at, tick_size=self.tick_size,
            min_order_size=self.min_order_size,
            last_trade=self.last_trade.complement() if self.last_trade is not None else None,
        )


def book_for_outcome(yes_book: OrderBook, outcome: str, no_book: OrderBook | None = None) -> OrderBook:
    """The book to walk for ``outcome`` of a binary market: YES's own, NO's own if fetched, else YES complemented."""
    if outcome == YES:
        return yes_book
    if outcome == NO:
        return no_book if no_book is not None else yes_book.complement()
    raise ValueError(f"outcome must be {YES} or {NO}, got {outcome!r}")


def _merge(levels: Iterable[Level | tuple[Price, int]], *, best_high: bool) -> tuple[Level, ...]:
    sizes: dict[Price, int] = {}
    for lv in levels:
        price, size = (lv.price, lv.size) if isinstance(lv, Level) else lv
        if not isinstance(price, Price):
            raise ValueError(f"level price must be a Price, got {price!r}")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ValueError(f"level size must be a non-negative int of micro-shares, got {size!r}")
        if size:
            sizes[price] = sizes.get(price, 0) + size
    ordered = sorted(sizes.items(), key=lambda kv: kv[0].ppm, reverse=best_high)
    return tuple(Level(p, s) for p, s in ordered)


@dataclass(frozen=True)
class Execution:
    """A simulated taker fill.

    ``side``: "buy" or "sell". ``shares``: micro-shares bought/sold (floored). ``cash``: Money paid (buy, fee
    included, never more than the stake) or received (sell, fee deducted). ``fee``: Money, part of ``cash``.
    ``avg_price``: exact average price per share before fees (Decimal in [0, 1]); ``price`` the same quantized
    to a ``Price``. ``mid``: the book's mid before the walk. ``slippage``: how much worse than mid the average
    was, per share (avg − mid for a buy, mid − avg for a sell; Decimal, positive = worse). ``levels``: the
    (price, micro-shares) taken from each level. ``complete``: the whole stake (buy) or all shares (sell) were
    executed; False only for an ``allow_partial`` walk that ran out of depth.
    """

    side: str
    shares: int
    cash: Money
    fee: Money
    avg_price: Decimal | None
    mid: Price | None
    levels: tuple[Level, ...]
    complete: bool
    requested_cash: Money | None = None
    requested_shares: int | None = None
    reason: str = ""

    @property
    def cost(self) -> Money:
        """What a buy paid (fee included)."""
        if self.side != "buy":
            raise AttributeError("cost is defined for buys; use proceeds for a sell")
        return self.cash

    @property
    def proceeds(self) -> Money:
        """What a sell received (fee deducted)."""
        if self.side != "sell":
            raise AttributeError("proceeds are defined for sells; use cost for a buy")
        return self.cash

    @property
    def price(self) -> Price | None:
        """The average price quantized to a ppm (half-even); None when nothing executed."""
        return None if self.avg_price is None else Price.of(self.avg_price)

    @property
    def slippage(self) -> Decimal | None:
        if self.avg_price is None or self.mid is None:
            return None
        diff = self.avg_price - self.mid.to_decimal()
        return diff if self.side == "buy" else -diff

    @property
    def levels_used(self) -> int:
        return len(self.levels)


class InsufficientDepth(RejectedOrder):
    """The visible book cannot fill the whole order. ``execution`` is what ``allow_partial=True`` would give."""

    reason = "insufficient_depth"

    def __init__(self, message: str, execution: Execution) -> None:
        super().__init__(message, shares=execution.shares, cash=str(execution.cash))
        self.execution = execution


def _fee_rate_ppm(fee_rate: Decimal | int | str) -> int:
    rate = Decimal(str(fee_rate))
    if not Decimal(0) <= rate <= Decimal(1):
        raise ValueError(f"fee rate must be in [0, 1], got {fee_rate!r}")
    scaled = rate * MICRO
    if scaled != scaled.to_integral_value():
        raise ValueError(f"fee rate more precise than 1e-6: {fee_rate!r}")
    return int(scaled)


def _fee_per_micro_share(price: Price, rate_ppm: int) -> int:
    """Fee per micro-share at ``price`` in 1e-18 USD: rate × min(p, 1 − p)."""
    return rate_ppm * min(price.ppm, MICRO - price.ppm)


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def walk_buy(book: OrderBook, amount: Money, *, allow_partial: bool = False,
             fee_rate: Decimal | int | str = 0) -> Execution:
    """Spend up to ``amount`` (micro-USD) on the asks, best first.

    Raises ``RejectedOrder`` for a non-positive amount and ``InsufficientDepth`` when the asks run out before
    the stake does (unless ``allow_partial``).
    """
    if amount.micros <= 0:
        raise RejectedOrder(f"stake must be positive, got {amount}", reason="bad_amount")
    rate_ppm = _fee_rate_ppm(fee_rate)
    budget = amount.micros * _ATTO_PER_MICRO_USD  # in 1e-18 USD
    remaining = budget
    shares = 0
    notional = 0  # Σ shares × price, in 1e-12 USD
    fees = 0  # in 1e-18 USD
    taken: list[Level] = []
    complete = False
    for level in book.asks:
        if level.price.ppm == 0:
            continue  # a zero ask is not a real offer; skip rather than divide by zero
        fee_unit = _fee_per_micro_share(level.price, rate_ppm)
        unit = level.price.ppm * MICRO + fee_unit  # cost of one micro-share incl. fee, 1e-18 USD
        affordable = remaining // unit
        take = min(level.size, affordable)
        if take:
            taken.append(Level(level.price, take))
            shares += take
            notional += take * level.price.ppm
            fees += take * fee_unit
            remaining -= take * unit
        if affordable <= level.size:  # the stake is spent at this level
            complete = True
            break
    else:
        # every level taken whole: complete only if the leftover could not buy a micro-share anyway
        last = taken[-1].price if taken else None
        complete = last is not None and remaining < last.ppm * MICRO + _fee_per_micro_share(last, rate_ppm)
    spent = budget - remaining
    cash = Money(_ceil_div(spent, _ATTO_PER_MICRO_USD))
    fee = Money(_ceil_div(fees, _ATTO_PER_MICRO_USD)) if fees else Money(0)
    if fee > cash:
        fee = cash
    execution = Execution(
        side="buy", shares=shares, cash=cash, fee=fee,
        avg_price=(Decimal(notional) / shares / MICRO) if shares else None,
        mid=book.mid, levels=tuple(taken), complete=complete, requested_cash=amount,
        reason="" if complete else ("empty_book" if not book.asks else "insufficient_depth"),
    )
    if not complete and not allow_partial:
        raise InsufficientDepth(
            f"asks hold {book.depth('asks')} micro-shares; the stake of {amount} buys only {shares} "
            f"for {cash}", execution)
    return execution


def walk_sell(book: OrderBook, shares: int, *, allow_partial: bool = False,
              fee_rate: Decimal | int | str = 0) -> Execution:
    """Sell ``shares`` micro-shares into the bids, best first.

    Raises ``RejectedOrder`` for a non-positive quantity and ``InsufficientDepth`` when the bids hold fewer
    shares (unless ``allow_partial``).
    """
    if not isinstance(shares, int) or isinstance(shares, bool) or shares <= 0:
        raise RejectedOrder(f"shares to sell must be a positive int of micro-shares, got {shares!r}",
                            reason="bad_amount")
    rate_ppm = _fee_rate_ppm(fee_rate)
    remaining = shares
    gross = 0  # 1e-18 USD
    fees = 0  # 1e-18 USD
    notional = 0  # 1e-12 USD
    taken: list[Level] = []
    for level in book.bids:
        if remaining == 0:
            break
        take = min(level.size, remaining)
        fee_unit = _fee_per_micro_share(level.price, rate_ppm)
        taken.append(Level(level.price, take))
        notional += take * level.price.ppm
        gross += take * level.price.ppm * MICRO
        fees += take * fee_unit
        remaining -= take
    sold = shares - remaining
    complete = remaining == 0
    net = max(0, gross - fees)
    execution = Execution(
        side="sell", shares=sold, cash=Money(net // _ATTO_PER_MICRO_USD),
        fee=Money(_ceil_div(fees, _ATTO_PER_MICRO_USD)) if fees else Money(0),
        avg_price=(Decimal(notional) / sold / MICRO) if sold else None,
        mid=book.mid, levels=tuple(taken), complete=complete, requested_shares=shares,
        reason="" if complete else ("empty_book" if not book.bids else "insufficient_depth"),
    )
    if not complete and not allow_partial:
        raise InsufficientDepth(
            f"bids hold {book.depth('bids')} micro-shares; cannot sell {shares}", execution)
    return execution


def taker_fee(price: Price, shares: int, fee_rate: Decimal | int | str) -> Money:
    """Polymarket's taker fee for ``shares`` micro-shares at ``price``: rate × min(p, 1 − p) × shares, rounded up."""
    return Money(_ceil_div(shares * _fee_per_micro_share(price, _fee_rate_ppm(fee_rate)), _ATTO_PER_MICRO_USD))


__all__ = [
    "Execution",
    "InsufficientDepth",
    "Level",
    "OrderBook",
    "book_for_outcome",
    "taker_fee",
    "walk_buy",
    "walk_sell",
]
