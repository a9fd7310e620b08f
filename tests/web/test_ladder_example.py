"""The methodology page's worked ladder example: its numbers are the detection's and the scoring's own."""

from __future__ import annotations

from arena.web.ladder_example import ladder_example


def test_ladder_example_counts_the_seats_broken_pairs_and_none_of_the_venues():
    rows = dict(ladder_example().rows)
    assert rows["ladders found from the texts (each member implies the next)"] == "M → J; C → B → A"
    assert rows["the seat's pairs: C>B by 0.05, C<A, B<A; M>J by 0.10"] == "4 pairs, 2 violated"
    assert rows["the seat's ladder_violation_mean = (0.05 + 0.10) / 4"] == "0.0375"
    assert rows["the venue's prices (the row \u201cmarket\u201d)"] == "4 pairs, 0 violated, mean 0.0000"
