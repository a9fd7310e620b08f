"""Snapshot retention: downsample old price snapshots of markets no longer open, never touching a price
anything used.

Policy (docs/scaling.md): a snapshot of a market that is no longer open, observed more than `retention`
(default 30 days) ago, is deleted unless it is
  1. the newest snapshot of its (market, outcome) — what every later mark, score and interim score reads;
  2. the last snapshot of its (market, outcome) on its UTC day — the daily series stays whole;
  3. the price `price_frame` / `latest_quotes` returned for that (market, outcome) at any recorded instant
     at which the arena read prices: a fill, a decision, a forecast, a portfolio mark, a job run (marks,
     scores and renders run as jobs), a cohort's start or completion.
(3) is computed with the very rule the readers use — the greatest (observed_at, id) among snapshots
observed and fetched by the instant — so a reading repeated at any recorded instant returns the same price
after compaction as before. Open markets are never compacted: the sync already stores their prices only on
a change or once a day. On PostgreSQL the run also creates the coming months' snapshot partitions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
import pandas as pd
from sqlalchemy import delete, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from arena.store import partitions
from arena.store.engine import session_scope
from arena.store.frames import rows_frame
from arena.store.tables import (
    CohortRow,
    DecisionRow,
    FillRow,
    ForecastRow,
    JobRunRow,
    MarketRow,
    PortfolioSnapshotRow,
    PriceSnapshotRow,
    table_of,
)

RETENTION = timedelta(days=30)
PARTITIONS_AHEAD = timedelta(days=92)


@dataclass
class CompactionReport:
    markets: int = 0
    examined: int = 0
    deleted: int = 0
    kept_latest_or_daily: int = 0
    kept_used: int = 0
    partitions_created: int = 0

    def line(self) -> str:
        return (f"compacted {self.markets} markets: {self.examined} old snapshots examined, {self.deleted} deleted, "
                f"{self.kept_latest_or_daily} kept as newest or daily, {self.kept_used} kept as used; "
                f"{self.partitions_created} partitions created")


def use_instants(session: Session) -> np.ndarray:
    """Every recorded instant at which the arena read prices, as sorted unique int64 µs since the epoch."""
    cols = [FillRow.at, DecisionRow.as_of, ForecastRow.as_of, PortfolioSnapshotRow.as_of, JobRunRow.started_at,
            JobRunRow.finished_at, CohortRow.period_start, CohortRow.completed_at]
    stamps: list[pd.Series] = []
    for col in cols:
        values = [v for (v,) in session.execute(select(col).distinct()) if v is not None]
        if values:
            stamps.append(pd.Series(pd.to_datetime(values, utc=True)))
    if not stamps:
        return np.array([], dtype=np.int64)
    return np.unique(pd.concat(stamps).to_numpy(dtype="datetime64[us]").astype(np.int64))


def _micros(values: pd.Series) -> np.ndarray:
    return pd.to_datetime(values, utc=True).to_numpy(dtype="datetime64[us]").astype(np.int64)


def used_ids(group: pd.DataFrame, instants: np.ndarray) -> set[int]:
    """Ids of the snapshots of one (market, outcome) that the price readers return at any of `instants`:
    for each instant, the greatest (observed_at, id) among snapshots observed and fetched by then.
    `group` has id, obs, fetched (µs) and is sorted by (obs, id)."""
    obs, fetched, ids = group["obs"].to_numpy(), group["fetched"].to_numpy(), group["id"].to_numpy()
    lo, hi = obs.min(), max(obs.max(), fetched.max())
    ts = instants[(instants >= lo) & (instants < hi)]  # from `hi` on, the newest snapshot answers: kept anyway
    used: set[int] = set()
    for start in range(0, len(ts), 2_000):  # bounded memory: 2,000 instants × the group's snapshots
        t = ts[start:start + 2_000, None]
        eligible = (obs[None, :] <= t) & (fetched[None, :] <= t)
        has = eligible.any(axis=1)
        last = len(obs) - 1 - np.argmax(eligible[:, ::-1], axis=1)
        used.update(int(i) for i in ids[last[has]])
    return used


def doomed_ids(snapshots: pd.DataFrame, instants: np.ndarray, cutoff: datetime) -> tuple[list[int], int, int]:
    """Which of the snapshots (id, market_id, outcome, observed_at, fetched_at) of markets no longer open
    may go: (ids to delete, kept as newest or daily, kept as used)."""
    if snapshots.empty:
        return [], 0, 0
    df = snapshots.copy()
    df["obs"], df["fetched"] = _micros(df["observed_at"]), _micros(df["fetched_at"])
    df["day"] = df["obs"] // 86_400_000_000
    df = df.sort_values(["market_id", "outcome", "obs", "id"], kind="stable")
    old = df["obs"] < _micros(pd.Series([cutoff]))[0]
    keep = ~df.duplicated(["market_id", "outcome", "day"], keep="last")  # last of each day (and the newest)
    doomed, kept_daily, kept_used = [], int((old & keep).sum()), 0
    for _, group in df[old.groupby([df["market_id"], df["outcome"]]).transform("any")].groupby(
            ["market_id", "outcome"], sort=False):
        candidates = group[(group["obs"] < _micros(pd.Series([cutoff]))[0]) & ~keep.loc[group.index]]
        if candidates.empty:
            continue
        used = used_ids(group, instants)
        spared = candidates["id"].isin(used)
        kept_used += int(spared.sum())
        doomed.extend(int(i) for i in candidates.loc[~spared, "id"])
    return doomed, kept_daily, kept_used


def compact_snapshots(engine: Engine, now: datetime, retention: timedelta = RETENTION, *, dry_run: bool = False,
                      chunk: int = 500) -> CompactionReport:
    """Apply the retention policy as of `now`, a chunk of markets per transaction (idempotent: a second run
    deletes nothing more). With `dry_run`, count only."""
    report = CompactionReport()
    cutoff = now - retention
    with session_scope(engine) as s:
        instants = use_instants(s)
        markets = list(s.scalars(select(MarketRow.id).where(MarketRow.status != "open").order_by(MarketRow.id)))
    report.markets = len(markets)
    for ids in _chunks(markets, chunk):
        with session_scope(engine) as s:
            t = table_of(PriceSnapshotRow)
            rows = s.connection().execute(select(t.c.id, t.c.market_id, t.c.outcome, t.c.observed_at,
                                                 t.c.fetched_at).where(t.c.market_id.in_(ids))).all()
            snaps = rows_frame(rows, ["id", "market_id", "outcome", "observed_at", "fetched_at"])
            if snaps.empty:
                continue
            report.examined += int((pd.to_datetime(snaps["observed_at"], utc=True) < pd.Timestamp(cutoff)).sum())
            doomed, kept_daily, kept_used = doomed_ids(snaps, instants, cutoff)
            report.kept_latest_or_daily += kept_daily
            report.kept_used += kept_used
            report.deleted += len(doomed)
            if not dry_run:
                for part in _chunks(doomed, 5_000):
                    s.execute(delete(PriceSnapshotRow).where(col(PriceSnapshotRow.id).in_(part)))
    if not dry_run:
        with engine.begin() as conn:
            report.partitions_created = len(partitions.ensure_month_partitions(conn, now, now + PARTITIONS_AHEAD))
    return report


def _chunks(items: list, size: int) -> Iterable[list]:
    for i in range(0, len(items), size):
        yield items[i:i + size]
