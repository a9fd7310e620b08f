"""Exact value types for money (micro-USD), prices (parts per million) and shares (micro-shares).

Owns the arithmetic between them and its rounding rule; imports nothing from the rest of arena.

Rounding rule: every conversion that cannot be exact rounds *toward the house*: shares bought are rounded
down, proceeds and payouts are rounded down, so rounding can never create money. All three are integers
at a fixed scale, so sums are exact and order-independent.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from functools import total_ordering

MICRO = 1_000_000  # micro-USD per USD, ppm per unit probability, micro-shares per share


class MoneyError(ValueError):
    """A value could not be read as money, a price or a share count."""


def _decimal(value: object, what: str) -> Decimal:
    if isinstance(value, bool):
        raise MoneyError(f"{what}: booleans are not numbers ({value!r})")
    if isinstance(value, float):
        value = repr(value)  # the shortest string that round-trips, not the binary expansion
    try:
        d = Decimal(str(value).strip())
    except (InvalidOperation, TypeError) as exc:
        raise MoneyError(f"{what}: not a number ({value!r})") from exc
    if not d.is_finite():
        raise MoneyError(f"{what}: not finite ({value!r})")
    return d


@total_ordering
class Money:
    """An amount of USD held as integer micro-dollars. Immutable; arithmetic only with Money or int factors."""

    __slots__ = ("micros",)

    def __init__(self, micros: int) -> None:
        if not isinstance(micros, int) or isinstance(micros, bool):
            raise MoneyError(f"Money takes integer micro-dollars, got {micros!r}")
        object.__setattr__(self, "micros", micros)

    def __setattr__(self, name: str, value: object) -> None:  # immutability
        raise AttributeError("Money is immutable")

    def __reduce__(self) -> tuple:  # copy, deepcopy and pickle rebuild through __init__
        return (Money, (self.micros,))

    @classmethod
    def of(cls, value: object) -> Money:
        """Dollars from a str/int/Decimal/float like "500" or "12.345678"; more than 6 decimals is an error."""
        d = _decimal(value, "money")
        micros = d * MICRO
        if micros != micros.to_integral_value():
            raise MoneyError(f"money: more precise than a micro-dollar ({value!r})")
        return cls(int(micros))

    @classmethod
    def zero(cls) -> Money:
        return cls(0)

    def to_decimal(self) -> Decimal:
        return Decimal(self.micros) / MICRO

    def __float__(self) -> float:
        return self.micros / MICRO

    def __add__(self, other: Money) -> Money:
        if not isinstance(other, Money):
            return NotImplemented
        return Money(self.micros + other.micros)

    def __sub__(self, other: Money) -> Money:
        if not isinstance(other, Money):
            return NotImplemented
        return Money(self.micros - other.micros)

    def __neg__(self) -> Money:
        return Money(-self.micros)

    def __abs__(self) -> Money:
        return Money(abs(self.micros))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Money) and other.micros == self.micros

    def __lt__(self, other: Money) -> bool:
        if not isinstance(other, Money):
            return NotImplemented
        return self.micros < other.micros

    def __hash__(self) -> int:
        return hash(("Money", self.micros))

    def __bool__(self) -> bool:
        return self.micros != 0

    def fraction(self, numerator: int, denominator: int) -> Money:
        """floor(self × numerator / denominator): a share of an amount that never exceeds the exact share."""
        if denominator <= 0:
            raise MoneyError("fraction: denominator must be positive")
        return Money((self.micros * numerator) // denominator)

    def __repr__(self) -> str:
        return f"Money({self})"

    def __str__(self) -> str:
        sign = "-" if self.micros < 0 else ""
        whole, frac = divmod(abs(self.micros), MICRO)
        cents = frac // 10_000
        rest = frac % 10_000
        text = f"{sign}${whole:,}.{cents:02d}"
        return text + (f"{rest:04d}".rstrip("0") if rest else "")


@total_ordering
class Price:
    """A probability-scale price in [0, 1] held as integer parts per million.

    Venue prices are exact decimal strings; they are quantized to 1e-6 (half-even) once, at parse time.
    That rounds an observation, never money: amounts derived from a price use the floor rules below.
    """

    __slots__ = ("ppm",)

    def __init__(self, ppm: int) -> None:
        if not isinstance(ppm, int) or isinstance(ppm, bool):
            raise MoneyError(f"Price takes integer parts per million, got {ppm!r}")
        if not 0 <= ppm <= MICRO:
            raise MoneyError(f"price outside [0, 1]: {ppm / MICRO}")
        object.__setattr__(self, "ppm", ppm)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Price is immutable")

    def __reduce__(self) -> tuple:
        return (Price, (self.ppm,))

    @classmethod
    def of(cls, value: object) -> Price:
        d = _decimal(value, "price")
        if not Decimal(0) <= d <= Decimal(1):
            raise MoneyError(f"price outside [0, 1]: {value!r}")
        return cls(int((d * MICRO).to_integral_value(rounding=ROUND_HALF_EVEN)))

    def complement(self) -> Price:
        """1 − p: the NO side's price of a YES price."""
        return Price(MICRO - self.ppm)

    def to_decimal(self) -> Decimal:
        return Decimal(self.ppm) / MICRO

    def __float__(self) -> float:
        return self.ppm / MICRO

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Price) and other.ppm == self.ppm

    def __lt__(self, other: Price) -> bool:
        if not isinstance(other, Price):
            return NotImplemented
        return self.ppm < other.ppm

    def __hash__(self) -> int:
        return hash(("Price", self.ppm))

    def __repr__(self) -> str:
        return f"Price({self})"

    def __str__(self) -> str:
        return format(self.to_decimal().normalize(), "f")


ONE = Price(MICRO)
ZERO = Price(0)


def shares_for(amount: Money, price: Price) -> int:
    """Micro-shares bought by `amount` at `price`: floor(amount / price). Price must be positive."""
    if price.ppm == 0:
        raise MoneyError("cannot buy at a price of 0")
    return (amount.micros * MICRO) // price.ppm


def value_of(shares: int, price: Price) -> Money:
    """Money value of `shares` micro-shares at `price`: floor(shares × price), exact in integers."""
    return Money((shares * price.ppm) // MICRO)


def parse_decimal_price(value: object) -> Decimal:
    """An exact Decimal from a venue's price string or number (used before range checks by parsers)."""
    return _decimal(value, "price")


__all__ = [
    "MICRO",
    "Money",
    "MoneyError",
    "ONE",
    "Price",
    "ZERO",
    "parse_decimal_price",
    "shares_for",
    "value_of",
]
