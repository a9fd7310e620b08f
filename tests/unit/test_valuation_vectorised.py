"""The vectorised valuation the mark uses equals the scalar one of `domain.valuation`, value for value: the
numpy floor (`value_micros`), the side-price rule (`mark.side_prices`: NO = 1 − YES when only YES is stored)
and the truncating bigint arithmetic the PostgreSQL fold uses (floor for shares > 0 and 0 ≤ price ≤ 10⁶)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.domain.ledger import Position
from arena.domain.market import NO, YES, Quote
from arena.domain.valuation import value_micros, value_position
from arena.money import MICRO, Money, Price
from arena.usecases.mark import side_prices, value_positions

SHARES = st.integers(min_value=1, max_value=10**15)  # up to a billion shares, in micro-shares
PPM = st.integers(min_value=0, max_value=MICRO)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(SHARES, PPM), min_size=1, max_size=60))
def test_value_micros_equals_the_scalar_value(pairs):
    shares = np.array([s for s, _ in pairs], dtype=np.int64)
    ppm = np.array([p for _, p in pairs], dtype=np.int64)
    got = value_micros(shares, ppm)
    want = [value_position(Position("m", YES, s, Money(1)), Price(p)).value.micros for s, p in pairs]
    assert got.tolist() == want
    # the PostgreSQL fold's bigint form: truncating division of non-negative operands
    sql_form = [(s // MICRO) * p + ((s % MICRO) * p) // MICRO for s, p in pairs]
    assert sql_form == want


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d"]), st.sampled_from([YES, NO, "X"]), SHARES,
                          st.integers(min_value=1, max_value=10**12)), min_size=1, max_size=25, unique_by=lambda r: r[:2]),
       st.dictionaries(st.sampled_from(["a", "b", "c"]), st.dictionaries(st.sampled_from([YES, "X"]), PPM, min_size=1)))
def test_value_positions_equals_value_position_at_the_quote_price(positions, quoted):
    """Each position is valued as `value_position` at `Quote.price(outcome)` (NO from YES), or at cost when
    the quote has no price for its side (or there is no quote)."""
    frame = pd.DataFrame(positions, columns=["market_id", "outcome", "shares", "cost"]).astype(
        {"shares": "int64", "cost": "int64"})
    prices = pd.DataFrame([(m, o, p) for m, ps in quoted.items() for o, p in ps.items()],
                          columns=["market_id", "outcome", "price_ppm"])
    got = value_positions(frame, prices)
    for (mid, outcome, shares, cost), value, priced in zip(positions, got["value"], got["priced"]):
        price = None
        if mid in quoted:
            try:
                price = Quote(mid, {k: Price(v) for k, v in quoted[mid].items()}, None, None).price(outcome)  # type: ignore[arg-type]
            except KeyError:
                price = None
        want = value_position(Position(mid, outcome, shares, Money(cost)), price)
        assert int(value) == want.value.micros
        assert bool(priced) == want.priced


def test_side_prices_derive_no_only_where_no_is_not_stored():
    prices = pd.DataFrame({"market_id": ["b", "m", "m", "x"], "outcome": [YES, YES, NO, "A"],
                           "price_ppm": [300_000, 400_000, 550_000, 123]})
    side = {(m, o): p for m, o, p in side_prices(prices).itertuples(index=False)}
    assert side == {("b", YES): 300_000, ("b", NO): 700_000, ("m", YES): 400_000, ("m", NO): 550_000,
                    ("x", "A"): 123}
