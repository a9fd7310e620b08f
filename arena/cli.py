"""The command line: thin wiring over the services. `arena --help` lists the commands."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

from arena.errors import ArenaError


def _demo(args: argparse.Namespace) -> int:
    from arena.agents.baselines import demo_lineup
    from arena.domain.sizing import CohortRules
    from arena.report import LEGEND, cohort_report, overall_report
    from arena.services.cohorts import LineupEntry
    from arena.services.score import cohort_leaderboards, overall_leaderboard
    from arena.services.simulation import simulate
    from arena.store.engine import DB_DIR, open_store
    from arena.venues.simulated import SimulatedUniverse

    started = time.perf_counter()
    start = datetime.fromisoformat(args.start).replace(tzinfo=timezone.utc)
    if start.weekday() != 6:
        print(f"--start must be a Sunday (cohorts open Sunday 00:00 UTC), got {args.start}", file=sys.stderr)
        return 2
    url = args.db
    if url is None:
        path = DB_DIR / f"demo-seed{args.seed}.sqlite"
        for p in DB_DIR.glob(f"demo-seed{args.seed}.sqlite*"):
            p.unlink()  # the demo starts from an empty database unless --db names one
        url = f"sqlite:///{path}"
    engine = open_store(url)
    rules = CohortRules(decision_weeks=args.decision_weeks)
    universe = SimulatedUniverse.generate(args.seed, start, weeks=args.cohorts + args.decision_weeks,
                                          markets_per_week=args.markets_per_week)
    agents = demo_lineup(universe, args.seed)
    lineup = [LineupEntry(a.name, "scripted", config={"version": getattr(a, "version", "")}) for a in agents]
    until = universe.end + timedelta(days=1)
    report = simulate(engine, universe, {a.name: a for a in agents}, start, args.cohorts, rules, lineup, until,
                      forecast_k=args.forecast_k)
    as_of = start + timedelta(days=report.days)
    print(f"arena demo — seed {args.seed}: {len(universe)} simulated markets, {len(report.cohorts)} weekly cohorts "
          f"× {len(agents)} scripted agents, {report.days} simulated days")
    print(f"decisions: {dict(sorted(report.decisions.items()))}; fills: {report.fills} bets/sells, "
          f"{report.settled} settlements, {report.refunded} refunds (voided markets); "
          f"completed cohorts: {len(report.completed)}/{len(report.cohorts)}")
    print()
    print(cohort_report(cohort_leaderboards(engine, as_of)))
    print()
    print(overall_report(overall_leaderboard(engine, as_of)))
    print()
    print(LEGEND)
    print(f"\ndatabase: {engine.url.render_as_string(hide_password=True)}   ({time.perf_counter() - started:.1f} s)")
    return 0


def _score(args: argparse.Namespace) -> int:
    from arena.services.forecast_file import score_command

    return score_command(args.file, args.out, args.leave_one_out, sys.stdout, sys.stderr)


def _migrate(args: argparse.Namespace) -> int:
    from arena.store.engine import current_revision, open_store

    engine = open_store(args.db)
    print(f"{engine.url.render_as_string(hide_password=True)} at revision {current_revision(engine)}")
    return 0


def _leaderboard(args: argparse.Namespace) -> int:
    from arena.report import LEGEND, cohort_report, overall_report
    from arena.services.score import cohort_leaderboards, overall_leaderboard
    from arena.store.engine import open_store

    engine = open_store(args.db)
    now = datetime.now(timezone.utc)
    board = cohort_leaderboards(engine, now, args.cohort or None)
    if board.empty:
        print("no cohorts yet")
        return 0
    print(cohort_report(board))
    if not args.cohort:
        print()
        print(overall_report(overall_leaderboard(engine, now)))
    print()
    print(LEGEND)
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="arena", description="Paper-trading arena for forecasting agents.")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("demo", help="run simulated weekly cohorts of scripted agents offline and print leaderboards")
    d.add_argument("--seed", type=int, default=7)
    d.add_argument("--cohorts", type=int, default=4, help="weekly cohorts to open")
    d.add_argument("--decision-weeks", type=int, default=4, help="weekly decision rounds per cohort")
    d.add_argument("--markets-per-week", type=int, default=30)
    d.add_argument("--forecast-k", type=int, default=20, help="markets every agent forecasts each round")
    d.add_argument("--start", default="2026-01-04", help="first cohort's Sunday (UTC)")
    d.add_argument("--db", default=None, help="SQLAlchemy URL (default: a fresh SQLite file under db/)")
    d.set_defaults(func=_demo)

    s = sub.add_parser("score", help="score an external forecast file (CSV or JSON lines)")
    s.add_argument("file")
    s.add_argument("--out", default=None, help="write CSV here instead of stdout")
    s.add_argument("--leave-one-out", action="store_true", help="aggregate the other forecasters only")
    s.set_defaults(func=_score)

    m = sub.add_parser("migrate", help="create or upgrade the database schema")
    m.add_argument("--db", default=None, help="SQLAlchemy URL (default: ARENA_DATABASE_URL or db/arena.sqlite)")
    m.set_defaults(func=_migrate)

    lb = sub.add_parser("leaderboard", help="print the leaderboards of a database")
    lb.add_argument("--db", default=None)
    lb.add_argument("--cohort", action="append", help="only this cohort (repeatable)")
    lb.set_defaults(func=_leaderboard)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ArenaError as exc:  # the one boundary where arena errors become messages and exit codes
        print(f"arena: {exc.reason}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
