"""The LLM agent: asks an OpenAI-compatible chat endpoint for a decision, repairs invalid replies, logs every call.

Owns the HTTP exchange with the model (retries, backoff, timeouts, the response_format fallback) and the
repair loop; the prompt comes from `arena.agents.prompts`, the reading of replies from `arena.agents.parse`.
It must not import the store or the services: a decision's transcript travels back in `Decision.calls`.

Every HTTP exchange becomes a `ModelCall`, numbered 1, 2, 3, … in order — the first attempt, every transport
retry (429, 5xx, network error, with its error) and every repair — so nothing a decision cost is lost. The API
key is held in a `_Secret`, sent only in the Authorization header, and scrubbed from anything recorded. A call's
cost is the one the provider reports (OpenRouter's `usage.cost`) when it does, else the lineup's token prices;
a reply larger than `max_reply_bytes` is read no further and recorded as a failure with an excerpt.

Tools (track "agent"): with a `ToolBox`, each request offers its tools; a reply that asks for tool calls is
answered (`role: tool` messages, results from `arena.agents.tools`) and the model asked again, for at most
`max_tool_rounds` rounds per decision — then the tools are withdrawn (`tool_choice: "none"`) and the JSON decision
is read as without tools. Each tool-asking reply is a `ModelCall` carrying its tool calls and their results.
"""

from __future__ import annotations

import email.utils
import json
import random
import time
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

import httpx

from arena.agents.redact import scrub, scrub_decision, scrub_value
from arena.agents.parse import ParsedReply, parse_reply, response_format
from arena.agents.prompts import (DEFAULT_DESCRIPTION_CHARS, DEFAULT_MAX_MARKETS, PROMPT_VERSION, render_prompt,
                                  repair_message)
from arena.agents.corpus import Corpus
from arena.agents.tools import CORPUS_SEARCH, MAX_CALLS_PER_ROUND, WEB_SEARCH, ToolBox, ToolCallRecord, WebSearcher
from arena.agents.view import Agent, AgentView, CallJournal
from arena.config import (DEFAULT_MAX_REPLY_BYTES, RESERVED_HEADERS, RESPONSE_FORMATS, AgentConfig, ArenaConfig,
                          TokenPrices)
from arena.domain.decision import Decision, ModelCall
from arena.errors import ConfigError

RAW_LIMIT = 20_000  # characters of a non-200 response body kept in a ModelCall (the whole 200 reply is kept)
EXCERPT_BYTES = 4_096  # bytes kept of a reply over the size limit
RETRYABLE_STATUS = frozenset({429})  # and every 5xx; other 4xx are the request's fault and are not retried


class _Secret:
    """A string that never shows itself: repr/str print a placeholder; `reveal()` gives the value."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "_Secret('***')"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("a secret cannot be pickled")


@dataclass(frozen=True)
class _Usage:
    """What a reply reports about the call: tokens, cost (USD, None when not reported), the model it names, the
    provider, and — behind a proxy — the upstream model and endpoint the proxy routed to.

    A LiteLLM proxy answers with its alias in the body's `model` (recent versions) and says where the call went
    in response headers: `x-litellm-model-name` (the deployment's model, e.g. "openai/gpt-4o-2024-08-06"),
    `x-litellm-model-id` (the deployment's id, when the name is not sent), `x-litellm-model-api-base` (the
    upstream endpoint, without its query) and `x-litellm-response-cost` (USD). OpenRouter names its provider
    in the body's `provider` and its cost in `usage.cost`."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    served_model: str = ""
    provider: str | None = None
    upstream_model: str | None = None
    upstream_base: str | None = None

    @classmethod
    def of(cls, body: object, headers: Mapping[str, str] | None = None) -> _Usage:
        proxy = _proxy_report(headers or {})
        if not isinstance(body, dict):
            return cls(cost_usd=proxy["cost"], provider=proxy["provider"], upstream_model=proxy["model"],
                       upstream_base=proxy["base"])
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        cost = _cost(usage.get("cost"))
        provider = body.get("provider")
        return cls(
            prompt_tokens=_int_or_none(usage.get("prompt_tokens")),
            completion_tokens=_int_or_none(usage.get("completion_tokens")),
            cost_usd=cost if cost is not None else proxy["cost"],
            served_model=str(body.get("model") or "")[:200],
            provider=provider[:100] if isinstance(provider, str) and provider else proxy["provider"],
            upstream_model=proxy["model"],
            upstream_base=proxy["base"],
        )

    @classmethod
    def of_text(cls, text: str, headers: Mapping[str, str] | None = None) -> _Usage:
        try:
            return cls.of(json.loads(text), headers)
        except (ValueError, RecursionError):
            return cls.of(None, headers)


def _cost(value: Any) -> float | None:
    """A reported USD cost: a finite non-negative number (or its text), else None."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < float("inf"):
        return float(value)
    return None


def _proxy_report(headers: Mapping[str, str]) -> dict[str, Any]:
    """What a LiteLLM proxy's response headers say about the upstream call (None where they say nothing)."""
    get = lambda name: (headers.get(name) or "").strip() or None  # noqa: E731
    name, model_id = get("x-litellm-model-name"), get("x-litellm-model-id")
    base = get("x-litellm-model-api-base")
    base = base.split("?")[0][:300] if base and base != "None" else None  # never a query (it may hold a key)
    model = name if name and name != "None" else (f"deployment {model_id}" if model_id and model_id != "None"
                                                  else None)
    provider = None
    if name and "/" in name:
        provider = name.split("/", 1)[0]  # LiteLLM's provider prefix, e.g. "azure", "openrouter"
    elif base:
        provider = httpx.URL(base).host or None
    return {"model": model[:200] if model else None, "base": base, "provider": provider[:100] if provider else None,
            "cost": _cost(get("x-litellm-response-cost"))}


@dataclass(frozen=True)
class _ToolRequest:
    """One tool call a reply asks for: its id, the function name and the arguments (JSON text)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class _Reply:
    """One HTTP exchange that produced a completion."""

    content: str
    usage: _Usage
    finish_reason: str
    latency_s: float
    tool_calls: tuple[_ToolRequest, ...] = ()
    reasoning: str | None = None  # the reasoning the model returned beside its answer, when it returned any


@dataclass(frozen=True)
class _Failure:
    """The model could not be reached (after retries) or refused the request."""

    error: str


class LLMAgent:
    """An Agent backed by a chat model at `base_url` (POST {base_url}/chat/completions).

    `api_key` is passed in by the caller (read from the environment variable the lineup names); it is never
    stored in a field that prints, never logged and never recorded. `temperature` in [0, 2] (None: not sent);
    `max_tokens` completion tokens per call, or `max_completion_tokens` sent instead when given;
    `reasoning_effort` sent when given; `extra_headers` / `extra_body` added to every request (Authorization is
    always the agent's own); `max_reply_bytes` the largest reply read; `prices` in USD per million tokens;
    `timeout_s` seconds per HTTP request; `max_repairs` corrected replies asked for after an invalid one;
    `max_retries` transport retries per call; `toolbox` the tools it may call (None: the "model" track) in
    at most `max_tool_rounds` rounds per decision
    (exponential backoff from `backoff_s`, capped at `max_backoff_s`, with jitter; a Retry-After header is
    honoured up to `max_retry_after_s`). `sleep`, `clock` (monotonic seconds) and `rng` are injected for tests.
    `prompt_version` is the version this seat is sent (None: its cohort's, `AgentView.prompt_version`).
    """

    version = PROMPT_VERSION

    def __init__(self, name: str, model: str, base_url: str, api_key: str, *, temperature: float | None = None,
                 max_tokens: int | None = 4096, max_completion_tokens: int | None = None,
                 reasoning_effort: str | None = None, extra_headers: Mapping[str, str] | None = None,
                 extra_body: Mapping[str, Any] | None = None, max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
                 prices: TokenPrices | None = None, max_repairs: int = 2,
                 response_format: str = "json_schema", timeout_s: float = 120.0, max_retries: int = 4,
                 backoff_s: float = 1.0, max_backoff_s: float = 60.0, max_retry_after_s: float = 300.0,
                 max_markets: int = DEFAULT_MAX_MARKETS, description_chars: int = DEFAULT_DESCRIPTION_CHARS,
                 toolbox: ToolBox | None = None, max_tool_rounds: int = 3, client: httpx.Client | None = None, transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic,
                 rng: random.Random | None = None, prompt_version: str | None = None) -> None:
        if response_format not in RESPONSE_FORMATS:
            raise ValueError(f"response_format must be one of {RESPONSE_FORMATS}, not {response_format!r}")
        self.prompt_version = prompt_version  # None: the cohort's (`AgentView.prompt_version`)
        if max_repairs < 0 or max_retries < 0 or timeout_s <= 0 or max_tool_rounds < 0:
            raise ValueError("max_repairs, max_retries and max_tool_rounds must be >= 0 and timeout_s > 0")
        self.name = name
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._key = _Secret(api_key)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_completion_tokens = max_completion_tokens
        self.reasoning_effort = reasoning_effort
        # Whatever the caller passes, the key travels only in the Authorization header the agent sets itself.
        self.extra_headers = {k: v for k, v in (extra_headers or {}).items() if k.lower() not in RESERVED_HEADERS}
        self.extra_body = dict(extra_body or {})
        self.max_reply_bytes = max_reply_bytes
        self.prices = prices or TokenPrices()
        self.max_repairs = max_repairs
        self.response_format = response_format
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.max_retry_after_s = max_retry_after_s
        self.max_markets = max_markets
        self.description_chars = description_chars
        self.toolbox = toolbox if toolbox is not None and toolbox.names else None
        self.max_tool_rounds = max_tool_rounds
        self._client = client
        self._owns_client = client is None
        self._transport = transport
        self._sleep = sleep
        self._clock = clock
        self._rng = rng or random.Random()
        # Set once the endpoint has refused `response_format` with a 400: later calls are sent without it.
        self.response_format_refused = False

    @classmethod
    def from_config(cls, entry: AgentConfig, api_key: str, *, web_search: WebSearcher | None = None,
                    wall_clock: Callable[[], Any] | None = None,
                    corpora: MutableMapping[str, Corpus] | None = None, **kw: Any) -> LLMAgent:
        """An agent for an [[agents]] entry of kind "llm"; `kw` may add client/transport/sleep/clock/rng/prompt
        options. `web_search` is given only for live rounds (see `agent_from_config`); `wall_clock` (UTC now)
        is the web-search guard's clock, for tests. A seat with `corpus_search` reads its corpus file here
        (`CorpusError` when it is missing or has a bad line), or takes it from `corpora` (path → corpus), where the
        seats built for one round or one worker share each file's corpus (it is added there once read)."""
        if not entry.is_llm:
            raise ConfigError(f"agent {entry.name!r} is kind {entry.kind!r}, not an LLM", key="agents.kind")
        if entry.tools:
            box_kw: dict[str, Any] = {"wall_clock": wall_clock} if wall_clock is not None else {}
            if CORPUS_SEARCH in entry.tools:  # read whole now: a bad corpus fails the seat before it decides
                corpus = corpora.get(entry.corpus) if corpora is not None else None
                if corpus is None:
                    corpus = Corpus.load(entry.corpus)
                    if corpora is not None:
                        corpora[entry.corpus] = corpus
                box_kw["corpus"] = corpus
            kw["toolbox"] = ToolBox(entry.tools, result_chars=entry.tool_result_chars, web_search=web_search,
                                    **box_kw)
            kw["max_tool_rounds"] = entry.max_tool_rounds
        return cls(entry.name, entry.model, entry.base_url, api_key, temperature=entry.temperature,
                   max_tokens=entry.max_tokens, max_completion_tokens=entry.max_completion_tokens,
                   reasoning_effort=entry.reasoning_effort, extra_headers=entry.extra_headers,
                   extra_body=entry.extra_body, max_reply_bytes=entry.max_reply_bytes, prices=entry.prices,
                   max_repairs=entry.max_repairs,
                   response_format=entry.response_format, timeout_s=entry.timeout_s,
                   max_retries=entry.max_retries, prompt_version=entry.prompt_version, **kw)

    def __repr__(self) -> str:
        return f"LLMAgent(name={self.name!r}, model={self.model!r}, base_url={self.base_url!r})"

    # -- the HTTP client ---------------------------------------------------------------------------------------

    @property
    def client(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(transport=self._transport, timeout=self.timeout_s)
        return self._client

    def close(self) -> None:
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> LLMAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- deciding ----------------------------------------------------------------------------------------------

    def decide(self, view: AgentView) -> Decision:
        """Ask the model; repair invalid replies up to `max_repairs` times. Always returns a Decision: a HOLD
        with `error` set when no usable reply came, with every call attached."""
        prompt = render_prompt(view, self.max_markets, self.description_chars, version=self.prompt_version)
        messages: list[dict[str, Any]] = prompt.as_list()
        calls: list[ModelCall] = []
        last_errors: tuple[str, ...] = ()
        tools = self.toolbox.schemas(view) if self.toolbox is not None else []
        # A tool-using seat keeps its rounds even when nothing is offered (web search alone, in a replay): a
        # model that calls a tool anyway is answered with the refusal, which is then on record.
        rounds_left = self.max_tool_rounds if self.toolbox is not None else 0
        if tools:
            names = ", ".join(t["function"]["name"] for t in tools)
            messages.append({"role": "user", "content": (
                f"You may call these tools before you answer: {names} (at most {rounds_left} rounds of tool "
                f"calls). They read the arena's own records as of the decision time. Then give the JSON decision.")})
        replies = 0
        while replies < self.max_repairs + 1:
            outcome = self._complete(messages, calls, prompt.version, tools, "auto" if rounds_left > 0 else "none",
                                     journal=view.journal)
            if isinstance(outcome, _Failure):
                return Decision(calls=tuple(calls), error=self._scrub(outcome.error), failed=True)
            if outcome.tool_calls and rounds_left > 0:
                rounds_left -= 1
                records = self._run_tools(view, outcome.tool_calls)
                calls.append(self._call(len(calls) + 1, messages, outcome, None, "", version=prompt.version,
                                        tool_calls=records))
                messages = messages + [_assistant_tool_message(outcome), *(
                    {"role": "tool", "tool_call_id": r.id, "content": r.result} for r in records)]
                continue
            replies += 1
            result = parse_reply(outcome.content, view)
            errors: tuple[str, ...] = ()
            if not isinstance(result, ParsedReply):
                errors = result.errors
                if outcome.tool_calls:
                    errors = errors + ("No more tool calls are allowed; answer with the JSON decision now.",)
                if outcome.finish_reason == "length":
                    limit = self.max_completion_tokens or self.max_tokens
                    errors = errors + (f"The reply was cut off at the token limit ({limit}); keep the "
                                       f"reasoning and rationales short.",)
            if isinstance(result, ParsedReply):
                note = ("accepted with notes: " + " ".join(result.notes)) if result.notes else ""
            else:
                note = " ".join(errors)
            calls.append(self._call(len(calls) + 1, messages, outcome, result.data, note, version=prompt.version))
            if isinstance(result, ParsedReply):  # what the model wrote is stored and shown: scrubbed
                return scrub_decision(result.to_decision(calls=tuple(calls)), self._key.reveal())
            last_errors = errors
            # The reply goes back scrubbed too, so what is recorded is exactly what is sent.
            messages = messages + [{"role": "assistant", "content": self._scrub(outcome.content)},
                                   {"role": "user", "content": repair_message(errors, version=prompt.version)}]
        replies = self.max_repairs + 1
        reason = (f"no usable reply after {replies} attempt{'s' if replies > 1 else ''} "
                  f"({self.max_repairs} repair{'s' if self.max_repairs != 1 else ''}); last problems: "
                  + " ".join(last_errors))
        return Decision(calls=tuple(calls), error=self._scrub(reason))

    def _run_tools(self, view: AgentView, requests: tuple[_ToolRequest, ...]) -> tuple[ToolCallRecord, ...]:
        """Answer every tool call of one reply (each needs a result); beyond MAX_CALLS_PER_ROUND, an error."""
        assert self.toolbox is not None
        out = []
        for i, r in enumerate(requests):
            if i < MAX_CALLS_PER_ROUND:
                out.append(self.toolbox.run(view, r.id, r.name, r.arguments))
            else:
                out.append(self.toolbox.refuse(r.id, r.name, r.arguments,
                                               f"at most {MAX_CALLS_PER_ROUND} tool calls are answered per reply"))
        return tuple(out)

    def _call(self, attempt: int, messages: list[dict[str, Any]], reply: _Reply | None,
              parsed: Mapping[str, Any] | None, error: str, raw: str = "", latency: float | None = None,
              usage: _Usage | None = None, version: str = PROMPT_VERSION,
              tool_calls: tuple[ToolCallRecord, ...] = ()) -> ModelCall:
        """One recorded exchange. `usage` is what a failed exchange's body reported (a provider may bill it)."""
        u = reply.usage if reply else (usage or _Usage())
        prompt_tokens, completion_tokens = u.prompt_tokens, u.completion_tokens
        cost = u.cost_usd if u.cost_usd is not None else self.prices.cost(prompt_tokens, completion_tokens)
        return ModelCall(
            attempt=attempt,
            prompt=self._scrub(json.dumps(messages, ensure_ascii=False)),
            raw_response=self._scrub(reply.content if reply else raw),
            parsed=scrub_value(dict(parsed), self._key.reveal()) if parsed is not None else None,
            error=self._scrub(error),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost_usd=cost,
            latency_s=reply.latency_s if reply else latency,
            served_model=u.served_model,
            prompt_version=version,
            provider=u.provider,
            tool_calls=tuple(self._scrub_record(t) for t in tool_calls),
            upstream_model=self._scrub(u.upstream_model) if u.upstream_model else None,
            upstream_base=self._scrub(u.upstream_base) if u.upstream_base else None,
            reasoning_content=self._scrub(reply.reasoning) if reply is not None and reply.reasoning else None,
        )

    def _scrub_record(self, record: ToolCallRecord) -> dict[str, Any]:
        return scrub_value(record.to_json(), self._key.reveal())

    def _scrub(self, text: str) -> str:
        return scrub(text, self._key.reveal())

    def _body(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
              tool_choice: str = "auto") -> dict[str, Any]:
        body: dict[str, Any] = {**self.extra_body, "model": self.model, "messages": messages}
        if tools:
            body["tools"] = tools
            body["tool_choice"] = tool_choice
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_completion_tokens is not None:
            body["max_completion_tokens"] = self.max_completion_tokens
        elif self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.reasoning_effort is not None:
            body["reasoning_effort"] = self.reasoning_effort
        fmt = None if self.response_format_refused else response_format(self.response_format)
        if fmt is not None:
            body["response_format"] = fmt
        return body

    def _complete(self, messages: list[dict[str, Any]], calls: list[ModelCall], version: str = PROMPT_VERSION,
                  tools: list[dict[str, Any]] | None = None, tool_choice: str = "auto", *,
                  journal: CallJournal | None = None) -> _Reply | _Failure:
        """One completion, retrying transport failures; each failed exchange is appended to `calls` (made with
        prompt `version`). `tools` are offered with `tool_choice`. Each exchange is written to `journal` before
        its request is sent."""
        retries = 0
        while True:
            sent_format = "response_format" in (body := self._body(messages, tools, tool_choice))
            if journal is not None:
                journal.started(len(calls) + 1, self._scrub(json.dumps(messages, ensure_ascii=False)), version)
            started = self._clock()
            try:
                response, text, oversize = self._post(body)
            except httpx.TransportError as exc:
                latency = self._clock() - started
                what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                delay = self._backoff(retries) if retries < self.max_retries else None
                calls.append(self._call(len(calls) + 1, messages, None, None,
                                        self._retry_note(what, delay), latency=latency, version=version))
                if delay is None:
                    return _Failure(f"model endpoint unreachable after {retries + 1} tries: {what}")
                self._sleep(delay)
                retries += 1
                continue
            latency = self._clock() - started
            status = response.status_code
            if oversize:
                # Not retried: the same request would most likely bring the same flood back.
                problem = (f"HTTP {status}: the reply is larger than max_reply_bytes = {self.max_reply_bytes}; "
                           f"read no further, its first {EXCERPT_BYTES} bytes are kept")
                calls.append(self._call(len(calls) + 1, messages, None, None, problem, raw=text, latency=latency,
                                        version=version))
                return _Failure(f"model endpoint failed: {problem}")
            if status == 200:
                reply = self._read_completion(text, latency, response.headers)
                if isinstance(reply, _Reply):
                    return reply
                problem, retryable = reply
            else:
                problem = f"HTTP {status} {response.reason_phrase}".rstrip()
                detail = _error_detail(text)
                if detail:
                    problem += f": {detail}"
                retryable = status in RETRYABLE_STATUS or status >= 500
                if status == 400 and sent_format and _mentions_response_format(text):
                    self.response_format_refused = True
                    calls.append(self._call(len(calls) + 1, messages, None, None,
                                            problem + " — retrying once without response_format",
                                            raw=text[:RAW_LIMIT], latency=latency, usage=_Usage.of_text(text, response.headers),
                                            version=version))
                    continue
            usage = _Usage.of_text(text, response.headers)
            if not retryable or retries >= self.max_retries:
                calls.append(self._call(len(calls) + 1, messages, None, None, problem, raw=text[:RAW_LIMIT],
                                        latency=latency, usage=usage, version=version))
                tries = f" after {retries + 1} tries" if retryable else ""
                return _Failure(f"model endpoint failed{tries}: {problem}")
            delay, honoured = self._delay(response, retries)
            if delay is None:
                calls.append(self._call(len(calls) + 1, messages, None, None, problem, raw=text[:RAW_LIMIT],
                                        latency=latency, usage=usage, version=version))
                return _Failure(f"model endpoint failed: {problem}; it asked to wait longer than "
                                f"{self.max_retry_after_s:g} s")
            calls.append(self._call(len(calls) + 1, messages, None, None,
                                    self._retry_note(problem, delay, honoured), raw=text[:RAW_LIMIT],
                                    latency=latency, usage=usage, version=version))
            self._sleep(delay)
            retries += 1

    def _post(self, body: dict[str, Any]) -> tuple[httpx.Response, str, bool]:
        """POST the request and read the reply up to `max_reply_bytes`: (response, text, oversize). An oversize
        reply's text is its first EXCERPT_BYTES bytes; the rest is never read into memory."""
        headers = {**self.extra_headers, "Authorization": f"Bearer {self._key.reveal()}",
                   "Accept": "application/json"}
        with self.client.stream("POST", f"{self.base_url}/chat/completions", json=body, timeout=self.timeout_s,
                                headers=headers) as response:
            declared = response.headers.get("content-length", "")
            oversize = declared.isdigit() and int(declared) > self.max_reply_bytes
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if oversize or size > self.max_reply_bytes:
                    oversize = True
                    break
        data = b"".join(chunks)
        encoding = response.encoding or "utf-8"
        if oversize:
            return response, data[:EXCERPT_BYTES].decode(encoding, errors="replace"), True
        return response, data.decode(encoding, errors="replace"), False

    @staticmethod
    def _retry_note(problem: str, delay: float | None, honoured: bool = False) -> str:
        if delay is None:
            return problem
        return f"{problem} — retrying in {delay:.2f} s{' (Retry-After)' if honoured else ''}"

    def _backoff(self, retries: int) -> float:
        """Exponential backoff with "equal jitter": half the step fixed, half random."""
        step = min(self.max_backoff_s, self.backoff_s * (2 ** retries))
        return step / 2 + self._rng.uniform(0, step / 2)

    def _delay(self, response: httpx.Response, retries: int) -> tuple[float | None, bool]:
        """Seconds to wait before retrying `response` (Retry-After when given), whether Retry-After set it;
        None when the server asks for longer than `max_retry_after_s`."""
        after = _retry_after(response)
        if after is None:
            return self._backoff(retries), False
        if after > self.max_retry_after_s:
            return None, True
        return after, True

    def _read_completion(self, text: str, latency: float,
                         headers: Mapping[str, str] | None = None) -> _Reply | tuple[str, bool]:
        """The completion in a 200 body, or (problem, retryable). `headers`: the response's (a proxy's report)."""
        try:
            body = json.loads(text)
        except (ValueError, RecursionError):
            return "the endpoint answered 200 with a body that is not JSON", True
        if not isinstance(body, dict):
            return "the endpoint answered 200 with JSON that is not an object", True
        if body.get("error") and not body.get("choices"):
            err = body["error"]
            code = err.get("code") if isinstance(err, dict) else None
            message = err.get("message") if isinstance(err, dict) else err
            retryable = isinstance(code, int) and (code in RETRYABLE_STATUS or code >= 500)
            return f"the endpoint answered with an error ({code}): {message}", retryable
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return "the endpoint answered without choices", True
        message = choices[0].get("message") or {}
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):  # some providers send content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        return _Reply(
            content=content if isinstance(content, str) else "",
            usage=_Usage.of(body, headers),
            finish_reason=str(choices[0].get("finish_reason") or ""),
            latency_s=latency,
            tool_calls=_tool_requests(message.get("tool_calls") if isinstance(message, dict) else None),
            reasoning=_reasoning(message),
        )


def _reasoning(message: Any) -> str | None:
    """The reasoning a reply message carries beside its content: `reasoning_content` (LiteLLM, DeepSeek, vLLM)
    or `reasoning` (OpenRouter); None when there is none."""
    if not isinstance(message, dict):
        return None
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, list):  # reasoning given in parts
            value = "".join(p.get("text", "") for p in value if isinstance(p, dict))
        if isinstance(value, str) and value.strip():
            return value
    return None


def _tool_requests(raw: Any) -> tuple[_ToolRequest, ...]:
    """The tool calls of a reply message (OpenAI form: id, type "function", function {name, arguments}).
    Arguments sent as an object are re-encoded as JSON text; a call without an id gets one."""
    if not isinstance(raw, list):
        return ()
    out = []
    for i, call in enumerate(raw):
        if not isinstance(call, dict):
            continue
        fn = call.get("function") if isinstance(call.get("function"), dict) else {}
        args = fn.get("arguments", "")
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        call_id = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else f"call_{i}"
        out.append(_ToolRequest(call_id, str(fn.get("name") or "")[:100], args))
    return tuple(out)


def _assistant_tool_message(reply: _Reply) -> dict[str, Any]:
    """The assistant turn that asked for tools, as it goes back into the conversation."""
    return {"role": "assistant", "content": reply.content or None,
            "tool_calls": [{"id": r.id, "type": "function", "function": {"name": r.name, "arguments": r.arguments}}
                           for r in reply.tool_calls]}


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _error_detail(text: str) -> str:
    """The endpoint's error message from an OpenAI-style error body, else the start of the body."""
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        return " ".join(text.split())[:300]
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:300]
        if isinstance(err, str):
            return err[:300]
    return " ".join(text.split())[:300]


def _mentions_response_format(text: str) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in ("response_format", "response format", "json_schema",
                                            "structured output"))


def _retry_after(response: httpx.Response) -> float | None:
    """Retry-After in seconds: a number, or an HTTP date measured against the response's own Date header."""
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
        now = email.utils.parsedate_to_datetime(response.headers.get("date", ""))
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - now).total_seconds())


# -- building agents from the configuration ------------------------------------------------------------------------


def agent_from_config(entry: AgentConfig, environ: Mapping[str, str], *, live: bool = False,
                      search_transport: httpx.BaseTransport | None = None, **kw: Any) -> Agent:
    """The agent for one lineup entry: an LLMAgent (its key read from `environ[entry.api_key_env]`) or a
    scripted baseline. `kw` goes to LLMAgent (client, transport, sleep, clock, rng, max_markets, …).

    `live` is True only for rounds deciding at the present moment (the scheduler's decision round): only then
    does an agent with the web_search tool get its search endpoint (key from `environ[entry.web_search_key_env]`,
    `search_transport` for tests). Replays and simulations leave it False, and the tool itself also refuses any
    decision time that is not now — today's web would leak the future into a past decision."""
    if entry.is_llm:
        key = environ.get(entry.api_key_env, "")
        if not key:
            raise ConfigError(f"agent {entry.name!r}: environment variable {entry.api_key_env} is not set",
                              key="api_key_env", agent=entry.name, env=entry.api_key_env)
        if live and WEB_SEARCH in entry.tools:
            from arena.agents.web_search import HttpWebSearch

            search_key = environ.get(entry.web_search_key_env, "")
            if not search_key:
                raise ConfigError(f"agent {entry.name!r}: environment variable {entry.web_search_key_env} (the web "
                                  f"search key) is not set", key="web_search_key_env", agent=entry.name,
                                  env=entry.web_search_key_env)
            kw["web_search"] = HttpWebSearch(entry.web_search_url, search_key, transport=search_transport)
        return LLMAgent.from_config(entry, key, **kw)
    from arena.agents import baselines

    params = dict(entry.params)
    if entry.kind == "always-0.5":
        return baselines.AlwaysHalf(entry.name)
    if entry.kind == "market-follower":
        return baselines.MarketFollower(entry.name)
    if entry.kind == "random":
        return baselines.RandomBettor(entry.name, **params)
    if entry.kind == "kelly":
        return baselines.KellyBettor(entry.name, **params)
    raise ConfigError(f"agent {entry.name!r}: unknown kind {entry.kind!r}", key="agents.kind")


def agents_from_config(config: ArenaConfig, environ: Mapping[str, str], **kw: Any) -> dict[str, Agent]:
    """Every agent of `config.lineup` by name. Raises ConfigError naming each LLM agent whose key is missing."""
    missing = config.missing_keys(environ)
    if missing:
        names = ", ".join(f"{agent} (set {env})" for agent, env in missing)
        raise ConfigError(f"API keys missing for: {names}", key="api_key_env", missing=missing)
    prompt_kw = {"max_markets": config.cohort.prompt_markets, **kw}
    out: dict[str, Agent] = {}
    for entry in config.lineup:
        out[entry.name] = agent_from_config(entry, environ, **(prompt_kw if entry.is_llm else {}))
    return out


__all__ = ["LLMAgent", "agent_from_config", "agents_from_config"]
