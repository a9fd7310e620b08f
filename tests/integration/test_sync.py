"""Venue syncs through an injected httpx transport on the real API samples (skipped without ../shared)."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select
from sqlmodel import Session

from arena.agents.baselines import AlwaysHalf
from arena.clock import FixedClock
from arena.domain.decision import Bet, Decision
from arena.domain.market import NO, YES
from arena.domain.sizing import CohortRules
from arena.domain.universe import UniverseRules
from arena.money import Money
from arena.usecases import decide, settle, sync
from arena.usecases.cohorts import LineupEntry, start_cohort
from arena.store.engine import session_scope
from arena.store.tables import FillRow, MarketRow, PriceSnapshotRow, ResolutionRow, SyncErrorRow, SyncRunRow
from arena.venues.manifold import ManifoldClient
from arena.venues.polymarket import PolymarketClient

SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "api-samples"
NOW = datetime(2025, 11, 16, tzinfo=timezone.utc)  # a Sunday before the sample markets' end dates

pytestmark = pytest.mark.skipif(not SAMPLES.is_dir(), reason="../shared/data/api-samples is not available")


def load(name: str):
    return json.loads((SAMPLES / name).read_text())


class Venue:
    """A scripted Gamma/CLOB/Manifold: routes by path, records requests, serves what the test sets."""

    def __init__(self):
        self.listing: object = []
        self.by_id: dict[str, object] = {}
        self.status: dict[str, int] = {}
        self.requests: list[httpx.Request] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        path = request.url.path
        if path in self.status:
            return httpx.Response(self.status[path], json={"error": "boom"})
        if path in ("/markets", "/search-markets", "/v0/search-markets"):
            offset = int(request.url.params.get("offset", "0") or 0)
            return httpx.Response(200, json=self.listing if offset == 0 else [])
        key = path.rsplit("/", 1)[-1]
        if key in self.by_id:
            return httpx.Response(200, json=self.by_id[key])
        return httpx.Response(404, json={"error": "not found"})


def pm_client(venue: Venue, clock) -> PolymarketClient:
    return PolymarketClient.with_transport(httpx.MockTransport(venue.handler), clock=clock, sleep=lambda s: None)


def count(engine, table) -> int:
    with Session(engine) as s:
        return int(s.scalar(select(func.count()).select_from(table)) or 0)


def test_polymarket_sync_records_universe_and_is_idempotent(engine):
    venue = Venue()
    venue.listing = load("polymarket/gamma_markets_list_active.json")
    clock = FixedClock(NOW)
    first = sync.sync_polymarket(engine, pm_client(venue, clock), clock, UniverseRules(horizon_days=60))
    # four listed: three close 2025-12-31 (inside 60 days), one has no end date (outside any horizon)
    assert (first.ok, first.failed, first.filtered + first.skipped) == (3, 0, 1)
    assert first.snapshots_added >= 3 and first.markets_changed == 3
    with Session(engine) as s:
        rows = s.scalars(select(MarketRow).order_by(MarketRow.id)).all()
        assert all(r.extra["token_ids"][YES] and r.extra["token_ids"][NO] for r in rows)
        assert all(r.id.startswith("polymarket:") for r in rows)
    again = sync.sync_polymarket(engine, pm_client(venue, clock), clock, UniverseRules(horizon_days=60))
    assert (again.ok, again.markets_changed, again.snapshots_added, again.resolutions_recorded) == (3, 0, 0, 0)
    assert count(engine, SyncRunRow) == 2


def test_one_bad_market_is_stored_with_reason_and_excerpt_and_never_stops_the_sync(engine):
    venue = Venue()
    good = load("polymarket/gamma_markets_list_active.json")
    bad = copy.deepcopy(good[0])
    bad["id"], bad["outcomePrices"] = "999", "[not json"
    venue.listing = [bad, *good[1:]]
    clock = FixedClock(NOW)
    report = sync.sync_polymarket(engine, pm_client(venue, clock), clock, UniverseRules(horizon_days=60))
    assert (report.ok, report.failed) == (2, 1)
    with Session(engine) as s:
        err = s.scalars(select(SyncErrorRow).where(SyncErrorRow.kind == "failed")).one()
        assert err.native_id == "999" and "outcomePrices" in (err.field + err.message)
        assert '"999"' in err.payload_excerpt
        run = s.scalars(select(SyncRunRow)).one()
        assert (run.status, run.ok, run.failed) == ("ok", 2, 1)


def test_a_rejected_market_is_stored_with_its_field_path_and_nothing_of_it_is_written(engine):
    venue = Venue()
    good = load("polymarket/gamma_markets_list_active.json")
    bad = copy.deepcopy(good[0])
    bad["id"], bad["outcomePrices"] = "998", '["0.5", "1.5"]'
    venue.listing = [*good[1:], bad]
    clock = FixedClock(NOW)
    report = sync.sync_polymarket(engine, pm_client(venue, clock), clock, UniverseRules(horizon_days=60))
    assert (report.ok, report.failed) == (2, 1)
    with Session(engine) as s:
        err = s.scalars(select(SyncErrorRow).where(SyncErrorRow.kind == "failed")).one()
        assert (err.native_id, err.field) == ("998", "outcomePrices[1]")
        assert err.message == "parse: outcomePrices[1]: price outside [0, 1]: '1.5'"  # as sync stores a ParseError
        assert s.get(MarketRow, "polymarket:998") is None
        assert not s.scalars(select(PriceSnapshotRow).where(PriceSnapshotRow.market_id == "polymarket:998")).all()


@pytest.mark.parametrize("failure", ["http_500", "not_a_list"])
def test_a_failed_fetch_writes_nothing_but_the_failed_run(engine, failure):
    venue = Venue()
    if failure == "http_500":
        venue.status["/markets"] = 500
    else:
        venue.listing = {"unexpected": "shape"}
    clock = FixedClock(NOW)
    report = sync.sync_polymarket(engine, pm_client(venue, clock), clock)
    assert report.status == "failed" and report.error
    assert count(engine, MarketRow) == 0 and count(engine, PriceSnapshotRow) == 0
    with Session(engine) as s:
        assert s.scalars(select(SyncRunRow)).one().status == "failed"
    if failure == "http_500":  # retried with backoff before giving up
        assert len([r for r in venue.requests if r.url.path == "/markets"]) > 1


def _hold_position_in(engine, market_id: str, outcome: str, clock) -> None:
    """An agent bets on `market_id` while it is open (the market must be in the store with a quote)."""
    with session_scope(engine) as s:
        cohort, _ = start_cohort(s, clock.now(), CohortRules(), [LineupEntry("alice")], clock.now())

    class Once:
        name = "alice"

        def decide(self, view):
            return Decision((Bet(market_id, outcome, Money.of(100)),))

    (out,) = decide.run_round(engine, cohort, {"alice": Once()}, "r1", clock.now())
    assert out.status == "executed", out


def _resolved_and_open() -> tuple[dict, dict]:
    """A resolved Gamma market (YES won) and the same market as it was listed while open."""
    resolved = load("polymarket/gamma_market_closed_resolved_accepting_orders_true.json")
    open_version = copy.deepcopy(resolved)
    open_version.update(closed=False, outcomePrices='["0.6", "0.4"]', umaResolutionStatus=None,
                        umaResolutionStatuses="[]", endDate="2025-12-31T00:00:00Z", active=True, archived=False,
                        acceptingOrders=True, enableOrderBook=True)
    open_version.pop("closedTime", None)
    return resolved, open_version


def test_an_unheld_forecast_set_market_is_followed_by_id_until_it_resolves(engine):
    venue = Venue()
    resolved, open_version = _resolved_and_open()
    venue.listing = [open_version]
    clock = FixedClock(NOW)
    mid = f"polymarket:{resolved['id']}"
    assert sync.sync_polymarket(engine, pm_client(venue, clock), clock).ok == 1
    with session_scope(engine) as s:
        cohort, _ = start_cohort(s, clock.now(), CohortRules(), [LineupEntry("half")], clock.now())
    (out,) = decide.run_round(engine, cohort, {"half": AlwaysHalf("half")}, "r1", clock.now(), forecast_k=5)
    assert out.status == "hold", out  # forecasts stated, no bet
    assert count(engine, FillRow) == 0 and sync.followed_market_ids(engine, "polymarket") == {mid: resolved["id"]}

    # it resolves and leaves the open listing; nobody holds it, yet it is re-read by id and its resolution kept
    venue.listing = []
    venue.by_id[resolved["id"]] = resolved
    clock.advance(timedelta(days=30))
    report = sync.sync_polymarket(engine, pm_client(venue, clock), clock)
    assert report.status == "ok" and report.held_refreshed == 1 and report.resolutions_recorded == 1
    assert sync.followed_market_ids(engine, "polymarket") == {}
    clock.advance(timedelta(hours=1))
    assert sync.sync_polymarket(engine, pm_client(venue, clock), clock).held_refreshed == 0  # followed no more


def test_a_followed_market_the_venue_no_longer_knows_fails_alone(engine):
    """A forecast-set market deleted at the venue (404 on its by-id read) is recorded as failed with the run;
    the rest of the sync is written."""
    venue = Venue()
    resolved, open_version = _resolved_and_open()
    venue.listing = [open_version]
    clock = FixedClock(NOW)
    assert sync.sync_polymarket(engine, pm_client(venue, clock), clock).ok == 1
    with session_scope(engine) as s:
        cohort, _ = start_cohort(s, clock.now(), CohortRules(), [LineupEntry("half")], clock.now())
    decide.run_round(engine, cohort, {"half": AlwaysHalf("half")}, "r1", clock.now(), forecast_k=5)
    venue.listing = []  # gone from the listing, and its by-id read answers 404 (not in venue.by_id)
    clock.advance(timedelta(days=1))
    report = sync.sync_polymarket(engine, pm_client(venue, clock), clock)
    assert report.status == "ok" and report.failed == 1, report
    with Session(engine) as s:
        (error,) = s.scalars(select(SyncErrorRow).where(SyncErrorRow.sync_run_id == report.run_id)).all()
    assert error.native_id == str(resolved["id"]) and "404" in error.message
    venue.status[f"/markets/{resolved['id']}"] = 503  # an outage is not a deletion: the sync fails and says why
    clock.advance(timedelta(hours=1))
    assert sync.sync_polymarket(engine, pm_client(venue, clock), clock).status == "failed"


def test_a_sync_killed_midway_is_recorded_abandoned_by_a_later_sync(engine):
    """A sync run left "running" by a killed process is marked abandoned by the venue's next sync an hour on;
    one still within the hour (maybe alive) is left alone."""
    clock = FixedClock(NOW)
    with session_scope(engine) as s:
        s.add(SyncRunRow(venue="polymarket", started_at=NOW - timedelta(hours=3), status="running"))
        s.add(SyncRunRow(venue="polymarket", started_at=NOW - timedelta(minutes=10), status="running"))
        s.add(SyncRunRow(venue="manifold", started_at=NOW - timedelta(hours=3), status="running"))
    venue = Venue()
    assert sync.sync_polymarket(engine, pm_client(venue, clock), clock).status == "ok"
    with Session(engine) as s:
        runs = {(r.venue, r.started_at.replace(tzinfo=timezone.utc)): r for r in s.scalars(select(SyncRunRow))}
    dead = runs[("polymarket", NOW - timedelta(hours=3))]
    assert dead.status == "abandoned" and "killed" in dead.error
    assert runs[("polymarket", NOW - timedelta(minutes=10))].status == "running"
    assert runs[("manifold", NOW - timedelta(hours=3))].status == "running"  # another venue's: its own sync's


def test_held_market_is_refreshed_after_leaving_the_universe_then_settled_and_re_settled(engine):
    venue = Venue()
    resolved, open_version = _resolved_and_open()
    venue.listing = [open_version]
    clock = FixedClock(NOW)
    mid = f"polymarket:{resolved['id']}"
    assert sync.sync_polymarket(engine, pm_client(venue, clock), clock).ok == 1
    _hold_position_in(engine, mid, YES, clock)

    # the market resolves and drops out of the open listing; the held position is refreshed by id
    venue.listing = []
    venue.by_id[resolved["id"]] = resolved
    clock.advance(timedelta(days=30))
    report = sync.sync_polymarket(engine, pm_client(venue, clock), clock)
    assert report.held_refreshed == 1 and report.resolutions_recorded == 1
    assert settle.settle_resolved(engine, clock.now()).settled == 1
    with Session(engine) as s:
        payout = s.scalars(select(FillRow).where(FillRow.kind == "settle")).one()
        buy = s.scalars(select(FillRow).where(FillRow.kind == "buy")).one()
        assert payout.cash_micros == buy.shares  # YES won: $1 per share

    # the venue un-resolves it (re-opened): the next sync records it and settlement is reversed
    venue.by_id[resolved["id"]] = open_version
    clock.advance(timedelta(days=1))
    assert sync.sync_polymarket(engine, pm_client(venue, clock), clock).resolutions_recorded == 1
    assert settle.settle_resolved(engine, clock.now()).reversed == 1
    with Session(engine) as s:
        assert [r.kind for r in s.scalars(select(ResolutionRow).order_by(ResolutionRow.version))] == [
            "winner", "unresolved"]


def test_manifold_sync_takes_binary_and_multiple_choice_and_skips_the_rest(engine):
    venue = Venue()
    listing = load("manifold/markets_list.json")
    venue.listing = listing
    full_mc = load("manifold/market_full_multiple_choice.RECONSTRUCTED.json")
    venue.by_id[full_mc["id"]] = full_mc
    for m in listing:  # multiple-choice rows need their full market for answers
        if m.get("outcomeType") == "MULTIPLE_CHOICE" and m["id"] != full_mc["id"]:
            venue.by_id[m["id"]] = {**full_mc, "id": m["id"], "isResolved": m.get("isResolved", False)}
    clock = FixedClock(datetime(2024, 1, 7, tzinfo=timezone.utc))
    client = ManifoldClient.with_transport(httpx.MockTransport(venue.handler), clock=clock, sleep=lambda s: None)
    report = sync.sync_manifold(engine, client, clock, UniverseRules(horizon_days=36500, exclude_keywords=()))
    assert report.status == "ok"
    assert report.ok + report.skipped + report.failed + report.filtered == len(listing)
    with Session(engine) as s:
        kinds = {e.native_id: e.message for e in s.scalars(select(SyncErrorRow))}
    polls = [m["id"] for m in listing if m.get("outcomeType") in ("POLL", "DATE", "MULTI_NUMERIC")]
    assert polls and all(p in kinds for p in polls)  # each skip stored with its reason


def test_replay_settlement_matches_every_recorded_resolution(engine, shared_dir):
    from arena.usecases import ingest
    from arena.venues.replay import ReplayVenue

    venue = ReplayVenue.from_path(shared_dir / "data" / "replay" / "replay_markets.jsonl")
    rules = CohortRules(starting_cash=Money.of(10_000_000), min_bet=Money.of(1), max_actions=10_000,
                        max_bet_fraction=Decimal("0.001"))
    start, end = venue.span()
    with session_scope(engine) as s:
        cohort, _ = start_cohort(s, start, rules, [LineupEntry("yes-to-all")], start)
    # every market is bought YES for $1 at the first moment it is visible, at its then-price
    ids = venue.market_ids()
    firsts: dict[datetime, list[str]] = {}
    for mid in ids:
        firsts.setdefault(venue.record(mid).listed_from, []).append(mid)
    for t in sorted(firsts):
        with session_scope(engine) as s:
            ingest.record_observations(s, t, [venue.market_at(m, t) for m in firsts[t]],
                                       [venue.quote_at(m, t) for m in firsts[t]])
        batch = [m for m in firsts[t] if venue.market_at(m, t).is_open_at(t)]

        class Buyer:
            name = "yes-to-all"

            def decide(self, view, batch=batch):
                return Decision(tuple(Bet(m, YES, Money.of(1)) for m in batch if view.market(m)))

        decide.run_round(engine, cohort, {"yes-to-all": Buyer()}, f"r{t:%Y%m%d}", t, concurrency=1)
    # at the end every resolution is visible; the sync refreshes the held markets and settlement follows
    clock = FixedClock(end + timedelta(days=2))
    report = sync.sync_replay(engine, venue, clock)
    assert report.status == "ok" and report.held_refreshed > 0
    settle.settle_resolved(engine, clock.now())
    with Session(engine) as s:
        fills = s.execute(select(FillRow.market_id, FillRow.kind, FillRow.shares, FillRow.cash_micros)).all()
    bought = {m: sh for m, k, sh, _ in fills if k == "buy"}
    paid = {m: (sh, cash) for m, k, sh, cash in fills if k == "settle"}
    assert len(bought) > 700 and set(paid) == set(bought)
    for m, shares in bought.items():
        won = venue.record(m).resolution == 1
        assert paid[m] == (-shares, shares if won else 0), m


def test_polymarket_orders_walk_the_book_and_fall_back_to_probability_without_one(engine):
    from arena.domain.book import OrderBook
    from arena.money import Price
    from arena.store.tables import RejectionRow
    from arena.venues.polymarket_parse import parse_book

    venue = Venue()
    venue.listing = load("polymarket/gamma_markets_list_active.json")[:3]
    clock = FixedClock(NOW)
    sync.sync_polymarket(engine, pm_client(venue, clock), clock, UniverseRules(horizon_days=60))
    deep = parse_book(load("polymarket/clob_book_2026_format.UNATTRIBUTED.json"))
    thin = OrderBook.of([(Price.of("0.40"), 100_000_000)], [(Price.of("0.50"), 100_000_000)])  # 100 shares a side
    with Session(engine) as s:
        m1, m2, m3 = [r.id for r in s.scalars(select(MarketRow).order_by(MarketRow.id))]
        tokens = {r.id: r.extra["token_ids"] for r in s.scalars(select(MarketRow))}
    # m1's YES token has the deep book, m3's the thin one; every other token answers "no orderbook"
    books = {tokens[m1][YES]: deep, tokens[m3][YES]: thin}
    with session_scope(engine) as s:
        cohort, _ = start_cohort(s, NOW, CohortRules(), [LineupEntry("a"), LineupEntry("b"), LineupEntry("c")], NOW)

    class Bets:
        def __init__(self, name, bets):
            self.name, self.bets = name, bets

        def decide(self, view):
            return Decision(tuple(self.bets))

    agents = {"a": Bets("a", [Bet(m1, YES, Money.of(100)), Bet(m2, YES, Money.of(100))]),
              "b": Bets("b", [Bet(m1, NO, Money.of(100))]),
              "c": Bets("c", [Bet(m3, YES, Money.of(60))])}  # 60 / 0.50 = 120 shares > 100 on the book
    out = {o.agent: o for o in decide.run_round(engine, cohort, agents, "r1", NOW, books=books.get)}
    assert (out["a"].status, out["b"].status, out["c"].status) == ("executed", "executed", "rejected")
    with Session(engine) as s:
        fills = s.scalars(select(FillRow)).all()
        reasons = [r.reason for r in s.scalars(select(RejectionRow))]
    a_m1 = next(f for f in fills if f.market_id == m1 and f.outcome == YES)
    a_m2 = next(f for f in fills if f.market_id == m2)
    b_m1 = next(f for f in fills if f.market_id == m1 and f.outcome == NO)
    best_ask, best_bid = deep.best_ask.ppm, deep.best_bid.ppm
    assert a_m1.provenance == "clob_book" and a_m1.price_ppm >= best_ask
    assert a_m1.mid_ppm == (best_ask + best_bid) // 2 or abs(a_m1.mid_ppm - (best_ask + best_bid) / 2) <= 1
    assert a_m1.price_ppm - a_m1.mid_ppm >= 0  # the slippage against the mid is recorded and never negative
    assert a_m2.provenance == "venue_probability:no_book"  # Polymarket without a book: the fallback says why
    assert b_m1.provenance == "clob_book" and b_m1.price_ppm >= 1_000_000 - best_bid  # NO asks = 1 − YES bids
    assert reasons == ["insufficient_depth"] and not [f for f in fills if f.market_id == m3]
