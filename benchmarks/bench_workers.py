"""Benchmark: one decision round of 1,000 LLM agents on PostgreSQL, decided by 1, 2 and 4 `arena worker`
processes against the loopback stand-in endpoint with a fixed latency L.

Each run gets a fresh database holding one cohort of N agents (default 1,000) and a fresh stand-in that
answers every call with a valid HOLD after L seconds. Measured per run: the wall time from starting the
processes to the last one exiting (`--until-done`), in seconds and in units of L; the decisions and model
calls (each must equal N: no seat decided twice, none lost); the most calls the stand-in ever answered at once.

- today's path: `arena round` (one process, 32 decisions in flight) — the baseline of the ratios;
- `arena worker` × 1, 2, 4 (each `--concurrency C`, default 32): the scaling ratio is T(1 worker) / T(W);
- 4 workers with `--endpoint-limit` K (default 32): the limit must hold across processes (max in flight ≤ K),
  so the round takes about as long as one worker's.

The ideal is N / (W·C) · L plus start-up; on a 2-core machine the CPU each decision costs (view, prompt,
parse, fills) bounds the speed-up once W·C calls are in flight. Skips with a clear message when no
PostgreSQL server is reachable. Run: ``.venv/bin/python benchmarks/bench_workers.py [--agents 1000]
[--latency 1.0] [--concurrency 32] [--workers 1,2,4] [--url URL]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "agents"))

from sqlalchemy import func, select  # noqa: E402
from sqlmodel import Session  # noqa: E402

from bench_scale_pg import DEFAULT_URL, throwaway  # noqa: E402
from standin import StandinServer, hold_responder  # noqa: E402
from test_workers import AT, KEY, config_text, seed  # noqa: E402

from arena.store.tables import DecisionRow, ModelCallRow  # noqa: E402


def one_run(url: str, n: int, latency: float, command: list[list[str]]) -> dict | None:
    made = throwaway(url)
    if made is None:
        return None
    engine, drop = made
    try:
        with StandinServer(default=hold_responder(), latency_s=latency) as server, \
                tempfile.TemporaryDirectory() as d:
            t = time.perf_counter()
            seed(engine, server.base_url, n)
            setup = time.perf_counter() - t
            cfg = Path(d) / "arena.toml"
            cfg.write_text(config_text(server.base_url, n))
            db = engine.url.render_as_string(hide_password=False)
            env = dict(os.environ, **{KEY: "k", "PYTHONPATH": str(ROOT)})
            t = time.perf_counter()
            procs = [subprocess.Popen([sys.executable, "-m", "arena", *argv, "--db", db, "--config", str(cfg),
                                       "--at", AT.isoformat()], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True) for argv in command]
            for p in procs:
                _, err = p.communicate()
                if p.returncode != 0:
                    raise SystemExit(f"{' '.join(p.args[:5])} failed: {err[-2000:]}")
            wall = time.perf_counter() - t
            with Session(engine) as s:
                decisions = s.scalar(select(func.count()).select_from(DecisionRow).where(DecisionRow.status == "hold"))
                calls = s.scalar(select(func.count()).select_from(ModelCallRow))
            return {"wall": wall, "setup": setup, "decisions": decisions, "calls": calls,
                    "requests": len(server.requests), "max_in_flight": server.max_in_flight}
    finally:
        drop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=1.0, help="the stand-in's latency L, seconds")
    ap.add_argument("--concurrency", type=int, default=32, help="decisions in flight per worker")
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--limit", type=int, default=32, help="--endpoint-limit of the limited run")
    ap.add_argument("--url", default=os.environ.get("ARENA_BENCH_DATABASE_URL", DEFAULT_URL))
    args = ap.parse_args()
    n, L, c = args.agents, args.latency, args.concurrency
    print(f"decision round of {n} agents, stand-in latency L = {L:g} s, {c} decisions in flight per process")

    def report(label: str, r: dict, base: float | None) -> None:
        ok = "ok" if r["decisions"] == n == r["calls"] == r["requests"] else "MISMATCH"
        print(f"  {label:<34} {r['wall']:7.1f} s = {r['wall'] / L:6.1f} L"
              + (f"   ×{base / r['wall']:.2f} vs today's path" if base else "")
              + f"   decisions {r['decisions']}, calls {r['calls']} ({ok}); max in flight {r['max_in_flight']}"
              )

    base = one_run(args.url, n, L, [["round"]])
    if base is None:
        return
    report("today: arena round (1 process)", base, None)
    print(f"  (seeding the cohort of {n} agents took {base['setup']:.1f} s, not counted)")
    walls: dict[int, float] = {}
    for w in [int(x) for x in args.workers.split(",")]:
        r = one_run(args.url, n, L, [["worker", "--until-done", "--concurrency", str(c), "--poll", "0.5"]] * w)
        assert r is not None
        walls[w] = r["wall"]
        report(f"{w} worker(s)", r, base["wall"])
        ideal = n / (w * c) * L
        one = walls.get(1)
        print(f"    ideal {ideal:.1f} s = {ideal / L:.1f} L (N / (W·C) · L)"
              + (f"; scaling vs 1 worker ×{one / r['wall']:.2f} (ideal ×{w})" if one and w > 1 else ""))
    w = max(walls)
    r = one_run(args.url, n, L, [["worker", "--until-done", "--concurrency", str(c), "--poll", "0.5",
                                  "--endpoint-limit", str(args.limit)]] * w)
    assert r is not None
    report(f"{w} workers, --endpoint-limit {args.limit}", r, base["wall"])
    held = "held" if r["max_in_flight"] <= args.limit else "BROKEN"
    print(f"    goal: the limit holds across processes: max in flight {r['max_in_flight']} ≤ {args.limit} ({held}); "
          f"ideal {n / args.limit * L:.1f} s = {n / args.limit:.1f} L")


if __name__ == "__main__":
    main()
