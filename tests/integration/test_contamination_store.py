"""The contamination guard's read side (`read.contamination`) on planted store facts: only a replay's markets are
judged (a live venue's never are, whatever their path), point in time (a resolution counts once recorded by the
board's time, a price once fetched), and a seat's model age comes from its first completed decision."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pandas as pd

from arena.domain.market import YES, Market, Quote, Resolution
from arena.money import Price
from arena.read.contamination import SeatDates, contamination, seat_dates
from arena.store.engine import session_scope
from arena.usecases import ingest

T0 = datetime(2025, 6, 1, tzinfo=timezone.utc)
CUTOFF = date(2025, 6, 30)  # cutoff instant 2025-07-01 00:00


def _plant(engine) -> None:  # type: ignore[no-untyped-def]
    """Two twin markets — one of the replay venue, one live — each resolved on 06-10 (recorded 06-11), and two
    twins priced 0.99 from 06-20 (fetched 06-21), still open."""
    markets = [Market(id=f"{venue}:{name}", venue=venue, question=f"{name}?", close_time=T0 + timedelta(days=90))
               for venue in ("replay", "polymarket") for name in ("resolved", "settled")]
    with session_scope(engine) as s:
        ingest.record_observations(s, T0, markets, [Quote(m.id, {YES: Price.of("0.50")}, T0, T0, source="t")
                                                    for m in markets])
    at = datetime(2025, 6, 20, tzinfo=timezone.utc)
    with session_scope(engine) as s:
        ingest.record_observations(s, at + timedelta(days=1), quotes=[
            Quote(f"{v}:settled", {YES: Price.of("0.99")}, at, at + timedelta(days=1), source="t")
            for v in ("replay", "polymarket")])
    with session_scope(engine) as s:
        ingest.record_observations(s, datetime(2025, 6, 11, tzinfo=timezone.utc), resolutions=[
            (f"{v}:resolved", Resolution.winner(f"{v}:resolved", YES, resolved_at=datetime(2025, 6, 10, tzinfo=timezone.utc)))
            for v in ("replay", "polymarket")])


def _frame() -> pd.DataFrame:
    rows = [("c", agent, f"{v}:{name}") for agent in ("cut", "none") for v in ("replay", "polymarket")
            for name in ("resolved", "settled")]
    return pd.DataFrame(rows, columns=["cohort", "agent", "market_id"])


def test_only_replay_markets_are_judged_and_only_for_seats_with_a_cutoff(engine):
    _plant(engine)
    frame = _frame()
    seats = seat_dates([("c", "cut", {"knowledge_cutoff": CUTOFF.isoformat()}), ("c", "none", {"kind": "llm"})])
    assert seats == {("c", "cut"): SeatDates(CUTOFF, None)}
    guard = contamination(engine, datetime(2025, 7, 15, tzinfo=timezone.utc), frame, seats)
    got = dict(zip(zip(frame["agent"], frame["market_id"]), guard.reasons))
    assert got == {("cut", "replay:resolved"): "resolved", ("cut", "replay:settled"): "settled",
                   # the live venue's twins of the same path: never marked (a live round never is)
                   ("cut", "polymarket:resolved"): "", ("cut", "polymarket:settled"): "",
                   ("none", "replay:resolved"): "", ("none", "replay:settled"): "",
                   ("none", "polymarket:resolved"): "", ("none", "polymarket:settled"): ""}
    assert guard.mask.sum() == 2


def test_the_verdict_is_point_in_time(engine):
    _plant(engine)
    frame = _frame()
    seats = {("c", "cut"): SeatDates(CUTOFF, None)}
    reasons = lambda when: list(contamination(engine, when, frame, seats).reasons[:2])  # noqa: E731
    assert reasons(datetime(2025, 6, 10, 12, tzinfo=timezone.utc)) == ["", ""]  # resolution not recorded yet
    assert reasons(datetime(2025, 6, 20, 12, tzinfo=timezone.utc)) == ["resolved", ""]  # 0.99 not fetched yet
    assert reasons(datetime(2025, 6, 21, tzinfo=timezone.utc)) == ["resolved", "settled"]
    # a cutoff before the price settled: the resolution still counts, the price did not settle before it
    early = {("c", "cut"): SeatDates(date(2025, 6, 15), None)}
    assert list(contamination(engine, datetime(2025, 7, 15, tzinfo=timezone.utc), frame, early).reasons[:2]) \
        == ["resolved", ""]


def test_no_seat_with_a_date_reads_nothing(engine):
    frame = _frame()
    guard = contamination(engine, T0, frame, {})
    assert not guard.mask.any() and len(guard.reasons) == len(frame) and guard.ages == {}


def test_a_price_that_settled_and_came_back_is_clean_for_the_later_cutoff_only_settled_for_the_earlier(engine):
    m = Market(id="replay:back", venue="replay", question="back?", close_time=T0 + timedelta(days=90))
    path = [(T0, "0.50"), (datetime(2025, 6, 10, tzinfo=timezone.utc), "0.99"),
            (datetime(2025, 6, 20, tzinfo=timezone.utc), "0.60")]
    for i, (at, price) in enumerate(path):
        with session_scope(engine) as s:
            ingest.record_observations(s, at, [m] if i == 0 else [],
                                       [Quote(m.id, {YES: Price.of(price)}, at, at, source="t")])
    frame = pd.DataFrame({"cohort": ["c", "c"], "agent": ["early", "late"], "market_id": [m.id, m.id]})
    seats = {("c", "early"): SeatDates(date(2025, 6, 15), None), ("c", "late"): SeatDates(CUTOFF, None)}
    guard = contamination(engine, datetime(2025, 7, 15, tzinfo=timezone.utc), frame, seats)
    assert list(guard.reasons) == ["settled", ""]  # at 06-16 the price in force was 0.99; at 07-01 it was 0.60
