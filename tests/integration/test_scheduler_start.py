"""`arena scheduler` as a user starts it: the plan first (one line per job, its trigger in words and its next
run), refusals before anything is written, and a sync and render at once when none ran in the last period;
`arena jobs list` says the triggers in words and lists the render job."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlmodel import Session

from arena.cli import main
from arena.jobs.plan import describe, planned_jobs, trigger_from

ROOT = Path(__file__).resolve().parents[2]
WORDS = ("every 15 minutes", "hourly at :05", "hourly at :00", "daily at 00:00 UTC", "daily at 03:30 UTC",
         "daily at 04:10 UTC", "Sundays at 00:00 UTC")


def tiny_replay(path: Path) -> Path:
    """Three recorded markets, open now (no network, no ../shared): what the scheduler's sync reads."""
    from arena.venues.replay import write_replay

    today = date.today()
    records = [{
        "platform": "manifold", "market_id": f"m{i}", "question": f"Will thing {i} happen?", "url": "",
        "background": "", "resolution_criteria": "", "market_info_resolution_criteria": None,
        "market_open_datetime": (datetime.now(timezone.utc) - timedelta(days=30)).isoformat(),
        "market_close_datetime": (datetime.now(timezone.utc) + timedelta(days=30)).isoformat(),
        "resolution": i % 2, "first_resolved_observation_date": today + timedelta(days=40),
        "history": [(today - timedelta(days=d), 0.3 + i / 10) for d in range(5, 0, -1)],
    } for i in range(3)]
    write_replay(records, path)
    return path


# Loaded into the scheduler's process (a sitecustomize on its PYTHONPATH): each line it writes to stdout is noted
# with the process's CPU time and whether the database file exists at that very moment — measured inside the
# process, so a test runner that reads the pipe late cannot blur it.
PROBE = r"""
import os, sys, time
_log, _db, _write = os.environ["PROBE_LOG"], os.environ["PROBE_DB"], sys.stdout.write
def _noted(text):
    if text.strip():
        with open(_log, "a") as fh:
            fh.write(f"{time.process_time():.3f}\t{os.path.exists(_db)}\t{text.strip()}\n")
    return _write(text)
sys.stdout.write = _noted
"""


@pytest.mark.slow
def test_the_scheduler_prints_its_plan_at_once_then_syncs_and_renders(tmp_path):
    db = tmp_path / "arena.sqlite"
    replay = tiny_replay(tmp_path / "r.jsonl")
    site = tmp_path / "site"
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "sitecustomize.py").write_text(PROBE)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "ARENA_DATA_DIR": str(tmp_path / "data"),
           "PYTHONPATH": os.pathsep.join([str(probe), *filter(None, [os.environ.get("PYTHONPATH")])]),
           "PROBE_LOG": str(tmp_path / "probe.log"), "PROBE_DB": str(db)}
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "arena", "scheduler", "--db", f"sqlite:///{db}", "--venue",
                             "replay", "--replay", str(replay), "--site", str(site)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp_path)
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.put((time.monotonic() - started, line.rstrip("\n")))

    threading.Thread(target=read, daemon=True).start()
    seen: list[tuple[float, str]] = []
    try:
        deadline = time.monotonic() + 240  # a loaded CI machine: the catch-up sync and render can be slow
        while time.monotonic() < deadline and not any("render after sync:" in s[1] for s in seen):
            try:
                seen.append(lines.get(timeout=1))
            except queue.Empty:
                assert proc.poll() is None, "\n".join(s[1] for s in seen)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    text = [s[1] for s in seen]
    assert text[0].startswith("arena scheduler: 7 jobs"), text
    plan = text[1:9]
    # one line per job with its trigger in words and its next run; the render job last
    assert all(" next 20" in ln for ln in plan[:7]), plan
    assert {w for w in WORDS if any(w in ln for ln in plan)} == set(WORDS)
    assert plan[7].split()[0] == "render" and "after sync" in plan[7]
    # the whole plan is out before the store is touched, within 1.5 s of the process starting — counted in
    # its CPU time (a CI machine under load stretches wall time for reasons that are not the scheduler's)
    noted = [ln.split("\t", 2) for ln in (tmp_path / "probe.log").read_text().splitlines()]
    cpu, db_existed, last_of_plan = noted[8]
    assert last_of_plan.startswith("render ") and db_existed == "False" and float(cpu) <= 1.5, noted[:9]
    assert any(e == "True" for _, e, _ in noted)  # (the probe sees the store once it is opened)
    # then a catch-up: nothing ran in the last 15 minutes, so a sync now, and the site after it
    assert any(ln.startswith("catching up now: sync (none in the last 15 minutes, then render)") for ln in text)
    assert any(ln.endswith("sync: started (due " + ln.split("(due ")[-1]) for ln in text if "sync: started" in ln)
    assert any("sync: ok — replay:" in ln for ln in text), text
    assert (site / "index.html").is_file()
    assert not (tmp_path / "data").exists()  # --db named the store: nothing written in the data directory


@pytest.mark.parametrize("command", ["scheduler", "worker"])
def test_a_refusal_writes_nothing(tmp_path, command):
    """A missing key is refused before the store is opened: no database file, no data directory."""
    env = {k: v for k, v in os.environ.items() if k != "OPENROUTER_API_KEY"}
    env["ARENA_DATA_DIR"] = str(tmp_path / "data")
    for db in ([], ["--db", f"sqlite:///{tmp_path / 'named.sqlite'}"]):
        out = subprocess.run([sys.executable, "-m", "arena", command, "--config", str(ROOT / "arena.example.toml"),
                              *db], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
        assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
        assert "OPENROUTER_API_KEY" in out.stderr and out.stdout == ""
        assert sorted(p.name for p in tmp_path.iterdir()) == [], list(tmp_path.iterdir())


def test_jobs_list_says_each_trigger_in_words_and_lists_the_render_job(engine, db_url, capsys):
    assert main(["jobs", "list", "--db", db_url]) == 0
    out = capsys.readouterr().out
    assert "cron[" not in out and "interval[" not in out
    for words in WORDS:
        assert words in out, words
    render = [ln for ln in out.splitlines() if ln.startswith("render ")]
    assert len(render) == 1 and "after sync, decision_round, mark, settle" in render[0]


def test_triggers_in_words():
    assert describe(trigger_from({"minutes": 15})) == "every 15 minutes"
    assert describe(trigger_from({"hours": 1})) == "every hour"
    assert describe(trigger_from({"days": 2})) == "every 2 days"
    assert describe(trigger_from("5 * * * *")) == "hourly at :05"
    assert describe(trigger_from("30 3 * * *")) == "daily at 03:30 UTC"
    assert describe(trigger_from("0 0 * * sun")) == "Sundays at 00:00 UTC"
    assert describe(trigger_from("*/10 2-4 * * *")) == "cron '*/10 2-4 * * *' (minute hour day month weekday, UTC)"
    mark = {p.id: describe(p.trigger) for p in planned_jobs(timedelta(hours=6))}["mark"]
    assert mark == "every 6 hours"  # the configured mark period


def test_the_catch_up_runs_the_sync_only_when_none_ran_in_its_period(engine, tmp_path):
    from arena.cli import _catch_up
    from arena.jobs.runtime import Runtime
    from arena.store.tables import JobRunRow

    now = datetime(2026, 3, 2, 12, 7, tzinfo=timezone.utc)
    planned = planned_jobs()
    site = Runtime(engine=engine, site_dir=tmp_path / "site")
    assert set(_catch_up(site, planned, now)) == {"sync"}
    with Session(engine) as s:
        s.add(JobRunRow(job="sync", period_key="k", status="ok", started_at=now - timedelta(minutes=9)))
        s.commit()
    assert set(_catch_up(site, planned, now)) == {"render"}  # synced recently, but the site has no render
    assert _catch_up(Runtime(engine=engine), planned, now) == {}  # no site: nothing to catch up
    with Session(engine) as s:
        s.add(JobRunRow(job="render", period_key="r", status="ok", started_at=now - timedelta(minutes=2)))
        s.commit()
    assert _catch_up(site, planned, now) == {}
    assert set(_catch_up(site, planned, now + timedelta(minutes=20))) == {"sync"}  # a period later
