"""The read side of the contamination guard: which forecast-set rows of a replay are contaminated for their seat, from
the seats' frozen dates and the resolutions and prices recorded by the board's time, handed to
`domain.contamination` (which owns the rule); and each seat's model age at its first decision.

A cohort ran as a replay when its questions are markets of the replay venue (`venues.replay.VENUE`, ids
"replay:…"): their whole path was recorded before the run, on a simulated clock. Only such questions are judged;
a live venue's market is asked on the wall clock, after any declared cutoff (config refuses a cutoff in the
future), so a live round never marks anything.

Point in time, like the boards: a resolution counts once recorded by `as_of`, a price once fetched and observed
by then. A question whose market resolves after `as_of` but before the cutoff is clean until the resolution is
recorded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from arena.clock import utc
from arena.domain.market import YES
from arena.domain.contamination import cutoff_instant, model_age_days, verdicts
from arena.store.tables import AgentRow, CohortRow, DecisionRow, MarketRow, PriceSnapshotRow, ResolutionRow

REPLAY_VENUE = "replay"  # venues.replay.VENUE (not imported: the venue module reads files)
_FEW = 2_000  # up to this many markets, their rows are read by id


@dataclass(frozen=True)
class SeatDates:
    """A seat's frozen `knowledge_cutoff` and `released` (None where its lineup record has none)."""

    knowledge_cutoff: date | None = None
    released: date | None = None

    @classmethod
    def of(cls, frozen: Mapping[str, Any]) -> "SeatDates":
        def day(key: str) -> date | None:
            value = frozen.get(key)
            try:
                return date.fromisoformat(value) if isinstance(value, str) else None
            except ValueError:
                return None

        return cls(day("knowledge_cutoff"), day("released"))


@dataclass(frozen=True)
class Guard:
    """What the guard found for the forecast-set rows it was given (`contamination`): `reasons` ('' clean,
    'resolved' or 'settled'), aligned with the rows; `seats` (cohort, agent) → its dates (seats that declared
    any); `ages` (cohort, agent) → its model age in days at its first decision by the board's time."""

    reasons: pd.Series
    seats: Mapping[tuple[str, str], SeatDates] = field(default_factory=dict)
    ages: Mapping[tuple[str, str], int] = field(default_factory=dict)

    @property
    def mask(self) -> np.ndarray:
        """True on the contaminated rows."""
        return (self.reasons != "").to_numpy(dtype=bool)

    def digest(self, cohort: str, cohorts: pd.Series) -> str:
        """A hash of which rows of `cohort` (by their place among its rows) are contaminated and why: what a
        board of the clean rows may be keyed by, beside its frames' key ('' when none is)."""
        mine = (cohorts == cohort).to_numpy(dtype=bool)
        reasons = self.reasons.to_numpy()[mine]
        hit = np.flatnonzero(reasons != "")
        if not len(hit):
            return ""
        return hashlib.sha256(json.dumps([hit.tolist(), reasons[hit].tolist()]).encode()).hexdigest()[:32]


def seat_dates(configs: Sequence[tuple[str, str, Mapping[str, Any] | None]]) -> dict[tuple[str, str], SeatDates]:
    """(cohort, agent) → its dates, from (cohort, agent, frozen lineup record) triples; seats with neither date
    are left out."""
    out = {}
    for cohort, agent, frozen in configs:
        dates = SeatDates.of(frozen or {})
        if dates.knowledge_cutoff is not None or dates.released is not None:
            out[(cohort, agent)] = dates
    return out


@dataclass(frozen=True)
class Split:
    """A cohort frames' forecast-set rows split by the guard (`split`): `clean` (the headline's), `contaminated`
    (the pre-cutoff lines'), and the frames' `keys` and `digests` extended to name the clean rows."""

    clean: pd.DataFrame
    contaminated: pd.DataFrame
    keys: dict[str, str]
    digests: dict[str, dict[str, str]]
    guard: Guard


def split(engine: Engine, as_of: datetime, frames: Any, seats: Mapping[tuple[str, str], SeatDates],
          include: bool = False, forecasts: pd.DataFrame | None = None) -> Split:
    """`frames` (`cache.frame_cache.Frames`) with each seat's contaminated forecast-set rows taken out of its
    forecasts (kept in, only counted, with `include`); `forecasts` stands for `frames.forecasts` when given (a
    board limited to some questions). The frame cache names each cohort's rows by `keys` (and each frame's by
    `digests`); a cohort that lost rows gets a key naming which, so a board cached under it is never one of the
    unsplit rows."""
    forecasts = frames.forecasts if forecasts is None else forecasts
    guard = contamination(engine, as_of, forecasts, seats)
    keys, digests = dict(frames.keys), {k: dict(v) for k, v in frames.digests.items()}
    mask = guard.mask
    if not mask.any():
        return Split(forecasts, forecasts.iloc[:0], keys, digests, guard)
    contaminated = forecasts[mask].reset_index(drop=True)
    if include:
        return Split(forecasts, contaminated, keys, digests, guard)
    for cohort in pd.unique(forecasts["cohort"][mask]):
        mark = guard.digest(cohort, forecasts["cohort"])
        if cohort in keys:
            keys[cohort] = f"{keys[cohort]} clean:{mark}"
        if cohort in digests.get("forecasts", {}):
            digests["forecasts"][cohort] = f"{digests['forecasts'][cohort]} clean:{mark}"
    return Split(forecasts[~mask].reset_index(drop=True), contaminated, keys, digests, guard)


def lineup_dates(engine: Engine, cohort_ids: Sequence[int]) -> dict[tuple[str, str], SeatDates]:
    """`seat_dates` of the cohorts' frozen lineups (their agents' stored records)."""
    with Session(engine) as s:
        rows = s.execute(select(CohortRow.name, AgentRow.name, AgentRow.config)
                         .join(CohortRow, CohortRow.id == AgentRow.cohort_id)
                         .where(col(AgentRow.cohort_id).in_([int(c) for c in cohort_ids]))).all()
    return seat_dates([(c, a, cfg) for c, a, cfg in rows])


def contamination(engine: Engine, as_of: datetime, forecasts: pd.DataFrame,
                  seats: Mapping[tuple[str, str], SeatDates]) -> Guard:
    """The guard's verdict on every row of `forecasts` (a `forecast_set_frame`: cohort, agent, market_id, …) as
    of `as_of`, for the seats whose dates `seats` gives (`seat_dates`). Reads nothing when no seat has a date."""
    reasons = pd.Series("", index=forecasts.index, dtype=object)
    if not seats or not len(forecasts):
        return Guard(reasons, dict(seats))
    cutoffs = {k: cutoff_instant(d.knowledge_cutoff) for k, d in seats.items() if d.knowledge_cutoff is not None}
    with Session(engine) as s:
        ages = _ages(s, as_of, {k: d.released for k, d in seats.items() if d.released is not None})
        if cutoffs:
            keys = list(zip(forecasts["cohort"].astype(str), forecasts["agent"].astype(str)))
            cutoff = pd.Series([cutoffs.get(k) for k in keys], index=forecasts.index, dtype=object)
            judged = cutoff.notna().to_numpy(dtype=bool).copy()
            markets = pd.unique(forecasts["market_id"][judged].astype(str)).tolist()
            replay = _replay_markets(s, markets)
            judged &= forecasts["market_id"].astype(str).isin(replay).to_numpy(dtype=bool)
            if judged.any():
                rows = forecasts[judged]
                questions = pd.DataFrame({"market_id": rows["market_id"].astype(str), "cutoff": cutoff[judged]})
                found = verdicts(questions, _resolutions(s, as_of, sorted(replay)),
                                 _prices(s, as_of, sorted(replay), list(cutoff[judged].unique())))
                reasons[judged] = found.to_numpy()
    return Guard(reasons, dict(seats), ages)


def _replay_markets(s: Session, market_ids: list[str]) -> set[str]:
    if not market_ids:
        return set()
    q = select(MarketRow.id).where(MarketRow.venue == REPLAY_VENUE)
    if len(market_ids) <= _FEW:
        q = q.where(col(MarketRow.id).in_(market_ids))
    return set(s.scalars(q)) & set(market_ids)


def _resolutions(s: Session, as_of: datetime, market_ids: list[str]) -> pd.DataFrame:
    """market_id, resolved_at of each market's latest resolution version recorded by `as_of` that resolves it
    (kind other than "unresolved"); resolved_at falls back to when it was recorded."""
    versions = (select(ResolutionRow.market_id, func.max(ResolutionRow.version).label("v"))
                .where(ResolutionRow.recorded_at <= as_of))
    if len(market_ids) <= _FEW:
        versions = versions.where(col(ResolutionRow.market_id).in_(market_ids))
    latest = versions.group_by(ResolutionRow.market_id).subquery()
    rows = s.execute(select(ResolutionRow.market_id, ResolutionRow.kind, ResolutionRow.resolved_at,
                            ResolutionRow.recorded_at)
                     .join(latest, (ResolutionRow.market_id == latest.c.market_id)
                           & (ResolutionRow.version == latest.c.v))).all()
    wanted = set(market_ids)
    kept = [(m, pd.Timestamp(r if r is not None else rec)) for m, kind, r, rec in rows
            if m in wanted and kind != "unresolved"]
    frame = pd.DataFrame(kept, columns=["market_id", "resolved_at"])
    if len(frame):
        frame["resolved_at"] = pd.to_datetime(frame["resolved_at"], utc=True)
    return frame


def _prices(s: Session, as_of: datetime, market_ids: list[str], cutoffs: Sequence[datetime]) -> pd.DataFrame:
    """For each of the `cutoffs`, each market's last YES price observed before it (fetched and observed by
    `as_of`; of two observed at one instant, the one recorded last): market_id, observed_at, price_ppm — all the
    rule reads, not the whole path (a year of daily prices per market)."""
    p = PriceSnapshotRow
    chosen = [col(p.outcome) == YES, col(p.fetched_at) <= as_of, col(p.observed_at) <= as_of]
    if len(market_ids) <= _FEW:
        chosen.append(col(p.market_id).in_(market_ids))
    wanted, rows = set(market_ids), {}
    for cutoff in sorted(set(cutoffs)):
        latest = (select(p.market_id, func.max(p.observed_at).label("t"))
                  .where(*chosen, p.observed_at < cutoff).group_by(p.market_id).subquery())
        q = (select(p.id, p.market_id, p.observed_at, p.price_ppm)
             .join(latest, (p.market_id == latest.c.market_id) & (p.observed_at == latest.c.t))
             .where(*chosen))
        rows.update({r[0]: r for r in s.execute(q).all() if r[1] in wanted})
    frame = pd.DataFrame([rows[i][1:] for i in sorted(rows)], columns=["market_id", "observed_at", "price_ppm"])
    if len(frame):
        frame["observed_at"] = pd.to_datetime(frame["observed_at"], utc=True)
    return frame


def _ages(s: Session, as_of: datetime, released: Mapping[tuple[str, str], date]) -> dict[tuple[str, str], int]:
    """(cohort, agent) → model age in days at the seat's first decision completed by `as_of` (seats with a
    `released` date and a decision)."""
    if not released:
        return {}
    q = (select(CohortRow.name, AgentRow.name, func.min(DecisionRow.as_of))
         .join(AgentRow, AgentRow.id == DecisionRow.agent_id).join(CohortRow, CohortRow.id == DecisionRow.cohort_id)
         .where(col(DecisionRow.completed_at).is_not(None), col(DecisionRow.completed_at) <= as_of,
                col(AgentRow.name).in_(sorted({a for _, a in released})))
         .group_by(CohortRow.name, AgentRow.name))
    out = {}
    for cohort, agent, first in s.execute(q).all():
        day = released.get((cohort, agent))
        if day is not None and first is not None:
            out[(cohort, agent)] = model_age_days(utc(first), day)
    return out


@dataclass(frozen=True)
class Exposure:
    """What a seat's cutoff takes from a replay window before it runs: of the `candidates` recorded markets open
    at some time in the window, `contaminated` are (the guard's rule on the file's whole recorded path)."""

    agent: str
    knowledge_cutoff: date
    candidates: int
    contaminated: int

    @property
    def clean(self) -> int:
        return self.candidates - self.contaminated

    def line(self) -> str:
        return (f"{self.agent} (knowledge_cutoff {self.knowledge_cutoff.isoformat()}) loses {self.contaminated} of "
                f"{self.candidates} recorded markets open in the window to its cutoff, {self.clean} clean")


def replay_exposure(venue: Any, start: datetime, until: datetime,
                    cutoffs: Sequence[tuple[str, date]]) -> list[Exposure]:
    """Each (agent, knowledge_cutoff)'s `Exposure` to the window [start, until] of a replay venue
    (`venues.replay.ReplayVenue`): the markets listed before `until` whose resolution is not yet visible at
    `start`, judged by `domain.contamination.verdicts` on the file's record — resolved at the instant its
    resolution becomes visible, each history point observed at the end of its day, as the replay serves them."""
    if not cutoffs:
        return []
    records = [venue.record(mid) for mid in venue.market_ids()]
    open_ = [r for r in records if r.listed_from <= until and r.resolution_visible_from > start]
    resolutions = pd.DataFrame({"market_id": [r.arena_id for r in open_],
                                "resolved_at": [r.resolution_visible_from for r in open_]})
    points = [(r.arena_id, datetime.combine(d + timedelta(days=1), time(0), tzinfo=timezone.utc),
               int(p * 1_000_000)) for r in open_ for d, p in r.history]
    prices = pd.DataFrame(points, columns=["market_id", "observed_at", "price_ppm"])
    out = []
    for agent, day in cutoffs:
        questions = pd.DataFrame({"market_id": resolutions["market_id"], "cutoff": [cutoff_instant(day)] * len(open_)})
        found = verdicts(questions, resolutions, prices)
        out.append(Exposure(agent, day, len(open_), int((found != "").sum())))
    return out


def asked_exposure(engine: Engine, as_of: datetime) -> list[tuple[str, str, int, int]]:
    """(cohort, agent, clean, contaminated) forecast-set questions of every seat with a knowledge cutoff, as of
    `as_of` (what `arena replay run` prints after the run)."""
    from arena.store.frames import forecast_set_frame

    with Session(engine) as s:
        cohorts = dict(s.execute(select(CohortRow.id, CohortRow.name)).all())
        configs = s.execute(select(AgentRow.cohort_id, AgentRow.name, AgentRow.config)).all()
        forecasts = forecast_set_frame(s, sorted(cohorts), as_of) if cohorts else pd.DataFrame()
    dates = {k: d for k, d in seat_dates([(cohorts[c], a, cfg) for c, a, cfg in configs]).items()
             if d.knowledge_cutoff is not None}
    if not dates or not len(forecasts):
        return []
    guard = contamination(engine, as_of, forecasts, dates)
    seat = list(zip(forecasts["cohort"].astype(str), forecasts["agent"].astype(str)))
    out = []
    for key in sorted(dates):
        mine = np.array([k == key for k in seat], dtype=bool)
        hit = int((mine & guard.mask).sum())
        out.append((key[0], key[1], int(mine.sum()) - hit, hit))
    return out


__all__ = ["Exposure", "Guard", "REPLAY_VENUE", "SeatDates", "Split", "asked_exposure", "contamination",
           "lineup_dates", "replay_exposure", "seat_dates", "split"]
