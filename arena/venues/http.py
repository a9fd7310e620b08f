"""The venues' one HTTP layer: GET + JSON over an injected ``httpx.Client``, with retries and per-host rate limits.

Owns transport policy only (User-Agent, timeout, retry/backoff, rate limiting, URL length); it knows nothing
about markets and must not import the parsers or the domain.

Policy, in one place:

- **User-Agent** is always explicit (Cloudflare answers odd or default agents with ``403 error code: 1010``).
- **Timeout** defaults to 15 s (10 s to connect).
- **Retries**: 429, 5xx (incl. Manifold's ``503 Transaction conflict``) and ``httpx.TransportError`` (which
  includes timeouts) are retried up to ``RetryPolicy.max_attempts`` attempts in total, sleeping
  ``min(max_delay, base_delay × 2^(n−1)) × U(1 − jitter, 1 + jitter)`` seconds after the n-th failure. A
  numeric ``Retry-After`` header (seconds) replaces the backoff, capped at ``max_retry_after``; an HTTP-date
  ``Retry-After`` is ignored in favour of the backoff (it would need the wall clock). Any other 4xx is raised at
  once as ``VenueHTTPError`` (status, url, body excerpt) — it will not get better by asking again.
- **Rate limits**: a token bucket per (host, path prefix) rule. A request takes one token from the host-wide
  bucket and one from the most specific matching path bucket; when a bucket is empty the caller sleeps until
  its token is due (tokens are *reserved*, so waits are fair across threads). A bucket refills at
  ``requests / per_seconds`` tokens per second and holds at most ``burst`` tokens, so in any window of
  ``per_seconds`` at most ``requests + burst`` requests leave. Defaults sit at roughly 70–80 % of the published
  limits (Gamma ``/markets`` 300 per 10 s → 200 + 20; Manifold 500/min → 400 + 20 per minute).
- **Concurrency**: this is a synchronous client. It is thread-safe (the limiter holds a lock while reserving),
  so bounded concurrency is "N worker threads sharing one ``VenueHTTP``"; there is no async variant.
- **Time**: ``sleep`` and ``monotonic`` are injected, so tests and simulations never really wait.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from arena.errors import ArenaError
from arena.venues.listing import loads

DEFAULT_USER_AGENT = "arena/0.1 (paper-trading research; read-only market data)"
DEFAULT_TIMEOUT = httpx.Timeout(15.0, connect=10.0)
MAX_URL_LENGTH = 8_000  # Gamma answers 414 beyond ~8 KB (about 400 repeated ids)
BODY_EXCERPT = 500  # characters of a failed response kept on the error


class VenueHTTPError(ArenaError):
    """A venue answered with an error status, or could not be reached.

    ``status`` is the HTTP status (None for transport failures), ``url`` the full request URL, ``body`` the
    first 500 characters of the response body, ``venue_message`` the venue's own ``error``/``message`` text
    when the body was JSON, and ``attempts`` how many times the request was sent.
    """

    reason = "venue_http"

    def __init__(self, message: str, *, status: int | None, url: str, body: str = "", attempts: int = 1,
                 reason: str | None = None) -> None:
        super().__init__(message, reason=reason, status=status, url=url)
        self.status = status
        self.url = url
        self.body = body[:BODY_EXCERPT]
        self.attempts = attempts
        self.venue_message = venue_message(body)


class InvalidRequest(ArenaError):
    """A request the client refuses to send: an unknown parameter, a rule the endpoint enforces, a URL too long."""

    reason = "invalid_request"


def venue_message(body: str) -> str:
    """The ``error`` or ``message`` text of a JSON error body (CLOB, Gamma, Manifold); else a short excerpt."""
    try:
        data = json.loads(body)
    except (ValueError, TypeError):
        return body[:200].strip()
    if isinstance(data, dict):
        for key in ("error", "message"):
            value = data.get(key)
            if isinstance(value, str):
                return value
    return body[:200].strip()


# --------------------------------------------------------------------------------------------- rate limiting


@dataclass(frozen=True)
class RateLimit:
    """At most ``requests`` per ``per_seconds`` on average, bursting up to ``burst`` (default requests // 10).

    ``path_prefix`` "" means the whole host; otherwise the rule applies to that path and everything below it
    (segment-wise: "/price" covers "/price" and "/price/x", not "/prices-history").
    """

    requests: int
    per_seconds: float
    burst: int | None = None
    path_prefix: str = ""

    def __post_init__(self) -> None:
        if self.requests <= 0 or self.per_seconds <= 0:
            raise ValueError("a rate limit needs positive requests and seconds")
        if self.burst is not None and self.burst < 1:
            raise ValueError("burst must be at least 1")

    @property
    def capacity(self) -> int:
        return self.burst if self.burst is not None else max(1, self.requests // 10)

    @property
    def rate(self) -> float:
        """Tokens per second."""
        return self.requests / self.per_seconds

    def matches(self, path: str) -> bool:
        if not self.path_prefix:
            return True
        prefix = self.path_prefix.rstrip("/")
        return path == prefix or path.startswith(prefix + "/")


# Published limits (Polymarket docs "rate-limits", per 10 s; Manifold 500/min/IP) and our safer defaults.
DEFAULT_RATE_LIMITS: Mapping[str, tuple[RateLimit, ...]] = {
    "gamma-api.polymarket.com": (
        RateLimit(2_500, 10, burst=100),  # published 4,000
        RateLimit(200, 10, burst=20, path_prefix="/markets"),  # published 300 (+ keyset, + /markets/{id})
        RateLimit(350, 10, burst=35, path_prefix="/events"),  # published 500
        RateLimit(250, 10, burst=25, path_prefix="/public-search"),  # published 350
    ),
    "clob.polymarket.com": (
        RateLimit(6_000, 10, burst=300),  # published 9,000
        RateLimit(1_000, 10, burst=100, path_prefix="/book"),  # published 1,500
        RateLimit(1_000, 10, burst=100, path_prefix="/price"),  # published 1,500
        RateLimit(1_000, 10, burst=100, path_prefix="/midpoint"),  # published 1,500
        RateLimit(700, 10, burst=50, path_prefix="/prices-history"),  # published 1,000
    ),
    "api.manifold.markets": (
        RateLimit(400, 60, burst=20),  # published 500 per minute per IP
    ),
}


class TokenBucket:
    """A token bucket that lends tokens ahead of time: ``reserve()`` returns how long to wait for this token."""

    def __init__(self, limit: RateLimit, monotonic: Callable[[], float]) -> None:
        self.limit = limit
        self._monotonic = monotonic
        self._tokens = float(limit.capacity)
        self._last = monotonic()

    def reserve(self) -> float:
        """Take one token; return the seconds (≥ 0) the caller must wait before using it."""
        now = self._monotonic()
        elapsed = max(0.0, now - self._last)
        self._last = now
        self._tokens = min(float(self.limit.capacity), self._tokens + elapsed * self.limit.rate)
        self._tokens -= 1.0
        if self._tokens >= 0:
            return 0.0
        return -self._tokens / self.limit.rate


class RateLimiter:
    """Token buckets per (host, rule). Thread-safe. Hosts without rules are not limited."""

    def __init__(self, rules: Mapping[str, Sequence[RateLimit]] | None = None, *,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._rules = {host.lower(): tuple(r) for host, r in (DEFAULT_RATE_LIMITS if rules is None else rules).items()}
        self._monotonic = monotonic
        self._buckets: dict[tuple[str, str], TokenBucket] = {}
        self._lock = threading.Lock()

    def reserve(self, url: httpx.URL | str) -> float:
        """Reserve one request to ``url``; return the seconds to wait before sending it."""
        u = httpx.URL(str(url))
        host = (u.host or "").lower()
        rules = self._rules.get(host, ())
        general = [r for r in rules if not r.path_prefix]
        specific = [r for r in rules if r.path_prefix and r.matches(u.path)]
        chosen = general + sorted(specific, key=lambda r: len(r.path_prefix), reverse=True)[:1]
        wait = 0.0
        with self._lock:
            for rule in chosen:
                key = (host, rule.path_prefix)
                bucket = self._buckets.get(key)
                if bucket is None:
                    bucket = self._buckets[key] = TokenBucket(rule, self._monotonic)
                wait = max(wait, bucket.reserve())
        return wait


# --------------------------------------------------------------------------------------------- retries


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry. Delays are in seconds."""

    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    jitter: float = 0.25  # ± fraction of the backoff
    max_retry_after: float = 120.0
    retry_statuses: frozenset[int] = frozenset({429, 500, 502, 503, 504})

    def backoff(self, failures: int, rng: random.Random) -> float:
        """Seconds to sleep after the ``failures``-th consecutive failure (1-based)."""
        delay = min(self.max_delay, self.base_delay * (2 ** (failures - 1)))
        return delay * rng.uniform(1.0 - self.jitter, 1.0 + self.jitter)

    def retry_after(self, response: httpx.Response) -> float | None:
        """A numeric ``Retry-After`` in seconds, capped at ``max_retry_after``; None when absent or a date."""
        value = response.headers.get("Retry-After")
        if value is None:
            return None
        try:
            seconds = float(value.strip())
        except ValueError:
            return None
        if seconds != seconds or seconds < 0:  # NaN or negative
            return None
        return min(seconds, self.max_retry_after)


@dataclass
class HTTPStats:
    """Counters for logging and benchmarks. ``slept`` is in seconds (injected clock time)."""

    requests: int = 0
    retries: int = 0
    slept: float = 0.0
    rate_limited_waits: int = 0
    by_status: dict[int, int] = field(default_factory=dict)


def clean_params(params: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """Query pairs: None dropped, booleans as "true"/"false", lists/tuples repeated (``id=1&id=2``)."""
    pairs: list[tuple[str, str]] = []
    for key, value in (params or {}).items():
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if v is None:
                continue
            if isinstance(v, bool):
                pairs.append((key, "true" if v else "false"))
            else:
                pairs.append((key, str(v)))
    return pairs


class VenueHTTP:
    """GET JSON with retries and rate limits over an injected ``httpx.Client`` (or a client built on ``transport``).

    Pass exactly one of ``client`` or ``transport`` (neither: a real client). Inject ``sleep``/``monotonic`` in
    tests; ``rng`` makes jitter reproducible.
    """

    def __init__(self, client: httpx.Client | None = None, *, transport: httpx.BaseTransport | None = None,
                 user_agent: str = DEFAULT_USER_AGENT, timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
                 retry: RetryPolicy | None = None, limiter: RateLimiter | None = None,
                 sleep: Callable[[float], None] = time.sleep, monotonic: Callable[[], float] = time.monotonic,
                 rng: random.Random | None = None, max_url_length: int = MAX_URL_LENGTH) -> None:
        if client is not None and transport is not None:
            raise ValueError("pass an httpx.Client or a transport, not both")
        self._owns_client = client is None
        self._client = client if client is not None else httpx.Client(transport=transport, follow_redirects=True)
        self.user_agent = user_agent
        self.timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self.retry = retry or RetryPolicy()
        self.limiter = limiter if limiter is not None else RateLimiter(monotonic=monotonic)
        self._sleep = sleep
        self._rng = rng or random.Random()
        self.max_url_length = max_url_length
        self.stats = HTTPStats()

    # -- lifecycle
    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> VenueHTTP:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests
    def get(self, url: str, params: Mapping[str, Any] | None = None) -> httpx.Response:
        """GET ``url`` until a 2xx arrives; raise ``VenueHTTPError`` on a final failure."""
        request = self._client.build_request(
            "GET", url, params=clean_params(params),
            headers={"User-Agent": self.user_agent, "Accept": "application/json"},
            timeout=self.timeout,
        )
        full_url = str(request.url)
        if len(full_url) > self.max_url_length:
            raise InvalidRequest(f"URL of {len(full_url)} characters exceeds {self.max_url_length}; batch smaller",
                                 url=full_url[:200])
        attempts = 0
        while True:
            attempts += 1
            self._wait_for_token(request.url)
            self.stats.requests += 1
            try:
                response = self._client.send(request)
            except httpx.TransportError as exc:
                if attempts >= self.retry.max_attempts:
                    raise VenueHTTPError(f"GET {full_url} failed after {attempts} attempts: {exc!r}", status=None,
                                         url=full_url, attempts=attempts, reason="transport") from exc
                self._pause(self.retry.backoff(attempts, self._rng))
                continue
            status = response.status_code
            self.stats.by_status[status] = self.stats.by_status.get(status, 0) + 1
            if 200 <= status < 300:
                return response
            body = _safe_text(response)
            if status in self.retry.retry_statuses and attempts < self.retry.max_attempts:
                delay = self.retry.retry_after(response)
                self._pause(delay if delay is not None else self.retry.backoff(attempts, self._rng))
                continue
            raise VenueHTTPError(f"GET {full_url} → {status}: {venue_message(body)}", status=status, url=full_url,
                                 body=body, attempts=attempts)

    def get_json(self, url: str, params: Mapping[str, Any] | None = None) -> Any:
        """GET and decode JSON. A 2xx body that is not JSON (a proxy's HTML page) raises ``VenueHTTPError``."""
        return decode_json(self.get(url, params))

    # -- internals
    def _wait_for_token(self, url: httpx.URL) -> None:
        wait = self.limiter.reserve(url)
        if wait > 0:
            self.stats.rate_limited_waits += 1
            self.stats.slept += wait
            self._sleep(wait)

    def _pause(self, seconds: float) -> None:
        self.stats.retries += 1
        self.stats.slept += seconds
        self._sleep(seconds)


def decode_json(response: httpx.Response) -> Any:
    """`response`'s body decoded as JSON (`listing.loads`: orjson, a C decoder, then the
    stdlib's json for what orjson refuses); a body that is not JSON (a proxy's HTML page) raises
    ``VenueHTTPError``."""
    try:
        return loads(response.content)
    except ValueError as exc:
        body = _safe_text(response)
        raise VenueHTTPError(f"GET {response.request.url} → {response.status_code} but the body is not JSON",
                             status=response.status_code, url=str(response.request.url), body=body,
                             reason="not_json") from exc


def _safe_text(response: httpx.Response) -> str:
    try:
        return response.text[:BODY_EXCERPT]
    except Exception:  # undecodable bytes: keep what we can for the error message
        return repr(response.content[:BODY_EXCERPT])


__all__ = [
    "DEFAULT_RATE_LIMITS",
    "DEFAULT_TIMEOUT",
    "DEFAULT_USER_AGENT",
    "HTTPStats",
    "InvalidRequest",
    "RateLimit",
    "RateLimiter",
    "RetryPolicy",
    "TokenBucket",
    "VenueHTTP",
    "VenueHTTPError",
    "clean_params",
    "decode_json",
    "venue_message",
]
