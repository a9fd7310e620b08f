"""Snapshot compaction keeps every price anything used: at every recorded instant (fills, decisions, marks,
job runs, cohort start and end) the price readers, the marks and the leaderboards read the same after as
before; yet old snapshots of settled markets are thinned to daily, and open markets are left alone."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd
from sqlalchemy import func, select

from arena.domain.decision import Bet, Decision
from arena.domain.market import YES, Market, MarketStatus, Quote, Resolution
from arena.domain.sizing import CohortRules
from arena.money import Money, Price
from arena.ops import compaction
from arena.usecases import decide, ingest, mark, settle
from arena.usecases.cohorts import LineupEntry, start_cohort

from arena.read.score import cohort_leaderboards
from arena.store.engine import session_scope
from arena.store.tables import PriceSnapshotRow
from arena.store.frames import price_frame

T0 = datetime(2026, 1, 4, tzinfo=timezone.utc)
CLOSE = T0 + timedelta(days=6)


class Bets:
    def __init__(self, name: str, amount: int) -> None:
        self.name, self.amount = name, amount

    def decide(self, view):  # type: ignore[no-untyped-def]
        return Decision((Bet("sim:1", YES, Money.of(self.amount), stated_probability=0.55),),
                        forecasts={"sim:1": 0.55})


def _markets(status: MarketStatus = MarketStatus.OPEN) -> list[Market]:
    return [Market(id=f"sim:{i}", venue="sim", question=f"Q{i}?", close_time=CLOSE, volume_24h=5.0,
                   status=status if i == 1 else MarketStatus.OPEN) for i in (1, 2)]


def _hourly_prices(engine, hours: int) -> None:
    for h in range(hours):
        at = T0 + timedelta(hours=h)
        ppm = 400_000 + 1_000 * (h % 37)  # changes every hour: every quote is stored
        with session_scope(engine) as s:
            ingest.record_observations(s, at, _markets(), [
                Quote(m.id, {YES: Price(ppm + 7 * i)}, at, at, source="sim") for i, m in enumerate(_markets())])


def _readings(engine, instants: list[datetime]) -> tuple[list[pd.DataFrame], list[pd.DataFrame]]:
    prices, boards = [], []
    with session_scope(engine) as s:
        for t in instants:
            prices.append(price_frame(s, t, ["sim:1", "sim:2"]).reset_index(drop=True))
    for t in instants[::4]:
        boards.append(cohort_leaderboards(engine, t).reset_index(drop=True))
    return prices, boards


def _count(engine, market_id: str) -> int:
    with session_scope(engine) as s:
        return s.scalar(select(func.count()).select_from(PriceSnapshotRow)
                        .where(PriceSnapshotRow.market_id == market_id))


def test_compaction_keeps_every_price_used_and_thins_the_rest(engine):
    _hourly_prices(engine, 5 * 24)
    with session_scope(engine) as s:
        cohort, _ = start_cohort(s, T0, CohortRules(), [LineupEntry("alice"), LineupEntry("bob")], T0)
    agents = {"alice": Bets("alice", 500), "bob": Bets("bob", 900)}
    decide.run_round(engine, cohort, agents, "w1", T0 + timedelta(minutes=5, seconds=7))
    decide.run_round(engine, cohort, agents, "w2", T0 + timedelta(days=2, minutes=7))
    for at in (T0 + timedelta(days=1, minutes=30), T0 + timedelta(days=3, hours=4, minutes=15)):
        mark.mark_to_market(engine, at)
    with session_scope(engine) as s:  # sim:1 settles; sim:2 stays open
        ingest.record_observations(s, CLOSE, _markets(MarketStatus.RESOLVED),
                                   resolutions=[("sim:1", Resolution.winner("sim:1", YES, resolved_at=CLOSE))])
    settle.settle_resolved(engine, CLOSE)
    with session_scope(engine) as s:
        instants = sorted({pd.Timestamp(int(u), unit="us", tz="UTC").to_pydatetime()
                           for u in compaction.use_instants(s)})
    assert len(instants) >= 6
    before = _readings(engine, instants)
    open_before = _count(engine, "sim:2")
    assert _count(engine, "sim:1") == 120

    now = CLOSE + timedelta(days=60)
    dry = compaction.compact_snapshots(engine, now, dry_run=True)
    report = compaction.compact_snapshots(engine, now)
    assert dry.deleted == report.deleted > 0 and report.kept_used > 0
    assert _count(engine, "sim:1") == 120 - report.deleted
    assert _count(engine, "sim:1") <= 5 + report.kept_used  # one a day, plus the prices that were used
    assert _count(engine, "sim:2") == open_before  # open markets are never compacted
    after = _readings(engine, instants)
    for b, a in zip(before[0], after[0]):
        pd.testing.assert_frame_equal(b, a)
    for b, a in zip(before[1], after[1]):
        pd.testing.assert_frame_equal(b, a)
    assert compaction.compact_snapshots(engine, now).deleted == 0  # idempotent


def test_without_the_used_prices_rule_a_reading_would_change():
    """The protection matters: a fill between two hourly snapshots reads the earlier one, which the daily
    rule alone would delete."""
    at = [T0 + timedelta(hours=h) for h in range(3)]
    snaps = pd.DataFrame({"id": [1, 2, 3], "market_id": ["m"] * 3, "outcome": [YES] * 3,
                          "observed_at": at, "fetched_at": at})
    fill_at = pd.Series([T0 + timedelta(hours=1, minutes=30)]).astype("datetime64[us, UTC]")
    instants = fill_at.to_numpy(dtype="datetime64[us]").astype("int64")
    cutoff = T0 + timedelta(days=9)
    assert compaction.doomed_ids(snaps, instants[:0], cutoff)[0] == [1, 2]
    assert compaction.doomed_ids(snaps, instants, cutoff)[0] == [1]


def test_compact_command_reports_and_refuses_a_bad_retention(db_url, capsys):
    from arena.cli import main

    assert main(["migrate", "--db", db_url]) == 0  # compaction never creates the database it thins
    assert main(["compact", "--db", db_url, "--dry-run"]) == 0
    assert "dry run: compacted 0 markets" in capsys.readouterr().out
    assert main(["compact", "--db", db_url, "--retention-days", "0"]) != 0
    assert "--retention-days: must be at least 1" in capsys.readouterr().err
