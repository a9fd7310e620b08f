"""A cohort's seats are rebuilt from their frozen lineup record, so every option of a seat must survive
freeze → rebuild unchanged (a property test over every `AgentConfig` field), and a seat that cannot be rebuilt
fails alone — recorded with its reason — while the other seats of the round decide."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import select, update
from sqlmodel import Session
from standin import hold_responder

from arena.config import (ABLATION_FACTORS, AGENT_KINDS, BASELINE_PARAMS, REASONING_EFFORTS, RESPONSE_FORMATS,
                          AgentConfig, parse_config)
from arena.domain.sizing import PROMPT_VERSIONS
from arena.errors import ConfigError
from arena.domain.market import YES, Market, Quote
from arena.money import Price
from arena.usecases import ingest
from arena.usecases.lifecycle import UnbuildableAgent, build_agent, decision_round, start_current_cohort
from arena.store.engine import session_scope
from arena.store.tables import AgentRow, DecisionRow

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SUNDAY = datetime(2026, 3, 1, tzinfo=timezone.utc)
CORPUS = str(Path(__file__).parent / "corpus_sample.jsonl")  # a valid dated corpus (corpus_search seats)
NAME = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:+\-]{0,12}", fullmatch=True)
ENV = st.from_regex(r"[A-Z_][A-Z0-9_]{0,10}", fullmatch=True)
TEXT = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF), max_size=20)
HEADER = st.from_regex(r"X-[A-Za-z][A-Za-z0-9-]{0,10}", fullmatch=True).filter(
    lambda h: not any(w in h.lower() for w in ("key", "token", "secret", "auth", "cookie", "passw", "session",
                                                 "signature")))
JSON = st.recursive(st.none().map(lambda _: "x") | st.booleans() | st.integers(-10**6, 10**6) | TEXT
                    | st.floats(allow_nan=False, allow_infinity=False, width=32),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
                    max_leaves=6)
OPT_FLOAT = st.none() | st.floats(0.0, 2.0)


@st.composite
def llm_seat(draw):  # type: ignore[no-untyped-def]
    tools = draw(st.lists(st.sampled_from(("price_history", "order_book", "related_markets",
                                           "resolution_criteria", "web_search", "corpus_search")), unique=True,
                           max_size=3))
    priced = draw(st.booleans())
    variant = draw(st.booleans())
    cutoff = draw(st.none() | st.dates(date(2020, 1, 1), date(2026, 1, 1)))
    released = draw(st.none() | st.dates(cutoff or date(2020, 1, 1), date(2026, 6, 1)))
    seat = {
        "name": draw(NAME), "kind": "llm", "model": draw(st.from_regex(r"[a-z]{1,8}/[a-z0-9.-]{1,12}", fullmatch=True)),
        "base_url": draw(st.sampled_from(("https://openrouter.ai/api/v1", "http://127.0.0.1:8080/v1"))),
        "api_key_env": draw(ENV), "temperature": draw(OPT_FLOAT), "max_tokens": draw(st.integers(1, 100_000)),
        "max_completion_tokens": draw(st.none() | st.integers(1, 100_000)),
        "reasoning_effort": draw(st.none() | st.sampled_from(REASONING_EFFORTS)),
        "extra_headers": draw(st.dictionaries(HEADER, TEXT, max_size=3)),
        "extra_body": draw(st.dictionaries(st.sampled_from(("provider", "transforms", "route", "top_k")), JSON,
                                           max_size=2)),
        "max_reply_bytes": draw(st.integers(1024, 10**7)),
        "price_per_million_input": draw(st.floats(0.0, 100.0)) if priced else None,
        "price_per_million_output": draw(st.floats(0.0, 100.0)) if priced else None,
        "max_repairs": draw(st.integers(0, 5)), "max_retries": draw(st.integers(0, 8)),
        "timeout_s": draw(st.floats(0.5, 600.0)), "response_format": draw(st.sampled_from(RESPONSE_FORMATS)),
        "tools": tools, "max_tool_rounds": draw(st.integers(1, 20)),
        "tool_result_chars": draw(st.integers(500, 200_000)),
        "web_search_url": "https://search.example/api" if "web_search" in tools else "",
        "web_search_key_env": draw(ENV) if "web_search" in tools else "",
        "corpus": CORPUS if "corpus_search" in tools else "",
        "replicates": draw(st.integers(1, 20)),
        "variant_of": draw(NAME) if variant else None,
        "factor": draw(st.sampled_from(ABLATION_FACTORS)) if variant else None,
        "knowledge_cutoff": cutoff, "released": released,
        "prompt_version": draw(st.none() | st.sampled_from(PROMPT_VERSIONS)),
    }
    return seat


@st.composite
def baseline_seat(draw):  # type: ignore[no-untyped-def]
    kind = draw(st.sampled_from([k for k in AGENT_KINDS if k != "llm"]))
    params = {}
    for p in sorted(BASELINE_PARAMS[kind]):
        if draw(st.booleans()):
            params[p] = draw(st.integers(0, 50)) if p in ("seed", "max_bets") else draw(st.floats(0.01, 1.0))
    variant = draw(st.booleans())
    return {"name": draw(NAME), "kind": kind, "params": params, "replicates": draw(st.integers(1, 20)),
            "variant_of": draw(NAME) if variant else None,
            "factor": draw(st.sampled_from(ABLATION_FACTORS)) if variant else None}


@settings(max_examples=1, deadline=None)
@given(llm_seat(), baseline_seat())
def test_the_strategies_cover_every_option(llm, baseline):
    """A new option must be added to the property test below: the strategies name every field."""
    assert set(AgentConfig.model_fields) - {"track"} <= set(llm) | set(baseline)


@settings(max_examples=60, deadline=None)
@given(st.one_of(llm_seat(), baseline_seat()))
def test_every_option_survives_freeze_and_rebuild(seat):
    cfg = AgentConfig(**seat)
    frozen = cfg.to_json()
    rebuilt = AgentConfig(name=cfg.name, **frozen)
    assert rebuilt == cfg
    agent = build_agent(AgentRow(cohort_id=1, name=cfg.name, kind=cfg.kind, model_id=cfg.model, config=frozen),
                        {cfg.api_key_env: "k", cfg.web_search_key_env or "UNUSED": "k"})
    assert agent is not None and not isinstance(agent, UnbuildableAgent)


def test_a_credential_header_is_refused_because_header_values_are_stored():
    with pytest.raises(ConfigError, match="X-Api-Key.*credential header"):
        parse_config('[[agents]]\nname = "m"\nmodel = "v/m"\nextra_headers = { "X-Api-Key" = "sk-1" }\n')


def _seed(engine):  # type: ignore[no-untyped-def]
    markets = [Market(id=f"sim:{i}", venue="sim", question=f"Will thing {i} happen?",
                      close_time=SUNDAY + timedelta(days=20), volume_24h=100.0 - i) for i in range(1, 5)]
    quotes = [Quote(m.id, {YES: Price.of("0.40")}, SUNDAY, SUNDAY, source="t") for m in markets]
    with session_scope(engine) as s:
        ingest.record_observations(s, SUNDAY, markets, quotes)


def test_a_seat_with_extra_headers_decides_and_sends_them(engine, standin):
    _seed(engine)
    cfg = parse_config(f'[cohort]\nforecast_set_size = 3\n\n[[agents]]\nname = "model-a"\n'
                       f'model = "vendor/model-a"\nbase_url = "{standin.base_url}"\napi_key_env = "K"\n'
                       f'extra_headers = {{ "HTTP-Referer" = "https://arena.example", "X-Title" = "arena" }}\n')
    name, _ = start_current_cohort(engine, SUNDAY, cfg)
    standin.default = hold_responder(0.5)
    out = decision_round(engine, SUNDAY + timedelta(minutes=5), cfg, {"K": "secret"})
    statuses = {o.agent: o.status for o in out[name]}
    assert statuses["model-a"] == "hold" and len(statuses) > 1
    sent = standin.requests[0].headers
    assert sent["http-referer"] == "https://arena.example" and sent["x-title"] == "arena"


def test_one_unbuildable_seat_fails_alone_with_its_reason(engine, standin):
    _seed(engine)
    cfg = parse_config(f'[cohort]\nforecast_set_size = 3\n\n[[agents]]\nname = "model-a"\n'
                       f'model = "vendor/model-a"\nbase_url = "{standin.base_url}"\napi_key_env = "K"\n')
    name, _ = start_current_cohort(engine, SUNDAY, cfg)
    with session_scope(engine) as s:  # a lineup frozen by an older version: header names without values
        row = s.scalars(select(AgentRow).where(AgentRow.name == "model-a")).one()
        s.execute(update(AgentRow).where(AgentRow.id == row.id)
                  .values(config={**row.config, "extra_headers": ["X-Title"]}))
    standin.default = hold_responder(0.5)
    out = decision_round(engine, SUNDAY + timedelta(minutes=5), cfg, {"K": "secret"})
    statuses = {o.agent: o.status for o in out[name]}
    assert statuses.pop("model-a") == "failed"
    assert statuses and all(v in ("executed", "hold") for v in statuses.values())
    with Session(engine) as s:
        err = s.scalar(select(DecisionRow.error).join(AgentRow, AgentRow.id == DecisionRow.agent_id)
                       .where(AgentRow.name == "model-a"))
    assert "cannot be rebuilt" in err and "extra_headers" in err
    assert not standin.requests  # the unbuildable seat never called its endpoint
