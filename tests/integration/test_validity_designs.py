"""The validity benchmark's arena designs: the quick mode runs on a tiny design and prints every design and column;
the simulated arenas have the structure they claim (rounds, shared markets, a persistent error, the gamers' rules)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.arena_designs import (ABSTAIN_BAND, GAMERS, HONEST, REPLAY_FILE, SEATS, TWIN, Design,  # noqa: E402
                                      load_prices, simulate_run)

DESIGN = Design("t", "wide", rounds=3, questions=20, cohorts=3, shared=0.5, market_error_sd=1.0,
                round_error_sd=0.5)


@pytest.mark.slow
def test_quick_mode_prints_every_design_and_column(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, str(ROOT / "benchmarks" / "validity.py"), "--designs-only", "--quick", "--runs", "1",
           "--paths", "2", "--questions", "12", "--cohorts", "2", "--rounds", "3", "--shared-markets", "0.25",
           "--boot", "50", "--seed", "7", "--replay", str(tmp_path / "absent.jsonl")]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    header = next(line for line in lines if line.strip().startswith("design"))
    for column in ("Spearman", "cohort cov.", "overall cov.", "false wins", *GAMERS.values(), "any gamer, paired"):
        assert column in header
    labels = ["wide, 1 round", "wide, 3 rounds", "wide, 3 rounds, 25% shared", "narrow, 1 round",
              "narrow, 3 rounds", "narrow, 3 rounds, 25% shared"]
    for label in labels:
        row = [line for line in lines if line.strip().startswith(label + " ")]
        assert len(row) == 1, label
        cells = row[0].strip()[len(label):].split()
        numbers = [c for c in cells if c not in ("missed",) and not c.startswith("[") and c != "s]"]
        assert len(numbers) == 9, row  # Spearman, two coverages, false wins, four gamers, the paired check
    assert "no replay file" in out.stdout and "Beta(0.9, 0.9)" in out.stdout
    assert "2 cohorts x 16 intervals" in out.stdout


def test_a_bad_design_option_exits_2_and_says_why():
    cmd = [sys.executable, str(ROOT / "benchmarks" / "validity.py"), "--designs-only", "--shared-markets", "1.5"]
    out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                         timeout=120)
    assert out.returncode == 2 and "--shared-markets must lie in [0, 1)" in out.stderr and out.stdout == ""


def test_simulated_runs_have_the_arena_structure():
    prices = load_prices(Path("/nonexistent/replay.jsonl"))
    rows = simulate_run(DESIGN, prices, np.random.default_rng(3))
    # every seat on every market@round of every cohort, each market asked in every round
    assert len(rows) == DESIGN.cohorts * DESIGN.questions * DESIGN.rounds * len(SEATS)
    per_market = rows.groupby(["cohort", "market_id"])["round"].nunique()
    assert (per_market == DESIGN.rounds).all()
    # consecutive cohorts share half their markets
    members = {c: set(g) for c, g in rows.groupby("cohort")["market_id"]}
    cohorts = sorted(members)
    for a, b in zip(cohorts, cohorts[1:]):
        assert len(members[a] & members[b]) == DESIGN.questions // 2
    # a market resolves once: one outcome and one resolution time whichever cohort asked it
    assert (rows.groupby("market_id")[["outcome_yes", "resolved_at"]].nunique() == 1).all().all()
    # the abstainer answers exactly the questions priced outside its band; the others answer every question
    ab = rows[rows["agent"] == GAMERS["abstainer"]]
    inside = (ab["market_price"] > ABSTAIN_BAND[0]) & (ab["market_price"] < ABSTAIN_BAND[1])
    assert (ab["answered"] == ~inside).all() and inside.any()
    assert (ab.loc[inside, "probability"] == 0.5).all()
    assert rows.loc[rows["agent"] != GAMERS["abstainer"], "answered"].all()
    copier = rows[rows["agent"] == GAMERS["copier"]]
    assert np.allclose(copier["probability"], copier["market_price"])
    # an oracle (skill 0) states the truth: the same on a market in every round and cohort
    oracle = rows[rows["agent"] == HONEST[0]]
    assert (oracle.groupby("market_id")["probability"].nunique() == 1).all()
    # a seat with skill varies between rounds (per-round error) around a persistent error
    twin = rows[rows["agent"] == TWIN]
    assert (twin.groupby(["cohort", "market_id"])["probability"].nunique() == DESIGN.rounds).all()


@pytest.mark.shared
def test_prices_come_from_the_replay_file_when_present():
    if not REPLAY_FILE.is_file():
        pytest.skip("needs ../shared/data/replay")
    prices = load_prices()
    assert "replay file" in prices.source and prices.weights is not None
    x = prices.draw(5000, np.random.default_rng(0))
    assert x.min() >= 0.05 and x.max() <= 0.95
    assert set(np.round(x, 10)) <= set(np.round(prices.values, 10))
