"""Benchmark: the arena at venue scale on PostgreSQL — sync, snapshot storage, marks and standings.

Run: ``.venv/bin/python benchmarks/bench_scale_pg.py [--url URL] [--only sync,storage,mark,standings]``
(URL defaults to ARENA_BENCH_DATABASE_URL, else postgresql://postgres@127.0.0.1:5432/postgres). Each run
creates a throw-away database and drops it at the end; with no server reachable it says so and exits 0.

1. sync: `sync.sync_polymarket` over 100k open Gamma markets (the real samples cloned) into an empty store
   (goal ≤ 20 s), then a second sync with 1 % of prices changed (goal ≤ 20 % of the first), the venue's times
   moved, and the next UTC day — skipping unchanged payloads beside parsing every payload (the previous path).
2. storage: 24 hourly syncs of N markets (default 10k) with a fraction f of prices changing each hour,
   stored the old way (every sync's quote: one row per market per sync) and the new way (a change or the
   day's first); bytes per row measured from the partitioned table, projected to 100k markets per day and
   per year, and after compaction (settled markets thinned to one row a day).
3. mark: 1M open positions (1,000 cohorts × 20 agents × 50 positions) marked with
   `mark.mark_to_market` (goal ≤ 5 s), beside the previous one-query valuation in the same run and the same
   mark of one cohort scaled by 1,000 (per-cohort loop).
4. standings: `score.cohort_leaderboards` of the same 1,000 cohorts × 20 agents (goal ≤ 5 s), beside one
   cohort's standings × 1,000 (the per-cohort loop) and its three frames read one after another (its path
   before `snapshot.read_together`); then `standings.standings` — the boards the site renders —
   with the board cache cold, warm, and warm after one cohort got a new fill (what a scheduled render sees).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from sqlalchemy import text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from arena.store.engine import make_engine, migrate, normalize_url  # noqa: E402
from arena.store.frames import rows_frame

T0 = datetime(2026, 11, 1, 10, tzinfo=timezone.utc)
DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


def throwaway(url: str):  # type: ignore[no-untyped-def]
    """(engine on a fresh database, drop function), or None when no server answers."""
    base = make_url(normalize_url(url))
    admin = make_engine(base.render_as_string(hide_password=False)).execution_options(isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as c:
            name = f"arena_bench_{uuid.uuid4().hex[:8]}"
            c.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # noqa: BLE001 - any failure to reach the server means: skip
        print(f"SKIP: no PostgreSQL server reachable at {base.render_as_string(hide_password=True)} "
              f"({type(exc).__name__}); set ARENA_BENCH_DATABASE_URL or --url to run these benchmarks")
        return None
    engine = make_engine(base.set(database=name).render_as_string(hide_password=False))
    migrate(engine)

    def drop() -> None:
        engine.dispose()
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return engine, drop


def copy_rows(engine, table: str, columns: list[str], rows) -> None:  # type: ignore[no-untyped-def]
    with engine.begin() as conn:
        raw = conn.connection.driver_connection
        with raw.cursor() as cur, cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as cp:
            for r in rows:
                cp.write_row(r)


def table_bytes(engine, table: str = "price_snapshots") -> tuple[int, int]:
    """(rows, bytes incl. indexes and TOAST) of a table, summed over its partitions."""
    with engine.connect() as c:
        c.execute(text(f"ANALYZE {table}"))
        rows = c.execute(text(f"SELECT count(*) FROM {table}")).scalar()
        size = c.execute(text(
            "SELECT coalesce(sum(pg_total_relation_size(inhrelid)), 0) FROM pg_inherits "
            "WHERE inhparent = CAST(:t AS regclass)"), {"t": table}).scalar()
        if not size:
            size = c.execute(text("SELECT pg_total_relation_size(CAST(:t AS regclass))"), {"t": table}).scalar()
    return int(rows), int(size)


# --- 1. sync ----------------------------------------------------------------------------------------------

def bench_sync(url: str, n: int, repeat: int = 1) -> None:
    """`sync.sync_polymarket` end to end over an open listing of `n` markets: skipping unchanged payloads beside
    parsing every payload (the previous path), each on its own throw-away database, in the same run."""
    import bench_parse as bp

    rows, origin = bp.open_listing(n)
    drops = []

    def fresh():  # type: ignore[no-untyped-def]
        made = throwaway(url)
        assert made is not None
        drops.append(made[1])
        return made[0]

    print(f"1. Sync, {n:,} Gamma markets ({origin}), PostgreSQL, {load()}")
    try:
        full = bp.best_series(fresh, rows, False, repeat)
        reuse = bp.best_series(fresh, rows, True, repeat)
    finally:
        for drop in drops:
            drop()
    bp.print_series(reuse, full, 20)
    print(f"  at the end: {load()}")


# --- 2. storage -------------------------------------------------------------------------------------------

def bench_storage(engine, n: int, changing: float) -> None:  # type: ignore[no-untyped-def]
    from arena.domain.market import YES, Market, Quote
    from arena.money import Price
    from arena.usecases import ingest
    from arena.store.engine import session_scope

    rng = np.random.default_rng(3)
    markets = [Market(id=f"pm:{i}", venue="pm", question=f"Q{i}?", close_time=T0 + timedelta(days=90))
               for i in range(n)]
    price = rng.integers(10_000, 990_000, n)
    t = time.perf_counter()
    for h in range(24):
        at = T0 + timedelta(hours=h)
        moved = rng.random(n) < changing
        price = np.where(moved, np.clip(price + rng.integers(-5_000, 5_000, n), 1_000, 999_000), price)
        quotes = [Quote(m.id, {YES: Price(int(p))}, at, at, bid=Price(int(p) - 1_000), ask=Price(int(p) + 1_000),
                        source="gamma") for m, p in zip(markets, price)]
        with session_scope(engine) as s:
            ingest.record_observations(s, at, markets if h == 0 else (), quotes)
    elapsed = time.perf_counter() - t
    new_rows, new_bytes = table_bytes(engine)
    # the old way: every sync's quote stored, one row per market per hourly sync
    with engine.begin() as c:
        c.execute(text("CREATE TABLE snap_every_sync (LIKE price_snapshots INCLUDING ALL)"))
    old = ((f"pm:{i}", YES, int(price[i]), int(price[i]) - 1_000, int(price[i]) + 1_000, T0 + timedelta(hours=h),
            T0 + timedelta(hours=h), "gamma") for h in range(24) for i in range(n))
    copy_rows(engine, "snap_every_sync", ["market_id", "outcome", "price_ppm", "bid_ppm", "ask_ppm",
                                          "observed_at", "fetched_at", "source"], old)
    old_rows, old_bytes = table_bytes(engine, "snap_every_sync")
    per_row = new_bytes / max(new_rows, 1)
    scale = 100_000 / n
    day_old, day_new = old_bytes * scale, new_bytes * scale
    compacted_year = 100_000 * 365 * per_row  # settled markets thinned to one row a day
    gb = 1e9
    print(f"2. Snapshot storage, {n:,} markets synced hourly for one simulated day, {changing:.0%} of prices "
          f"changing each hour (24 syncs in {elapsed:.1f} s)")
    print(f"  every sync stored (old): {old_rows:,} rows, {old_bytes / 1e6:8.1f} MB  = {old_bytes / old_rows:5.0f} B/row")
    print(f"  change or daily (new):   {new_rows:,} rows, {new_bytes / 1e6:8.1f} MB  = {per_row:5.0f} B/row  "
          f"-> {old_bytes / max(new_bytes, 1):.1f}x less")
    print(f"  projected at 100k markets: old {day_old / gb:6.2f} GB/day, {365 * day_old / gb:7.1f} GB/year; "
          f"new {day_new / gb:6.3f} GB/day, {365 * day_new / gb:6.1f} GB/year; "
          f"after compaction of settled markets <= {compacted_year / gb:5.1f} GB/year")


# --- 3 and 4. marks and standings at 1,000 cohorts × 20 agents ---------------------------------------------

def build_cohorts(engine, cohorts: int, agents: int, positions: int, markets: int) -> None:  # type: ignore[no-untyped-def]
    """Cohorts, agents, one decision per agent with `positions` buys on distinct markets, a forecast set of
    10 markets per decision, one price per market, every other market resolved YES or NO."""
    import json

    rng = np.random.default_rng(5)
    t = time.perf_counter()
    copy_rows(engine, "markets", ["id", "venue", "native_id", "question", "description", "kind", "outcomes",
                                  "outcome_labels", "status", "close_time", "url", "category", "group_id", "extra",
                                  "first_seen_at", "updated_at"],
              ((f"sim:{i}", "sim", str(i), f"Q{i}?", "", "binary", '["YES", "NO"]', '["Yes", "No"]',
                "open", T0 + timedelta(days=30), "", "", "", "{}", T0, T0) for i in range(markets)))
    yes = rng.integers(50_000, 950_000, markets)
    copy_rows(engine, "price_snapshots", ["market_id", "outcome", "price_ppm", "observed_at", "fetched_at", "source"],
              ((f"sim:{i}", "YES", int(yes[i]), T0, T0, "sim") for i in range(markets)))
    copy_rows(engine, "resolutions", ["market_id", "version", "kind", "payouts", "recorded_at", "source"],
              ((f"sim:{i}", 1, "winner", json.dumps({"YES": 1_000_000 * (i % 4 == 0), "NO": 1_000_000 * (i % 4 != 0)}),
                T0, "sim") for i in range(0, markets, 2)))
    rules = json.dumps({"bench": True})
    copy_rows(engine, "cohorts", ["id", "name", "period_start", "status", "starting_cash_micros", "rules", "lineup",
                                  "created_at"],
              ((c + 1, f"c{c:04d}", T0 - timedelta(days=c % 7), "open", 10_000_000_000, rules, "[]", T0)
               for c in range(cohorts)))
    n_agents = cohorts * agents
    copy_rows(engine, "agents", ["id", "cohort_id", "name", "kind", "model_id", "config"],
              ((a + 1, a // agents + 1, f"model-{a % agents:02d}", "scripted", "", "{}") for a in range(n_agents)))
    copy_rows(engine, "decisions", ["id", "cohort_id", "agent_id", "round_key", "status", "as_of",
                                    "cash_at_start_micros", "max_bet_micros", "actions", "reasoning", "error",
                                    "sizing_version", "claimed_at", "completed_at"],
              ((a + 1, a // agents + 1, a + 1, "w1", "executed", T0, 10_000_000_000, 500_000_000, "[]", "", "", "b",
                T0, T0) for a in range(n_agents)))

    def fills():  # type: ignore[no-untyped-def]
        for a in range(n_agents):
            start = int(rng.integers(0, markets))
            for j in range(positions):
                m = (start + j * 7) % markets
                p = int(yes[m])
                cost = 100_000_000
                yield (f"b:{a}:{j}", a // agents + 1, a + 1, f"sim:{m}", "YES", "buy", cost * 1_000_000 // p, -cost,
                       cost, p, p, "bench", a + 1, T0)

    copy_rows(engine, "fills", ["key", "cohort_id", "agent_id", "market_id", "outcome", "kind", "shares",
                                "cash_micros", "cost_micros", "price_ppm", "mid_ppm", "provenance", "decision_id", "at"],
              fills())
    copy_rows(engine, "forecasts", ["decision_id", "agent_id", "market_id", "source", "probability", "as_of"],
              ((a + 1, a + 1, f"sim:{k}", "forecast_set", float((a * 7 + k) % 97 + 1) / 100, T0)
               for a in range(n_agents) for k in range(10)))
    # VACUUM (ANALYZE), as autovacuum would soon do: the statistics the planner needs (gathered in a transaction
    # they would be rolled back with it) and the visibility map the index-only scans need — and the measurements
    # below do not compete with autovacuum's first pass over a million new rows.
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        c.execute(text("VACUUM (ANALYZE)"))
    print(f"   built {cohorts:,} cohorts × {agents} agents × {positions} positions = "
          f"{n_agents * positions:,} open positions on {markets:,} markets in {time.perf_counter() - t:.0f} s")


# The one-query valuation marks used before the sorted fold (hash-aggregated fold in a CTE, DISTINCT ON over a
# semi-join, two joins on text keys, NUMERIC floors): timed in the same run as the baseline.
PREVIOUS_AGENT_VALUES = """
WITH pos AS (
    SELECT agent_id, market_id, outcome, sum(shares) AS shares, sum(cost_micros) AS cost
    FROM fills WHERE cohort_id = ANY(:cohorts)
    GROUP BY agent_id, market_id, outcome HAVING sum(shares) > 0),
px AS (
    SELECT DISTINCT ON (market_id, outcome) market_id, outcome, price_ppm FROM price_snapshots
    WHERE market_id IN (SELECT DISTINCT market_id FROM pos) AND fetched_at <= :t AND observed_at <= :t
    ORDER BY market_id, outcome, observed_at DESC, id DESC),
valued AS (
    SELECT pos.agent_id, pos.shares, pos.cost,
           coalesce(d.price_ppm, CASE WHEN pos.outcome = 'NO' THEN 1000000 - y.price_ppm END) AS price
    FROM pos
    LEFT JOIN px d ON d.market_id = pos.market_id AND d.outcome = pos.outcome
    LEFT JOIN px y ON y.market_id = pos.market_id AND y.outcome = 'YES')
SELECT agent_id,
       CAST(sum(CASE WHEN price IS NULL THEN cost
                     ELSE div(shares, 1000000) * price + div(mod(shares, 1000000) * price, 1000000) END) AS bigint),
       count(*), sum(CASE WHEN price IS NULL THEN 1 ELSE 0 END)
FROM valued GROUP BY agent_id
"""


def previous_agent_values(session, as_of, cohort_ids):  # type: ignore[no-untyped-def]
    from sqlalchemy import BigInteger, bindparam
    from sqlalchemy.dialects.postgresql import ARRAY

    

    conn = session.connection()
    conn.execute(text("SET LOCAL work_mem = '256MB'"))
    q = text(PREVIOUS_AGENT_VALUES).bindparams(bindparam("cohorts", type_=ARRAY(BigInteger)))
    rows = conn.execute(q, {"cohorts": [int(c) for c in cohort_ids], "t": as_of}).all()
    return rows_frame(rows, ["agent_id", "positions_value", "open_positions", "unpriced"]).astype(
        "int64").set_index("agent_id")


def load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def bench_mark(engine, cohorts: int) -> None:  # type: ignore[no-untyped-def]
    from unittest import mock

    from arena.usecases import mark
    from arena.usecases.mark import mark_to_market

    as_of = T0 + timedelta(hours=1)
    t = time.perf_counter()
    one = mark_to_market(engine, as_of, [1])
    per_cohort = time.perf_counter() - t
    t = time.perf_counter()
    counts = mark_to_market(engine, as_of + timedelta(minutes=1))
    elapsed = time.perf_counter() - t
    with mock.patch.object(mark, "agent_values", previous_agent_values):
        t = time.perf_counter()
        before = mark_to_market(engine, as_of + timedelta(minutes=2))
        previous = time.perf_counter() - t
    with engine.connect() as c:  # the two paths wrote the same values
        totals = c.execute(text(
            "SELECT as_of, sum(total_value_micros), sum(open_positions) FROM portfolio_snapshots "
            "WHERE as_of IN (:a, :b) GROUP BY as_of ORDER BY as_of"),
            {"a": as_of + timedelta(minutes=1), "b": as_of + timedelta(minutes=2)}).all()
    same = len(totals) == 2 and totals[0][1:] == totals[1][1:] and before.positions == counts.positions
    print(f"3. Mark {counts.positions:,} open positions of {counts.agents:,} agents (PostgreSQL, {load()})")
    print(f"   sorted fold (today):        {elapsed:6.2f} s  [goal <= 5 s]  -> {elapsed / 5:.2f} of the goal")
    print(f"   previous one-query path:    {previous:6.2f} s  -> {previous / elapsed:.1f}x   (same totals: {same})")
    print(f"   one cohort at a time:       {per_cohort:.3f} s ({one.positions:,} positions) × {cohorts:,} = "
          f"{per_cohort * cohorts:6.1f} s -> {per_cohort * cohorts / elapsed:.1f}x")


def change_one_cohort(engine, n: int = 0) -> None:  # type: ignore[no-untyped-def]
    """One new fill in cohort 1 (what a scheduled render sees after an hour in which one cohort traded)."""
    with engine.begin() as c:
        c.execute(text(
            "INSERT INTO fills (key, cohort_id, agent_id, market_id, outcome, kind, shares, cash_micros, cost_micros, "
            "price_ppm, mid_ppm, provenance, decision_id, at) VALUES (:key, 1, 1, 'sim:3', 'YES', 'buy', "
            "20000000, -10000000, 10000000, 500000, 500000, 'bench', 1, :at)"),
            {"key": f"b:changed:{n}", "at": T0 + timedelta(minutes=90)})


def forget_process_memos() -> None:
    """What a fresh process (`arena render` from cron) starts with: the caches in the store, none in memory."""
    from arena.scoring import stats
    from arena.cache.memo import forget_all

    forget_all()
    stats._CLUSTER_MEMO.clear()  # (the bootstrap's draws of the last cluster sizes)


def bench_standings(engine, cohorts: int, cache_cohorts: int) -> None:  # type: ignore[no-untyped-def]
    from unittest import mock

    from arena.read import standings as standings_module
    from arena.cache.frame_cache import cohort_frames
    from sqlalchemy import select
    from sqlmodel import Session

    from arena.scoring.leaderboard import leaderboard
    from arena.read.score import cohort_leaderboards, portfolios_frame
    from arena.read.standings import standings
    from arena.store.frames import bets_frame, forecasts_frame
    from arena.store.tables import CohortRow

    as_of = T0 + timedelta(hours=2)
    t = time.perf_counter()
    one = cohort_leaderboards(engine, as_of, ["c0000"])
    per_cohort = time.perf_counter() - t
    t = time.perf_counter()
    board = cohort_leaderboards(engine, as_of)
    elapsed = time.perf_counter() - t
    t = time.perf_counter()
    with Session(engine) as s:  # the same frames read one after another in one session (before read_together)
        ids = list(s.scalars(select(CohortRow.id).order_by(CohortRow.period_start)))
        leaderboard(bets_frame(s, ids), portfolios_frame(s, as_of, ids), forecasts_frame(s, ids))
    one_by_one = time.perf_counter() - t
    print(f"4. Standings of {board['cohort'].nunique():,} cohorts × {len(one)} agents ({len(board):,} rows, "
          f"PostgreSQL, {load()})")
    print(f"   score.cohort_leaderboards:  {elapsed:6.2f} s [goal <= 5 s]; one cohort ({per_cohort:.3f} s) × "
          f"{cohorts:,} = {per_cohort * cohorts:6.1f} s -> {per_cohort * cohorts / elapsed:.1f}x; its frames read "
          f"one after another {one_by_one:.2f} s -> {one_by_one / elapsed:.2f}x")
    names = [f"c{c:04d}" for c in range(min(cache_cohorts, cohorts))]

    def timed(previous: bool = False) -> float:
        t = time.perf_counter()
        if previous:  # the path before the frame cache: every cohort's frames read, boards by content hash
            whole = lambda e, c, a, cache=True: cohort_frames(e, c, a, cache=False)  # noqa: E731
            with mock.patch.object(standings_module, "cohort_frames", whole):
                standings(engine, as_of, cohort_names=names, cache=True)
        else:
            standings(engine, as_of, cohort_names=names, cache=True)
        return time.perf_counter() - t

    cold = timed()
    warm = min(timed(), timed())
    timed(previous=True)  # (its boards are keyed by their rows' content: the first call computes and stores them)
    previous = timed(previous=True)
    forget_process_memos()
    fresh = timed()
    change_one_cohort(engine, 1)
    changed = timed()
    change_one_cohort(engine, 2)
    forget_process_memos()
    changed_fresh = timed()
    print(f"   standings.standings (the site's boards, frame and board caches), {len(names):,} cohorts, {load()}:")
    print(f"     cold (reads every cohort, computes and stores every board): {cold:7.2f} s")
    print(f"     warm, nothing changed (a long-running process):             {warm:7.2f} s  [goal <= 5 s]  -> "
          f"{previous / warm:.1f}x the previous path")
    print(f"     warm, nothing changed, a fresh process (caches in the store only): {fresh:7.2f} s  [goal <= 5 s]  -> "
          f"{previous / fresh:.1f}x the previous path")
    print(f"     one cohort changed (a scheduled render), long-running process: {changed:7.2f} s  [goal <= 5 s]  -> "
          f"{previous / changed:.1f}x the previous path")
    print(f"     one cohort changed, a fresh process:                        {changed_fresh:7.2f} s  [goal <= 5 s]  -> "
          f"{previous / changed_fresh:.1f}x the previous path")
    print(f"     previous path, warm (every cohort's frames read and hashed; boards from the board cache): "
          f"{previous:7.2f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("ARENA_BENCH_DATABASE_URL", DEFAULT_URL))
    parser.add_argument("--only", default="sync,storage,mark,standings")
    parser.add_argument("--markets", type=int, default=100_000, help="markets in the sync benchmark")
    parser.add_argument("--repeat", type=int, default=1, help="sync series per path (the fastest is shown)")
    parser.add_argument("--storage-markets", type=int, default=10_000)
    parser.add_argument("--changing", type=float, default=0.05, help="fraction of prices changing each hour")
    parser.add_argument("--cohorts", type=int, default=1_000)
    parser.add_argument("--positions", type=int, default=50, help="open positions per agent")
    parser.add_argument("--cache-cohorts", type=int, default=1_000,
                        help="cohorts in the cached-standings lines (the cold line computes every board: ~0.3-0.8 s "
                             "each on two cores)")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    for part in ("sync", "storage", "scores"):
        if part == "scores" and not only & {"mark", "standings"}:
            continue
        if part != "scores" and part not in only:
            continue
        made = throwaway(args.url)
        if made is None:
            return 0
        engine, drop = made
        try:
            if part == "sync":
                bench_sync(args.url, args.markets, args.repeat)
            elif part == "storage":
                bench_storage(engine, args.storage_markets, args.changing)
            else:
                build_cohorts(engine, args.cohorts, 20, args.positions, 20_000)
                if "mark" in only:
                    bench_mark(engine, args.cohorts)
                if "standings" in only:
                    bench_standings(engine, args.cohorts, args.cache_cohorts)
        finally:
            drop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
