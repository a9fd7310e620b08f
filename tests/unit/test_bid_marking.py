"""Marking at the bid (`usecases.mark.bid_side_prices`): YES sells at the bid, NO at 1 − the ask, so a long book is
worth no more at the bid than at the mid whenever bid ≤ mid ≤ ask; a side without a recorded bid has no price."""

import numpy as np
import pandas as pd

from arena.domain.market import NO, YES
from arena.domain.valuation import value_micros
from arena.usecases.mark import bid_side_prices, side_prices

M = 1_000_000


def test_a_long_book_is_worth_less_at_the_bid_than_at_the_mid():
    quotes = pd.DataFrame({"market_id": ["a", "b"], "outcome": [YES, YES], "price_ppm": [550_000, 200_000],
                           "bid_ppm": [530_000, None], "ask_ppm": [570_000, None]})
    bid = bid_side_prices(quotes).set_index(["market_id", "outcome"])["price_ppm"]
    mid = side_prices(quotes).set_index(["market_id", "outcome"])["price_ppm"]
    assert bid[("a", YES)] == 530_000 and bid[("a", NO)] == 430_000  # NO sells at 1 − the YES ask
    assert ("b", YES) not in bid.index and ("b", NO) not in bid.index  # no bid recorded: no liquidation price
    shares = np.array([1_250 * M, 1_000 * M], dtype=np.int64)
    at_bid = value_micros(shares, np.array([bid[("a", YES)], bid[("a", NO)]]))
    at_mid = value_micros(shares, np.array([mid[("a", YES)], mid[("a", NO)]]))
    assert at_bid.tolist() == [662_500_000, 430_000_000] and at_mid.tolist() == [687_500_000, 450_000_000]
    assert (at_bid <= at_mid).all() and at_bid.sum() < at_mid.sum()
