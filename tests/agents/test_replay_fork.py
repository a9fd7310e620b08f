"""`arena replay fork` (issue 30): a cohort as it stood at T in a new database, one seat's prompt changed, the rest
replayed on the source's recorded market path — then `arena compare --db-b` pairs the changed seat with the
original on the same questions. The source is the test database (SQLite or PostgreSQL); the fork is SQLite."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from sqlalchemy import select
from sqlmodel import Session
from standin import Reply, RecordedRequest, forecast_ids, json_reply

from arena.cli import main
from arena.store.engine import make_engine
from arena.store.tables import (AgentRow, CohortRow, DecisionRow, FillRow, ForecastQuestionRow, ModelCallRow,
                                PriceSnapshotRow, ResolutionRow)

pytestmark = [pytest.mark.shared, pytest.mark.slow]

COHORT = "cohort-2025-11-02"
SEAT = """
[[agents]]
name = "model-a"
model = "vendor/model-a"
base_url = "{url}"
api_key_env = "ARENA_FORK_KEY"
"""
CONFIG = '[cohort]\ndecision_weeks = 2\nhorizon_days = 10\nforecast_set_size = 3\nprompt_markets = 10\n\n[schedule]\nsettle = "0 1 * * *"\n'


def by_prompt(request: RecordedRequest) -> Reply:
    """0.5 on every asked market when sent decision-v3.x (it says a market left out is scored as 0.5), 0.8 when
    sent an older prompt: the prompt, and nothing else, moves the forecasts."""
    system = request.messages[0]["content"]
    p = 0.5 if "never helps your rank" in system else 0.8
    return json_reply({"actions": [], "forecasts": {mid: p for mid in forecast_ids(request)}, "reasoning": "x"})


def cohort_facts(url: str, seat: str, after: str = "") -> dict:
    eng = make_engine(url)
    try:
        with Session(eng) as s:
            cid = s.scalar(select(CohortRow.id).where(CohortRow.name == COHORT))
            agent = s.scalar(select(AgentRow.id).where(AgentRow.cohort_id == cid, AgentRow.name == seat))
            decisions = sorted((d.round_key, d.status, str(d.as_of)[:19]) for d in s.scalars(
                select(DecisionRow).where(DecisionRow.agent_id == agent)))
            asked = sorted((q.round_key, q.market_id) for q in s.scalars(
                select(ForecastQuestionRow).where(ForecastQuestionRow.cohort_id == cid)))
            versions = Counter((str(c.at)[:10] >= after, c.prompt_version) for c in s.scalars(
                select(ModelCallRow).join(DecisionRow, DecisionRow.id == ModelCallRow.decision_id)
                .where(DecisionRow.agent_id == agent)))
            fills = sorted((str(f.at)[:19], f.market_id, f.kind, f.shares, f.cash_micros) for f in s.scalars(
                select(FillRow).where(FillRow.cohort_id == cid)))
            status = s.scalar(select(CohortRow.status).where(CohortRow.id == cid))
            completed = s.scalar(select(CohortRow.completed_at).where(CohortRow.id == cid))
            cohorts = list(s.scalars(select(CohortRow.name)))
        return {"decisions": decisions, "asked": asked, "versions": versions, "fills": fills, "status": status,
                "completed_at": str(completed)[:19], "cohorts": cohorts}
    finally:
        eng.dispose()


def test_a_fork_with_one_seats_prompt_changed_is_compared_with_the_original(standin, shared_dir, tmp_path, db_url,
                                                                          capsys, monkeypatch):
    standin.default = by_prompt
    monkeypatch.setenv("ARENA_FORK_KEY", "fork-secret")
    replay = str(shared_dir / "data" / "replay" / "replay_markets.jsonl")
    (tmp_path / "src.toml").write_text(CONFIG + SEAT.format(url=standin.base_url))
    assert main(["replay", "run", replay, "--from", "2025-11-02", "--until", "2025-11-28", "--config",
                 str(tmp_path / "src.toml"), "--db", db_url]) == 0
    src = cohort_facts(db_url, "model-a")
    assert len(src["decisions"]) == 2  # two weekly rounds
    # the fork: the cohort as it stood between its rounds, model-a sent decision-v2.1 from then on
    (tmp_path / "fork.toml").write_text(CONFIG + SEAT.format(url=standin.base_url)
                                        + 'prompt_version = "decision-v2.1"\n')
    out = tmp_path / "fork.sqlite"
    capsys.readouterr()
    assert main(["replay", "fork", "--db", db_url, "--cohort", COHORT, "--at", "2025-11-05", "--out", str(out),
                 "--config", str(tmp_path / "fork.toml")]) == 0
    said = capsys.readouterr().out
    assert "seats changed: model-a: prompt_version" in said
    fork_url = f"sqlite:///{out}"
    fork = cohort_facts(fork_url, "model-a", after="2025-11-05")
    assert fork["cohorts"] == [COHORT]  # the cohort alone; the source's later cohorts stay behind
    assert fork["status"] == src["status"] and fork["decisions"] == src["decisions"]
    # the same market path: every round asked the same questions as in the source
    assert fork["asked"] == src["asked"] and {r for r, _ in src["asked"]} == {"2025-11-02", "2025-11-09"}
    # the round before T kept its decision-v3.1 call; the round after it was sent decision-v2.1
    assert fork["versions"] == {(False, "decision-v3.1"): 1, (True, "decision-v2.1"): 1}
    assert src["versions"] == Counter({(True, "decision-v3.1"): 2})
    # nothing refetched: the fork's prices and resolutions are rows the source recorded, by its recording times
    e_src, e_fork = make_engine(db_url), make_engine(fork_url)
    try:
        def path(e, until):  # type: ignore[no-untyped-def]
            with Session(e) as s:
                snaps = {(r.market_id, r.outcome, str(r.observed_at)[:19], str(r.fetched_at)[:19], r.price_ppm)
                         for r in s.scalars(select(PriceSnapshotRow))
                         if str(r.fetched_at)[:19] <= until}
                res = {(r.market_id, r.version, r.kind, str(r.recorded_at)[:19]) for r in s.scalars(
                    select(ResolutionRow)) if str(r.recorded_at)[:19] <= until}
            return snaps, res
        # (up to the cohort's end: the fork feeds nothing past it)
        end = fork["completed_at"]
        assert path(e_fork, end) == path(e_src, end) and path(e_fork, "9999") == path(e_fork, end)
    finally:
        e_src.dispose()
        e_fork.dispose()
    # compare: the original model-a (A) with the fork's (B), paired on the same questions, main board instruments
    capsys.readouterr()
    assert main(["compare", "model-a", "model-a", "--db", db_url, "--db-b", fork_url, "--cohort", COHORT,
                 "--as-of", "2025-12-31", "--format", "json", "--bootstrap", "200"]) == 0
    c = json.loads(capsys.readouterr().out)
    brier = c["differences"]["forecast_brier"]
    assert c["cohorts"] == [COHORT] and (c["a"], c["b"]) == ("model-a (A)", "model-a (B)")
    markets = {m for _, m in src["asked"]}
    assert 0 < brier["n"] <= len(markets)
    assert brier["estimate"] != 0 and brier["lo"] <= brier["estimate"] <= brier["hi"]
    assert c["sequence"]["n"] == brier["n"]
    # a seat the fork left unchanged replays the source exactly: B − A is 0 on every shared question
    assert main(["compare", "market-follower", "market-follower", "--db", db_url, "--db-b", fork_url, "--cohort",
                 COHORT, "--as-of", "2025-12-31", "--format", "json", "--bootstrap", "50"]) == 0
    same = json.loads(capsys.readouterr().out)["differences"]["forecast_brier"]
    assert same["n"] == brier["n"] and same["estimate"] == 0
