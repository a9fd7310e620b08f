"""`arena demo --db URL --force` after the demo was killed (a real SIGKILL of a child process, at several points
of the run) starts over in the emptied store and ends with exactly the facts of a run that was never killed:
every table compared with a clean run's, row by row (surrogate ids and claim bookkeeping aside)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from sqlalchemy import func, select
from sqlmodel import Session
from table_facts import differences, table_facts

from arena.cli import main
from arena.store.engine import make_engine
from arena.store.tables import FillRow

pytestmark = pytest.mark.slow
ARGS = ["demo", "--cohorts", "2", "--decision-weeks", "2", "--markets-per-week", "12", "--seed", "3"]


def _fills(url: str) -> int:
    eng = make_engine(url)
    try:
        with Session(eng) as s:
            return int(s.scalar(select(func.count()).select_from(FillRow)) or 0)
    except Exception:  # noqa: BLE001 - the child has not created the tables yet
        return 0
    finally:
        eng.dispose()


def test_demo_force_after_kills_equals_a_clean_run(new_url, capsys):
    clean = new_url()
    assert main([*ARGS, "--db", clean]) == 0
    total = _fills(clean)
    assert total > 20
    url = new_url()
    for at_fills in (1, total // 3, 2 * total // 3):  # killed early, in the middle, late
        proc = subprocess.Popen([sys.executable, "-m", "arena", *ARGS, "--db", url, "--force"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while _fills(url) < at_fills:
            if proc.poll() is not None:
                pytest.fail(f"the demo ended before {at_fills} fills: {proc.stderr.read().decode()[-2000:]}")
            assert time.monotonic() < deadline
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        assert 0 < _fills(url) < total  # killed part-way: the store holds a half-run
    capsys.readouterr()
    assert main([*ARGS, "--db", url, "--force"]) == 0
    assert "--force: emptied" in capsys.readouterr().out
    assert differences(table_facts(clean), table_facts(url)) == {}


def test_demo_refuses_an_arena_without_force(new_url, capsys):
    url = new_url()
    assert main([*ARGS, "--db", url]) == 0
    before = table_facts(url)
    capsys.readouterr()
    assert main([*ARGS, "--db", url]) == 2
    err = capsys.readouterr().err
    assert "already holds an arena" in err and "--force to empty it" in err
    assert table_facts(url) == before
