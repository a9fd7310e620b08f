from decimal import Decimal

import pytest

from arena.money import Money, MoneyError, Price, shares_for, value_of


def test_money_parses_exactly_and_refuses_sub_micro_amounts():
    assert Money.of("500").micros == 500_000_000
    assert Money.of("0.000001").micros == 1
    assert Money.of(0.1).micros == 100_000  # shortest repr, not the binary expansion
    with pytest.raises(MoneyError):
        Money.of("0.0000001")
    with pytest.raises(MoneyError):
        Money.of("nan")
    with pytest.raises(MoneyError):
        Money.of(True)


def test_money_formats_and_compares():
    assert str(Money.of("10700")) == "$10,700.00"
    assert str(Money.of("-0.5")) == "-$0.50"
    assert str(Money.of("1.234567")) == "$1.234567"
    assert Money.of(1) + Money.of(2) == Money.of(3)
    assert Money.of(1) < Money.of(2)
    with pytest.raises(AttributeError):
        Money.of(1).micros = 5  # type: ignore[misc]


def test_price_quantizes_once_and_stays_in_range():
    assert Price.of("0.535").ppm == 535_000
    assert Price.of("0.0000005").ppm == 0  # half-even to the nearest ppm
    assert Price.of("0.0000015").ppm == 2
    assert Price.of("0.3").complement() == Price.of("0.7")
    with pytest.raises(MoneyError):
        Price.of("1.01")
    with pytest.raises(MoneyError):
        Price.of("-0.1")


def test_seed_001_shares_and_settlement_value():
    # $500 on YES at 0.40 → 1,250 shares; settling YES pays $1,250.
    shares = shares_for(Money.of(500), Price.of("0.40"))
    assert shares == 1_250 * 1_000_000
    assert value_of(shares, Price.of(1)) == Money.of(1250)


def test_rounding_never_creates_money():
    # $100 at 0.3 buys 333.333333 shares (floored); selling them back at 0.3 returns at most $100.
    amount, price = Money.of(100), Price.of("0.3")
    shares = shares_for(amount, price)
    assert shares == 333_333_333
    assert value_of(shares, price) <= amount
    assert Money.of(100).fraction(1, 3) == Money(33_333_333)
    assert Decimal(str(Money.of("2.5").to_decimal())) == Decimal("2.5")
