"""Benchmark: the overall board (one pooled board per model over every cohort: forecast scores, cluster-bootstrap
intervals and tiers, the difficulty and IRT fits, bet metrics, money, crowd proxy) at 1,000 cohorts × 20 agents —
what a render recomputes after any change to a cohort's scored facts.

The frames are those the standings read (`services.frame_cache.cohort_frames`) from the site of
`bench_render.build` (1M stated forecasts, 480k fills). `scoring.board.overall_board` is timed in a fresh
process per checkout on the same frames (the first call, which also draws the clusters' bootstrap counts, and the
best and median of three calls after it). The previous path — by default commit 787db51, the last before the fits
shared one coding of the cells, checked out into a temporary `git worktree`; or any checkout given with
`--against` — is timed in the same run, the ratio printed and the two boards compared.

Usage: python benchmarks/bench_overall_board.py [--cohorts 1000] [--agents 20] [--previous COMMIT | --against DIR]
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing
sys.path.insert(0, str(Path(__file__).resolve().parent))

HERE = Path(__file__).resolve().parents[1]
PREVIOUS = "787db51"  # the last commit before the overall board's fits shared one coding of the cells

_TIMED = r"""
import pickle, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from arena.scoring.board import overall_board
forecasts, bets, ports, kinds = pickle.load(open(sys.argv[2], "rb"))
t = time.perf_counter(); board = overall_board(forecasts, bets, ports, kinds=kinds); first = time.perf_counter() - t
runs = []
for _ in range(3):
    t = time.perf_counter()
    board = overall_board(forecasts, bets, ports, kinds=kinds)
    runs.append(time.perf_counter() - t)
board.to_pickle(sys.argv[3])
print(first, min(runs), statistics.median(runs))
"""


def frames(cohorts: int, agents: int, out: Path) -> Path:
    import bench_render
    from sqlalchemy import select
    from sqlmodel import Session

    from arena.cache.frame_cache import cohort_frames
    from arena.read.point_in_time import copy_as_of
    from arena.store.engine import make_engine, migrate
    from arena.store.tables import AgentRow, CohortRow

    url = f"sqlite:///{out / 'bench.sqlite'}"
    as_of = bench_render.build(url, cohorts, agents, 10, 4, 3, 10)
    engine = make_engine(f"sqlite:///{out / 'now.sqlite'}")
    migrate(engine)  # (the migrations' triggers keep the versions the caches key on)
    copy_as_of(make_engine(url), as_of, engine)
    with Session(engine) as s:
        rows = s.execute(select(CohortRow.id, CohortRow.name).order_by(CohortRow.period_start, CohortRow.id)).all()
        kinds = {n: ("llm" if k == "llm" else "baseline") for n, k in s.execute(select(AgentRow.name, AgentRow.kind))}
    f = cohort_frames(engine, [(r[0], r[1]) for r in rows], as_of, cache=False)
    path = out / "frames.pickle"
    path.write_bytes(pickle.dumps((f.forecasts, f.bets, f.portfolios, kinds)))
    print(f"frames: {len(f.forecasts):,} forecast rows, {len(f.bets):,} bets, {len(f.portfolios):,} seats "
          f"({os.getloadavg()[0]:.1f} load)", flush=True)
    return path


def timed(checkout: Path, data: Path, board: Path) -> tuple[float, float, float]:
    done = subprocess.run([sys.executable, "-c", _TIMED, str(checkout), str(data), str(board)], check=True,
                          capture_output=True, text=True)
    first, best, median = map(float, done.stdout.split())
    return first, best, median


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cohorts", type=int, default=1000)
    ap.add_argument("--agents", type=int, default=20)
    ap.add_argument("--previous", default=PREVIOUS, help="the commit timed as the previous path (a git worktree)")
    ap.add_argument("--against", type=Path, help="another checkout timed as the previous path instead")
    args = ap.parse_args()
    if args.against is not None and not (args.against / "arena" / "scoring" / "board.py").is_file():
        sys.exit(f"error: {args.against} is not an arena checkout; make one with `git worktree add DIR COMMIT`")
    with tempfile.TemporaryDirectory() as d:
        if args.against is None:
            args.against = worktree(args.previous, Path(d) / "previous")
        try:
            run(args, Path(d))
        finally:
            if args.against == Path(d) / "previous":
                subprocess.run(["git", "-C", str(HERE), "worktree", "remove", "--force", str(args.against)],
                               capture_output=True)


def worktree(commit: str, where: Path) -> Path | None:
    """A checkout of `commit` at `where` (a git worktree of this repository), or None with a note when git cannot
    make one (no git, a shallow clone without that commit)."""
    done = subprocess.run(["git", "-C", str(HERE), "worktree", "add", "--detach", str(where), commit],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"note: the previous path ({commit}) is not timed: git could not check it out "
              f"({done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'no git'})")
        return None
    return where


def run(args: argparse.Namespace, d: Path) -> None:
    import pandas as pd

    t = time.perf_counter()
    data = frames(args.cohorts, args.agents, d)
    print(f"setup {time.perf_counter() - t:.1f} s", flush=True)
    runs = [("this checkout", HERE)] + ([("previous path", args.against)] if args.against else [])
    got = {}
    for name, checkout in (runs + runs[:1] if len(runs) > 1 else runs):  # A, B, then A again
        first, best, median = timed(checkout, data, d / f"{name}.pickle")
        got.setdefault(name, []).append(median)
        print(f"{name} ({checkout}): first call {first:.2f} s (draws the bootstrap counts), then best "
              f"{best:.2f} s, median {median:.2f} s", flush=True)
    if args.against:
        ours, theirs = min(got["this checkout"]), min(got["previous path"])
        a = pd.read_pickle(d / "this checkout.pickle")
        b = pd.read_pickle(d / "previous path.pickle")
        num = [c for c in a.columns if a[c].dtype.kind == "f" and c in b.columns]
        diff = max(((a[c] - b[c]).abs().max() for c in num), default=0.0)
        same = list(a["model"]) == list(b["model"]) and all(a[c].equals(b[c]) for c in a.columns if c not in num)
        print(f"overall board: {ours:.2f} s against {theirs:.2f} s on the previous path — {theirs / ours:.1f}x; "
              f"same rows and labels: {'yes' if same else 'NO'}, largest difference of a number {diff:.1e}")


if __name__ == "__main__":
    main()
