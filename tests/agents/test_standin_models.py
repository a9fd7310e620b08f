"""The demo's stand-in models: they read the arena's own prompt, answer a decision the parser accepts, follow their
rules, and report a cost priced by their tokens — through the real LLM agent over HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import math

from agent_views import binary, standard_view
from standin import RecordedRequest

from arena.agents.parse import ParsedReply, parse_reply
from arena.agents.prompts import render_prompt
from arena.agents.standin_models import (STANDIN_MODELS, STANDIN_RECORDED_URL, StandinModel, decision_reply,
                                         forecast, prompt_facts, standin_agents, standin_responder, standin_server)
from arena.agents.view import AgentView


def _request(view: AgentView, model: str = "standin/cheap") -> RecordedRequest:
    return RecordedRequest("POST", "/v1/chat/completions", {}, {"model": model,
                                                                "messages": render_prompt(view).as_list()}, 0.0)


def _view() -> AgentView:
    from dataclasses import replace

    view = standard_view()
    return replace(view, markets=(*view.markets, binary("pm:far", "Far from 0.5?", "0.90", volume_24h=5.0)),
                   forecast_set=(*view.forecast_set, "pm:far"))


def test_the_prompt_s_prices_ids_cash_and_min_bet_are_read_back():
    view = _view()
    facts = prompt_facts(_request(view))
    binaries = {mv.market.id: float(mv.quote.yes_price().to_decimal()) for mv in view.markets
                if mv.market.kind.value == "binary"}
    assert facts.prices == binaries and "pm:far" in facts.prices and facts.prices["pm:far"] == 0.9
    assert facts.cash == float(view.cash.to_decimal()) and facts.min_bet == float(view.min_bet.to_decimal())
    assert facts.now.startswith(f"{view.as_of:%Y-%m-%d %H:%M}")


def test_each_rule_answers_a_decision_the_parser_accepts():
    view = _view()
    for model in STANDIN_MODELS:
        reply = decision_reply(model, 7, _request(view, model.model))
        parsed = parse_reply(json.dumps(reply), view)
        assert isinstance(parsed, ParsedReply), (model.name, parsed)
        assert set(reply["forecasts"]) == set(view.forecast_set)
        assert "not a language model" in reply["reasoning"]
    cheap = decision_reply(STANDIN_MODELS[0], 7, _request(view))
    now = prompt_facts(_request(view)).now
    assert cheap["forecasts"]["pm:far"] == forecast(STANDIN_MODELS[0], 7, now, "pm:far", 0.9) < 0.9
    bet = cheap["actions"][0]  # the largest edge: 0.9 shaded toward 0.5 is the furthest from its price
    assert bet["market_id"] == "pm:far" and bet["side"] == "NO" and bet["amount"] == float(view.min_bet.to_decimal())


def test_the_rules_shade_toward_one_half_or_add_seeded_noise():
    shade = StandinModel("s", "s/s", shrink=0.5, noise_sd=0.0, input_per_million=1, output_per_million=1)
    p = forecast(shade, 1, "t", "m", 0.8)
    assert abs(p - 1 / (1 + math.exp(-0.5 * math.log(4)))) < 1e-3 and 0.5 < p < 0.8
    assert forecast(shade, 1, "t", "m", 0.5) == 0.5
    noisy = StandinModel("n", "n/n", shrink=1.0, noise_sd=0.5, input_per_million=1, output_per_million=1)
    draws = {forecast(noisy, 1, "t", f"m{i}", 0.6) for i in range(20)}
    assert len(draws) > 10  # noise differs per question
    assert forecast(noisy, 1, "t", "m1", 0.6) == forecast(noisy, 1, "t", "m1", 0.6)  # and is seeded
    assert forecast(noisy, 2, "t", "m1", 0.6) != forecast(noisy, 1, "t", "m1", 0.6)


def test_the_reply_reports_tokens_and_a_cost_at_the_model_s_prices():
    view = _view()
    respond = standin_responder(seed=7)
    dear = next(m for m in STANDIN_MODELS if m.name == "standin-dear")
    reply = respond(_request(view, dear.model))
    assert reply.status == 200 and reply.prompt_tokens and reply.completion_tokens
    assert reply.cost == dear.cost_usd(reply.prompt_tokens, reply.completion_tokens) > 0
    assert reply.completion_id == respond(_request(view, dear.model)).completion_id  # the same for the same ask
    assert respond(_request(view, "vendor/other")).status == 404


def test_the_llm_agent_asks_the_stand_in_over_http_and_records_the_cost():
    view = _view()
    with standin_server(7) as server:
        agents = standin_agents(server.base_url)
        try:
            decisions = {a.name: a.decide(view) for a in agents}
        finally:
            for a in agents:
                a.close()
        assert {r.model for r in server.requests} == {m.model for m in STANDIN_MODELS}
    costs = {}
    for name, d in decisions.items():
        assert not d.error and len(d.calls) == 1 and set(d.forecasts) == set(view.forecast_set)
        call = d.calls[0]
        assert call.provider == "standin" and call.cost_usd and call.cost_usd > 0 and call.prompt_tokens
        costs[name] = call.cost_usd
    assert costs["standin-cheap"] < costs["standin-mid"] < costs["standin-dear"]
    # the lineup freezes a base URL without the run's port
    assert all(m.config().to_json()["base_url"] == STANDIN_RECORDED_URL for m in STANDIN_MODELS)
