"""The venue clients over httpx.MockTransport: paging (offset → keyset, before=, after=), strict params, CLOB."""

from __future__ import annotations

import copy
import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest

from arena.clock import FixedClock
from arena.domain.market import NO, YES, MarketKind
from arena.money import Price
from arena.venues.http import InvalidRequest, VenueHTTPError
from arena.venues.manifold import ManifoldClient
from arena.venues.polymarket import MAX_OFFSET, PolymarketClient, check_history_params

NOW = datetime(2026, 11, 1, 12, tzinfo=timezone.utc)
MANIFOLD_MARKETS_PARAMS = {"limit", "sort", "order", "before", "userId", "groupId"}
MANIFOLD_BETS_PARAMS = {"contractId", "contractSlug", "userId", "username", "answerId", "limit", "before", "after",
                        "beforeTime", "afterTime", "order", "kinds", "minAmount"}
MANIFOLD_SEARCH_PARAMS = {"term", "sort", "filter", "contractType", "topicSlug", "creatorId", "limit", "offset",
                          "beforeTime", "liquidity", "token", "includeLiteAnswers"}


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def polymarket(handler, log):
    def logged(request: httpx.Request) -> httpx.Response:
        log.append(request)
        return handler(request)

    t = FakeTime()
    return PolymarketClient.with_transport(httpx.MockTransport(logged), clock=FixedClock(NOW), sleep=t.sleep,
                                           monotonic=t.monotonic, rng=random.Random(1))


def manifold(handler, log):
    def logged(request: httpx.Request) -> httpx.Response:
        log.append(request)
        return handler(request)

    t = FakeTime()
    return ManifoldClient.with_transport(httpx.MockTransport(logged), clock=FixedClock(NOW), sleep=t.sleep,
                                         monotonic=t.monotonic, rng=random.Random(1))


# ------------------------------------------------------------------------------------------- Gamma paging


@pytest.fixture
def many_markets(sample):
    base = sample("polymarket/gamma_markets_list_active.json")
    rows = []
    for i in range(2350):
        row = copy.deepcopy(base[i % len(base)])
        row["id"] = str(100000 + i)
        rows.append(row)
    return rows


def gamma_handler(rows, sample_text, clamp=100):
    def handler(request: httpx.Request) -> httpx.Response:
        q = request.url.params
        assert request.url.host == "gamma-api.polymarket.com"
        limit = min(int(q.get("limit", "20")), clamp)  # the server clamps silently
        if request.url.path == "/markets":
            offset = int(q.get("offset", "0"))
            if offset > MAX_OFFSET:
                error = "offset too large, use /markets/keyset for deeper pagination"
                return httpx.Response(422, json={"type": "validation error", "error": error})
            return httpx.Response(200, json=rows[offset:offset + limit])
        if request.url.path == "/markets/keyset":
            assert "offset" not in q
            start = int(q.get("after_cursor", "0"))
            page = rows[start:start + limit]
            body = {"markets": page}
            if start + limit < len(rows):
                body["next_cursor"] = str(start + limit)
            return httpx.Response(200, json=body)
        if request.url.path.startswith("/markets/"):
            return httpx.Response(200, text=sample_text("polymarket/gamma_market_closed_resolved_early_no.json"))
        return httpx.Response(404, json={"error": "not found"})

    return handler


def test_gamma_pages_by_offset_then_keyset(many_markets, sample_text):
    log = []
    client = polymarket(gamma_handler(many_markets, sample_text), log)
    ids = [row["id"] for row in client.iter_markets(page_size=500, closed=False, order="volume24hr",
                                                    ascending=False)]
    assert ids == [row["id"] for row in many_markets]  # every market once, in order
    offsets = [int(r.url.params["offset"]) for r in log if r.url.path == "/markets"]
    assert offsets == list(range(0, 2001, 100))  # advanced by rows received; never past 2000
    keyset = [r for r in log if r.url.path == "/markets/keyset"]
    assert len(keyset) == 24 and "after_cursor" not in keyset[0].url.params
    assert keyset[1].url.params["after_cursor"] == "100"
    assert all(r.url.params["closed"] == "false" and r.url.params["order"] == "volume24hr" for r in log)


def test_listed_markets_are_the_listing_as_bytes_with_heads(many_markets, sample_text):
    # what a sync reads: the same entries, pages and requests as iter_markets, each entry its JSON bytes with
    # its head read and decoded whole only on request
    log, listed_log = [], []
    rows = list(polymarket(gamma_handler(many_markets, sample_text), log).iter_markets(page_size=500, closed=False))
    client = polymarket(gamma_handler(many_markets, sample_text), listed_log)
    entries = list(client.iter_listed_markets(page_size=500, closed=False))
    assert [e.row() for e in entries] == rows == many_markets
    assert all(e.head is not None and e.head.id == row["id"] and e.span is not None for e, row in zip(entries, rows))
    assert [str(r.url) for r in listed_log] == [str(r.url) for r in log]
    # a sync takes each head once: the entry forgets it, and its bytes still decode whole
    first = entries[0]
    head = first.take_head()
    assert head is not None and head.id == rows[0]["id"]
    assert first.head is None and first.take_head() is None and first.row() == rows[0]


def test_a_page_msgspec_refuses_is_decoded_as_before(sample, sample_text):
    # NaN is not JSON: msgspec and orjson refuse it, the stdlib's json (VenueHTTP's fallback) takes it
    rows = sample("polymarket/gamma_markets_list_active.json")[:3]
    body = json.dumps([dict(rows[0], bestBid=float("nan"))] + rows[1:])

    def handler(request: httpx.Request) -> httpx.Response:
        offset = int(request.url.params["offset"])
        return httpx.Response(200, text=body if offset == 0 else "[]")

    entries = list(polymarket(handler, []).iter_listed_markets(page_size=100))
    assert [e.row()["id"] for e in entries] == [r["id"] for r in rows]
    assert all(e.head is None and e.span is None for e in entries)
    assert entries[0].row()["bestBid"] != entries[0].row()["bestBid"]  # NaN, as the stdlib decoded it


@pytest.mark.parametrize("body", ['{"markets": []}', "<html>busy</html>"])
def test_a_malformed_listing_page_fails_alike_listed_or_not(body):
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text=body)

    with pytest.raises(Exception) as whole:
        list(polymarket(handler, []).iter_markets())
    with pytest.raises(Exception) as listed:
        list(polymarket(handler, []).iter_listed_markets())
    assert type(listed.value) is type(whole.value) and str(listed.value) == str(whole.value)


def test_short_listing_ends_on_an_empty_page_not_a_short_one(sample, sample_text):
    rows = sample("polymarket/gamma_markets_list_active.json")
    log = []
    client = polymarket(gamma_handler(rows, sample_text, clamp=3), log)
    assert [r["id"] for r in client.iter_markets(page_size=100)] == [r["id"] for r in rows]
    assert [int(r.url.params["offset"]) for r in log] == [0, 3, 4]


def test_gamma_parameter_checks(many_markets, sample_text):
    log = []
    client = polymarket(gamma_handler(many_markets, sample_text), log)
    with pytest.raises(InvalidRequest):
        client.get_markets_page(order="volume_num")  # snake_case → 422 on Gamma
    with pytest.raises(InvalidRequest):
        client.get_markets_page(tag="politics")  # not a /markets parameter
    with pytest.raises(InvalidRequest):
        client.get_markets_page(offset=2001)
    assert log == []
    with pytest.raises(VenueHTTPError):
        client.http.get_json(f"{client.gamma_url}/markets", {"limit": 1, "offset": 2100})


def test_parsed_markets_and_single_market(many_markets, sample_text):
    log = []
    client = polymarket(gamma_handler(many_markets[:5], sample_text), log)
    parsed = list(client.markets(page_size=2))
    assert len(parsed) == 5 and all(vm.quote.fetched_at == NOW for vm in parsed)
    vm = client.market("1460332")
    assert log[-1].url.path == "/markets/1460332"
    assert vm.resolution.payout(NO) == Price.of(1)


def test_events_listing_and_single_event(sample, sample_text):
    events = sample("polymarket/gamma_events_list_active.json")
    log = []

    def handler(request):
        if request.url.path == "/events":
            offset = int(request.url.params["offset"])
            return httpx.Response(200, json=events[offset:offset + 1])
        if request.url.path == "/events/15398":
            return httpx.Response(200, json=events[0])
        return httpx.Response(404, json={"error": "nope"})

    client = polymarket(handler, log)
    assert [e["id"] for e in client.iter_events(page_size=1, closed=False)] == ["15398", "15042"]
    event = client.event("15398")
    assert event.neg_risk and len(event.markets) == 3
    with pytest.raises(InvalidRequest):
        client.get_events_page(volume_num_min=1)  # /events spells it volume_min


# ------------------------------------------------------------------------------------------- CLOB


def clob_handler(sample_text):
    def handler(request: httpx.Request) -> httpx.Response:
        path, q = request.url.path, request.url.params
        if path == "/book":
            if q["token_id"] == "closed":
                return httpx.Response(404, text=sample_text("polymarket/clob_book_error_404.RECONSTRUCTED.json"))
            return httpx.Response(200, text=sample_text("polymarket/clob_book_2026_format.UNATTRIBUTED.json"))
        if path == "/midpoint":
            return httpx.Response(200, text=sample_text("polymarket/clob_midpoint.RECONSTRUCTED.json"))
        if path == "/price":
            return httpx.Response(200, text=sample_text("polymarket/clob_price.RECONSTRUCTED.json"))
        if path == "/spread":
            return httpx.Response(200, text=sample_text("polymarket/clob_spread.RECONSTRUCTED.json"))
        if path == "/prices-history":
            if q.get("interval") == "1m" and int(q.get("fidelity", "1")) < 10:
                return httpx.Response(
                    400, text=sample_text("polymarket/clob_prices_history_error_400.RECONSTRUCTED.json"))
            if q.get("market") == "resolved":
                return httpx.Response(200, text=sample_text("polymarket/clob_prices_history_empty.RECONSTRUCTED.json"))
            return httpx.Response(200, text=sample_text("polymarket/clob_prices_history.UNATTRIBUTED.json"))
        if path.startswith("/markets/"):
            return httpx.Response(200, text=sample_text("polymarket/clob_market_closed_with_winner.json"))
        return httpx.Response(404, json={"error": "nope"})

    return handler


def test_book_midpoint_price(sample_text):
    log = []
    client = polymarket(clob_handler(sample_text), log)
    book = client.book("77893140510362582253172593084218413010407941075415081594586195705930819989216")
    assert book.best_ask == Price.of("0.26") and book.best_bid == Price.of("0.25")
    assert log[0].url.params["token_id"].startswith("7789")  # the token id travels as the exact string
    assert client.book("closed") is None
    assert client.get_book("closed") is None
    assert client.midpoint("t") == Price.of("0.0005")
    assert client.price("t", "BUY") == Price.of("0.999")
    assert client.get_spread("t") == {"spread": "0.001"}
    with pytest.raises(InvalidRequest):
        client.get_price("t", "bid")


def test_prices_history_rules_are_enforced_client_side(sample_text):
    log = []
    client = polymarket(clob_handler(sample_text), log)
    for bad in (dict(interval="1m", fidelity=5), dict(interval="1m"), dict(interval="1w", fidelity=4),
                dict(interval="2d"), dict(start_ts=1_700_000_000, end_ts=1_700_000_000 + 16 * 86400),
                dict(start_ts=1_700_000_000_000, end_ts=1_700_000_100_000), dict(end_ts=1_700_000_000),
                dict(interval="1d", start_ts=1, end_ts=2), dict()):
        with pytest.raises(InvalidRequest):
            client.get_prices_history("tok", **bad)
    assert log == []
    check_history_params(interval="1h", fidelity=1, start_ts=None, end_ts=None)
    points = client.prices_history("tok", interval="1m", fidelity=10)
    assert len(points) == 18 and log[-1].url.params["fidelity"] == "10"
    start = datetime.fromtimestamp(1743036005, tz=timezone.utc)
    window = client.prices_history("tok", start=start, end=start + timedelta(hours=1), fidelity=1)
    assert log[-1].url.params["startTs"] == "1743036005" and len(window) == 7  # both ends inclusive
    assert client.prices_history("resolved", interval="max", fidelity=720) == []


def test_server_side_history_error_is_typed(sample_text):
    client = polymarket(clob_handler(sample_text), [])
    with pytest.raises(VenueHTTPError) as info:
        client.http.get_json(f"{client.clob_url}/prices-history", {"market": "t", "interval": "1m", "fidelity": 1})
    assert "minimum 'fidelity'" in info.value.venue_message


def test_settlement_uses_the_clob_second_opinion(sample_text):
    log = []
    gamma = gamma_handler([], sample_text)
    clob = clob_handler(sample_text)
    client = polymarket(lambda r: gamma(r) if r.url.host.startswith("gamma") else clob(r), log)
    vm = client.market_for_settlement("1460332")
    assert vm.resolution.payout(NO) == Price.of(1)
    assert [r.url.path for r in log] == ["/markets/1460332",
                                         "/markets/0x8ccc3f4951ff02c1d34b87988752b4444ad17228732780a6cf22afefe8478bb6"]
    assert client.clob_market("0x8ccc").winner_token().outcome == "No"


# ------------------------------------------------------------------------------------------- Manifold


def manifold_handler(markets, sample_text, bets=None, page=5):
    def handler(request: httpx.Request) -> httpx.Response:
        q = request.url.params
        path = request.url.path
        allowed = {"/v0/markets": MANIFOLD_MARKETS_PARAMS, "/v0/bets": MANIFOLD_BETS_PARAMS,
                   "/v0/search-markets": MANIFOLD_SEARCH_PARAMS}.get(path, {"ids"})
        if set(q.keys()) - allowed:  # strict schemas
            return httpx.Response(400, text=sample_text("manifold/error_400_validation.RECONSTRUCTED.json"))
        if path == "/v0/markets":
            ids = [m["id"] for m in markets]
            start = ids.index(q["before"]) + 1 if "before" in q else 0
            return httpx.Response(200, json=markets[start:start + min(int(q["limit"]), page)])
        if path == "/v0/search-markets":
            return httpx.Response(200, json=markets[:int(q["limit"])])
        if path == "/v0/bets":
            rows = bets or []
            ids = [b.get("id") for b in rows]
            start = ids.index(q["after"]) + 1 if "after" in q else 0
            return httpx.Response(200, json=rows[start:start + int(q["limit"])])
        if path == "/v0/market/tQudZcEtlp":
            return httpx.Response(200, text=sample_text("manifold/market_full_multiple_choice.RECONSTRUCTED.json"))
        if path == "/v0/market/9t61v9e7x4/prob":
            return httpx.Response(200, text=sample_text("manifold/market_prob_binary.official_doc.json"))
        if path == "/v0/market-probs":
            return httpx.Response(200, text=sample_text("manifold/market_probs_batch.official_doc.json"))
        return httpx.Response(404, text=sample_text("manifold/error_404.RECONSTRUCTED.json"))

    return handler


def test_manifold_markets_page_with_before_cursor(sample, sample_text):
    markets = sample("manifold/markets_list.json")
    log = []
    client = manifold(manifold_handler(markets, sample_text), log)
    ids = [m["id"] for m in client.iter_markets(page_size=1000)]
    assert ids == [m["id"] for m in markets]
    befores = [r.url.params.get("before") for r in log]
    assert befores == [None, markets[4]["id"], markets[9]["id"], markets[12]["id"]]
    assert all(set(r.url.params.keys()) <= {"limit", "before"} for r in log)  # nothing unlisted is sent
    page = client.markets_page(limit=5)
    assert len(page.markets) == 5 and page.last_id == markets[4]["id"]


def test_manifold_search_bets_and_market(sample, sample_text):
    markets = sample("manifold/markets_list.json")
    bets = [dict(b, id=f"bet{i}", createdTime=1_700_000_000_000 + i, isFilled=True,
                 probAfter=0.5 + i / 100) for i, b in enumerate(sample("manifold/bets.official_doc.json") * 3)]
    log = []
    client = manifold(manifold_handler(markets, sample_text, bets), log)
    rows = client.search_markets("", filter="open", contract_type="BINARY", sort="24-hour-vol", limit=3)
    assert len(rows) == 3
    assert dict(log[-1].url.params) == {"term": "", "filter": "open", "contractType": "BINARY",
                                        "sort": "24-hour-vol", "limit": "3"}
    got = list(client.iter_bets("Tz5dA01GkK5QKiQfZeDL", page_size=4))
    assert [b["id"] for b in got] == [f"bet{i}" for i in range(6)]
    bet_requests = [r for r in log if r.url.path == "/v0/bets"]
    assert [r.url.params.get("after") for r in bet_requests] == [None, "bet3", "bet5"]
    assert all(r.url.params["order"] == "asc" and r.url.params["limit"] == "4" for r in bet_requests)
    history = client.probability_history("Tz5dA01GkK5QKiQfZeDL")
    assert [p.price for p in history] == [Price.of(0.5 + i / 100) for i in range(6)]
    vm = client.market("tQudZcEtlp")
    assert vm.market.kind is MarketKind.MULTI and len(vm.market.outcomes) == 6
    assert client.prob("9t61v9e7x4") == Price.of("0.62")
    assert client.probs(["9t61v9e7x4", "ZNlNdzz690"])["ZNlNdzz690"]["answer1"] == Price.of("0.67")
    with pytest.raises(VenueHTTPError) as info:
        client.get_market("missing")
    assert info.value.status == 404 and info.value.venue_message == "Contract not found"


def test_manifold_limits_are_checked(sample, sample_text):
    log = []
    client = manifold(manifold_handler([], sample_text), log)
    with pytest.raises(InvalidRequest):
        client.get_bets_page(contract_id="x", limit=5000)
    with pytest.raises(InvalidRequest):
        client.get_markets_page(limit=1001)
    with pytest.raises(InvalidRequest):
        client.search_markets(before_time=1, sort="score")
    with pytest.raises(InvalidRequest):
        client.get_market_probs([str(i) for i in range(101)])
    assert log == []
    # the transport's strict check answers an unknown key exactly like Manifold does
    with pytest.raises(VenueHTTPError) as info:
        client.http.get_json(f"{client.base_url}/markets", {"offset": 5})
    assert info.value.status == 400


def test_every_sample_file_is_exercised(samples_dir):
    """Each payload in ../shared/data/api-samples is named by at least one venue test."""
    sources = "".join(p.read_text(encoding="utf-8") for p in Path(__file__).parent.glob("test_*.py"))
    names = [p.name for p in samples_dir.rglob("*.json")]
    assert names, "no samples found"
    missing = [n for n in names if n not in sources]
    assert missing == []


def test_polymarket_outcomes_follow_token_order(sample_text):
    """The YES token is outcomes[0]'s, whatever its label."""
    body = json.loads(sample_text("polymarket/gamma_market_active_5m_updown.json"))
    client = polymarket(lambda r: httpx.Response(200, json=body), [])
    vm = client.market("1557558")
    tokens = json.loads(body["clobTokenIds"])
    assert vm.token_for(YES) == tokens[0] and vm.token_for(NO) == tokens[1]
