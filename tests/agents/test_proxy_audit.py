"""The audit behind a proxy: through a LiteLLM proxy (the stand-in speaking as one) a call keeps the alias it was
served under, the upstream model and endpoint the proxy names in its headers, the provider, the cost the proxy
reports and the model's reasoning; the agent page shows, per decision, the model, provider, tokens, cost and
every tool call with its result."""

from __future__ import annotations

import json
import random

import pytest

from agent_views import standard_view
from sqlmodel import Session, select
from standin import Deployment, hold_responder, litellm_proxy, tool_responder
from test_tools import DECIDE_AT, SUNDAY, forecast_from_history, seed, tools_config

from arena.agents.llm import LLMAgent
from arena.config import parse_config
from arena.store.tables import AgentRow, DecisionRow, ModelCallRow
from arena.usecases.lifecycle import decision_round, start_current_cohort

KEY = "sk-test-proxy-0123456789"
ALIAS = "arena-smart"  # the proxy's model group: what the arena's config names
THINKING = "P(A) looks like 0.42 <b>given</b> the history"


def agent(standin) -> LLMAgent:  # type: ignore[no-untyped-def]
    return LLMAgent("proxied", ALIAS, standin.base_url, KEY, sleep=lambda s: None, rng=random.Random(1))


def test_a_call_through_litellm_keeps_upstream_model_provider_cost_and_reasoning(standin):
    deployment = Deployment(model="azure/gpt-4o-2024-08-06", api_base="https://acme.openai.azure.com/openai?key=x",
                            cost=0.00231)
    standin.default = litellm_proxy(hold_responder(0.5, prompt_tokens=900, completion_tokens=80), deployment,
                                    reasoning=THINKING)
    with agent(standin) as a:
        d = a.decide(standard_view())
    (call,) = d.calls
    assert d.error == "" and call.served_model == ALIAS  # the body names the alias …
    assert call.upstream_model == "azure/gpt-4o-2024-08-06"  # … the headers the deployment it went to
    assert call.upstream_base == "https://acme.openai.azure.com/openai"  # never a query string (it may hold a key)
    assert call.provider == "azure" and call.cost_usd == 0.00231  # the proxy's provider prefix and its cost
    assert (call.prompt_tokens, call.completion_tokens) == (900, 80)
    assert call.reasoning_content == THINKING


def test_an_older_proxy_names_the_deployment_by_id_and_an_unknown_cost_falls_back_to_prices(standin):
    from arena.config import TokenPrices

    standin.default = litellm_proxy(hold_responder(0.5, prompt_tokens=1000, completion_tokens=100),
                                    Deployment(model_id="dep-77", api_base="https://api.fireworks.ai/inference/v1",
                                               cost=None), name_header=False)
    with LLMAgent("p", ALIAS, standin.base_url, KEY, prices=TokenPrices(1.0, 2.0), sleep=lambda s: None) as a:
        (call,) = a.decide(standard_view()).calls
    assert call.upstream_model == "deployment dep-77" and call.provider == "api.fireworks.ai"
    assert call.cost_usd == pytest.approx(1000 * 1.0 / 1e6 + 100 * 2.0 / 1e6)  # "None" is no cost: the lineup's prices
    assert call.reasoning_content is None


def test_without_a_proxy_nothing_upstream_is_invented(standin):
    standin.default = hold_responder(0.5, provider="DeepInfra", cost=0.0005)
    with agent(standin) as a:
        (call,) = a.decide(standard_view()).calls
    assert call.upstream_model is None and call.upstream_base is None
    assert call.provider == "DeepInfra" and call.cost_usd == 0.0005  # OpenRouter's own fields still win


def test_the_agent_page_shows_a_proxied_decision_with_its_tool_calls(engine, standin):
    from arena.web.one_page import render_path

    seed(engine)
    asked = tool_responder("price_history", lambda req: {"market_id": "sim:a", "max_points": 10},
                           forecast_from_history)
    proxied = litellm_proxy(asked, Deployment(model="openai/gpt-4o-2024-08-06", cost=0.00123), reasoning=THINKING)
    standin.default = lambda req: proxied(req) if req.model == "vendor/tool-user" else hold_responder(0.5)(req)
    cfg = parse_config(tools_config(standin.base_url))
    name, _ = start_current_cohort(engine, SUNDAY, cfg)
    decision_round(engine, DECIDE_AT, cfg, {"ARENA_TEST_KEY": "sk-test-tools-0123"})
    with Session(engine) as s:
        aid = s.scalar(select(AgentRow.id).where(AgentRow.name == "tool-user"))
        calls = s.scalars(select(ModelCallRow).join(DecisionRow, DecisionRow.id == ModelCallRow.decision_id)
                          .where(DecisionRow.agent_id == aid).order_by(ModelCallRow.attempt)).all()
        round_key = s.get(DecisionRow, calls[0].decision_id).round_key
    assert [c.upstream_model for c in calls] == ["openai/gpt-4o-2024-08-06"] * 2  # stored on every call
    assert [c.reasoning_content for c in calls] == [THINKING] * 2 and {c.provider for c in calls} == {"openai"}
    assert [c.cost_micros for c in calls] == [1230, 1230]
    tokens = (sum(c.prompt_tokens for c in calls), sum(c.completion_tokens for c in calls))

    _, html = render_path(engine, f"agents/{aid}.html", DECIDE_AT.replace(hour=2))
    usage = html.split(f'id="usage-{round_key}">', 1)[1].split("</p>", 1)[0]
    assert "2 model calls" in usage and "<code>vendor/tool-user → openai/gpt-4o-2024-08-06</code>" in usage
    assert "provider openai" in usage and f"{tokens[0]:,} + {tokens[1]:,} tokens" in usage
    assert "cost $0.0025" in usage and "1 tool call" in usage  # 2 × $0.00123, to four places
    from markupsafe import escape

    (tool,) = calls[0].tool_calls
    assert f"price_history({escape(tool['arguments'])})" in html  # the call, escaped …
    assert str(escape(tool["result"])) in html and json.loads(tool["result"])["points"]  # … and its whole result
    assert "routed to https://api.openai.com/v1" in html
    assert "P(A) looks like 0.42 &lt;b&gt;given&lt;/b&gt; the history" in html and "<b>given" not in html
