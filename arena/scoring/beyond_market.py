"""Information beyond the market: an encompassing test of each seat's stated forecasts against the price it was
shown, and how closely its stated forecasts copy that price (pure: numpy, pandas and scipy.special only).

Owns `beyond_market` (with its interval) and `price_copy`; imports no store, web or clock.

The test. On a seat's resolved forecast-set rows, fit the logistic regression

    logit P(YES) = a + b_market · logit(price) + b_seat · logit(stated P(YES))

by maximum (quasi-)likelihood. `beyond_market` = b_seat: > 0 means the seat's forecast carries information about
the outcome that the price shown to it at decision time does not (the price does not *encompass* the seat); 0
means the price already holds everything the seat says; < 0 means leaning on the seat's number *against* the price
would help. A seat that repeats (or extremises) the price has b_seat unidentified — its logit is a linear
function of the price's, up to the rounding of its stated numbers (`COPY_RESIDUAL`): no number, with that reason.

The rows. Only the seat's *answered* rows (a question it did not answer is imputed 0.5 on the boards; that 0.5 is
no belief of the seat and would read as a forecast identical across questions) with a shown price and a resolved
YES payout in [0, 1] (a fractional payout is a fractional target: the Bernoulli quasi-likelihood). Probabilities
are clipped to [CLIP, 1 − CLIP] before logits: a stated 0 or 1 (common in model replies) means "very unlikely",
not infinite log-odds, and the clip keeps one such row from dominating the fit. Rows are weighted so that each
unit of evidence counts once (`scoring.evidence`): a market asked in k rounds gives each of its k rows weight 1/k
(on the overall board the unit is a cohort's market, as for the headline).

The interval resamples markets: `stats.draw_indices` draws the distinct markets with replacement, every row of a
drawn market (all its rounds, every cohort's rows on it) comes with it, every seat is refitted on the same draws,
and the interval is the percentile interval of b_seat over the draws (a seat with more than MAX_CELLS / draws rows
— a model's overall rows over many cohorts — takes only the first MAX_CELLS / rows draws, at least MIN_DRAWS:
at that size the interval is narrow and its ends move little with more draws). A drawn set of markets the seat
predicts perfectly (separation) has no finite maximum; the refits therefore carry a weak N(0, PRIOR_SD²) prior on
every coefficient, so such a draw gives a large finite coefficient on the side the fit diverges to and stays in
the percentiles (the informative seat keeps the lower end of its interval; the upper end is then large). A draw
whose fit still fails is left out; when more than a tail's share ((1 − level) / 2) is left out the interval is not
reported. The estimate carries the same prior (it is the statistic the draws resample; on a sample with a clear
finite maximum the prior moves it by a small fraction of its standard error, on a nearly collinear one it keeps it
from wandering), but a sample that is itself separated — no finite maximum without the prior — gives no number,
with the reason.

`price_copy`: the Pearson correlation of the seat's stated logit with the shown price's logit over its answered
rows with a price, resolved or not (a copier reads ≈ 1; NaN for a seat whose forecast never varies).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit

from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED
from arena.scoring.registry import register
from arena.scoring.stats import DEFAULT_LEVEL, DEFAULT_N_BOOT, draw_counts, draw_indices

CLIP = 0.01  # probabilities clipped to [CLIP, 1 − CLIP] before logits (logit(0.01) ≈ −4.6)
# resolved markets with a price and an answer before the regression is fitted at all: the boards' provisional
# threshold (three coefficients want a score of events each)
MIN_MARKETS = PROVISIONAL_MIN_RESOLVED
MAX_ITER = 50  # Newton steps
TOL = 1e-8  # a fit has converged when no coefficient moves by more than this
BOUND = 50.0  # a coefficient beyond this many logits per logit is a separated (infinite) fit, not a number
# the seat's logit departs from the best affine function of the price's logit by less than this (weighted root
# mean square, logits): the rounding of a stated probability to 0.001 moves its logit by up to ≈ 0.01 at 0.05,
# so a seat below it is a copier (perhaps an extremiser) whose departures are rounding, and b_seat would fit noise
COPY_RESIDUAL = 0.02
_CELLS = 4_000_000  # draws × rows handled at once
# draws × rows refitted per seat at most: a model's overall rows over a year of cohorts (tens of thousands) take
# the first MAX_CELLS / rows draws, never fewer than MIN_DRAWS (the first k draws of a run are a k-draw run)
MAX_CELLS = 50_000_000
MIN_DRAWS = 200
# the resampled fits' coefficients get a weak N(0, PRIOR_SD²) prior (as `scoring.irt`'s parameters do): a drawn set of
# markets the seat predicts perfectly then gives a large finite coefficient on the side it diverges to, instead of
# no number (the estimate carries it too: it is the statistic the draws resample)
PRIOR_SD = 10.0

NOTE_FEW = f"fewer than {MIN_MARKETS} resolved markets with a shown price and an answer"
NOTE_ONE_SIDED = "every outcome on one side: nothing to regress"
NOTE_CONSTANT = "its stated forecast never varies: not identified"
NOTE_COPY = ("its stated logit is (all but) a linear function of the price's — it copies or extremises the price: "
             "not identified")
NOTE_SEPARATED = ("the fit has no finite maximum (the outcomes are perfectly predicted, or the forecast is all but a "
                  "function of the price)")
NOTE_DRAWS = "more than a tail's share of the resampled fits failed: interval not reported"

register(
    "beyond_market",
    higher_is_better=True,
    description="Encompassing test: coefficient of the stated logit in a logistic regression of the outcome on the "
                "price's logit and the stated logit (> 0: information beyond the market)",
    unit="logits per logit",
)
register(
    "price_copy",
    higher_is_better=False,
    description="Correlation of the stated logit with the shown price's logit on the answered forecast-set rows "
                "(1 = copies the price; not a skill)",
    unit="correlation, -1..1",
)

COLUMNS = ("beyond_market", "beyond_market_lo", "beyond_market_hi", "beyond_market_note", "price_copy")


def logit(p: object) -> np.ndarray:
    """log(p / (1 − p)) of probabilities clipped to [CLIP, 1 − CLIP]."""
    c = np.clip(np.asarray(p, dtype=float), CLIP, 1.0 - CLIP)
    return np.log(c) - np.log1p(-c)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return expit(x)  # 1 / (1 + e^−x), without overflow


_HALVINGS = 30  # step halvings at most per Newton step
_SEARCH_FROM = 8  # Newton steps taken whole before a fit still moving gets a line search


def _objective(b: np.ndarray, x: np.ndarray, y: np.ndarray, w: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Per fit (row of b and w): the weighted Bernoulli log-likelihood minus the ridge penalty ½ Σ lam · b²."""
    eta = b @ x.T
    return (w * (y * eta - np.logaddexp(0.0, eta))).sum(axis=1) - 0.5 * (lam * b * b).sum(axis=1)


def fit_logistic(x: np.ndarray, y: np.ndarray, weights: np.ndarray, start: np.ndarray | None = None,
                 prior_sd: float | None = None) -> np.ndarray:
    """Weighted (quasi-)maximum-likelihood logistic regressions sharing one design, by Newton's method.

    x: rows × k design (with its intercept column); y: rows, targets in [0, 1]; weights: draws × rows (one fit per
    row of weights; a 1-d array is one fit). With `prior_sd`, every coefficient gets a N(0, prior_sd²) prior (a
    ridge penalty), so every fit has a finite maximum. Returns draws × k coefficients, a row NaN where the
    fit did not converge to a finite maximum within MAX_ITER steps (separation, or a singular design in that
    draw)."""
    w = np.atleast_2d(np.asarray(weights, dtype=float))
    n_fit, k = w.shape[0], x.shape[1]
    beta = np.zeros((n_fit, k)) if start is None else np.tile(np.asarray(start, dtype=float), (n_fit, 1))
    done = np.zeros(n_fit, dtype=bool)
    ok = np.ones(n_fit, dtype=bool)
    ridge = 1e-10 * np.eye(k)
    lam = np.zeros(k)
    if prior_sd is not None:
        lam[:] = 1.0 / prior_sd**2
        ridge = ridge + np.diag(lam)
    # the Hessian's entries are curv @ (x_i · x_j): one matrix product for every fit at once
    iu, ju = np.triu_indices(k)
    pairs = x[:, iu] * x[:, ju]
    for it in range(MAX_ITER):
        live = np.flatnonzero(~done & ok)
        if not live.size:
            break
        b, wl = beta[live], w[live]
        mu = _sigmoid(b @ x.T)
        grad = (wl * (y - mu)) @ x - lam * b
        curv = wl * mu * (1.0 - mu)
        upper = curv @ pairs
        hess = np.empty((len(live), k, k))
        hess[:, iu, ju] = upper
        hess[:, ju, iu] = upper
        hess += ridge
        with np.errstate(all="ignore"):
            try:
                step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
            except np.linalg.LinAlgError:
                step = np.full_like(b, np.nan)
        bad = ~np.isfinite(step).all(axis=1)
        step = np.where(bad[:, None], 0.0, step)
        # a Newton step longer than a few logits only happens on the way to a separated fit: take it capped
        size = np.abs(step).max(axis=1, initial=0.0)
        step = np.where((size > 5.0)[:, None], step * (5.0 / np.maximum(size, 1e-300))[:, None], step)
        if it >= _SEARCH_FROM:
            # a fit still moving: halve its step where the objective would fall (a full Newton step can overshoot
            # and cycle; nearly every fit has converged before this, and pays nothing for it)
            now = _objective(b, x, y, wl, lam)
            new = _objective(b + step, x, y, wl, lam)
            for _ in range(_HALVINGS):
                worse = np.flatnonzero(new < now - 1e-12 * np.abs(now))
                if not worse.size:
                    break
                step[worse] *= 0.5
                new[worse] = _objective(b[worse] + step[worse], x, y, wl[worse], lam)
        size = np.abs(step).max(axis=1, initial=0.0)
        beta[live] = b + step
        ok[live[bad]] = False
        if prior_sd is None:  # (a penalised fit always has a finite maximum: no bound to cross)
            ok[live[np.abs(beta[live]).max(axis=1) > BOUND]] = False
        done[live[~bad & (size <= TOL)]] = True
    beta[~(done & ok)] = np.nan
    return beta


@dataclass(frozen=True)
class Encompassing:
    """One seat's test: estimate (b_seat, logits per logit), ci_low / ci_high (percentile interval over the draws
    with a finite fit), price_copy, n_rows and n_markets (used in the regression), draws_used, note (why a value
    is missing; None when all are there)."""

    estimate: float
    ci_low: float
    ci_high: float
    price_copy: float
    n_rows: int
    n_markets: int
    draws_used: int
    note: str | None


def copy_index(stated: object, price: object) -> float:
    """Pearson correlation of logit(stated) with logit(price) over the pairs where both are finite (NaN with fewer
    than 2 such pairs or when either never varies)."""
    s, p = np.asarray(stated, dtype=float), np.asarray(price, dtype=float)
    ok = np.isfinite(s) & np.isfinite(p)
    if ok.sum() < 2:
        return float("nan")
    a, b = logit(s[ok]), logit(p[ok])
    a, b = a - a.mean(), b - b.mean()
    den = float(np.sqrt((a * a).sum() * (b * b).sum()))
    if den <= 1e-12 * max(1.0, float(len(a))):
        return float("nan")
    return float(np.clip((a * b).sum() / den, -1.0, 1.0))


def _identification(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> str | None:
    """Why b_seat cannot be estimated on these rows (None when it can): outcomes all on one side, a constant
    forecast, or a stated logit that is a linear function of the price's."""
    if np.all(y <= 0.0) or np.all(y >= 1.0):
        return NOTE_ONE_SIDED
    s = x[:, 2]
    sw = np.sqrt(w)
    if float(np.ptp(s)) <= 1e-12:
        return NOTE_CONSTANT
    coef, *_ = np.linalg.lstsq(x[:, :2] * sw[:, None], s * sw, rcond=None)
    resid = (s - x[:, :2] @ coef) * sw
    if float(np.sqrt((resid**2).sum() / w.sum())) < COPY_RESIDUAL:
        return NOTE_COPY
    return None


def encompassing(rows: pd.DataFrame, counts: np.ndarray | None = None, market_codes: np.ndarray | None = None,
                 *, unit: Sequence[str] = ("market_id",), level: float = DEFAULT_LEVEL) -> Encompassing:
    """One seat's test on `rows` (market_id, probability, market_price, outcome_yes, answered, and the `unit`
    columns): the module docstring's fit, and its interval from `counts` (draws × markets: how often each market
    was drawn, `stats.draw_counts`) with `market_codes` (per row, its market's column in `counts`). Without
    counts, no interval."""
    nan = float("nan")
    # (a reference row carries no `answered`: it states every question)
    answered = (rows["answered"].astype(object).fillna(True).to_numpy(dtype=bool) if "answered" in rows.columns
                else np.ones(len(rows), dtype=bool))
    p = rows["probability"].to_numpy(dtype=float)
    price = rows["market_price"].to_numpy(dtype=float)
    copy = copy_index(p[answered], price[answered])
    y = rows["outcome_yes"].to_numpy(dtype=float)
    use = answered & np.isfinite(p) & np.isfinite(price) & np.isfinite(y)
    part = rows[use]
    n_markets = int(part["market_id"].nunique())
    if n_markets < MIN_MARKETS:
        return Encompassing(nan, nan, nan, copy, int(use.sum()), n_markets, 0, NOTE_FEW)
    keys = [c for c in unit if c in part.columns]
    per_unit = part.groupby(keys, sort=False)[keys[0]].transform("size").to_numpy(dtype=float)
    w = 1.0 / per_unit  # each unit of evidence (a market, or a cohort's market) weighs 1 whatever its rounds
    x = np.column_stack([np.ones(len(part)), logit(price[use]), logit(p[use])])
    yy = y[use]
    why = _identification(x, yy, w)
    if why is not None:
        return Encompassing(nan, nan, nan, copy, len(part), n_markets, 0, why)
    free = fit_logistic(x, yy, w)[0]
    if not np.isfinite(free).all():
        return Encompassing(nan, nan, nan, copy, len(part), n_markets, 0, NOTE_SEPARATED)
    # the estimate under the refits' prior, so that it is the statistic the interval resamples
    point = fit_logistic(x, yy, w, start=free, prior_sd=PRIOR_SD)[0]
    if counts is None or market_codes is None or not counts.shape[0]:
        return Encompassing(float(point[2]), nan, nan, copy, len(part), n_markets, 0, None)
    codes = np.asarray(market_codes)[use]
    n_boot = min(counts.shape[0], max(MIN_DRAWS, MAX_CELLS // len(part)))
    step = max(1, _CELLS // max(1, len(part)))
    coef = np.empty(n_boot)
    for lo in range(0, n_boot, step):
        hi = min(lo + step, n_boot)
        coef[lo:hi] = fit_logistic(x, yy, counts[lo:hi][:, codes] * w, start=point, prior_sd=PRIOR_SD)[:, 2]
    finite = np.isfinite(coef)
    used = int(finite.sum())
    if n_boot - used > (1.0 - level) / 2.0 * n_boot:
        return Encompassing(float(point[2]), nan, nan, copy, len(part), n_markets, used, NOTE_DRAWS)
    tail = (1.0 - level) / 2.0
    lo_q, hi_q = np.quantile(coef[finite], [tail, 1.0 - tail])
    return Encompassing(float(point[2]), float(lo_q), float(hi_q), copy, len(part), n_markets, used, None)


def beyond_market_table(forecasts: pd.DataFrame, *, agent: str = "agent", unit: Sequence[str] = ("market_id",),
                        n_boot: int = DEFAULT_N_BOOT, seed: int = 0, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Per agent of `forecasts` (forecast-set rows: agent, market_id, probability, market_price, outcome_yes,
    answered, and the `unit` columns): beyond_market, beyond_market_lo, beyond_market_hi, beyond_market_note and
    price_copy, every agent refitted on the same draws of the frame's distinct markets (`stats.draw_indices`,
    one stratum, `seed`). A board passes one cohort's rows (unit: the market) or every cohort's (unit: the
    cohort's market; a market shared by cohorts is one draw unit)."""
    out_cols = [agent, *COLUMNS]
    if not len(forecasts):
        return pd.DataFrame({c: pd.Series(dtype=object if c in (agent, "beyond_market_note") else float)
                             for c in out_cols})
    resolved = forecasts["outcome_yes"].notna().to_numpy() & forecasts["market_price"].notna().to_numpy()
    markets = pd.Index(pd.unique(forecasts.loc[resolved, "market_id"])).sort_values()
    counts = None
    if len(markets) >= MIN_MARKETS and n_boot > 0:
        counts = draw_counts(draw_indices([len(markets)], n_boot, seed), len(markets))
    recs = []
    for name, rows in forecasts.groupby(agent, sort=True):
        codes = markets.get_indexer(rows["market_id"])
        t = encompassing(rows, counts, codes, unit=unit, level=level)
        recs.append({agent: name, "beyond_market": t.estimate, "beyond_market_lo": t.ci_low,
                     "beyond_market_hi": t.ci_high, "beyond_market_note": t.note, "price_copy": t.price_copy})
    return pd.DataFrame(recs, columns=out_cols)


__all__ = ["CLIP", "COLUMNS", "Encompassing", "MIN_MARKETS", "beyond_market_table", "copy_index", "encompassing",
           "fit_logistic", "logit"]
