"""The asked set: each (cohort, round)'s forecast set, chosen once by the cohort's frozen rule and stored in
`forecast_questions` before any seat is asked; every seat of the round, and a resumed round, reads it back.

The set is written in one transaction that first locks the cohort's row (an UPDATE of it: a row lock on
PostgreSQL, the write lock on SQLite), so two runners of one round — the scheduler's tick and a worker, two
workers — never store two sets: the second finds the first's rows and reads them. (The unique key on the set's
positions would refuse a second set anyway.) An empty set writes nothing, so a round whose universe held no
eligible market chooses again when it is resumed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from arena.domain.forecast_set import Question, choose, round_seed
from arena.domain.market import YES, Market, Quote
from arena.store.engine import session_scope
from arena.store.tables import CohortRow, ForecastQuestionRow
from arena.usecases.cohorts import cohort_rules


@dataclass(frozen=True)
class AskedSet:
    """A round's forecast set as stored: its questions in set order, and the decision time it was chosen at."""

    round_key: str
    as_of: datetime | None
    questions: tuple[Question, ...]

    @property
    def market_ids(self) -> tuple[str, ...]:
        return tuple(q.market_id for q in self.questions)


def yes_prices(quotes: Mapping[str, Quote]) -> dict[str, int | None]:
    """market id → the quote's YES price in ppm (None when the quote has no YES price)."""
    out: dict[str, int | None] = {}
    for mid, q in quotes.items():
        p = q.prices.get(YES)
        out[mid] = p.ppm if p is not None else None
    return out


def stored_set(session: Session, cohort_id: int, round_key: str) -> AskedSet | None:
    """The round's stored set, or None when none was written."""
    rows = session.exec(select(ForecastQuestionRow).where(ForecastQuestionRow.cohort_id == cohort_id,
                                                          ForecastQuestionRow.round_key == round_key)
                        .order_by(col(ForecastQuestionRow.position))).all()
    if not rows:
        return None
    return AskedSet(round_key, rows[0].as_of,
                    tuple(Question(r.market_id, r.price_ppm, r.in_band, r.filled) for r in rows))


def round_set(engine: Engine, cohort: CohortRow, round_key: str, as_of: datetime, markets: Mapping[str, Market],
              quotes: Mapping[str, Quote], k: int) -> AskedSet:
    """The round's forecast set: the stored one, else chosen now from `markets` and `quotes` (the tradable
    universe at `as_of`) by the cohort's frozen rule, with at most `k` questions, and stored."""
    with Session(engine) as s:
        found = stored_set(s, cohort.id, round_key)  # type: ignore[arg-type]
    if found is not None:
        return found
    rules = cohort_rules(cohort).forecast
    questions = choose(markets, yes_prices(quotes), as_of, k, rules, round_seed(cohort.name, round_key))
    if not questions:
        return AskedSet(round_key, as_of, ())
    with session_scope(engine) as s:
        s.execute(update(CohortRow).where(col(CohortRow.id) == cohort.id)
                  .values(status=CohortRow.status))  # lock the cohort: one writer per round
        found = stored_set(s, cohort.id, round_key)  # type: ignore[arg-type]
        if found is not None:
            return found
        s.add_all(ForecastQuestionRow(cohort_id=cohort.id, round_key=round_key, market_id=q.market_id, position=i,
                                      price_ppm=q.price_ppm, in_band=q.in_band, filled=q.filled, as_of=as_of)
                  for i, q in enumerate(questions))
    return AskedSet(round_key, as_of, questions)


__all__ = ["AskedSet", "round_set", "stored_set", "yes_prices"]
