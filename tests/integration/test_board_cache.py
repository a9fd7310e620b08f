"""The board cache: cached boards equal computed ones, cold and warm, now and as of a past time; a new fact moves
only its cohort's key; a store that cannot hold the cache still serves the boards; entries per cohort are bounded."""

import logging
import math
from datetime import timedelta

import numpy as np
import pandas as pd
import pytest
from three_cohorts import LATER, START, simulate_three_cohorts
from sqlalchemy import func, insert, select, text, update
from sqlmodel import Session

from arena.cache import board_cache
from arena.read import standings as standings_module
from arena.cache.memo import forget_all
from arena.cache.memo import MemoTable
from arena.scoring.board import overall_bet_part, overall_board, overall_forecast_part
from arena.cache.board_cache import (KEEP_PER_COHORT, OVERALL, PARTS, cohort_keys, decode, decode_part, encode,
                                        encode_part)
from arena.cache.frame_cache import cohort_frames
from arena.read.point_in_time import store_as_of
from arena.read.score import portfolios_frame
from arena.read.standings import standings
from arena.store.tables import (AgentRow, CohortRow, MemoRow, FillRow, ForecastRow, PriceSnapshotRow,
                                ResolutionRow)
from arena.store.frames import bets_frame, forecast_set_frame

N_BOOT = 80


@pytest.fixture
def arena_db(engine):
    return simulate_three_cohorts(engine)


def _same(a, b) -> None:
    assert [c.name for c in a.cohorts] == [c.name for c in b.cohorts]
    for x, y in zip(a.cohorts, b.cohorts):
        assert x.status == y.status
        pd.testing.assert_frame_equal(x.rows, y.rows, check_exact=True)
    pd.testing.assert_frame_equal(a.overall, b.overall, check_exact=True)


def _entries(engine, *, overall: bool = False, parts: bool = False) -> int:
    """Stored cohort boards (with `overall`: stored overall boards; with `parts`: stored cohort parts)."""
    kept = ((MemoRow.cohort == OVERALL) if overall else (MemoRow.kind == "cohort part") if parts
            else (MemoRow.kind == "board") & (MemoRow.cohort != OVERALL))
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(MemoRow).where(kept)).scalar_one()


def test_cached_boards_equal_computed_boards_cold_warm_and_as_of(arena_db, monkeypatch):
    computed = standings(arena_db, LATER, n_boot=N_BOOT, cache=False)
    assert _entries(arena_db) == 0
    cold = standings(arena_db, LATER, n_boot=N_BOOT)
    assert _entries(arena_db) == len(computed.cohorts) == 3
    assert _entries(arena_db, parts=True) == 3  # each cohort's bootstraps and fits, which a mark leaves as they are
    assert _entries(arena_db, overall=True) == 1
    with arena_db.connect() as conn:  # the overall board's forecast and bet parts, stored beside it
        assert conn.execute(select(func.count()).select_from(MemoRow)
                            .where(MemoRow.cohort == PARTS, MemoRow.kind == "overall part")).scalar_one() == 2
    # warm: no cohort is recomputed (the scoring function is not even called) and the boards are the same
    for name in ("cohort_part", "finish_cohort_board"):
        monkeypatch.setattr(board_cache, name, lambda *a, **k: pytest.fail("recomputed a cached board"))
    warm = standings(arena_db, LATER, n_boot=N_BOOT)
    _same(computed, cold)
    _same(computed, warm)
    monkeypatch.undo()
    # other options are other keys
    standings(arena_db, LATER, n_boot=N_BOOT, rank_by="implied_brier")
    assert _entries(arena_db) == 6
    assert _entries(arena_db, overall=True) == 2
    # as of a past time (a point-in-time copy of the store) the inputs differ, so do the keys and the boards
    mid = START + timedelta(days=10)
    with store_as_of(arena_db, mid) as past:
        then_computed = standings(past, mid, n_boot=N_BOOT, cache=False)
        then_cached = standings(past, mid, n_boot=N_BOOT)
    _same(then_computed, then_cached)
    assert then_computed.cohorts[0].status == "open"


def test_a_new_fact_moves_only_its_cohorts_key(arena_db):
    with Session(arena_db) as s:
        ids = [c for (c,) in s.execute(select(CohortRow.id).order_by(CohortRow.id))]
        frames = (forecast_set_frame(s, ids, LATER), bets_frame(s, ids, LATER),
                  portfolios_frame(s, LATER, ids, point_in_time=True))
    opts = dict(kinds={}, options=dict(rank_by="forecast_brier", n_boot=N_BOOT, seed=0))
    before = cohort_keys(*frames, **opts)
    assert len(set(before.values())) == 3
    forecasts = frames[0].copy()
    # (a row whose flip changes it: the always-0.5 reference's 1 − 0.5 is 0.5 again)
    first = forecasts.index[(forecasts["cohort"] == forecasts["cohort"].iloc[0])
                            & (forecasts["probability"] != 0.5)][0]
    forecasts.loc[first, "probability"] = 1 - forecasts.loc[first, "probability"]
    after = cohort_keys(forecasts, *frames[1:], **opts)
    changed = [c for c in before if before[c] != after[c]]
    assert changed == [forecasts["cohort"].iloc[0]]
    # the options and the kinds of a cohort's agents are inputs too
    assert cohort_keys(*frames, kinds={}, options=dict(rank_by="forecast_brier", n_boot=N_BOOT, seed=1)) != before
    agent = frames[0]["agent"].iloc[0]
    moved = cohort_keys(*frames, kinds={agent: "reference"}, options=opts["options"])
    assert moved != before


def test_a_changed_fact_is_recomputed_not_served_stale(arena_db):
    warm = standings(arena_db, LATER, n_boot=N_BOOT)
    with Session(arena_db) as s:  # a stated forecast on a resolved question of the first cohort, moved
        row = s.execute(
            select(ForecastRow).join(ResolutionRow, ResolutionRow.market_id == ForecastRow.market_id)
            .join(AgentRow, AgentRow.id == ForecastRow.agent_id).join(CohortRow, CohortRow.id == AgentRow.cohort_id)
            .where(ForecastRow.source == "forecast_set", CohortRow.name == warm.cohorts[0].name,
                   ResolutionRow.kind == "winner")
            .order_by(ForecastRow.id)).scalars().first()
        moved = 0.99 if row.probability < 0.5 else 0.01
        s.execute(update(ForecastRow).where(ForecastRow.id == row.id).values(probability=moved))
        s.commit()
    fresh = standings(arena_db, LATER, n_boot=N_BOOT)
    computed = standings(arena_db, LATER, n_boot=N_BOOT, cache=False)
    _same(computed, fresh)
    assert not warm.cohorts[0].rows.equals(fresh.cohorts[0].rows)


def test_a_store_that_cannot_hold_the_cache_still_serves_the_boards(arena_db, caplog):
    computed = standings(arena_db, LATER, n_boot=N_BOOT, cache=False)
    with arena_db.begin() as conn:
        conn.execute(text("DROP TABLE memo"))
    MemoTable._warned.clear()
    with caplog.at_level(logging.WARNING, logger="arena.cache.memo"):
        served = standings(arena_db, LATER, n_boot=N_BOOT)
    _same(computed, served)
    assert any("memo (board)" in r.getMessage() for r in caplog.records)


def test_entries_per_cohort_are_bounded(arena_db):
    for seed in range(KEEP_PER_COHORT + 3):
        standings(arena_db, LATER, n_boot=20, seed=seed)
    with arena_db.connect() as conn:
        per = dict(conn.execute(select(MemoRow.cohort, func.count()).where(MemoRow.kind == "board")
                                .group_by(MemoRow.cohort)).all())
        parts = dict(conn.execute(select(MemoRow.cohort, func.count()).where(MemoRow.kind.in_(["cohort part", "overall part"]))
                                  .group_by(MemoRow.cohort)).all())
    assert per.pop(OVERALL) == KEEP_PER_COHORT
    assert parts.pop(PARTS) == KEEP_PER_COHORT  # (a forecast and a bet part per seed: the newest kept)
    assert len(per) == 3 and set(per.values()) == {KEEP_PER_COHORT}
    assert set(parts) == set(per) and set(parts.values()) == {KEEP_PER_COHORT}  # each kind trimmed on its own


def test_a_fresh_process_reads_the_overall_board_from_the_store(arena_db, monkeypatch):
    """A fresh process (`arena render` from cron) finds every board stored, the overall one included: nothing is
    refitted, and the boards equal those computed; a changed cohort recomputes the overall board."""
    computed = standings(arena_db, LATER, n_boot=N_BOOT, cache=False)
    standings(arena_db, LATER, n_boot=N_BOOT)
    forget_all()
    for name in ("cohort_part", "finish_cohort_board"):
        monkeypatch.setattr(board_cache, name, lambda *a, **k: pytest.fail("recomputed a cached board"))
    monkeypatch.setattr(standings_module, "overall_board", lambda *a, **k: pytest.fail("refitted the overall board"))
    _same(computed, standings(arena_db, LATER, n_boot=N_BOOT))
    monkeypatch.undo()
    with Session(arena_db) as s:  # a new stated forecast's probability moved: the overall board's inputs moved
        row = s.execute(select(ForecastRow).where(ForecastRow.source == "forecast_set", ForecastRow.probability > 0.6)
                        .order_by(ForecastRow.id)).scalars().first()
        s.execute(update(ForecastRow).where(ForecastRow.id == row.id).values(probability=0.01))
        s.commit()
    forget_all()
    calls = []
    real = standings_module.overall_board
    monkeypatch.setattr(standings_module, "overall_board", lambda *a, **k: calls.append(1) or real(*a, **k))
    moved = standings(arena_db, LATER, n_boot=N_BOOT)
    assert calls == [1]
    _same(standings(arena_db, LATER, n_boot=N_BOOT, cache=False), moved)
    assert _entries(arena_db, overall=True) == 2


def test_payload_round_trip_is_exact():
    frame = pd.DataFrame({
        "agent": pd.Series(["a", None, "c"], dtype="str"),
        "x": [0.1 + 0.2, float("nan"), 1e-300],
        "n": np.array([1, 2, 3], dtype=np.int64),
        "flag": [True, False, True],
        "note": pd.Series(["", None, "tooltip"], dtype=object),
    })
    back = decode(encode(frame))
    assert list(back.dtypes) == list(frame.dtypes)
    pd.testing.assert_frame_equal(frame, back, check_exact=True)
    assert back["x"].iloc[0] == 0.1 + 0.2 and math.isnan(back["x"].iloc[1])
    with pytest.raises(ValueError, match="format"):
        decode('{"format": 0}')


def test_boards_decoded_together_equal_boards_decoded_one_by_one(engine, clock):
    """`decode_many` (a fresh process's boards, built as one frame per shape and cut) gives what `decode` gives for
    each payload — boards of two shapes, an empty board, one with no columns — and a batch holding an entry of
    another format costs only that entry."""
    wide = pd.DataFrame({"agent": pd.Series(["a", None, "c"], dtype="str"), "x": [0.1 + 0.2, float("nan"), 1e-300],
                         "n": np.array([1, 2, 3], dtype=np.int64), "flag": [True, False, True],
                         "note": pd.Series(["", None, "tip"], dtype=object)})
    narrow = pd.DataFrame({"agent": pd.Series(["z"], dtype="str"), "x": [2.5]})
    boards = [wide, narrow, wide.iloc[1:].reset_index(drop=True), wide.iloc[:0], narrow, pd.DataFrame(), wide]
    payloads = [encode(b) for b in boards]
    together = board_cache.decode_many(payloads)
    assert len(together) == len(boards)
    for b, p, got in zip(boards, payloads, together):
        pd.testing.assert_frame_equal(got, decode(p), check_exact=True)
        pd.testing.assert_frame_equal(got, b, check_exact=True, check_index_type=False, check_column_type=False)
    together[0].loc[0, "x"] = 99.0  # a board cut from the shared frame is its own: the last board is untouched
    assert together[-1]["x"].iloc[0] == 0.1 + 0.2
    store = board_cache._store(engine)
    store.save({f"k{i}": ("c", b) for i, b in enumerate(boards)}, [], clock.now())
    with engine.begin() as conn:
        conn.execute(update(MemoRow).where(MemoRow.key == "k1").values(payload=b'{"format": 0}'))
    loaded = store.load([f"k{i}" for i in range(len(boards))])
    assert sorted(loaded) == sorted(f"k{i}" for i in range(len(boards)) if i != 1)
    pd.testing.assert_frame_equal(loaded["k6"], wide, check_exact=True)


def _price_a_held_market(engine, at, price_ppm: int, source: str) -> tuple[str, str]:
    """A new price snapshot, at `at`, of a market some cohort holds open then; returns (market, outcome)."""
    with Session(engine) as s:
        held = s.execute(select(FillRow.market_id, FillRow.outcome).where(FillRow.at <= at)
                         .group_by(FillRow.cohort_id, FillRow.market_id, FillRow.outcome)
                         .having(func.sum(FillRow.shares) > 0).order_by(FillRow.cohort_id, FillRow.market_id)).first()
        assert held is not None
        s.execute(insert(PriceSnapshotRow).values(market_id=held[0], outcome=held[1], price_ppm=price_ppm,
                                                  observed_at=at, fetched_at=at, source=source))
        s.commit()
    return str(held[0]), str(held[1])


def test_a_price_change_refits_neither_the_forecast_nor_the_bet_part_of_the_overall_board(arena_db, monkeypatch):
    """A new price of a held market moves the holders' portfolios only: the overall board is recomputed from the
    forecast and bet parts this process kept (by the digests of the frames they came from) and equals the board
    computed whole; a new forecast moves the forecast frame, whose part is computed again."""
    mid = START + timedelta(days=9)
    before = standings(arena_db, mid, n_boot=N_BOOT)
    made = []
    for name in ("overall_forecast_part", "overall_bet_part"):
        real = getattr(board_cache, name)
        monkeypatch.setattr(board_cache, name,
                            lambda *a, _real=real, _name=name, **k: made.append(_name) or _real(*a, **k))
    held = _price_a_held_market(arena_db, mid, 123_456, "test")
    priced = standings(arena_db, mid, n_boot=N_BOOT)
    assert made == []
    pnl = lambda b: b.overall.set_index("model")["pnl"].sort_index()  # noqa: E731
    assert not pnl(priced).equals(pnl(before))  # the board moved with the price: it was computed, not kept
    whole = standings(arena_db, mid, n_boot=N_BOOT, cache=False)
    pd.testing.assert_frame_equal(priced.overall, whole.overall, check_exact=True)
    forget_all()  # a fresh process (`arena render` from cron) reads both parts from the store
    with Session(arena_db) as s:
        s.execute(insert(PriceSnapshotRow).values(market_id=held[0], outcome=held[1], price_ppm=654_321,
                                                  observed_at=mid, fetched_at=mid, source="test, later"))
        s.commit()
    fresh = standings(arena_db, mid, n_boot=N_BOOT)
    assert made == []
    assert not pnl(fresh).equals(pnl(priced))
    pd.testing.assert_frame_equal(fresh.overall, standings(arena_db, mid, n_boot=N_BOOT, cache=False).overall,
                                  check_exact=True)
    with Session(arena_db) as s:  # an agent's forecast moves: its frame's digest, so the forecast part, moves
        row = s.execute(select(ForecastRow).where(ForecastRow.source == "forecast_set", ForecastRow.as_of <= mid)
                        .order_by(ForecastRow.id)).scalars().first()
        s.execute(update(ForecastRow).where(ForecastRow.id == row.id)
                  .values(probability=0.99 if row.probability < 0.5 else 0.01))
        s.commit()
    moved = standings(arena_db, mid, n_boot=N_BOOT)
    assert made == ["overall_forecast_part"]
    pd.testing.assert_frame_equal(moved.overall, standings(arena_db, mid, n_boot=N_BOOT, cache=False).overall,
                                  check_exact=True)


def test_the_overall_board_parts_round_trip_through_their_stored_text(arena_db):
    """Both parts, as stored, decode to equal frames and tiers (every rank key's tier kind: forecast, proper score,
    bet metric), and a payload of another kind is refused."""
    with Session(arena_db) as s:
        cohorts = [tuple(r) for r in s.execute(select(CohortRow.id, CohortRow.name).order_by(CohortRow.id)).all()]
    frames = cohort_frames(arena_db, cohorts, LATER)
    assert len(frames.forecasts) and len(frames.bets)
    for rank_by in ("forecast_brier", "log_score", "implied_brier"):
        options = dict(rank_by=rank_by, n_boot=N_BOOT, seed=3)
        fpart = overall_forecast_part(frames.forecasts, **options)
        bpart = overall_bet_part(frames.bets, **options)
        fback, bback = decode_part(encode_part(fpart)), decode_part(encode_part(bpart))
        for x, y in ((fpart.table, fback.table), (fpart.pairs, fback.pairs), (fpart.proxy, fback.proxy),
                     (bpart.per, bback.per)):
            pd.testing.assert_frame_equal(x, y, check_exact=True)
        assert list(fpart.tiers) == list(fback.tiers) and fpart.tiers
        for name, tier in fpart.tiers.items():
            pd.testing.assert_series_equal(tier, fback.tiers[name], check_exact=True)
        assert (bpart.tier is None) == (rank_by != "implied_brier") == (bback.tier is None)
        if bpart.tier is not None:
            pd.testing.assert_series_equal(bpart.tier, bback.tier, check_exact=True)
        whole = overall_board(frames.forecasts, frames.bets, frames.portfolios, **options)
        pd.testing.assert_frame_equal(whole, overall_board(frames.forecasts, frames.bets, frames.portfolios, **options,
                                                           forecast_part=fback, bet_part=bback), check_exact=True)
    with pytest.raises((ValueError, KeyError)):
        decode_part(encode(whole))  # a board's payload is not a part


def test_a_price_change_finishes_the_held_cohorts_boards_from_their_kept_parts(arena_db, monkeypatch):
    """A new price of a held market moves the holders' portfolios only: their boards are computed again, but from
    the cohort parts (bootstraps, fits) kept by the digests of their forecast-set and bet rows — in this process
    and in a fresh one — and equal the boards computed whole; a moved forecast computes its cohort's part again."""
    mid = START + timedelta(days=9)
    before = standings(arena_db, mid, n_boot=N_BOOT)
    parts, finished = [], []
    real_part, real_finish = board_cache.cohort_part, board_cache.finish_cohort_board
    monkeypatch.setattr(board_cache, "cohort_part",
                        lambda f, *a, **k: parts.append(f["cohort"].iloc[0]) or real_part(f, *a, **k))
    monkeypatch.setattr(board_cache, "finish_cohort_board",
                        lambda part, *a, **k: finished.append(1) or real_finish(part, *a, **k))
    _price_a_held_market(arena_db, mid, 123_456, "test")
    for fresh in (False, True):
        if fresh:
            forget_all()  # a fresh process reads the parts from the store
            _price_a_held_market(arena_db, mid, 654_321, "later")
        finished.clear()
        priced = standings(arena_db, mid, n_boot=N_BOOT)
        assert parts == [] and finished, fresh  # boards finished anew, no part recomputed
        _same(standings(arena_db, mid, n_boot=N_BOOT, cache=False), priced)
    assert any(not a.rows.equals(b.rows) for a, b in zip(before.cohorts, priced.cohorts))  # the money moved
    with Session(arena_db) as s:  # one agent's forecast moves: its cohort's part is computed again, alone
        row, cohort = s.execute(
            select(ForecastRow, CohortRow.name).join(AgentRow, AgentRow.id == ForecastRow.agent_id)
            .join(CohortRow, CohortRow.id == AgentRow.cohort_id)
            .where(ForecastRow.source == "forecast_set", ForecastRow.as_of <= mid).order_by(ForecastRow.id)).first()
        s.execute(update(ForecastRow).where(ForecastRow.id == row.id)
                  .values(probability=0.99 if row.probability < 0.5 else 0.01))
        s.commit()
    moved = standings(arena_db, mid, n_boot=N_BOOT)
    assert parts == [cohort]
    _same(standings(arena_db, mid, n_boot=N_BOOT, cache=False), moved)


def test_a_cohort_part_round_trips_exactly(arena_db):
    from arena.scoring.board import cohort_part

    with Session(arena_db) as s:
        cohorts = [tuple(r) for r in s.execute(select(CohortRow.id, CohortRow.name).order_by(CohortRow.id)).all()]
    frames = cohort_frames(arena_db, cohorts, LATER, cache=False)
    first = frames.forecasts["cohort"].iloc[0]
    part = cohort_part(frames.forecasts[frames.forecasts["cohort"] == first],
                       frames.bets[frames.bets["cohort"] == first], n_boot=N_BOOT)
    back = board_cache.decode_cohort_part(board_cache.encode_cohort_part(part))
    for name in vars(part):
        got, want = getattr(back, name), getattr(part, name)
        assert (got is None) == (want is None), name
        if want is not None:
            pd.testing.assert_frame_equal(got, want, check_exact=True, check_index_type=False,
                                          check_column_type=False)
    with pytest.raises(ValueError, match="cohort part"):
        board_cache.decode_cohort_part(board_cache.encode_part(overall_bet_part(frames.bets)))
