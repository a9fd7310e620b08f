"""A Polymarket sync that skips the parse of unchanged payloads stores exactly what a sync parsing every payload
stores: both run side by side, on two databases, over the real Gamma samples and mutations of them (1 % of
prices, activity figures and venue times moved, a description changed, a market resolved, a malformed payload,
a malformed activity figure, a new UTC day, an end date passing, a held market leaving the listing)."""

from __future__ import annotations

import copy
import json
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select, text
from sqlmodel import Session

from arena.clock import FixedClock, utc
from arena.domain.decision import Bet, Decision
from arena.domain.market import YES
from arena.domain.sizing import CohortRules
from arena.domain.universe import UniverseRules
from arena.money import Money
from arena.usecases import decide, sync
from arena.usecases.cohorts import LineupEntry, start_cohort
from arena.store.engine import make_engine, migrate, session_scope
from arena.store.tables import (
    FillRow,
    MarketRow,
    PriceSnapshotRow,
    ResolutionRow,
    SyncErrorRow,
    SyncRunRow,
)
from arena.venues import polymarket_parse
from arena.venues.polymarket import PolymarketClient

SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "api-samples" / "polymarket"
NOW = datetime(2025, 11, 16, 9, tzinfo=timezone.utc)
ALL = UniverseRules(top_n=10_000, horizon_days=36_500, exclude_keywords=())

pytestmark = pytest.mark.skipif(not SAMPLES.is_dir(), reason="../shared/data/api-samples is not available")


def iso(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def templates() -> list[dict]:
    load = lambda name: json.loads((SAMPLES / name).read_text(encoding="utf-8"))  # noqa: E731
    rows = load("gamma_markets_list_active.json")
    rows.append(load("gamma_market_active_5m_updown.json"))
    for event in load("gamma_events_list_active.json"):
        rows.extend(event["markets"])
    for name in ("gamma_market_closed_resolved_early_no.json", "gamma_market_closed_resolved_sports_moneyline.json"):
        rows.append(load(name))
    return rows


def listing(n: int = 48) -> list[dict]:
    """`n` markets cloned from the samples with their own ids; most open until after NOW (one ends on day 2),
    every fifth keeps its sample's dates (past end date, closed, no end date)."""
    base = templates()
    rows = []
    for i in range(n):
        row = copy.deepcopy(base[i % len(base)])
        row["id"] = str(3_000_000 + i)
        row["slug"] = f"{row.get('slug', 'm')}-{i}"
        if i % 5 and not row.get("closed"):
            row["endDate"] = iso(NOW + timedelta(days=20 + i))
            row["updatedAt"] = iso(NOW - timedelta(hours=2, minutes=i))
        rows.append(row)
    rows[1]["endDate"] = iso(NOW + timedelta(days=1, hours=2))  # passes its end date on the second day
    rows[2]["endDate"] = iso(NOW + timedelta(hours=2, minutes=30))  # and this one between two syncs of the first
    return rows


class Venue:
    """Gamma and the CLOB, scripted: the listing, markets by id; anything else is a 404."""

    def __init__(self) -> None:
        self.listing: list[dict] = []
        self.by_id: dict[str, dict] = {}

    def handler(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path == "/markets":
            offset = int(request.url.params.get("offset", "0") or 0)
            return httpx.Response(200, json=self.listing if offset == 0 else [])
        key = path.rsplit("/", 1)[-1]
        if request.url.host.startswith("gamma") and key in self.by_id:
            return httpx.Response(200, json=self.by_id[key])
        return httpx.Response(404, json={"error": "not found"})


@pytest.fixture
def engines(tmp_path, _pg_database):  # type: ignore[no-untyped-def]
    """Two fresh migrated databases: SQLite files, or two schemas of the session's PostgreSQL database."""
    urls = []
    for name in ("reuse", "full"):
        if _pg_database is None:
            urls.append(f"sqlite:///{tmp_path / name}.sqlite")
            continue
        schema = f"t_{uuid.uuid4().hex[:12]}"
        eng = make_engine(_pg_database.render_as_string(hide_password=False))
        with eng.begin() as c:
            c.execute(text(f'CREATE SCHEMA "{schema}"'))
        eng.dispose()
        urls.append(_pg_database.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(
            hide_password=False))
    out = [make_engine(u) for u in urls]
    for e in out:
        migrate(e)
    yield out
    for e in out:
        e.dispose()


class Parses:
    """Counts the Gamma payloads the sync parses."""

    def __init__(self, monkeypatch) -> None:  # type: ignore[no-untyped-def]
        self.count = 0
        real = polymarket_parse.parse_gamma_market

        def counted(raw, **kw):  # type: ignore[no-untyped-def]
            self.count += 1
            return real(raw, **kw)

        monkeypatch.setattr(polymarket_parse, "parse_gamma_market", counted)


def _utc_row(row: tuple) -> tuple:
    return tuple(utc(v) if isinstance(v, datetime) else v for v in row)


def stored(engine) -> dict[str, list[tuple]]:  # type: ignore[no-untyped-def]
    """Every row a sync writes, in id order, with the payload fingerprint left out (the full path keeps none)."""
    out = {}
    with Session(engine) as s:
        for table, order in ((MarketRow, "id"), (PriceSnapshotRow, "id"), (ResolutionRow, "id"),
                             (SyncRunRow, "id"), (SyncErrorRow, "id"), (FillRow, "id")):
            t = table.__table__  # type: ignore[attr-defined]
            cols = [c for c in t.c if c.name != "payload_hash"]
            out[t.name] = [_utc_row(tuple(r)) for r in s.execute(select(*cols).order_by(t.c[order]))]
    return out


def hold(engine, market_id: str, clock: FixedClock) -> None:  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        cohort, _ = start_cohort(s, clock.now(), CohortRules(), [LineupEntry("alice")], clock.now())

    class Once:
        name = "alice"

        def decide(self, view):  # type: ignore[no-untyped-def]
            return Decision((Bet(market_id, YES, Money.of(50)),))

    (result,) = decide.run_round(engine, cohort, {"alice": Once()}, "r1", clock.now())
    assert result.status == "executed", result


def test_skipping_unchanged_payloads_stores_what_parsing_every_payload_stores(engines, monkeypatch):
    reuse_db, full_db = engines
    venue = Venue()
    clock = FixedClock(NOW)
    client = PolymarketClient.with_transport(httpx.MockTransport(venue.handler), clock=clock, sleep=lambda s: None)
    parses = Parses(monkeypatch)
    rows = listing()

    def both(expect_parsed: int | None = None, rules: UniverseRules = ALL) -> sync.SyncReport:
        parses.count = 0
        reused = sync.sync_polymarket(reuse_db, client, clock, rules, candidates=1000)
        parsed_by_reuse = parses.count
        parses.count = 0
        full = sync.sync_polymarket(full_db, client, clock, rules, candidates=1000, reuse_unchanged=False)
        assert reused == full
        assert stored(reuse_db) == stored(full_db)
        assert parses.count >= len(venue.listing)  # the full path parses every listed payload
        if expect_parsed is not None:
            assert parsed_by_reuse == expect_parsed
        return reused

    venue.listing = rows
    first = both(expect_parsed=len(rows))
    assert first.ok > 20 and first.skipped > 0 and first.snapshots_added > 0

    # an hour later: the same payloads with other activity figures, volatile keys the parser ignores, and a
    # later updatedAt on some — nothing is parsed, nothing written
    clock.advance(timedelta(hours=1))
    tradable = [r for r in rows if not r.get("closed") and r.get("endDate", "") > iso(NOW + timedelta(days=2))]
    for i, r in enumerate(rows):
        r["volumeNum"] = float(r.get("volumeNum") or 0) + 1000 + i
        r["volume24hr"] = 50.0 + i
        r["lastTradePrice"] = 0.5
        if i % 3 == 0 and r in tradable:
            r["updatedAt"] = iso(clock.now() - timedelta(minutes=5))
    skipped_each_time = first.skipped + first.failed  # not stored, so parsed on every sync
    quiet = both(expect_parsed=skipped_each_time + first.filtered)
    assert (quiet.markets_changed, quiet.snapshots_added, quiet.resolutions_recorded) == (0, 0, 0)

    # an agent holds one market; 1 % of prices (here two markets) move, a description changes, one market
    # resolves and leaves the listing (the held one, refreshed by id), one payload is malformed, one has a
    # malformed activity figure
    held = tradable[0]
    for db in engines:
        hold(db, f"polymarket:{held['id']}", clock)
    clock.advance(timedelta(hours=1))
    later = iso(clock.now() - timedelta(minutes=1))
    for r in tradable[1:3]:
        r.update(outcomePrices='["0.4242", "0.5758"]', bestBid=0.42, bestAsk=0.4284, updatedAt=later)
    tradable[3]["description"] = "A rewritten resolution source."
    tradable[4]["outcomePrices"] = "[not json"
    tradable[5]["volumeNum"] = "lots"
    resolved = dict(held, closed=True, outcomePrices='["1", "0"]', umaResolutionStatus="resolved",
                    closedTime=later, updatedAt=later)
    venue.by_id[held["id"]] = resolved
    venue.listing = [r for r in rows if r is not held]
    changed = both()
    assert changed.failed == first.failed + 2 and changed.held_refreshed == 1
    assert changed.resolutions_recorded == 1 and changed.markets_changed == 2  # resolved + description
    assert changed.snapshots_added == 3  # two new prices and the resolved market's payout prices

    # the same again: the malformed payloads fail again, on both paths
    clock.advance(timedelta(hours=1))
    again = both()
    assert again.failed == changed.failed and again.snapshots_added == 0
    assert again.skipped == changed.skipped + 1  # rows[2]'s end date passed: a parse says so, unchanged or not

    # the venue re-opens the resolved market: it is back in the listing, unresolved, on both paths — and from
    # the second sync after that, taken without a parse again
    clock.advance(timedelta(minutes=20))
    venue.listing = rows
    reopened = both()
    assert reopened.resolutions_recorded == 1 and reopened.held_refreshed == 0
    for _ in range(2):
        clock.advance(timedelta(minutes=5))
        assert both().resolutions_recorded == 0

    # the next UTC day: every open market gets its daily snapshot (so each is parsed), one passed its end date
    clock.advance(timedelta(days=1))
    day = iso(clock.now() - timedelta(minutes=30))
    for r in rows:
        r["updatedAt"] = day
    next_day = both()
    assert next_day.snapshots_added >= again.ok - 1
    # and an hour after that, the payloads are unchanged again: only what is never stored is parsed
    clock.advance(timedelta(hours=1))
    settled = both()
    assert (settled.markets_changed, settled.snapshots_added) == (0, 0)
    # a narrower universe (a top 10 by 24 h volume) chooses the same markets on both paths
    clock.advance(timedelta(hours=1))
    for i, r in enumerate(rows):
        r["volume24hr"] = float((i * 37) % 101)
    narrow = both(rules=UniverseRules(top_n=10, horizon_days=36_500, exclude_keywords=()))
    assert narrow.ok == 10 and narrow.filtered > 0


def test_a_sync_holds_no_listed_head_once_it_is_read(engines, monkeypatch):
    # each head is read once (id, fingerprint, activity figures) and then forgotten by its entry, so a sync of
    # 10k markets does not keep 10k heads of ~40 fields alive; the second sync still takes every unchanged
    # payload without a parse
    reuse_db, _ = engines
    venue = Venue()
    venue.listing = listing()
    clock = FixedClock(NOW)
    client = PolymarketClient.with_transport(httpx.MockTransport(venue.handler), clock=clock, sleep=lambda s: None)
    seen: list = []
    real = client.iter_listed_markets

    def recorded(**kw):  # type: ignore[no-untyped-def]
        for entry in real(**kw):
            assert entry.head is not None  # the client yields it with its head
            seen.append(entry)
            yield entry

    monkeypatch.setattr(client, "iter_listed_markets", recorded)
    parses = Parses(monkeypatch)
    first = sync.sync_polymarket(reuse_db, client, clock, ALL, candidates=1000)
    assert len(seen) == len(venue.listing) and all(e.head is None for e in seen)
    seen.clear()
    parses.count = 0
    clock.advance(timedelta(minutes=15))
    second = sync.sync_polymarket(reuse_db, client, clock, ALL, candidates=1000)
    assert all(e.head is None for e in seen) and len(seen) == len(venue.listing)
    assert second.ok == first.ok and parses.count == first.skipped + first.failed + first.filtered


def test_the_payload_fingerprint_migration_upgrades_and_downgrades(engine):
    from sqlalchemy import inspect

    from arena.store.engine import current_revision

    columns = lambda: {c["name"] for c in inspect(engine).get_columns("markets")}  # noqa: E731
    assert "payload_hash" in columns()
    migrate(engine, "0010")
    assert current_revision(engine) == "0010" and "payload_hash" not in columns()
    migrate(engine)
    assert "payload_hash" in columns()


def test_stored_payloads_are_read_past_sqlalchemy_as_sqlalchemy_wrote_them(engine):
    # `repo.stored_payloads` reads the driver's cursor (times as SQLite's text, or PostgreSQL's timestamptz as
    # UTC text): what it returns is what was written, times aware UTC whatever the session's time zone; markets
    # without a fingerprint are left out; an id holding the separator PostgreSQL's ids are joined with is found
    from arena.domain.market import Market
    from arena.store import repo

    close = datetime(2026, 3, 1, 12, 30, 15, 250_000, tzinfo=timezone.utc)
    quoted = datetime(2025, 11, 16, 8, 59, 59, 999_999, tzinfo=timezone.utc)
    markets = [Market(id="polymarket:1", venue="polymarket", question="Rain? «50 mm»", close_time=close,
                      category="Weather"),
               Market(id="polymarket:2", venue="polymarket", question="Snow?", close_time=None),
               Market(id="polymarket:3", venue="polymarket", question="Hail?", close_time=close),
               Market(id="polymarket:4\x1f5", venue="polymarket", question="Sleet?", close_time=close)]
    with session_scope(engine) as s:
        repo.upsert_markets(s, markets, NOW, refresh={m.id: ("qh" + m.id[-1], quoted) for m in markets[:2]},
                            payload_hashes={"polymarket:1": "a" * 32, "polymarket:2": "b" * 32,
                                            "polymarket:4\x1f5": "c" * 32})
    wanted = ["polymarket:1", "polymarket:2", "polymarket:3", "polymarket:404"]
    with session_scope(engine) as s:
        if engine.dialect.name == "postgresql":
            s.execute(text("SET TIME ZONE 'Asia/Kolkata'"))
        got = repo.stored_payloads(s, wanted)
        odd = repo.stored_payloads(s, wanted + ["polymarket:4\x1f5"])
    assert got == {
        "polymarket:1": repo.StoredPayload("a" * 32, "qh1", quoted, "Rain? «50 mm»", "open", close, "Weather"),
        "polymarket:2": repo.StoredPayload("b" * 32, "qh2", quoted, "Snow?", "open", None, ""),
    }
    assert odd == {**got, "polymarket:4\x1f5": repo.StoredPayload("c" * 32, "", None, "Sleet?", "open", close, "")}
    assert all(t.tzinfo is not None and t.utcoffset() == timedelta(0)
               for p in got.values() for t in (p.quote_at, p.close_time) if t is not None)
