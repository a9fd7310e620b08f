"""The asked forecast set (`forecast_questions`, contract 1): chosen once per (cohort, round) before any seat is
asked, read back by every seat and by a resumed round, read by `frames.asked_frame`, and backfilled from the
stored forecasts of a database that predates it."""

from datetime import datetime, timedelta, timezone

import pandas as pd
from sqlalchemy import delete, func, select
from sqlmodel import Session

from arena.domain.decision import Decision
from arena.domain.forecast_set import ForecastSetRules
from arena.domain.market import YES, Market, Quote
from arena.domain.sizing import CohortRules
from arena.money import Price
from arena.store.engine import current_revision, head_revision, migrate, session_scope
from arena.store.frames import asked_frame
from arena.store.tables import CohortRow, ForecastQuestionRow
from arena.usecases import decide, ingest
from arena.usecases.asked_set import round_set
from arena.usecases.cohorts import LineupEntry, agents_of, start_cohort

T0 = datetime(2026, 1, 4, tzinfo=timezone.utc)
CLOSE = T0 + timedelta(days=14)


class Recorder:
    """Answers 0.5 on every asked market and remembers the set each view asked."""

    def __init__(self):
        self.asked = []

    def decide(self, view):
        self.asked.append(view.forecast_set)
        return Decision(forecasts={mid: 0.5 for mid in view.forecast_set})


def seed(engine, prices, at=T0, volume=None):
    """Markets "sim:<name>" at the given YES prices, each with 24 h volume `volume[name]` (default 10)."""
    volume = volume or {}
    ms = [Market(id=f"sim:{n}", venue="sim", question=f"{n}?", close_time=CLOSE, volume_24h=volume.get(n, 10.0))
          for n in prices]
    with session_scope(engine) as s:
        ingest.record_observations(s, at, ms, [Quote(m.id, {YES: Price.of(p)}, at, at, source="t")
                                               for m, p in zip(ms, prices.values())])


def new_cohort(engine, names=("a", "b", "c")):
    with session_scope(engine) as s:
        cohort, _ = start_cohort(s, T0, CohortRules(forecast=ForecastSetRules()), [LineupEntry(n) for n in names], T0)
        return cohort


def stored(engine, cohort_id, round_key):
    with Session(engine) as s:
        return [(r.market_id, r.position, r.price_ppm, r.in_band, r.filled) for r in s.scalars(
            select(ForecastQuestionRow).where(ForecastQuestionRow.cohort_id == cohort_id,
                                              ForecastQuestionRow.round_key == round_key)
            .order_by(ForecastQuestionRow.position))]


def test_every_seat_of_a_round_is_asked_the_stored_set(engine):
    seed(engine, {"1": "0.40", "2": "0.60", "3": "0.99", "4": "0.20", "5": "0.50"}, volume={"4": 50.0})
    cohort = new_cohort(engine)
    seats = {n: Recorder() for n in "abc"}
    at = T0 + timedelta(minutes=5)
    decide.run_round(engine, cohort, seats, "w1", at, forecast_k=3)
    rows = stored(engine, cohort.id, "w1")
    # in band first, the most traded first; the 0.99 market is not needed to fill three
    assert [r[0] for r in rows][0] == "sim:4" and len(rows) == 3 and "sim:3" not in [r[0] for r in rows]
    assert all(r[3] and not r[4] for r in rows) and [r[1] for r in rows] == [0, 1, 2]
    assert {seats[n].asked[0] for n in "abc"} == {tuple(r[0] for r in rows)}
    frame = asked_frame(Session(engine), [cohort.id])
    assert list(frame.columns) == ["cohort", "round", "market_id", "question", "market_price", "in_band", "filled",
                                   "as_of"]
    assert frame["question"].tolist() == [f"{r[0]}@w1" for r in rows]
    assert frame["market_price"].tolist() == [r[2] / 1e6 for r in rows]
    assert frame["in_band"].dtype == bool and frame["filled"].dtype == bool
    assert set(frame["cohort"]) == {cohort.name}


def test_a_seat_asked_later_in_the_round_sees_the_set_chosen_first(engine):
    seed(engine, {"1": "0.40", "2": "0.60"})
    cohort = new_cohort(engine)
    first, later = Recorder(), Recorder()
    with Session(engine) as s:
        a, b, _ = agents_of(s, cohort.id)
    at = T0 + timedelta(minutes=5)
    decide.decide_one(engine, cohort, a, first, "w1", at, forecast_k=2)
    # the universe moves: a new, more traded market in band, which a recomputed set would take
    seed(engine, {"9": "0.50"}, at=at, volume={"9": 1e6})
    decide.decide_one(engine, cohort, b, later, "w1", at + timedelta(minutes=1), forecast_k=2)
    assert later.asked == first.asked and "sim:9" not in first.asked[0]
    # a resumed round (the same round key, later) reuses the set too; a new round chooses afresh
    decide.run_round(engine, cohort, {"c": (resumed := Recorder())}, "w1", at + timedelta(hours=1), forecast_k=2)
    assert resumed.asked == first.asked
    seed(engine, {"1": "0.40", "2": "0.60", "9": "0.50"}, at=at + timedelta(days=7), volume={"9": 1e6})
    decide.run_round(engine, cohort, {"a": (nxt := Recorder())}, "w2", at + timedelta(days=7), forecast_k=2)
    assert "sim:9" in nxt.asked[0]
    frame = asked_frame(Session(engine), [cohort.id])
    assert frame.groupby("round").size().to_dict() == {"w1": 2, "w2": 2}
    assert set(asked_frame(Session(engine), [cohort.id], as_of=at + timedelta(days=1))["round"]) == {"w1"}


def test_a_second_writer_of_a_round_reads_the_first_writers_set(engine):
    seed(engine, {"1": "0.40", "2": "0.60", "3": "0.30"})
    cohort = new_cohort(engine)
    with Session(engine) as s:
        from arena.usecases.decide import tradable_markets
        markets, quotes = tradable_markets(s, T0 + timedelta(minutes=5))
    one = round_set(engine, cohort, "w1", T0 + timedelta(minutes=5), markets, quotes, 2)
    other = round_set(engine, cohort, "w1", T0 + timedelta(minutes=9), {}, {}, 3)  # another universe, another K
    assert other.market_ids == one.market_ids and len(one.market_ids) == 2
    assert other.as_of is not None and len(stored(engine, cohort.id, "w1")) == 2


def _snapshot(engine, cohort_ids):
    f = asked_frame(Session(engine), cohort_ids)
    f["as_of"] = pd.to_datetime(f["as_of"], utc=True)
    return f.drop(columns=["filled"]).sort_values(["cohort", "round", "market_id"]).reset_index(drop=True)


def test_the_migration_backfills_the_sets_from_stored_forecasts(engine):
    seed(engine, {"1": "0.40", "2": "0.60", "3": "0.99", "4": "0.02", "5": "0.50"})
    cohort = new_cohort(engine)
    decide.run_round(engine, cohort, {n: Recorder() for n in "abc"}, "w1", T0 + timedelta(minutes=5), forecast_k=5)
    seed(engine, {"1": "0.45", "2": "0.60", "3": "0.99", "4": "0.02", "5": "0.50"}, at=T0 + timedelta(days=7))
    decide.run_round(engine, cohort, {n: Recorder() for n in "abc"}, "w2", T0 + timedelta(days=7, minutes=5),
                     forecast_k=4)
    before = _snapshot(engine, [cohort.id])
    assert len(before) == 9 and not before["in_band"].all()  # 0.99 and 0.02 fill the set, flagged out of band
    w2 = before[before["round"] == "w2"]
    assert set(w2["market_id"]) == {"sim:1", "sim:2", "sim:5", "sim:4"}  # 0.02 is nearer the band than 0.99
    migrate(engine, "0013")
    assert current_revision(engine) == "0013"
    migrate(engine)
    assert current_revision(engine) == head_revision()
    after = _snapshot(engine, [cohort.id])
    pd.testing.assert_frame_equal(after, before)
    with Session(engine) as s:
        # the backfill numbers each set in market-id order
        assert [r.position for r in s.scalars(select(ForecastQuestionRow).where(ForecastQuestionRow.round_key == "w1")
                                              .order_by(ForecastQuestionRow.market_id))] == [0, 1, 2, 3, 4]
        assert not any(s.scalars(select(ForecastQuestionRow.filled)))


def test_the_backfill_takes_the_median_price_and_an_empty_database_stays_empty(engine):
    seed(engine, {"1": "0.40"})
    cohort = new_cohort(engine)
    with session_scope(engine) as s:
        s.execute(delete(ForecastQuestionRow))
    migrate(engine, "0013")
    migrate(engine)
    with Session(engine) as s:
        assert s.scalar(select(func.count()).select_from(ForecastQuestionRow)) == 0
    # three seats that saw 0.40, 0.40 and 0.46 (a resumed seat saw a later price): the median is 0.40
    at = T0 + timedelta(minutes=5)
    seats = {"a": Recorder(), "b": Recorder()}
    decide.run_round(engine, cohort, seats, "w1", at, forecast_k=1)
    seed(engine, {"1": "0.46"}, at=at + timedelta(minutes=1))
    decide.run_round(engine, cohort, {"c": Recorder()}, "w1", at + timedelta(minutes=2), forecast_k=1)
    with session_scope(engine) as s:
        s.execute(delete(ForecastQuestionRow))
    migrate(engine, "0013")
    migrate(engine)
    assert stored(engine, cohort.id, "w1") == [("sim:1", 0, 400_000, True, False)]
    with Session(engine) as s:
        assert s.get(CohortRow, cohort.id).status == "open"
