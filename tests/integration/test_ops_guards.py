"""Operational guards and the one clock: `--at` on cohort start, round, jobs run and sync; cohort start
refuses an empty universe; the scheduler names missing keys before it starts; the demo uses a fresh database
unless --force and never trades a cohort before it opens; the operations page shows each cohort's universe and
the agents whose decisions fail; the scheduler logs each job; progress is a bar on a terminal, lines elsewhere."""

from __future__ import annotations

import io
from datetime import datetime, timezone
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlmodel import Session

from arena.cli import main
from arena.progress import Progress
from arena.store.engine import make_engine
from arena.store.tables import AgentRow, CohortRow, DecisionRow, JobRunRow
from arena.web.operations_page import operations_context

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["demo", "--seed", "3", "--cohorts", "2", "--decision-weeks", "2", "--markets-per-week", "12"]


def one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    return lines[0]


def decisions_by_cohort(url):  # type: ignore[no-untyped-def]
    eng = make_engine(url)
    with Session(eng) as s:
        rows = s.execute(select(CohortRow.name, CohortRow.period_start, DecisionRow.as_of)
                         .join(DecisionRow, DecisionRow.cohort_id == CohortRow.id)).all()
    eng.dispose()
    return rows


def test_demo_rerun_after_a_kill_refuses_then_with_force_trades_no_cohort_before_it_opens(db_url, capsys, monkeypatch):
    # the first run is killed on its 9th simulated day: both cohorts exist, the second has traded once
    calls = {"n": 0}
    real_update = Progress.update

    def killed(self, n=1, note=""):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 9:
            raise KeyboardInterrupt
        real_update(self, n, note)

    monkeypatch.setattr(Progress, "update", killed)
    with pytest.raises(KeyboardInterrupt):
        main([*SMALL, "--db", db_url])
    monkeypatch.setattr(Progress, "update", real_update)
    capsys.readouterr()

    assert main([*SMALL, "--db", db_url]) == 2  # the database holds an arena now
    assert "--force" in one_line(capsys.readouterr().err)
    assert main([*SMALL, "--db", db_url, "--force"]) == 0
    rows = decisions_by_cohort(db_url)
    eng = make_engine(db_url)
    with Session(eng) as s:
        seats = s.scalar(select(func.count()).select_from(AgentRow))  # the seats of both cohorts
    eng.dispose()
    # one decision per seat per weekly round, as in a fresh run; before the fix the re-run let the second
    # cohort trade on the first Sunday too (40 decisions instead of 32)
    assert len(rows) == 2 * seats
    assert all(as_of.replace(tzinfo=None) >= start.replace(tzinfo=None) for _, start, as_of in rows)


def test_cohort_start_refuses_an_empty_universe_and_at_runs_the_lifecycle_offline(db_url, shared_dir, capsys):
    replay = str(shared_dir / "data" / "replay" / "replay_markets.jsonl")
    at = "2025-11-02T00:00"
    assert main(["cohort", "start", "--db", db_url, "--at", at]) == 1
    err = one_line(capsys.readouterr().err)
    assert "universe is empty" in err and "arena sync" in err and "no venue has ever been synced" in err
    eng = make_engine(db_url)
    with Session(eng) as s:
        assert s.scalar(select(func.count()).select_from(CohortRow)) == 0  # nothing partial

    assert main(["sync", "--venue", "replay", "--file", replay, "--at", at, "--db", db_url]) == 0
    # synced, but a month later the prices are stale: the hint names the last sync
    assert main(["cohort", "start", "--db", db_url, "--at", "2025-12-07"]) == 1
    assert "replay last synced 2025-11-02 00:00" in one_line(capsys.readouterr().err)
    assert main(["cohort", "start", "--db", db_url, "--at", at]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cohort-2025-11-02 (week of 2025-11-02): opened; universe: ")
    assert main(["round", "--db", db_url, "--at", "2025-11-02T00:05"]) == 0
    assert "cohort-2025-11-02:" in capsys.readouterr().out
    assert main(["jobs", "run", "mark", "--db", db_url, "--at", "2025-11-03T00:10"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("mark (period 2025-11-03T00:00:00+00:00): done — marked ") and "{" not in out
    with Session(eng) as s:
        assert {str(d.as_of)[:16] for d in s.scalars(select(DecisionRow))} == {"2025-11-02 00:05"}
        assert [r.period_key for r in s.scalars(select(JobRunRow))] == ["2025-11-03T00:00:00+00:00"]
    # --allow-empty opens a cohort anyway (a week with nothing synced)
    assert main(["cohort", "start", "--db", db_url, "--at", "2026-03-01", "--allow-empty"]) == 0
    assert "universe: 0 markets" in capsys.readouterr().out
    eng.dispose()


@pytest.mark.parametrize("argv", [
    ["cohort", "start", "--at", "notadate"], ["round", "--at", "2025-13-01"], ["jobs", "run", "mark", "--at", "x"],
    ["sync", "--venue", "manifold", "--at", "yesterday"],
    ["replay", "run", "f.jsonl", "--from", "2025-11-02", "--until", "soon"],
])
def test_a_bad_time_is_one_line_and_exit_2(argv, db_url, capsys):
    assert main([*argv, "--db", db_url]) == 2
    assert "ISO 8601" in one_line(capsys.readouterr().err)


def test_scheduler_names_missing_keys_before_it_starts(db_url, capsys, monkeypatch):
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    assert main(["scheduler", "--db", db_url, "--config", str(ROOT / "arena.example.toml")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err  # one line naming each agent, its variable and the fix
    assert "gpt-4o-mini needs OPENROUTER_API_KEY" in err and "export OPENROUTER_API_KEY=<your key>" in err
    assert "--allow-missing-keys" in err
    assert "claude-sonnet needs OPENROUTER_API_KEY" in err


def test_operations_page_shows_universe_sizes_and_failing_agents(engine, shared_dir, tmp_path, monkeypatch):
    from arena.clock import FixedClock
    from arena.config import load_config
    from arena.usecases import sync
    from arena.usecases.lifecycle import decision_round, start_current_cohort
    from arena.venues.replay import ReplayVenue

    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    now = datetime(2025, 11, 2, tzinfo=timezone.utc)
    config = load_config(ROOT / "arena.example.toml")
    venue = ReplayVenue.from_path(shared_dir / "data" / "replay" / "replay_markets.jsonl", skip_malformed=True)
    start_current_cohort(engine, datetime(2025, 10, 26, tzinfo=timezone.utc), config)  # before any sync
    sync.sync_replay(engine, venue, FixedClock(now))
    start_current_cohort(engine, now, config)
    decision_round(engine, now, config, {})
    page = operations_context(engine, now)
    by_name = {c.name: c for c in page.cohorts}
    assert by_name["cohort-2025-10-26"].universe_at_open == 0
    assert by_name["cohort-2025-11-02"].universe_at_open > 100
    failing = {a.name: a for a in by_name["cohort-2025-11-02"].failing}
    assert "gpt-4o-mini" in failing and "OPENROUTER_API_KEY" in failing["gpt-4o-mini"].error
    assert "kelly-extremizer" not in failing

    from arena.web.render import render_site

    render_site(engine, tmp_path / "site", now)
    html = (tmp_path / "site" / "operations.html").read_text(encoding="utf-8")
    assert "Agents whose decisions are failing" in html and "gpt-4o-mini" in html


def test_progress_is_a_bar_on_a_terminal_and_plain_lines_otherwise():
    plain = io.StringIO()
    with Progress(20, "arena demo", stream=plain, unit="day") as p:
        for i in range(20):
            p.update(1, f"day {i}")
    lines = plain.getvalue().splitlines()
    assert lines[0] == "arena demo: 2/20 days — day 1" and lines[-1] == "arena demo: 20/20 days — day 19"
    assert len(lines) == 10
    bar = io.StringIO()
    with Progress(4, "arena replay run", stream=bar, unit="day", tty=True) as p:
        for _ in range(4):
            p.update(1, "x")
    assert "100%" in bar.getvalue() and "4/4" in bar.getvalue()


def test_the_scheduler_logs_each_jobs_start_end_outcome_and_next_run(engine, monkeypatch):
    import apscheduler.executors.base
    import apscheduler.schedulers.base

    from arena.clock import FixedClock
    from arena.jobs import runtime
    from arena.jobs.scheduler import build_scheduler

    clock = FixedClock(datetime(2026, 1, 3, 23, 0, tzinfo=timezone.utc))

    class Clocked(datetime):  # APScheduler reads datetime.now; here that is the test's clock
        @classmethod
        def now(cls, tz=None):  # type: ignore[override]
            t = clock.now()
            return t.astimezone(tz) if tz is not None else t.replace(tzinfo=None)

    monkeypatch.setattr(apscheduler.schedulers.base, "datetime", Clocked)
    monkeypatch.setattr(apscheduler.executors.base, "datetime", Clocked)
    runtime.configure(runtime.Runtime(engine, clock))
    lines: list[str] = []
    sch = build_scheduler(runtime.current(), manual=True, only=("mark",), log=lines.append)
    sch.start()
    try:
        clock.set(datetime(2026, 1, 4, 0, 0, 30, tzinfo=timezone.utc))
        sch.tick()
    finally:
        sch.shutdown()
    assert len(lines) == 3, lines
    assert lines[0].endswith("mark: started (due 2026-01-04 00:00:00)")
    assert "mark: ok " in lines[1] and lines[1].endswith("next run 2026-01-05 00:00:00 UTC")
    assert "render after mark: ok" in lines[2]


def test_replay_run_refuses_an_empty_window_and_a_used_database(db_url, shared_dir, capsys):
    replay = str(shared_dir / "data" / "replay" / "replay_markets.jsonl")
    base = ["replay", "run", replay, "--baselines-only", "--db", db_url]
    assert main([*base, "--from", "2025-11-09", "--until", "2025-11-02"]) == 2
    assert "must be after --from" in one_line(capsys.readouterr().err)
    assert main([*base, "--from", "2025-11-02", "--until", "2025-11-02T00:10"]) == 0
    capsys.readouterr()
    assert main([*base, "--from", "2025-11-02", "--until", "2025-11-02T00:10"]) == 2  # it holds an arena now
    assert "--force" in one_line(capsys.readouterr().err)


def test_sync_at_a_time_through_the_command_shows_its_requests(db_url, shared_dir, capsys, monkeypatch):
    import json

    import httpx

    samples = shared_dir / "data" / "api-samples" / "manifold"
    listing = json.loads((samples / "markets_list.json").read_text())
    full_mc = json.loads((samples / "market_full_multiple_choice.RECONSTRUCTED.json").read_text())

    def venue(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("search-markets"):
            return httpx.Response(200, json=listing if request.url.params.get("offset", "0") in ("", "0") else [])
        mid = request.url.path.rsplit("/", 1)[-1]
        row = next((m for m in listing if m["id"] == mid), None)
        if row is not None and row.get("outcomeType") == "MULTIPLE_CHOICE":  # its answers come with the full market
            return httpx.Response(200, json={**full_mc, "id": mid, "isResolved": row.get("isResolved", False)})
        return httpx.Response(404, json={"error": "not found"})

    real = httpx.Client
    monkeypatch.setattr(httpx, "Client", lambda **kw: real(transport=httpx.MockTransport(venue), **kw))
    assert main(["sync", "--venue", "manifold", "--at", "2024-01-07", "--db", db_url]) == 0
    captured = capsys.readouterr()
    assert "reading manifold as of 2024-01-07 00:00:00 UTC" in captured.out
    assert "arena sync manifold: " in captured.err and " requests — /v0/" in captured.err
    eng = make_engine(db_url)
    from arena.store.tables import SyncRunRow

    with Session(eng) as s:
        assert [str(r.started_at)[:16] for r in s.scalars(select(SyncRunRow))] == ["2024-01-07 00:00"]
    eng.dispose()
