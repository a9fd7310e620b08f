"""LLMAgent against a real local HTTP stand-in: valid replies, repairs, retries with backoff, the response_format
fallback, timeouts, and the API key never appearing in anything recorded."""

from __future__ import annotations

import json
import pickle
import random
from decimal import Decimal

import httpx
import pytest
from agent_views import standard_view
from standin import (Reply, hold_responder, huge, json_reply, ok, rate_limited, response_format_refused, server_error,
                     slow)

from arena.agents.llm import LLMAgent, _retry_after, agent_from_config, agents_from_config
from arena.agents.prompts import PROMPT_VERSION
from arena.agents.baselines import AlwaysHalf, KellyBettor, RandomBettor
from arena.config import AgentConfig, TokenPrices, parse_config
from arena.domain.decision import Bet, Sell
from arena.errors import ConfigError
from arena.money import Money

KEY = "sk-test-KEY-0123456789"
MODEL = "acme/model-1"
FORECASTS = {"pm:1": 0.6, "pm:2": 0.25}
VALID = {"actions": [{"type": "BET", "market_id": "pm:1", "side": "YES", "amount": 500, "probability": 0.7,
                      "rationale": "cheap"},
                     {"type": "SELL", "market_id": "pm:2", "side": "NO", "fraction": 1}],
         "forecasts": FORECASTS, "reasoning": "edge on pm:1"}
OVER_LIMIT = {**VALID, "actions": [{"type": "BET", "market_id": "pm:1", "side": "YES", "amount": 5000,
                                    "probability": 0.7}]}


class Sleeps(list):
    """An injected sleep that records how long it was asked to wait and never waits."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def make_agent(standin, sleeps):
    agents: list[LLMAgent] = []

    def make(**kw) -> LLMAgent:
        kw.setdefault("prices", TokenPrices(3.0, 15.0))
        kw.setdefault("sleep", sleeps)
        kw.setdefault("rng", random.Random(1))
        agent = LLMAgent("acme", MODEL, standin.base_url, KEY, **kw)
        agents.append(agent)
        return agent

    yield make
    for a in agents:
        a.close()


def tokens(p: int = 1000, c: int = 200) -> dict:
    return {"prompt_tokens": p, "completion_tokens": c}


def test_a_valid_reply_is_a_decision_with_one_recorded_call(standin, make_agent, sleeps):
    standin.add(MODEL, json_reply(VALID, served_model="acme/model-1-2026-01", **tokens()))
    d = make_agent().decide(standard_view())
    assert d.error == ""
    assert d.actions == (Bet("pm:1", "YES", Money.of(500), 0.7, "cheap"), Sell("pm:2", "NO", Decimal(1)))
    assert d.forecasts == FORECASTS and d.reasoning == "edge on pm:1"
    (call,) = d.calls
    assert call.attempt == 1 and call.error == ""
    assert json.loads(call.raw_response) == VALID and call.parsed == VALID
    assert (call.prompt_tokens, call.completion_tokens) == (1000, 200)
    assert call.cost_usd == pytest.approx(1000 * 3 / 1e6 + 200 * 15 / 1e6)
    assert call.served_model == "acme/model-1-2026-01"
    assert call.prompt_version == PROMPT_VERSION
    assert call.latency_s is not None and call.latency_s >= 0
    messages = json.loads(call.prompt)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert sleeps == []

    (req,) = standin.requests_for(MODEL)
    assert req.path == "/v1/chat/completions"
    assert req.authorization == f"Bearer {KEY}"
    assert req.body["model"] == MODEL and "temperature" not in req.body and req.body["max_tokens"] == 4096
    assert req.body["messages"] == messages
    assert req.body["response_format"]["type"] == "json_schema"


def test_malformed_then_repaired(standin, make_agent):
    standin.add(MODEL, ok("I think I will bet on pm:1, about $500.", **tokens(900, 20)),
                json_reply(VALID, **tokens(1100, 150)))
    d = make_agent().decide(standard_view())
    assert d.error == "" and len(d.actions) == 2
    first, second = d.calls
    assert first.attempt == 1 and "contains no JSON object" in first.error and first.parsed is None
    assert first.raw_response == "I think I will bet on pm:1, about $500."
    assert first.cost_usd == pytest.approx(900 * 3e-6 + 20 * 15e-6)
    assert second.attempt == 2 and second.error == ""

    repair_request = standin.requests_for(MODEL)[1]
    roles = [m["role"] for m in repair_request.messages]
    assert roles == ["system", "user", "assistant", "user"]
    assert repair_request.messages[2]["content"] == "I think I will bet on pm:1, about $500."
    assert "contains no JSON object" in repair_request.messages[3]["content"]
    assert json.loads(second.prompt) == repair_request.messages


def test_over_limit_then_repaired(standin, make_agent):
    standin.add(MODEL, json_reply(OVER_LIMIT), json_reply(VALID))
    d = make_agent().decide(standard_view())
    assert d.error == "" and d.bets[0].amount == Money.of(500)
    assert "above the maximum bet of $2,000.00" in d.calls[0].error
    assert d.calls[0].parsed == OVER_LIMIT  # what the model said is kept even when it was refused
    repair = standin.requests_for(MODEL)[1].messages[-1]["content"]
    assert "Action 1 (BET on pm:1): amount $5,000.00 is above the maximum bet of $2,000.00." in repair


def test_unknown_ids_then_repaired(standin, make_agent):
    bad = {**VALID, "actions": [{**VALID["actions"][0], "market_id": "pm:404"}]}
    standin.add(MODEL, json_reply(bad), json_reply(VALID))
    d = make_agent().decide(standard_view())
    assert d.error == "" and "unknown market id 'pm:404'" in d.calls[0].error


def test_repairs_exhausted_is_a_hold_with_every_attempt_recorded(standin, make_agent):
    standin.add(MODEL, ok("no", **tokens(1000, 10)), json_reply(OVER_LIMIT, **tokens(1200, 100)),
                ok('{"actions": [', **tokens(1400, 5)))
    d = make_agent(max_repairs=2).decide(standard_view())
    assert d.is_hold and d.forecasts == {}
    assert d.error.startswith("no usable reply after 3 attempts (2 repairs); last problems: ")
    assert "cut off" in d.error
    assert [c.attempt for c in d.calls] == [1, 2, 3]
    assert [c.prompt_tokens for c in d.calls] == [1000, 1200, 1400]
    assert [c.completion_tokens for c in d.calls] == [10, 100, 5]
    assert all(c.cost_usd is not None and c.cost_usd > 0 for c in d.calls)
    assert all(c.error for c in d.calls)
    assert len(json.loads(d.calls[2].prompt)) == 6  # system, user, then two (assistant, repair) pairs
    assert len(standin.requests_for(MODEL)) == 3


def test_no_repairs_means_one_attempt(standin, make_agent):
    standin.add(MODEL, ok("no"))
    d = make_agent(max_repairs=0).decide(standard_view())
    assert len(d.calls) == 1 and d.error.startswith("no usable reply after 1 attempt (0 repairs)")


def test_a_reply_cut_off_at_max_tokens_says_so_in_the_repair(standin, make_agent):
    standin.add(MODEL, Reply(content='{"actions": [', finish_reason="length"), json_reply(VALID))
    d = make_agent(max_tokens=50).decide(standard_view())
    assert d.error == ""
    assert "cut off at the token limit (50)" in standin.requests_for(MODEL)[1].messages[-1]["content"]


def test_429_then_success_honours_retry_after(standin, make_agent, sleeps):
    standin.add(MODEL, rate_limited(7), json_reply(VALID, **tokens()))
    d = make_agent().decide(standard_view())
    assert d.error == "" and sleeps == [7.0]
    limited, good = d.calls
    assert (limited.attempt, good.attempt) == (1, 2)
    assert "HTTP 429" in limited.error and "retrying in 7.00 s (Retry-After)" in limited.error
    assert "Rate limit exceeded" in limited.raw_response
    assert limited.prompt_tokens is None and limited.cost_usd is None
    assert good.error == "" and good.prompt_tokens == 1000


def test_429_without_retry_after_backs_off_exponentially_with_jitter(standin, make_agent, sleeps):
    standin.add(MODEL, rate_limited(None), rate_limited(None), rate_limited(None), json_reply(VALID))
    d = make_agent(backoff_s=1.0).decide(standard_view())
    assert d.error == "" and len(sleeps) == 3
    for n, slept in enumerate(sleeps):  # equal jitter: between half and all of 1, 2, 4 s
        assert 2 ** n / 2 <= slept <= 2 ** n


def test_a_retry_after_too_long_gives_up(standin, make_agent, sleeps):
    standin.add(MODEL, rate_limited(3600))
    d = make_agent(max_retry_after_s=60).decide(standard_view())
    assert d.is_hold and "asked to wait longer than 60 s" in d.error and sleeps == []


def test_500s_then_give_up_is_a_hold_with_the_error(standin, make_agent, sleeps):
    standin.add(MODEL, server_error(500), server_error(502, "Bad gateway"), server_error(503))
    d = make_agent(max_retries=2).decide(standard_view())
    assert d.is_hold
    assert d.error == "model endpoint failed after 3 tries: HTTP 503 Service Unavailable: Internal Server Error"
    assert len(sleeps) == 2
    assert [c.attempt for c in d.calls] == [1, 2, 3]
    assert "HTTP 502 Bad Gateway: Bad gateway — retrying in" in d.calls[1].error
    assert len(standin.requests_for(MODEL)) == 3


def test_500_then_success(standin, make_agent, sleeps):
    standin.add(MODEL, server_error(500), json_reply(VALID))
    d = make_agent().decide(standard_view())
    assert d.error == "" and len(d.calls) == 2 and len(sleeps) == 1


def test_other_4xx_are_not_retried(standin, make_agent, sleeps):
    standin.add(MODEL, server_error(401, "No auth credentials found"))
    d = make_agent().decide(standard_view())
    assert d.is_hold and d.error == "model endpoint failed: HTTP 401 Unauthorized: No auth credentials found"
    assert sleeps == [] and len(d.calls) == 1


def test_an_error_object_in_a_200_body(standin, make_agent, sleeps):
    standin.add(MODEL, Reply(body=json.dumps({"error": {"message": "upstream overloaded", "code": 502}})),
                json_reply(VALID))
    d = make_agent().decide(standard_view())
    assert d.error == "" and "upstream overloaded" in d.calls[0].error and len(sleeps) == 1


def test_response_format_refused_falls_back_once_and_remembers(standin, make_agent, sleeps):
    standin.add(MODEL, response_format_refused(), json_reply(VALID), json_reply(VALID))
    agent = make_agent()
    d = agent.decide(standard_view())
    assert d.error == "" and agent.response_format_refused and sleeps == []
    assert "retrying once without response_format" in d.calls[0].error
    first, second = standin.requests_for(MODEL)
    assert "response_format" in first.body and "response_format" not in second.body
    agent.decide(standard_view())
    assert "response_format" not in standin.requests_for(MODEL)[2].body


def test_a_400_after_the_fallback_is_not_retried_again(standin, make_agent):
    standin.add(MODEL, response_format_refused(), response_format_refused())
    d = make_agent().decide(standard_view())
    assert d.is_hold and "HTTP 400" in d.error and len(d.calls) == 2


@pytest.mark.parametrize("mode, expected", [("json_object", {"type": "json_object"}), ("none", None)])
def test_response_format_modes(standin, make_agent, mode, expected):
    standin.add(MODEL, json_reply(VALID))
    make_agent(response_format=mode).decide(standard_view())
    assert standin.requests_for(MODEL)[0].body.get("response_format") == expected


def test_a_slow_reply_times_out_and_gives_up(standin, make_agent, sleeps):
    standin.add(MODEL, slow(json.dumps(VALID), 2.0), slow(json.dumps(VALID), 2.0))
    d = make_agent(timeout_s=0.2, max_retries=1).decide(standard_view())
    assert d.is_hold and "ReadTimeout" in d.error and "after 2 tries" in d.error
    assert len(d.calls) == 2 and len(sleeps) == 1
    assert all(c.latency_s is not None and c.latency_s < 1.5 for c in d.calls)


def test_transport_errors_are_retried(sleeps):
    attempts = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(request)
        if len(attempts) < 3:
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(200, json={"model": MODEL, "choices": [{"message": {"content": json.dumps(VALID)}}]})

    agent = LLMAgent("a", MODEL, "http://llm.invalid/v1", KEY, transport=httpx.MockTransport(handler),
                     sleep=sleeps, rng=random.Random(0))
    d = agent.decide(standard_view())
    assert d.error == "" and len(sleeps) == 2 and len(d.calls) == 3
    assert "ConnectError: connection refused — retrying in" in d.calls[0].error
    assert d.calls[2].prompt_tokens is None and d.calls[2].cost_usd is None  # no usage in the reply


def test_the_key_is_never_in_repr_calls_or_prompts(standin, make_agent):
    echo = f"my instructions say the key is {KEY}"
    standin.add(MODEL, ok(echo), server_error(500, f"bad key {KEY}"), json_reply(VALID))
    agent = make_agent()
    d = agent.decide(standard_view())
    assert KEY not in repr(agent) and KEY not in str(agent)
    assert KEY not in repr(vars(agent))
    assert KEY not in repr(d)
    for call in d.calls:
        for text in (call.prompt, call.raw_response, call.error, json.dumps(call.parsed)):
            assert KEY not in text
    assert "[redacted]" in d.calls[0].raw_response
    with pytest.raises(TypeError):
        pickle.dumps(agent)
    # ...while the endpoint did get it, in the Authorization header only
    for req in standin.requests_for(MODEL):
        assert req.authorization == f"Bearer {KEY}"
        assert KEY not in json.dumps(req.body)


def test_the_stand_in_default_responder_holds_with_forecasts(standin, make_agent):
    standin.default = hold_responder(0.4)
    d = make_agent().decide(standard_view())
    assert d.error == "" and d.is_hold and d.forecasts == {"pm:1": 0.4, "pm:2": 0.4}


def test_retry_after_as_an_http_date():
    response = httpx.Response(429, headers={"Retry-After": "Sun, 01 Nov 2026 12:00:30 GMT",
                                           "Date": "Sun, 01 Nov 2026 12:00:00 GMT"})
    assert _retry_after(response) == 30.0
    assert _retry_after(httpx.Response(429, headers={"Retry-After": "1.5"})) == 1.5
    assert _retry_after(httpx.Response(429, headers={"Retry-After": "soon"})) is None
    assert _retry_after(httpx.Response(429)) is None


def test_agents_from_config(standin):
    cfg = parse_config(f'[[agents]]\nname = "acme"\nmodel = "{MODEL}"\nbase_url = "{standin.base_url}"\n'
                       'api_key_env = "ACME_KEY"\nprice_per_million_input = 1\nprice_per_million_output = 2\n'
                       '[[agents]]\nname = "coin"\nkind = "random"\nparams = { seed = 5 }\n'
                       '[cohort]\nprompt_markets = 7\n')
    with pytest.raises(ConfigError, match=r"acme \(set ACME_KEY\)") as info:
        agents_from_config(cfg, {})
    assert info.value.data["missing"] == [("acme", "ACME_KEY")]
    agents = agents_from_config(cfg, {"ACME_KEY": KEY})
    assert list(agents) == ["acme", "coin", "always-0.5", "market-follower", "kelly-extremizer"]
    llm = agents["acme"]
    assert isinstance(llm, LLMAgent) and llm.prices == TokenPrices(1.0, 2.0) and llm.max_markets == 7
    assert isinstance(agents["coin"], RandomBettor) and agents["coin"].seed == 5
    assert isinstance(agents["always-0.5"], AlwaysHalf) and isinstance(agents["kelly-extremizer"], KellyBettor)
    standin.add(MODEL, json_reply(VALID))
    assert llm.decide(standard_view()).error == ""
    llm.close()  # type: ignore[union-attr]


def test_agent_from_config_needs_the_key():
    with pytest.raises(ConfigError, match="environment variable K is not set"):
        agent_from_config(AgentConfig(name="x", model="m", api_key_env="K"), {"K": ""})
    with pytest.raises(ConfigError):
        LLMAgent.from_config(AgentConfig(name="r", kind="random"), KEY)


# -- endpoints as they are: reasoning models, provider-reported cost, huge replies ----------------------------------


def test_reasoning_model_options_shape_the_request(standin, make_agent):
    standin.add(MODEL, json_reply(VALID))
    agent = make_agent(temperature=None, max_completion_tokens=16000, reasoning_effort="high",
                       extra_body={"provider": {"sort": "price"}, "transforms": []})
    assert agent.decide(standard_view()).error == ""
    (req,) = standin.requests_for(MODEL)
    assert "temperature" not in req.body and "max_tokens" not in req.body
    assert req.body["max_completion_tokens"] == 16000 and req.body["reasoning_effort"] == "high"
    assert req.body["provider"] == {"sort": "price"} and req.body["transforms"] == []


def test_temperature_is_sent_when_set_and_max_tokens_without_max_completion_tokens(standin, make_agent):
    standin.add(MODEL, json_reply(VALID))
    make_agent(temperature=0.7).decide(standard_view())
    (req,) = standin.requests_for(MODEL)
    assert req.body["temperature"] == 0.7 and req.body["max_tokens"] == 4096
    assert "max_completion_tokens" not in req.body and "reasoning_effort" not in req.body


def test_extra_headers_are_sent_but_never_replace_the_authorization_header(standin, make_agent):
    standin.add(MODEL, json_reply(VALID))
    agent = make_agent(extra_headers={"X-Title": "arena", "HTTP-Referer": "https://example.org",
                                      "authorization": "Bearer stolen", "AUTHORIZATION": "Bearer stolen2"})
    agent.decide(standard_view())
    (req,) = standin.requests_for(MODEL)
    assert req.headers["x-title"] == "arena" and req.headers["http-referer"] == "https://example.org"
    assert req.authorization == f"Bearer {KEY}"
    assert KEY not in json.dumps({k: v for k, v in req.headers.items() if k != "authorization"})


def test_the_config_options_reach_the_agent(standin):
    cfg = parse_config(f'[[agents]]\nname = "o3"\nmodel = "{MODEL}"\nbase_url = "{standin.base_url}"\n'
                       'max_completion_tokens = 9000\nreasoning_effort = "low"\nmax_reply_bytes = 2048\n'
                       'extra_headers = { "X-Title" = "arena" }\nextra_body = { seed = 3 }\n')
    agent = agent_from_config(cfg.agent("o3"), {"OPENROUTER_API_KEY": KEY})
    assert isinstance(agent, LLMAgent)
    standin.add(MODEL, json_reply(VALID))
    with agent:
        agent.decide(standard_view())
    (req,) = standin.requests_for(MODEL)
    assert req.body["max_completion_tokens"] == 9000 and req.body["reasoning_effort"] == "low"
    assert req.body["seed"] == 3 and "temperature" not in req.body and req.headers["x-title"] == "arena"
    assert agent.max_reply_bytes == 2048


def test_the_provider_reported_cost_wins_over_the_price_table_and_the_provider_is_recorded(standin, make_agent):
    standin.add(MODEL, json_reply(VALID, served_model="acme/model-1:free", provider="Fireworks", cost=0.01234,
                                  **tokens()))
    (call,) = make_agent().decide(standard_view()).calls
    assert call.cost_usd == pytest.approx(0.01234)  # not 1000 * 3 / 1e6 + 200 * 15 / 1e6
    assert call.served_model == "acme/model-1:free" and call.provider == "Fireworks"


def test_without_a_reported_cost_the_price_table_is_used_and_provider_is_none(standin, make_agent):
    standin.add(MODEL, json_reply(VALID, **tokens()))
    (call,) = make_agent().decide(standard_view()).calls
    assert call.cost_usd == pytest.approx(0.006) and call.provider is None


def test_a_failed_attempt_keeps_the_cost_the_provider_reported(standin, make_agent):
    body = json.dumps({"error": {"message": "upstream timed out", "code": 502}, "provider": "Acme",
                       "usage": {"prompt_tokens": 900, "completion_tokens": 0, "cost": 0.0009}})
    standin.add(MODEL, Reply(status=502, body=body), ok("not json at all", cost=0.002, **tokens(900, 10)),
                json_reply(VALID, cost=0.003, **tokens()))
    d = make_agent(max_retries=1).decide(standard_view())
    assert d.error == ""
    first, second, third = d.calls
    assert first.error.startswith("HTTP 502") and first.cost_usd == pytest.approx(0.0009)
    assert first.provider == "Acme" and first.prompt_tokens == 900
    assert second.error and second.cost_usd == pytest.approx(0.002)  # an unparseable reply was still billed
    assert third.cost_usd == pytest.approx(0.003)


@pytest.mark.parametrize("no_length", [False, True], ids=["content-length", "streamed"])
def test_a_reply_over_the_size_limit_is_a_recorded_failure_with_only_an_excerpt(standin, make_agent, no_length):
    standin.add(MODEL, huge(5_000_000, no_length=no_length))
    d = make_agent(max_reply_bytes=64 * 1024).decide(standard_view())
    assert "max_reply_bytes" in d.error and d.actions == ()
    (call,) = d.calls
    assert "larger than max_reply_bytes = 65536" in call.error
    assert 0 < len(call.raw_response) <= 4096 and call.raw_response.startswith("{")
    assert len(standin.requests_for(MODEL)) == 1  # not retried


def test_a_reply_under_the_limit_is_kept_whole(standin, make_agent):
    standin.add(MODEL, json_reply(VALID))
    (call,) = make_agent(max_reply_bytes=4096).decide(standard_view()).calls
    assert json.loads(call.raw_response) == VALID


def test_the_schema_sent_is_the_one_generated_from_the_reply_model(standin, make_agent):
    from arena.agents.parse import DecisionReply, _plain, _SchemaOfReply

    standin.add(MODEL, json_reply(VALID))
    make_agent().decide(standard_view())
    sent = standin.requests_for(MODEL)[0].body["response_format"]
    generated = DecisionReply.model_json_schema(schema_generator=_SchemaOfReply)
    assert sent == {"type": "json_schema", "json_schema": {"name": "arena_decision", "strict": False,
                                                           "schema": _plain(generated, generated["$defs"])}}
    assert sent["json_schema"]["schema"]["properties"]["forecasts"]["additionalProperties"] == {
        "type": "number", "minimum": 0, "maximum": 1}
