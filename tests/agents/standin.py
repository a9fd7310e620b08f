"""Scripted replies for the tests' stand-in endpoint: rate limits, refusals, tool calls, a LiteLLM proxy, slow and
runaway replies. The server itself, `Reply`, `json_reply` and `hold_responder` live in `arena.agents.standin`
(the demo runs its stand-in seats on it) and are re-exported here, so tests and benchmarks keep importing
everything from one place (benchmarks by path: ``sys.path.insert(0, "tests/agents"); from standin import
StandinServer``).

A LiteLLM proxy (`litellm_proxy(...)`): the body names the alias asked for, the response headers the upstream
deployment, its endpoint and the call's cost, and reasoning comes as the message's `reasoning_content`.

Tool calling (OpenAI form): a `Reply` with `tool_calls` asks for tools (`tool_call(name, args)` builds one);
`tool_responder(...)` is a scripted responder that first asks for a tool, then answers from the tool's result
(the `role: tool` messages the agent sent back, read with `tool_results(request)`).

    with StandinServer(default=hold_responder(), latency_s=0.05) as server:
        agent = LLMAgent("m", "m", server.base_url, "test-key")
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from arena.agents.standin import (ANY_MODEL, RecordedRequest, Reply, Responder, StandinServer, forecast_ids,
                                  hold_responder, json_reply, ok, server_error)


def rate_limited(retry_after: float | str | None = 1, **kw: Any) -> Reply:
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    body = json.dumps({"error": {"message": "Rate limit exceeded", "code": 429}})
    return Reply(status=429, headers=headers, body=body, **kw)


def response_format_refused(**kw: Any) -> Reply:
    """A 400 like a provider that does not support structured output."""
    body = json.dumps({"error": {"message": "Invalid parameter: 'response_format' of type 'json_schema' is not "
                                            "supported with this model.", "code": 400,
                                 "param": "response_format"}})
    return Reply(status=400, body=body, **kw)


def tool_call(name: str, arguments: Mapping[str, Any] | str, call_id: str = "call_1", **kw: Any) -> Reply:
    """A reply that asks for one tool call (content null, finish_reason "tool_calls")."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return Reply(content=None, finish_reason="tool_calls",
                 tool_calls=({"id": call_id, "type": "function", "function": {"name": name, "arguments": args}},),
                 **kw)


@dataclass(frozen=True)
class Deployment:
    """Where a LiteLLM proxy routes an alias: the deployment's model (`litellm_params.model`), its id, its upstream
    endpoint, and the cost LiteLLM computes for a call (None: "None", as LiteLLM sends an unknown cost)."""

    model: str = "openai/gpt-4o-2024-08-06"
    model_id: str = "8f2b6c1e0d"
    api_base: str = "https://api.openai.com/v1"
    cost: float | None = 0.00123
    version: str = "1.81.9"


def litellm_headers(alias: str, d: Deployment) -> dict[str, str]:
    """The response headers a LiteLLM proxy sends (its docs' "LiteLLM Specific Headers" and cost headers)."""
    return {"x-litellm-call-id": f"call-{alias}", "x-litellm-model-id": d.model_id,
            "x-litellm-model-name": d.model, "x-litellm-model-api-base": d.api_base, "x-litellm-model-group": alias,
            "x-litellm-version": d.version, "x-litellm-response-cost": str(d.cost),
            "x-litellm-attempted-retries": "0", "x-litellm-attempted-fallbacks": "0"}


def litellm_proxy(inner: Reply | Responder, deployment: Deployment | None = None, *, name_header: bool = True,
                  reasoning: str | None = None) -> Responder:
    """The stand-in behaving like a LiteLLM proxy in front of `deployment`: the body's `model` is the alias the
    client asked for (LiteLLM ≥ 1.81.7 rewrites it so), the upstream deployment is named only in the response
    headers (`name_header=False`: an older proxy that sends the deployment's id but not its name), and no
    `usage.cost` is in the body (the cost is the `x-litellm-response-cost` header). `reasoning` is passed on as
    the message's `reasoning_content`."""
    d = deployment or Deployment()

    def respond(request: RecordedRequest) -> Reply:
        reply = inner(request) if callable(inner) else inner
        headers = litellm_headers(request.model, d)
        if not name_header:
            headers.pop("x-litellm-model-name")
        return replace(reply, served_model=request.model, cost=None, provider=None,
                       headers={**reply.headers, **headers},
                       reasoning_content=reasoning if reasoning is not None else reply.reasoning_content)

    return respond


def slow(content: str, delay_s: float, **kw: Any) -> Reply:
    return Reply(content=content, delay_s=delay_s, **kw)


def huge(size_bytes: int, **kw: Any) -> Reply:
    """A 200 completion whose content alone is `size_bytes` long (a runaway model)."""
    return Reply(content="x" * size_bytes, **kw)


def tool_results(request: RecordedRequest) -> list[dict[str, Any]]:
    """The `role: tool` messages of the conversation, in order: tool_call_id and content (decoded JSON when it
    is JSON, else the text)."""
    out = []
    for m in request.messages:
        if m.get("role") == "tool":
            content = m.get("content", "")
            try:
                content = json.loads(content)
            except (TypeError, ValueError):
                pass
            out.append({"tool_call_id": m.get("tool_call_id"), "content": content})
    return out


def tool_responder(tool: str, arguments: Callable[[RecordedRequest], Mapping[str, Any]],
                   answer: Callable[[RecordedRequest, list[dict[str, Any]]], Reply]) -> Responder:
    """A scripted agent loop: while the conversation holds no tool result, ask for `tool` with
    `arguments(request)`; then answer with `answer(request, tool_results(request))`."""

    def respond(request: RecordedRequest) -> Reply:
        results = tool_results(request)
        if not results:
            return tool_call(tool, arguments(request))
        return answer(request, results)

    return respond


__all__ = ["ANY_MODEL", "Deployment", "RecordedRequest", "Reply", "StandinServer", "forecast_ids", "hold_responder",
           "huge", "json_reply", "litellm_headers", "litellm_proxy", "ok", "rate_limited", "response_format_refused",
           "server_error", "slow", "tool_call", "tool_responder", "tool_results"]
