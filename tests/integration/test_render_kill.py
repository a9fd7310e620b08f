"""A render killed part-way (a real SIGKILL of `arena jobs run render`) does not leave its job run `running`
forever: once its lease has expired, the next run of the job records it as abandoned (with the reason) and
renders; nothing stays running, and the site is complete."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from sqlalchemy import select
from sqlmodel import Session

from arena.cli import main
from arena.store.engine import make_engine
from arena.store.tables import JobRunRow

pytestmark = pytest.mark.slow


def _runs(url: str) -> list[tuple[str, str]]:
    eng = make_engine(url)
    try:
        with Session(eng) as s:
            return [(r.status, r.error) for r in s.scalars(select(JobRunRow).where(JobRunRow.job == "render")
                                                           .order_by(JobRunRow.id))]
    finally:
        eng.dispose()


def test_a_killed_render_is_recorded_as_abandoned_by_the_next_one(db_url, tmp_path, monkeypatch, capsys):
    assert main(["demo", "--cohorts", "3", "--decision-weeks", "2", "--markets-per-week", "20", "--db", db_url]) == 0
    site = tmp_path / "site"
    env = dict(os.environ, ARENA_LEASE_SECONDS="1")
    proc = subprocess.Popen([sys.executable, "-m", "arena", "jobs", "run", "render", "--site", str(site),
                             "--db", db_url], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not any(status == "running" for status, _ in _runs(db_url)):
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    assert [s for s, _ in _runs(db_url)] == ["running"]  # the dead runner's claim
    time.sleep(1.5)  # its lease expires
    monkeypatch.setenv("ARENA_LEASE_SECONDS", "1")
    capsys.readouterr()
    assert main(["jobs", "run", "render", "--site", str(site), "--db", db_url]) == 0
    runs = _runs(db_url)
    assert [s for s, _ in runs] == ["abandoned", "ok"]
    assert "runner stopped renewing" in runs[0][1]
    assert (site / "index.html").is_file() and (site / "operations.html").is_file()


def test_a_scheduler_killed_during_its_render_leaves_no_run_running_after_the_next_start(db_url, tmp_path):
    """`arena scheduler` itself SIGKILLed while its catch-up render runs; started again, it records the dead
    render as abandoned and renders the site; no job run is left `running`."""
    from test_scheduler_start import tiny_replay

    assert main(["demo", "--cohorts", "3", "--decision-weeks", "2", "--markets-per-week", "20", "--db", db_url]) == 0
    replay, site = tiny_replay(tmp_path / "r.jsonl"), tmp_path / "site"
    env = dict(os.environ, ARENA_LEASE_SECONDS="1", ARENA_DATA_DIR=str(tmp_path / "data"))
    cmd = [sys.executable, "-m", "arena", "scheduler", "--db", db_url, "--venue", "replay", "--replay", str(replay),
           "--site", str(site)]
    first = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
    deadline = time.monotonic() + 180
    while not any(status == "running" for status, _ in _runs(db_url)):
        assert first.poll() is None, first.stderr.read().decode()[-2000:]  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "the scheduler never started its render"
        time.sleep(0.01)
    os.kill(first.pid, signal.SIGKILL)
    first.wait(30)
    assert "running" in [s for s, _ in _runs(db_url)]  # the dead scheduler's render
    time.sleep(1.5)  # its lease expires
    second = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        while not any(status == "ok" for status, _ in _runs(db_url)):
            assert second.poll() is None, second.stderr.read().decode()[-2000:]  # type: ignore[union-attr]
            assert time.monotonic() < deadline + 120, "the restarted scheduler never rendered"
            time.sleep(0.1)
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(60)
    runs = _runs(db_url)
    assert "running" not in [s for s, _ in runs], runs
    assert any(s == "abandoned" and "runner stopped renewing" in e for s, e in runs), runs
    assert (site / "index.html").is_file() and (site / "operations.html").is_file()
