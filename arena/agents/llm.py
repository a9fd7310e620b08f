"""The LLM agent: asks an OpenAI-compatible chat endpoint for a decision, repairs invalid replies, logs every call.

Owns the HTTP exchange with the model (retries, backoff, timeouts, the response_format fallback) and the
repair loop; the prompt comes from `arena.agents.prompts`, the reading of replies from `arena.agents.parse`.
It must not import the store or the services: a decision's transcript travels back in `Decision.calls`.

Every HTTP exchange becomes a `ModelCall`, numbered 1, 2, 3, … in order — the first attempt, every transport
retry (429, 5xx, network error, with its error) and every repair — so nothing a decision cost is lost. The API
key is held in a `_Secret`, sent only in the Authorization header, and scrubbed from anything recorded.
"""

from __future__ import annotations

import email.utils
import json
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from arena.agents.parse import ParsedReply, parse_reply, response_format
from arena.agents.prompts import (DEFAULT_DESCRIPTION_CHARS, DEFAULT_MAX_MARKETS, PROMPT_VERSION, render_prompt,
                                  repair_message)
from arena.agents.view import Agent, AgentView
from arena.config import RESPONSE_FORMATS, AgentConfig, ArenaConfig, TokenPrices
from arena.domain.decision import Decision, ModelCall
from arena.errors import ConfigError

RAW_LIMIT = 20_000  # characters of a non-200 response body kept in a ModelCall (the whole 200 reply is kept)
RETRYABLE_STATUS = frozenset({429})  # and every 5xx; other 4xx are the request's fault and are not retried
REDACTED = "[redacted]"


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
class _Reply:
    """One HTTP exchange that produced a completion."""

    content: str
    prompt_tokens: int | None
    completion_tokens: int | None
    served_model: str
    finish_reason: str
    latency_s: float


@dataclass(frozen=True)
class _Failure:
    """The model could not be reached (after retries) or refused the request."""

    error: str


class LLMAgent:
    """An Agent backed by a chat model at `base_url` (POST {base_url}/chat/completions).

    `api_key` is passed in by the caller (read from the environment variable the lineup names); it is never
    stored in a field that prints, never logged and never recorded. `temperature` in [0, 2]; `max_tokens`
    completion tokens per call; `prices` in USD per million tokens; `timeout_s` seconds per HTTP request;
    `max_repairs` corrected replies asked for after an invalid one; `max_retries` transport retries per call
    (exponential backoff from `backoff_s`, capped at `max_backoff_s`, with jitter; a Retry-After header is
    honoured up to `max_retry_after_s`). `sleep`, `clock` (monotonic seconds) and `rng` are injected for tests.
    """

    version = PROMPT_VERSION

    def __init__(self, name: str, model: str, base_url: str, api_key: str, *, temperature: float = 0.0,
                 max_tokens: int | None = 4096, prices: TokenPrices | None = None, max_repairs: int = 2,
                 response_format: str = "json_schema", timeout_s: float = 120.0, max_retries: int = 4,
                 backoff_s: float = 1.0, max_backoff_s: float = 60.0, max_retry_after_s: float = 300.0,
                 max_markets: int = DEFAULT_MAX_MARKETS, description_chars: int = DEFAULT_DESCRIPTION_CHARS,
                 client: httpx.Client | None = None, transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic,
                 rng: random.Random | None = None) -> None:
        if response_format not in RESPONSE_FORMATS:
            raise ValueError(f"response_format must be one of {RESPONSE_FORMATS}, not {response_format!r}")
        if max_repairs < 0 or max_retries < 0 or timeout_s <= 0:
            raise ValueError("max_repairs and max_retries must be >= 0 and timeout_s > 0")
        self.name = name
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._key = _Secret(api_key)
        self.temperature = temperature
        self.max_tokens = max_tokens
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
        self._client = client
        self._owns_client = client is None
        self._transport = transport
        self._sleep = sleep
        self._clock = clock
        self._rng = rng or random.Random()
        # Set once the endpoint has refused `response_format` with a 400: later calls are sent without it.
        self.response_format_refused = False

    @classmethod
    def from_config(cls, entry: AgentConfig, api_key: str, **kw: Any) -> LLMAgent:
        """An agent for an [[agents]] entry of kind "llm"; `kw` may add client/transport/sleep/clock/rng/prompt
        options."""
        if not entry.is_llm:
            raise ConfigError(f"agent {entry.name!r} is kind {entry.kind!r}, not an LLM", key="agents.kind")
        return cls(entry.name, entry.model, entry.base_url, api_key, temperature=entry.temperature,
                   max_tokens=entry.max_tokens, prices=entry.prices, max_repairs=entry.max_repairs,
                   response_format=entry.response_format, timeout_s=entry.timeout_s,
                   max_retries=entry.max_retries, **kw)

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
        prompt = render_prompt(view, self.max_markets, self.description_chars)
        messages = prompt.as_list()
        calls: list[ModelCall] = []
        last_errors: tuple[str, ...] = ()
        for _ in range(self.max_repairs + 1):
            outcome = self._complete(messages, calls)
            if isinstance(outcome, _Failure):
                return Decision(calls=tuple(calls), error=self._scrub(outcome.error))
            result = parse_reply(outcome.content, view)
            errors: tuple[str, ...] = ()
            if not isinstance(result, ParsedReply):
                errors = result.errors
                if outcome.finish_reason == "length":
                    errors = errors + (f"The reply was cut off at the token limit ({self.max_tokens}); keep the "
                                       f"reasoning and rationales short.",)
            if isinstance(result, ParsedReply):
                note = ("accepted with notes: " + " ".join(result.notes)) if result.notes else ""
            else:
                note = " ".join(errors)
            calls.append(self._call(len(calls) + 1, messages, outcome, result.data, note))
            if isinstance(result, ParsedReply):
                return result.to_decision(calls=tuple(calls))
            last_errors = errors
            # The reply goes back scrubbed too, so what is recorded is exactly what is sent.
            messages = messages + [{"role": "assistant", "content": self._scrub(outcome.content)},
                                   {"role": "user", "content": repair_message(errors)}]
        replies = self.max_repairs + 1
        reason = (f"no usable reply after {replies} attempt{'s' if replies > 1 else ''} "
                  f"({self.max_repairs} repair{'s' if self.max_repairs != 1 else ''}); last problems: "
                  + " ".join(last_errors))
        return Decision(calls=tuple(calls), error=self._scrub(reason))

    def _call(self, attempt: int, messages: list[dict[str, str]], reply: _Reply | None,
              parsed: Mapping[str, Any] | None, error: str, raw: str = "", latency: float | None = None
              ) -> ModelCall:
        prompt_tokens = reply.prompt_tokens if reply else None
        completion_tokens = reply.completion_tokens if reply else None
        return ModelCall(
            attempt=attempt,
            prompt=self._scrub(json.dumps(messages, ensure_ascii=False)),
            raw_response=self._scrub(reply.content if reply else raw),
            parsed=parsed,
            error=self._scrub(error),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost_usd=self.prices.cost(prompt_tokens, completion_tokens),
            latency_s=reply.latency_s if reply else latency,
            served_model=reply.served_model if reply else "",
            prompt_version=PROMPT_VERSION,
        )

    def _scrub(self, text: str) -> str:
        key = self._key.reveal()
        return text.replace(key, REDACTED) if key and key in text else text

    def _body(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        fmt = None if self.response_format_refused else response_format(self.response_format)
        if fmt is not None:
            body["response_format"] = fmt
        return body

    def _complete(self, messages: list[dict[str, str]], calls: list[ModelCall]) -> _Reply | _Failure:
        """One completion, retrying transport failures; each failed exchange is appended to `calls`."""
        retries = 0
        while True:
            sent_format = "response_format" in (body := self._body(messages))
            started = self._clock()
            try:
                response = self.client.post(
                    f"{self.base_url}/chat/completions", json=body, timeout=self.timeout_s,
                    headers={"Authorization": f"Bearer {self._key.reveal()}", "Accept": "application/json"})
            except httpx.TransportError as exc:
                latency = self._clock() - started
                what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                delay = self._backoff(retries) if retries < self.max_retries else None
                calls.append(self._call(len(calls) + 1, messages, None, None,
                                        self._retry_note(what, delay), latency=latency))
                if delay is None:
                    return _Failure(f"model endpoint unreachable after {retries + 1} tries: {what}")
                self._sleep(delay)
                retries += 1
                continue
            latency = self._clock() - started
            status = response.status_code
            text = response.text
            if status == 200:
                reply = self._read_completion(text, latency)
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
                                            raw=text[:RAW_LIMIT], latency=latency))
                    continue
            if not retryable or retries >= self.max_retries:
                calls.append(self._call(len(calls) + 1, messages, None, None, problem, raw=text[:RAW_LIMIT],
                                        latency=latency))
                tries = f" after {retries + 1} tries" if retryable else ""
                return _Failure(f"model endpoint failed{tries}: {problem}")
            delay, honoured = self._delay(response, retries)
            if delay is None:
                calls.append(self._call(len(calls) + 1, messages, None, None, problem, raw=text[:RAW_LIMIT],
                                        latency=latency))
                return _Failure(f"model endpoint failed: {problem}; it asked to wait longer than "
                                f"{self.max_retry_after_s:g} s")
            calls.append(self._call(len(calls) + 1, messages, None, None,
                                    self._retry_note(problem, delay, honoured), raw=text[:RAW_LIMIT],
                                    latency=latency))
            self._sleep(delay)
            retries += 1

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

    def _read_completion(self, text: str, latency: float) -> _Reply | tuple[str, bool]:
        """The completion in a 200 body, or (problem, retryable)."""
        try:
            body = json.loads(text)
        except ValueError:
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
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        return _Reply(
            content=content if isinstance(content, str) else "",
            prompt_tokens=_int_or_none(usage.get("prompt_tokens")),
            completion_tokens=_int_or_none(usage.get("completion_tokens")),
            served_model=str(body.get("model") or ""),
            finish_reason=str(choices[0].get("finish_reason") or ""),
            latency_s=latency,
        )


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _error_detail(text: str) -> str:
    """The endpoint's error message from an OpenAI-style error body, else the start of the body."""
    try:
        body = json.loads(text)
    except ValueError:
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


def agent_from_config(entry: AgentConfig, environ: Mapping[str, str], **kw: Any) -> Agent:
    """The agent for one lineup entry: an LLMAgent (its key read from `environ[entry.api_key_env]`) or a
    scripted baseline. `kw` goes to LLMAgent (client, transport, sleep, clock, rng, max_markets, …)."""
    if entry.is_llm:
        key = environ.get(entry.api_key_env, "")
        if not key:
            raise ConfigError(f"agent {entry.name!r}: environment variable {entry.api_key_env} is not set",
                              key="api_key_env", agent=entry.name, env=entry.api_key_env)
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
