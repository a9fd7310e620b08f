"""A killed `arena replay run`, resumed at once on its database with `--force`, ends with exactly the facts of a
run that was never killed: every seat of every round decided once, nothing left claimed or running, every table
equal. The kill is a real SIGKILL of a child process: while an LLM seat's call is in flight (first and second
week), and between jobs. A simulated run owns its store, so its leases are on the simulated clock and the
resumed run takes the dead run's claims over at once (on the wall clock the 120 s lease outlived the whole
simulated week). A run that leaves a period unfinished exits non-zero."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from sqlalchemy import func, select
from sqlmodel import Session
from standin import hold_responder, server_error
from table_facts import differences, table_facts

from arena.cli import main
from arena.store.engine import make_engine
from arena.store.tables import DecisionRow, JobRunRow

pytestmark = [pytest.mark.shared, pytest.mark.slow]

WORK_TABLES = {"job_runs", "sync_runs", "sync_errors", "decision_attempts", "model_calls"}


def _argv(shared_dir, cfg, url, until="2025-11-16"):  # type: ignore[no-untyped-def]
    return ["replay", "run", str(shared_dir / "data" / "replay" / "replay_markets.jsonl"), "--from", "2025-11-02",
            "--until", until, "--config", str(cfg), "--db", url]


@pytest.fixture
def cfg(tmp_path, standin):  # type: ignore[no-untyped-def]
    path = tmp_path / "arena.toml"
    path.write_text(f'[cohort]\ndecision_weeks = 1\nhorizon_days = 14\nforecast_set_size = 3\nprompt_markets = 10\n\n'
                    f'[schedule]\nsettle = "0 1 * * *"\n\n'
                    f'[[agents]]\nname = "model-a"\nmodel = "vendor/model-a"\nbase_url = "{standin.base_url}"\n'
                    f'api_key_env = "ARENA_KILL_KEY"\n')
    return path


def _counts(url: str) -> tuple[int, int, int]:
    eng = make_engine(url)
    try:
        with Session(eng) as s:
            return (int(s.scalar(select(func.count()).select_from(DecisionRow)) or 0),
                    int(s.scalar(select(func.count()).select_from(DecisionRow).where(DecisionRow.status == "claimed"))
                        or 0),
                    int(s.scalar(select(func.count()).select_from(JobRunRow).where(JobRunRow.job == "mark")) or 0))
    except Exception:  # noqa: BLE001 - the child has not created the tables yet
        return (0, 0, 0)
    finally:
        eng.dispose()


@pytest.mark.parametrize("kill_at", ["llm-call-1", "llm-call-2", "after-3-marks"])
def test_a_killed_replay_run_resumed_at_once_equals_a_clean_run(kill_at, standin, shared_dir, cfg, new_url,
                                                                 monkeypatch, capsys):
    monkeypatch.setenv("ARENA_KILL_KEY", "kill-test-key")
    standin.default = hold_responder(0.5)
    clean = new_url()
    assert main(_argv(shared_dir, cfg, clean)) == 0
    clean_calls = len(standin.requests)
    assert clean_calls == 2  # one LLM decision per week, two weeks

    url = new_url()
    reached, release = threading.Event(), threading.Event()
    calls = {"n": 0}
    block_on = {"llm-call-1": 1, "llm-call-2": 2}.get(kill_at)
    answer = hold_responder(0.5)

    def respond(request):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == block_on:
            reached.set()
            release.wait(60)
        return answer(request)

    standin.default = respond
    proc = subprocess.Popen([sys.executable, "-m", "arena", *_argv(shared_dir, cfg, url)], env=dict(os.environ),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, f"the child ended before the kill: {proc.stderr.read().decode()[-2000:]}"
            assert time.monotonic() < deadline, "the child never reached the kill point"
            if block_on is not None and reached.wait(0.05):
                break
            if block_on is None and _counts(url)[2] >= 3:
                break
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        release.set()
        if proc.poll() is None:
            proc.kill()
    decided, claimed, _ = _counts(url)
    if block_on is not None:
        assert claimed >= 1  # the killed run left the LLM seat claimed

    standin.default = hold_responder(0.5)
    capsys.readouterr()
    assert main(_argv(shared_dir, cfg, url) + ["--force"]) == 0  # within seconds of the kill: leases not expired
    assert _counts(url)[1] == 0
    diff = differences(table_facts(clean, skip=WORK_TABLES), table_facts(url, skip=WORK_TABLES))
    assert diff == {}
    eng = make_engine(url)
    with Session(eng) as s:
        left = list(s.execute(select(JobRunRow.job, JobRunRow.period_key, JobRunRow.status)
                              .where(JobRunRow.status != "ok")))
    eng.dispose()
    assert left == []


def test_replay_run_exits_non_zero_when_a_round_is_left_incomplete(standin, shared_dir, cfg, new_url, monkeypatch,
                                                                   capsys):
    monkeypatch.setenv("ARENA_KILL_KEY", "kill-test-key")
    standin.default = server_error(500)  # the LLM seat's decision fails; its retry window outlasts the run
    url = new_url()
    assert main(_argv(shared_dir, cfg, url, until="2025-11-02T00:30")) == 1
    err = capsys.readouterr().err
    line = [x for x in err.splitlines() if x.startswith("arena: ")]
    assert len(line) == 1 and "decision_round [2025-11-02]: incomplete" in line[0] and " — " in line[0]
