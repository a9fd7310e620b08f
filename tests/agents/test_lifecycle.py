"""The cohort lifecycle with LLM agents over real loopback HTTP (the stand-in), on the test database."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

from sqlalchemy import inspect, select, text
from sqlmodel import Session
from standin import hold_responder, json_reply, ok

from arena.config import parse_config
from arena.domain.market import YES, Market, Quote
from arena.money import Price
from arena.usecases import ingest
from arena.usecases.lifecycle import decision_round, start_current_cohort
from arena.store.engine import session_scope
from arena.store.tables import AgentRow, CohortRow, DecisionRow, FillRow, ModelCallRow

SUNDAY = datetime(2026, 3, 1, tzinfo=timezone.utc)
SECRET = "sk-test-0123456789-very-secret"


def config(base_url: str, with_llm: bool = True):
    agents = f"""
[[agents]]
name = "model-a"
kind = "llm"
model = "vendor/model-a"
base_url = "{base_url}"
api_key_env = "ARENA_TEST_KEY"
price_per_million_input = 1.0
price_per_million_output = 2.0
max_repairs = 2
""" if with_llm else ""
    return parse_config(f"[cohort]\nforecast_set_size = 3\n{agents}")


def seed_markets(engine, now):
    markets = [Market(id=f"sim:{i}", venue="sim", question=f"Will thing {i} happen?",
                      close_time=now + timedelta(days=20), volume_24h=100.0 - i) for i in range(1, 5)]
    quotes = [Quote(m.id, {YES: Price.of("0.40")}, now, now, source="t") for m in markets]
    with session_scope(engine) as s:
        ingest.record_observations(s, now, markets, quotes)


def test_round_with_an_llm_agent_records_every_attempt_and_never_the_key(engine, standin):
    seed_markets(engine, SUNDAY)
    cfg = config(standin.base_url)
    name, created = start_current_cohort(engine, SUNDAY + timedelta(minutes=1), cfg)
    assert created and name == "cohort-2026-03-01"
    assert start_current_cohort(engine, SUNDAY + timedelta(hours=5), cfg) == (name, False)
    reply = {"actions": [{"type": "BET", "market_id": "sim:1", "side": "YES", "amount": 500, "probability": 0.7,
                          "rationale": "base rates"}],
             "forecasts": {"sim:1": 0.7, "sim:2": 0.3, "sim:3": 0.5}, "reasoning": "thinking"}
    standin.add("vendor/model-a", ok("I think... not JSON"), json_reply(reply))
    out = decision_round(engine, SUNDAY + timedelta(minutes=5), cfg, {"ARENA_TEST_KEY": SECRET})
    statuses = {o.agent: o.status for o in out[name]}
    assert statuses["model-a"] == "executed"
    assert set(statuses) == {"model-a", "always-0.5", "market-follower", "random", "kelly-extremizer"}
    with Session(engine) as s:
        calls = s.scalars(select(ModelCallRow).order_by(ModelCallRow.attempt)).all()
        assert [c.attempt for c in calls] == [1, 2] and calls[0].error and not calls[1].error.startswith("HTTP")
        assert calls[1].served_model and calls[1].prompt_tokens is not None and calls[1].cost_micros is not None
        assert "not JSON" in calls[0].raw_response and "JSON" in calls[1].prompt  # the repair quotes the error
        fill = s.scalars(select(FillRow).join(AgentRow, AgentRow.id == FillRow.agent_id)
                         .where(FillRow.kind == "buy", AgentRow.name == "model-a")).one()
        assert fill.cash_micros == -500_000_000
    # the key went to the endpoint in the Authorization header ...
    assert all(r.headers.get("authorization") == f"Bearer {SECRET}" for r in standin.requests)
    # ... and appears nowhere in the database
    with engine.connect() as c:
        for table in inspect(engine).get_table_names():
            for row in c.execute(text(f'SELECT * FROM "{table}"')):
                assert SECRET not in json.dumps([str(v) for v in row]), table
    # re-running the round trades nothing new and asks nobody
    before = len(standin.requests)
    again = decision_round(engine, SUNDAY + timedelta(minutes=50), cfg, {"ARENA_TEST_KEY": SECRET})
    assert {o.status for o in again[name]} == {"skipped"} and len(standin.requests) == before


def test_missing_key_is_a_recorded_failure_and_lineup_stays_frozen(engine, standin):
    seed_markets(engine, SUNDAY)
    name, _ = start_current_cohort(engine, SUNDAY, config(standin.base_url))
    # the file changes after the cohort started: later cohorts only
    without_llm = config(standin.base_url, with_llm=False)
    out = decision_round(engine, SUNDAY + timedelta(minutes=5), without_llm, {})
    statuses = {o.agent: o.status for o in out[name]}
    assert statuses["model-a"] == "failed"
    with Session(engine) as s:
        d = s.scalars(select(DecisionRow).join(AgentRow, AgentRow.id == DecisionRow.agent_id)
                      .where(AgentRow.name == "model-a")).one()
        assert "ARENA_TEST_KEY" in d.error
        lineup = [e["name"] for e in s.scalars(select(CohortRow)).one().lineup]
        assert "model-a" in lineup
    next_week, created = start_current_cohort(engine, SUNDAY + timedelta(days=7), without_llm)
    assert created
    with Session(engine) as s:
        c2 = s.scalars(select(CohortRow).where(CohortRow.name == next_week)).one()
        assert "model-a" not in [e["name"] for e in c2.lineup]


def test_hold_responder_drives_a_whole_cohort_of_llm_agents(engine, standin):
    standin.default = hold_responder(0.55)
    seed_markets(engine, SUNDAY)
    name, _ = start_current_cohort(engine, SUNDAY, config(standin.base_url))
    out = decision_round(engine, SUNDAY + timedelta(minutes=5), config(standin.base_url), {"ARENA_TEST_KEY": "k"})
    assert {o.agent: o.status for o in out[name]}["model-a"] == "hold"


def test_demo_llm_adds_configured_agents_and_explains_missing_keys(standin, tmp_path, db_url, capsys, monkeypatch):
    from arena.cli import main

    cfg = tmp_path / "arena.toml"
    cfg.write_text(f'[[agents]]\nname = "model-a"\nmodel = "vendor/model-a"\nbase_url = "{standin.base_url}"\n'
                   f'api_key_env = "ARENA_DEMO_KEY"\n')
    small = ["demo", "--seed", "4", "--cohorts", "1", "--decision-weeks", "1", "--markets-per-week", "8",
             "--llm", "--config", str(cfg), "--db", db_url]
    monkeypatch.delenv("ARENA_DEMO_KEY", raising=False)
    assert main(small) == 2
    err = capsys.readouterr().err
    assert "model-a" in err and "export ARENA_DEMO_KEY" in err
    standin.default = hold_responder(0.5)
    monkeypatch.setenv("ARENA_DEMO_KEY", "demo-secret")
    assert main(small) == 0
    out = capsys.readouterr().out
    assert any(re.match(r"\s*\S+\s+model-a\s", line) for line in out.splitlines())  # its board row (rank, name)
    assert standin.requests and "demo-secret" not in out


def test_each_cohort_keeps_the_prompt_version_it_started_with(engine, standin):
    """A cohort started before decision-v2 existed (its rules carry no prompt_version) is still sent v1; a new
    cohort's LLM agent is sent the newest (v3.1), and each model call records the version it was sent."""
    seed_markets(engine, SUNDAY - timedelta(days=7))
    cfg = config(standin.base_url)
    old, _ = start_current_cohort(engine, SUNDAY - timedelta(days=7), cfg)
    with session_scope(engine) as s:  # the rules as a cohort frozen before v2 stored them
        row = s.scalars(select(CohortRow).where(CohortRow.name == old)).one()
        row.rules = {k: v for k, v in row.rules.items() if k != "prompt_version"}
    new, _ = start_current_cohort(engine, SUNDAY, cfg)
    with Session(engine) as s:
        assert s.scalars(select(CohortRow).where(CohortRow.name == new)).one().rules["prompt_version"] == "decision-v3.1"
    standin.default = hold_responder(0.5)
    out = decision_round(engine, SUNDAY + timedelta(minutes=5), cfg, {"ARENA_TEST_KEY": "k"})
    assert {o.agent: o.status for o in out[old]}["model-a"] == "hold"
    assert {o.agent: o.status for o in out[new]}["model-a"] == "hold"
    systems = sorted(r.messages[0]["content"] for r in standin.requests_for("vendor/model-a"))
    assert len(systems) == 2
    assert sum("How you are ranked" in t and "<venue-data>" in t for t in systems) == 1  # v3.1
    assert sum("A YES bet forecasts P(YES) = confidence" in t for t in systems) == 1  # v1
    with Session(engine) as s:
        versions = dict(s.execute(
            select(CohortRow.name, ModelCallRow.prompt_version)
            .join(DecisionRow, DecisionRow.id == ModelCallRow.decision_id)
            .join(CohortRow, CohortRow.id == DecisionRow.cohort_id)).all())
    assert versions == {old: "decision-v1", new: "decision-v3.1"}


def test_the_reported_cost_and_provider_are_stored_with_the_call(engine, standin):
    seed_markets(engine, SUNDAY)
    cfg = config(standin.base_url)
    name, _ = start_current_cohort(engine, SUNDAY + timedelta(minutes=1), cfg)
    hold = {"actions": [], "forecasts": {"sim:1": 0.5, "sim:2": 0.5, "sim:3": 0.5}, "reasoning": "hold"}
    standin.add("vendor/model-a", json_reply(hold, served_model="vendor/model-a-0601", provider="DeepInfra",
                                             cost=0.0123456, prompt_tokens=10, completion_tokens=5))
    decision_round(engine, SUNDAY + timedelta(minutes=5), cfg, {"ARENA_TEST_KEY": SECRET})
    with Session(engine) as s:
        (call,) = s.scalars(select(ModelCallRow)).all()
        assert (call.served_model, call.provider, call.cost_micros) == ("vendor/model-a-0601", "DeepInfra", 12346)
