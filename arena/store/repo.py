"""Repositories: reading and writing domain objects (markets, quotes, fills, resolutions) through the tables.

The only module that converts between rows and domain values, so the money units are converted in one place.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy import func, insert, select
from sqlmodel import Session

from arena.clock import utc
from arena.domain.fill import Fill, FillKind
from arena.domain.ledger import Ledger
from arena.domain.market import (
    BINARY_OUTCOMES,
    YES,
    Market,
    MarketKind,
    MarketStatus,
    Quote,
    Resolution,
    ResolutionKind,
)
from arena.money import Money, Price
from arena.store.tables import (
    AgentRow,
    CohortRow,
    FillRow,
    MarketRow,
    PriceSnapshotRow,
    ResolutionRow,
)


# --- markets ---------------------------------------------------------------------------------------------

def market_from_row(row: MarketRow) -> Market:
    return Market(
        id=row.id, venue=row.venue, question=row.question, kind=MarketKind(row.kind),
        outcomes=tuple(row.outcomes), outcome_labels=tuple(row.outcome_labels),
        close_time=utc(row.close_time) if row.close_time else None, status=MarketStatus(row.status),
        description=row.description, url=row.url, category=row.category, group_id=row.group_id,
        volume=row.volume, volume_24h=row.volume_24h, liquidity=row.liquidity,
    )


def _market_fields(m: Market) -> dict:
    return dict(
        venue=m.venue, native_id=m.id.split(":", 1)[-1], question=m.question, description=m.description,
        kind=m.kind.value, outcomes=list(m.outcomes), outcome_labels=list(m.outcome_labels),
        status=m.status.value, close_time=m.close_time, url=m.url, category=m.category, group_id=m.group_id,
        volume=m.volume, volume_24h=m.volume_24h, liquidity=m.liquidity,
    )


def upsert_market(session: Session, market: Market, now: datetime, extra: dict | None = None) -> bool:
    """Insert or update `market`; returns True when anything changed (so a repeated sync changes nothing)."""
    return upsert_markets(session, [market], now, {market.id: extra} if extra is not None else None) == 1


def upsert_markets(session: Session, markets: Iterable[Market], now: datetime,
                   extras: dict[str, dict] | None = None) -> int:
    """`upsert_market` for many markets with one read of the existing rows; returns how many changed."""
    markets = list({m.id: m for m in markets}.values())
    extras = extras or {}
    existing: dict[str, MarketRow] = {}
    for chunk in _chunks([m.id for m in markets]):
        existing.update({r.id: r for r in session.scalars(select(MarketRow).where(MarketRow.id.in_(chunk)))})  # type: ignore[attr-defined]
    changed = 0
    new_rows = []
    for m in markets:
        fields = _market_fields(m)
        if m.id in extras:
            fields["extra"] = extras[m.id]
        row = existing.get(m.id)
        if row is None:
            fields.setdefault("extra", {})
            new_rows.append(dict(id=m.id, first_seen_at=now, updated_at=now, **fields))
            changed += 1
            continue
        diff = False
        for k, v in fields.items():
            old = getattr(row, k)
            if k == "close_time" and old is not None:
                old = utc(old)
            if old != v:
                setattr(row, k, v)
                diff = True
        if diff:
            row.updated_at = now
            session.add(row)
            changed += 1
    if new_rows:  # one multi-row INSERT instead of an ORM object per market
        session.connection().execute(insert(MarketRow.__table__), new_rows)  # type: ignore[attr-defined]
    return changed


def _chunks(items: list, size: int = 500) -> Iterable[list]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def get_market(session: Session, market_id: str) -> Market | None:
    row = session.get(MarketRow, market_id)
    return market_from_row(row) if row else None


def markets_by_id(session: Session, ids: Iterable[str] | None = None) -> dict[str, Market]:
    q = select(MarketRow)
    if ids is not None:
        ids = list(ids)
        if not ids:
            return {}
        q = q.where(MarketRow.id.in_(ids))  # type: ignore[attr-defined]
    return {r.id: market_from_row(r) for r in session.scalars(q)}


# --- quotes ----------------------------------------------------------------------------------------------

def add_quote(session: Session, quote: Quote, fetched_at: datetime) -> int:
    """Append the quote's prices as snapshots; a snapshot already stored (same market, outcome, observed_at,
    source) is skipped. Returns how many rows were added."""
    return add_quotes(session, [quote], fetched_at)


def add_quotes(session: Session, quotes: Iterable[Quote], fetched_at: datetime) -> int:
    """`add_quote` for many quotes with one read of the snapshot keys already stored."""
    quotes = list(quotes)
    if not quotes:
        return 0
    ids = sorted({q.market_id for q in quotes})
    earliest = min(q.observed_at for q in quotes)
    stored: set[tuple] = set()
    for chunk in _chunks(ids):
        stored |= {(m, o, utc(t), src) for m, o, t, src in session.execute(
            select(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome, PriceSnapshotRow.observed_at,
                   PriceSnapshotRow.source)
            .where(PriceSnapshotRow.market_id.in_(chunk), PriceSnapshotRow.observed_at >= earliest))}  # type: ignore[attr-defined]
    rows = []
    for q in quotes:
        for outcome, price in q.prices.items():
            key = (q.market_id, outcome, utc(q.observed_at), q.source)
            if key in stored:
                continue
            stored.add(key)
            rows.append(dict(
                market_id=q.market_id, outcome=outcome, price_ppm=price.ppm,
                bid_ppm=q.bid.ppm if q.bid is not None and outcome == YES else None,
                ask_ppm=q.ask.ppm if q.ask is not None and outcome == YES else None,
                observed_at=q.observed_at, fetched_at=q.fetched_at or fetched_at, source=q.source))
    if rows:
        session.connection().execute(insert(PriceSnapshotRow.__table__), rows)  # type: ignore[attr-defined]
    return len(rows)


def latest_quotes(session: Session, as_of: datetime, market_ids: Iterable[str] | None = None) -> dict[str, Quote]:
    """The newest quote per market among snapshots *fetched* at or before `as_of` (no look-ahead)."""
    latest = (
        select(
            PriceSnapshotRow.market_id, PriceSnapshotRow.outcome,
            func.max(PriceSnapshotRow.observed_at).label("t"),
        )
        .where(PriceSnapshotRow.fetched_at <= as_of, PriceSnapshotRow.observed_at <= as_of)
        .group_by(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome)
    )
    if market_ids is not None:
        market_ids = list(market_ids)
        if not market_ids:
            return {}
        latest = latest.where(PriceSnapshotRow.market_id.in_(market_ids))  # type: ignore[attr-defined]
    sub = latest.subquery()
    rows = session.execute(
        select(PriceSnapshotRow).join(
            sub,
            (PriceSnapshotRow.market_id == sub.c.market_id)
            & (PriceSnapshotRow.outcome == sub.c.outcome)
            & (PriceSnapshotRow.observed_at == sub.c.t),
        ).where(PriceSnapshotRow.fetched_at <= as_of)
        .order_by(PriceSnapshotRow.id)
    ).scalars()
    grouped: dict[str, list[PriceSnapshotRow]] = {}
    for r in rows:
        grouped.setdefault(r.market_id, []).append(r)
    out = {}
    for mid, rs in grouped.items():
        prices = {r.outcome: Price(r.price_ppm) for r in rs}
        yes = next((r for r in rs if r.outcome == YES), None)
        observed = max(utc(r.observed_at) for r in rs)
        out[mid] = Quote(
            market_id=mid, prices=prices, observed_at=observed,
            fetched_at=max(utc(r.fetched_at) for r in rs),
            bid=Price(yes.bid_ppm) if yes is not None and yes.bid_ppm is not None else None,
            ask=Price(yes.ask_ppm) if yes is not None and yes.ask_ppm is not None else None,
            source=rs[-1].source,
        )
    return out


# --- resolutions -----------------------------------------------------------------------------------------

def resolution_from_row(row: ResolutionRow) -> Resolution | None:
    if row.kind == "unresolved":
        return None
    return Resolution(
        market_id=row.market_id, kind=ResolutionKind(row.kind),
        payouts={k: Price(int(v)) for k, v in row.payouts.items()},
        resolved_at=utc(row.resolved_at) if row.resolved_at else None, version=row.version, source=row.source,
    )


def latest_resolution_row(session: Session, market_id: str) -> ResolutionRow | None:
    return session.scalars(
        select(ResolutionRow).where(ResolutionRow.market_id == market_id).order_by(ResolutionRow.version.desc())
    ).first()


def record_resolutions(session: Session, items: Iterable[tuple[str, Resolution | None]], now: datetime) -> int:
    """`record_resolution` for many markets with one read of their latest versions; returns versions added."""
    items = list(items)
    ids = sorted({mid for mid, _ in items})
    latest: dict[str, ResolutionRow] = {}
    for chunk in _chunks(ids):
        sub = (select(ResolutionRow.market_id, func.max(ResolutionRow.version).label("v"))
               .where(ResolutionRow.market_id.in_(chunk)).group_by(ResolutionRow.market_id).subquery())  # type: ignore[attr-defined]
        latest.update({r.market_id: r for r in session.scalars(select(ResolutionRow).join(
            sub, (ResolutionRow.market_id == sub.c.market_id) & (ResolutionRow.version == sub.c.v)))})
    new_rows = []
    for mid, res in items:
        row = _next_resolution(mid, res, latest.get(mid), now)
        if row is not None:
            new_rows.append({c: getattr(row, c) for c in ("market_id", "version", "kind", "payouts",
                                                            "resolved_at", "recorded_at", "source")})
            latest[mid] = row
    if new_rows:
        session.connection().execute(insert(ResolutionRow.__table__), new_rows)  # type: ignore[attr-defined]
    return len(new_rows)


def _next_resolution(market_id: str, resolution: Resolution | None, latest: ResolutionRow | None,
                     now: datetime) -> ResolutionRow | None:
    if latest is not None:
        current = resolution_from_row(latest)
        if resolution is None and current is None:
            return None
        if resolution is not None and current is not None and current.same_as(resolution):
            return None
    elif resolution is None:
        return None
    version = (latest.version if latest else 0) + 1
    if resolution is None:
        return ResolutionRow(market_id=market_id, version=version, kind="unresolved", payouts={},
                             resolved_at=None, recorded_at=now, source="unresolved")
    return ResolutionRow(market_id=market_id, version=version, kind=resolution.kind.value,
                         payouts={k: p.ppm for k, p in resolution.payouts.items()},
                         resolved_at=resolution.resolved_at, recorded_at=now, source=resolution.source)


def record_resolution(session: Session, market_id: str, resolution: Resolution | None, now: datetime) -> int | None:
    """Append a resolution version when the venue's state differs from the latest recorded one.

    `resolution=None` means the venue shows the market unresolved: recorded (kind "unresolved") only if a
    resolution had been recorded before, so an un-resolution is noticed. Returns the new version or None.
    """
    if record_resolutions(session, [(market_id, resolution)], now) == 0:
        return None
    latest = latest_resolution_row(session, market_id)
    return latest.version if latest is not None else None


# --- fills -----------------------------------------------------------------------------------------------

def fill_from_row(row: FillRow) -> Fill:
    return Fill(
        key=row.key, agent_id=str(row.agent_id), market_id=row.market_id, outcome=row.outcome,
        kind=FillKind(row.kind), shares=row.shares, cash=Money(row.cash_micros), cost=Money(row.cost_micros),
        at=utc(row.at), price=Price(row.price_ppm) if row.price_ppm is not None else None,
        mid=Price(row.mid_ppm) if row.mid_ppm is not None else None, provenance=row.provenance,
        decision_id=str(row.decision_id) if row.decision_id is not None else None,
        resolution_version=row.resolution_version,
    )


def fill_row(fill: Fill, cohort_id: int) -> FillRow:
    return FillRow(
        key=fill.key, cohort_id=cohort_id, agent_id=int(fill.agent_id), market_id=fill.market_id,
        outcome=fill.outcome, kind=fill.kind.value, shares=fill.shares, cash_micros=fill.cash.micros,
        cost_micros=fill.cost.micros, price_ppm=fill.price.ppm if fill.price else None,
        mid_ppm=fill.mid.ppm if fill.mid else None, provenance=fill.provenance,
        decision_id=int(fill.decision_id) if fill.decision_id else None,
        resolution_version=fill.resolution_version, at=fill.at,
    )


def add_fills(session: Session, fills: Sequence[Fill], cohort_id: int) -> None:
    for f in fills:
        session.add(fill_row(f, cohort_id))


def fills_for_agent(session: Session, agent_id: int) -> list[Fill]:
    rows = session.scalars(select(FillRow).where(FillRow.agent_id == agent_id).order_by(FillRow.id))
    return [fill_from_row(r) for r in rows]


def ledger_for(session: Session, agent: AgentRow, cohort: CohortRow) -> Ledger:
    """The agent's ledger folded from its stored fills."""
    ledger = Ledger(str(agent.id), Money(cohort.starting_cash_micros))
    return ledger.apply_all(fills_for_agent(session, agent.id))  # type: ignore[arg-type]


__all__ = [
    "BINARY_OUTCOMES", "add_fills", "add_quote", "fill_from_row", "fill_row", "fills_for_agent", "get_market",
    "latest_quotes", "latest_resolution_row", "ledger_for", "market_from_row", "markets_by_id",
    "record_resolution", "resolution_from_row", "upsert_market",
]
