"""The scoring leaderboard, the model-level Brier, the metric registry, and the purity of arena.scoring."""

from __future__ import annotations

import ast
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arena.scoring import METRICS
from arena.scoring.leaderboard import (
    LEADERBOARD_COLUMNS,
    crowd_proxy,
    leaderboard,
    model_brier_across_cohorts,
    per_bet_scores,
)

NAN = float("nan")


def bets_frame() -> pd.DataFrame:
    rows = [
        # agent A, cash $10,000, max bet $2,500
        # A1: YES $2,000 → confidence 0.8, f 0.8; YES price 0.6, resolves YES: Brier 0.04, market 0.16;
        #     Kelly stake 0.2 → 0.6 + 0.2·0.4 = 0.68 → (0.32)² = 0.1024; stated 0.7 → 0.09; won
        ("A", "c1", "m1", "YES", 2000.0, 2500.0, 10000.0, 0.6, 1.0, False, 0.7),
        # A2: NO $1,250 → confidence 0.5, f 0.5; YES price 0.3, resolves YES: Brier 0.25, market 0.49;
        #     Kelly stake 0.125 → P(NO) = 0.7 + 0.125·0.3 = 0.7375 → f 0.2625 → 0.7375²; no stated; lost
        ("A", "c1", "m2", "NO", 1250.0, 2500.0, 10000.0, 0.3, 1.0, False, NAN),
        # A3: unresolved; A4: void although the venue reported an outcome — neither is scored
        ("A", "c1", "m3", "YES", 500.0, 2500.0, 10000.0, 0.5, NAN, False, 0.9),
        ("A", "c1", "m4", "YES", 2500.0, 2500.0, 10000.0, 0.5, 0.0, True, 0.9),
        # agent B: NO $2,500 (max) → f 0; YES price 0.8, resolves NO: Brier 0, market 0.64;
        #     Kelly stake 0.25 → P(NO) = 0.2 + 0.25·0.8 = 0.4 → f 0.6 → 0.36; won
        ("B", "c1", "m1", "NO", 2500.0, 2500.0, 10000.0, 0.8, 0.0, False, NAN),
    ]
    cols = [
        "agent",
        "cohort",
        "market_id",
        "side",
        "amount",
        "max_bet",
        "cash_at_decision",
        "price_yes_at_bet",
        "outcome_yes",
        "void",
        "stated_probability",
    ]
    return pd.DataFrame(rows, columns=cols)


def portfolios_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "agent": ["A", "B", "C"],
            "cohort": ["c1", "c1", "c1"],
            "starting_balance": [10_000.0, 10_000.0, 10_000.0],
            "total_value": [10_700.0, 7_000.0, 10_000.0],
        }
    )


def test_per_bet_scores_by_hand() -> None:
    s = per_bet_scores(bets_frame())
    np.testing.assert_allclose(s["confidence"], [0.8, 0.5, 0.2, 1.0, 1.0])
    np.testing.assert_allclose(s["f_yes"], [0.8, 0.5, 0.2, 1.0, 0.0])
    assert s["resolved"].tolist() == [True, True, False, False, True]
    np.testing.assert_allclose(s["brier"], [0.04, 0.25, NAN, NAN, 0.0])
    # A3 stakes 0.05 of cash at 0.5: 0.5 + 0.05·0.5; A4 stakes 0.25 at 0.5: 0.5 + 0.25·0.5 (computed, just not scored)
    np.testing.assert_allclose(s["p_kelly"], [0.68, 0.2625, 0.525, 0.625, 0.6])
    np.testing.assert_allclose(s["brier_market"], [0.16, 0.49, NAN, NAN, 0.64])
    np.testing.assert_allclose(s["won"], [1.0, 0.0, NAN, NAN, 1.0])


def test_leaderboard_by_hand() -> None:
    board = leaderboard(bets_frame(), portfolios_frame())
    assert list(board.columns) == ["cohort", "agent", *LEADERBOARD_COLUMNS]
    assert board["agent"].tolist() == ["B", "A", "C"]  # best Brier first, no Brier last
    a = board.set_index("agent").loc["A"]
    assert (a["n_bets"], a["n_resolved"]) == (4, 2)
    assert a["brier"] == pytest.approx((0.04 + 0.25) / 2)
    assert a["brier_kelly"] == pytest.approx((0.1024 + 0.7375**2) / 2)
    assert a["brier_stated"] == pytest.approx(0.09)  # only A1 stated a probability and resolved
    assert a["bss_vs_0_25"] == pytest.approx(1 - 0.145 / 0.25)
    assert a["bss_vs_market"] == pytest.approx(1 - 0.145 / ((0.16 + 0.49) / 2))
    assert a["pnl"] == pytest.approx(700.0)
    assert a["return_pct"] == pytest.approx(7.0)
    assert a["win_rate"] == pytest.approx(0.5)
    assert (a["brier_band"], a["return_band"]) == ("Good", "Good")

    b = board.set_index("agent").loc["B"]
    assert b["brier"] == 0.0 and b["brier_band"] == "Perfect"
    assert b["bss_vs_market"] == pytest.approx(1.0)
    assert b["brier_kelly"] == pytest.approx(0.36)
    assert math.isnan(b["brier_stated"])
    assert b["return_pct"] == pytest.approx(-30.0) and b["return_band"] == "Very Poor"

    c = board.set_index("agent").loc["C"]  # a portfolio but no bets: nothing to score, not a perfect score
    assert (c["n_bets"], c["n_resolved"]) == (0, 0)
    assert math.isnan(c["brier"]) and math.isnan(c["win_rate"]) and c["brier_band"] == "n/a"
    assert c["pnl"] == 0.0 and c["return_band"] == "Neutral"
    assert board["crowd_proxy"].isna().all()


def test_leaderboard_keeps_cohorts_apart() -> None:
    bets = bets_frame()
    bets.loc[4, "cohort"] = "c2"
    bets.loc[4, "agent"] = "A"  # the same agent name in another cohort is another row
    ports = pd.DataFrame(
        {"agent": ["A", "A"], "cohort": ["c1", "c2"], "starting_balance": [1e4, 1e4], "total_value": [1e4, 2e4]}
    )
    board = leaderboard(bets, ports).set_index(["cohort", "agent"])
    assert board.loc[("c1", "A"), "n_bets"] == 4
    assert board.loc[("c2", "A"), "brier"] == 0.0
    assert board.loc[("c2", "A"), "return_pct"] == pytest.approx(100.0)


def test_leaderboard_of_no_bets_is_all_nan() -> None:
    empty = bets_frame().iloc[0:0]
    board = leaderboard(empty, portfolios_frame())
    assert len(board) == 3
    for col in ("brier", "brier_kelly", "brier_stated", "bss_vs_0_25", "bss_vs_market", "win_rate"):
        assert board[col].isna().all(), col
    assert (board["n_bets"] == 0).all()


def test_leaderboard_refuses_frames_without_required_columns() -> None:
    with pytest.raises(ValueError, match="max_bet"):
        leaderboard(bets_frame().drop(columns=["max_bet"]), portfolios_frame())
    with pytest.raises(ValueError, match="total_value"):
        leaderboard(bets_frame(), portfolios_frame().drop(columns=["total_value"]))


def forecasts_frame() -> pd.DataFrame:
    # the proxy module's small example with x → A, y → B, z → C
    return pd.DataFrame(
        {
            "agent": ["A", "A", "B", "A", "C", "B"],
            "question": ["a", "b", "a", "c", "a", "b"],
            "probability": [0.2, 0.5, 0.4, 0.3, 0.9, 0.7],
        }
    )


def test_crowd_proxy_is_merged_per_agent() -> None:
    board = leaderboard(bets_frame(), portfolios_frame(), forecasts_frame(), proxy_aggregator="mean")
    got = board.set_index("agent")["crowd_proxy"]
    # mean aggregator, own forecast included: A (0.09 + 0.01 + 0)/3, B (0.01 + 0.01)/2, C (0.9 − 0.5)²
    np.testing.assert_allclose(got.loc[["A", "B", "C"]], [0.1 / 3, 0.01, 0.16])
    loo = leaderboard(bets_frame(), portfolios_frame(), forecasts_frame(), leave_one_out=True, proxy_aggregator="mean")
    np.testing.assert_allclose(loo.set_index("agent")["crowd_proxy"].loc[["A", "B", "C"]], [0.12125, 0.03125, 0.36])


def test_crowd_proxy_defaults_to_the_logit_pool() -> None:
    # C alone on question "a" with A and B: logit pool of {0.2, 0.4, 0.9}
    pool = 1 / (1 + math.exp(-math.sqrt(3) * (math.log(0.25) + math.log(2 / 3) + math.log(9)) / 3))
    got = crowd_proxy(forecasts_frame()).set_index("agent")["crowd_proxy"]
    assert got.loc["C"] == pytest.approx((0.9 - pool) ** 2)


def test_model_brier_pools_bets_instead_of_averaging_means() -> None:
    bets = pd.DataFrame(
        {
            "agent": ["m-c1", "m-c2", "m-c2", "m-c2", "o-c1"],
            "side": ["YES", "YES", "NO", "YES", "YES"],
            # confidences 0.8, 0.5, 0.5, 0.8, 1.0 on a $2,500 max bet
            "amount": [2000.0, 1250.0, 1250.0, 2000.0, 2500.0],
            "max_bet": [2500.0] * 5,
            # Briers: 0.04, 0.25, 0.25, 0.64, 0
            "outcome_yes": [1.0, 1.0, 0.0, 0.0, 1.0],
        }
    )
    model_of = {"m-c1": "m", "m-c2": "m", "o-c1": "o"}
    out = model_brier_across_cohorts(bets, model_of).set_index("model")
    assert out.loc["m", "brier"] == pytest.approx((0.04 + 0.25 + 0.25 + 0.64) / 4)  # not (0.04 + 0.38)/2
    assert out.loc["m", "n_resolved"] == 4
    assert out.loc["o", "brier"] == 0.0
    with_column = model_brier_across_cohorts(bets.assign(model=bets["agent"].map(model_of))).set_index("model")
    assert with_column.loc["m", "brier"] == pytest.approx(0.295)
    with pytest.raises(ValueError, match="model"):
        model_brier_across_cohorts(bets)


# --- registry -----------------------------------------------------------------------------------------------------


def test_every_leaderboard_score_is_registered_with_its_direction() -> None:
    scored = [c for c in LEADERBOARD_COLUMNS if not c.endswith("_band") and not c.startswith("n_")]
    for name in [*scored, "model_brier_across_cohorts", "z_brier", "total_value"]:
        assert name in METRICS, name
        m = METRICS[name]
        assert m.description and "\n" not in m.description and m.unit
    lower = ["brier", "brier_kelly", "brier_stated", "crowd_proxy", "model_brier_across_cohorts", "z_brier"]
    higher = ["bss_vs_0_25", "bss_vs_market", "pnl", "return_pct", "win_rate", "total_value"]
    assert not any(METRICS[n].higher_is_better for n in lower)
    assert all(METRICS[n].higher_is_better for n in higher)
    for agg in ("mean", "median", "ext_mean", "logit_pool"):
        assert METRICS[f"proxy_{agg}"].higher_is_better is False


def test_registering_a_metric_twice_differently_is_refused() -> None:
    from arena.scoring.registry import register

    with pytest.raises(ValueError, match="already registered"):
        register("brier", higher_is_better=True, description="oops", unit="x")


# --- purity -----------------------------------------------------------------------------------------------------------


def test_scoring_imports_only_numpy_pandas_scipy_stdlib_and_itself() -> None:
    root = Path(__file__).resolve().parents[2] / "arena" / "scoring"
    allowed = set(sys.stdlib_module_names) | {"numpy", "pandas", "scipy", "arena"}
    for path in sorted(root.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top in allowed, f"{path.name} imports {name}"
                if top == "arena":
                    assert name.startswith("arena.scoring"), f"{path.name} imports {name}"
                assert top not in {"datetime", "time"}, f"{path.name} must not read the clock ({name})"
