"""The contamination guard's rule: whether a seat's model could have known a forecast-set question's outcome from
its training data, and how old the model was when it decided.

Pure: dates, times and frames in, verdicts out; imports only numpy and pandas and reads no clock. The store side
(which questions, which prices and resolutions were recorded by when, which cohorts are replays) is
`arena.read.contamination`.

The rule (documented on the methodology page with a worked example). A seat declares `knowledge_cutoff`, a day
D: its training data may cover everything up to the end of D, UTC, so the *cutoff instant* is D + 1 day at
00:00 UTC. A question on market m is *contaminated* for the seat when m's outcome was knowable before the
cutoff instant:

- **resolved**: m's resolution time is strictly before the cutoff instant (resolved exactly at it: clean); or
- **settled**: m's YES price had settled by the cutoff — the last YES price recorded (observed) strictly before
  the cutoff instant lies beyond [0.02, 0.98] (< 0.02 or > 0.98). Equivalently, there is a time t before the
  cutoff from which every recorded price up to the cutoff lies beyond the band on the same side: the price in
  force at the cutoff. A price that went beyond the band and came back into it before the cutoff has not
  settled (the last price before the cutoff is inside); one that settles after the cutoff is clean.

A market without a recorded price before the cutoff has not settled. The verdict does not depend on when the
question was asked: it is a fact about the market's path and the model's cutoff.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime, time, timedelta, timezone

import numpy as np
import pandas as pd

SETTLED_LOW_PPM = 20_000  # 0.02 in parts per million: a YES price below it has settled NO
SETTLED_HIGH_PPM = 980_000  # 0.98: above it, settled YES
RESOLVED = "resolved"
SETTLED = "settled"
CLEAN = ""


def cutoff_instant(day: date) -> datetime:
    """The first instant the model's training data does not cover: the day after `day`, 00:00 UTC."""
    return datetime.combine(day + timedelta(days=1), time(0), tzinfo=timezone.utc)


def release_instant(day: date) -> datetime:
    """The model's release day `day` as an instant: its start, 00:00 UTC."""
    return datetime.combine(day, time(0), tzinfo=timezone.utc)


def beyond_band(price_ppm: int) -> bool:
    """Whether a YES price in ppm lies beyond [0.02, 0.98] (the ends themselves are inside)."""
    return price_ppm < SETTLED_LOW_PPM or price_ppm > SETTLED_HIGH_PPM


def verdict(cutoff: datetime, resolved_at: datetime | None, prices: Iterable[tuple[datetime, int]]) -> str:
    """Why one market is contaminated for a model whose cutoff instant is `cutoff`: RESOLVED, SETTLED, or CLEAN
    (''). `resolved_at` is the market's resolution time (None: not resolved); `prices` its recorded YES prices as
    (observed_at, price in ppm), in any order. Times are aware (UTC)."""
    if resolved_at is not None and resolved_at < cutoff:
        return RESOLVED
    before = [(t, p) for t, p in prices if t < cutoff]
    if before and beyond_band(max(before, key=lambda tp: tp[0])[1]):
        return SETTLED
    return CLEAN


def verdicts(questions: pd.DataFrame, resolutions: pd.DataFrame, prices: pd.DataFrame) -> pd.Series:
    """`verdict` for every row of `questions` at once: `questions` has market_id and cutoff (aware UTC times),
    `resolutions` market_id and resolved_at (one row per market; a market left out is unresolved), `prices`
    market_id, observed_at and price_ppm (the recorded YES prices). Returns the reasons ('' for clean) in the
    questions' order, indexed like them."""
    out = pd.Series(CLEAN, index=questions.index, dtype=object)
    if not len(questions):
        return out
    q = pd.DataFrame({"market_id": questions["market_id"].astype(str).to_numpy(),
                      "cutoff": pd.to_datetime(questions["cutoff"], utc=True).to_numpy(),
                      "_row": np.arange(len(questions))})
    resolved_at = dict(zip(resolutions["market_id"].astype(str), pd.to_datetime(resolutions["resolved_at"], utc=True)))
    res = pd.to_datetime(q["market_id"].map(resolved_at), utc=True)
    resolved = (res.notna() & (res < pd.to_datetime(q["cutoff"], utc=True))).to_numpy()
    settled = np.zeros(len(q), dtype=bool)
    if len(prices):
        p = pd.DataFrame({"market_id": prices["market_id"].astype(str).to_numpy(),
                          "t": pd.to_datetime(prices["observed_at"], utc=True).to_numpy(),
                          "price_ppm": prices["price_ppm"].astype("int64").to_numpy()})
        # the last price observed strictly before each question's cutoff (merge_asof: both sides sorted by time;
        # equal times keep the price recorded last)
        p = p.sort_values("t", kind="stable")
        left = q.assign(t=q["cutoff"]).sort_values("t", kind="stable")
        last = pd.merge_asof(left, p, on="t", by="market_id", allow_exact_matches=False, direction="backward")
        price = last.set_index("_row")["price_ppm"].reindex(np.arange(len(q)))
        settled = ((price < SETTLED_LOW_PPM) | (price > SETTLED_HIGH_PPM)).fillna(False).to_numpy(dtype=bool)
    reasons = np.where(resolved, RESOLVED, np.where(settled, SETTLED, CLEAN))
    return pd.Series(reasons, index=questions.index, dtype=object)


def pre_cutoff_lines(rows: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Each group's "pre-cutoff" line from its contaminated forecast-set rows (`rows`: the `by` columns, market_id,
    probability and outcome_yes, NaN while unresolved): n_contaminated (the rows: questions, a market at a
    round) and pre_cutoff_brier — the headline's Brier on them, binary on P(YES) in 0..1, with the market as the
    unit (the mean over its rounds, then over its markets); NaN when none has resolved."""
    cols = [*by, "n_contaminated", "pre_cutoff_brier"]
    if not len(rows):
        return pd.DataFrame(columns=cols)
    by = list(by)
    counts = rows.groupby(by, sort=True).size().rename("n_contaminated")
    known = rows[rows["outcome_yes"].notna()]
    brier = (known["probability"].astype(float) - known["outcome_yes"].astype(float)) ** 2
    per_market = known.assign(_b=brier).groupby([*by, "market_id"], sort=True)["_b"].mean()
    headline = per_market.groupby(level=list(range(len(by)))).mean().rename("pre_cutoff_brier")
    out = pd.concat([counts, headline], axis=1).reset_index()
    out["n_contaminated"] = out["n_contaminated"].astype("int64")
    return out[cols]


def model_age_days(decided_at: datetime, released: date) -> int:
    """Whole days from the model's release (00:00 UTC of `released`) to a decision at `decided_at` (aware);
    negative when the decision came before the release (a replay of a time before the model existed)."""
    return (decided_at - release_instant(released)) // timedelta(days=1)


__all__ = ["CLEAN", "RESOLVED", "SETTLED", "SETTLED_HIGH_PPM", "SETTLED_LOW_PPM", "beyond_band", "cutoff_instant",
           "model_age_days", "pre_cutoff_lines", "release_instant", "verdict", "verdicts"]
