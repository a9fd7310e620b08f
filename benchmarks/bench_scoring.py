"""Benchmark: crowd-proxy scoring of 1M forecasts (50,000 questions × 20 forecasters), all four aggregators.

Not a test. Run with `.venv/bin/python benchmarks/bench_scoring.py [--questions N] [--forecasters K]`.
Times arena.scoring.proxy.proxy_scores with and without leave-one-out (best of several runs, rows shuffled so the
code cannot rely on pre-grouped input), times a naive per-question Python loop on a subset of questions,
extrapolates it linearly to the full size, checks the two agree on the subset, and prints the speed-up.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from arena.scoring.proxy import AGGREGATORS, proxy_scores  # noqa: E402

GOAL_SECONDS = 1.0


def make_forecasts(n_questions: int, n_forecasters: int, seed: int) -> pd.DataFrame:
    """A long frame of forecasts with string ids (as read from a file), rows in random order."""
    rng = np.random.default_rng(seed)
    question = np.repeat(np.arange(n_questions), n_forecasters)
    forecaster = np.tile(np.arange(n_forecasters), n_questions)
    truth = rng.beta(0.7, 0.7, n_questions)[question]  # each question has a "true" probability the crowd circles
    p = np.clip(truth + rng.normal(0.0, 0.15, question.size), 0.0, 1.0)
    order = rng.permutation(question.size)
    return pd.DataFrame(
        {
            "question": pd.Series([f"q{i:06d}" for i in question[order]]),
            "forecaster": pd.Series([f"model-{i:02d}" for i in forecaster[order]]),
            "probability": p[order],
        }
    )


def _aggregates(values: list[float]) -> dict[str, float]:
    mean = sum(values) / len(values)
    clipped = [min(max(x, 1e-3), 1 - 1e-3) for x in values]
    mean_logit = sum(math.log(x / (1 - x)) for x in clipped) / len(clipped)
    return {
        "mean": mean,
        "median": statistics.median(values),
        "ext_mean": mean**2 / (mean**2 + (1 - mean) ** 2),
        "logit_pool": 1 / (1 + math.exp(-math.sqrt(3.0) * mean_logit)),
    }


def naive_proxy(frame: pd.DataFrame, leave_one_out: bool) -> pd.DataFrame:
    """The obvious implementation: a Python loop per question (and per forecast, for leave-one-out)."""
    errors: dict[str, dict[str, list[float]]] = {}
    for _, group in frame.groupby("question", sort=False):
        names = group["forecaster"].tolist()
        probs = group["probability"].tolist()
        shared = None if leave_one_out else _aggregates(probs)  # with own forecast: one aggregate per question
        for i, (name, p) in enumerate(zip(names, probs, strict=True)):
            if shared is None and len(probs) == 1:
                continue
            aggs = shared if shared is not None else _aggregates(probs[:i] + probs[i + 1 :])
            mine = errors.setdefault(name, {a: [] for a in AGGREGATORS})
            for a, y in aggs.items():
                mine[a].append((p - y) ** 2)
    return pd.DataFrame(
        [{"forecaster": f, **{f"proxy_{a}": sum(v) / len(v) for a, v in e.items()}} for f, e in errors.items()]
    )


def best_of(runs: int, fn) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    best, result = math.inf, None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=50_000)
    ap.add_argument("--forecasters", type=int, default=20)
    ap.add_argument("--naive-questions", type=int, default=2_000, help="subset size for the naive loop")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    t0 = time.perf_counter()
    frame = make_forecasts(args.questions, args.forecasters, args.seed)
    n = len(frame)
    print(f"{n:,} forecasts ({args.questions:,} questions x {args.forecasters} forecasters), "
          f"generated in {time.perf_counter() - t0:.2f} s")

    timings = {}
    for loo in (False, True):
        secs, _ = best_of(args.runs, lambda loo=loo: proxy_scores(frame, leave_one_out=loo))
        timings[loo] = secs
        label = "leave-one-out" if loo else "with own forecast"
        verdict = "OK" if secs <= GOAL_SECONDS else "OVER GOAL"
        print(f"vectorised, all 4 aggregators, {label:17s}: {secs:.3f} s  ({n / secs / 1e6:.2f} M forecasts/s)  "
              f"[goal <= {GOAL_SECONDS:.0f} s: {verdict}]")

    keep = {f"q{i:06d}" for i in range(min(args.naive_questions, args.questions))}
    subset = frame[frame["question"].isin(keep)].reset_index(drop=True)
    for loo in (False, True):
        secs, slow = best_of(1, lambda loo=loo: naive_proxy(subset, loo))
        fast = proxy_scores(subset, leave_one_out=loo).set_index("forecaster")
        slow = slow.set_index("forecaster").loc[fast.index]  # type: ignore[union-attr]
        worst = max(float(np.max(np.abs(fast[f"proxy_{a}"] - slow[f"proxy_{a}"]))) for a in AGGREGATORS)
        full = secs * n / len(subset)
        label = "leave-one-out" if loo else "with own forecast"
        print(f"naive loop, {label:17s}: {secs:.3f} s on {len(subset):,} forecasts -> ~{full:.1f} s for {n:,} "
              f"(extrapolated); speed-up ~{full / timings[loo]:.0f}x; max |fast - naive| = {worst:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
