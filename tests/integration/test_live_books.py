"""Executable prices live: the decision_round job fetches each traded Polymarket market's CLOB book once per
round, through the venue client, on the recorded book payloads served by an injected httpx transport, and
fills walk it; markets without a book fall back with the reason in the provenance (skipped without ../shared)."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select
from sqlmodel import Session

from arena.clock import FixedClock
from arena.config import default_config
from arena.domain.decision import Bet, Decision
from arena.domain.market import NO, YES
from arena.domain.sizing import CohortRules
from arena.domain.universe import UniverseRules
from arena.money import Money
from arena.usecases import lifecycle, sync
from arena.usecases.cohorts import LineupEntry, start_cohort
from arena.store.engine import session_scope
from arena.store.tables import AgentRow, FillRow, MarketRow, PriceSnapshotRow
from arena.venues.polymarket import PolymarketClient
from arena.venues.polymarket_parse import parse_book
from arena.jobs import runtime
from arena.jobs.scheduler import run_now

SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "api-samples" / "polymarket"
NOW = datetime(2025, 11, 16, 0, 5, tzinfo=timezone.utc)  # a Sunday before the sample markets' end dates

pytestmark = pytest.mark.skipif(not SAMPLES.is_dir(), reason="../shared/data/api-samples is not available")


def load(name: str):  # type: ignore[no-untyped-def]
    return json.loads((SAMPLES / name).read_text(encoding="utf-8"))


class Clob:
    """Gamma's listing and the CLOB's /book, as recorded: a book, "no orderbook" or an outage per token."""

    def __init__(self) -> None:
        self.books: dict[str, tuple[int, object]] = {}
        self.book_requests: list[str] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/markets":
            offset = int(request.url.params.get("offset", "0") or 0)
            return httpx.Response(200, json=load("gamma_markets_list_active.json")[:3] if offset == 0 else [])
        if request.url.path == "/book":
            token = request.url.params["token_id"]
            self.book_requests.append(token)
            status, body = self.books.get(token, (404, load("clob_book_error_404.RECONSTRUCTED.json")))
            return httpx.Response(status, json=body)
        return httpx.Response(404, json={"error": "not found"})


class Bets:
    def __init__(self, name: str, bets: list[Bet]) -> None:
        self.name, self.bets = name, bets

    def decide(self, view):  # type: ignore[no-untyped-def]
        return Decision(tuple(self.bets))


@pytest.fixture
def arena(engine, monkeypatch):  # type: ignore[no-untyped-def]
    clob = Clob()
    clock = FixedClock(NOW)
    client = PolymarketClient.with_transport(httpx.MockTransport(clob.handler), clock=clock, sleep=lambda s: None)
    sync.sync_polymarket(engine, client, clock, UniverseRules(horizon_days=60))
    with Session(engine) as s:
        m1, m2, m3 = [r.id for r in s.scalars(select(MarketRow).order_by(MarketRow.id))]
        tokens = {r.id: r.extra["token_ids"] for r in s.scalars(select(MarketRow))}
    clob.books = {tokens[m1][YES]: (200, load("clob_book_2026_format.UNATTRIBUTED.json")),
                  tokens[m3][YES]: (503, {"error": "service unavailable"})}
    with session_scope(engine) as s:
        start_cohort(s, NOW, CohortRules(), [LineupEntry(n) for n in "abc"], NOW)
    seats = {"a": Bets("a", [Bet(m1, YES, Money.of(100)), Bet(m2, YES, Money.of(100))]),
             "b": Bets("b", [Bet(m1, NO, Money.of(100))]),
             "c": Bets("c", [Bet(m1, YES, Money.of(50)), Bet(m3, YES, Money.of(100))])}
    monkeypatch.setattr(lifecycle, "build_agent", lambda row, *a, **k: seats[row.name])
    return clob, client, clock, (m1, m2, m3), tokens


def fills_by(engine):  # type: ignore[no-untyped-def]
    with Session(engine) as s:
        names = {a.id: a.name for a in s.scalars(select(AgentRow))}
        return {(names[f.agent_id], f.market_id, f.outcome): f for f in s.scalars(select(FillRow))}


def test_the_round_walks_live_books_fetched_once_per_market(engine, arena):
    clob, client, clock, (m1, m2, m3), tokens = arena
    runtime.configure(runtime.Runtime(engine, clock, config=default_config(), clients={"polymarket": client},
                                      live_books=True))
    out = run_now("decision_round")
    assert out.status == "ok" and out.counts["pending"] == 0
    # three agents trade m1 concurrently: one fetch of its YES book (the NO book is its complement);
    # m2 has no book (404) and m3's endpoint is down (retried by the client, but one fetch for the round)
    requested = Counter(clob.book_requests)
    assert requested[tokens[m1][YES]] == 1 and requested[tokens[m2][YES]] == 1
    assert set(requested) == {tokens[m][YES] for m in (m1, m2, m3)}
    book = parse_book(load("clob_book_2026_format.UNATTRIBUTED.json"))
    fills = fills_by(engine)
    for key in (("a", m1, YES), ("c", m1, YES), ("b", m1, NO)):
        f = fills[key]
        assert f.provenance == "clob_book" and f.price_ppm is not None and f.mid_ppm is not None
        assert f.price_ppm - f.mid_ppm >= 0  # slippage against the mid is recorded, never negative
    assert fills[("a", m1, YES)].price_ppm >= book.best_ask.ppm
    assert fills[("a", m1, YES)].mid_ppm == book.mid.ppm
    assert fills[("b", m1, NO)].price_ppm >= 1_000_000 - book.best_bid.ppm  # NO asks = 1 − YES bids
    with Session(engine) as s:
        quoted = {r.market_id: r.price_ppm for r in s.scalars(select(PriceSnapshotRow).where(
            PriceSnapshotRow.outcome == YES))}
    assert fills[("a", m2, YES)].provenance == "venue_probability:no_book"
    assert fills[("a", m2, YES)].price_ppm == quoted[m2]
    assert fills[("c", m3, YES)].provenance == "venue_probability:book_unavailable"
    assert fills[("c", m3, YES)].price_ppm == quoted[m3]


def test_a_simulated_clock_never_sees_todays_book(engine, arena):
    clob, client, clock, (m1, m2, m3), tokens = arena
    runtime.configure(runtime.Runtime(engine, clock, config=default_config(), clients={"polymarket": client}))
    assert run_now("decision_round").status == "ok"
    assert clob.book_requests == []
    assert {f.provenance for f in fills_by(engine).values()} == {"venue_probability"}
