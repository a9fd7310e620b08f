"""Benchmark: what a fresh process (`arena render` from cron) pays to read the memo table, against reading the facts.

The store: `bench_render.build` fills SQLite with N weekly cohorts × A agents, materialised as of the render time;
one `standings` fills the `memo` table (every cohort's frames, board and board parts). Then, with the process
memory emptied before each run (what a fresh process starts with), best of 3:
1. the three input frames of every cohort read from the facts (`cohort_frames(cache=False)`) — the baseline;
2. the same frames decoded from the memo table (`cohort_frames`), which must be equal, frame for frame;
3. every cohort's board decoded from the memo table one payload at a time, and all at once (`decode_many`);
4. the standings (every board and the overall board) in a fresh process.
It prints the memo table's payload bytes per kind.

Usage: python benchmarks/bench_memo.py [--cohorts 300] [--agents 10]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import pandas as pd  # noqa: E402
from sqlalchemy import func, select  # noqa: E402

import bench_render  # noqa: E402
from arena.cache import board_cache  # noqa: E402
from arena.cache.frame_cache import NAMES, cohort_frames  # noqa: E402
from arena.cache.memo import forget_all  # noqa: E402
from arena.read.point_in_time import copy_as_of  # noqa: E402
from arena.read.standings import standings  # noqa: E402
from arena.store.engine import make_engine, migrate  # noqa: E402
from arena.store.tables import CohortRow, MemoRow  # noqa: E402


def best(run: Callable[[], object], repeat: int = 3) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        forget_all()
        t = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cohorts", type=int, default=300)
    ap.add_argument("--agents", type=int, default=10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        url = f"sqlite:///{Path(d) / 'full.sqlite'}"
        as_of = bench_render.build(url, args.cohorts, args.agents, 10, 4, 3, 10)
        engine = make_engine(f"sqlite:///{Path(d) / 'now.sqlite'}")
        migrate(engine)
        copy_as_of(make_engine(url), as_of, engine)
        with engine.connect() as conn:
            cohorts = [(i, n) for i, n in conn.execute(select(CohortRow.id, CohortRow.name).order_by(CohortRow.id))]
        t = time.perf_counter()
        standings(engine, as_of)
        print(f"{len(cohorts)} cohorts; the memo table filled by a cold standings in {time.perf_counter() - t:.1f} s",
              flush=True)

        facts_s, facts = best(lambda: cohort_frames(engine, cohorts, as_of, cache=False))
        memo_s, memo = best(lambda: cohort_frames(engine, cohorts, as_of))
        for name in NAMES:
            pd.testing.assert_frame_equal(getattr(facts, name), getattr(memo, name), check_exact=True)
        print(f"frames of every cohort, fresh process: from the facts {facts_s:.3f} s, from the memo {memo_s:.3f} s "
              f"({facts_s / memo_s:.1f}×); equal frame for frame: yes")

        with engine.connect() as conn:
            payloads = list(conn.scalars(select(MemoRow.payload).where(MemoRow.kind == "board",
                                                                       MemoRow.cohort != board_cache.OVERALL)))
            sizes = conn.execute(select(MemoRow.kind, func.count(), func.sum(func.length(MemoRow.payload)))
                                 .group_by(MemoRow.kind)).all()
        one_s, one = best(lambda: [board_cache.decode(p) for p in payloads])
        many_s, many = best(lambda: board_cache.decode_many(payloads))
        for a, b in zip(one, many):  # type: ignore[call-overload]
            pd.testing.assert_frame_equal(a, b, check_exact=True)
        print(f"{len(payloads)} boards decoded: one at a time {one_s:.3f} s, all at once {many_s:.3f} s "
              f"({one_s / many_s:.1f}×); equal: yes")

        fresh_s, _ = best(lambda: standings(engine, as_of))
        print(f"standings in a fresh process (every board and the overall board from the memo): {fresh_s:.3f} s")
        print("memo payloads: " + "; ".join(f"{kind} {n:,} entries, {size / 1e6:.1f} MB" for kind, n, size in sizes))
        engine.dispose()


if __name__ == "__main__":
    main()
