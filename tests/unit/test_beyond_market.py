"""Information beyond the market on planted data: a seat that sees a private signal the price lacks gets a
coefficient whose interval excludes 0; a copier of the price gets none (not identified) and a price-copy index of
1; a seat that adds noise to the price gets an interval around 0; degenerate fits give a reason, never a crash."""

import math

import numpy as np
import pandas as pd
import pytest

from arena.scoring.beyond_market import (CLIP, MIN_MARKETS, NOTE_CONSTANT, NOTE_COPY, NOTE_DRAWS, NOTE_FEW,
                                         NOTE_ONE_SIDED, NOTE_SEPARATED, beyond_market_table, copy_index,
                                         encompassing, fit_logistic, logit)
from arena.scoring.board import cohort_board, overall_board
from arena.scoring.registry import METRICS


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def planted(n_markets=150, rounds=2, seed=3, cohort=None):
    """Markets whose outcome depends on a public part (priced) and a private part (only "informed" sees it)."""
    rng = np.random.default_rng(seed)
    public, private = rng.normal(0, 1.2, n_markets), rng.normal(0, 1.2, n_markets)
    y = (rng.random(n_markets) < _sigmoid(public + private)).astype(float)
    rows = []
    for m in range(n_markets):
        for r in range(rounds):
            price = float(np.clip(_sigmoid(public[m] + rng.normal(0, 0.05)), 0.02, 0.98))
            q = f"m{m}@r{r}"
            base = dict(market_id=f"m{m}", question=q, market_price=price, outcome_yes=y[m], answered=True)
            rows.append(dict(base, agent="informed", probability=float(_sigmoid(public[m] + private[m]))))
            rows.append(dict(base, agent="copier", probability=price))
            noisy = float(_sigmoid(np.log(price / (1 - price)) + rng.normal(0, 0.6)))
            rows.append(dict(base, agent="noisy", probability=noisy))
    f = pd.DataFrame(rows)
    return f if cohort is None else f.assign(cohort=cohort)


def test_planted_information_is_found_and_a_copier_is_not_credited():
    t = beyond_market_table(planted(), n_boot=300, seed=1).set_index("agent")
    informed, copier, noisy = t.loc["informed"], t.loc["copier"], t.loc["noisy"]
    # the outcome's log-odds are exactly the informed seat's logit: coefficient ≈ 1, interval well above 0
    assert informed["beyond_market_lo"] > 0.3 and informed["beyond_market"] > 0.5
    assert informed["beyond_market_lo"] < informed["beyond_market"] < informed["beyond_market_hi"]
    assert pd.isna(informed["beyond_market_note"])
    # an exact copier: not identified, with the reason; its price-copy index is 1
    assert math.isnan(copier["beyond_market"]) and math.isnan(copier["beyond_market_lo"])
    assert copier["beyond_market_note"] == NOTE_COPY
    assert copier["price_copy"] == pytest.approx(1.0)
    # noise around the price carries no information: the interval holds 0
    assert noisy["beyond_market_lo"] < 0 < noisy["beyond_market_hi"]
    assert 0.5 < noisy["price_copy"] < 0.99
    assert informed["price_copy"] < noisy["price_copy"]


def test_the_interval_resamples_markets_not_rounds():
    """Repeating every market's rows in more rounds adds no evidence: same estimate, about the same interval
    (each market weighs 1 whatever its rounds, and a drawn market brings all its rounds)."""
    one = beyond_market_table(planted(rounds=1, seed=5), n_boot=300, seed=2).set_index("agent").loc["informed"]
    f = planted(rounds=1, seed=5)
    four = pd.concat([f.assign(question=f["question"] + f"#{k}") for k in range(4)], ignore_index=True)
    many = beyond_market_table(four, n_boot=300, seed=2).set_index("agent").loc["informed"]
    assert many["beyond_market"] == pytest.approx(one["beyond_market"], rel=1e-6)
    assert many["beyond_market_lo"] == pytest.approx(one["beyond_market_lo"], rel=1e-6)
    assert many["beyond_market_hi"] == pytest.approx(one["beyond_market_hi"], rel=1e-6)


def test_unanswered_rows_are_left_out():
    f = planted(seed=7)
    # an imputed 0.5 on half the informed seat's rows would drag its coefficient toward 0 if it counted
    imputed = (f["agent"] == "informed") & (f.index % 2 == 0)
    g = f.copy()
    g.loc[imputed, "probability"], g.loc[imputed, "answered"] = 0.5, False
    full = encompassing(f[f["agent"] == "informed"])
    part = encompassing(g[g["agent"] == "informed"])
    assert part.n_rows == int((~imputed & (f["agent"] == "informed")).sum())
    assert part.estimate == pytest.approx(encompassing(f[(f["agent"] == "informed") & ~imputed]).estimate)
    assert abs(part.estimate - full.estimate) < 0.5 and part.estimate > 0.5


def test_logistic_fit_matches_a_hand_checked_likelihood_maximum():
    rng = np.random.default_rng(0)
    x = np.column_stack([np.ones(400), rng.normal(size=400), rng.normal(size=400)])
    y = (rng.random(400) < _sigmoid(x @ np.array([0.3, 1.0, -0.5]))).astype(float)
    b = fit_logistic(x, y, np.ones(400))[0]
    mu = _sigmoid(x @ b)
    assert np.allclose(x.T @ (y - mu), 0.0, atol=1e-8)  # the score equations hold at the fit
    # weights of 2 on every row are the same maximum
    assert np.allclose(fit_logistic(x, y, np.full(400, 2.0))[0], b)


def test_separation_gives_nan_not_a_number():
    x = np.column_stack([np.ones(6), [-3, -2, -1, 1, 2, 3.0], [0.1, 0.4, 0.2, 0.3, 0.5, 0.2]])
    y = np.array([0, 0, 0, 1, 1, 1.0])
    assert np.isnan(fit_logistic(x, y, np.ones(6))).all()


def test_degenerate_seats_say_why():
    f = planted(n_markets=40, seed=11)
    informed = f[f["agent"] == "informed"]
    assert encompassing(informed[informed["market_id"].isin([f"m{i}" for i in range(MIN_MARKETS - 1)])]).note == NOTE_FEW
    assert encompassing(informed.assign(outcome_yes=1.0)).note == NOTE_ONE_SIDED
    const = encompassing(informed.assign(probability=0.7))
    assert const.note == NOTE_CONSTANT and math.isnan(const.estimate) and math.isnan(const.price_copy)
    # a seat that is right with certainty on every question separates the outcomes
    sep = encompassing(informed.assign(probability=np.where(informed["outcome_yes"] > 0.5, 0.97, 0.03)
                                       + np.linspace(-0.01, 0.01, len(informed))))
    assert sep.note == NOTE_SEPARATED and math.isnan(sep.estimate)
    # an affine transform of the price's logit is a copier too (an extremised price, inside the clip)
    ext = informed.assign(probability=_sigmoid(1.1 * logit(informed["market_price"]) + 0.2))
    assert encompassing(ext).note == NOTE_COPY


def test_clip_and_copy_index():
    assert logit([0.0, 1.0]) == pytest.approx([math.log(CLIP / (1 - CLIP)), math.log((1 - CLIP) / CLIP)])
    assert copy_index([0.2, 0.5, 0.8], [0.2, 0.5, 0.8]) == pytest.approx(1.0)
    assert copy_index([0.8, 0.5, 0.2], [0.2, 0.5, 0.8]) == pytest.approx(-1.0)
    assert math.isnan(copy_index([0.5], [0.3]))


def test_the_boards_carry_the_columns_and_the_metrics_are_registered():
    assert METRICS["beyond_market"].higher_is_better and not METRICS["price_copy"].higher_is_better
    f = planted(n_markets=60, seed=13, cohort="c1")
    empty_bets = pd.DataFrame({c: pd.Series(dtype=float)
                               for c in ("cohort", "agent", "side", "amount", "max_bet", "outcome_yes")})
    ports = pd.DataFrame({"cohort": ["c1"] * 3, "agent": ["informed", "copier", "noisy"],
                          "starting_balance": [1000.0] * 3, "total_value": [1000.0] * 3})
    board = cohort_board(f.drop(columns="cohort"), empty_bets.drop(columns="cohort"), ports.drop(columns="cohort"),
                         n_boot=200).set_index("agent")
    assert board.loc["informed", "beyond_market_lo"] > 0
    assert board.loc["copier", "beyond_market_note"] == NOTE_COPY
    # the references: the market's price copies itself, always-0.5 never varies
    assert board.loc["market (reference)", "price_copy"] == pytest.approx(1.0)
    assert board.loc["always-0.5 (reference)", "beyond_market_note"] == NOTE_CONSTANT
    two = pd.concat([f, planted(n_markets=60, seed=13, cohort="c2")], ignore_index=True)
    overall = overall_board(two, empty_bets, pd.concat([ports, ports.assign(cohort="c2")]), n_boot=200
                            ).set_index("model")
    assert overall.loc["informed", "beyond_market_lo"] > 0
    assert overall.loc["copier", "price_copy"] == pytest.approx(1.0)


def test_a_large_seat_takes_the_first_draws_of_the_run(monkeypatch):
    """Above MAX_CELLS draws × rows a seat is refitted on the first draws only — the same draws a shorter run
    makes, so its interval is that of the shorter run."""
    import arena.scoring.beyond_market as bm

    f = planted(n_markets=60, rounds=1, seed=17)
    rows = f[f["agent"] == "informed"]
    monkeypatch.setattr(bm, "MAX_CELLS", 250 * len(rows))
    capped = beyond_market_table(f, n_boot=1000, seed=4).set_index("agent").loc["informed"]
    monkeypatch.setattr(bm, "MAX_CELLS", 10**12)
    short = beyond_market_table(f, n_boot=250, seed=4).set_index("agent").loc["informed"]
    assert capped["beyond_market_lo"] == pytest.approx(short["beyond_market_lo"], rel=1e-9)
    assert capped["beyond_market_hi"] == pytest.approx(short["beyond_market_hi"], rel=1e-9)
    full = beyond_market_table(f, n_boot=1000, seed=4).set_index("agent").loc["informed"]
    assert full["beyond_market_lo"] != pytest.approx(short["beyond_market_lo"], rel=1e-9)


def test_a_seat_whose_resamples_often_separate_keeps_its_interval():
    """24 markets and a seat that all but knows the outcome: the sample has a finite fit, but many resampled sets
    of markets are perfectly predicted. Those refits (weak prior) give large finite coefficients on the side they
    diverge to, so the interval's lower end stands — above 0 — and its upper end is large."""
    rng = np.random.default_rng(0)
    n = 24
    public, private = rng.normal(0, 1, n), rng.normal(0, 3, n)
    y = (rng.random(n) < _sigmoid(public + private)).astype(float)
    f = pd.DataFrame(dict(agent="a", market_id=[f"m{i}" for i in range(n)], probability=_sigmoid(public + private),
                          market_price=_sigmoid(public), outcome_yes=y, answered=True))
    t = beyond_market_table(f, n_boot=200, seed=0).iloc[0]
    assert pd.isna(t["beyond_market_note"])
    assert 0 < t["beyond_market_lo"] < t["beyond_market"] < t["beyond_market_hi"]
    assert t["beyond_market_hi"] > 2 * t["beyond_market"]
    # without the prior the same resamples have no finite maximum: more than a tail's share of them
    x = np.column_stack([np.ones(n), logit(_sigmoid(public)), logit(_sigmoid(public + private))])
    from arena.scoring.stats import draw_counts, draw_indices

    counts = draw_counts(draw_indices([n], 200, 0), n)
    free = fit_logistic(x, y, counts, start=fit_logistic(x, y, np.ones(n))[0])
    assert np.isnan(free[:, 2]).mean() > 0.025


def test_a_resampled_fit_that_fails_withholds_the_interval(monkeypatch):
    import arena.scoring.beyond_market as bm

    real = bm.fit_logistic
    # every resampled fit fails (a call with many rows of weights); the sample's own fits hold
    monkeypatch.setattr(bm, "fit_logistic",
                        lambda x, y, w, **k: real(x, y, w, **k) * (np.nan if np.ndim(w) == 2 and len(w) > 1 else 1.0))
    t = beyond_market_table(planted(n_markets=40, seed=2), n_boot=100, seed=0).set_index("agent").loc["informed"]
    assert np.isfinite(t["beyond_market"]) and np.isnan(t["beyond_market_lo"])
    assert t["beyond_market_note"] == NOTE_DRAWS
