"""A local stand-in for an OpenAI-compatible chat endpoint: answers POST /v1/chat/completions from a script.

Standard library only, so tests, benchmarks and demos can all use it (benchmarks import it by path:
``sys.path.insert(0, "tests/agents"); from standin import StandinServer``). It listens on 127.0.0.1 on a free
port in a background thread and never touches the network beyond that.

Replies are scripted per model name, served in order (``server.add("m", ok(...), rate_limited(2), ...)``); the
model "*" is a shared queue for any model. When a model's script runs out the `default` answers (a Reply, or a
responder function of the request), else a 500 saying the script ran out. `latency_s` delays every answer
(the benchmark's fixed latency L). Every request is recorded (headers included) for assertions, and
`max_in_flight` is the most completions it was ever answering at once (concurrency limits are checked on it).

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
import re
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANY_MODEL = "*"


@dataclass(frozen=True)
class Reply:
    """One scripted answer. `content` is the assistant message; `body` (raw text) overrides the whole body.

    Token counts default to an estimate (characters / 4) unless given; `usage=False` leaves usage out.
    `cost` adds OpenRouter's `usage.cost` (USD) and `provider` its top-level `provider` field.
    `delay_s` is added to the server's latency before answering. `no_length` sends the body without a
    Content-Length header (read until the connection closes), as a streaming proxy might.
    """

    content: str | None = ""
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: str | None = None
    delay_s: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    served_model: str | None = None  # default: the model the request asked for
    finish_reason: str = "stop"
    usage: bool = True
    cost: float | None = None
    provider: str | None = None
    no_length: bool = False
    tool_calls: tuple[Mapping[str, Any], ...] = ()  # OpenAI tool_calls of the assistant message
    reasoning_content: str | None = None  # the message's `reasoning_content` (as LiteLLM passes reasoning on)


def ok(content: str, **kw: Any) -> Reply:
    return Reply(content=content, **kw)


def json_reply(obj: Any, **kw: Any) -> Reply:
    return Reply(content=json.dumps(obj), **kw)


def rate_limited(retry_after: float | str | None = 1, **kw: Any) -> Reply:
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    body = json.dumps({"error": {"message": "Rate limit exceeded", "code": 429}})
    return Reply(status=429, headers=headers, body=body, **kw)


def server_error(status: int = 500, message: str = "Internal Server Error", **kw: Any) -> Reply:
    return Reply(status=status, body=json.dumps({"error": {"message": message, "code": status}}), **kw)


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


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: Mapping[str, str]  # lower-cased names
    body: Any  # decoded JSON, or None
    at: float  # time.monotonic() when it arrived

    @property
    def model(self) -> str:
        return str(self.body.get("model", "")) if isinstance(self.body, dict) else ""

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", [])) if isinstance(self.body, dict) else []

    @property
    def authorization(self) -> str:
        return self.headers.get("authorization", "")

    @property
    def tools(self) -> list[str]:
        """The names of the tools the request offers."""
        tools = self.body.get("tools", []) if isinstance(self.body, dict) else []
        return [t.get("function", {}).get("name", "") for t in tools if isinstance(t, dict)]


Responder = Callable[[RecordedRequest], Reply]

_FORECAST_IDS = re.compile(r"Forecast set ids \(JSON\): (\[.*?\])")


def forecast_ids(request: RecordedRequest) -> list[str]:
    """The forecast-set ids the decision prompt lists (from its "Forecast set ids (JSON): [...]" line)."""
    for message in request.messages:
        match = _FORECAST_IDS.search(str(message.get("content", "")))
        if match:
            return list(json.loads(match.group(1)))
    return []


def hold_responder(p: float = 0.5, **kw: Any) -> Responder:
    """Answers every request with a valid HOLD that forecasts `p` for each forecast-set id."""

    def respond(request: RecordedRequest) -> Reply:
        reply = {"actions": [], "forecasts": {mid: p for mid in forecast_ids(request)},
                 "reasoning": "stand-in: hold"}
        return json_reply(reply, **kw)

    return respond


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


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    standin: StandinServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes; do not wait for an ACK
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: str, headers: Mapping[str, str] | None = None,
              no_length: bool = False) -> None:
        data = body.encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            if no_length:
                self.send_header("Connection", "close")
                self.close_connection = True
            else:
                self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True  # the client gave up (a timeout test)

    def _record(self, body: Any) -> RecordedRequest:
        request = RecordedRequest(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body,
                                  time.monotonic())
        self.server.standin._record(request)
        return request

    def do_GET(self) -> None:  # noqa: N802
        self._record(None)
        if self.path.rstrip("/").endswith("/models"):
            models = [{"id": m, "object": "model"} for m in self.server.standin.models()]
            self._send(200, json.dumps({"object": "list", "data": models}))
        else:
            self._send(404, json.dumps({"error": {"message": f"no route {self.path}", "code": 404}}))

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = self._record(body)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, json.dumps({"error": {"message": f"no route {self.path}", "code": 404}}))
            return
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self._send(400, json.dumps({"error": {"message": "body must be JSON with messages", "code": 400}}))
            return
        standin = self.server.standin
        standin._enter()  # counted from the request's arrival until just before its answer leaves, so the
        try:  # count never exceeds the calls the clients still hold open (a limit check cannot over-count)
            reply = standin._next(request)
            standin._wait(standin.latency_s + reply.delay_s)
        finally:
            standin._leave()
        if reply.body is not None or reply.status != 200:
            self._send(reply.status, reply.body if reply.body is not None else "{}", reply.headers, reply.no_length)
            return
        self._send(200, json.dumps(standin._completion(request, reply)), reply.headers, reply.no_length)


class StandinServer:
    """The stand-in endpoint. `base_url` is what an agent's base_url should be ("http://127.0.0.1:PORT/v1")."""

    def __init__(self, script: Mapping[str, list[Reply]] | None = None, *,
                 default: Reply | Responder | None = None, latency_s: float = 0.0, host: str = "127.0.0.1",
                 port: int = 0) -> None:
        self.latency_s = latency_s
        self.default = default
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._scripts: dict[str, deque[Reply]] = defaultdict(deque)
        self._requests: list[RecordedRequest] = []
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._counter = 0
        self.in_flight = 0  # completions being answered right now
        self.max_in_flight = 0  # the most ever answered at once (endpoint concurrency limits are checked on it)
        for model, replies in (script or {}).items():
            self.add(model, *replies)

    # -- scripting ---------------------------------------------------------------------------------------------

    def add(self, model: str, *replies: Reply) -> StandinServer:
        """Queue `replies` for `model` (or for any model with "*")."""
        with self._lock:
            self._scripts[model].extend(replies)
        return self

    def remaining(self, model: str) -> int:
        with self._lock:
            return len(self._scripts.get(model, ()))

    def models(self) -> list[str]:
        with self._lock:
            return sorted(m for m in self._scripts if m != ANY_MODEL)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def requests_for(self, model: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.model == model]

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            for key in (request.model, ANY_MODEL):
                queue = self._scripts.get(key)
                if queue:
                    return queue.popleft()
        default = self.default
        if default is None:
            return server_error(500, f"stand-in: no scripted reply left for model {request.model!r}")
        return default(request) if callable(default) else default

    def _enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def _completion(self, request: RecordedRequest, reply: Reply) -> dict[str, Any]:
        with self._lock:
            self._counter += 1
            n = self._counter
        content = reply.content
        out: dict[str, Any] = {
            "id": f"standin-{n}",
            "object": "chat.completion",
            "created": 0,
            "model": reply.served_model if reply.served_model is not None else request.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": reply.finish_reason}],
        }
        if reply.tool_calls:
            out["choices"][0]["message"]["tool_calls"] = [dict(c) for c in reply.tool_calls]
        if reply.reasoning_content is not None:
            out["choices"][0]["message"]["reasoning_content"] = reply.reasoning_content
        if reply.usage:
            prompt = reply.prompt_tokens
            if prompt is None:
                prompt = len(json.dumps(request.messages)) // 4
            completion = reply.completion_tokens
            if completion is None:
                completion = len(content or "") // 4
            out["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                            "total_tokens": prompt + completion}
            if reply.cost is not None:
                out["usage"]["cost"] = reply.cost
        if reply.provider is not None:
            out["provider"] = reply.provider
        return out

    # -- running -----------------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the stand-in server is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}/v1"

    def start(self) -> StandinServer:
        if self._server is not None:
            return self
        self._stopping.clear()
        server = _Server((self._host, self._port), _Handler)
        server.standin = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01},
                                        name="standin-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._stopping.set()  # wakes handlers that are sleeping out a delay
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> StandinServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["ANY_MODEL", "Deployment", "RecordedRequest", "Reply", "StandinServer", "forecast_ids", "hold_responder",
           "huge", "json_reply", "litellm_headers", "litellm_proxy", "ok", "rate_limited", "response_format_refused",
           "server_error", "slow", "tool_call", "tool_responder", "tool_results"]
