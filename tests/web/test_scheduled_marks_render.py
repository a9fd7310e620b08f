"""Cached standings equal a direct computation to the last bit after the board cache is emptied and the open
cohorts are marked hourly (`benchmarks/bench_render.py`'s sequence): the render after the marks computes the open
cohorts' boards alone, a later reader the others in one batch, and a board must not depend on the batch it was
computed in (pandas' grouped means pick their kernel by the whole frame; `scoring.board.cohort_boards`)."""

from __future__ import annotations

import importlib.util
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import delete, select

from arena.read.point_in_time import copy_as_of
from arena.read.standings import standings
from arena.store.engine import make_engine, migrate
from arena.cache.memo import forget_all
from arena.store.tables import CohortRow, MemoRow
from arena.web.render import render_site

ROOT = Path(__file__).resolve().parents[2]


def _bench_render():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("bench_render", ROOT / "benchmarks" / "bench_render.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.mark.slow
def test_cached_standings_equal_direct_ones_after_board_cache_clears_and_hourly_marks(tmp_path):
    bench = _bench_render()
    url = f"sqlite:///{tmp_path / 'bench.sqlite'}"
    as_of = bench.build(url, 30, 10, 10, 4, 3, 10)
    engine = make_engine(f"sqlite:///{tmp_path / 'now.sqlite'}")
    migrate(engine)
    copy_as_of(make_engine(url), as_of, engine)
    with engine.connect() as conn:
        open_cohorts = list(conn.scalars(select(CohortRow.name).where(CohortRow.status == "open")))

    def clear(cohorts: list[str] | None = None) -> None:
        with engine.begin() as conn:
            q = delete(MemoRow).where(MemoRow.kind != "frames")
            conn.execute(q if cohorts is None else q.where(MemoRow.cohort.in_(cohorts)))

    render_site(engine, tmp_path / "warm", as_of, statistics="none")
    clear()
    render_site(engine, tmp_path / "cold", as_of, statistics="none")
    for k in range(3):
        clear(open_cohorts)
        render_site(engine, tmp_path / f"site{k}", as_of, statistics="none")
    for k in range(3):
        bench.mark_open_cohorts(engine, as_of - timedelta(minutes=30 - k))
        render_site(engine, tmp_path / "site0", as_of, statistics="none")
    forget_all()
    cached = {c.name: c.rows for c in standings(engine, as_of).cohorts}
    direct = {c.name: c.rows for c in standings(engine, as_of, cache=False).cohorts}
    assert [n for n in direct if not direct[n].equals(cached[n])] == []
