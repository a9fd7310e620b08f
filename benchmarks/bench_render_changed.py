"""Benchmark: a scheduled render of a 1,000-cohort site after one cohort changed (goal ≤ 5 s), beside a full
render of the same site — the previous path, measured in the same run and the same process.

The site: `bench_render.build` fills SQLite with N weekly cohorts × A agents (default 1,000 × 20: 31,000 pages,
480k fills, 1M stated forecasts, 1M portfolio snapshots), materialised as of the render time as the render job
sees it. Then, in one long-running process as the scheduler is:
1. a first render into an empty folder (every page built and written; the process's slices filled);
2. a full render again (`full=True`: every page built, and the per-cohort slices this change keeps in the process
   forgotten, so every cohort's standings and skill vs luck are read again) — the previous path, the baseline;
3. a render with nothing changed;
4. a render after one cohort changed (an agent's portfolio snapshot and a rejection: its pages only);
5. a render after an agent's new forecast (its cohort's pages, the pages of the markets it touched, the list);
6. a render after one market's price changed (the cohorts that touched it, and its page);
7. a render in a fresh process (the process memory emptied) after another cohort changed.
Each line shows pages built, pages kept, files written and the seconds per stage. The site after step 7 is
checked byte for byte against a full render into a second folder.

Usage: python benchmarks/bench_render_changed.py [--cohorts 1000] [--agents 20]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_render  # noqa: E402
from arena.read.point_in_time import copy_as_of  # noqa: E402
from arena.store.engine import make_engine, migrate, session_scope  # noqa: E402
from arena.cache.memo import forget_all  # noqa: E402
from arena.store.tables import (AgentRow, CohortRow, DecisionRow, FillRow, ForecastRow,  # noqa: E402
                                PortfolioSnapshotRow, PriceSnapshotRow, RejectionRow)
from arena.web.render import RenderReport, render_site  # noqa: E402
from arena.web.site_manifest import NAME  # noqa: E402

GOAL_SECONDS = 5.0


def load() -> str:
    return "load " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def show(what: str, r: RenderReport) -> None:
    built = sum(r.pages.values())
    kept = sum(r.kept.values())
    print(f"{what}: {r.seconds:.2f} s — {built:,} pages built, {kept:,} kept, {r.written:,} files written "
          f"({load()})")
    print("    " + ", ".join(f"{k} {v:.2f}" for k, v in r.stages.items() if v >= 0.005))


def change_one_cohort(engine, at) -> str:  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        cid, name = s.execute(select(CohortRow.id, CohortRow.name).where(CohortRow.status == "open")
                              .order_by(CohortRow.id.desc())).first()
        aid = s.scalars(select(AgentRow.id).where(AgentRow.cohort_id == cid).order_by(AgentRow.id)).first()
        did = s.scalars(select(DecisionRow.id).where(DecisionRow.agent_id == aid)).first()
        s.add(PortfolioSnapshotRow(cohort_id=cid, agent_id=aid, as_of=at, cash_micros=1, positions_value_micros=2,
                                   total_value_micros=3))
        s.add(RejectionRow(decision_id=did, action_index=0, reason="over_limit", message="over the limit", at=at))
    return name


def change_one_forecast(engine, at) -> str:  # type: ignore[no-untyped-def]
    """An agent of the newest open cohort states a forecast on a market it has not forecast (a decision's new
    fact: its cohort's frames move, so do the keys of every market that cohort touched and the market list)."""
    with session_scope(engine) as s:
        cid, name = s.execute(select(CohortRow.id, CohortRow.name).where(CohortRow.status == "open")
                              .order_by(CohortRow.id.desc())).first()
        aid = s.scalars(select(AgentRow.id).where(AgentRow.cohort_id == cid).order_by(AgentRow.id.desc())).first()
        did = s.scalars(select(DecisionRow.id).where(DecisionRow.agent_id == aid).order_by(DecisionRow.id)).first()
        mine = set(s.scalars(select(ForecastRow.market_id).where(ForecastRow.decision_id == did)))
        mid = next(m for m in s.scalars(select(FillRow.market_id).where(FillRow.cohort_id == cid)) if m not in mine)
        s.add(ForecastRow(decision_id=did, agent_id=aid, market_id=mid, source="bet", probability=0.42,
                          market_price_ppm=400_000, as_of=at, replicate=1))
    return f"{name}, {mid}"


def change_one_price(engine, at) -> str:  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        mid = s.scalars(select(FillRow.market_id).order_by(FillRow.id.desc())).first()
        last = s.scalars(select(PriceSnapshotRow).where(PriceSnapshotRow.market_id == mid)
                         .order_by(PriceSnapshotRow.id.desc())).first()
        s.add(PriceSnapshotRow(market_id=mid, outcome=last.outcome, price_ppm=max(1, last.price_ppm - 1_000),
                               observed_at=at, fetched_at=at, source="bench"))
    return mid


def forget_slices() -> None:
    """Forget what the incremental render keeps per cohort in the process (agent standings, skill vs luck, the
    model comparisons' pair rows), so a render computes them again as every render did before; the frame
    and board caches stay warm, as they were."""
    from arena.read import agent_standings, models, standings
    from arena.web import boards, skill_luck

    for memo in (agent_standings._SLICES, skill_luck._SLICES, models._PAIRS,
                 boards._RANKED, boards._DERIVED, standings._TRACKED, standings._JSON_ROWS):
        memo.clear()


def files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != NAME}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cohorts", type=int, default=1000)
    ap.add_argument("--agents", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        url = f"sqlite:///{Path(d) / 'bench.sqlite'}"
        as_of = bench_render.build(url, args.cohorts, args.agents, 10, 4, 3, 10)
        full_store = make_engine(url)
        engine = make_engine(f"sqlite:///{Path(d) / 'now.sqlite'}")
        migrate(engine)  # (the migrations' triggers keep the versions the caches key on)
        copy_as_of(full_store, as_of, engine)
        full_store.dispose()
        print(f"setup {time.perf_counter() - t:.1f} s; rendering as of {as_of:%Y-%m-%d %H:%M} ({load()})", flush=True)
        site = Path(d) / "site"
        show("1. first render, empty folder", render_site(engine, site, as_of, statistics="none"))
        forget_slices()
        baseline = render_site(engine, site, as_of, statistics="none", full=True)
        show("2. full render, the previous path (every page built; every cohort's standings and skill vs luck read "
             "again; frame and board caches warm)", baseline)
        show("3. nothing changed", render_site(engine, site, as_of, statistics="none"))
        rng = random.Random(3)
        name = change_one_cohort(engine, as_of - timedelta(seconds=rng.randint(60, 86_400)))
        changed = render_site(engine, site, as_of, statistics="none")
        show(f"4. one cohort changed ({name})", changed)
        what = change_one_forecast(engine, as_of - timedelta(seconds=rng.randint(60, 86_400)))
        show(f"5. one agent's new forecast ({what})", render_site(engine, site, as_of, statistics="none"))
        mid = change_one_price(engine, as_of - timedelta(seconds=rng.randint(60, 86_400)))
        show(f"6. one market's price changed ({mid})", render_site(engine, site, as_of, statistics="none"))
        forget_all()  # a fresh process (`arena render` from cron): only the memo table and the manifest kept
        name = change_one_cohort(engine, as_of - timedelta(seconds=rng.randint(60, 86_400)))
        fresh = render_site(engine, site, as_of, statistics="none")
        show(f"7. a fresh process after one cohort changed ({name})", fresh)
        forget_all()  # the check is computed from the facts alone, not from the slices this process kept
        check = render_site(engine, Path(d) / "check", as_of, statistics="none", full=True)
        same = files(site) == files(Path(d) / "check")
        print(f"site after step 7 equals a full render: {'yes' if same else 'NO'} ({check.total_pages:,} pages)")
        ok = changed.seconds <= GOAL_SECONDS
        print(f"one cohort changed: {changed.seconds:.2f} s (goal ≤ {GOAL_SECONDS:.0f} s: {'met' if ok else 'MISSED'}); "
              f"{baseline.seconds / changed.seconds:.1f}x the full render ({baseline.seconds:.1f} s)")
        engine.dispose()
        assert same


if __name__ == "__main__":
    main()
