"""Repositories: reading and writing domain objects (markets, quotes, fills, resolutions) through the tables.

The only module that converts between rows and domain values, so the money units are converted in one place.
"""

from __future__ import annotations

import hashlib
from operator import itemgetter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any, NamedTuple

import orjson
from sqlalchemy import JSON, DateTime, String, any_, bindparam, func, select, update
from sqlalchemy.dialects.postgresql import ARRAY
from sqlmodel import Session, col

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
    table_of,
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


ACTIVITY = ("volume", "volume_24h", "liquidity")  # change with every trade: refreshed with the price, not hashed
_CONTENT = ("venue", "native_id", "question", "kind", "outcomes", "outcome_labels", "status", "close_time",
            "url", "category", "group_id")


def _digest(value: object) -> str:
    """A 32-hex fingerprint of a value built from str, int, float, None, datetime, lists, tuples and dicts
    (their repr is stable across runs and processes)."""
    return hashlib.blake2b(repr(value).encode(), digest_size=16).hexdigest()


def content_hash(fields: dict) -> str:
    """Fingerprint of a market's fields except its description and activity figures (and `extra` if absent)."""
    close = fields["close_time"]
    parts = [fields[k] for k in ("venue", "native_id", "question", "kind", "status", "url", "category", "group_id")]
    parts += ["\x1e".join(fields["outcomes"]), "\x1e".join(fields["outcome_labels"]),
              utc(close).isoformat() if close is not None else "",
              orjson.dumps(fields["extra"], option=orjson.OPT_SORT_KEYS).decode() if "extra" in fields else "-"]
    return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=16).hexdigest()


def text_hash(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def quote_hash(quote: Quote) -> str:
    """Fingerprint of what a snapshot of `quote` stores besides its times: prices, YES bid/ask, source."""
    return _digest((sorted((o, p.ppm) for o, p in quote.prices.items()),
                    quote.bid.ppm if quote.bid is not None else None,
                    quote.ask.ppm if quote.ask is not None else None, quote.source))


@dataclass(frozen=True)
class MarketState:
    """What the store last wrote for a market (see MarketRow's hash columns)."""

    content_hash: str
    description_hash: str
    quote_hash: str
    quote_at: datetime | None
    payload_hash: str = ""


def market_states(session: Session, ids: Iterable[str]) -> dict[str, MarketState]:
    """The stored hashes of the given markets (absent: not stored yet), read straight from the cursor."""
    t = table_of(MarketRow)
    out: dict[str, MarketState] = {}
    for where in _id_filters(session, t.c.id, ids):
        q = select(t.c.id, t.c.content_hash, t.c.description_hash, t.c.quote_hash, t.c.quote_at,
                   t.c.payload_hash).where(where)
        for mid, ch, dh, qh, qa, ph in session.connection().execute(q):
            out[mid] = MarketState(ch, dh, qh, utc(qa) if qa is not None else None, ph)
    return out


class StoredPayload(NamedTuple):
    """What a sync needs of a stored market to take an unchanged payload without parsing it: the payload's
    fingerprint, the last stored quote, and the fields the universe rules read besides the activity figures.
    Times are aware UTC."""

    payload_hash: str
    quote_hash: str
    quote_at: datetime | None
    question: str
    status: str
    close_time: datetime | None
    category: str


_STORED_PAYLOADS = ("SELECT id, payload_hash, quote_hash, {quote_at}, question, status, {close_time}, category "
                    "FROM markets WHERE {match} AND payload_hash != ''")
_SEPARATOR = "\x1f"  # joins the ids for PostgreSQL's string_to_array (ids holding one go as an array)


def stored_payloads(session: Session, ids: Iterable[str]) -> dict[str, StoredPayload]:
    """`StoredPayload` of the given markets that carry a payload fingerprint (market id → it), in one read with
    no descriptions. It runs on every sync for every listed market, so on SQLite and PostgreSQL it goes past
    SQLAlchemy's row and type processing to the driver's cursor, with the ids as one parameter (a JSON array
    for SQLite's `json_each`; for PostgreSQL one text split by `string_to_array` — a list adapted element by
    element by psycopg, or a JSON array, cost more) and the times read as UTC text, which `datetime.fromisoformat`
    reads in C where the driver would build an aware datetime per row and convert it. SQLite's times are the text
    SQLAlchemy stores them as ("2026-11-01 09:00:00.000000")."""
    ids = list(dict.fromkeys(ids))  # in the order given (a listing's: neighbouring ids, neighbouring index pages)
    if not ids:
        return {}
    conn = session.connection()
    dialect = conn.dialect.name
    if dialect in ("sqlite", "postgresql"):
        cur = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        try:
            if dialect == "sqlite":
                sql = _STORED_PAYLOADS.format(match="id IN (SELECT value FROM json_each(?))", quote_at="quote_at",
                                              close_time="close_time")
                cur.execute(sql, (_json_dumps(ids),))
            else:
                joined = _SEPARATOR.join(ids)
                match, param = ("id = ANY(string_to_array(%s, chr(31)))", joined) if (
                    joined.count(_SEPARATOR) == len(ids) - 1) else ("id = ANY(%s)", ids)
                cur.execute(_STORED_PAYLOADS.format(match=match, quote_at="(quote_at AT TIME ZONE 'UTC')::text",
                                                    close_time="(close_time AT TIME ZONE 'UTC')::text"), (param,))
            return {mid: StoredPayload(ph, qh, _utc_text(qa), question, status, _utc_text(close), category)
                    for mid, ph, qh, qa, question, status, close, category in cur.fetchall()}
        finally:
            cur.close()
    out: dict[str, StoredPayload] = {}  # another database: through SQLAlchemy's types
    t = table_of(MarketRow)
    for where in _id_filters(session, t.c.id, ids):
        q = select(t.c.id, t.c.payload_hash, t.c.quote_hash, t.c.quote_at, t.c.question, t.c.status,
                   t.c.close_time, t.c.category).where(where, t.c.payload_hash != "")
        for mid, ph, qh, qa, question, status, close, category in conn.execute(q):
            out[mid] = StoredPayload(ph, qh, _aware(qa), question, status, _aware(close), category)
    return out


def _aware(value: datetime | None) -> datetime | None:
    return None if value is None else utc(value)


def _utc_text(value: str | None) -> datetime | None:
    """A UTC time as text without an offset ("2026-11-01 09:00:00.000000": as SQLAlchemy's SQLite DateTime stores
    it, as PostgreSQL writes a timestamp), aware. The offset is appended to the text rather than set with
    `replace` afterwards (a fifth of the cost)."""
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value + "+00:00")
    except ValueError:  # a text that carries its own offset
        return utc(datetime.fromisoformat(value))


def upsert_market(session: Session, market: Market, now: datetime, extra: dict | None = None) -> bool:
    """Insert or update `market`; returns True when anything changed (so a repeated sync changes nothing)."""
    return upsert_markets(session, [market], now, {market.id: extra} if extra is not None else None) == 1


def upsert_markets(session: Session, markets: Iterable[Market], now: datetime,
                   extras: dict[str, dict] | None = None, states: dict[str, MarketState] | None = None,
                   refresh: dict[str, tuple[str, datetime]] | None = None,
                   payload_hashes: dict[str, str] | None = None) -> int:
    """Insert new markets and update those whose content or description changed (by hash, one read of the
    stored hashes unless `states` is given); returns how many were inserted or changed. Activity figures
    (volume, liquidity) are written with any change and for the markets in `refresh` (market id → hash and
    time of the price snapshot being stored for it, so at least daily, written with them), never on their
    own: they move with every trade, and rewriting every market on every sync for them would make each sync
    cost as much as the first.

    `payload_hashes` (market id → fingerprint of the payload `market` was parsed from, when the store will then
    equal that parse — see `ingest.record_observations`) are stored as `payload_hash`; a row written for any
    other reason without one gets "", so a fingerprint never outlives the state it vouches for."""
    markets = list({m.id: m for m in markets}.values())
    extras = extras or {}
    refresh = refresh or {}
    payload_hashes = payload_hashes or {}
    if states is None:
        states = market_states(session, (m.id for m in markets))
    changed = 0
    new_rows, updates, descriptions = [], [], []
    for m in markets:
        fields = _market_fields(m)
        state = states.get(m.id)
        if m.id in extras:
            fields["extra"] = extras[m.id]
        ch = content_hash(fields)  # without extras given, the stored ones are kept (and not hashed)
        if state is None:
            fields.setdefault("extra", {})
        dh = text_hash(m.description)
        qh, qa = refresh.get(m.id, ("", None))
        ph = payload_hashes.get(m.id, "")
        if state is None:
            new_rows.append(dict(id=m.id, first_seen_at=now, updated_at=now, content_hash=ch, description_hash=dh,
                                 quote_hash=qh, quote_at=qa, payload_hash=ph, **fields))
            changed += 1
            continue
        content_changed = ch != state.content_hash
        description_changed = dh != state.description_hash
        if description_changed:
            descriptions.append(dict(_id=m.id, description=m.description, description_hash=dh, updated_at=now))
        row = {}
        if content_changed or m.id in refresh:
            row.update({k: fields[k] for k in ACTIVITY})
            if m.id in refresh:
                row.update(quote_hash=qh, quote_at=qa)
            if content_changed:
                row.update({k: fields[k] for k in _CONTENT}, content_hash=ch, updated_at=now)
                if "extra" in fields:
                    row["extra"] = fields["extra"]
        if ph != state.payload_hash and (ph or row or description_changed):
            row["payload_hash"] = ph
        if row:
            updates.append(row | {"_id": m.id})
        changed += content_changed or description_changed
    t = table_of(MarketRow)
    if new_rows:
        bulk_insert(session, t, new_rows)
    for group in _same_keys(updates):
        session.connection().execute(
            update(t).where(t.c.id == bindparam("_id")).values({k: bindparam(k) for k in group[0] if k != "_id"}),
            group)
    if descriptions:  # descriptions are the bulk of a market row: written only when they changed
        session.connection().execute(
            update(t).where(t.c.id == bindparam("_id")).values(
                description=bindparam("description"), description_hash=bindparam("description_hash"),
                updated_at=bindparam("updated_at")), descriptions)
    return changed


def _same_keys(rows: list[dict]) -> list[list[dict]]:
    """Rows grouped by their key set, so each group is one executemany."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault(tuple(sorted(r)), []).append(r)
    return list(groups.values())


def bulk_insert(session: Session, table: Any, rows: list[dict]) -> None:
    """Insert many rows of `table` (dicts with the same keys) in the session's transaction, past SQLAlchemy's
    per-value processing: PostgreSQL takes them by COPY, SQLite by one executemany. JSON values are encoded
    and times formatted here as the column types would (so the ORM reads them back unchanged)."""
    if not rows:
        return
    conn = session.connection()
    dialect = conn.dialect
    columns = list(rows[0])
    convert = []
    for name in columns:
        col_type = table.c[name].type
        if isinstance(col_type, JSON):
            convert.append(_json_dumps)
        elif isinstance(col_type, DateTime) and dialect.name == "sqlite":
            convert.append(col_type.dialect_impl(dialect).bind_processor(dialect))
        else:
            convert.append(None)
    # rows to tuples and back through columns with itemgetter and zip, in C: a first sync writes a row per market
    # and per snapshot, and a Python generator per row was a visible part of it
    data: list[tuple] = list(map(itemgetter(*columns), rows)) if len(columns) > 1 else [
        (r[columns[0]],) for r in rows]
    if any(convert):
        cols = list(zip(*data))
        for i, f in enumerate(convert):
            if f is not None:
                cols[i] = _converted(cols[i], f)
        data = list(zip(*cols))
    names = ", ".join(columns)
    raw = conn.connection.driver_connection
    if dialect.name == "postgresql":
        with raw.cursor() as cur, cur.copy(f"COPY {table.name} ({names}) FROM STDIN") as copy:
            for row in data:
                copy.write_row(row)
    else:
        cur = raw.cursor()
        try:
            cur.executemany(f"INSERT INTO {table.name} ({names}) VALUES ({', '.join('?' * len(columns))})", data)
        finally:
            cur.close()


def _converted(values: Sequence[Any], convert: Any) -> list[Any]:
    """`convert` applied to each value but None, once per distinct value: many rows share one (the sync's time,
    ["Yes", "No"])."""
    cache: dict = {}
    out = []
    for v in values:
        if v is not None:
            key = v if not isinstance(v, (list, dict)) else repr(v)
            done = cache.get(key)
            if done is None:
                done = cache[key] = convert(v)
            v = done
        out.append(v)
    return out


def _json_dumps(value: object) -> str:
    return orjson.dumps(value).decode()


def _id_filters(session: Session, column: Any, ids: Iterable[str], size: int = 2_000) -> Iterable[Any]:
    """WHERE clauses that together select `column` IN `ids`: on PostgreSQL one `= ANY(array)` with a single
    parameter (an IN list of 10⁵ values costs more to send and plan than the query), elsewhere IN lists of
    `size` values."""
    ids = sorted(set(ids))
    if not ids:
        return []
    if session.connection().dialect.name == "postgresql":
        return [column == any_(bindparam("ids", ids, type_=ARRAY(String)))]
    return [column.in_(chunk) for chunk in _chunks(ids, size)]


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
        q = q.where(col(MarketRow.id).in_(ids))
    return {r.id: market_from_row(r) for r in session.scalars(q)}


# --- quotes ----------------------------------------------------------------------------------------------

def add_quote(session: Session, quote: Quote, fetched_at: datetime) -> int:
    """Store the quote's prices as snapshots if they differ from the market's last stored ones (or a UTC day
    has begun since); returns how many rows were added."""
    return add_quotes(session, [quote], fetched_at)


def quotes_to_store(quotes: Iterable[Quote], states: dict[str, MarketState]
                    ) -> tuple[list[tuple[Quote, str]], list[Quote]]:
    """Split `quotes` into (new, older). `new` — (quote, quote_hash) pairs — are the quotes observed after the
    market's last stored snapshot that are worth storing: those whose prices differ from it, and the first of
    each UTC day, so every open market synced daily has a snapshot at most a day old (marks and
    `decide.MAX_QUOTE_AGE` rely on it); the rest are skipped. `older` were observed no later than the last
    stored snapshot with other prices (a backfill, another source) and are checked against stored keys."""
    last: dict[str, tuple[str, datetime | None]] = {
        mid: (st.quote_hash, st.quote_at) for mid, st in states.items()}
    new, older = [], []
    for q in sorted(quotes, key=lambda q: (utc(q.observed_at), q.market_id)):
        observed = utc(q.observed_at)
        h, at = last.get(q.market_id, ("", None))
        if at is not None and observed < at:
            older.append(q)
            continue
        qh = quote_hash(q)
        if at is not None and observed == at:
            if qh != h:
                older.append(q)  # another source at the same instant: stored unless already there
            continue
        if at is not None and qh == h and observed.date() == at.date():
            continue
        new.append((q, qh))
        last[q.market_id] = (qh, observed)
    return new, older


def add_quotes(session: Session, quotes: Iterable[Quote], fetched_at: datetime,
               states: dict[str, MarketState] | None = None) -> int:
    """`add_quote` for many quotes: one read of the markets' last stored quotes (unless `states` is given),
    one insert, one update of the markets' quote state. Returns how many snapshot rows were added."""
    quotes = list(quotes)
    if not quotes:
        return 0
    if states is None:
        states = market_states(session, (q.market_id for q in quotes))
    return store_quotes(session, *quotes_to_store(quotes, states), fetched_at)


def store_quotes(session: Session, new: list[tuple[Quote, str]], older: list[Quote], fetched_at: datetime,
                 written: Iterable[str] = ()) -> int:
    """Insert the snapshots `quotes_to_store` chose and move each market's last stored quote forward, except
    for the `written` markets (`upsert_markets` did it, given `last_quotes(new)` as its `refresh`)."""
    rows = [_snapshot_row(q, o, p, fetched_at) for q, _ in new for o, p in q.prices.items()]
    rows += _unstored_rows(session, older, fetched_at)
    bulk_insert(session, table_of(PriceSnapshotRow), rows)
    written = set(written)
    latest = {mid: v for mid, v in last_quotes(new).items() if mid not in written}
    if latest:  # a quote of no payload's parse: the market's payload fingerprint no longer vouches for it
        t = table_of(MarketRow)
        session.connection().execute(
            update(t).where(t.c.id == bindparam("_id")).values(quote_hash=bindparam("qh"), quote_at=bindparam("qa"),
                                                               payload_hash=""),
            [dict(_id=mid, qh=qh, qa=qa) for mid, (qh, qa) in latest.items()])
    return len(rows)


def last_quotes(new: list[tuple[Quote, str]]) -> dict[str, tuple[str, datetime]]:
    """Market id → (quote hash, observed_at) of the last of `new` (in time order) for each market."""
    return {q.market_id: (qh, q.observed_at) for q, qh in new}


def _snapshot_row(q: Quote, outcome: str, price: Price, fetched_at: datetime) -> dict:
    return dict(market_id=q.market_id, outcome=outcome, price_ppm=price.ppm,
                bid_ppm=q.bid.ppm if q.bid is not None and outcome == YES else None,
                ask_ppm=q.ask.ppm if q.ask is not None and outcome == YES else None,
                observed_at=q.observed_at, fetched_at=q.fetched_at or fetched_at, source=q.source)


def _unstored_rows(session: Session, quotes: list[Quote], fetched_at: datetime) -> list[dict]:
    """Snapshot rows of quotes observed before their market's last stored snapshot, minus those stored."""
    if not quotes:
        return []
    earliest = min(q.observed_at for q in quotes)
    stored: set[tuple] = set()
    for chunk in _chunks(sorted({q.market_id for q in quotes})):
        stored |= {(m, o, utc(t), src) for m, o, t, src in session.execute(
            select(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome, PriceSnapshotRow.observed_at,
                   PriceSnapshotRow.source)
            .where(col(PriceSnapshotRow.market_id).in_(chunk), col(PriceSnapshotRow.observed_at) >= earliest))}
    rows = []
    for q in quotes:
        for outcome, price in q.prices.items():
            key = (q.market_id, outcome, utc(q.observed_at), q.source)
            if key not in stored:
                stored.add(key)
                rows.append(_snapshot_row(q, outcome, price, fetched_at))
    return rows


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
        latest = latest.where(col(PriceSnapshotRow.market_id).in_(market_ids))
    sub = latest.subquery()
    # plain rows, not ORM objects: a thousand markets' quotes are read for every decision round and page
    rows = session.execute(
        select(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome, PriceSnapshotRow.price_ppm,
               PriceSnapshotRow.bid_ppm, PriceSnapshotRow.ask_ppm, PriceSnapshotRow.observed_at,
               PriceSnapshotRow.fetched_at, PriceSnapshotRow.source).join(
            sub,
            (PriceSnapshotRow.market_id == sub.c.market_id)
            & (PriceSnapshotRow.outcome == sub.c.outcome)
            & (PriceSnapshotRow.observed_at == sub.c.t),
        ).where(PriceSnapshotRow.fetched_at <= as_of)
        .order_by(PriceSnapshotRow.id)
    ).all()
    grouped: dict[str, list[Any]] = {}
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


def fresh_quote_ids(session: Session, as_of: datetime, max_age: timedelta) -> set[str]:
    """The markets whose `latest_quotes` as of `as_of` was fetched at or after `as_of - max_age` — the same rule,
    computed in the database without building the quotes (a count of the tradable universe at many times)."""
    latest = (select(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome,
                     func.max(PriceSnapshotRow.observed_at).label("t"))
              .where(PriceSnapshotRow.fetched_at <= as_of, PriceSnapshotRow.observed_at <= as_of)
              .group_by(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome)).subquery()
    q = (select(PriceSnapshotRow.market_id)
         .join(latest, (PriceSnapshotRow.market_id == latest.c.market_id)
               & (PriceSnapshotRow.outcome == latest.c.outcome) & (PriceSnapshotRow.observed_at == latest.c.t))
         .where(PriceSnapshotRow.fetched_at <= as_of).group_by(PriceSnapshotRow.market_id)
         .having(func.max(PriceSnapshotRow.fetched_at) >= as_of - max_age))
    return set(session.execute(q).scalars())


# --- resolutions -----------------------------------------------------------------------------------------

def resolution_from_row(row: Any) -> Resolution | None:
    """The resolution a ResolutionRow (or a row with its columns) records; None for kind \"unresolved\"."""
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


_RESOLUTION_COLUMNS = ("market_id", "version", "kind", "payouts", "resolved_at", "recorded_at", "source")


def record_resolutions(session: Session, items: Iterable[tuple[str, Resolution | None]], now: datetime) -> int:
    """`record_resolution` for many markets with one read of their latest versions; returns versions added."""
    items = list(items)
    ids = sorted({mid for mid, _ in items})
    latest: dict[str, Any] = {}
    t = table_of(ResolutionRow)
    for where in _id_filters(session, t.c.market_id, ids):
        sub = (select(t.c.market_id, func.max(t.c.version).label("v"))
               .where(where).group_by(t.c.market_id).subquery())
        cols = [t.c[c] for c in _RESOLUTION_COLUMNS]
        for r in session.connection().execute(select(*cols).join(
                sub, (t.c.market_id == sub.c.market_id) & (t.c.version == sub.c.v))):
            latest[r.market_id] = r
    new_rows = []
    for mid, res in items:
        row = _next_resolution(mid, res, latest.get(mid), now)
        if row is not None:
            new_rows.append(row)
            latest[mid] = SimpleNamespace(**row)
    bulk_insert(session, t, new_rows)
    if new_rows:  # a payload fingerprint vouches for its parse's resolution being the latest: no longer so
        m = table_of(MarketRow)
        session.connection().execute(
            update(m).where(m.c.id == bindparam("_id"), m.c.payload_hash != "").values(payload_hash=""),
            [{"_id": mid} for mid in sorted({r["market_id"] for r in new_rows})])
    return len(new_rows)


def _next_resolution(market_id: str, resolution: Resolution | None, latest: Any, now: datetime) -> dict | None:
    """The next resolution version's column values, or None when the venue's state is the recorded one."""
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
        return dict(market_id=market_id, version=version, kind="unresolved", payouts={},
                    resolved_at=None, recorded_at=now, source="unresolved")
    return dict(market_id=market_id, version=version, kind=resolution.kind.value,
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
    "fresh_quote_ids", "latest_quotes", "latest_resolution_row", "ledger_for", "market_from_row", "markets_by_id",
    "record_resolution", "resolution_from_row", "upsert_market",
]
