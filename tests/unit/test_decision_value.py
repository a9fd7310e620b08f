"""Decision value (`scoring.decision_value`): the fixed quarter-Kelly rule on stated forecasts, hand-computed on
planted rows, and a seat with better stated forecasts worth more whatever its own bet sizing."""

import math

import numpy as np
import pandas as pd
import pytest

from arena.domain.sizing import CohortRules
from arena.scoring.board import cohort_board
from arena.scoring.decision_value import (MAX_BET_FRACTION, cohort_decision_values, decision_returns, kelly_stake,
                                          pooled_decision_values, with_decision_returns)
from arena.scoring.registry import METRICS


def test_quarter_kelly_on_the_binary_contract_by_hand():
    # q 0.7 at p 0.5: f* = 0.2 / 0.5 = 0.4, stake 0.1; YES wins: 0.1 × (1 / 0.5 − 1) = +0.1, loses: −0.1
    stake, yes = kelly_stake([0.7, 0.2], [0.5, 0.4])
    assert stake[0] == pytest.approx(0.1) and yes[0]
    # q 0.2 at p 0.4 buys NO at 0.6: f* = 0.2 / 0.4 = 0.5, stake 0.125
    assert stake[1] == pytest.approx(0.125) and not yes[1]
    r = decision_returns([0.7, 0.7, 0.2, 0.2], [0.5, 0.5, 0.4, 0.4], [1, 0, 0, 1])
    assert r.tolist() == pytest.approx([0.1, -0.1, 0.125 * (1 / 0.6 - 1), -0.125])


def test_the_cap_is_the_arenas_and_binds_when_the_fraction_is_larger():
    assert MAX_BET_FRACTION == float(CohortRules().max_bet_fraction)
    stake, _ = kelly_stake([0.99], [0.1], fraction=1.0)  # full Kelly f* = 0.989 → capped at 0.25
    assert stake[0] == pytest.approx(0.25)


def test_no_bet_at_the_price_unresolved_or_unpriced_and_imputed_rows_never_bet():
    r = decision_returns([0.5, 0.9, 0.9, 0.9, 0.9], [0.5, 0.5, np.nan, 1.0, 0.5], [1, np.nan, 1, 1, 1],
                         [True, True, True, True, False])
    assert r[0] == 0.0  # q = p: no bet, counted
    assert math.isnan(r[1]) and math.isnan(r[2]) and math.isnan(r[3])  # unresolved; no price; p not in (0, 1)
    assert r[4] == 0.0  # an imputed row: counted, no bet


def _rows(agent, probs, prices, outcomes, answered=None):
    n = len(probs)
    return pd.DataFrame({"cohort": "c1", "agent": agent, "market_id": [f"m{i}" for i in range(n)],
                         "question": [f"m{i}@r1" for i in range(n)], "probability": probs,
                         "market_price": prices, "outcome_yes": outcomes,
                         "answered": answered if answered is not None else [True] * n})


def test_better_stated_forecasts_get_a_higher_value_whatever_the_seats_own_bets():
    # planted: each question resolves to its true probability (a probabilistic payout, so the rule's return is
    # its expectation exactly); "sharp" states the truth, "timid" moves only 30 % of the way from the price
    rng = np.random.default_rng(3)
    n = 40
    truth = rng.uniform(0.1, 0.9, n)
    price = np.clip(truth + rng.normal(0, 0.15, n), 0.05, 0.95).round(3)
    outcome = truth
    sharp = _rows("sharp", truth, price, outcome)
    timid = _rows("timid", price + 0.3 * (truth - price), price, outcome)
    rows = with_decision_returns(pd.concat([sharp, timid], ignore_index=True))
    dv = cohort_decision_values(rows, n_boot=200).set_index("agent")
    # by hand: 0.25 · (q − p)(t − p) / (p (1 − p)) per question on either side
    by_hand = np.mean(0.25 * (truth - price) ** 2 / (price * (1 - price)))
    assert dv.at["sharp", "decision_value"] == pytest.approx(by_hand)
    assert dv.at["timid", "decision_value"] == pytest.approx(0.3 * by_hand)
    assert dv.at["sharp", "decision_value"] > dv.at["timid", "decision_value"]
    lo, hi = dv.at["sharp", "decision_value_lo"], dv.at["sharp", "decision_value_hi"]
    assert lo <= dv.at["sharp", "decision_value"] <= hi
    # the seats' own bets play no part: the board gives the same decision value with any bets (here none vs a
    # huge bet by the timid seat)
    bets = pd.DataFrame({"agent": ["timid"], "market_id": ["m0"], "outcome": ["YES"], "amount": [2500.0],
                         "cash_at_decision": [10000.0], "max_bet": [2500.0], "price_yes_at_bet": [float(price[0])],
                         "side": ["YES"], "outcome_yes": [float(outcome[0])], "void": [False],
                         "market_kind": ["binary"]})
    ports = pd.DataFrame({"agent": ["sharp", "timid"], "starting_balance": [1e4, 1e4], "total_value": [1e4, 9e3]})
    frame = pd.concat([sharp, timid], ignore_index=True).drop(columns="cohort")
    with_bets = cohort_board(frame, bets, ports, n_boot=50).set_index("agent")
    without = cohort_board(frame, bets.iloc[0:0], ports, n_boot=50).set_index("agent")
    for a in ("sharp", "timid"):
        assert with_bets.at[a, "decision_value"] == pytest.approx(dv.at[a, "decision_value"])
        assert without.at[a, "decision_value"] == pytest.approx(dv.at[a, "decision_value"])
    assert with_bets.at["market (reference)", "decision_value"] == 0.0  # the price never bets against itself


def test_one_observation_per_market_and_the_pooled_value():
    # m0 asked in two rounds (+0.1 then −0.1 → 0), m1 once (+0.1): mean of markets = 0.05, not of rows (0.0333)
    rows = pd.DataFrame({"cohort": "c", "agent": "a", "market_id": ["m0", "m0", "m1"],
                         "question": ["m0@r1", "m0@r2", "m1@r1"], "probability": [0.7, 0.3, 0.7],
                         "market_price": [0.5, 0.5, 0.5], "outcome_yes": [1.0, 1.0, 1.0]})
    rows = with_decision_returns(rows)
    assert rows["decision_return"].tolist() == pytest.approx([0.1, -0.1, 0.1])
    assert cohort_decision_values(rows, n_boot=20)["decision_value"].iat[0] == pytest.approx(0.05)
    assert pooled_decision_values(rows, n_boot=20)["decision_value"].iat[0] == pytest.approx(0.05)


def test_an_imputed_half_does_not_bet_but_counts():
    # the stand-in 0.5 at price 0.2 would buy YES and win here; as imputed it is a zero-return question
    rows = with_decision_returns(_rows("a", [0.7, 0.5], [0.5, 0.2], [1.0, 1.0], answered=[True, False]))
    assert rows["decision_return"].tolist() == pytest.approx([0.1, 0.0])
    assert cohort_decision_values(rows, n_boot=20)["decision_value"].iat[0] == pytest.approx(0.05)


def test_registered_higher_is_better():
    assert METRICS["decision_value"].higher_is_better
