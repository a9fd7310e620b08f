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
    if args.start is None:
        args.start = "2025-11-02" if args.replay else "2026-01-04"
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
    if args.replay:
        from arena.agents.baselines import replay_lineup
        from arena.services.simulation import ReplayTimeVenue
        from arena.venues.replay import ReplayVenue

        replay = ReplayVenue.from_path(args.replay, skip_malformed=True)
        venue: object = ReplayTimeVenue(replay)
        agents = replay_lineup(lambda mid: replay.record(mid).resolution, args.seed)
        until = start + timedelta(weeks=args.cohorts + args.decision_weeks, days=args.days)
        what = f"replay of {len(replay)} recorded markets ({replay.skipped_count} malformed lines skipped)"
    else:
        universe = SimulatedUniverse.generate(args.seed, start, weeks=args.cohorts + args.decision_weeks,
                                              markets_per_week=args.markets_per_week)
        venue = universe
        agents = demo_lineup(universe, args.seed)
        until = universe.end + timedelta(days=1)
        what = f"{len(universe)} simulated markets"
    lineup = [LineupEntry(a.name, "scripted", config={"version": getattr(a, "version", "")}) for a in agents]
    if args.llm:
        import os

        from arena.agents.llm import agents_from_config

        config = _load_config(args.config)
        if not config.llm_agents:
            print("--llm: the configuration has no LLM agents ([[agents]] with kind = \"llm\"); see "
                  "arena.example.toml and pass --config FILE", file=sys.stderr)
            return 2
        missing = config.missing_keys(os.environ)
        if missing:
            print("--llm: API keys are missing, so the LLM agents cannot run:", file=sys.stderr)
            for agent, env in missing:
                print(f"  {agent}: export {env}=<your key>", file=sys.stderr)
            print("Keys are read only from the environment; they are never stored, logged or shown.",
                  file=sys.stderr)
            return 2
        llm = agents_from_config(config, os.environ)
        for entry in config.llm_agents:
            agents.append(llm[entry.name])
            lineup.append(LineupEntry(entry.name, entry.kind, entry.model, entry.to_json()))
    report = simulate(engine, venue, {a.name: a for a in agents}, start, args.cohorts, rules,  # type: ignore[arg-type]
                      lineup, until, forecast_k=args.forecast_k)
    as_of = start + timedelta(days=report.days)
    print(f"arena demo — seed {args.seed}: {what}, {len(report.cohorts)} weekly cohorts "
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


def _sync(args: argparse.Namespace) -> int:
    from arena.clock import FixedClock, SystemClock
    from arena.domain.universe import DEFAULT_EXCLUDED_KEYWORDS, UniverseRules
    from arena.services import sync
    from arena.store.engine import open_store
    from arena.venues.http import VenueHTTP

    engine = open_store(args.db)
    rules = UniverseRules(top_n=args.top, rank_by=args.rank_by, horizon_days=args.horizon_days,
                          exclude_keywords=tuple(args.exclude) if args.exclude is not None
                          else DEFAULT_EXCLUDED_KEYWORDS)
    if args.venue == "replay":
        from arena.venues.replay import ReplayVenue

        if not args.file:
            print("arena sync --venue replay needs --file", file=sys.stderr)
            return 2
        clock = FixedClock(datetime.fromisoformat(args.at)) if args.at else SystemClock()
        report = sync.sync_replay(engine, ReplayVenue.from_path(args.file, skip_malformed=True), clock)
    elif args.venue == "polymarket":
        from arena.venues.polymarket import PolymarketClient

        clock = SystemClock()
        report = sync.sync_polymarket(engine, PolymarketClient(VenueHTTP(), clock=clock), clock, rules)
    else:
        from arena.venues.manifold import ManifoldClient

        clock = SystemClock()
        report = sync.sync_manifold(engine, ManifoldClient(VenueHTTP(), clock=clock), clock, rules)
    print(report.line())
    if report.status != "ok":
        print(f"sync failed: {report.error}", file=sys.stderr)
        return 1
    return 0


def _export(args: argparse.Namespace) -> int:
    from arena.services.export import export_replay, export_tables
    from arena.store.engine import open_store

    engine = open_store(args.db)
    if args.what == "replay":
        report = export_replay(engine, args.out)
        skipped = ", ".join(f"{n} {why}" for why, n in sorted(report.skipped.items())) or "none"
        print(f"wrote {report.written} resolved markets to {args.out}; left out: {skipped}")
        return 0
    report = export_tables(engine, args.out, datetime.now(timezone.utc), args.cohort)
    print(f"wrote {report.written} rows: " + ", ".join(report.files))
    return 0


def _load_config(path: str | None):  # type: ignore[no-untyped-def]
    """The arena config: --config, else ./arena.toml when present, else the defaults (baselines only)."""
    from arena.config import default_config, load_config

    if path:
        return load_config(path)
    if Path("arena.toml").is_file():
        return load_config("arena.toml")
    return default_config()


def _runtime(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    import os

    from arena.store.engine import open_store
    from jobs.runtime import Runtime, configure

    config = _load_config(getattr(args, "config", None))
    mark = config.schedule.overrides().get("mark")
    mark_every = timedelta(**{k: int(v) for k, v in mark.items()}) if isinstance(mark, dict) else timedelta(days=1)
    venues = tuple(getattr(args, "venue", None) or ("polymarket", "manifold"))
    return configure(Runtime(
        engine=open_store(args.db), config=config, site_dir=Path(args.site) if getattr(args, "site", None) else None,
        mark_every=mark_every, environ=dict(os.environ), sync_venues=venues,
        replay_path=Path(args.replay) if getattr(args, "replay", None) else None,
    ))


def _cohort(args: argparse.Namespace) -> int:
    from arena.clock import SystemClock
    from arena.services.lifecycle import start_current_cohort
    from arena.store.engine import open_store

    config = _load_config(args.config)
    name, created = start_current_cohort(open_store(args.db), SystemClock().now(), config)
    print(f"{name}: {'opened' if created else 'already open (nothing changed)'}; lineup: "
          + ", ".join(a.name for a in config.lineup))
    return 0


def _round(args: argparse.Namespace) -> int:
    import os
    from collections import Counter

    from arena.clock import SystemClock
    from arena.services.lifecycle import decision_round
    from arena.store.engine import open_store

    config = _load_config(args.config)
    missing = config.missing_keys(os.environ)
    for agent, env in missing:
        print(f"warning: {agent} has no API key (set {env}); its decisions will be recorded as failed",
              file=sys.stderr)
    rounds = decision_round(open_store(args.db), SystemClock().now(), config, os.environ)
    if not rounds:
        print("no cohort is in its decision window (run `arena cohort start` first)")
    for cohort, outs in rounds.items():
        print(f"{cohort}: " + ", ".join(f"{k} {v}" for k, v in sorted(Counter(o.status for o in outs).items())))
    return 0


def _jobs(args: argparse.Namespace) -> int:
    from jobs.scheduler import JOB_MODULES, build_scheduler, run_now

    rt = _runtime(args)
    if args.action == "run":
        if args.name not in JOB_MODULES:
            print(f"unknown job {args.name!r}; jobs: {', '.join(JOB_MODULES)}", file=sys.stderr)
            return 2
        out = run_now(args.name)
        print(f"{out.job} [{out.period_key}]: {out.status} {out.counts or ''}{(' ' + out.error) if out.error else ''}")
        return 0 if out.status in ("ok", "skipped") else 1
    from arena.services.operations import recent_runs

    sch = build_scheduler(rt, manual=True, schedule=rt.config.schedule.overrides())
    sch.start(paused=True)
    try:
        last = {}
        for r in reversed(recent_runs(rt.engine, 500)):
            last[r.job] = r
        print(f"{'job':<16} {'next run (UTC)':<27} {'last run':<30} trigger")
        for job in sorted(sch.get_jobs(), key=lambda j: j.id):
            r = last.get(job.id)
            lr = f"{r.status} {r.started_at:%Y-%m-%d %H:%M}" if r else "never"
            nxt = f"{job.next_run_time:%Y-%m-%d %H:%M:%S}" if job.next_run_time else "paused"
            print(f"{job.id:<16} {nxt:<27} {lr:<30} {job.trigger}")
    finally:
        sch.shutdown()
    return 0


def _scheduler(args: argparse.Namespace) -> int:
    from jobs.scheduler import build_scheduler

    rt = _runtime(args)
    sch = build_scheduler(rt, schedule=rt.config.schedule.overrides())
    print(f"arena scheduler: {len(sch.get_jobs())} jobs, job store in "
          f"{rt.engine.url.render_as_string(hide_password=True)}; Ctrl-C stops it")
    try:
        sch.start()
    except (KeyboardInterrupt, SystemExit):
        pass
    return 0


def _score(args: argparse.Namespace) -> int:
    from arena.services.forecast_file import score_command

    return score_command(args.file, args.out, args.leave_one_out, sys.stdout, sys.stderr, args.bootstrap, args.seed)


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
    d.add_argument("--start", default=None,
                   help="first cohort's Sunday (UTC; default 2026-01-04, or 2025-11-02 with --replay)")
    d.add_argument("--replay", default=None, metavar="FILE",
                   help="run the cohorts on recorded markets (replay JSON lines) instead of the simulator")
    d.add_argument("--days", type=int, default=120, help="with --replay: days to run after the last decision")
    d.add_argument("--db", default=None, help="SQLAlchemy URL (default: a fresh SQLite file under db/)")
    d.add_argument("--llm", action="store_true", help="add the configured LLM agents (their keys must be set)")
    d.add_argument("--config", default=None, help="with --llm: the arena TOML (default ./arena.toml)")
    d.set_defaults(func=_demo)

    sy = sub.add_parser("sync", help="bring a venue's markets, prices and resolutions into the database")
    sy.add_argument("--venue", required=True, choices=["polymarket", "manifold", "replay"])
    sy.add_argument("--file", default=None, help="with --venue replay: the replay JSON-lines file")
    sy.add_argument("--at", default=None, help="with --venue replay: the simulated time (ISO, UTC; default now)")
    sy.add_argument("--top", type=int, default=100, help="markets in the universe")
    sy.add_argument("--rank-by", default="volume_24h", choices=["volume_24h", "liquidity", "volume"])
    sy.add_argument("--horizon-days", type=int, default=60, help="leave out markets closing later than this")
    sy.add_argument("--exclude", action="append", default=None, metavar="KEYWORD",
                    help="leave out markets whose question contains KEYWORD (repeatable; replaces the defaults)")
    sy.add_argument("--db", default=None)
    sy.set_defaults(func=_sync)

    ex = sub.add_parser("export", help="export CSV (fills, decisions, snapshots, scores) or a replay file")
    ex.add_argument("what", nargs="?", default="csv", choices=["csv", "replay"])
    ex.add_argument("--out", required=True, help="a directory for csv, a file for replay")
    ex.add_argument("--cohort", default=None, help="csv: only this cohort")
    ex.add_argument("--db", default=None)
    ex.set_defaults(func=_export)

    co = sub.add_parser("cohort", help="cohort lifecycle")
    co.add_argument("action", choices=["start"])
    co.add_argument("--config", default=None, help="arena TOML (default: ./arena.toml, else built-in defaults)")
    co.add_argument("--db", default=None)
    co.set_defaults(func=_cohort)

    rd = sub.add_parser("round", help="run the decision round now for the newest open cohorts")
    rd.add_argument("--config", default=None)
    rd.add_argument("--db", default=None)
    rd.set_defaults(func=_round)

    jb = sub.add_parser("jobs", help="list scheduled jobs, or run one now")
    jb.add_argument("action", choices=["list", "run"])
    jb.add_argument("name", nargs="?", default=None)
    for p_ in (jb, sub.add_parser("scheduler", help="run every job on its schedule, in the foreground")):
        p_.add_argument("--config", default=None)
        p_.add_argument("--db", default=None)
        p_.add_argument("--site", default=None, help="render the static site here after each job")
        p_.add_argument("--venue", action="append", choices=["polymarket", "manifold", "replay"],
                        help="venues the sync job reads (default: polymarket and manifold)")
        p_.add_argument("--replay", default=None, help="the replay file, with --venue replay")
    jb.set_defaults(func=_jobs)
    sub.choices["scheduler"].set_defaults(func=_scheduler)

    from arena.cli_web import configure_render_parser, configure_serve_parser

    configure_render_parser(sub.add_parser("render", help="write the static leaderboard site"))
    configure_serve_parser(sub.add_parser("serve", help="serve the leaderboard pages live from the database"))

    s = sub.add_parser("score", help="score an external forecast file (CSV or JSON lines)")
    s.add_argument("file")
    s.add_argument("--out", default=None, help="write CSV here instead of stdout")
    s.add_argument("--leave-one-out", action="store_true", help="aggregate the other forecasters only")
    s.add_argument("--bootstrap", type=int, default=0, metavar="N",
                   help="add intervals, significance tiers, P(first) and calibration from N paired draws")
    s.add_argument("--seed", type=int, default=0, help="seed of the bootstrap draws")
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
