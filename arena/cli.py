"""The command line: thin wiring over the services. `arena --help` lists the commands."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from arena.cli_args import (DB_HELP, ArenaArgumentParser, count, non_negative_int, parse_at, parse_day, path_arg,
                             positive_float, positive_int)
from arena.errors import ArenaError, InputError

if TYPE_CHECKING:  # the commands import what they use when run, so `arena --help` stays quick
    from sqlalchemy.engine import Engine

    from arena.clock import Clock
    from arena.config import ArenaConfig
    from arena.domain.book import OrderBook
    from arena.domain.question_filter import QuestionFilter
    from arena.jobs.plan import Planned
    from arena.jobs.runtime import Runtime
    from arena.ops.endpoint_slots import EndpointLimits
    from arena.read.contamination import Exposure
    from arena.usecases.pricing import BookSource
    from arena.usecases.simulation import TimeVenue
    from arena.venues.polymarket import PolymarketClient
    from arena.venues.replay import ReplayVenue


class _BadAt(ValueError):
    """An --at/--from/--until value that is not an ISO time; the command prints one line and exits 2."""


def _time_arg(text: str | datetime, flag: str = "--at") -> datetime:
    """An ISO 8601 date or time given on the command line, as aware UTC (a naive value is taken as UTC); a value
    the parser already made a datetime passes through."""
    try:
        t = text if isinstance(text, datetime) else datetime.fromisoformat(text)
    except ValueError:
        raise _BadAt(f"{flag} must be an ISO 8601 date or time in UTC (e.g. 2025-11-02 or 2025-11-02T00:05), "
                     f"got {text!r}") from None
    return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)


def _clock(args: argparse.Namespace) -> Clock:
    """The clock of an operational command: fixed at --at when given, else the system clock."""
    from arena.clock import FixedClock, SystemClock

    at = getattr(args, "at", None)
    return FixedClock(_time_arg(at)) if at else SystemClock()


def _has_arena_data(engine: Engine) -> bool:
    """Whether the database already holds an arena (any cohort or market)."""
    from sqlalchemy import func, select

    from arena.store.tables import CohortRow, MarketRow

    with engine.connect() as c:
        return any(c.execute(select(func.count()).select_from(t)).scalar_one() for t in (CohortRow, MarketRow))


def _demo(args: argparse.Namespace) -> int:
    from arena.agents.baselines import demo_lineup
    from arena.domain.sizing import CohortRules
    from arena.report import hint, legend, render_boards, risk_report
    from arena.usecases.cohorts import LineupEntry
    from arena.usecases.simulation import simulate
    from arena.read.standings import standings
    from arena.store.engine import data_dir, fresh_store, open_store
    from arena.domain.ladders import detect_ladders
    from arena.venues.simulated import SimulatedUniverse

    started = time.perf_counter()
    if args.start is None:
        args.start = parse_day("2025-11-02" if args.replay else "2026-01-04")
    start = datetime(args.start.year, args.start.month, args.start.day, tzinfo=timezone.utc)
    if start.weekday() != 6:
        sunday = start + timedelta(days=(6 - start.weekday()) % 7)
        raise InputError(f"--start must be a Sunday (cohorts open Sunday 00:00 UTC), got {args.start} ({start:%A})",
                         fix=f"e.g. --start {sunday:%Y-%m-%d}")
    rules = CohortRules(decision_weeks=args.decision_weeks)
    if args.replay:
        from arena.agents.baselines import replay_lineup
        from arena.usecases.simulation import ReplayTimeVenue
        from arena.venues.replay import ReplayVenue

        replay = ReplayVenue.from_path(args.replay, skip_malformed=True)  # read before any database is touched
        _tell_skipped(replay, args.replay)
        venue: TimeVenue = ReplayTimeVenue(replay)
        agents = replay_lineup(lambda mid: replay.record(mid).resolution, args.seed)
        until = start + timedelta(weeks=args.cohorts + args.decision_weeks, days=args.days)
        what = f"replay of {len(replay)} recorded markets ({replay.skipped_count} malformed lines skipped)"
    else:
        universe = SimulatedUniverse.generate(args.seed, start, weeks=args.cohorts + args.decision_weeks,
                                              markets_per_week=args.markets_per_week,
                                              groups_per_week=args.groups_per_week,
                                              ladders_per_week=args.ladders_per_week)
        venue = universe
        agents = demo_lineup(universe, args.seed)
        until = universe.end + timedelta(days=1)
        n_groups = len({m.group_id for m in universe.all_markets() if m.group_id})
        n_ladders = len(detect_ladders(universe.all_markets()))
        what = f"{len(universe)} simulated markets ({n_groups} exclusive groups and {n_ladders} ladders among them)"
    from arena.agents.baselines import DEMO_ABLATION

    lineup = [LineupEntry(a.name, "scripted", config={"version": getattr(a, "version", ""),
                                                      **DEMO_ABLATION.get(a.name, {})}) for a in agents]
    n_scripted = len(agents)
    standins = None
    if not args.no_standin:
        # LLM seats through the real LLM path (prompt, HTTP, parse, cost) against a local stand-in model on
        # 127.0.0.1: the demo's model calls, with a cost, and so its cost–skill frontier (the server starts once
        # the database is open, so a refused flag above leaves no server behind)
        from arena.agents.standin_models import STANDIN_MODELS, standin_server

        standins = standin_server(args.seed)
        for m in STANDIN_MODELS:
            lineup.append(LineupEntry(m.name, "llm", m.model, m.config().to_json()))
    if args.llm:
        import os

        from arena.agents.llm import agents_from_config

        config = _load_config(args.config)
        if not config.llm_agents:
            raise InputError("--llm: the configuration has no LLM agents ([[agents]] with kind = \"llm\")",
                             fix="see arena.example.toml and pass --config FILE")
        missing = config.missing_keys(os.environ)
        if missing:
            raise InputError("--llm: API keys are missing, so the LLM agents cannot run: "
                             + ", ".join(f"{agent} needs {env}" for agent, env in missing),
                             fix="export " + " ".join(f"{env}=<your key>" for _, env in missing)
                             + " (keys are read only from the environment; never stored, logged or shown)")
        llm = agents_from_config(config, os.environ)
        for entry in config.llm_agents:
            agents.append(llm[entry.name])
            lineup.append(LineupEntry(entry.name, entry.kind, entry.model, entry.to_json()))
    url = args.db
    if url is None:
        path = data_dir() / f"demo-seed{args.seed}.sqlite"
        for p in data_dir().glob(f"demo-seed{args.seed}.sqlite*"):
            p.unlink()  # the demo starts from an empty database unless --db names one
        url = f"sqlite:///{path}"
    engine = open_store(url)  # only now: bad flags, files and keys above have written nothing
    if args.db is not None and _has_arena_data(engine):
        if not args.force:
            raise InputError(f"{engine.url.render_as_string(hide_password=True)} already holds an arena (cohorts "
                             "or markets); the demo would mix simulated cohorts into it",
                             fix="name a new database with --db, or pass --force to empty it and start over")
        # A demo killed half-way cannot be finished as a clean run would (its clock, its claims and its
        # settlements are mid-flight): --force starts over in the emptied store, in one transaction.
        engine = fresh_store(engine)
        print(f"--force: emptied {engine.url.render_as_string(hide_password=True)} to start the demo over", flush=True)
    from arena.progress import Progress

    if standins is not None:
        from arena.agents.standin_models import standin_agents

        standins.start()
        agents.extend(standin_agents(standins.base_url))
    try:
        with Progress((until - start).days + 1, "arena demo", unit="day") as bar:
            report = simulate(engine, venue, {a.name: a for a in agents}, start, args.cohorts,
                              rules, lineup, until, forecast_k=args.forecast_k,
                              on_day=lambda day: bar.update(1, f"{day:%Y-%m-%d}"))
            # the run stops once every cohort has completed: the count it reached is the run's length
            bar.finish(f"every cohort completed (at most {(until - start).days + 1} days)")
    finally:
        if standins is not None:
            for agent in agents[n_scripted:]:
                getattr(agent, "close", lambda: None)()
            standins.stop()
    as_of = start + timedelta(days=report.days)
    import textwrap

    from arena.report import terminal_width

    decisions = ", ".join(f"{n} {status}" for status, n in sorted(report.decisions.items())) or "none"
    n_standin = len(agents) - n_scripted - (len(config.llm_agents) if args.llm else 0)
    seats = f"{n_scripted} scripted agents" + (f" + {n_standin} stand-in LLM seats" if n_standin else "") \
        + (f" + {len(config.llm_agents)} LLM agents" if args.llm else "")
    lines = [f"arena demo — seed {args.seed}: {what}, {len(report.cohorts)} weekly cohorts "
             f"× {seats}, {report.days} simulated days",
             f"decisions: {decisions}; fills: {report.fills} bets/sells, {report.settled} settlements, "
             f"{report.refunded} refunds (voided markets); completed cohorts: "
             f"{len(report.completed)}/{len(report.cohorts)}"]
    if standins is not None:
        from arena.agents.standin_models import STANDIN_MODELS, STANDIN_NOTE

        lines.append(f"{', '.join(m.name for m in STANDIN_MODELS)}: {STANDIN_NOTE} (--no-standin leaves them "
                     f"out; `arena demo --llm` adds real models)")
    for line in lines:
        print(textwrap.fill(line, width=terminal_width(), break_on_hyphens=False))
    print()
    boards = standings(engine, as_of)
    shown = render_boards(boards)
    print(shown.text)
    print()
    risk = risk_report(boards)
    if risk.text:
        print(risk.text)
        print()
    if standins is not None or args.llm:
        from arena.read.frontier import model_frontier
        from arena.report import frontier_report

        print(frontier_report(model_frontier(engine, as_of)))
        print()
    print(legend(headers=shown.headers + risk.headers))
    print(hint(shown))
    print(f"\ndatabase: {engine.url.render_as_string(hide_password=True)}   ({time.perf_counter() - started:.1f} s)")
    return 0


def _sync(args: argparse.Namespace) -> int:
    from arena.domain.universe import DEFAULT_EXCLUDED_KEYWORDS, UniverseRules
    from arena.usecases import venue_registry
    from arena.store.engine import open_store
    from arena.venues.http import VenueHTTP

    clock = _clock(args)
    rules = UniverseRules(top_n=args.top, rank_by=args.rank_by, horizon_days=args.horizon_days,
                          exclude_keywords=tuple(args.exclude) if args.exclude is not None
                          else DEFAULT_EXCLUDED_KEYWORDS)
    if args.venue == "replay":
        from arena.venues.replay import ReplayVenue

        if not args.file:
            raise InputError("arena sync --venue replay needs the replay file",
                             fix="pass --file FILE (JSON lines, e.g. written by `arena export replay`)")
        replay = ReplayVenue.from_path(args.file, skip_malformed=True)  # read before any database is touched
        _tell_skipped(replay, args.file)
        print(f"arena sync: reading {args.venue} as of {clock.now():%Y-%m-%d %H:%M:%S} UTC …", flush=True)
        report = venue_registry.sync("replay", open_store(args.db), replay, clock)
    else:
        import httpx

        from arena.progress import Progress

        engine = open_store(args.db)
        print(f"arena sync: reading {args.venue} as of {clock.now():%Y-%m-%d %H:%M:%S} UTC …", flush=True)
        # progress: one step per venue response (the number of pages is not known in advance)
        with Progress(0, f"arena sync {args.venue}", unit="request") as bar, \
                httpx.Client(follow_redirects=True,
                             event_hooks={"response": [lambda r: bar.update(1, r.url.path)]}) as client:
            http = VenueHTTP(client)
            report = venue_registry.sync(args.venue, engine, venue_registry.client_for(args.venue, clock, http=http),
                                         clock, rules)
    print(report.line())
    if report.status != "ok":
        raise ArenaError(f"sync failed: {report.error}", fix="check the network and the venue's status, then retry")
    return 0


def _export(args: argparse.Namespace) -> int:
    from arena.read.export import export_replay, export_tables
    from arena.store.engine import open_existing_store

    rank_by = _load_config(args.config).leaderboard.rank_by
    engine = open_existing_store(args.db)
    try:
        if args.what == "replay":
            replayed = export_replay(engine, args.out)
            skipped = ", ".join(f"{n} {why}" for why, n in sorted(replayed.skipped.items())) or "none"
            print(f"wrote {replayed.written} resolved markets to {args.out}; left out: {skipped}")
            return 0
        report = export_tables(engine, args.out, args.as_of or datetime.now(timezone.utc), args.cohort,
                               fmt=args.what, with_text=args.with_text, rank_by=rank_by)
    finally:
        engine.dispose()
    print(f"wrote {report.written} rows: " + ", ".join(report.files))
    return 0


def _load_config(path: str | None) -> ArenaConfig:
    """The arena config: --config, else ./arena.toml when present, else the defaults (baselines only). A seat's
    `knowledge_cutoff` or `released` after today's date on the wall clock is refused (never against --at or a
    replay's simulated clock, which a seat's dates are meant to postdate)."""
    from arena.clock import SystemClock
    from arena.config import default_config, load_config

    today = SystemClock().now().date()
    if path:
        config = load_config(path, today)
    elif Path("arena.toml").is_file():
        config = load_config("arena.toml", today)
    else:
        return default_config()
    for job in config.schedule.never_firing(datetime.now(timezone.utc)):
        print(f"arena: warning: {config.source}: [schedule] {job} = {config.schedule.jobs[job]!r} matches no date, so "
              f"{job} never runs — give a crontab string that fires (minute hour day month weekday, UTC)",
              file=sys.stderr)
    return config


def _check_corpora(config: ArenaConfig) -> None:
    """Read every seat's dated corpus (`corpus_search`) as a decision would, before anything is written: a
    missing file or a bad line is one `CorpusError` (exit 2) naming the file and the line."""
    from arena.agents.corpus import check_corpus

    for path in dict.fromkeys(a.corpus for a in config.llm_agents if a.corpus):
        check_corpus(path)


def _check_runtime_args(args: argparse.Namespace) -> None:
    """Refuse a job command's bad flags before anything is read or written."""
    if "replay" in (getattr(args, "venue", None) or ()) and not getattr(args, "replay", None):
        raise InputError("--venue replay needs the replay file", fix="pass --replay FILE")
    _endpoint_limits(args)


def _mark_every(config: ArenaConfig) -> timedelta:
    """The mark-to-market period: the config's [schedule] mark interval, else a day."""
    mark = config.schedule.overrides().get("mark")
    return timedelta(**{k: int(v) for k, v in mark.items()}) if isinstance(mark, dict) else timedelta(days=1)


def _runtime(args: argparse.Namespace, read_only: bool = False, config: ArenaConfig | None = None) -> Runtime:
    """The jobs' runtime; every flag and the config are checked before the store is opened (which creates and
    migrates it unless `read_only`)."""
    import os

    from arena.store.engine import open_existing_store, open_store
    from arena.jobs.runtime import Runtime, configure

    config = config if config is not None else _load_config(getattr(args, "config", None))
    _check_runtime_args(args)
    if not read_only:  # `arena jobs list` decides nothing
        _check_corpora(config)
    clock = _clock(args)
    limits = _endpoint_limits(args)
    from arena.usecases.venue_registry import LIVE_VENUES

    venues = tuple(getattr(args, "venue", None) or LIVE_VENUES)
    return configure(Runtime(
        engine=(open_existing_store if read_only else open_store)(args.db), clock=clock, config=config,
        site_dir=Path(args.site) if getattr(args, "site", None) else None,
        mark_every=_mark_every(config), environ=dict(os.environ), sync_venues=venues,
        replay_path=Path(args.replay) if getattr(args, "replay", None) else None,
        backup_dir=Path(args.backup_dir) if getattr(args, "backup_dir", None) else None,
        endpoint_limits=limits,
    ))


def _endpoint_limits(args: argparse.Namespace) -> EndpointLimits | None:
    """The --endpoint-limit values of a command that decides, parsed (None when it has none)."""
    from arena.ops.endpoint_slots import EndpointLimits

    specs = getattr(args, "endpoint_limit", None)
    return EndpointLimits.parse(specs) if specs else None


def _cohort(args: argparse.Namespace) -> int:
    from arena.usecases.cohorts import week_start
    from arena.usecases.lifecycle import check_universe, start_current_cohort
    from arena.store.engine import open_store

    try:
        now = _clock(args).now()
    except _BadAt as exc:
        print(exc, file=sys.stderr)
        return 2
    config = _load_config(args.config)
    _check_corpora(config)  # the lineup frozen now names them
    engine = open_store(args.db)
    universe = check_universe(engine, now)
    if universe.size == 0 and not args.allow_empty:
        print(f"cohort start: the universe is empty at {now:%Y-%m-%d %H:%M} UTC — {universe.missing_sync_hint()}; "
              "or pass --allow-empty to open it anyway", file=sys.stderr)
        return 1
    name, created = start_current_cohort(engine, now, config)
    print(f"{name} (week of {week_start(now):%Y-%m-%d}): {'opened' if created else 'already open (nothing changed)'}; "
          f"universe: {universe.size} markets ("
          + (", ".join(f"{v} {n}" for v, n in sorted(universe.by_venue.items())) or "none")
          + "); lineup: " + ", ".join(a.name for a in config.lineup))
    return 0


def _round(args: argparse.Namespace) -> int:
    import os
    from collections import Counter

    from arena.usecases.lifecycle import RetryPolicy, deciding_cohorts, decision_round, pending
    from arena.store.engine import open_store

    clock = _clock(args)
    now = clock.now()
    _endpoint_limits(args)  # a bad --endpoint-limit is refused before anything is read or written
    config = _load_config(args.config)
    _check_corpora(config)
    missing = config.missing_keys(os.environ)
    for agent, env in missing:
        print(f"warning: {agent} has no API key (set {env}); its decisions will be recorded as failed",
              file=sys.stderr)
    engine = open_store(args.db)
    deciding = deciding_cohorts(engine, now, config.cohort.newest_cohorts)
    print(f"arena round at {now:%Y-%m-%d %H:%M} UTC: {len(deciding)} cohort(s) deciding …", flush=True)
    from arena.progress import Progress

    with Progress(len(deciding), "arena round", unit="cohort", every=1) as bar:
        rounds = decision_round(engine, now, config, os.environ, books=_live_books(clock),
                                retry_failed=args.retry_failed, limits=_endpoint_limits(args),
                                on_cohort=lambda name, outs: bar.update(1, f"{name}: {len(outs)} decisions"))
    if not rounds:
        print("no cohort is in its decision window (run `arena cohort start` first)")
    for cohort, outs in rounds.items():
        counts = Counter(o.status for o in outs)
        done = counts.pop("skipped", 0)
        line = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "nothing to do"
        print(f"{cohort}: {line}" + (f"; already decided {done}" if done else ""))
    left = pending(rounds, RetryPolicy.of(config, now), now)
    if left:
        print(f"{left} decision(s) failed or are in progress elsewhere: later ticks of the decision_round job "
              f"retry them (or run `arena round --retry-failed`)")
    return 0


def _tell_skipped(replay: ReplayVenue, path: str | Path) -> None:
    """One stderr line naming how many lines of a replay file were skipped as malformed, and the first reason."""
    if replay.skipped_count:
        print(f"skipped {replay.skipped_count} malformed line(s) of {path}; first: {replay.skipped[0][1]}",
              file=sys.stderr)


def _live_books(clock: Clock) -> BookSource | None:
    """The Polymarket CLOB's live books (the client built on first use) for a decision made now; None on a
    simulated clock, whose decisions must not see today's book."""
    from arena.clock import SystemClock

    if not isinstance(clock, SystemClock):
        return None
    client: list[PolymarketClient] = []

    def book(token_id: str) -> OrderBook | None:
        if not client:
            from arena.usecases.venue_registry import client_for

            client.append(client_for("polymarket", clock))
        return client[0].book(token_id)

    return book


def _jobs(args: argparse.Namespace) -> int:
    from arena.jobs.scheduler import JOB_MODULES, build_scheduler, run_now

    if args.action == "run":
        if args.name not in JOB_MODULES:
            what = f"unknown job {args.name!r}" if args.name else "`arena jobs run` needs a job name"
            raise InputError(what, fix=f"name one of: {', '.join(JOB_MODULES)}")
        if args.name == "render" and not args.site:
            raise InputError("`arena jobs run render` has no site to render, so it would do nothing",
                             fix="pass --site DIR (or use `arena render --out DIR`)")
    elif args.name:
        raise InputError(f"`arena jobs list` takes no job name (got {args.name!r})",
                         fix=f"run `arena jobs run {args.name}` to run it now")
    rt = _runtime(args, read_only=args.action == "list")
    if args.action == "run":
        if args.name == "decision_round":
            for agent, env in rt.config.missing_keys(rt.environ):
                print(f"warning: {agent} has no API key (set {env}); its decisions will be recorded as failed",
                      file=sys.stderr)
        from arena.jobs.sentences import outcome_sentence

        out = run_now(args.name)
        print(outcome_sentence(out))
        return 0 if out.status in ("ok", "skipped", "incomplete") else 1
    from arena.ops.operations import recent_runs

    from arena.jobs.plan import RENDERS_AFTER, describe

    sch = build_scheduler(rt, manual=True, schedule=rt.config.schedule.overrides())
    sch.start(paused=True)
    try:
        last = {}
        for r in reversed(recent_runs(rt.engine, 500)):
            last[r.job] = r

        def last_run(job: str) -> str:
            r = last.get(job)
            return f"{r.status} {r.started_at:%Y-%m-%d %H:%M}" if r else "never"

        print(f"{'job':<15} {'when (UTC)':<38} {'next run':<17} last run")
        for job in sorted(sch.get_jobs(), key=lambda j: j.id):
            if job.id == "render":
                continue  # a one-off catch-up render still queued: the render line below stands for it
            nxt = f"{job.next_run_time:%Y-%m-%d %H:%M}" if job.next_run_time else "paused"
            print(f"{job.id:<15} {describe(job.trigger):<38} {nxt:<17} {last_run(job.id)}")
        after = "after " + ", ".join(RENDERS_AFTER)
        print(f"{'render':<15} {after:<38} {'(with --site)':<17} {last_run('render')}")
    finally:
        sch.shutdown()
    return 0


def _missing_keys_refused(config: ArenaConfig, what: str, override: str) -> bool:
    """Print which agents' key variables are unset (True: refuse to start)."""
    import os

    missing = config.missing_keys(os.environ)
    if not missing:
        return False
    raise InputError(f"{what}: API keys are missing, so these agents' decisions would all fail: "
                     + ", ".join(f"{agent} needs {env}" for agent, env in missing),
                     fix="export " + " ".join(f"{env}=<your key>" for env in dict.fromkeys(e for _, e in missing))
                     + f" (keys are read only from the environment), or pass {override}")


def _scheduler(args: argparse.Namespace) -> int:
    """`arena scheduler`: the plan first (one line per job, its trigger in words and next run), every refusal
    before anything is written, then a catch-up (a sync and a render now when none ran in the last period) and
    every job on its schedule."""
    from arena.jobs.plan import plan_lines, planned_jobs

    config = _load_config(args.config)
    _check_runtime_args(args)
    if not args.allow_missing_keys:
        _missing_keys_refused(config, "arena scheduler", "--allow-missing-keys")
    now = datetime.now(timezone.utc)
    planned = planned_jobs(_mark_every(config), config.schedule.overrides())
    print(f"arena scheduler: {len(planned)} jobs, times in UTC; Ctrl-C stops it", flush=True)
    for line in plan_lines(planned, now, site=bool(args.site)):
        print(line, flush=True)

    from arena.jobs.scheduler import build_scheduler

    rt = _runtime(args, config=config)  # only now: the store is opened (created, migrated) here
    catch_up = _catch_up(rt, planned, now)
    if catch_up:
        print("catching up now: " + "; ".join(f"{job} ({why})" for job, why in catch_up.items()), flush=True)
    print(f"job store in {rt.engine.url.render_as_string(hide_password=True)}; each job logs one line when it "
          "starts and one when it ends (outcome, counts, next run)", flush=True)

    def log(line: str) -> None:
        print(line, flush=True)

    sch = build_scheduler(rt, schedule=rt.config.schedule.overrides(), log=log, run_now=tuple(catch_up), now=now)
    import signal

    from arena.web.fork import end_children

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # `kill` stops it as cleanly as Ctrl-C
    try:
        sch.start()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:  # every child it started ends with it, and its database sessions close
        if sch.running:
            sch.shutdown(wait=False)  # a job still running keeps its claim until its lease expires
        end_children()
        rt.engine.dispose()
    return 0


def _catch_up(rt: Runtime, planned: Sequence[Planned], now: datetime) -> dict[str, str]:
    """The jobs to run at once, with why: the sync when none finished in its last period (the site is then
    rendered after it), else a render when the site has none that recent."""
    from sqlalchemy import func, select
    from sqlmodel import Session, col

    from arena.jobs.plan import describe, period_of
    from arena.store.tables import JobRunRow

    out: dict[str, str] = {}
    sync = next((p for p in planned if p.id == "sync"), None)
    if sync is None:
        return out
    period = period_of(sync.trigger, now)
    with Session(rt.engine) as s:
        def last(job: str) -> datetime | None:
            return s.scalar(select(func.max(JobRunRow.started_at)).where(col(JobRunRow.job) == job,
                                                                        col(JobRunRow.status).in_(("ok", "incomplete"))))
        synced, rendered = last("sync"), last("render")
    since = f"none in the last {describe(sync.trigger).removeprefix('every ')}"
    from arena.clock import utc

    if synced is None or utc(synced) < now - period:
        out["sync"] = since + (", then render" if rt.site_dir is not None else "")
    elif rt.site_dir is not None and (rendered is None or utc(rendered) < now - period):
        out["render"] = f"no render in the last {describe(sync.trigger).removeprefix('every ')}"
    return out


def _worker(args: argparse.Namespace) -> int:
    """`arena worker`: decide the week's rounds together with every other worker on the database."""
    import signal
    import threading

    from arena.jobs.scheduler import run_now
    from arena.jobs.sentences import outcome_sentence
    from arena.ops.endpoint_slots import EndpointLimits
    from arena.ops.worker import Worker

    config = _load_config(args.config)
    if not args.allow_missing_keys:  # refused before the store is opened: nothing written
        _missing_keys_refused(config, "arena worker", "--allow-missing-keys")
    rt = _runtime(args, config=config)
    limits = rt.endpoint_limits or EndpointLimits()
    if rt.engine.dialect.name != "postgresql":
        print("note: on SQLite the workers share claims (no seat is decided twice) but endpoint limits hold per "
              "process; use PostgreSQL for several workers", file=sys.stderr)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())  # finish the decisions in hand, then stop

    def jobs() -> None:
        for name in args.job or ():
            out = run_now(name)
            if out.status != "skipped":
                print(outcome_sentence(out), flush=True)

    with Worker(rt.engine, rt.config, rt.environ, rt.clock, concurrency=args.concurrency, limits=limits,
                lease=rt.lease(), books=_live_books(rt.clock),
                log=lambda line: print(line, flush=True)) as worker:
        print(f"arena worker {args.concurrency} thread(s) on {rt.engine.url.render_as_string(hide_password=True)}"
              + (f"; endpoint limits {dict(limits.per_endpoint) or ''}{' default ' + str(limits.default) if limits.default else ''}"
                 if limits else "")
              + ("; until the round is done" if args.until_done else "; Ctrl-C stops it"), flush=True)
        try:
            reports = worker.run(until_done=args.until_done, poll_s=args.poll, stop=stop, before_pass=jobs)
        except KeyboardInterrupt:
            stop.set()
            return 130
        finally:
            rt.engine.dispose()
    decided = sum(r.decided for r in reports)
    failed = sum(r.outcomes.get("failed", 0) for r in reports)
    print(f"arena worker: {decided} decision(s) over {len(reports)} pass(es)" + (f", {failed} failed" if failed else ""))
    return 0


def _replay_run(args: argparse.Namespace) -> int:
    """`arena replay run FILE --from D --until D`: the scheduler's jobs on a simulated clock over a replay file."""
    import os

    from arena.clock import FixedClock
    from arena.progress import Progress
    from arena.store.engine import data_dir, open_store
    from arena.venues.replay import ReplayVenue
    from arena.jobs.runtime import Runtime, configure
    from arena.jobs.simulated import replay_schedule, run_simulated
    from arena.ops.operations import expire_claims, unfinished

    started = time.perf_counter()
    try:
        start, until = _time_arg(args.start, "--from"), _time_arg(args.until, "--until")
    except _BadAt as exc:
        print(exc, file=sys.stderr)
        return 2
    if until <= start:
        raise InputError(f"--until ({until:%Y-%m-%d %H:%M}) must be after --from ({start:%Y-%m-%d %H:%M})",
                         fix="give a later --until")
    config = _load_config(args.config)
    if args.baselines_only:
        config = config.model_copy(update={"agents": tuple(a for a in config.agents if not a.is_llm)})
    else:
        _missing_keys_refused(config, "arena replay run", "--baselines-only")
    _check_corpora(config)
    replay = ReplayVenue.from_path(args.file, skip_malformed=True)
    _tell_skipped(replay, args.file)
    exposure = _contamination_check(replay, config, start, until, args.allow_contaminated)
    url = args.db
    if url is None:
        path = data_dir() / "replay.sqlite"
        for p in data_dir().glob("replay.sqlite*"):
            p.unlink()  # like the demo: a fresh database unless --db names one
        url = f"sqlite:///{path}"
    engine = open_store(url)
    if args.db is not None and not args.force and _has_arena_data(engine):
        raise InputError(f"{engine.url.render_as_string(hide_password=True)} already holds an arena (cohorts or "
                         "markets)", fix="name a new database with --db, or pass --force to continue on it")
    clock = FixedClock(start)
    rt = configure(Runtime(engine=engine, clock=clock, config=config, environ=dict(os.environ),
                           site_dir=Path(args.site) if args.site else None, sync_venues=("replay",),
                           clients={"replay": replay}, replay_path=Path(args.file), owns_store=True))
    runs_left, seats_left = expire_claims(engine)  # a run that owns its store resumes a dead one's claims at once
    if runs_left or seats_left:
        print(f"resuming: {runs_left} job run(s) and {seats_left} decision(s) left claimed by a run that died",
              flush=True)
    print(f"arena replay run: {len(replay)} recorded markets ({replay.skipped_count} malformed lines skipped), "
          f"{start:%Y-%m-%d %H:%M} → {until:%Y-%m-%d %H:%M} UTC, lineup: "
          + ", ".join(a.name for a in config.lineup), flush=True)
    for seat in exposure:
        print(f"contamination guard: {seat.line()}", flush=True)
    only = ("sync", "cohort_start", "decision_round", "mark", "settle")
    with Progress((until.date() - start.date()).days + 1, "arena replay run", unit="day") as bar:
        run = run_simulated(rt, clock, start, until, schedule=replay_schedule(config.schedule.overrides()), only=only,
                            on_day=lambda day, r: bar.update(1, f"{day:%Y-%m-%d}, {r.runs.total()} job runs"),
                            every_tick=args.every_tick)
    print(f"{run.days} simulated days; job runs: "
          + ", ".join(f"{job} {status} {n}" for (job, status), n in sorted(run.runs.items()))
          + (f"; ticks with nothing to do, not fired: {run.idle_ticks}" if run.idle_ticks else ""))
    if run.failures:
        print(f"{len(run.failures)} failed job runs (retried by the next tick of the same period), first: "
              f"{run.failures[0]}", file=sys.stderr)
    if exposure:
        from arena.read.contamination import asked_exposure

        for cohort, agent, clean, hit in asked_exposure(engine, until):
            print(f"contamination guard: {cohort} {agent}: {clean} clean question(s) in its headline, {hit} "
                  f"pre-cutoff (scored apart)")
    db = engine.url.render_as_string(hide_password=True)
    print(f"database: {db}   ({time.perf_counter() - started:.1f} s); "
          f"`arena render --out DIR --db URL --at T` shows the standings at any simulated time")
    left = unfinished(engine)
    if run.failures or left:
        print(f"arena: the replay run is incomplete: {len(run.failures)} failed job run(s), {len(left)} period(s) "
              f"or decision(s) left unfinished" + (f", first: {left[0]}" if left else "")
              + f" — see `arena jobs list --db {db}`, fix the cause and re-run with --db {db} --force", file=sys.stderr)
        return 1
    return 0


def _replay_fork(args: argparse.Namespace) -> int:
    """`arena replay fork --db SRC --cohort NAME --at T --out DST [--config F]`: the cohort as it stood at T in a new
    SQLite database, its lineup changed by --config, the rest of it replayed on the source's recorded market path.
    Every refusal is one line `arena replay fork: … — fix`, exit 2, before anything is written."""
    try:
        return _replay_fork_checked(args)
    except ArenaError as exc:  # a bad input (exit 2) or a source that cannot be read (exit 1): one line
        line = " ".join(f"{exc.message} — {exc.fix or _default_fix(exc)}".split())
        print(f"arena replay fork: {line}", file=sys.stderr)
        return exc.exit_code


def _fork_target(out: str) -> Path:
    """The fork's database file from --out (a path, or a sqlite:/// URL); InputError when it exists or is not a
    SQLite file."""
    from sqlalchemy.engine import make_url

    if "://" in out:
        url = make_url(out)
        if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
            raise InputError(f"--out {out!r} is not a SQLite file", fix="give a path (or sqlite:///FILE) for the fork")
        out = url.database
    path = Path(out)
    for p in (path, Path(f"{path}-wal")):
        if p.exists():
            raise InputError(f"--out {path} already exists", fix="name a new file: a fork never writes into a database")
    if not path.parent.is_dir():
        raise InputError(f"--out {path}: the folder {path.parent} does not exist", fix="create it or name another")
    return path


def _replay_fork_checked(args: argparse.Namespace) -> int:
    import os

    from sqlalchemy import select
    from sqlmodel import create_engine

    from arena.clock import FixedClock
    from arena.config import DEFAULT_API_KEY_ENV, LLM_KIND, default_config
    from arena.jobs.runtime import Runtime, configure
    from arena.jobs.simulated import run_simulated
    from arena.ops.operations import expire_claims, unfinished
    from arena.progress import Progress
    from arena.store.engine import open_existing_store, open_store
    from arena.store.tables import CohortRow
    from arena.usecases.fork import MarketPath, fork_point, frozen_lineup, path_end, seat_changes, start_fork

    started = time.perf_counter()
    target = _fork_target(args.out)
    at = _time_arg(args.at)
    config = _load_config(args.config) if args.config else default_config()
    source = open_existing_store(args.db)
    try:
        point = fork_point(source, args.cohort, at)
        frozen = frozen_lineup(source, point)
        changes = seat_changes(frozen, config.lineup) if args.config else []
        changed = {ch.seat: ch.entry for ch in changes}
        keys = [(changed[n].name, changed[n].api_key_env) if n in changed
                else (n, str(r.get("api_key_env") or DEFAULT_API_KEY_ENV)) for n, k, r in frozen
                if (changed[n].is_llm if n in changed else k == LLM_KIND)]
        missing = [(a, e) for a, e in keys if not os.environ.get(e)]
        if missing:
            raise InputError("API keys are missing, so these seats' decisions would all fail: "
                             + ", ".join(f"{a} needs {e}" for a, e in missing),
                             fix="export " + " ".join(f"{e}=<your key>" for e in dict.fromkeys(e for _, e in missing))
                             + " (keys are read only from the environment)")
        fork = create_engine(f"sqlite:///{target}")  # no foreign-key pragma while the copy lands (as store_as_of)
        try:
            kept = start_fork(source, fork, point, changes)
        finally:
            fork.dispose()
        url = f"sqlite:///{target}"
        engine = open_store(url)
        clock = FixedClock(at)
        rt = configure(Runtime(engine=engine, clock=clock, config=config, environ=dict(os.environ), sync_venues=(),
                               owns_store=True))
        expire_claims(engine)
        path = MarketPath(source, engine, at)
        until = max(point.end, path_end(source) or point.end)
        print(f"arena replay fork: {point.cohort} at {at:%Y-%m-%d %H:%M} UTC from "
              f"{source.url.render_as_string(hide_password=True)}: {kept.get('decisions', 0)} decisions, "
              f"{kept.get('fills', 0)} fills, {kept.get('forecasts', 0)} forecasts kept; seats changed: "
              + ("; ".join(ch.line() for ch in changes) or "none (a control fork)"), flush=True)

        def completed() -> bool:
            with engine.connect() as c:
                return c.execute(select(CohortRow.status)).scalar() == "completed"

        with Progress((until.date() - at.date()).days + 1, "arena replay fork", unit="day") as bar:
            run = run_simulated(rt, clock, at, until, schedule=config.schedule.overrides(),
                                only=("decision_round", "mark", "settle"), feed=path.feed, stop=completed,
                                on_day=lambda day, r: bar.update(1, f"{day:%Y-%m-%d}, {r.runs.total()} job runs"))
    finally:
        source.dispose()
    status = "completed" if completed() else "still open (the recorded path ends before it could complete)"
    print(f"{run.days} simulated days; job runs: "
          + ", ".join(f"{job} {st} {n}" for (job, st), n in sorted(run.runs.items()))
          + "; market path fed: " + ", ".join(f"{n} {t}" for t, n in path.fed.items())
          + f"; cohort {point.cohort} {status}")
    a = next((ch.seat for ch in changes), frozen[0][0] if frozen else "SEAT")
    b = changed[a].name if a in changed else a
    print(f"database: {url}   ({time.perf_counter() - started:.1f} s); compare a seat with the original: "
          f"`arena compare {a} {b} --db {args.db} --db-b {url} --cohort {point.cohort}`")
    left = unfinished(engine)
    engine.dispose()
    if run.failures or left:
        print(f"arena: the fork's replay is incomplete: {len(run.failures)} failed job run(s), {len(left)} left "
              "unfinished" + (f", first: {(run.failures or left)[0]}"), file=sys.stderr)
        return 1
    return 0


def _contamination_check(replay: ReplayVenue, config: ArenaConfig, start: datetime, until: datetime,
                         allow: bool) -> list[Exposure]:
    """Each LLM seat's exposure to its knowledge cutoff in the replay window (`read.contamination.replay_exposure`);
    InputError, before anything is written, when a seat would keep no clean question, unless `allow`."""
    from arena.read.contamination import replay_exposure

    cutoffs = [(a.name, a.knowledge_cutoff) for a in config.lineup if a.is_llm and a.knowledge_cutoff is not None]
    exposure = replay_exposure(replay, start, until, cutoffs)
    lost = [e for e in exposure if e.candidates and not e.clean]
    if lost and not allow:
        e = lost[0]
        raise InputError(f"every one of the {e.candidates} recorded markets open from {start:%Y-%m-%d} to "
                         f"{until:%Y-%m-%d} resolved or settled before {e.agent}'s knowledge_cutoff "
                         f"{e.knowledge_cutoff.isoformat()}, so it would have no clean question",
                         fix="replay a window after the cutoff, or pass --allow-contaminated to score it on its "
                             "pre-cutoff line only")
    return exposure


def _score(args: argparse.Namespace) -> int:
    from arena.read.forecast_file import score_command

    return score_command(args.file, args.out, args.leave_one_out, sys.stdout, sys.stderr, args.bootstrap, args.seed,
                         args.answered_only)


def _migrate(args: argparse.Namespace) -> int:
    from arena.store.engine import current_revision, open_store

    engine = open_store(args.db)
    print(f"{engine.url.render_as_string(hide_password=True)} at revision {current_revision(engine)}")
    return 0


def _compact(args: argparse.Namespace) -> int:
    from datetime import timedelta

    from arena.clock import SystemClock
    from arena.ops.compaction import compact_snapshots
    from arena.store.engine import open_store

    engine = open_store(args.db, create=False)  # compaction never creates the database it is asked to thin
    report = compact_snapshots(engine, SystemClock().now(), timedelta(days=args.retention_days), dry_run=args.dry_run)
    print(("dry run: " if args.dry_run else "") + report.line())
    return 0


def _cache(args: argparse.Namespace) -> int:
    from pathlib import Path

    from arena.cache import housekeeping
    from arena.store.engine import open_existing_store

    site = Path(args.site) if args.site else None
    engine = open_existing_store(args.db)
    if args.action == "stats":
        for entry in housekeeping.stats(engine, site):
            print(entry.line())
        print(f"code digest: {housekeeping.code_digest()[:16]} (any change to the package, its templates or its "
              "libraries moves every key)")
    else:
        before = housekeeping.clear(engine, site)
        print("cleared " + "; ".join(entry.line() for entry in before))
    return 0


FORMATS = ("text", "csv", "json")


def _leaderboard(args: argparse.Namespace) -> int:
    from arena.report import hint, legend, render_boards
    from arena.scoring.board import RANK_CHOICES
    from arena.read.breakdown import check_categories
    from arena.read.standings import boards_csv, check_cohort_names, standings
    from arena.store.engine import open_existing_store

    if args.format not in FORMATS:
        raise InputError(f"unknown --format {args.format!r}",
                         fix=f"choose from {', '.join(FORMATS)}")
    rank_by = args.rank_by or _load_config(args.config).leaderboard.rank_by
    if rank_by not in RANK_CHOICES:
        raise InputError(f"unknown --rank-by {rank_by!r}",
                         fix=f"choose from {', '.join(RANK_CHOICES)}")
    if args.bootstrap < 1:
        raise InputError(f"--bootstrap must be at least 1 draw, got {args.bootstrap}",
                         fix="give --bootstrap N with N ≥ 1 (default 1000)")
    questions = _question_filter(args)
    if questions is not None and rank_by in ("pnl", "return_pct"):
        raise InputError(f"--rank-by {rank_by} ranks by money, which --from/--until/--category cannot split by "
                         "question", fix="rank a filtered board by a forecast score, e.g. --rank-by forecast_brier")
    as_of = args.as_of or datetime.now(timezone.utc)
    engine = open_existing_store(args.db)
    try:
        check_cohort_names(engine, args.cohort or None)
        check_categories(engine, args.category or None)
        boards = standings(engine, as_of, rank_by=rank_by, cohort_names=args.cohort or None,
                           n_boot=args.bootstrap, seed=args.seed, track=args.track, questions=questions,
                           include_contaminated=args.include_contaminated)
    finally:
        engine.dispose()
    if args.format == "json":
        from arena.web.api import leaderboard_json  # the site's /api/leaderboard.json, byte for byte

        sys.stdout.write(leaderboard_json(boards))
        return 0
    if args.format == "csv":
        sys.stdout.write(boards_csv(boards))
        return 0
    if not boards.cohorts:
        print("no cohorts yet")
        return 0
    shown = render_boards(boards, overall=not args.cohort, wide=args.wide)
    if questions is not None:
        print(f"limited to {questions.describe()} (money columns are empty on a filtered board)")
    print(shown.text)
    print()
    print(legend() if args.legend else hint(shown))
    return 0


def _question_filter(args: argparse.Namespace) -> QuestionFilter | None:
    """The leaderboard's --from/--until/--category as a `domain.question_filter.QuestionFilter` (None: none
    given); InputError on a bad date or a window that ends before it starts."""
    from arena.domain.question_filter import parse_day, question_filter

    for text, flag in ((args.date_from, "--from"), (args.date_until, "--until")):
        try:
            parse_day(text, flag)
        except ValueError:
            raise InputError(f"{flag} {text!r} is not a date", fix="write it as YYYY-MM-DD, e.g. 2026-01-05") from None
    try:
        return question_filter(args.date_from, args.date_until, args.category)
    except ValueError:  # (both days parse: the window ends before it starts)
        raise InputError(f"--from {args.date_from} is after --until {args.date_until}",
                         fix="give --from on or before --until") from None


def _compare(args: argparse.Namespace) -> int:
    import json

    from arena.read.ablation import compare, compare_text
    from arena.store.engine import open_existing_store

    if args.format not in FORMATS or args.format == "csv":
        print(f"arena compare: unknown --format {args.format!r} — choose from text, json", file=sys.stderr)
        return 2
    as_of = args.as_of or datetime.now(timezone.utc)
    engine = open_existing_store(args.db)
    try:
        engine_b = open_existing_store(args.db_b) if args.db_b else None
        try:
            result = compare(engine, args.a, args.b, as_of, args.cohort or None, engine_b=engine_b,
                             n_boot=args.bootstrap, seed=args.seed)
        finally:
            if engine_b is not None:
                engine_b.dispose()
    finally:
        engine.dispose()  # a read-only command leaves no SQLite -wal/-shm files behind
    print(json.dumps(result.to_json(), indent=2) if args.format == "json" else compare_text(result))
    return 0


ENDPOINT_LIMIT_HELP = ("at most N model calls in flight per endpoint — across every process on PostgreSQL (workers, the "
                       "scheduler's round): N for every endpoint, URL=N for one (an agent's base_url); repeatable; "
                       "default: unlimited")


def parser() -> argparse.ArgumentParser:
    from arena.jobs import JOB_NAMES  # the job registry (pure data: no scheduler imports)
    from arena.usecases.venue_registry import LIVE_VENUES, VENUE_NAMES as VENUES

    p = ArenaArgumentParser(prog="arena", description="Paper-trading arena for forecasting agents. Databases are "
                            "written in the data directory (ARENA_DATA_DIR, else ./db) unless --db names one.")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("demo", help="run simulated weekly cohorts of scripted agents and stand-in LLM seats offline "
                                    "and print leaderboards")
    d.add_argument("--seed", type=int, default=7, help="seed of the simulated markets and the scripted agents")
    d.add_argument("--cohorts", type=count(1, 520), default=4, help="weekly cohorts to open")
    d.add_argument("--decision-weeks", type=count(1, 104), default=4, help="weekly decision rounds per cohort")
    d.add_argument("--markets-per-week", type=count(1, 10_000), default=30, help="simulated markets opened each week")
    d.add_argument("--groups-per-week", type=count(0, 1_000), default=2,
                   help="exclusive groups (2-4 binary members, exactly one resolves YES) opened each week")
    d.add_argument("--ladders-per-week", type=count(0, 1_000), default=1,
                   help="threshold ladders (above $X at 3 levels) opened each week, and as many date ladders "
                        "(by 3 deadlines)")
    d.add_argument("--forecast-k", type=count(1, 1_000), default=20, help="markets every agent forecasts each round")
    d.add_argument("--start", default=None, type=parse_day,
                   help="first cohort's Sunday (UTC; default 2026-01-04, or 2025-11-02 with --replay)")
    d.add_argument("--replay", default=None, metavar="FILE",
                   help="run the cohorts on recorded markets (replay JSON lines) instead of the simulator")
    d.add_argument("--days", type=count(0, 3_660), default=120,
                   help="with --replay: days to run after the last decision")
    d.add_argument("--db", default=None, help="SQLAlchemy URL (default: a fresh "
                   "demo-seed<SEED>.sqlite in the data directory: ARENA_DATA_DIR, else ./db)")
    d.add_argument("--llm", action="store_true", help="add the configured LLM agents (their keys must be set)")
    d.add_argument("--no-standin", action="store_true",
                   help="leave out the stand-in LLM seats (standin-cheap, standin-mid, standin-dear: a local "
                        "stand-in model on 127.0.0.1, not a real LLM, that runs the LLM path offline)")
    d.add_argument("--config", default=None, help="with --llm: the arena TOML (default ./arena.toml)")
    d.add_argument("--force", action="store_true",
                   help="with --db: empty that database (every arena table) and start the demo over, even if it "
                        "holds an arena — e.g. after a killed demo")
    d.set_defaults(func=_demo)

    sy = sub.add_parser("sync", help="bring a venue's markets, prices and resolutions into the database")
    sy.add_argument("--venue", required=True, choices=VENUES, help="the venue to read")
    sy.add_argument("--file", default=None, help="with --venue replay: the replay JSON-lines file")
    sy.add_argument("--at", default=None, type=parse_at,
                    help="the time the sync runs at (ISO, UTC; default now) — for a replay, what is visible then")
    sy.add_argument("--top", type=count(1, 100_000), default=100, help="markets in the universe")
    sy.add_argument("--rank-by", default="volume_24h", choices=["volume_24h", "liquidity", "volume"],
                    help="what the universe's top markets are ranked by")
    sy.add_argument("--horizon-days", type=count(1, 3_660), default=60, help="leave out markets closing later than this")
    sy.add_argument("--exclude", action="append", default=None, metavar="KEYWORD",
                    help="leave out markets whose question contains KEYWORD (repeatable; replaces the defaults)")
    sy.add_argument("--db", default=None, help=DB_HELP)
    sy.set_defaults(func=_sync)

    ex = sub.add_parser("export", help="export CSV or Parquet (fills, decisions, snapshots, the boards as scores, bets, "
                        "forecasts, model calls with their tool calls, markets, prices) or a replay file")
    ex.add_argument("what", nargs="?", default="csv", choices=["csv", "parquet", "replay"],
                    help="csv / parquet: tables of the arena (default csv); replay: its "
                         "markets as a replay JSON-lines file")
    ex.add_argument("--out", required=True, type=path_arg, help="a directory for csv and parquet, a file for replay")
    ex.add_argument("--cohort", default=None, help="csv, parquet: only this cohort")
    ex.add_argument("--with-text", action="store_true",
                    help="csv, parquet: include the model calls' prompts, raw replies and reasoning (large; off by "
                         "default)")
    ex.add_argument("--as-of", default=None, metavar="T", type=parse_at,
                    help="csv, parquet: the boards (scores) and bets from the facts recorded up to T (ISO, UTC; "
                         "default now)")
    ex.add_argument("--config", default=None,
                    help="arena TOML whose [leaderboard] rank_by ranks the scores (default ./arena.toml, else "
                         "forecast_brier) — as `arena leaderboard`")
    ex.add_argument("--db", default=None, help=DB_HELP)
    ex.set_defaults(func=_export)

    co = sub.add_parser("cohort", help="cohort lifecycle")
    co.add_argument("action", choices=["start"], help="start: open this week's cohort")
    co.add_argument("--config", default=None, help="arena TOML (default: ./arena.toml, else built-in defaults)")
    co.add_argument("--db", default=None, help=DB_HELP)
    co.add_argument("--at", default=None, type=parse_at, help="open the cohort of the week containing this time (ISO, UTC; "
                    "default now)")
    co.add_argument("--allow-empty", action="store_true",
                    help="open the cohort even if no synced market is tradable (it would trade nothing)")
    co.set_defaults(func=_cohort)

    rd = sub.add_parser("round", help="run the decision round now for the newest open cohorts")
    rd.add_argument("--config", default=None, help="arena TOML (default: ./arena.toml, else built-in defaults)")
    rd.add_argument("--db", default=None, help=DB_HELP)
    rd.add_argument("--retry-failed", action="store_true",
                    help="try failed decisions of the round again now, whatever the retry window and attempts")
    rd.add_argument("--at", default=None, type=parse_at, help="decide as of this time (ISO, UTC; default now)")
    rd.add_argument("--endpoint-limit", action="append", metavar="[URL=]N", help=ENDPOINT_LIMIT_HELP)
    rd.set_defaults(func=_round)

    jb = sub.add_parser("jobs", help="list scheduled jobs, or run one now")
    jb.add_argument("action", choices=["list", "run"], help="list: the jobs and their last runs; run: one job now")
    jb.add_argument("name", nargs="?", default=None, metavar="JOB",
                    help="run: the job, one of " + ", ".join(JOB_NAMES))
    for p_ in (jb, sub.add_parser("scheduler", help="run every job on its schedule, in the foreground")):
        p_.add_argument("--config", default=None, help="arena TOML (default: ./arena.toml, else built-in defaults)")
        p_.add_argument("--db", default=None, help=DB_HELP)
        p_.add_argument("--site", default=None, type=path_arg, help="render the static site here after each job")
        p_.add_argument("--venue", action="append", choices=VENUES,
                        help="venues the sync job reads (repeatable; default: " + " and ".join(LIVE_VENUES) + ")")
        p_.add_argument("--replay", default=None, metavar="FILE", help="the replay file, with --venue replay")
        p_.add_argument("--backup-dir", default=None, type=path_arg,
                        help="where the backup job writes (default: backups/ beside a SQLite database)")
    jb.add_argument("--at", default=None, type=parse_at, help="run: the job's clock (ISO, UTC; default now) — it runs the period "
                    "containing that time")
    sub.choices["scheduler"].add_argument("--allow-missing-keys", action="store_true",
                                          help="start even if some LLM agents' API key variables are unset")
    sub.choices["scheduler"].add_argument("--endpoint-limit", action="append", metavar="[URL=]N",
                                          help=ENDPOINT_LIMIT_HELP)
    jb.set_defaults(func=_jobs)
    sub.choices["scheduler"].set_defaults(func=_scheduler)

    wk = sub.add_parser("worker", help="decide the week's rounds together with other workers on the same database "
                        "(PostgreSQL): each seat once, a dead worker's seats taken over")
    wk.add_argument("--config", default=None, help="arena TOML (default: ./arena.toml, else built-in defaults)")
    wk.add_argument("--db", default=None, help=DB_HELP)
    wk.add_argument("--at", default=None, type=parse_at, help="decide as of this time (ISO, UTC; default now)")
    wk.add_argument("--concurrency", type=count(1, 1_024), default=8, metavar="N", help="decisions in flight at once")
    wk.add_argument("--endpoint-limit", action="append", metavar="[URL=]N", help=ENDPOINT_LIMIT_HELP)
    wk.add_argument("--until-done", action="store_true",
                    help="stop once every seat of the deciding cohorts is decided (waits out dead workers' leases)")
    wk.add_argument("--poll", type=positive_float, default=10.0, metavar="SECONDS",
                    help="wait between passes that found nothing to do")
    wk.add_argument("--job", action="append", choices=[j for j in JOB_NAMES if j != "decision_round"],
                    help="also run this scheduled job each pass, once per period across all processes (repeatable)")
    wk.add_argument("--site", default=None, type=path_arg, help="where the render job writes, with --job render")
    wk.add_argument("--allow-missing-keys", action="store_true",
                    help="start even if some LLM agents' API key variables are unset")
    wk.set_defaults(func=_worker)

    rp = sub.add_parser("replay", help="run the arena's scheduled jobs on a simulated clock through a replay file")
    rps = rp.add_subparsers(dest="replay_action", required=True)
    rr = rps.add_parser("run", help="sync, cohort start, decision round, mark and settle on their schedules, "
                        "from --from to --until, over the recorded markets")
    rr.add_argument("file", help="the replay JSON-lines file")
    rr.add_argument("--from", dest="start", required=True, type=parse_at, help="simulated start (ISO date or time, UTC)")
    rr.add_argument("--until", required=True, type=parse_at, help="simulated end, inclusive (ISO date or time, UTC)")
    rr.add_argument("--config", default=None, help="arena TOML: lineup, rules, schedule (default ./arena.toml)")
    rr.add_argument("--db", default=None, help="SQLAlchemy URL (default: a fresh replay.sqlite in the data "
                    "directory: ARENA_DATA_DIR, else ./db)")
    rr.add_argument("--site", default=None, type=path_arg, help="render the static site here (once per simulated day)")
    rr.add_argument("--baselines-only", action="store_true", help="leave the LLM agents out (no keys needed)")
    rr.add_argument("--force", action="store_true", help="with --db: continue on a database that holds an arena")
    rr.add_argument("--every-tick", action="store_true", help="fire every tick, also the settle and decision-round "
                    "ticks that can only find nothing (the same facts, slower: checks the event-driven run)")
    rr.add_argument("--allow-contaminated", action="store_true",
                    help="run even if a seat's knowledge_cutoff leaves it no clean question in the window")
    rr.set_defaults(func=_replay_run)
    rf = rps.add_parser("fork", help="a new database holding a cohort as it stood at T, its lineup changed by "
                        "--config, the rest of it replayed on the source's recorded market path")
    rf.add_argument("--db", required=True, help="the source database (SQLAlchemy URL), read only")
    rf.add_argument("--cohort", required=True, metavar="NAME", help="the cohort to fork")
    rf.add_argument("--at", required=True, type=parse_at, metavar="T",
                    help="the fork time (ISO, UTC): from the cohort's creation up to before its end")
    rf.add_argument("--out", required=True, metavar="DST", help="the fork: a new SQLite file (path or sqlite:///FILE)")
    rf.add_argument("--config", default=None, help="arena TOML whose lineup replaces the cohort's from T on (the "
                    "same number of seats; matched by name, else swapped in lineup order) and whose [schedule] the "
                    "replay follows (default: the lineup unchanged, the default schedule)")
    rf.set_defaults(func=_replay_fork)

    from arena.cli_web import configure_render_parser, configure_serve_parser

    configure_render_parser(sub.add_parser("render", help="write the static leaderboard site"))
    configure_serve_parser(sub.add_parser("serve", help="serve the leaderboard pages live from the database"))

    s = sub.add_parser("score", help="score an external forecast file (CSV or JSON lines)")
    s.add_argument("file", help="the forecasts: CSV or JSON lines (see the README for the columns)")
    s.add_argument("--out", default=None, type=path_arg, help="write CSV here instead of stdout")
    s.add_argument("--leave-one-out", action="store_true", help="aggregate the other forecasters only")
    s.add_argument("--bootstrap", type=count(0, 100_000), default=0, metavar="N",
                   help="add intervals, significance tiers, P(first) and calibration from N paired draws")
    s.add_argument("--seed", type=int, default=0, help="seed of the bootstrap draws")
    s.add_argument("--answered-only", action="store_true",
                   help="score each forecaster on its own forecasts only (default: on every question of its batch, "
                        "a missing forecast scored as 0.5)")
    s.set_defaults(func=_score)

    m = sub.add_parser("migrate", help="create or upgrade the database schema")
    m.add_argument("--db", default=None, help=DB_HELP)
    m.set_defaults(func=_migrate)

    cp = sub.add_parser("compact", help="thin old snapshots of settled markets to daily, keeping every price used")
    cp.add_argument("--retention-days", type=count(1, 3_660), default=30, help="keep every snapshot younger than this")
    cp.add_argument("--dry-run", action="store_true", help="count what would go, delete nothing")
    cp.add_argument("--db", default=None, help=DB_HELP)
    cp.set_defaults(func=_compact)

    ca = sub.add_parser("cache", help="show or empty the caches (memo tables and a site's page manifest)",
                        epilog="Every cache entry is a memo, never a fact: `clear` costs the next read or render "
                               "its time and changes no number.")
    ca.add_argument("action", choices=("stats", "clear"), help="stats: what the caches hold; clear: empty them")
    ca.add_argument("--db", default=None, help=DB_HELP)
    ca.add_argument("--site", default=None, metavar="DIR", help="also the page manifest of this rendered site")
    ca.set_defaults(func=_cache)

    lb = sub.add_parser("leaderboard", help="print the leaderboards of a database (text, CSV or JSON)")
    lb.add_argument("--db", default=None, help=DB_HELP)
    lb.add_argument("--cohort", action="append", help="only this cohort (repeatable)")
    lb.add_argument("--as-of", default=None, metavar="T", type=parse_at,
                    help="the boards from the facts recorded up to T (ISO, UTC; default now)")
    lb.add_argument("--rank-by", default=None, metavar="METRIC",
                    help="rank key, e.g. forecast_brier, brier_minus_market, pnl, return_pct (an unknown one is refused "
                         "with the full list; default: [leaderboard] rank_by of the config, else forecast_brier)")
    lb.add_argument("--format", default="text", choices=FORMATS, help="output format")
    lb.add_argument("--config", default=None, help="arena TOML (default ./arena.toml, else built-in defaults)")
    lb.add_argument("--bootstrap", type=count(1, 100_000), default=1000, metavar="N", help="bootstrap draws of the intervals")
    lb.add_argument("--seed", type=int, default=0, help="seed of the bootstrap draws")
    lb.add_argument("--track", choices=["model", "agent"], default=None,
                    help="only the agents of this track: model (no tools) or agent (with tools)")
    lb.add_argument("--from", dest="date_from", default=None, metavar="D",
                    help="only the questions whose round was decided on day D (YYYY-MM-DD, UTC) or later")
    lb.add_argument("--until", dest="date_until", default=None, metavar="D",
                    help="only the questions whose round was decided on day D (YYYY-MM-DD, UTC) or earlier")
    lb.add_argument("--category", action="append", metavar="C",
                    help="only the questions on markets of category C (repeatable; 'uncategorized' for none; an "
                         "unknown one is refused with the list). A filtered board leaves the money columns empty")
    lb.add_argument("--include-contaminated", action="store_true",
                    help="replays: score the questions a seat's knowledge_cutoff contaminates in its headline too "
                         "(default: on its pre-cutoff line only; they are counted either way)")
    lb.add_argument("--wide", action="store_true",
                    help="text: every column, however wide (default: the columns that fit the terminal — COLUMNS, "
                         "else the terminal's width, else 100 — in priority order)")
    lb.add_argument("--legend", action="store_true", help="text: explain every column under the boards")
    lb.set_defaults(func=_leaderboard)

    cp = sub.add_parser("compare", help="B vs A over their shared questions: paired differences with intervals")
    cp.add_argument("a", metavar="A", help="the base agent (a lineup name)")
    cp.add_argument("b", metavar="B", help="the agent compared with it (e.g. its variant)")
    cp.add_argument("--db", default=None, help=DB_HELP)
    cp.add_argument("--cohort", action="append", help="only this cohort (repeatable; default: every cohort "
                                                      "holding both)")
    cp.add_argument("--db-b", default=None, metavar="URL",
                    help="read B from this database (a fork of --db, `arena replay fork`): paired with A on the same "
                         "(cohort, market) questions; B may then carry A's name")
    cp.add_argument("--as-of", default=None, metavar="T", type=parse_at,
                    help="from the facts recorded up to T (ISO, UTC; default now)")
    cp.add_argument("--format", default="text", metavar="FORMAT", help="text (default) or json")
    cp.add_argument("--bootstrap", type=count(1, 100_000), default=1000, metavar="N", help="bootstrap draws")
    cp.add_argument("--seed", type=int, default=0, help="seed of the bootstrap draws")
    cp.set_defaults(func=_compare)

    _describe_subcommands(p)
    return p


def _describe_subcommands(p: argparse.ArgumentParser) -> None:
    """Each subcommand's --help opens with the one-line description `arena --help` lists for it."""
    for action in p._subparsers._group_actions if p._subparsers else ():
        for choice in getattr(action, "_choices_actions", ()):
            sub = action.choices[choice.dest]
            sub.description = sub.description or choice.help
            _describe_subcommands(sub)


def _fail(problem: str, fix: str, code: int) -> int:
    """Print ONE line `arena: <problem> — <fix>` on stderr and return the exit code."""
    line = " ".join((f"{problem} — {fix}" if fix else problem).split())  # newlines in a cause stay off stderr
    print(f"arena: {line[:2000]}", file=sys.stderr)
    return code


def _default_fix(exc: ArenaError) -> str:
    """The fix of an error raised without one, by its kind: every line says what to do."""
    from arena.errors import ConfigError, DatabaseURLError, NotFound, StoreError

    if isinstance(exc, ConfigError):
        return ("correct it in the configuration (arena.example.toml documents every key; "
                "docs/configuration.md every range)")
    if isinstance(exc, DatabaseURLError):
        return "give an SQLAlchemy URL like sqlite:///FILE or postgresql://user@host/dbname"
    if isinstance(exc, StoreError):
        return "check the database URL (--db or ARENA_DATABASE_URL) and that the database is reachable"
    if isinstance(exc, NotFound):
        return "check the name (`arena leaderboard` lists the cohorts and seats)"
    return "see `arena <command> --help` and the README"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code. The one boundary where expected failures become one line on
    stderr (`arena: <problem> — <fix>`) and exit 1 (the world failed) or 2 (the input was wrong); anything else
    is a bug and keeps its traceback."""
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError

    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:  # --help (0), or a usage error already printed on one line (2)
        return exc.code if isinstance(exc.code, int) else 0
    try:
        return int(args.func(args) or 0)
    except ArenaError as exc:
        return _fail(exc.message, exc.fix or _default_fix(exc), exc.exit_code)
    except (ArgumentError, NoSuchModuleError) as exc:
        return _fail(f"bad database URL or driver: {exc}", "give an SQLAlchemy URL like sqlite:///FILE or "
                                                           "postgresql://user@host/dbname", 2)
    except OperationalError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig is not None and str(exc.orig).strip() else "?"
        return _fail(f"the database failed: {reason}", "check that it is reachable and not locked, then retry", 1)
    except UnicodeDecodeError as exc:
        return _fail(f"a file is not UTF-8 text ({exc.reason} at byte {exc.start})", "save it as UTF-8", 2)
    except BrokenPipeError:  # the reader went away (`arena leaderboard | head`): stop quietly, as a filter does
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush then has nowhere to fail
        return 1
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        return _fail(f"cannot use{where}: {exc.strerror or exc}", "check the path and its permissions", 1)
    except (ValueError, RecursionError) as exc:
        return _fail(f"bad input: {exc}", "see `arena --help` and the README", 2)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
