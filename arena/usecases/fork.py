"""Forking a cohort: a new database holding one cohort as it stood at a time T — its frozen lineup, ledger,
decisions, forecasts and the market facts recorded by T (`read.point_in_time.copy_as_of`) — in which seats of the
lineup may be changed, and the source's recorded market path after T (markets, price snapshots, resolutions) fed
in exactly as and when it was recorded (`MarketPath`), never refetched. Writes only the new database; the rounds
after T are replayed by the scheduler's jobs on a simulated clock (`arena replay fork`).

A changed seat keeps its place and its book up to T (cash, positions, decisions already made); from T on it is
rebuilt from its new record. Seats are matched by name; a configured seat whose name the frozen lineup lacks
takes the place of the frozen seat the configuration lacks, in lineup order (a seat swapped).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Executable, delete, func, insert, or_, select, update
from sqlalchemy.engine import Connection, Engine
from sqlmodel import SQLModel

from arena.clock import utc
from arena.config import AgentConfig
from arena.errors import InputError
from arena.read.point_in_time import copy_as_of, latest_recorded, rewind_row

_T = SQLModel.metadata.tables
# the market path: what a sync records, fed into the fork as the simulated clock reaches it
PATH_TABLES = ("markets", "price_snapshots", "resolutions")
# a cohort's own rows, child tables first (other cohorts' rows are removed from the fork)
_BY_DECISION = ("model_calls", "forecasts", "rejections", "decision_replicates", "decision_attempts")
_BY_COHORT = ("fills", "portfolio_snapshots", "forecast_questions", "decisions", "agents")
_MEMOS = ("memo", "endpoint_holds")  # caches of the source's facts, not facts of the fork


@dataclass(frozen=True)
class ForkPoint:
    """Where a fork starts: the cohort (name, id in the source), T, and the cohort's span in the source —
    `start` its creation, `end` its completion (else the source's last recorded fact)."""

    cohort: str
    cohort_id: int
    at: datetime
    start: datetime
    end: datetime
    completed: bool


def fork_point(source: Engine, cohort: str, at: datetime) -> ForkPoint:
    """The fork point of `cohort` at `at`; InputError for an unknown cohort or a time outside it (before it was
    created, or at or after its end: nothing would be left to replay)."""
    cohorts = _T["cohorts"]
    at = utc(at)
    with source.connect() as c:
        row = c.execute(select(cohorts).where(cohorts.c.name == cohort)).mappings().first()
        if row is None:
            names = list(c.scalars(select(cohorts.c.name).order_by(cohorts.c.period_start.desc()).limit(8)))
            raise InputError(f"unknown cohort {cohort!r}",
                             fix="name one of " + (", ".join(names) if names else "(the database has no cohort)"))
        latest = latest_recorded(c)
    start = utc(row["created_at"])
    completed = row["completed_at"] is not None
    end = utc(row["completed_at"]) if completed else (latest or start)
    if not start <= at < end:
        raise InputError(f"--at {at:%Y-%m-%d %H:%M} is outside cohort {cohort!r}, which ran from "
                         f"{start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M} UTC"
                         + ("" if completed else " (its last recorded fact; it is still open)"),
                         fix=f"give --at from {start:%Y-%m-%dT%H:%M} up to before {end:%Y-%m-%dT%H:%M}")
    return ForkPoint(cohort, int(row["id"]), at, start, end, completed)


@dataclass(frozen=True)
class SeatChange:
    """One seat of the frozen lineup given a new record: `seat` its frozen name, `entry` its new configuration,
    `changed` the keys of the record that differ (name included when the seat is swapped)."""

    seat: str
    entry: AgentConfig
    changed: tuple[str, ...]

    def line(self) -> str:
        name = self.seat if self.entry.name == self.seat else f"{self.seat} → {self.entry.name}"
        return f"{name}: {', '.join(self.changed)}"


def seat_changes(frozen: Sequence[tuple[str, str, dict[str, Any]]], lineup: Sequence[AgentConfig]) -> list[SeatChange]:
    """The seats of a frozen lineup ((name, kind, record) in lineup order) that `lineup` (the configuration's)
    changes. InputError when the two do not have the same seats' count: a fork changes seats, it neither adds
    nor removes them."""
    if len(frozen) != len(lineup):
        raise InputError(f"the configuration's lineup has {len(lineup)} seats and the cohort's {len(frozen)} "
                         f"({', '.join(n for n, _, _ in frozen)})",
                         fix="give --config the cohort's seats, changing a seat's record or swapping it for another")
    by_name = {e.name: e for e in lineup}
    unmatched = [e for e in lineup if e.name not in {n for n, _, _ in frozen}]
    out = []
    for name, kind, record in frozen:
        entry = by_name.get(name) or unmatched.pop(0)
        new = entry.to_json()
        old = {"kind": kind, **dict(record or {})}
        changed = tuple(["name"] * (entry.name != name) + sorted(k for k in set(old) | set(new)
                                                              if old.get(k) != new.get(k)))
        if changed:
            out.append(SeatChange(name, entry, changed))
    return out


def frozen_lineup(source: Engine, point: ForkPoint) -> list[tuple[str, str, dict[str, Any]]]:
    """The cohort's seats (name, kind, frozen record) in lineup order."""
    agents = _T["agents"]
    with source.connect() as c:
        return [(n, k, dict(r or {})) for n, k, r in c.execute(
            select(agents.c.name, agents.c.kind, agents.c.config).where(agents.c.cohort_id == point.cohort_id)
            .order_by(agents.c.id))]


def start_fork(source: Engine, target: Engine, point: ForkPoint, changes: Sequence[SeatChange]) -> dict[str, int]:
    """Write the fork's starting state into `target` (an empty database): the source as of T, less every other
    cohort and the source's caches, with the changed seats' records replaced. Returns the rows kept per table."""
    copy_as_of(source, point.at, target)
    cohorts, agents, decisions = _T["cohorts"], _T["agents"], _T["decisions"]
    with target.begin() as c:
        others = select(cohorts.c.id).where(cohorts.c.id != point.cohort_id)
        for name in _BY_DECISION:
            t = _T[name]
            c.execute(delete(t).where(t.c.decision_id.in_(select(decisions.c.id).where(
                decisions.c.cohort_id.in_(others)))))
        for name in _BY_COHORT:
            t = _T[name]
            c.execute(delete(t).where(t.c.cohort_id.in_(others)))
        c.execute(delete(cohorts).where(cohorts.c.id != point.cohort_id))
        for name in _MEMOS:
            c.execute(delete(_T[name]))
        lineup = list(c.execute(select(cohorts.c.lineup).where(cohorts.c.id == point.cohort_id)).scalar_one())
        for ch in changes:
            e = ch.entry
            c.execute(update(agents).where(agents.c.cohort_id == point.cohort_id, agents.c.name == ch.seat)
                      .values(name=e.name, kind=e.kind, model_id=e.model, config=e.to_json()))
            lineup = [{"name": e.name, "kind": e.kind, "model_id": e.model, "config": e.to_json()}
                      if s.get("name") == ch.seat else s for s in lineup]
        c.execute(update(cohorts).where(cohorts.c.id == point.cohort_id).values(lineup=lineup))
        return {t.name: c.execute(select(func.count()).select_from(t)).scalar_one()
                for t in SQLModel.metadata.sorted_tables}


class MarketPath:
    """The source's recorded market path fed into the fork: `feed(t)` writes every market, price snapshot and
    resolution the source recorded after the last feed and by `t` — the rows themselves (their times, prices,
    recorded quotes, payouts), a market's status as it stood at `t` (`point_in_time`'s rewind) — so each job run at
    `t` reads exactly the market facts the source held at `t`. Nothing is ever fetched."""

    def __init__(self, source: Engine, target: Engine, since: datetime) -> None:
        self.source, self.target, self.last = source, target, utc(since)
        self.fed: dict[str, int] = dict.fromkeys(PATH_TABLES, 0)

    def feed(self, t: datetime) -> int:
        """Feed the facts recorded in (last feed, t]; returns how many rows were written (0: nothing new)."""
        t = utc(t)
        if t <= self.last:
            return 0
        lo, hi = self.last, t
        markets, snaps, res = _T["markets"], _T["price_snapshots"], _T["resolutions"]
        with self.source.connect() as src:
            new_snaps = _rows(src, select(snaps).where(snaps.c.fetched_at > lo, snaps.c.fetched_at <= hi)
                              .order_by(snaps.c.id))
            new_res = _rows(src, select(res).where(res.c.recorded_at > lo, res.c.recorded_at <= hi)
                            .order_by(res.c.id))
            touched = set(src.scalars(select(markets.c.id).where(or_(
                markets.c.first_seen_at.between(lo, hi), markets.c.updated_at.between(lo, hi),
                markets.c.close_time.between(lo, hi)))))
            touched |= {r["market_id"] for r in new_res}
            rows: list[dict[str, Any]] = []
            if touched:
                ids = sorted(touched)
                resolved = set(src.scalars(select(res.c.market_id).distinct().where(
                    res.c.market_id.in_(ids), res.c.recorded_at <= hi, res.c.kind != "unresolved")))
                rows = [rewind_row("markets", r, t, resolved) for r in _rows(src, select(markets).where(
                    markets.c.id.in_(ids), markets.c.first_seen_at <= hi))]
        written = 0
        with self.target.begin() as dst:
            have = set(dst.scalars(select(markets.c.id).where(markets.c.id.in_([r["id"] for r in rows])))) \
                if rows else set()
            for r in rows:
                if r["id"] in have:
                    dst.execute(update(markets).where(markets.c.id == r["id"]).values(**_naive_row(r)))
                else:
                    dst.execute(insert(markets).values(**_naive_row(r)))
            for table, batch in ((snaps, new_snaps), (res, new_res)):
                if batch:
                    dst.execute(insert(table), [_naive_row(r) for r in batch])
            for name, n in (("markets", len(rows)), ("price_snapshots", len(new_snaps)), ("resolutions", len(new_res))):
                self.fed[name] += n
                written += n
        self.last = t
        return written


def _rows(conn: Connection, q: Executable) -> list[dict[str, Any]]:
    return [dict(r) for r in conn.execute(q).mappings()]


def _naive(t: datetime) -> datetime:
    return utc(t).replace(tzinfo=None)


def _naive_row(row: dict[str, Any]) -> dict[str, Any]:
    """A row as the fork (SQLite) stores it: times as naive UTC."""
    return {k: _naive(v) if isinstance(v, datetime) else v for k, v in row.items()}


def path_end(source: Engine) -> datetime | None:
    """The last time the source recorded a market fact (a snapshot fetched, a resolution recorded)."""
    snaps, res = _T["price_snapshots"], _T["resolutions"]
    with source.connect() as c:
        times = [c.execute(select(func.max(snaps.c.fetched_at))).scalar(),
                 c.execute(select(func.max(res.c.recorded_at))).scalar()]
    return max((utc(x) for x in times if x is not None), default=None)


__all__ = ["ForkPoint", "MarketPath", "SeatChange", "fork_point", "frozen_lineup", "path_end", "seat_changes",
           "start_fork"]
