"""`snapshot.read_together`: readers that must agree see one snapshot — a fill committed while they run is in
none of their reads — side by side on PostgreSQL (own connections, the same exported snapshot), one after the
other in one transaction on SQLite; a reader's error reaches the caller; and `score.cohort_leaderboards`, which
reads its three frames this way, still scores what it scored reading them one by one."""

from __future__ import annotations

import threading
import pandas as pd
import pytest
from sqlalchemy import func, select, text
from sqlmodel import Session

from arena.scoring.leaderboard import leaderboard
from arena.read.score import cohort_leaderboards, portfolios_frame
from arena.store.frames import bets_frame, forecasts_frame
from arena.store.snapshot import read_together
from arena.store.tables import CohortRow, FillRow


def _fills(s: Session) -> int:
    return int(s.execute(select(func.count()).select_from(FillRow)).scalar_one())


def _one_more_fill(engine, n: int) -> None:  # type: ignore[no-untyped-def]
    """A buy recorded by another connection (a copy of the first fill under a new key), committed."""
    with engine.begin() as c:
        c.execute(text(
            "INSERT INTO fills (key, cohort_id, agent_id, market_id, outcome, kind, shares, cash_micros, cost_micros, "
            "price_ppm, mid_ppm, provenance, decision_id, resolution_version, at) "
            "SELECT :key, cohort_id, agent_id, market_id, outcome, kind, shares, cash_micros, cost_micros, price_ppm, "
            "mid_ppm, provenance, decision_id, resolution_version, at FROM fills ORDER BY id LIMIT 1"),
            {"key": f"meanwhile-{n}"})


def test_readers_see_one_snapshot_while_a_fill_is_committed(engine, one_bet_cohort, clock) -> None:  # type: ignore[no-untyped-def]
    one_bet_cohort(engine, 2000)
    with Session(engine) as s:
        before = _fills(s)
    committed = threading.Event()
    seen: dict[str, object] = {}

    def lead(s: Session) -> int:
        first = _fills(s)
        _one_more_fill(engine, 1)
        committed.set()
        return first + 1000 * (_fills(s) - first)  # the lead's own later read: still the snapshot's

    def follower(s: Session) -> int:
        assert committed.wait(30)
        if s.connection().dialect.name == "postgresql":
            seen["pid"] = s.execute(text("SELECT pg_backend_pid()")).scalar()
            seen["snap"] = s.execute(text("SELECT pg_current_snapshot()::text")).scalar()
        return _fills(s)

    def lead_snapshot(s: Session) -> object:
        if s.connection().dialect.name == "postgresql":
            return s.execute(text("SELECT pg_backend_pid()")).scalar(), s.execute(
                text("SELECT pg_current_snapshot()::text")).scalar()
        return None

    if engine.dialect.name == "postgresql":
        got = read_together(engine, [lambda s: (lead(s), lead_snapshot(s)), follower])
        (first, (pid, snap)), other = got
        assert seen["pid"] != pid and seen["snap"] == snap  # another connection, the very same snapshot
    else:
        first, other = read_together(engine, [lead, follower])
    assert first == before and other == before
    with Session(engine) as s:
        assert _fills(s) == before + 1  # the fill was committed: a read after the readers sees it


def test_a_readers_error_reaches_the_caller(engine, one_bet_cohort) -> None:  # type: ignore[no-untyped-def]
    one_bet_cohort(engine, 2000)

    def broken(s: Session) -> None:
        s.execute(text("SELECT * FROM no_such_table"))

    with Session(engine) as s:
        n = _fills(s)
    with pytest.raises(Exception, match="no_such_table"):
        read_together(engine, [_fills, broken])
    with pytest.raises(Exception, match="no_such_table"):
        read_together(engine, [broken, _fills])
    assert n >= 1 and read_together(engine, [_fills, _fills, _fills]) == [n, n, n]  # and reads go on


def test_cohort_leaderboards_equal_the_frames_read_one_by_one(engine, one_bet_cohort, clock) -> None:  # type: ignore[no-untyped-def]
    _, _, as_of = one_bet_cohort(engine, 2000)
    board = cohort_leaderboards(engine, as_of)
    with Session(engine) as s:
        ids = list(s.scalars(select(CohortRow.id).order_by(CohortRow.period_start)))
        alone = leaderboard(bets_frame(s, ids), portfolios_frame(s, as_of, ids), forecasts_frame(s, ids))
    assert len(board) == 1 and board["agent"].tolist() == ["a"]
    pd.testing.assert_frame_equal(board, alone)
