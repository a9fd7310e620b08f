"""Benchmark: `arena replay run` over the recorded markets against `arena demo --replay` on the same file, and
the event-driven run (settle ticks that can only find nothing are not fired) against `--every-tick`.

`replay run` fires the scheduler's own job table on a simulated clock (sync daily at 00:00 — the replay's
granularity —, cohort start and decision round on Sundays, mark daily, settle hourly, with a claimed job run
per period), where the demo's loop runs each service once per simulated day. Both run as subprocesses on fresh
SQLite files in the same run, so the ratio is measured on the same machine load. Prints wall times, simulated
days, seconds per simulated day, the ratio, and what the replay run wrote (cohorts completed, marks, settles).

Usage: python benchmarks/bench_replay_run.py [--from 2025-11-02] [--until 2026-02-01] [--replay FILE]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import func, select
from sqlmodel import Session

from arena.store.engine import make_engine
from arena.store.tables import CohortRow, DecisionRow, FillRow, JobRunRow, PortfolioSnapshotRow

ROOT = Path(__file__).resolve().parents[1]
REPLAY = ROOT.parent / "shared" / "data" / "replay" / "replay_markets.jsonl"


def timed(argv: list[str]) -> tuple[float, str]:
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "arena", *argv], capture_output=True, text=True, cwd=ROOT)
    elapsed = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"arena {' '.join(argv)} failed:\n{done.stderr}")
    return elapsed, done.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--from", dest="start", default="2025-11-02")
    ap.add_argument("--until", default="2026-02-01")
    ap.add_argument("--replay", default=str(REPLAY))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run_url, demo_url = f"sqlite:///{tmp}/run.sqlite", f"sqlite:///{tmp}/demo.sqlite"
        run_s, run_out = timed(["replay", "run", args.replay, "--from", args.start, "--until", args.until,
                                "--baselines-only", "--db", run_url])
        tick_s, tick_out = timed(["replay", "run", args.replay, "--from", args.start, "--until", args.until,
                                  "--baselines-only", "--db", f"sqlite:///{tmp}/tick.sqlite", "--every-tick"])
        demo_s, demo_out = timed(["demo", "--replay", args.replay, "--start", args.start, "--db", demo_url])
        run_days = int(re.search(r"(\d+) simulated days", run_out).group(1))  # type: ignore[union-attr]
        demo_days = int(re.search(r"(\d+) simulated days", demo_out).group(1))  # type: ignore[union-attr]
        eng = make_engine(run_url)
        with Session(eng) as s:
            count = lambda q: int(s.scalar(q) or 0)  # noqa: E731
            cohorts = count(select(func.count()).select_from(CohortRow))
            completed = count(select(func.count()).select_from(CohortRow).where(CohortRow.status == "completed"))
            decisions = count(select(func.count()).select_from(DecisionRow))
            settles = count(select(func.count()).select_from(FillRow).where(FillRow.kind == "settle"))
            marks = count(select(func.count(func.distinct(PortfolioSnapshotRow.as_of))))
            runs = dict(s.execute(select(JobRunRow.job, func.count()).group_by(JobRunRow.job)).all())
        eng.dispose()
    print(f"arena replay run {args.start} → {args.until} --baselines-only: {run_s:.1f} s wall, {run_days} simulated "
          f"days ({run_s / run_days:.3f} s/day)")
    print(f"  job runs: {dict(sorted(runs.items()))}")
    print(f"  cohorts {cohorts} ({completed} completed), decisions {decisions}, settlement fills {settles}, "
          f"mark times {marks}")
    idle = re.search(r"not fired: (\d+)", run_out)
    print(f"  ticks not fired (nothing to do): {idle.group(1) if idle else 0}")
    print(f"the same with --every-tick: {tick_s:.1f} s wall ({tick_s / run_days:.3f} s/day); "
          f"event-driven / every tick: {run_s / tick_s:.2f}x; a simulated year at the event-driven rate: "
          f"{run_s / run_days * 365:.0f} s")
    print(f"arena demo --replay --start {args.start}: {demo_s:.1f} s wall, {demo_days} simulated days "
          f"({demo_s / demo_days:.3f} s/day)")
    print(f"ratio replay run / demo: {run_s / demo_s:.2f}x wall, {(run_s / run_days) / (demo_s / demo_days):.2f}x "
          "per simulated day")


if __name__ == "__main__":
    main()
