"""Point in time, tested the honest way: run a simulation to T and render the site there (nothing later exists
yet), run it on, render as of T again and compare every page byte for byte; the store copied as of T holds
exactly the rows the store held at T; `arena serve --as-of` serves those pages."""

from __future__ import annotations

import argparse
import threading
import urllib.request
from datetime import timedelta
from pathlib import Path

from sqlalchemy import func, select
from sqlmodel import SQLModel

from arena.agents.baselines import demo_lineup
from arena.cli_web import configure_serve_parser
from arena.domain.sizing import CohortRules
from arena.usecases.cohorts import LineupEntry
from arena.read.point_in_time import NOT_COPIED, copy_as_of, recorded_after, store_as_of
from arena.usecases.simulation import simulate
from arena.store.tables import CohortRow, FillRow
from arena.venues.simulated import SimulatedUniverse
from arena.web.render import render_site
from arena.web.site_manifest import NAME
from tests.web.conftest import START

STOP_DAY = 9  # a Tuesday of the second week: cohort 2 not yet started, cohort 1 open, some markets resolved


def _pages(out: Path) -> dict[str, bytes]:
    # the site manifest is the render's bookkeeping, not a page: its keys may name a copy's ids
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file() and p.name != NAME}


def _table_rows(engine) -> dict[str, list[tuple]]:  # type: ignore[no-untyped-def]
    out = {}
    with engine.connect() as conn:
        for table in SQLModel.metadata.sorted_tables:
            if table.name in NOT_COPIED:  # counters of every write up to now: a copy as of T starts without them
                continue
            # a market changed after T keeps its later `updated_at` and the sync's change-detection bookkeeping
            # (hashes, the last stored quote's time): the store keeps no history of them, and no page reads them
            later = {"updated_at", "content_hash", "description_hash", "quote_hash", "quote_at"}
            cols = [c for c in table.c if not (table.name == "markets" and c.name in later)]
            rows = conn.execute(select(*cols).order_by(*(table.c[k] for k in table.primary_key.columns.keys()))).all()
            out[table.name] = [tuple(str(v) if v is not None else None for v in r) for r in rows]
    return out


def test_site_as_of_t_equals_the_site_a_run_stopped_at_t_showed(engine, tmp_path):
    universe = SimulatedUniverse.generate(5, START, weeks=4, markets_per_week=10)
    agents = demo_lineup(universe, 5)
    lineup = [LineupEntry(a.name, "scripted") for a in agents]
    stop = START + timedelta(days=STOP_DAY)
    as_of = stop + timedelta(hours=23, minutes=30)  # after that day's mark, before the next day's sync
    saved: dict[str, object] = {}

    def on_day(now) -> None:  # type: ignore[no-untyped-def]
        if now == stop:  # the run "stopped" here: render what it showed, and keep the store's rows
            assert not recorded_after(engine, as_of)
            render_site(engine, tmp_path / "then", as_of, statistics="all")
            saved["rows"] = _table_rows(engine)

    simulate(engine, universe, {a.name: a for a in agents}, START, 2, CohortRules(decision_weeks=2), lineup,
             START + timedelta(days=75), forecast_k=8, on_day=on_day)
    assert "rows" in saved
    assert recorded_after(engine, as_of)  # the run went on: fills, resolutions, a second cohort, completions
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(CohortRow)
                            .where(CohortRow.completed_at.is_not(None))).scalar_one() >= 1  # type: ignore[union-attr]
        assert conn.execute(select(func.count()).select_from(FillRow).where(FillRow.at > as_of)).scalar_one() > 0

    render_site(engine, tmp_path / "now", as_of, statistics="all")
    then, now = _pages(tmp_path / "then"), _pages(tmp_path / "now")
    assert sorted(then) == sorted(now)
    differ = [p for p in then if then[p] != now[p]]
    assert differ == [], f"pages differ as of T: {differ[:5]}"
    assert b"status-completed" not in then["index.html"]

    # the store as of T is the store at T, row for row (a market changed later is rewound by its status rule)
    with store_as_of(engine, as_of) as past:
        assert past is not engine
        assert _table_rows(past) == _rows_as_sqlite(saved["rows"])


def _rows_as_sqlite(rows):  # type: ignore[no-untyped-def]
    """Times as the SQLite copy spells them (naive UTC): the only difference a PostgreSQL source makes."""
    out = {}
    for name, rs in rows.items():
        out[name] = [tuple(v.replace("+00:00", "") if isinstance(v, str) and v.endswith("+00:00") else v for v in r)
                     for r in rs]
    return out


def test_copy_as_of_leaves_out_what_came_later(sim_arena, tmp_path):
    from sqlmodel import create_engine

    engine = sim_arena.engine
    early = START + timedelta(days=2, hours=12)
    target = create_engine(f"sqlite:///{tmp_path / 'early.sqlite'}")
    counts = copy_as_of(engine, early, target)
    with engine.connect() as conn:
        all_fills = conn.execute(select(func.count()).select_from(FillRow)).scalar_one()
        early_fills = conn.execute(select(func.count()).select_from(FillRow).where(FillRow.at <= early)).scalar_one()
    assert counts["fills"] == early_fills < all_fills
    assert counts["cohorts"] == 1  # the second cohort starts a week later
    with target.connect() as conn:
        assert conn.execute(select(CohortRow.status)).scalars().all() == ["open"]
    target.dispose()


def test_serve_as_of_serves_the_rewound_pages(sim_arena, tmp_path, monkeypatch):
    early = START + timedelta(days=2, hours=12)
    render_site(sim_arena.engine, tmp_path / "site", early)
    url = sim_arena.engine.url.render_as_string(hide_password=False)
    args = configure_serve_parser(argparse.ArgumentParser()).parse_args(
        ["--db", url, "--port", "0", "--as-of", early.isoformat()])
    box: list = []
    ready = threading.Event()
    import arena.web.serve as serve_mod

    real_serve = serve_mod.serve

    def serve(engine, host, port, clock=None, on_ready=None, quiet=False):  # type: ignore[no-untyped-def]
        def hook(server):  # type: ignore[no-untyped-def]
            box.append(server)
            ready.set()
        return real_serve(engine, host, port, clock, hook, True)

    monkeypatch.setattr(serve_mod, "serve", serve)
    thread = threading.Thread(target=args.func, args=(args,), daemon=True)
    thread.start()
    assert ready.wait(20)
    server = box[0]
    try:
        for page in ("index.html", "operations.html"):
            with urllib.request.urlopen(server.url + page, timeout=20) as resp:
                body = resp.read()
            assert body == (tmp_path / "site" / page).read_bytes(), page
    finally:
        server.shutdown()
        thread.join(10)


def test_serve_as_of_rejects_a_bad_time(capsys):
    from arena.cli import main

    assert main(["serve", "--as-of", "yesterday"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--as-of" in err[0]


def test_the_sqlite_fast_copy_and_the_row_by_row_copy_agree(sim_arena, tmp_path):
    from sqlmodel import create_engine

    engine = sim_arena.engine
    if engine.url.get_backend_name() != "sqlite":
        return  # the fast path is SQLite to SQLite; on PostgreSQL the row-by-row copy is the one the suite tests
    t = START + timedelta(days=9, hours=12)  # mid-run: fills and resolutions on both sides of t
    fast = create_engine(f"sqlite:///{tmp_path / 'fast.sqlite'}")
    slow = create_engine("sqlite://")  # in memory: the row-by-row path
    assert copy_as_of(engine, t, fast) == copy_as_of(engine, t, slow)
    assert _table_rows(fast) == _table_rows(slow)
    with fast.connect() as conn:
        assert conn.execute(select(func.count()).select_from(FillRow)).scalar_one() > 0
    fast.dispose()
    slow.dispose()
