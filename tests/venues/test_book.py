"""Order book walks with hand-computed numbers, the depth rule, fees, the NO side, and money-safety properties."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.domain.book import (
    InsufficientDepth,
    Level,
    OrderBook,
    book_for_outcome,
    taker_fee,
    walk_buy,
    walk_sell,
)
from arena.domain.market import NO, YES
from arena.errors import RejectedOrder
from arena.money import MICRO, Money, Price
from arena.venues import polymarket_parse as pp

SH = MICRO  # micro-shares per share


def p(x: str) -> Price:
    return Price.of(x)


@pytest.fixture
def book() -> OrderBook:
    # deliberately given worst-first, as the CLOB sends it
    return OrderBook.of(
        bids=[(p("0.30"), 100 * SH), (p("0.35"), 50 * SH)],
        asks=[(p("0.50"), 200 * SH), (p("0.40"), 100 * SH)],
    )


def test_levels_are_sorted_best_first_and_merged():
    b = OrderBook.of(bids=[(p("0.1"), 5), (p("0.3"), 1), (p("0.1"), 5), (p("0.2"), 0)],
                     asks=[(p("0.9"), 1), (p("0.6"), 2)])
    assert b.bids == (Level(p("0.3"), 1), Level(p("0.1"), 10))
    assert b.asks == (Level(p("0.6"), 2), Level(p("0.9"), 1))
    with pytest.raises(ValueError):
        OrderBook(bids=(Level(p("0.1"), 1), Level(p("0.3"), 1)))


def test_mid_spread_depth(book):
    assert book.best_bid == p("0.35") and book.best_ask == p("0.40")
    assert book.mid == p("0.375") and book.spread == 50_000
    assert book.depth("asks") == 300 * SH


def test_buy_within_first_level(book):
    ex = walk_buy(book, Money.of("30"))
    assert ex.shares == 75 * SH and ex.cost == Money.of("30") and ex.fee == Money(0)
    assert ex.avg_price == Decimal("0.4") and ex.price == p("0.4")
    assert ex.mid == p("0.375") and ex.slippage == Decimal("0.025")
    assert ex.levels == (Level(p("0.40"), 75 * SH),) and ex.levels_used == 1
    assert ex.complete and ex.reason == ""


def test_buy_across_two_levels(book):
    ex = walk_buy(book, Money.of("100"))
    # 100 shares at 0.40 = $40, then $60 / 0.50 = 120 shares
    assert ex.shares == 220 * SH and ex.cost == Money.of("100")
    assert ex.levels == (Level(p("0.40"), 100 * SH), Level(p("0.50"), 120 * SH))
    assert ex.avg_price == Decimal(100) / Decimal(220)
    assert ex.complete


def test_buy_larger_than_depth_is_rejected_unless_partial(book):
    with pytest.raises(InsufficientDepth) as info:
        walk_buy(book, Money.of("200"))
    assert isinstance(info.value, RejectedOrder) and info.value.reason == "insufficient_depth"
    assert info.value.execution.shares == 300 * SH
    ex = walk_buy(book, Money.of("200"), allow_partial=True)
    assert ex.shares == 300 * SH and ex.cost == Money.of("140") and not ex.complete
    assert ex.reason == "insufficient_depth" and ex.requested_cash == Money.of("200")


def test_buy_exactly_the_whole_book_is_complete(book):
    ex = walk_buy(book, Money.of("140"))
    assert ex.shares == 300 * SH and ex.cost == Money.of("140") and ex.complete


def test_buy_on_empty_book():
    empty = OrderBook.of([], [])
    with pytest.raises(InsufficientDepth):
        walk_buy(empty, Money.of("1"))
    ex = walk_buy(empty, Money.of("1"), allow_partial=True)
    assert ex.shares == 0 and ex.cost == Money(0) and ex.avg_price is None and ex.reason == "empty_book"


def test_rounding_floors_shares_and_never_exceeds_stake():
    b = OrderBook.of([], [(p("0.3"), 1000 * SH)])
    ex = walk_buy(b, Money.of("1"))
    assert ex.shares == 3_333_333  # 3.333333 shares, floored
    assert ex.cost == Money(1_000_000)  # 0.9999999 rounded up, still within the $1 stake
    tiny = walk_buy(OrderBook.of([], [(p("0.7"), SH)]), Money(10))
    assert tiny.shares == 14 and tiny.cost == Money(10)


def test_bad_amounts():
    b = OrderBook.of([(p("0.5"), SH)], [(p("0.6"), SH)])
    with pytest.raises(RejectedOrder):
        walk_buy(b, Money(0))
    with pytest.raises(RejectedOrder):
        walk_sell(b, 0)


def test_sell_across_levels(book):
    ex = walk_sell(book, 120 * SH)
    # 50 at 0.35 = 17.5, 70 at 0.30 = 21
    assert ex.proceeds == Money.of("38.5") and ex.shares == 120 * SH
    assert ex.avg_price == Decimal("38.5") / Decimal(120)
    assert ex.slippage == Decimal("0.375") - Decimal("38.5") / Decimal(120)
    assert ex.complete
    with pytest.raises(AttributeError):
        ex.cost  # noqa: B018


def test_sell_larger_than_depth(book):
    with pytest.raises(InsufficientDepth):
        walk_sell(book, 200 * SH)
    ex = walk_sell(book, 200 * SH, allow_partial=True)
    assert ex.shares == 150 * SH and ex.proceeds == Money.of("47.5") and not ex.complete


def test_taker_fee_is_rate_times_min_p_one_minus_p():
    assert taker_fee(p("0.4"), 100 * SH, "0.02") == Money.of("0.8")
    assert taker_fee(p("0.9"), 100 * SH, "0.02") == Money.of("0.2")  # min(0.9, 0.1) = 0.1
    assert taker_fee(p("0.5"), 100 * SH, 0) == Money(0)


def test_buy_with_fee_is_paid_from_the_stake():
    b = OrderBook.of([], [(p("0.40"), 1000 * SH)])
    ex = walk_buy(b, Money.of("10"), fee_rate="0.02")
    # each share costs 0.40 + 0.02 × 0.40 = 0.408
    assert ex.shares == 24_509_803
    assert ex.fee == Money(196_079)  # 24.509803 × 0.008 = 0.196078424, rounded up
    assert ex.cost == Money.of("10")  # 9.999999624 rounded up
    assert ex.avg_price == Decimal("0.4")


def test_sell_with_fee_deducted():
    b = OrderBook.of([(p("0.80"), 1000 * SH)], [])
    ex = walk_sell(b, 100 * SH, fee_rate="0.02")
    assert ex.fee == Money.of("0.4") and ex.proceeds == Money.of("79.6")


def test_no_side_book_is_the_complement(book):
    no = book.complement(token_id="no-token")
    assert no.asks == (Level(p("0.65"), 50 * SH), Level(p("0.70"), 100 * SH))
    assert no.bids == (Level(p("0.60"), 100 * SH), Level(p("0.50"), 200 * SH))
    assert book_for_outcome(book, YES) is book
    assert book_for_outcome(book, NO) == book.complement()
    fetched_no = OrderBook.of([(p("0.6"), SH)], [(p("0.65"), SH)])
    assert book_for_outcome(book, NO, fetched_no) is fetched_no
    with pytest.raises(ValueError):
        book_for_outcome(book, "MAYBE")
    # buying NO for $6.50 takes the 0.65 level: 10 shares
    assert walk_buy(no, Money.of("6.5")).shares == 10 * SH


def test_walk_real_book_sample(sample):
    book = pp.parse_book(sample("polymarket/clob_book_2026_format.UNATTRIBUTED.json"))
    ex = walk_buy(book, Money.of("100"))
    assert ex.levels_used == 1 and ex.shares == 384_615_384  # $100 / 0.26, floored to a micro-share
    assert ex.cost <= Money.of("100")
    big = walk_buy(book, Money.of("1000000"), allow_partial=True)
    assert big.levels_used == 4 and not big.complete
    sold = walk_sell(book, 200_000 * SH)
    assert sold.levels[0] == Level(p("0.25"), 143_009_020_000)


# ------------------------------------------------------------------------------------------- properties

prices = st.integers(min_value=1, max_value=MICRO).map(Price)
levels = st.lists(st.tuples(prices, st.integers(min_value=0, max_value=10**12)), max_size=6)


@settings(max_examples=300, deadline=None)
@given(bids=levels, asks=levels, stake=st.integers(min_value=1, max_value=10**12),
       fee=st.sampled_from(["0", "0.02", "0.5"]))
def test_buy_never_spends_more_than_the_stake(bids, asks, stake, fee):
    book = OrderBook.of(bids, asks)
    ex = walk_buy(book, Money(stake), allow_partial=True, fee_rate=fee)
    assert 0 <= ex.cost.micros <= stake
    assert 0 <= ex.fee.micros <= ex.cost.micros
    assert ex.shares == sum(lv.size for lv in ex.levels)
    # value at the prices paid never exceeds the cash paid
    assert sum(lv.size * lv.price.ppm for lv in ex.levels) <= ex.cost.micros * MICRO
    if ex.complete:
        assert ex.shares <= book.depth("asks")


@settings(max_examples=300, deadline=None)
@given(bids=levels, asks=levels, qty=st.integers(min_value=1, max_value=10**13),
       fee=st.sampled_from(["0", "0.02"]))
def test_sell_never_receives_more_than_the_bids_pay(bids, asks, qty, fee):
    book = OrderBook.of(bids, asks)
    ex = walk_sell(book, qty, allow_partial=True, fee_rate=fee)
    assert 0 <= ex.shares <= qty
    assert ex.proceeds.micros * MICRO <= sum(lv.size * lv.price.ppm for lv in ex.levels)
    assert ex.complete == (ex.shares == qty)
