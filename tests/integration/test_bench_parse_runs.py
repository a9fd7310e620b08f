"""The sync benchmark runs end to end at a small size: every option, both paths, their equal reports (it asserts
them itself) and the lines a reader quotes (not its timings: speed is shown by the benchmark, not by a test)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_parse_runs_with_every_option(capsys, monkeypatch):
    spec = importlib.util.spec_from_file_location("bench_parse", ROOT / "benchmarks" / "bench_parse.py")
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_parse", bench)
    spec.loader.exec_module(bench)  # type: ignore[union-attr]
    assert bench.main(["--n", "150", "--repeat", "1", "--naive"]) == 0
    out = capsys.readouterr().out
    assert "150 built from" in out
    assert "second sync, 1 % of prices changed" in out and "(150 ok, 0 markets written, 2 snapshots)" in out
    assert "second / first" in out and "naive upsert (row by row" in out
    assert "Manifold LiteMarkets: 150 built" in out and "total simulated sleep" in out
