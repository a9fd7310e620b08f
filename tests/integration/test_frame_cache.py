"""The frame cache: the standings' frames served from it equal the frames read from the facts — cold, warm, after
each kind of new fact, after a hand edit, as of a past time — and only the cohorts whose facts changed are read;
the process's memo never serves one database's frames to another; a store without the table still serves."""

import logging
import uuid
from datetime import datetime, timedelta

import pandas as pd
import pytest
from three_cohorts import LATER, START, simulate_three_cohorts
from sqlalchemy import func, insert, select, text, update
from sqlalchemy.engine import make_url
from sqlmodel import Session

from arena.cache import codec, frame_cache
from arena.cache.frame_cache import cohort_frames
from arena.read.fact_versions import cohort_markets
from arena.read.standings import standings
from arena.store.engine import make_engine, migrate
from arena.cache.memo import MemoTable, forget_all
from arena.store.tables import (AgentRow, CohortRow, FillRow, ForecastRow, MemoRow, PriceSnapshotRow,
                                ResolutionRow)

MID = START + timedelta(days=9)
N_BOOT = 40
_simulate = simulate_three_cohorts


@pytest.fixture
def arena_db(engine):
    return _simulate(engine)


def _cohorts(engine):
    with Session(engine) as s:
        return s.execute(select(CohortRow.id, CohortRow.name).order_by(CohortRow.period_start, CohortRow.id)).all()


def _same(a, b) -> None:
    for name in frame_cache.NAMES:
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=True)


def _check(engine, as_of):
    """Frames through the cache equal frames read directly; returns the cached call's result."""
    cohorts = _cohorts(engine)
    cached = cohort_frames(engine, cohorts, as_of)
    _same(cohort_frames(engine, cohorts, as_of, cache=False), cached)
    return cached


def _names(engine, ids):
    return sorted(n for i, n in _cohorts(engine) if i in ids)


def _copy_fill(engine, cohort_name: str, at: datetime) -> None:
    """One more buy in the named cohort: a copy of its first buy under a new key (a fill is append-only)."""
    with Session(engine) as s:
        row = s.execute(select(FillRow).join(CohortRow, CohortRow.id == FillRow.cohort_id)
                        .where(CohortRow.name == cohort_name, FillRow.kind == "buy").order_by(FillRow.id)).scalars().first()
        values = {c.name: getattr(row, c.name) for c in FillRow.__table__.columns if c.name != "id"}
        s.execute(insert(FillRow).values({**values, "key": f"extra-{uuid.uuid4().hex}", "at": at}))
        s.commit()


def test_cached_frames_equal_read_frames_and_only_changed_cohorts_are_read(arena_db):
    cohorts = _cohorts(arena_db)
    assert len(cohorts) == 3
    cold = _check(arena_db, LATER)
    assert len(cold.read) == 3 and len(cold.bets) and len(cold.forecasts) and len(cold.portfolios) == 3 * len(
        cold.portfolios[cold.portfolios["cohort"] == cohorts[0][1]])
    warm = _check(arena_db, LATER)
    assert warm.read == () and warm.keys == cold.keys
    # a new fill: only its cohort is read again, and its rows name a new key
    _copy_fill(arena_db, cohorts[1][1], LATER - timedelta(days=1))
    after = _check(arena_db, LATER)
    assert _names(arena_db, after.read) == [cohorts[1][1]]
    assert [n for n in cold.keys if cold.keys[n] != after.keys[n]] == [cohorts[1][1]]
    # a hand edit of a stated probability (not something the arena does, but seen all the same)
    with Session(arena_db) as s:
        row = s.execute(select(ForecastRow).join(AgentRow, AgentRow.id == ForecastRow.agent_id)
                        .where(AgentRow.cohort_id == cohorts[2][0], ForecastRow.source == "forecast_set")
                        .order_by(ForecastRow.id)).scalars().first()
        moved = 0.99 if row.probability < 0.5 else 0.01  # (1 − p would leave an always-0.5 row as it was)
        s.execute(update(ForecastRow).where(ForecastRow.id == row.id).values(probability=moved))
        s.commit()
    assert _names(arena_db, _check(arena_db, LATER).read) == [cohorts[2][1]]
    assert _check(arena_db, LATER).read == ()


def test_a_new_resolution_version_rereads_the_cohorts_that_touch_its_market(arena_db):
    _check(arena_db, LATER)
    with Session(arena_db) as s:
        market = s.execute(select(FillRow.market_id).where(FillRow.cohort_id == _cohorts(arena_db)[0][0])
                           .order_by(FillRow.id)).scalars().first()
        latest = s.execute(select(ResolutionRow).where(ResolutionRow.market_id == market)
                           .order_by(ResolutionRow.version.desc())).scalars().first()
        touching = set(s.execute(select(FillRow.cohort_id).where(FillRow.market_id == market)).scalars()) | set(
            s.execute(select(AgentRow.cohort_id).join(ForecastRow, ForecastRow.agent_id == AgentRow.id)
                      .where(ForecastRow.market_id == market)).scalars())
        flipped = {k: 1_000_000 - int(v) for k, v in latest.payouts.items()} if latest.kind == "winner" else latest.payouts
        s.execute(insert(ResolutionRow).values(market_id=market, version=latest.version + 1, kind=latest.kind,
                                               payouts=flipped, recorded_at=LATER - timedelta(hours=1),
                                               source="test"))
        s.commit()
    after = _check(arena_db, LATER)
    assert set(after.read) == touching and touching


def test_a_new_price_rereads_only_the_cohorts_whose_facts_name_its_market_and_a_past_as_of_is_exact(arena_db):
    first = _check(arena_db, MID)
    assert _check(arena_db, MID).read == ()
    with Session(arena_db) as s:  # a market some cohort holds open at MID
        held = s.execute(select(FillRow.cohort_id, FillRow.market_id, FillRow.outcome).where(FillRow.at <= MID)
                         .group_by(FillRow.cohort_id, FillRow.market_id, FillRow.outcome)
                         .having(func.sum(FillRow.shares) > 0)).all()
        assert held
        cohort_id, market, outcome = held[0]
        holders = {c for c, m, _ in held if m == market}
        naming = {c for c, ms in cohort_markets(s.connection(), [c for c, _ in _cohorts(arena_db)])[0].items()
                  if market in ms}
        assert holders <= naming
        s.execute(insert(PriceSnapshotRow).values(market_id=market, outcome=outcome, price_ppm=123_456,
                                                  observed_at=MID, fetched_at=MID, source="test"))
        s.commit()
    after = _check(arena_db, MID)
    assert set(after.read) == naming
    moved = after.portfolios[after.portfolios["total_value"] != first.portfolios["total_value"]]
    assert len(moved) and set(moved["cohort"]) <= set(_names(arena_db, holders))
    # the entries of LATER are still there and still right
    _check(arena_db, LATER)
    assert _check(arena_db, LATER).read == ()


def test_standings_through_the_caches_equal_standings_computed_whole(arena_db, monkeypatch):
    computed = standings(arena_db, LATER, n_boot=N_BOOT, cache=False)
    standings(arena_db, LATER, n_boot=N_BOOT)
    reads = []
    real = frame_cache._read
    monkeypatch.setattr(frame_cache, "_read", lambda s, ids, *a, **k: reads.append(list(ids)) or real(s, ids, *a, **k))
    warm = standings(arena_db, LATER, n_boot=N_BOOT)
    assert reads == []
    for x, y in zip(computed.cohorts, warm.cohorts):
        pd.testing.assert_frame_equal(x.rows, y.rows, check_exact=True)
    pd.testing.assert_frame_equal(computed.overall, warm.overall, check_exact=True)
    name = computed.cohorts[0].name
    _copy_fill(arena_db, name, LATER - timedelta(days=2))
    changed = standings(arena_db, LATER, n_boot=N_BOOT)
    assert [_names(arena_db, r) for r in reads] == [[name]]
    recomputed = standings(arena_db, LATER, n_boot=N_BOOT, cache=False)
    for x, y in zip(recomputed.cohorts, changed.cohorts):
        pd.testing.assert_frame_equal(x.rows, y.rows, check_exact=True)
    pd.testing.assert_frame_equal(recomputed.overall, changed.overall, check_exact=True)
    assert not changed.cohorts[0].rows.equals(computed.cohorts[0].rows)


def _second_database(engine, tmp_path):
    if engine.dialect.name == "sqlite":
        other = make_engine(f"sqlite:///{tmp_path / 'other.sqlite'}")
    else:
        schema = f"t_{uuid.uuid4().hex[:12]}"
        with engine.begin() as c:
            c.execute(text(f'CREATE SCHEMA "{schema}"'))
        url = make_url(engine.url.render_as_string(hide_password=False))
        other = make_engine(url.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(
            hide_password=False))
    migrate(other)
    return other


def test_the_process_memo_never_serves_another_databases_frames(arena_db, tmp_path):
    _check(arena_db, LATER)
    other = _simulate(_second_database(arena_db, tmp_path))
    try:
        with Session(other) as s:  # the same facts but for one name: the same marks, so the same keys
            s.execute(update(AgentRow).where(AgentRow.name == "random").values(name="renamed"))
            s.commit()
        served = _check(other, LATER)
        assert len(served.read) == 3
        assert "renamed" in set(served.bets["agent"]) and "random" not in set(served.portfolios["agent"])
    finally:
        other.dispose()


def test_a_store_without_the_frame_cache_table_still_serves_the_frames(arena_db, caplog):
    with arena_db.begin() as conn:
        conn.execute(text(f"DROP TABLE {MemoRow.__tablename__}"))
    MemoTable._warned.clear()
    with caplog.at_level(logging.WARNING, logger="arena.cache.memo"):
        first = _check(arena_db, LATER)
        second = _check(arena_db, LATER)
    assert len(first.read) == len(second.read) == 3  # nothing stored: every cohort read each time
    assert any("memo (frames)" in r.getMessage() for r in caplog.records)


def test_a_fresh_process_decodes_the_stored_entries_without_reading_a_fact(arena_db, monkeypatch):
    """What `arena render` from cron does: nothing in memory, every entry decoded from its stored bytes — the frames
    equal the frames read from the facts, and no cohort is read."""
    _check(arena_db, LATER)
    with arena_db.connect() as conn:
        payloads = conn.execute(select(MemoRow.payload).where(MemoRow.kind == "frames")).scalars().all()
    assert len(payloads) == 3 and all(bytes(p).startswith(codec.MAGIC) for p in payloads)
    forget_all()
    reads = []
    real = frame_cache._read
    monkeypatch.setattr(frame_cache, "_read", lambda s, ids, *a, **k: reads.append(list(ids)) or real(s, ids, *a, **k))
    fresh = cohort_frames(arena_db, _cohorts(arena_db), LATER)
    assert reads == [] and fresh.read == ()
    # and having decoded them once, the process holds them: the stored heads name the entries it holds
    monkeypatch.setattr(frame_cache, "decode", lambda payload: pytest.fail("decoded an entry the process holds"))
    _same(fresh, cohort_frames(arena_db, _cohorts(arena_db), LATER))
    monkeypatch.undo()
    _same(cohort_frames(arena_db, _cohorts(arena_db), LATER, cache=False), fresh)


def test_the_one_memo_table_migration_upgrades_and_downgrades(engine):
    """Migration 0019 replaces `board_cache` and `frame_cache` by `memo`; down and up again, the cache still
    serves."""
    from sqlalchemy import inspect

    from arena.store.engine import current_revision

    assert "memo" in inspect(engine).get_table_names()
    migrate(engine, "0018")
    names = set(inspect(engine).get_table_names())
    assert current_revision(engine) == "0018" and {"board_cache", "frame_cache"} <= names and "memo" not in names
    migrate(engine)
    names = set(inspect(engine).get_table_names())
    assert "memo" in names and not {"board_cache", "frame_cache"} & names
    simulate_three_cohorts(engine)
    forget_all()
    assert len(_check(engine, LATER).read) == 3
    forget_all()
    assert _check(engine, LATER).read == ()