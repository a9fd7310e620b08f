"""Benchmark: one decision round of 20 LLM agents against a local stand-in endpoint with a fixed latency L.

Agents of a round run concurrently, so the round should take about as long as its slowest agent: the goal is
wall time ≤ 1.5 L. A sequential round (concurrency 1) is measured in the same run as the naive baseline.
The stand-in (tests/agents/standin.py) answers every call with a valid HOLD after sleeping L seconds.
Usage: python benchmarks/bench_round.py [--latency 1.0] [--agents 20]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "agents"))

from standin import StandinServer, hold_responder  # noqa: E402

from arena.config import parse_config  # noqa: E402
from arena.domain.market import YES, Market, Quote  # noqa: E402
from arena.money import Price  # noqa: E402
from arena.usecases import ingest  # noqa: E402
from arena.usecases.lifecycle import decision_round, start_current_cohort  # noqa: E402
from arena.store.engine import open_store, session_scope  # noqa: E402

SUNDAY = datetime(2026, 3, 1, tzinfo=timezone.utc)


def setup(url: str, base_url: str, n: int):  # type: ignore[no-untyped-def]
    agents = "\n".join(f'[[agents]]\nname = "model-{i:02d}"\nmodel = "m{i:02d}"\nbase_url = "{base_url}"\n'
                       f'api_key_env = "BENCH_KEY"\nmax_repairs = 0\n' for i in range(n))
    config = parse_config(f"baselines = false\n[cohort]\nforecast_set_size = 5\n{agents}")
    engine = open_store(url)
    markets = [Market(id=f"sim:{i}", venue="sim", question=f"Will {i} happen?",
                      close_time=SUNDAY + timedelta(days=20), volume_24h=float(100 - i)) for i in range(30)]
    with session_scope(engine) as s:
        ingest.record_observations(s, SUNDAY, markets,
                                   [Quote(m.id, {YES: Price.of("0.5")}, SUNDAY, SUNDAY, source="b") for m in markets])
    start_current_cohort(engine, SUNDAY, config)
    return engine, config


def timed_round(latency: float, n: int, concurrency: int) -> tuple[float, dict]:
    with StandinServer(default=hold_responder(), latency_s=latency) as server, tempfile.TemporaryDirectory() as d:
        engine, config = setup(f"sqlite:///{d}/b.sqlite", server.base_url, n)
        t = time.perf_counter()
        rounds = decision_round(engine, SUNDAY + timedelta(minutes=5), config, {"BENCH_KEY": "k"},
                                concurrency=concurrency)
        wall = time.perf_counter() - t
        statuses: dict[str, int] = {}
        for outs in rounds.values():
            for o in outs:
                statuses[o.status] = statuses.get(o.status, 0) + 1
        engine.dispose()
        return wall, statuses


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--agents", type=int, default=20)
    args = ap.parse_args()
    L, n = args.latency, args.agents
    conc, st = timed_round(L, n, concurrency=32)
    print(f"concurrent round: {n} agents, latency L = {L:.2f} s → {conc:.2f} s = {conc / L:.2f} L "
          f"[goal ≤ 1.5 L]  decisions: {st}")
    seq, st2 = timed_round(L, n, concurrency=1)
    print(f"sequential round (naive): {seq:.2f} s = {seq / L:.2f} L  decisions: {st2}")
    print(f"speed-up: {seq / conc:.1f}×")


if __name__ == "__main__":
    main()
