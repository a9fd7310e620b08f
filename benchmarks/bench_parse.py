"""Benchmark: parsing 10k Gamma markets, and the rate limiter's throughput for a simulated sync.

Run: ``.venv/bin/python benchmarks/bench_parse.py [--n 10000]``

1. Parsing. 10k Gamma market objects are made by cloning the real samples in ``../shared/data/api-samples``
   with fresh ids, condition ids and token ids (or, when ../shared is absent, synthetic markets of the same
   shape). The JSON text of 100-market pages is decoded and parsed with ``parse_gamma_markets``; decode and
   parse are timed separately. (The goal for the whole ingest is parse + upsert of 10k ≤ 2 s on SQLite; the
   upsert belongs to the store and is not timed here.) 10k Manifold LiteMarkets are timed the same way.
2. Rate limits. A sequential sync is simulated through ``VenueHTTP`` with an ``httpx.MockTransport`` and an
   injected monotonic clock whose ``sleep`` only advances time, so the figures are what the default limits
   would allow against the real hosts (network latency excluded): requests per minute per endpoint, and the
   busiest 10 s (Polymarket) or 60 s (Manifold) window compared with the published limit.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.venues.http import VenueHTTP  # noqa: E402
from arena.venues.manifold_parse import parse_manifold_markets  # noqa: E402
from arena.venues.polymarket_parse import parse_gamma_markets  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "api-samples"
FETCHED_AT = datetime(2026, 11, 1, tzinfo=timezone.utc)


def gamma_templates() -> tuple[list[dict], str]:
    pm = SHARED / "polymarket"
    if not pm.is_dir():
        return [synthetic_gamma(i) for i in range(4)], "synthetic (../shared absent)"
    rows = json.loads((pm / "gamma_markets_list_active.json").read_text(encoding="utf-8"))
    for name in ("gamma_market_active_5m_updown.json", "gamma_market_closed_resolved_early_no.json",
                 "gamma_market_closed_resolved_accepting_orders_true.json",
                 "gamma_market_closed_resolved_sports_moneyline.json"):
        rows.append(json.loads((pm / name).read_text(encoding="utf-8")))
    for event in json.loads((pm / "gamma_events_list_active.json").read_text(encoding="utf-8")):
        rows.extend(event["markets"])
    return rows, f"{len(rows)} real samples from {pm}"


def synthetic_gamma(i: int) -> dict:
    p = (i % 97 + 1) / 100
    return {
        "id": str(500000 + i), "question": f"Synthetic question {i}?", "conditionId": "0x" + f"{i:064x}",
        "slug": f"synthetic-{i}", "outcomes": '["Yes", "No"]', "outcomePrices": json.dumps([str(p), str(1 - p)]),
        "clobTokenIds": json.dumps([str(10**76 + 2 * i), str(10**76 + 2 * i + 1)]), "active": True,
        "closed": False, "enableOrderBook": True, "acceptingOrders": True, "marketMakerAddress": "",
        "endDate": "2026-12-31T12:00:00Z", "updatedAt": "2026-10-31T18:05:29.330507Z", "volumeNum": 1000.5,
        "bestBid": p - 0.01 if p > 0.01 else 0, "bestAsk": min(1, p + 0.01), "umaResolutionStatuses": "[]",
    }


def make_gamma(n: int) -> tuple[list[dict], str]:
    templates, origin = gamma_templates()
    rng = random.Random(42)
    rows = []
    for i in range(n):
        row = copy.deepcopy(templates[i % len(templates)])
        row["id"] = str(2_000_000 + i)
        row["conditionId"] = "0x" + f"{rng.getrandbits(256):064x}"
        row["slug"] = f"{row.get('slug', 'm')}-{i}"
        row["clobTokenIds"] = json.dumps([str(rng.getrandbits(255)), str(rng.getrandbits(255))])
        rows.append(row)
    return rows, origin


def make_manifold(n: int) -> tuple[list[dict], str]:
    path = SHARED / "manifold" / "markets_list.json"
    if not path.is_file():
        base = [{"id": "x", "question": "Q?", "outcomeType": "BINARY", "mechanism": "cpmm-1", "probability": 0.5,
                 "isResolved": False, "createdTime": 1769880482878, "closeTime": 1800000000000, "volume": 1}]
        origin = "synthetic"
    else:
        base = json.loads(path.read_text(encoding="utf-8"))
        origin = f"{len(base)} real samples"
    rows = []
    for i in range(n):
        row = copy.deepcopy(base[i % len(base)])
        row["id"] = f"bench{i:06d}"
        rows.append(row)
    return rows, origin


def bench_gamma(n: int) -> None:
    rows, origin = make_gamma(n)
    pages = [json.dumps(rows[i:i + 100]) for i in range(0, len(rows), 100)]
    t0 = time.perf_counter()
    decoded = [json.loads(text) for text in pages]
    t1 = time.perf_counter()
    parsed = rejected = 0
    tradable = resolved = 0
    for page in decoded:
        ok, bad = parse_gamma_markets(page, fetched_at=FETCHED_AT)
        parsed += len(ok)
        rejected += len(bad)
        tradable += sum(vm.tradable for vm in ok)
        resolved += sum(vm.resolution is not None for vm in ok)
    t2 = time.perf_counter()
    print(f"Gamma markets: {n:,} built from {origin}")
    print(f"  json decode  {t1 - t0:7.3f} s")
    print(f"  parse        {t2 - t1:7.3f} s  = {1e6 * (t2 - t1) / n:6.1f} µs/market, {n / (t2 - t1):,.0f} markets/s")
    print(f"  total        {t2 - t0:7.3f} s  ({parsed:,} parsed, {rejected} rejected, {tradable:,} tradable, "
          f"{resolved:,} resolved)")
    vms = [vm for page in decoded for vm in parse_gamma_markets(page, fetched_at=FETCHED_AT)[0]]
    upsert, naive = bench_upsert(vms)
    print(f"  upsert (set-based ingest, one transaction, SQLite)  {upsert:7.3f} s")
    print(f"  parse + upsert                                      {t2 - t0 + upsert:7.3f} s  [goal <= 2 s]")
    print(f"  naive upsert (row by row, a transaction per market) {naive:7.3f} s  -> {naive / upsert:.0f}x slower")


def bench_upsert(vms: list) -> tuple[float, float]:
    """Time the sync's write path on 10k parsed markets, and a naive per-market ORM path, each on a fresh
    SQLite file; then check that a second ingest of the same markets changes nothing."""
    import tempfile

    from arena.services import ingest
    from arena.store import repo
    from arena.store.engine import make_engine, migrate, session_scope

    markets = [vm.market for vm in vms]
    quotes = [vm.quote for vm in vms if vm.quote is not None]
    resolutions = [(vm.market.id, vm.resolution) for vm in vms]
    with tempfile.TemporaryDirectory() as d:
        fast = make_engine(f"sqlite:///{d}/fast.sqlite")
        migrate(fast)
        t = time.perf_counter()
        with session_scope(fast) as s:
            ingest.record_observations(s, FETCHED_AT, markets, quotes, resolutions)
        upsert = time.perf_counter() - t
        with session_scope(fast) as s:
            again = ingest.record_observations(s, FETCHED_AT, markets, quotes, resolutions)
        assert (again.markets_changed, again.snapshots_added, again.resolutions_recorded) == (0, 0, 0)
        slow = make_engine(f"sqlite:///{d}/naive.sqlite")
        migrate(slow)
        t = time.perf_counter()
        by_id = {q.market_id: q for q in quotes}
        for m, (_, res) in zip(markets, resolutions):
            with session_scope(slow) as s:
                repo.upsert_market(s, m, FETCHED_AT)
                s.flush()
                if m.id in by_id:
                    repo.add_quote(s, by_id[m.id], FETCHED_AT)
                repo.record_resolution(s, m.id, res, FETCHED_AT)
        naive = time.perf_counter() - t
    return upsert, naive


def bench_manifold(n: int) -> None:
    rows, origin = make_manifold(n)
    t0 = time.perf_counter()
    page = parse_manifold_markets(rows, fetched_at=FETCHED_AT)
    t1 = time.perf_counter()
    print(f"Manifold LiteMarkets: {n:,} built from {origin}")
    print(f"  parse        {t1 - t0:7.3f} s  = {1e6 * (t1 - t0) / n:6.1f} µs/market "
          f"({len(page.markets):,} parsed, {len(page.skipped):,} unsupported skipped, {len(page.rejected)} rejected)")


class SimClock:
    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def busiest(stamps: list[float], window: float) -> int:
    best = j = 0
    for i, t in enumerate(stamps):
        while stamps[j] <= t - window:
            j += 1
        best = max(best, i - j + 1)
    return best


def bench_rate_limits() -> None:
    clock = SimClock()
    stamps: dict[str, list[float]] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        key = f"{request.url.host}{'/markets' if request.url.path.startswith('/markets') else request.url.path}"
        stamps.setdefault(key, []).append(clock.now)
        return httpx.Response(200, json=[])

    http = VenueHTTP(transport=httpx.MockTransport(handler), sleep=clock.sleep, monotonic=clock.monotonic,
                     rng=random.Random(0))
    plan = [
        ("https://gamma-api.polymarket.com/markets?limit=100", 1000, 300, 10),
        ("https://clob.polymarket.com/book?token_id=1", 5000, 1500, 10),
        ("https://clob.polymarket.com/prices-history?market=1&interval=1d&fidelity=60", 3000, 1000, 10),
        ("https://api.manifold.markets/v0/markets?limit=1000", 1000, 500, 60),
    ]
    print("Rate limiter, sequential simulated sync (injected clock; no network latency):")
    for url, count, published, window in plan:
        start = clock.now
        for _ in range(count):
            http.get_json(url)
        elapsed = clock.now - start
        key = next(k for k in stamps if url.split("//", 1)[1].startswith(k.split("?")[0]))
        ts = stamps[key]
        rpm = 60 * (len(ts) - 1) / (ts[-1] - ts[0]) if ts[-1] > ts[0] else float("inf")
        print(f"  {key:42s} {count:5d} req in {elapsed:7.1f} s sim → {rpm:8,.0f} req/min; busiest {window:2d} s "
              f"window {busiest(ts, window):5d} (published {published}/{window} s)")
    print(f"  total simulated sleep {http.stats.slept:,.1f} s over {http.stats.requests:,} requests, "
          f"{http.stats.rate_limited_waits:,} waits, {http.stats.retries} retries")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="markets to parse (default 10,000)")
    args = parser.parse_args(argv)
    bench_gamma(args.n)
    bench_manifold(args.n)
    bench_rate_limits()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
