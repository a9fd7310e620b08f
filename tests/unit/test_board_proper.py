"""The log, spherical, difficulty-adjusted and IRT columns of the boards: hand-computed through the board, the
references included, ranked in their own direction, null (never 0) where nothing is resolved."""

import math

import numpy as np
import pandas as pd
import pytest

from arena.scoring.board import (
    BOARD_COLUMNS,
    RANK_CHOICES,
    check_rank_by,
    cohort_board,
    cohort_boards,
    higher_is_better,
    overall_board,
)
from arena.scoring.headline import REF_HALF, REF_MARKET

NEW = ("log_score", "spherical_score", "brier_adjusted", "irt_skill")


def _forecasts() -> pd.DataFrame:
    # q1 YES, q2 NO, q3 unresolved; "sharp" is right and confident, "timid" leans right, the market says 0.6 / 0.4
    return pd.DataFrame({
        "agent": ["sharp"] * 3 + ["timid"] * 3,
        "market_id": ["m1", "m2", "m3"] * 2,
        "question": ["m1@r", "m2@r", "m3@r"] * 2,
        "probability": [0.9, 0.2, 0.5, 0.6, 0.45, 0.5],
        "market_price": [0.6, 0.4, 0.5] * 2,
        "outcome_yes": [1.0, 0.0, np.nan] * 2,
    })


def _no_bets() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=float) for c in ("agent", "side", "amount", "max_bet", "outcome_yes")})


def _ports(agents) -> pd.DataFrame:
    return pd.DataFrame({"agent": agents, "starting_balance": 1000.0, "total_value": 1000.0})


def _sph(f: float, o: float) -> float:
    return (o * f + (1 - o) * (1 - f)) / math.sqrt(f * f + (1 - f) ** 2)


def test_rank_keys_are_registered_with_their_direction():
    for key in NEW:
        assert key in RANK_CHOICES and check_rank_by(key) == key and key in BOARD_COLUMNS
    assert higher_is_better("spherical_score") and higher_is_better("irt_skill")
    assert not higher_is_better("log_score") and not higher_is_better("brier_adjusted")


def test_log_and_spherical_scores_are_hand_computed_through_the_board_with_the_references():
    board = cohort_board(_forecasts(), _no_bets(), _ports(["sharp", "timid"]), n_boot=50).set_index("agent")
    assert board.at["sharp", "log_score"] == pytest.approx(-(math.log(0.9) + math.log(0.8)) / 2)
    assert board.at["timid", "log_score"] == pytest.approx(-(math.log(0.6) + math.log(0.55)) / 2)
    assert board.at[REF_HALF, "log_score"] == pytest.approx(math.log(2))
    assert board.at[REF_MARKET, "log_score"] == pytest.approx(-math.log(0.6))
    assert board.at["sharp", "spherical_score"] == pytest.approx((_sph(0.9, 1) + _sph(0.2, 0)) / 2)
    assert board.at[REF_HALF, "spherical_score"] == pytest.approx(0.5 / math.sqrt(0.5))
    # every row answers every question: the adjusted Brier is the plain forecast Brier
    for agent in board.index:
        assert board.at[agent, "brier_adjusted"] == pytest.approx(board.at[agent, "forecast_brier"], abs=1e-8)
    irt = board["irt_skill"]
    assert irt["sharp"] > irt[REF_MARKET] > irt["timid"] > irt[REF_HALF]  # same order as the Brier here


def test_rank_by_log_score_is_lower_first_and_spherical_higher_first():
    f = _forecasts()
    by_log = cohort_board(f, _no_bets(), _ports(["sharp", "timid"]), rank_by="log_score", n_boot=50)
    assert by_log["agent"].tolist()[0] == "sharp" and by_log["agent"].tolist()[-1] == REF_HALF
    assert by_log["log_score"].is_monotonic_increasing
    assert by_log["tier"].isna().all()  # two resolved questions: every row is provisional, and gets no tier
    by_sph = cohort_board(f, _no_bets(), _ports(["sharp", "timid"]), rank_by="spherical_score", n_boot=50)
    assert by_sph["spherical_score"].is_monotonic_decreasing and by_sph["agent"].iloc[0] == "sharp"
    by_irt = cohort_board(f, _no_bets(), _ports(["sharp", "timid"]), rank_by="irt_skill", n_boot=50)
    assert by_irt["irt_skill"].is_monotonic_decreasing and by_irt["tier"].isna().all()  # fitted: null tier


def test_log_score_and_brier_can_disagree_and_the_board_follows_the_key():
    # "bold" is certain and once wrong (log loss clipped at 1e-6: 13.8 nats); "hedger" is never far off
    ids = [f"m{i}" for i in range(10)]
    f = pd.DataFrame({
        "agent": ["bold"] * 10 + ["hedger"] * 10, "market_id": ids * 2, "question": ids * 2,
        "probability": [1.0] * 10 + [0.7] * 10, "market_price": np.nan, "outcome_yes": ([1.0] * 9 + [0.0]) * 2,
    })
    by_brier = cohort_board(f, _no_bets(), _ports(["bold", "hedger"]), n_boot=50)
    by_log = cohort_board(f, _no_bets(), _ports(["bold", "hedger"]), rank_by="log_score", n_boot=50)
    order = lambda b: [a for a in b["agent"] if a in ("bold", "hedger")]  # noqa: E731
    assert order(by_brier) == ["bold", "hedger"]
    assert by_brier.set_index("agent").at["bold", "forecast_brier"] == pytest.approx(0.1)
    assert by_brier.set_index("agent").at["hedger", "forecast_brier"] == pytest.approx((9 * 0.09 + 0.49) / 10)
    assert order(by_log) == ["hedger", "bold"]
    assert by_log.set_index("agent").at["bold", "log_score"] == pytest.approx(-math.log(1e-6) / 10)


def test_nothing_resolved_is_null_not_zero():
    f = _forecasts().assign(outcome_yes=np.nan)
    board = cohort_board(f, _no_bets(), _ports(["sharp", "timid"]), rank_by="log_score", n_boot=20)
    for col in NEW:
        assert board[col].isna().all(), col


def test_overall_pools_cohorts_and_fits_one_design():
    a = _forecasts().assign(cohort="c1")
    b = _forecasts().assign(cohort="c2", probability=[0.8, 0.1, 0.5, 0.5, 0.5, 0.5])
    both = pd.concat([a, b], ignore_index=True)
    ports = pd.concat([_ports(["sharp", "timid"]).assign(cohort=c) for c in ("c1", "c2")], ignore_index=True)
    overall = overall_board(both, _no_bets(), ports, rank_by="spherical_score", n_boot=30).set_index("model")
    expected = (_sph(0.9, 1) + _sph(0.2, 0) + _sph(0.8, 1) + _sph(0.1, 0)) / 4
    assert overall.at["sharp", "spherical_score"] == pytest.approx(expected)
    assert overall.at["sharp", "brier_adjusted"] == pytest.approx(overall.at["sharp", "forecast_brier"], abs=1e-8)
    assert overall["spherical_score"].is_monotonic_decreasing
    per = cohort_boards(both, _no_bets().assign(cohort=[]), ports, n_boot=20)
    assert per["c2"].set_index("agent").at["timid", "log_score"] == pytest.approx(math.log(2))
