"""Closed positions: the fold of an agent's fills per (market, outcome), hand-computed."""

from dataclasses import dataclass
from datetime import datetime, timezone

from arena.domain.closed_position import ClosedPosition, closed_positions


@dataclass
class F:
    at: datetime
    kind: str
    market_id: str
    outcome: str
    shares: int
    cash_micros: int
    cost_micros: int


def t(day: int, tz: bool = False) -> datetime:
    return datetime(2026, 1, day, 12, tzinfo=timezone.utc if tz else None)


def test_a_round_trip_is_closed_and_an_open_position_is_not():
    fills = [
        F(t(1), "buy", "m1", "YES", 2_000_000, -1_000_000, 1_000_000),  # $1 for 2 shares
        F(t(2), "buy", "m1", "YES", 1_000_000, -600_000, 600_000),  # $0.60 for 1 more
        F(t(3), "sell", "m1", "YES", -1_000_000, 700_000, 0),  # sells 1 for $0.70
        F(t(4), "settle", "m1", "YES", -2_000_000, 2_000_000, 0),  # 2 left pay $1 each
        F(t(2), "buy", "m2", "NO", 5_000_000, -2_500_000, 2_500_000),  # still open
    ]
    (c,) = closed_positions(fills)
    assert c == ClosedPosition("m1", "YES", 1_600_000, 2_700_000, 1_100_000, "settle", t(4))
    assert c.realized_micros == c.returned_micros - c.bought_micros


def test_a_position_reopened_by_a_reversal_is_open_again():
    fills = [F(t(1), "buy", "m", "YES", 1_000_000, -400_000, 400_000),
             F(t(5), "settle", "m", "YES", -1_000_000, 1_000_000, 0),
             F(t(6), "reversal", "m", "YES", 1_000_000, -1_000_000, 0)]
    assert closed_positions(fills) == ()
    assert closed_positions(fills[:2])[0].realized_micros == 600_000


def test_oldest_close_first_naive_times_read_as_utc():
    fills = [F(t(9, tz=True), "buy", "b", "YES", 1, -1, 1), F(t(9, tz=True), "sell", "b", "YES", -1, 1, 0),
             F(t(3), "buy", "a", "YES", 1, -1, 1), F(t(3), "refund", "a", "YES", -1, 1, 0),
             F(t(3), "buy", "0", "NO", 1, -1, 1), F(t(3), "sell", "0", "NO", -1, 2, 0)]
    assert [(c.market_id, c.closed_by) for c in closed_positions(fills)] == [("0", "sell"), ("a", "refund"),
                                                                           ("b", "sell")]
