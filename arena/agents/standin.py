"""A local stand-in for an OpenAI-compatible chat endpoint: answers POST /v1/chat/completions from a script.

Standard library only, so tests, benchmarks and the demo can all use it (the demo's stand-in seats,
`arena.agents.standin_models`, answer on it; the tests' scripted replies are in tests/agents/standin.py, which
re-exports this module). It listens on 127.0.0.1 on a free port in a background thread and never touches the
network beyond that.

Replies are scripted per model name, served in order (``server.add("m", ok(...), ...)``); the model "*" is a
shared queue for any model. When a model's script runs out the `default` answers (a Reply, or a responder
function of the request), else a 500 saying the script ran out. `latency_s` delays every answer (the benchmark's
fixed latency L). Every request is recorded (headers included) for assertions, and `max_in_flight` is the most
completions it was ever answering at once (concurrency limits are checked on it).

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
from dataclasses import dataclass, field
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
    completion_id: str | None = None  # the completion's "id" (default: "standin-N", N counting the answers)


def ok(content: str, **kw: Any) -> Reply:
    return Reply(content=content, **kw)


def json_reply(obj: Any, **kw: Any) -> Reply:
    return Reply(content=json.dumps(obj), **kw)


def server_error(status: int = 500, message: str = "Internal Server Error", **kw: Any) -> Reply:
    return Reply(status=status, body=json.dumps({"error": {"message": message, "code": status}}), **kw)


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
            "id": reply.completion_id if reply.completion_id is not None else f"standin-{n}",
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


__all__ = ["ANY_MODEL", "RecordedRequest", "Reply", "Responder", "StandinServer", "forecast_ids", "hold_responder",
           "json_reply", "ok", "server_error"]
