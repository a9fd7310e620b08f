"""Agents with tools: a tool-using agent in a real decision round over loopback HTTP, tool results that never show
a fact recorded after the decision time, web search refused in replays and simulations, bounded tool rounds,
size-capped results, and the `model`/`agent` track frozen with the lineup."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import httpx
import pytest
from sqlmodel import Session, select
from standin import hold_responder, json_reply, tool_call, tool_responder

from arena.agents.llm import LLMAgent, agent_from_config
from arena.agents.tools import TOOL_NAMES, ToolBox
from arena.config import AgentConfig, parse_config, track_of
from arena.domain.market import YES, Market, Quote, Resolution, ResolutionKind
from arena.errors import ConfigError
from arena.money import Price
from arena.usecases import ingest
from arena.usecases.lifecycle import build_agent, decision_round, start_current_cohort
from arena.usecases.market_facts import StoreMarketFacts
from arena.store.engine import session_scope
from arena.store.tables import AgentRow, CohortRow, DecisionRow, ForecastRow, ModelCallRow

SUNDAY = datetime(2026, 3, 1, tzinfo=timezone.utc)
DECIDE_AT = SUNDAY + timedelta(minutes=5)
MARKET_TOOLS = ("price_history", "order_book", "related_markets", "resolution_criteria")


def tools_config(base_url: str, tools: tuple[str, ...] = MARKET_TOOLS, extra: str = "") -> str:
    listed = ", ".join(f'"{t}"' for t in tools)
    return f"""
baselines = false
[cohort]
forecast_set_size = 2
[[agents]]
name = "tool-user"
model = "vendor/tool-user"
base_url = "{base_url}"
api_key_env = "ARENA_TEST_KEY"
tools = [{listed}]
max_tool_rounds = 2
{extra}
[[agents]]
name = "plain"
model = "vendor/plain"
base_url = "{base_url}"
api_key_env = "ARENA_TEST_KEY"
"""


def seed(engine) -> None:  # type: ignore[no-untyped-def]
    """Two grouped markets and one more, with a price history up to the decision and facts recorded after it:
    a snapshot fetched an hour later (price 0.99), one observed before but fetched after (0.77), a third group
    member first seen after, and a resolution."""
    t0 = SUNDAY - timedelta(days=3)
    close = SUNDAY + timedelta(days=20)
    a = Market(id="sim:a", venue="sim", question="Will A win?", description="Resolves YES if A is declared winner.",
               close_time=close, volume_24h=900.0, group_id="race")
    b = Market(id="sim:b", venue="sim", question="Will B win?", close_time=close, volume_24h=800.0, group_id="race")
    c = Market(id="sim:c", venue="sim", question="Will C happen?", close_time=close, volume_24h=700.0)
    with session_scope(engine) as s:
        ingest.record_observations(s, t0, [a, b, c], [
            Quote("sim:a", {YES: Price.of("0.30")}, t0, t0, bid=Price.of("0.29"), ask=Price.of("0.31"), source="t"),
            Quote("sim:b", {YES: Price.of("0.60")}, t0, t0, source="t"),
            Quote("sim:c", {YES: Price.of("0.50")}, t0, t0, source="t")])
    t1 = SUNDAY - timedelta(hours=1)
    with session_scope(engine) as s:
        ingest.record_observations(s, t1, [], [
            Quote("sim:a", {YES: Price.of("0.42")}, t1, t1, bid=Price.of("0.41"), ask=Price.of("0.43"), source="t"),
            Quote("sim:b", {YES: Price.of("0.55")}, t1, t1, source="t"),
            Quote("sim:c", {YES: Price.of("0.50")}, t1, t1, source="t")])
    later = DECIDE_AT + timedelta(hours=1)
    late_member = Market(id="sim:late", venue="sim", question="Will Late win?", close_time=close, group_id="race")
    with session_scope(engine) as s:
        ingest.record_observations(s, later, [late_member], [
            Quote("sim:a", {YES: Price.of("0.99")}, later, later, bid=Price.of("0.98"), ask=Price.of("0.995"),
                  source="t"),
            Quote("sim:a", {YES: Price.of("0.77")}, SUNDAY, later, source="late-fetch"),
            Quote("sim:late", {YES: Price.of("0.05")}, later, later, source="t")],
            [("sim:b", Resolution("sim:b", ResolutionKind.WINNER, {YES: Price.of("1")}, later))])


def forecast_from_history(request, results):  # type: ignore[no-untyped-def]
    """The scripted model's answer: forecast every forecast-set market at the last price the tool showed."""
    from standin import forecast_ids

    last = results[-1]["content"]["points"][-1]["prices"][YES]
    return json_reply({"actions": [], "forecasts": {mid: last for mid in forecast_ids(request)},
                       "reasoning": f"the price history ends at {last}"})


def test_a_tool_using_agent_decides_in_a_real_round_and_every_call_is_stored(engine, standin):
    seed(engine)
    asked = tool_responder("price_history", lambda req: {"market_id": "sim:a", "max_points": 10},
                           forecast_from_history)

    def route(request):  # type: ignore[no-untyped-def]
        return asked(request) if request.model == "vendor/tool-user" else hold_responder(0.5)(request)

    standin.default = route
    cfg = parse_config(tools_config(standin.base_url))
    name, _ = start_current_cohort(engine, SUNDAY, cfg)
    out = decision_round(engine, DECIDE_AT, cfg, {"ARENA_TEST_KEY": "sk-test-tools-0123"})
    assert {o.agent: o.status for o in out[name]} == {"tool-user": "hold", "plain": "hold"}

    # the tool-user was offered its tools and got the result back as a `role: tool` message; plain was not
    first, second = standin.requests_for("vendor/tool-user")
    assert first.tools == list(MARKET_TOOLS) and first.body["tool_choice"] == "auto"
    assert [m["role"] for m in second.messages][-2:] == ["assistant", "tool"]
    assert all(not r.tools for r in standin.requests_for("vendor/plain"))

    with Session(engine) as s:
        rows = {a.name: a for a in s.scalars(select(AgentRow))}
        assert track_of(rows["tool-user"].config) == "agent" and track_of(rows["plain"].config) == "model"
        calls = s.scalars(select(ModelCallRow).join(DecisionRow, DecisionRow.id == ModelCallRow.decision_id)
                          .where(DecisionRow.agent_id == rows["tool-user"].id).order_by(ModelCallRow.attempt)).all()
        assert [c.attempt for c in calls] == [1, 2]
        (record,) = calls[0].tool_calls
        assert record["name"] == "price_history" and json.loads(record["arguments"])["market_id"] == "sim:a"
        history = json.loads(record["result"])
        assert [p["prices"][YES] for p in history["points"]] == [0.30, 0.42]  # nothing after the decision
        assert "0.99" not in record["result"] and "0.77" not in record["result"]
        assert calls[1].tool_calls is None and calls[1].parsed is not None
        forecasts = s.scalars(select(ForecastRow).where(ForecastRow.agent_id == rows["tool-user"].id)).all()
        assert forecasts and {f.probability for f in forecasts} == {0.42}  # the answer used the tool's result


def test_boards_carry_each_seat_track_and_filter_by_it(engine, db_url, standin, capsys):
    from arena.cli import main
    from arena.read.standings import boards_csv, boards_json, standings

    seed(engine)
    standin.default = hold_responder(0.5)
    cfg = parse_config(tools_config(standin.base_url).replace("baselines = false", "baselines = true"))
    name, _ = start_current_cohort(engine, SUNDAY, cfg)
    decision_round(engine, DECIDE_AT, cfg, {"ARENA_TEST_KEY": "sk-test-tools-0123"})
    later = DECIDE_AT + timedelta(hours=2)
    rows = boards_json(standings(engine, later, n_boot=10))["cohorts"][0]["rows"]
    tracks = {r["agent"]: r["track"] for r in rows}
    assert tracks["tool-user"] == "agent" and tracks["plain"] == "model" and tracks["random"] == "model"
    assert {tracks[a] for a in tracks if "reference" in a or a == "market"} <= {None}
    agent_only = boards_json(standings(engine, later, n_boot=10, track="agent"))
    assert {r["agent"] for r in agent_only["cohorts"][0]["rows"] if r["kind"] != "reference"} == {"tool-user"}
    assert [r["model"] for r in agent_only["overall"] if r["kind"] != "reference"] == ["tool-user"]
    assert ",track," in boards_csv(standings(engine, later, n_boot=10)).splitlines()[0]
    assert main(["leaderboard", "--db", db_url, "--format", "json", "--track", "model", "--bootstrap", "10",
                 "--as-of", later.isoformat()]) == 0
    listed = {r["agent"] for r in json.loads(capsys.readouterr().out)["cohorts"][0]["rows"] if r["kind"] != "reference"}
    assert "tool-user" not in listed and {"plain", "random"} <= listed
    assert main(["leaderboard", "--db", db_url, "--track", "agent", "--bootstrap", "10",
                 "--as-of", later.isoformat()]) == 0
    text = capsys.readouterr().out
    assert "ranked by forecast_brier; agent track only" in text and "\nplain " not in text and "tool-user" in text
    with pytest.raises(ValueError, match="unknown track"):
        standings(engine, later, track="robot")


def test_market_facts_never_show_what_was_recorded_after_the_decision(engine):
    seed(engine)
    facts = StoreMarketFacts(engine, DECIDE_AT)
    history = facts.price_history("sim:a", 50)
    assert [(p["prices"][YES], p.get("bid"), p.get("ask")) for p in history["points"]] == [
        (0.30, 0.29, 0.31), (0.42, 0.41, 0.43)]
    newest = facts.price_history("sim:a", 1)
    assert [p["prices"][YES] for p in newest["points"]] == [0.42] and newest["n_points"] == 2
    book = facts.order_book("sim:a")
    assert (book["best_bid"], book["best_ask"], book["price"]) == (0.41, 0.43, 0.42)
    assert book["spread"] == pytest.approx(0.02) and "not stored" in book["note"]
    related = facts.related_markets("sim:a")
    assert [m["market_id"] for m in related["markets"]] == ["sim:b"]  # sim:late was first seen later
    assert related["markets"][0]["prices"] == {YES: 0.55}
    text = json.dumps([history, book, related, facts.resolution_criteria("sim:b")])
    for later_fact in ("0.99", "0.98", "0.77", "sim:late", "resolved", "winner"):
        assert later_fact not in text
    assert "declared winner" in facts.resolution_criteria("sim:a")["description"]
    with pytest.raises(LookupError):
        facts.related_markets("sim:late")  # unknown at the decision time
    # an hour later the same reads do see them: the cut-off is the decision time, not the data
    after = StoreMarketFacts(engine, DECIDE_AT + timedelta(hours=2))
    assert after.price_history("sim:a", 50)["points"][-1]["prices"][YES] == 0.99
    assert "sim:late" in json.dumps(after.related_markets("sim:a"))


def _search_transport(seen: list[httpx.Request]) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"results": [{"title": "A leads", "url": "https://news.example/a",
                                                      "content": "A is ahead in the polls."}]})
    return httpx.MockTransport(handle)


SEARCH_EXTRA = 'web_search_url = "https://search.example/search"\nweb_search_key_env = "SEARCH_KEY"\n'


def _entry(tools: tuple[str, ...] = ("web_search", "order_book")) -> AgentConfig:
    cfg = parse_config(tools_config("http://127.0.0.1:9/v1", tools, SEARCH_EXTRA))
    return cfg.agent("tool-user")


def test_web_search_is_off_unless_live_and_refused_when_the_decision_time_is_not_now(view):
    seen: list[httpx.Request] = []
    env = {"ARENA_TEST_KEY": "sk-test-tools-0123", "SEARCH_KEY": "search-secret"}
    args = json.dumps({"query": "who leads the race"})
    # built for a replay or a simulation (the default): no endpoint, not offered, refused if called anyway
    sim = agent_from_config(_entry(), env, search_transport=_search_transport(seen))
    assert isinstance(sim, LLMAgent) and sim.toolbox is not None and sim.toolbox.web_search is None
    assert sim.toolbox.offered(view) == ("order_book",)
    refused = sim.toolbox.run(view, "c1", "web_search", args)
    assert "disabled" in refused.error and "replays" in refused.error
    # built for a live round, but the decision time is a week before the wall clock (a replayed round)
    now = view.as_of
    live = agent_from_config(_entry(), env, live=True, search_transport=_search_transport(seen),
                             wall_clock=lambda: now + timedelta(days=7))
    assert isinstance(live, LLMAgent) and live.toolbox is not None
    assert live.toolbox.offered(view) == ("order_book",)
    assert "leak the future" in live.toolbox.run(view, "c2", "web_search", args).error
    assert seen == []  # the search endpoint was never asked
    # a live round deciding now: the search runs, the key travels only in the header
    live_now = agent_from_config(_entry(), env, live=True, search_transport=_search_transport(seen),
                                 wall_clock=lambda: now + timedelta(minutes=2))
    assert isinstance(live_now, LLMAgent) and live_now.toolbox is not None
    assert "web_search" in live_now.toolbox.offered(view)
    record = live_now.toolbox.run(view, "c3", "web_search", args)
    assert not record.error and "A is ahead" in record.result and "search-secret" not in record.result
    assert len(seen) == 1 and seen[0].headers["authorization"] == "Bearer search-secret"
    # a live agent whose search key is missing is a one-line config error naming the variable
    with pytest.raises(ConfigError, match="SEARCH_KEY"):
        agent_from_config(_entry(), {"ARENA_TEST_KEY": "sk-test-tools-0123"}, live=True)
    # ... and a live round's seat rebuilt from the frozen lineup fails visibly instead of running without it
    from arena.usecases.lifecycle import MissingKeyAgent

    seat = AgentRow(name="tool-user", kind="llm", cohort_id=1, config=_entry().to_json())
    assert isinstance(build_agent(seat, {"ARENA_TEST_KEY": "x"}, live=True), MissingKeyAgent)
    rebuilt = build_agent(seat, {"ARENA_TEST_KEY": "x"})  # not live: web search simply stays off
    assert isinstance(rebuilt, LLMAgent) and rebuilt.toolbox is not None and rebuilt.toolbox.web_search is None


def test_web_search_is_refused_in_a_simulated_demo_run(standin, tmp_path, db_url, monkeypatch, capsys):
    """`arena demo --llm` (a simulation) with an agent that lists web_search and whose model asks for it: the
    search endpoint (the stand-in, which records every request) is never called and the refusal is stored."""
    from arena.cli import main
    from arena.store.engine import make_engine

    search_url = standin.base_url.replace("/v1", "/search")
    cfg = tmp_path / "arena.toml"
    cfg.write_text(f'[[agents]]\nname = "searcher"\nmodel = "vendor/searcher"\nbase_url = "{standin.base_url}"\n'
                   f'api_key_env = "ARENA_DEMO_KEY"\ntools = ["web_search"]\nmax_tool_rounds = 1\n'
                   f'web_search_url = "{search_url}"\nweb_search_key_env = "ARENA_SEARCH_KEY"\n')
    standin.default = tool_responder("web_search", lambda req: {"query": "who wins"},
                                     lambda req, results: hold_responder(0.5)(req))
    monkeypatch.setenv("ARENA_DEMO_KEY", "demo-key")
    monkeypatch.setenv("ARENA_SEARCH_KEY", "search-key")
    argv = ["demo", "--seed", "4", "--cohorts", "1", "--decision-weeks", "1", "--markets-per-week", "6",
            "--llm", "--config", str(cfg), "--db", db_url]
    assert main(argv) == 0, capsys.readouterr().err
    assert standin.requests and not any(r.path.endswith("/search") for r in standin.requests)
    assert all("web_search" not in r.tools for r in standin.requests)  # not even offered
    engine = make_engine(db_url)
    with Session(engine) as s:
        records = [t for c in s.scalars(select(ModelCallRow)) for t in (c.tool_calls or [])]
    assert records and all(r["name"] == "web_search" and "disabled" in r["error"] for r in records)


def test_tool_rounds_are_bounded_then_the_tools_are_withdrawn(standin, view):
    standin.default = lambda req: tool_call("order_book", {"market_id": "pm:1"})  # a model that never stops
    box = ToolBox(("order_book",))
    agent = LLMAgent("m", "m", standin.base_url, "k", toolbox=box, max_tool_rounds=2, max_repairs=1)
    decision = agent.decide(view)
    choices = [r.body["tool_choice"] for r in standin.requests]
    assert choices == ["auto", "auto", "none", "none"]  # 2 tool rounds, then the answer + 1 repair
    assert decision.error and "no usable reply" in decision.error
    assert [len(c.tool_calls) for c in decision.calls] == [1, 1, 0, 0]
    assert all("facts are not available" in c.tool_calls[0]["error"] for c in decision.calls[:2])
    assert "No more tool calls" in standin.requests[-1].messages[-1]["content"]


def test_a_tool_result_is_cut_to_its_size_limit(engine, view):
    seed(engine)
    facts = StoreMarketFacts(engine, DECIDE_AT)
    big = replace(view, facts=facts, as_of=DECIDE_AT)
    box = ToolBox(("resolution_criteria", "price_history"), result_chars=600)
    record = box.run(big, "c1", "resolution_criteria", json.dumps({"market_id": "sim:a"}))
    assert not record.truncated and "declared winner" in record.result
    with session_scope(engine) as s:  # a long history
        t = SUNDAY - timedelta(days=2)
        ingest.record_observations(s, t, [], [Quote("sim:a", {YES: Price(300_000 + i)}, t + timedelta(minutes=i), t
                                                    + timedelta(minutes=i), source="h") for i in range(100)])
    record = box.run(big, "c2", "price_history", json.dumps({"market_id": "sim:a", "max_points": 200}))
    assert record.truncated and len(record.result) <= 600 and "cut" in record.result
    bad = box.run(big, "c3", "price_history", "{not json")
    assert bad.error == "the arguments are not valid JSON"
    unknown = box.run(big, "c4", "order_book", "{}")
    assert "no tool named 'order_book'" in unknown.error


def test_track_is_derived_validated_and_survives_the_frozen_lineup(engine):
    cfg = parse_config(tools_config("http://127.0.0.1:9/v1"))
    assert cfg.agent("tool-user").track == "agent" and cfg.agent("plain").track == "model"
    assert AgentConfig(name="r", kind="random").track == "model"
    assert set(MARKET_TOOLS) < set(TOOL_NAMES)
    name, _ = start_current_cohort(engine, SUNDAY, cfg)
    with Session(engine) as s:
        cohort = s.scalars(select(CohortRow).where(CohortRow.name == name)).one()
        frozen = {e["name"]: e for e in cohort.lineup}
        row = s.scalars(select(AgentRow).where(AgentRow.name == "tool-user")).one()
    assert frozen["tool-user"]["config"]["tools"] == list(MARKET_TOOLS)
    rebuilt = build_agent(row, {"ARENA_TEST_KEY": "sk-test-tools-0123"})
    assert isinstance(rebuilt, LLMAgent) and rebuilt.toolbox is not None
    assert rebuilt.toolbox.names == MARKET_TOOLS and rebuilt.max_tool_rounds == 2


def test_the_example_files_tools_block_uncommented_is_valid():
    from arena.config import example_config_text

    text = example_config_text()
    start = text.index("# [[agents]]\n# name = \"claude-sonnet-tools\"")
    block = text[start:text.index("\n\n", start)]
    cfg = parse_config("\n".join(line[2:] for line in block.splitlines()))
    (entry,) = cfg.agents
    assert entry.track == "agent" and entry.tools == MARKET_TOOLS and entry.max_tool_rounds == 3
    assert entry.tool_result_chars == 8000 and entry.web_search_url == ""
