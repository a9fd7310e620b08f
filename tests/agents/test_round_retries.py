"""Failed decisions of LLM agents over loopback HTTP (the stand-in): an endpoint refusal or a missing key is
`failed` (not `hold`), retried by a later tick with every attempt kept, and `arena round --retry-failed` does
it by hand; the command prints failed apart from hold."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from sqlalchemy import select
from sqlmodel import Session
from standin import json_reply, server_error

from arena.cli import main
from arena.config import parse_config
from arena.domain.market import YES, Market, Quote
from arena.money import Price
from arena.usecases import ingest
from arena.usecases.cohorts import week_start
from arena.usecases.lifecycle import decision_round, start_current_cohort
from arena.store.engine import make_engine, migrate, session_scope
from arena.store.tables import DecisionAttemptRow, DecisionRow, FillRow, ForecastRow, ModelCallRow

SUNDAY = datetime(2026, 3, 1, tzinfo=timezone.utc)
REPLY = {"actions": [{"type": "BET", "market_id": "sim:1", "side": "YES", "amount": 500, "probability": 0.7}],
         "forecasts": {"sim:1": 0.7}, "reasoning": "r"}


def toml(base_url: str, window: int = 24) -> str:
    return f"""baselines = false
[cohort]
forecast_set_size = 1
[operations]
retry_window_hours = {window}
[[agents]]
name = "model-a"
model = "vendor/model-a"
base_url = "{base_url}"
api_key_env = "ARENA_TEST_RETRY_KEY"
max_retries = 0
"""


def seed(engine, now):  # type: ignore[no-untyped-def]
    m = Market(id="sim:1", venue="sim", question="Will it?", close_time=now + timedelta(days=20), volume_24h=1.0)
    with session_scope(engine) as s:
        ingest.record_observations(s, now, [m], [Quote("sim:1", {YES: Price.of("0.40")}, now, now, source="t")])


def test_a_refused_call_is_failed_and_retried_with_its_calls_numbered_after_the_first(engine, standin):
    seed(engine, SUNDAY)
    cfg = parse_config(toml(standin.base_url))
    start_current_cohort(engine, SUNDAY, cfg)
    standin.add("vendor/model-a", server_error(401, "invalid api key"), json_reply(REPLY))
    env = {"ARENA_TEST_RETRY_KEY": "k"}
    (first,) = next(iter(decision_round(engine, SUNDAY + timedelta(minutes=5), cfg, env).values()))
    assert (first.status, first.attempt) == ("failed", 1)  # an endpoint refusal is not the model's hold
    (second,) = next(iter(decision_round(engine, SUNDAY + timedelta(hours=1), cfg, env).values()))
    assert (second.status, second.attempt) == ("executed", 2)
    with Session(engine) as s:
        calls = [(c.attempt, c.decision_attempt, bool(c.error)) for c in
                 s.scalars(select(ModelCallRow).order_by(ModelCallRow.attempt))]
        assert calls == [(1, 1, True), (2, 2, False)]
        tries = [(t.attempt, t.status, "401" in t.error) for t in
                 s.scalars(select(DecisionAttemptRow).order_by(DecisionAttemptRow.attempt))]
        assert tries == [(1, "failed", True), (2, "executed", False)]


def test_round_command_reports_failed_apart_from_hold_and_retries_by_hand(db_url, standin, tmp_path, capsys,
                                                                          monkeypatch):
    now = datetime.now(timezone.utc)
    engine = make_engine(db_url)
    migrate(engine)
    seed(engine, now - timedelta(minutes=1))
    cfg_file = tmp_path / "arena.toml"
    cfg_file.write_text(toml(standin.base_url, window=0))  # no automatic retries: only by hand
    cohort, _ = start_current_cohort(engine, now, parse_config(cfg_file.read_text()))
    monkeypatch.delenv("ARENA_TEST_RETRY_KEY", raising=False)
    assert main(["round", "--config", str(cfg_file), "--db", db_url]) == 0
    out = capsys.readouterr()
    assert f"{cohort}: failed 1" in out.out and "ARENA_TEST_RETRY_KEY" in out.err
    monkeypatch.setenv("ARENA_TEST_RETRY_KEY", "k")
    standin.add("vendor/model-a", json_reply({"actions": [], "forecasts": {"sim:1": 0.5}, "reasoning": "wait"}))
    assert main(["round", "--config", str(cfg_file), "--db", db_url]) == 0
    assert f"{cohort}: nothing to do; already decided 1" in capsys.readouterr().out  # outside the window
    assert main(["round", "--config", str(cfg_file), "--db", db_url, "--retry-failed"]) == 0
    assert f"{cohort}: hold 1" in capsys.readouterr().out
    with Session(engine) as s:
        d = s.scalars(select(DecisionRow)).one()
        assert (d.status, d.attempts, d.round_key) == ("hold", 2, f"{week_start(now):%Y-%m-%d}")
    engine.dispose()


def test_an_llm_seat_with_replicates_is_asked_k_times_from_its_frozen_lineup(engine, standin):
    """`replicates = 2` in the config is frozen into the lineup and read back by the round: two calls to the
    endpoint, each tagged with its replicate; replicate 1's bet is the one executed; both forecasts stored."""
    seed(engine, SUNDAY)
    cfg = parse_config(toml(standin.base_url) + "replicates = 2\n")
    start_current_cohort(engine, SUNDAY, cfg)
    second = {"actions": [{"type": "BET", "market_id": "sim:1", "side": "NO", "amount": 300, "probability": 0.2}],
              "forecasts": {"sim:1": 0.2}, "reasoning": "r2"}
    standin.add("vendor/model-a", json_reply(REPLY), json_reply(second))  # asked in replicate order
    (out,) = next(iter(decision_round(engine, SUNDAY + timedelta(minutes=5), cfg,
                                      {"ARENA_TEST_RETRY_KEY": "k"}).values()))
    assert out.status == "executed"
    with Session(engine) as s:
        calls = [(c.attempt, c.replicate) for c in s.scalars(select(ModelCallRow).order_by(ModelCallRow.attempt))]
        assert calls == [(1, 1), (2, 2)]  # numbered as sent (each is on record before it is sent): replicate 1 first
        forecasts = sorted((f.replicate, f.probability) for f in s.scalars(
            select(ForecastRow).where(ForecastRow.source == "forecast_set")))
        assert forecasts == [(1, 0.7), (2, 0.2)]
        assert [f.outcome for f in s.scalars(select(FillRow))] == [YES]  # replicate 1's YES, not replicate 2's NO
