"""Sync: bring a venue's markets, prices and resolutions into the store, idempotently.

Fetching and parsing happen first and write nothing; one bad market is skipped (unsupported or not
tradable) or failed (malformed), with the reason and an excerpt of its payload stored, and never stops the
sync. Then everything that parsed is written in one transaction with the run's counts, so a sync over bad
payloads writes nothing partial. Markets the agents hold are always refreshed, even after they leave the
universe, so they are marked and settled; so is every market of a forecast set until it resolves, held or not,
so that its questions are scored.

A Polymarket payload whose fingerprint (`venues.fingerprint`) is the one stored with its market is not parsed
when parsing it could change nothing: the market is open and still before its end date, and its quote would
not be stored (same prices — vouched for by the fingerprint — and the same UTC day as the last snapshot). It
joins the universe selection with its stored fields and today's activity figures, and the sync's result —
rows, snapshots, resolutions, errors, counts — is the one a full parse gives (tests/integration/
test_sync_reuse.py runs both). Everything else is parsed, so a malformed payload fails on every sync. The
listing is read as its entries' JSON bytes (`PolymarketClient.iter_listed_markets`): a head of each is decoded
for the fingerprint, the whole entry only when it is parsed.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import islice
from typing import Any, NamedTuple

from sqlalchemy import func, select, update
from sqlalchemy.engine import Engine
from sqlmodel import col

from arena.clock import Clock
from arena.domain.market import Market, MarketStatus, Quote, Resolution
from arena.domain.universe import UniverseRules
from arena.domain.universe import select as select_universe
from arena.errors import ArenaError, ParseError
from arena.usecases import ingest
from arena.store import repo
from arena.store.engine import session_scope
from arena.store.tables import FillRow, ForecastQuestionRow, MarketRow, PriceSnapshotRow, SyncErrorRow, SyncRunRow
from arena.venues import UnsupportedMarket
from arena.venues.fingerprint import gamma_fingerprint, gamma_volatile
from arena.venues.listing import Listed, decoded

EXCERPT = 2_000  # characters of a bad payload kept with its error


@dataclass
class SyncReport:
    venue: str
    ok: int = 0
    skipped: int = 0
    failed: int = 0
    filtered: int = 0  # well-formed and tradable, but outside the universe rules
    held_refreshed: int = 0  # re-read by id: held (or recently settled) markets, and unlisted forecast-set ones
    followed_refreshed: int = 0  # forecast-set markets the listing gave but the universe rules left out
    markets_changed: int = 0
    snapshots_added: int = 0
    resolutions_recorded: int = 0
    run_id: int | None = None
    status: str = "ok"
    error: str = ""

    def line(self) -> str:
        return (f"{self.venue}: ok {self.ok}, skipped {self.skipped}, failed {self.failed}, "
                f"filtered {self.filtered}, held refreshed {self.held_refreshed}"
                + (f", followed {self.followed_refreshed}" if self.followed_refreshed else "") + "; "
                f"{self.markets_changed} markets changed, {self.snapshots_added} snapshots, "
                f"{self.resolutions_recorded} resolution changes")


@dataclass
class _Batch:
    """What one sync will write, gathered before anything is written."""

    markets: dict[str, Market] = field(default_factory=dict)
    quotes: list[Quote] = field(default_factory=list)
    resolutions: list[tuple[str, Resolution | None]] = field(default_factory=list)
    extras: dict[str, dict] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)
    unchanged: set[str] = field(default_factory=set)  # taken without a parse: nothing of theirs to write
    payload_hashes: dict[str, str] = field(default_factory=dict)  # market id → fingerprint of what was parsed

    def take(self, vm: Any, extra: dict | None = None) -> None:
        m = vm.market
        self.markets[m.id] = m
        if vm.quote is not None:
            self.quotes.append(vm.quote)
        self.resolutions.append((m.id, vm.resolution))
        if extra:
            self.extras[m.id] = extra

    def keep(self, u: _Unchanged) -> None:
        """Take a market whose payload is unchanged: nothing of it can change. Not even its resolution: the
        parse of an open market says None, and a stored fingerprint means the latest recorded resolution
        already is None (`repo.record_resolutions` clears the fingerprint of a market it records a version of)."""
        self.unchanged.add(u.market.id)

    def has(self, market_id: str) -> bool:
        return market_id in self.markets or market_id in self.unchanged

    def error(self, kind: str, native_id: str, exc: Exception | str, raw: Any = None) -> None:
        fld = getattr(exc, "field", "") if isinstance(exc, Exception) else ""
        reason = getattr(exc, "reason", "") if isinstance(exc, ArenaError) else ""
        message = str(exc) if not reason or reason in str(exc) else f"{reason}: {exc}"
        self.errors.append(dict(kind=kind, native_id=str(native_id)[:200], field=fld[:200], message=message,
                                payload_excerpt=_excerpt(raw) if kind == "failed" else ""))


def _excerpt(raw: Any) -> str:
    try:
        text = json.dumps(raw, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(raw)
    return text[:EXCERPT]


REWATCH = timedelta(days=30)


def held_market_ids(engine: Engine, venue: str, now: datetime | None = None,
                    rewatch: timedelta = REWATCH) -> dict[str, str]:
    """arena id → native id of the venue's markets to refresh whatever the universe says: those in which
    some agent still holds shares, and those settled within `rewatch` of `now` — a venue may un-resolve or
    re-resolve a market after it settled, and only a refresh can notice."""
    with session_scope(engine) as s:
        held = (select(FillRow.market_id).group_by(FillRow.agent_id, FillRow.market_id, FillRow.outcome)
                .having(func.sum(FillRow.shares) > 0))
        ids = set(s.scalars(held))
        if now is not None:
            settled = select(FillRow.market_id).where(
                col(FillRow.kind).in_(("settle", "refund", "reversal")),
                FillRow.at >= now - rewatch).distinct()
            ids |= set(s.scalars(settled))
        if not ids:
            return {}
        rows = s.execute(select(MarketRow.id, MarketRow.native_id)
                         .where(col(MarketRow.venue) == venue, col(MarketRow.id).in_(sorted(ids)))).all()
    return {mid: native for mid, native in rows}


def followed_market_ids(engine: Engine, venue: str) -> dict[str, str]:
    """arena id → native id of the venue's forecast-set markets (`forecast_questions`) not yet resolved: their
    questions are scored on the resolution, so sync follows them until it comes, whether or not anyone holds
    them or the universe still lists them."""
    with session_scope(engine) as s:
        rows = s.execute(select(MarketRow.id, MarketRow.native_id)
                         .where(MarketRow.venue == venue, MarketRow.status != MarketStatus.RESOLVED.value,
                                col(MarketRow.id).in_(select(ForecastQuestionRow.market_id)))
                         .order_by(MarketRow.id)).all()
    return {mid: native for mid, native in rows}


STALE_SYNC = timedelta(hours=1)  # far beyond any sync's length: a run still "running" after it is dead

# A market re-read by id that the venue says is gone fails alone (recorded with the run); any other error status
# still fails the sync, which retries it whole.
GONE = frozenset({404, 410})


def _to_refresh(engine: Engine, venue: str, now: datetime, batch: _Batch, report: SyncReport,
                listed: dict[str, Any], seen: set[str], take: Callable[[Any], None]) -> dict[str, str]:
    """What the sync re-reads by id: the held markets (`held_market_ids`) and the followed ones
    (`followed_market_ids`) it has not already got. A followed market the listing parsed but the universe rules
    left out is taken from the listing (`take`); one the listing showed but could not use (malformed, not
    tradable) is not re-read — its payload was this sync's; the rest are re-read by id."""
    refresh = {mid: native for mid, native in held_market_ids(engine, venue, now).items() if not batch.has(mid)}
    for mid, native in followed_market_ids(engine, venue).items():
        if mid in refresh or batch.has(mid):
            continue
        vm = listed.get(mid)
        if vm is not None and vm.tradable:
            take(vm)
            report.followed_refreshed += 1
        elif mid not in seen:
            refresh[mid] = native
    return refresh


def _parse_one(batch: _Batch, raw: Any, parse: Callable[[Any], Any], report: SyncReport) -> Any | None:
    native = str(raw.get("id", "?")) if isinstance(raw, dict) else "?"
    try:
        return parse(raw)
    except UnsupportedMarket as exc:
        report.skipped += 1
        batch.error("skipped", native, exc)
    except ParseError as exc:
        report.failed += 1
        batch.error("failed", native, exc, raw)
    return None


# Texts the schema stores unbounded, bounded here: a market that exceeds them is refused, not stored whole.
MAX_QUESTION_CHARS = 4_000
MAX_DESCRIPTION_CHARS = 200_000
MAX_LABEL_CHARS = 1_000


def _limit(table: Any, column: str) -> int:
    return int(table.__table__.c[column].type.length)


def oversized(m: Market) -> tuple[str, str] | None:
    """(field, problem) when a market has a text longer than its column holds (the schema's own lengths, which
    SQLite does not enforce and PostgreSQL refuses the whole write over) or than the bounds above; else None."""
    native = m.id.split(":", 1)[1] if ":" in m.id else m.id
    checks = [("native_id", native, _limit(MarketRow, "native_id")), ("id", m.id, _limit(MarketRow, "id")),
              ("venue", m.venue, _limit(MarketRow, "venue")), ("url", m.url, _limit(MarketRow, "url")),
              ("category", m.category, _limit(MarketRow, "category")),
              ("group_id", m.group_id, _limit(MarketRow, "group_id")),
              ("question", m.question, MAX_QUESTION_CHARS), ("description", m.description, MAX_DESCRIPTION_CHARS)]
    checks += [("outcomes", o, _limit(PriceSnapshotRow, "outcome")) for o in m.outcomes]
    checks += [("outcome_labels", o, MAX_LABEL_CHARS) for o in m.outcome_labels]
    for name, value, limit in checks:
        if value is not None and len(value) > limit:
            return name, f"{len(value):,} characters, more than the {limit:,} stored"
    return None


def _drop_oversized(report: SyncReport, batch: _Batch) -> None:
    """Refuse the batch's markets that do not fit the schema: each a failed market with its reason, the rest
    written as usual."""
    for mid in [mid for mid, m in batch.markets.items() if oversized(m) is not None]:
        name, problem = oversized(batch.markets.pop(mid))  # type: ignore[misc]
        batch.quotes = [q for q in batch.quotes if q.market_id != mid]
        batch.resolutions = [(i, r) for i, r in batch.resolutions if i != mid]
        batch.extras.pop(mid, None)
        batch.payload_hashes.pop(mid, None)
        report.ok = max(0, report.ok - 1)
        report.failed += 1
        batch.error("failed", mid.split(":", 1)[-1], ParseError(problem, field=name))


def _write(engine: Engine, report: SyncReport, batch: _Batch, now: datetime, finished: datetime) -> SyncReport:
    _drop_oversized(report, batch)
    with session_scope(engine) as s:
        counts = ingest.record_observations(s, now, batch.markets.values(), batch.quotes, batch.resolutions,
                                            batch.extras, batch.payload_hashes)
        run = s.get(SyncRunRow, report.run_id)
        assert run is not None
        for e in batch.errors:
            s.add(SyncErrorRow(sync_run_id=run.id, venue=report.venue, at=now, **e))
        report.markets_changed = counts.markets_changed
        report.snapshots_added = counts.snapshots_added
        report.resolutions_recorded = counts.resolutions_recorded
        run.status, run.finished_at = "ok", finished
        run.ok, run.skipped, run.failed = report.ok, report.skipped, report.failed
        run.markets_changed, run.snapshots_added = counts.markets_changed, counts.snapshots_added
        run.resolutions_recorded = counts.resolutions_recorded
        s.add(run)
    return report


@contextmanager
def paused_gc() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a sync builds and writes its batch: the batch makes
    millions of small acyclic objects (decoded payloads, parsed markets), and each full collection walks all
    of them, so a batch ten times larger cost far more than ten times as much to decode and parse. Reference
    counting still frees everything; one collection runs at the end."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _run(engine: Engine, venue: str, clock: Clock, gather: Callable[[_Batch, SyncReport, datetime], None]) -> SyncReport:
    now = clock.now()
    report = SyncReport(venue)
    with session_scope(engine) as s:
        # A sync of this venue still "running" long after it started was stopped with its process (a kill):
        # record it as such, so the operations page does not show it running forever.
        s.execute(update(SyncRunRow)
                  .where(col(SyncRunRow.venue) == venue, col(SyncRunRow.status) == "running",
                         col(SyncRunRow.started_at) < now - STALE_SYNC)
                  .values(status="abandoned", finished_at=now,
                          error="abandoned: its process stopped before the sync finished (killed or crashed); "
                                "nothing of it was written"))
        run = SyncRunRow(venue=venue, started_at=now, status="running")
        s.add(run)
        s.flush()
        report.run_id = run.id
    batch = _Batch()
    try:
        with paused_gc():
            gather(batch, report, now)
            return _write(engine, report, batch, now, clock.now())
    except Exception as exc:  # a failed fetch or write: nothing of this sync is written, the run says why
        report.status, report.error = "failed", f"{type(exc).__name__}: {exc}"
        with session_scope(engine) as s:
            run = s.get(SyncRunRow, report.run_id)
            assert run is not None
            run.status, run.finished_at, run.error = "failed", clock.now(), report.error[:20_000]
            run.ok, run.skipped, run.failed = report.ok, report.skipped, report.failed
            s.add(run)
        if isinstance(exc, ArenaError) or _is_http_error(exc):
            return report
        raise


def _is_http_error(exc: Exception) -> bool:
    import httpx

    return isinstance(exc, httpx.HTTPError)


def _select(batch: _Batch, report: SyncReport, candidates: list[Any], now: datetime, rules: UniverseRules,
            extra: Callable[[Any], dict] | None = None) -> list[Any]:
    """Keep the candidates the universe rules choose; count the rest as skipped (not tradable) or filtered."""
    tradable = []
    for vm in candidates:
        if vm.tradable:
            tradable.append(vm)
        else:
            report.skipped += 1
            batch.error("skipped", vm.native_id, f"not tradable: {vm.skip_reason}")
    chosen_ids = {m.id for m in select_universe([vm.market for vm in tradable], now, rules)}
    chosen = [vm for vm in tradable if vm.market.id in chosen_ids]
    report.filtered += len(tradable) - len(chosen)
    return chosen


# --- Polymarket -----------------------------------------------------------------------------------------

def _pm_extra(vm: Any) -> dict:
    return {"token_ids": dict(vm.token_ids), "condition_id": vm.condition_id, "slug": vm.slug,
            "neg_risk": vm.neg_risk, "fee_rate": str(getattr(vm, "fee_rate", "") or ""),
            "pending_reason": vm.pending_reason, "uma_resolution_status": getattr(vm, "uma_resolution_status", "")}


class _Listed(NamedTuple):
    """What the universe rules read of a market taken without a parse (`universe.Listed`): its stored fields
    and the payload's activity figures. A tuple, not a `Market`: one is made for every unchanged listed market
    on every sync, and a frozen dataclass of fifteen fields costs eight times as much to make."""

    id: str
    question: str
    close_time: datetime | None
    category: str
    volume: float | None
    volume_24h: float | None
    liquidity: float | None

    def is_open_at(self, when: datetime) -> bool:
        return self.close_time is None or when < self.close_time  # open: `_unchanged_gamma` took only those


class _Unchanged(NamedTuple):
    """A listed market whose payload fingerprint is its stored one, taken without a parse."""

    market: _Listed
    native_id: str
    tradable: bool = True
    skip_reason: str = ""


_OPEN = MarketStatus.OPEN.value


class _Read(NamedTuple):
    """What a sync reads of one listed Gamma payload before it knows whether to parse it."""

    entry: Listed
    native: str | None  # the id a parse would give (None: it would reject the payload)
    fingerprint: str | None  # `fingerprint.gamma_fingerprint` (None: the payload must be parsed)
    volatile: Any  # `fingerprint.gamma_volatile` of a fingerprinted payload (None: malformed, or not read)


def _unchanged_gamma(read: _Read, mid: str, stored: repo.StoredPayload | None, now: datetime) -> _Unchanged | None:
    """The market of `read` taken without a parse, or None when it must be parsed: its fingerprint is not the
    stored one, it is not open, its end date has come (a parse would now say "past_end_date"), an activity
    figure or its updatedAt is malformed, or a parse's quote would be stored (a new UTC day since the last
    snapshot, or an observed time before it)."""
    fp, v = read.fingerprint, read.volatile
    if fp is None or v is None or stored is None or stored.payload_hash != fp or stored.status != _OPEN:
        return None
    close = stored.close_time
    if close is not None and close <= now:
        return None
    at = stored.quote_at
    if at is None or not stored.quote_hash:
        return None
    observed = v.observed_at
    if observed != at and not (observed > at and observed.date() == at.date()):
        return None
    return _Unchanged(_Listed(mid, stored.question, close, stored.category, v.volume, v.volume_24h, v.liquidity),
                      read.native)  # type: ignore[arg-type]


def _read_gamma(entry: Listed, now: datetime) -> _Read:
    """What a sync reads of one listed Gamma market before it knows whether to parse it: from its head (see
    `venues.listing`) its native id, fingerprint and volatile figures; an entry without a head is parsed."""
    head = entry.take_head()
    if head is None:
        return _Read(entry, None, None, None)
    native = _gamma_native_id(head.id)
    if native is None:
        return _Read(entry, None, None, None)
    return _Read(entry, native, gamma_fingerprint(head), gamma_volatile(head, now))


def _gamma_native_id(value: Any) -> str | None:
    """The native id a parse of a payload whose ``id`` is `value` would give (None when it would reject it)."""
    if value.__class__ is str:  # the usual case, first
        return value.strip() or None
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        return None
    return str(value).strip()


def sync_polymarket(engine: Engine, client: Any, clock: Clock, rules: UniverseRules | None = None,
                    candidates: int = 500, reuse_unchanged: bool = True) -> SyncReport:
    """Gamma's most active open markets (by 24 h volume) through the universe rules, plus every held market
    re-read by id (with the CLOB's winner flags as a second opinion once closed). `reuse_unchanged=False`
    parses every payload (and stores no fingerprints): the previous path, kept as the benchmarks' baseline."""
    from arena.venues.polymarket_parse import market_id, parse_gamma_market

    rules = rules or UniverseRules()

    def gather(batch: _Batch, report: SyncReport, now: datetime) -> None:
        parsed: list[Any] = []
        filters = dict(active="true", closed="false", order="volume24hr", ascending="false")
        if reuse_unchanged:
            reads = [_read_gamma(entry, now) for entry in islice(client.iter_listed_markets(page_size=100, **filters),
                                                                  candidates)]
        else:
            reads = [_Read(decoded_entry, None, None, None) for decoded_entry in
                     decoded(list(islice(client.iter_markets(page_size=100, **filters), candidates)))]
        mids = [market_id(r.native) if r.native is not None else None for r in reads]
        stored: dict[str, repo.StoredPayload] = {}
        if reuse_unchanged:
            listed: dict[str, int] = {}
            for mid in mids:
                if mid is not None:
                    listed[mid] = listed.get(mid, 0) + 1
            with session_scope(engine) as s:
                stored = repo.stored_payloads(s, [mid for mid, k in listed.items() if k == 1])
        listed_fp: dict[str, str] = {}
        for read, mid in zip(reads, mids):
            fp = read.fingerprint
            if fp is not None:
                unchanged = _unchanged_gamma(read, mid, stored.get(mid), now)  # type: ignore[arg-type]
                if unchanged is not None:
                    parsed.append(unchanged)
                    continue
            vm = _parse_one(batch, read.entry.row(), lambda r: parse_gamma_market(r, fetched_at=now), report)
            if vm is not None:
                parsed.append(vm)
                if fp is not None and vm.native_id == read.native:
                    listed_fp[vm.market.id] = fp
        for vm in _select(batch, report, parsed, now, rules):
            if isinstance(vm, _Unchanged):
                batch.keep(vm)
            else:
                batch.take(vm, _pm_extra(vm))
                if vm.market.id in listed_fp:
                    batch.payload_hashes[vm.market.id] = listed_fp[vm.market.id]
            report.ok += 1
        def take_listed(vm: Any) -> None:
            if isinstance(vm, _Unchanged):
                batch.keep(vm)
                return
            batch.take(vm, _pm_extra(vm))
            if vm.market.id in listed_fp:
                batch.payload_hashes[vm.market.id] = listed_fp[vm.market.id]

        listed = {vm.market.id: vm for vm in parsed}
        seen = {m for m in mids if m} if reuse_unchanged else {
            market_id(n) for r in reads if isinstance(row := r.entry.row(), dict)
            and (n := _gamma_native_id(row.get("id"))) is not None}
        refresh = _to_refresh(engine, "polymarket", now, batch, report, listed, seen, take_listed)
        for mid, native in sorted(refresh.items()):
            try:
                vm = client.market_for_settlement(native)
            except ArenaError as exc:  # malformed, or gone (VenueHTTPError 404/410): this market alone fails
                if not isinstance(exc, ParseError) and getattr(exc, "status", None) not in GONE:
                    raise
                report.failed += 1
                batch.error("failed", native, exc)
                continue
            batch.take(vm, _pm_extra(vm))
            batch.payload_hashes.pop(vm.market.id, None)
            report.held_refreshed += 1

    return _run(engine, "polymarket", clock, gather)


# --- Manifold -------------------------------------------------------------------------------------------

def sync_manifold(engine: Engine, client: Any, clock: Clock, rules: UniverseRules | None = None,
                  candidates: int = 500) -> SyncReport:
    """Manifold's most active open binary and multiple-choice markets through the universe rules (multiple
    choice re-read in full for its answers), plus every held market re-read by id."""
    from arena.venues.manifold_parse import market_id, parse_manifold_market

    rules = rules or UniverseRules()

    def gather(batch: _Batch, report: SyncReport, now: datetime) -> None:
        rows = client.search_markets("", sort="24-hour-vol", filter="open", limit=min(candidates, 1000))
        parsed = []
        for raw in rows[:candidates]:
            vm = _parse_one(batch, raw, lambda r: parse_manifold_market(r, fetched_at=now), report)
            if vm is None:
                continue
            if not vm.tradable and vm.skip_reason == "answers_missing":
                vm = _parse_one(batch, client.get_market(vm.native_id),
                                lambda r: parse_manifold_market(r, fetched_at=now), report)
                if vm is None:
                    continue
            parsed.append(vm)
        for vm in _select(batch, report, parsed, now, rules):
            batch.take(vm, {"outcome_type": getattr(vm, "outcome_type", "")})
            report.ok += 1
        seen = {market_id(r["id"]) for r in rows[:candidates] if isinstance(r, dict) and isinstance(r.get("id"), str)}
        listed = {vm.market.id: vm for vm in parsed}
        take = lambda vm: batch.take(vm, {"outcome_type": getattr(vm, "outcome_type", "")})  # noqa: E731
        for mid, native in sorted(_to_refresh(engine, "manifold", now, batch, report, listed, seen, take).items()):
            try:
                raw = client.get_market(native)
            except ArenaError as exc:  # gone (VenueHTTPError 404/410): this market alone fails
                if getattr(exc, "status", None) not in GONE:
                    raise
                report.failed += 1
                batch.error("failed", native, exc)
                continue
            vm = _parse_one(batch, raw, lambda r: parse_manifold_market(r, fetched_at=now), report)
            if vm is not None:
                batch.take(vm)
                report.held_refreshed += 1

    return _run(engine, "manifold", clock, gather)


# --- Replay ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _ReplayView:
    market: Market
    quote: Quote | None
    resolution: Resolution | None
    native_id: str
    tradable: bool = True
    skip_reason: str = ""


def sync_replay(engine: Engine, venue: Any, clock: Clock, rules: UniverseRules | None = None) -> SyncReport:
    """The replay venue as of the clock: its visible open markets through the universe rules (by default
    all of them), and every held market with its quote and, once visible, its resolution. The file's malformed
    lines (`venue.skipped`) are counted as skipped."""
    rules = rules or UniverseRules(top_n=10_000, horizon_days=36_500, exclude_keywords=())

    def gather(batch: _Batch, report: SyncReport, now: datetime) -> None:
        report.skipped += len(getattr(venue, "skipped", ()))  # malformed lines of the file: skipped, not "ok"
        views = [_replay_view(venue, m, now) for m in venue.markets_at(now)]
        for v in _select(batch, report, views, now, rules):
            batch.take(v, venue.extras(v.market.id) if hasattr(venue, "extras") else None)
            report.ok += 1
        listed = {v.market.id: v for v in views}
        for mid in sorted(_to_refresh(engine, "replay", now, batch, report, listed, set(listed), batch.take)):
            m = venue.market_at(mid, now)
            if m is None:
                continue
            batch.take(_replay_view(venue, m, now), venue.extras(m.id) if hasattr(venue, "extras") else None)
            report.held_refreshed += 1

    return _run(engine, "replay", clock, gather)


def _replay_view(venue: Any, m: Market, now: datetime) -> _ReplayView:
    return _ReplayView(m, venue.quote_at(m.id, now), venue.resolution_at(m.id, now), m.id.split(":", 1)[1])


def sync_all(engine: Engine, syncs: Iterable[Callable[[], SyncReport]]) -> list[SyncReport]:
    return [s() for s in syncs]
