"""The HTTP layer: retries with backoff and Retry-After, typed errors, rate limiting — on an injected clock."""

from __future__ import annotations

import random

import httpx
import pytest

from arena.errors import ArenaError
from arena.venues.http import (
    DEFAULT_USER_AGENT,
    InvalidRequest,
    RateLimit,
    RateLimiter,
    RetryPolicy,
    TokenBucket,
    VenueHTTP,
    VenueHTTPError,
    clean_params,
)

GAMMA = "https://gamma-api.polymarket.com"
MANIFOLD = "https://api.manifold.markets/v0"


def scripted(responses, seen=None, clock=None):
    """A MockTransport answering from a list of (status, body, headers) or exceptions, in order."""
    queue = list(responses)

    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append((clock.now if clock else None, request))
        item = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(item, Exception):
            raise item
        status, body, headers = item if len(item) == 3 else (*item, {})
        if isinstance(body, (dict, list)):
            return httpx.Response(status, json=body, headers=headers)
        return httpx.Response(status, text=body, headers=headers)

    return httpx.MockTransport(handler)


def make_http(transport, fake_time, **kw):
    return VenueHTTP(transport=transport, sleep=fake_time.sleep, monotonic=fake_time.monotonic,
                     rng=random.Random(7), **kw)


def test_429_then_success_honours_retry_after(fake_time):
    seen = []
    http = make_http(scripted([(429, {"error": "slow down"}, {"Retry-After": "7"}), (200, {"ok": True})], seen),
                     fake_time)
    assert http.get_json(f"{GAMMA}/markets", {"limit": 1}) == {"ok": True}
    assert fake_time.sleeps == [7.0]
    assert len(seen) == 2 and http.stats.retries == 1 and http.stats.by_status == {429: 1, 200: 1}


def test_retry_after_is_capped_and_dates_fall_back_to_backoff(fake_time):
    http = make_http(scripted([(429, "", {"Retry-After": "9999"}), (200, [])]), fake_time,
                     retry=RetryPolicy(max_retry_after=60))
    http.get_json(f"{GAMMA}/markets")
    assert fake_time.sleeps == [60.0]
    fake_time.sleeps.clear()
    http2 = make_http(scripted([(503, "", {"Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"}), (200, [])]),
                      fake_time)
    http2.get_json(f"{GAMMA}/markets")
    assert len(fake_time.sleeps) == 1 and 0.375 <= fake_time.sleeps[0] <= 0.625  # base 0.5 ± 25 %


def test_500s_retried_with_exponential_backoff_then_give_up(fake_time):
    seen = []
    http = make_http(scripted([(500, "<html>Internal Server Error</html>")], seen), fake_time)
    with pytest.raises(VenueHTTPError) as info:
        http.get_json(f"{GAMMA}/markets", {"limit": 5})
    err = info.value
    assert isinstance(err, ArenaError) and err.status == 500 and err.attempts == 5
    assert err.url == f"{GAMMA}/markets?limit=5" and "Internal Server Error" in err.body
    assert len(seen) == 5
    assert len(fake_time.sleeps) == 4
    for n, delay in enumerate(fake_time.sleeps):
        nominal = 0.5 * 2 ** n
        assert nominal * 0.75 <= delay <= nominal * 1.25
    assert fake_time.sleeps == sorted(fake_time.sleeps)


def test_404_is_not_retried(fake_time, sample_text):
    seen = []
    body = sample_text("polymarket/clob_book_error_404.RECONSTRUCTED.json")
    http = make_http(scripted([(404, body)], seen), fake_time)
    with pytest.raises(VenueHTTPError) as info:
        http.get_json("https://clob.polymarket.com/book", {"token_id": "123"})
    assert info.value.status == 404 and info.value.attempts == 1
    assert info.value.venue_message == "No orderbook exists for the requested token id"
    assert len(seen) == 1 and fake_time.sleeps == []


@pytest.mark.parametrize("name, status, text", [
    ("polymarket/gamma_error_422.json", 422, "expected value to be one of"),
    ("polymarket/clob_error_400.RECONSTRUCTED.json", 400, "Invalid payload"),
    ("polymarket/clob_prices_history_error_400.RECONSTRUCTED.json", 400, "minimum 'fidelity'"),
    ("manifold/error_400_validation.RECONSTRUCTED.json", 400, "Error validating request."),
    ("manifold/error_404.RECONSTRUCTED.json", 404, "Contract not found"),
])
def test_venue_error_bodies_become_typed_errors(fake_time, sample_text, name, status, text):
    seen = []
    http = make_http(scripted([(status, sample_text(name))], seen), fake_time)
    with pytest.raises(VenueHTTPError) as info:
        http.get_json(f"{MANIFOLD}/market/x")
    assert info.value.status == status and text in info.value.venue_message and len(seen) == 1


def test_manifold_503_transaction_conflict_is_retried(fake_time):
    http = make_http(scripted([(503, {"message": "Transaction conflict. Please try again."}), (200, {"id": "a"})]),
                     fake_time)
    assert http.get_json(f"{MANIFOLD}/market/a") == {"id": "a"}


def test_transport_errors_are_retried_then_typed(fake_time):
    http = make_http(scripted([httpx.ConnectError("boom"), httpx.ReadTimeout("slow"), (200, [1])]), fake_time)
    assert http.get_json(f"{GAMMA}/markets") == [1]
    assert len(fake_time.sleeps) == 2
    dead = make_http(scripted([httpx.ConnectError("down")]), fake_time, retry=RetryPolicy(max_attempts=3))
    with pytest.raises(VenueHTTPError) as info:
        dead.get_json(f"{GAMMA}/markets")
    assert info.value.status is None and info.value.reason == "transport" and info.value.attempts == 3


def test_non_json_success_body_is_typed(fake_time):
    http = make_http(scripted([(200, "<html>cloudflare</html>")]), fake_time)
    with pytest.raises(VenueHTTPError) as info:
        http.get_json(f"{GAMMA}/markets")
    assert info.value.reason == "not_json" and "cloudflare" in info.value.body


def test_headers_params_and_timeout(fake_time):
    seen = []
    http = make_http(scripted([(200, [])], seen), fake_time, timeout=12.0)
    http.get_json(f"{GAMMA}/markets", {"closed": True, "id": ["1", "2"], "tag_id": None, "limit": 10})
    request = seen[0][1]
    assert request.headers["User-Agent"] == DEFAULT_USER_AGENT
    assert request.url.query == b"closed=true&id=1&id=2&limit=10"
    assert request.extensions["timeout"]["read"] == 12.0
    assert clean_params({"a": False, "b": (1, None, 2)}) == [("a", "false"), ("b", "1"), ("b", "2")]


def test_overlong_url_is_refused_before_sending(fake_time):
    seen = []
    http = make_http(scripted([(200, [])], seen), fake_time)
    with pytest.raises(InvalidRequest):
        http.get_json(f"{GAMMA}/markets", {"clob_token_ids": ["9" * 77] * 200})
    assert seen == []


def test_client_and_transport_are_exclusive():
    with pytest.raises(ValueError):
        VenueHTTP(httpx.Client(), transport=httpx.MockTransport(lambda r: httpx.Response(200)))


# ------------------------------------------------------------------------------------------- rate limiting


def test_token_bucket_spacing_on_the_injected_clock(fake_time):
    bucket = TokenBucket(RateLimit(10, 1.0, burst=2), fake_time.monotonic)
    waits = [bucket.reserve() for _ in range(5)]
    assert waits[:2] == [0.0, 0.0]
    assert waits[2:] == pytest.approx([0.1, 0.2, 0.3])


def test_manifold_requests_are_spaced_after_the_burst(fake_time):
    seen = []
    http = make_http(scripted([(200, [])], seen, fake_time), fake_time)
    for _ in range(60):
        http.get_json(f"{MANIFOLD}/markets")
    times = [t for t, _ in seen]
    # default Manifold rule: 400 per 60 s, burst 20 → 20 at once, then one every 0.15 s
    assert times[:20] == [1000.0] * 20
    gaps = [b - a for a, b in zip(times[20:], times[21:])]
    assert gaps == pytest.approx([0.15] * len(gaps))
    assert times[-1] - times[0] == pytest.approx(40 * 0.15)
    assert http.stats.rate_limited_waits == 40


def test_sustained_rate_stays_under_the_published_limit(fake_time):
    limiter = RateLimiter(monotonic=fake_time.monotonic)
    stamps = []
    for _ in range(2000):
        wait = limiter.reserve(f"{GAMMA}/markets?limit=100")
        fake_time.sleep(wait)
        stamps.append(fake_time.now)
    # Gamma /markets is published at 300 per 10 s; count the busiest 10 s window
    busiest, j = 0, 0
    for i, t in enumerate(stamps):
        while stamps[j] <= t - 10:
            j += 1
        busiest = max(busiest, i - j + 1)
    assert busiest <= 220 < 300
    per_minute = 60 * (len(stamps) - 1) / (stamps[-1] - stamps[0])
    assert per_minute == pytest.approx(1200, rel=0.02)


def test_path_rules_are_segment_aware_and_separate(fake_time):
    limiter = RateLimiter({"clob.polymarket.com": (RateLimit(1000, 10, burst=1000),
                                                   RateLimit(1, 10, burst=1, path_prefix="/price"))},
                          monotonic=fake_time.monotonic)
    assert limiter.reserve("https://clob.polymarket.com/price?token_id=1") == 0
    assert limiter.reserve("https://clob.polymarket.com/price?token_id=1") == pytest.approx(10)
    # /prices-history is not under /price
    assert limiter.reserve("https://clob.polymarket.com/prices-history?market=1") == 0
    # unknown hosts are not limited
    assert limiter.reserve("https://example.org/x") == 0


def test_rate_limit_validation():
    with pytest.raises(ValueError):
        RateLimit(0, 10)
    with pytest.raises(ValueError):
        RateLimit(10, 10, burst=0)
    assert RateLimit(300, 10).capacity == 30 and RateLimit(5, 1).capacity == 1
