"""`arena replay run` runs the config's whole lineup, LLM agents included (here against the local stand-in),
refuses to start while a key is missing unless --baselines-only, and renders the site with --site."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlmodel import Session
from standin import hold_responder

from arena.cli import main
from arena.store.engine import make_engine
from arena.store.tables import AgentRow, DecisionRow, JobRunRow

pytestmark = pytest.mark.shared


def test_replay_run_with_an_llm_agent_and_a_site(standin, shared_dir, tmp_path, db_url, capsys, monkeypatch):
    cfg = tmp_path / "arena.toml"
    cfg.write_text(f'[cohort]\nforecast_set_size = 3\nprompt_markets = 10\n\n[schedule]\nsettle = "0 1 * * *"\n\n'
                   f'[[agents]]\nname = "model-a"\nmodel = "vendor/model-a"\nbase_url = "{standin.base_url}"\n'
                   f'api_key_env = "ARENA_REPLAY_KEY"\n')
    replay = str(shared_dir / "data" / "replay" / "replay_markets.jsonl")
    argv = ["replay", "run", replay, "--from", "2025-11-02", "--until", "2025-11-03", "--config", str(cfg),
            "--db", db_url, "--site", str(tmp_path / "site")]
    monkeypatch.delenv("ARENA_REPLAY_KEY", raising=False)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "model-a needs ARENA_REPLAY_KEY" in err and "--baselines-only" in err
    standin.default = hold_responder(0.5)
    monkeypatch.setenv("ARENA_REPLAY_KEY", "replay-secret")
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "replay-secret" not in out and standin.requests
    eng = make_engine(db_url)
    with Session(eng) as s:
        statuses = {name: status for name, status in s.execute(
            select(AgentRow.name, DecisionRow.status).join(AgentRow, AgentRow.id == DecisionRow.agent_id))}
        renders = [r.period_key for r in s.scalars(select(JobRunRow).where(JobRunRow.job == "render"))]
    eng.dispose()
    assert statuses["model-a"] == "hold" and "kelly-extremizer" in statuses
    assert len(renders) == 2  # once per simulated day (2025-11-02, -03)
    assert (tmp_path / "site" / "index.html").is_file() and (tmp_path / "site" / "operations.html").is_file()
