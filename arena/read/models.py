"""Models across cohorts: for each model (an agent name, the same lineup entry week after week), its forecast-Brier
difference against every other model and against the two references, pooled over cohorts, from the facts recorded
by `as_of`.

The unit of evidence is the market (`scoring.evidence`): per cohort, one observation per forecast-set market both
scored — the mean over its rounds of (this model's Brier − the other's). Consecutive cohorts share markets, so the
pool is not a meta-analysis of independent cohorts: it is the mean of every (cohort, market) observation with a
cluster-robust t interval whose clusters are the distinct markets (`evidence.pooled_difference`), so a market asked
by three cohorts counts as one piece of evidence, not three. The per-cohort rows (the forest plot) and
DerSimonian–Laird's I² are kept to describe the spread between weeks: "better in general" is a pooled interval
below 0; "better in some weeks" shows as cohorts whose own interval lies below 0 while the pool's does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from arena.clock import utc
from arena.scoring.evidence import PairedTest, cluster_t_test
from arena.scoring.headline import REFERENCE_AGENTS, score_forecasts
from arena.scoring.meta import DEFAULT_LEVEL, MetaAnalysis, dersimonian_laird, pair_differences, score_cells
from arena.cache.frame_cache import cohort_frames
from arena.read.contamination import lineup_dates, split
from arena.cache.board_cache import KEEP_PER_COHORT
from arena.cache.code import key
from arena.cache.codec import decode_frames, decode_many_frames, encode_frames
from arena.cache.memo import MemoTable, Recent, kept
from arena.store.tables import CohortRow


@dataclass(frozen=True)
class ModelComparison:
    """This model minus `versus` (forecast Brier; < 0: this model forecasts better), pooled across cohorts.
    columns: the forest plot's rows as arrays (cohort, n, difference, se, ci_low, ci_high, weight), in cohort
    order; `cohorts` is them as a frame, made when asked for (a render shows two forest plots per model of the
    many comparisons it computes)."""

    versus: str
    meta: MetaAnalysis  # DerSimonian–Laird over the per-cohort rows: I² and the forest plot's weights
    columns: Mapping[str, np.ndarray] = field(compare=False, repr=False)
    pooled: PairedTest | None = None  # the pool: (cohort, market) observations, distinct markets as clusters

    @cached_property
    def cohorts(self) -> pd.DataFrame:
        return pd.DataFrame(dict(self.columns))

    @cached_property
    def better_in(self) -> int:
        """Cohorts whose own interval lies below 0."""
        return int((self.columns["ci_high"] < 0).sum())

    @cached_property
    def worse_in(self) -> int:
        return int((self.columns["ci_low"] > 0).sum())

    @property
    def estimate(self) -> float:
        """The pooled difference: the mean over every (cohort, market) observation both scored."""
        return self.pooled.estimate if self.pooled is not None else self.meta.estimate

    @property
    def pooled_interval(self) -> tuple[float, float]:
        """The market-clustered t interval of the pool (`evidence.cluster_t_test`); NaN below two markets."""
        if self.pooled is not None:
            return self.pooled.ci_low, self.pooled.ci_high
        return self.meta.ci_low, self.meta.ci_high

    @property
    def k(self) -> int:
        """Cohorts in which both scored a resolved market."""
        return int(len(self.columns["cohort"]))

    @property
    def verdict(self) -> str:
        lo, hi = self.pooled_interval
        if len(self.columns["difference"]) and (self.columns["difference"] == 0).all():
            return "identical forecasts"
        if not (np.isfinite(lo) and np.isfinite(hi)):
            return "too few markets"
        if hi < 0:
            return "better in general"
        if lo > 0:
            return "worse in general"
        if self.better_in and not self.worse_in:
            return "better in some weeks"
        if self.worse_in and not self.better_in:
            return "worse in some weeks"
        if self.better_in and self.worse_in:
            return "better in some weeks, worse in others"
        return "no difference shown"


_PAIRS: Recent[pd.DataFrame] = Recent("model pairs")  # `_pairs_key` → a cohort's rows of every pair
_FORMAT = 1


def _pairs_key(forecasts_digest: str) -> str:
    """The key of a cohort's pair rows: its forecast rows' digest (`Frames.digests`) under the code digest."""
    return key("model pairs", _FORMAT, forecasts_digest)


def encode_pairs(rows: pd.DataFrame) -> bytes:
    return encode_frames({"pairs": rows}, {"format": _FORMAT, "part": "model pairs"})


def _pairs(frames: Mapping[str, pd.DataFrame | None], meta: Mapping[str, Any]) -> pd.DataFrame:
    rows = frames.get("pairs")
    if meta.get("format") != _FORMAT or meta.get("part") != "model pairs" or rows is None:
        raise ValueError(f"not model pairs of format {_FORMAT}")
    return rows


def decode_pairs(payload: bytes) -> pd.DataFrame:
    return _pairs(*decode_frames(payload))


def decode_many_pairs(payloads: list[bytes]) -> list[pd.DataFrame]:
    return [_pairs(frames, meta) for frames, meta in decode_many_frames(payloads)]


def _pair_rows(scored: pd.DataFrame) -> pd.DataFrame:
    """Every (model, versus) pair's per-cohort rows in the scored forecast rows of some cohorts: the model is any
    non-reference forecaster, versus any other forecaster; one observation per market (its rounds averaged)."""
    cells = score_cells(scored[scored["brier"].notna()], question="market_id")
    return pair_differences(cells, [c for c in cells.columns if c not in REFERENCE_AGENTS])


def _cohort_pairs(engine: Engine, frame: pd.DataFrame, cohorts: list[str], digests: dict[str, str],
                  as_of: datetime) -> pd.DataFrame:
    """`_pair_rows` of every cohort, in cohort order. Each cohort's rows are computed from its forecast rows alone
    (pandas' grouped sums pick their kernel from the whole frame, so rows computed beside other cohorts could
    differ in a last digit) and kept — in the process and in the memo table — under the digest of those rows
    (`Frames.digests`, `_pairs_key`): a render after one cohort's forecasts changed computes that cohort's rows
    only, a mark none, and so does a fresh process."""
    by = dict(iter(frame.groupby("cohort", sort=False))) if len(frame) else {}

    def compute(missing: list[str]) -> dict[str, pd.DataFrame]:
        return {c: _pair_rows(score_forecasts(by[c].reset_index(drop=True))) if c in by else pd.DataFrame()
                for c in missing}

    table = MemoTable(engine, "model pairs", encode_pairs, decode_pairs, keep=KEEP_PER_COHORT,
                      decode_many=decode_many_pairs)
    found = kept({c: _pairs_key(digests[c]) for c in cohorts if c in digests}, _PAIRS, table, compute, filed=str,
                 now=as_of, store_held=True)
    found.update(compute([c for c in cohorts if c not in found]))
    ordered = [found[c] for c in cohorts if len(found[c])]
    return pd.concat(ordered, ignore_index=True) if ordered else pair_differences(pd.DataFrame(), [])


def model_comparisons(engine: Engine, as_of: datetime, models: list[str] | None = None,
                      level: float = DEFAULT_LEVEL) -> dict[str, tuple[ModelComparison, ...]]:
    """model → its comparisons with every other model and the references (models with a resolved forecast only;
    `models` limits whose comparisons are computed). Comparisons with no shared resolved question are left out."""
    with Session(engine) as s:
        cohorts = s.connection().execute(select(CohortRow.id, CohortRow.name).where(CohortRow.created_at <= utc(as_of))
                                         .order_by(CohortRow.period_start, CohortRow.id)).all()
    # the forecast set of each cohort (`store.frames.forecast_set_frame`), through the frame cache: read again
    # only for the cohorts whose facts changed since it was stored
    frames = cohort_frames(engine, [(c[0], c[1]) for c in cohorts], as_of) if cohorts else None
    if frames is None or frames.forecasts.empty:
        return {}
    # a replay's questions contaminated for a seat's knowledge cutoff are left out, as the boards leave them out
    clean = split(engine, as_of, frames, lineup_dates(engine, [c[0] for c in cohorts]))
    frame = clean.clean
    order = [str(c) for c in pd.unique(frame["cohort"])]
    pairs = _cohort_pairs(engine, frame, order, clean.digests.get("forecasts", {}), as_of)
    if pairs.empty:
        return {}
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    groups = pairs.groupby(["model", "versus"], sort=False).indices
    cohort = pairs["cohort"].to_numpy(dtype=object)  # numpy takes per pair: a tenth of pandas' on string columns
    counts = pairs["n"].to_numpy(dtype=int)
    difference, se = pairs["difference"].to_numpy(dtype=float), pairs["se"].to_numpy(dtype=float)
    names = sorted({m for m, _ in groups})
    wanted = [m for m in names if models is None or m in models]
    # every (cohort, market) observation of every forecaster, for the market-clustered pools
    scored = score_forecasts(frame)
    cells = score_cells(scored[scored["brier"].notna()], question="market_id")
    # the markets as integer codes in the markets' sorted order: each test groups by them as by the names, without
    # hashing every name again
    market_of = pd.factorize(cells.index.get_level_values("question"), sort=True)[0]
    values = {str(c): cells[c].to_numpy(dtype=float) for c in cells.columns}
    out = {}
    for model in wanted:
        comparisons = []
        for other in [*(n for n in names if n != model), *REFERENCE_AGENTS]:
            at = groups.get((model, other))
            if at is None:
                continue
            d, e = difference[at], se[at]
            meta = dersimonian_laird(d, e, level)
            rows = {"cohort": cohort[at], "n": counts[at], "difference": d, "se": e,
                    "ci_low": d - z * e, "ci_high": d + z * e, "weight": meta.weights}
            pooled = (cluster_t_test(values[model] - values[other], market_of, level)
                      if model in values and other in values else None)
            comparisons.append(ModelComparison(other, meta, rows, pooled))
        out[model] = tuple(comparisons)
    return out


__all__ = ["ModelComparison", "model_comparisons"]
