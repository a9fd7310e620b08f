"""The replay venue: resolved markets from a JSON-lines snapshot, served on a simulated clock with no look-ahead.

Owns the replay file format (reading, validating, writing) and the visibility rules below. Pure apart from
file I/O in ``read_replay``/``write_replay``; it never reads the wall clock (every query takes ``t``).

File format (``shared/data/replay/replay_markets.jsonl``; UTF-8, one JSON object per line, blank lines ignored)
------------------------------------------------------------------------------------------------------------
====================================  ==========================  ===========================================
field                                 type                        meaning
====================================  ==========================  ===========================================
``platform``                          str                         source venue, "polymarket" or "manifold"
``market_id``                         str                         the source's id (Polymarket condition id,
                                                                  Manifold contract id); unique in the file
``question``                          str                         the question text
``url``                               str                         market URL
``background``                        str                         description (may be "")
``resolution_criteria``               str                         how it resolves (ForecastBench wording)
``market_info_resolution_criteria``   str or null                 the platform's own resolution text
``market_open_datetime``              ISO-8601 str or null        when the market opened (date-only allowed)
``market_close_datetime``             ISO-8601 str or null        scheduled close
``resolution``                        0 or 1                      final outcome, 1 = YES
``first_resolved_observation_date``   "YYYY-MM-DD"                first date the market was seen resolved
                                                                  (an upper bound on the real resolution)
``last_unresolved_observation_date``  "YYYY-MM-DD"                the last history date (checked if present)
``n_points``                          int                         ``len(history)`` (checked if present)
``history``                           [["YYYY-MM-DD", p], …]      P(YES) in [0, 1] per UTC date, dates strictly
                                                                  increasing and all before the resolution date;
                                                                  a point may carry a third element, an object
                                                                  with any of ``bid``/``ask`` (the best YES bid
                                                                  and ask, in [0, 1], bid ≤ ask) and ``volume``/
                                                                  ``volume_24h`` (USD or mana, ≥ 0) recorded
                                                                  with that price (see "Recorded quotes")
``history_source``                    str                         one letter per point (R, F; "A" = written by
                                                                  the arena's export), or ""
``provenance``                        object                      free-form
``group_id``                          str (optional)              an exclusive group: every line with the same
                                                                  ``group_id`` is one member of it, and exactly
                                                                  one member resolves 1 (checked when read);
                                                                  absent or "" for a stand-alone market
``fee_rate``                          number (optional)           the venue's taker fee rate (Polymarket's rule:
                                                                  rate × min(p, 1 − p) per share), in [0, 1];
                                                                  absent = 0 (Manifold charges none)
====================================  ==========================  ===========================================

Unknown keys are kept and written back; ``group_id`` is written only when set, so a file without groups (the
shipped snapshot has none) reads and writes back unchanged. A group's markets get ``Market.group_id`` =
``"replay:group:" + group_id``, so the forecast set can take it whole and the consistency checks (Σ P = 1,
negation pairs, S′) run on it. ``write_replay`` writes the keys in this order with
``json.dumps(..., ensure_ascii=False)``, so reading and writing the shipped file reproduces it byte for byte.

Recorded quotes
---------------
A point's ``bid``/``ask`` are served with its price (``Quote.bid``/``Quote.ask``, visible when the point is), and
its ``volume``/``volume_24h`` as the market's ``volume``/``volume_24h`` from then on (the last visible point that
carries them; none before). A point without them says nothing: an older point's quotes are not carried forward.
Fills of a replay market whose quote has them walk a one-level book at the recorded ask (buy YES; a NO buy pays
1 − bid) or bid (sell), with the fee rule above, and record the point's price as the mid — so a fill's slippage
is ask − p. A line whose bid is above its ask, or whose bid/ask is outside [0, 1], is malformed.

Visibility on the simulated clock (``t`` is an aware datetime)
-------------------------------------------------------------
- A history point dated ``D`` is the value *for* that UTC day, so it counts as observed at the end of ``D``:
  it is visible from ``D + 1 day 00:00 UTC`` on (i.e. when ``D < t.date()``), and that instant is its
  ``Quote.observed_at`` (and ``fetched_at``). A point is never visible on its own date.
- The resolution becomes visible from ``first_resolved_observation_date + 1 day 00:00 UTC`` on (strictly after
  the resolution date), with that instant as ``Resolution.resolved_at``.
- ``markets_at(t)`` lists markets whose first point is visible, whose open time (if any) has passed and whose
  resolution is not visible yet. Status is CLOSED once ``market_close_datetime`` has passed, else OPEN.
  Caveat: a close time set *by* an early resolution (Manifold sets closeTime = resolutionTime) would hint at
  the future; the snapshot's close times are the ones ForecastBench recorded and are shown as given.

Arena ids are ``"replay:" + market_id``. Malformed lines raise ``ReplayFormatError`` (a ``ParseError`` with the
1-based ``line``), or with ``skip_malformed=True`` are skipped and counted in ``skipped``.
"""

from __future__ import annotations

import json
import os
from bisect import bisect_left
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal, InvalidOperation
from pathlib import Path
from types import MappingProxyType
from typing import Any

from arena.domain.market import NO, YES, Market, MarketKind, MarketStatus, Quote, Resolution
from arena.errors import ArenaError, NotFound, ParseError
from arena.money import Price
from arena.venues import PricePoint

VENUE = "replay"
FIELD_ORDER = (
    "platform", "market_id", "question", "url", "background", "resolution_criteria",
    "market_info_resolution_criteria", "market_open_datetime", "market_close_datetime", "resolution",
    "first_resolved_observation_date", "last_unresolved_observation_date", "n_points", "history",
    "history_source", "provenance", "group_id", "fee_rate",
)
QUOTE_KEYS = ("bid", "ask", "volume", "volume_24h")  # what a history point's third element may hold
EXPORT_SOURCE_LETTER = "A"
ONE_DAY = timedelta(days=1)


class ReplayFormatError(ParseError):
    """A replay line is malformed. ``line`` is its 1-based number (0 when not read from a file)."""

    reason = "replay_format"

    def __init__(self, message: str, *, field: str = "", line: int = 0, fix: str = "") -> None:
        text = message if not field or message.startswith(f"{field}: ") else f"{field}: {message}"
        ArenaError.__init__(self, f"line {line}: {text}" if line else text, line=line,
                            fix=fix or "each line must be one market's JSON record, as `arena export replay` writes")
        self.field = field
        self.line = line


def _day_start(d: date) -> datetime:
    return datetime.combine(d, time(0), tzinfo=timezone.utc)


def _aware(t: datetime) -> datetime:
    if not isinstance(t, datetime) or t.tzinfo is None:
        raise ValueError("replay queries need an aware datetime (UTC)")
    return t.astimezone(timezone.utc)


@dataclass(frozen=True)
class PointQuote:
    """What a history point recorded beside its price: the best YES ``bid``/``ask`` (exact, in [0, 1]) and the
    market's ``volume``/``volume_24h`` (venue currency), each None when not recorded."""

    bid: Decimal | None = None
    ask: Decimal | None = None
    volume: Decimal | None = None
    volume_24h: Decimal | None = None

    def to_json(self) -> dict[str, float]:
        return {k: float(getattr(self, k)) for k in QUOTE_KEYS if getattr(self, k) is not None}


@dataclass(frozen=True)
class ReplayRecord:
    """One resolved binary market of a replay file. ``history`` holds (UTC date, exact P(YES)) pairs."""

    platform: str
    market_id: str
    question: str
    history: tuple[tuple[date, Decimal], ...]
    resolution: int
    first_resolved_observation_date: date
    url: str = ""
    background: str = ""
    resolution_criteria: str = ""
    market_info_resolution_criteria: str | None = None
    market_open_datetime: str | None = None  # kept as written; parsed by ``open_at``
    market_close_datetime: str | None = None
    history_source: str = ""
    provenance: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)  # unknown keys, written back unchanged
    group_id: str = ""  # the exclusive group this market belongs to ("" = none)
    # what each history point recorded beside its price (parallel to ``history``); () when no point has any
    quotes: tuple[PointQuote | None, ...] = ()
    fee_rate: Decimal | None = None  # the taker fee rate, Polymarket's rule; None = not given (no fee)

    def __post_init__(self) -> None:
        object.__setattr__(self, "provenance", MappingProxyType(dict(self.provenance)))
        object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))
        if self.quotes and len(self.quotes) != len(self.history):
            raise ValueError(f"{len(self.quotes)} point quotes for {len(self.history)} history points")
        if self.quotes and not any(self.quotes):
            object.__setattr__(self, "quotes", ())

    def quote(self, i: int) -> PointQuote | None:
        """What history point ``i`` recorded beside its price (None: nothing)."""
        return self.quotes[i] if self.quotes else None

    @property
    def arena_id(self) -> str:
        return f"{VENUE}:{self.market_id}"

    @property
    def open_at(self) -> datetime | None:
        return _parse_iso(self.market_open_datetime, "market_open_datetime")

    @property
    def close_at(self) -> datetime | None:
        return _parse_iso(self.market_close_datetime, "market_close_datetime")

    @property
    def listed_from(self) -> datetime:
        """When the market first appears: its first point's visibility (or its open time, if later)."""
        first = _day_start(self.history[0][0] + ONE_DAY)
        opened = self.open_at
        return max(first, opened) if opened is not None else first

    @property
    def resolution_visible_from(self) -> datetime:
        return _day_start(self.first_resolved_observation_date + ONE_DAY)

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON object in the file's key order."""
        history: list[list[Any]] = [[d.isoformat(), float(p)] for d, p in self.history]
        for point, q in zip(history, self.quotes):
            if q is not None:
                point.append(q.to_json())
        out: dict[str, Any] = {
            "platform": self.platform, "market_id": self.market_id, "question": self.question, "url": self.url,
            "background": self.background, "resolution_criteria": self.resolution_criteria,
            "market_info_resolution_criteria": self.market_info_resolution_criteria,
            "market_open_datetime": self.market_open_datetime, "market_close_datetime": self.market_close_datetime,
            "resolution": self.resolution,
            "first_resolved_observation_date": self.first_resolved_observation_date.isoformat(),
            "last_unresolved_observation_date": self.history[-1][0].isoformat(),
            "n_points": len(self.history), "history": history, "history_source": self.history_source,
            "provenance": dict(self.provenance),
        }
        if self.group_id:
            out["group_id"] = self.group_id
        if self.fee_rate is not None:
            out["fee_rate"] = float(self.fee_rate)
        out.update(self.extra)
        return out


def _parse_iso(value: str | None, fld: str) -> datetime | None:
    if value is None:
        return None
    try:
        dt = datetime.fromisoformat(value)
    except (TypeError, ValueError) as exc:
        raise ParseError(f"not an ISO-8601 datetime: {value!r}", field=fld) from exc
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    try:
        dt = dt.astimezone(timezone.utc)
    except OverflowError as exc:
        raise ParseError(f"out of range: {value!r}", field=fld) from exc
    _in_range(dt.date(), value, fld)
    return dt


# The years a replay may speak of (the arena's clock takes times in 2000-2100): a date outside them is a
# malformed line, skipped like any other, not a date arithmetic error in the middle of a sync.
EARLIEST_DATE, LATEST_DATE = date(2000, 1, 1), date(2099, 12, 31)


def _in_range(d: date, value: object, fld: str) -> None:
    if not EARLIEST_DATE <= d <= LATEST_DATE:
        raise ParseError(f"{value!r} is outside {EARLIEST_DATE.year}-{LATEST_DATE.year}", field=fld)


def _parse_date(value: object, fld: str) -> date:
    if not isinstance(value, str) or len(value) != 10:
        raise ParseError(f"expected YYYY-MM-DD, got {value!r}", field=fld)
    try:
        d = date.fromisoformat(value)
    except ValueError as exc:
        raise ParseError(f"expected YYYY-MM-DD, got {value!r}", field=fld) from exc
    _in_range(d, value, fld)
    return d


def _text(obj: Mapping[str, Any], key: str, *, required: bool = False, nullable: bool = False) -> Any:
    if key not in obj or obj[key] is None:
        if required:
            raise ParseError("missing", field=key)
        if nullable:
            return None
        if key in obj:
            raise ParseError("null", field=key)
        return ""
    value = obj[key]
    if not isinstance(value, str):
        raise ParseError(f"expected a string, got {type(value).__name__}", field=key)
    if required and not value.strip():
        raise ParseError("empty", field=key)
    return value


def _probability(value: object, fld: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Decimal, Price)):
        raise ParseError(f"expected a probability, got {value!r}", field=fld)
    if isinstance(value, Price):
        return value.to_decimal()
    try:
        d = Decimal(repr(value)) if isinstance(value, float) else Decimal(str(value))
    except InvalidOperation as exc:
        raise ParseError(f"not a number: {value!r}", field=fld) from exc
    if not d.is_finite() or not Decimal(0) <= d <= Decimal(1):
        raise ParseError(f"probability outside [0, 1]: {value!r}", field=fld)
    return d


def parse_record(obj: object, *, line: int = 0) -> ReplayRecord:
    """Validate one decoded line. Raises ``ReplayFormatError`` naming the field (and line)."""
    try:
        return _parse_record(obj)
    except ReplayFormatError:
        raise
    except ParseError as exc:
        raise ReplayFormatError(str(exc), field=exc.field, line=line) from exc


def _parse_record(obj: object) -> ReplayRecord:
    if not isinstance(obj, Mapping):
        raise ParseError(f"expected a JSON object, got {type(obj).__name__}", field="(line)")
    platform = _text(obj, "platform", required=True)
    market_id = _text(obj, "market_id", required=True)
    question = _text(obj, "question", required=True)
    resolution = obj.get("resolution")
    if isinstance(resolution, bool) or resolution not in (0, 1):
        raise ParseError(f"expected 0 or 1, got {resolution!r}", field="resolution")
    resolved_on = _parse_date(obj.get("first_resolved_observation_date"), "first_resolved_observation_date")
    history_raw = obj.get("history")
    if not isinstance(history_raw, list) or not history_raw:
        raise ParseError("expected a non-empty array of [date, p]", field="history")
    history: list[tuple[date, Decimal]] = []
    quotes: list[PointQuote | None] = []
    for i, pair in enumerate(history_raw):
        if not isinstance(pair, (list, tuple)) or len(pair) not in (2, 3):
            raise ParseError(f"expected [date, p] or [date, p, {{bid, ask, volume, volume_24h}}], got {pair!r}",
                             field=f"history[{i}]")
        quotes.append(_point_quote(pair[2], f"history[{i}][2]") if len(pair) == 3 else None)
        d = _parse_date(pair[0], f"history[{i}][0]")
        if history and d <= history[-1][0]:
            raise ParseError(f"date {d} is not after {history[-1][0]}", field=f"history[{i}][0]")
        if d >= resolved_on:
            raise ParseError(f"point dated {d} is not before the resolution date {resolved_on} (look-ahead)",
                             field=f"history[{i}][0]")
        history.append((d, _probability(pair[1], f"history[{i}][1]")))
    if "n_points" in obj and (isinstance(obj["n_points"], bool) or obj["n_points"] != len(history)):
        raise ParseError(f"{obj['n_points']!r} != {len(history)} points", field="n_points")
    if obj.get("last_unresolved_observation_date") is not None:
        last = _parse_date(obj["last_unresolved_observation_date"], "last_unresolved_observation_date")
        if last != history[-1][0]:
            raise ParseError(f"{last} is not the last history date {history[-1][0]}",
                             field="last_unresolved_observation_date")
    source = _text(obj, "history_source")
    if source and len(source) != len(history):
        raise ParseError(f"{len(source)} letters for {len(history)} points", field="history_source")
    provenance = obj.get("provenance", {})
    if provenance is None:
        provenance = {}
    if not isinstance(provenance, Mapping):
        raise ParseError("expected an object", field="provenance")
    open_dt = _text(obj, "market_open_datetime", nullable=True)
    close_dt = _text(obj, "market_close_datetime", nullable=True)
    _parse_iso(open_dt, "market_open_datetime")
    _parse_iso(close_dt, "market_close_datetime")
    return ReplayRecord(
        platform=platform, market_id=market_id, question=question, history=tuple(history),
        resolution=int(resolution), first_resolved_observation_date=resolved_on, url=_text(obj, "url"),
        background=_text(obj, "background"), resolution_criteria=_text(obj, "resolution_criteria"),
        market_info_resolution_criteria=_text(obj, "market_info_resolution_criteria", nullable=True),
        market_open_datetime=open_dt, market_close_datetime=close_dt, history_source=source,
        provenance=provenance, extra={k: v for k, v in obj.items() if k not in FIELD_ORDER},
        group_id=_text(obj, "group_id", nullable=True) or "", quotes=tuple(quotes),
        fee_rate=_fee_rate(obj.get("fee_rate")),
    )


def _point_quote(value: object, fld: str) -> PointQuote:
    """A history point's third element: an object with any of ``QUOTE_KEYS``; bid ≤ ask when both are given."""
    if not isinstance(value, Mapping):
        raise ParseError(f"expected an object with {', '.join(QUOTE_KEYS)}, got {value!r}", field=fld)
    unknown = sorted(set(value) - set(QUOTE_KEYS))
    if unknown:
        raise ParseError(f"unknown key {unknown[0]!r} (a point records {', '.join(QUOTE_KEYS)})", field=fld)
    bid = _probability(value["bid"], f"{fld}.bid") if value.get("bid") is not None else None
    ask = _probability(value["ask"], f"{fld}.ask") if value.get("ask") is not None else None
    if bid is not None and ask is not None and bid > ask:
        raise ParseError(f"bid {value['bid']!r} is above ask {value['ask']!r} (a crossed quote)", field=fld)
    volume = _amount(value.get("volume"), f"{fld}.volume")
    volume_24h = _amount(value.get("volume_24h"), f"{fld}.volume_24h")
    return PointQuote(bid, ask, volume, volume_24h)


def _amount(value: object, fld: str) -> Decimal | None:
    """A non-negative finite number (a volume), or None when absent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise ParseError(f"expected a number, got {value!r}", field=fld)
    d = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    if not d.is_finite() or d < 0:
        raise ParseError(f"expected a finite number ≥ 0, got {value!r}", field=fld)
    return d


def _fee_rate(value: object) -> Decimal | None:
    if value is None:
        return None
    rate = _probability(value, "fee_rate")
    if rate * 1_000_000 != (rate * 1_000_000).to_integral_value():
        raise ParseError(f"more precise than 1e-6: {value!r}", field="fee_rate")
    return rate


@dataclass(frozen=True)
class ReplayFile:
    """What ``read_replay`` found: the valid records and the (line, message) of each skipped line."""

    records: tuple[ReplayRecord, ...]
    skipped: tuple[tuple[int, str], ...] = ()


def read_replay(path: str | Path, *, skip_malformed: bool = False) -> ReplayFile:
    """Read and validate a replay file. A malformed or duplicate line raises ``ReplayFormatError`` with its
    line number, unless ``skip_malformed`` (then it is counted in ``skipped``). A file with no valid record at
    all (empty, a CSV, another file's JSON) is refused either way, as is a missing or non-UTF-8 file."""
    try:
        return _read_replay(Path(path), skip_malformed)
    except FileNotFoundError:
        raise ReplayFormatError(f"no replay file at {path}",
                                fix="check the path (a replay file is JSON lines, e.g. from `arena export "
                                    "replay`)") from None
    except IsADirectoryError:
        raise ReplayFormatError(f"{path} is a directory, not a replay file", fix="name the .jsonl file") from None
    except UnicodeDecodeError as exc:
        raise ReplayFormatError(f"{path} is not UTF-8 text (byte {exc.start} of a chunk: {exc.reason})",
                                fix="a replay file is UTF-8 JSON lines; re-export it with `arena export replay`"
                                ) from None


def _read_replay(path: Path, skip_malformed: bool) -> ReplayFile:
    records: list[ReplayRecord] = []
    skipped: list[tuple[int, str]] = []
    seen: set[str] = set()
    lines: dict[str, int] = {}
    with open(path, encoding="utf-8") as fh:
        for number, text in enumerate(fh, start=1):
            if not text.strip():
                continue
            try:
                try:
                    obj = json.loads(text)
                except ValueError as exc:
                    raise ReplayFormatError(f"not JSON: {exc}", field="(line)", line=number) from exc
                except RecursionError:
                    raise ReplayFormatError("JSON nested too deeply", field="(line)", line=number) from None
                record = parse_record(obj, line=number)
                if record.market_id in seen:
                    raise ReplayFormatError(f"duplicate market_id {record.market_id!r}", field="market_id",
                                            line=number)
            except ReplayFormatError as exc:
                if not skip_malformed:
                    raise
                skipped.append((number, str(exc)))
                continue
            seen.add(record.market_id)
            records.append(record)
            lines[record.market_id] = number
    bad = _bad_groups(records)
    if bad:
        first = min(bad, key=lambda g: min(lines[r.market_id] for r in records if r.group_id == g))
        members = [r for r in records if r.group_id == first]
        error = ReplayFormatError(bad[first], field="group_id", line=min(lines[r.market_id] for r in members))
        if not skip_malformed:
            raise error
        for r in records:
            if r.group_id in bad:
                skipped.append((lines[r.market_id], f"line {lines[r.market_id]}: group_id: {bad[r.group_id]}"))
        records = [r for r in records if r.group_id not in bad]
    if not records:
        if skipped:
            raise ReplayFormatError(f"{path} is not a replay file: none of its {len(skipped)} lines is a market "
                                    f"record (first: {skipped[0][1]})")
        raise ReplayFormatError(f"{path} holds no market records (it is empty)")
    return ReplayFile(tuple(records), tuple(sorted(skipped)))


def _bad_groups(records: Iterable[ReplayRecord]) -> dict[str, str]:
    """group id → the problem, for each group that is not exclusive: fewer than two members, or not exactly one
    member resolving 1."""
    members: dict[str, list[ReplayRecord]] = {}
    for r in records:
        if r.group_id:
            members.setdefault(r.group_id, []).append(r)
    bad = {}
    for g, rs in members.items():
        winners = sum(r.resolution for r in rs)
        if len(rs) < 2:
            bad[g] = f"group {g!r} has one member; a group needs two or more markets"
        elif winners != 1:
            bad[g] = (f"group {g!r}: {winners} of its {len(rs)} members resolve 1; exactly one member of an "
                      f"exclusive group must")
    return bad


def _coerce(record: ReplayRecord | Mapping[str, Any], index: int) -> ReplayRecord:
    if isinstance(record, ReplayRecord):
        return record
    if not isinstance(record, Mapping):
        raise ReplayFormatError(f"record {index}: expected a ReplayRecord or a mapping", field="(record)")
    obj = dict(record)
    for key in ("market_open_datetime", "market_close_datetime"):
        if isinstance(obj.get(key), datetime):
            obj[key] = obj[key].isoformat()
    if isinstance(obj.get("first_resolved_observation_date"), date):
        obj["first_resolved_observation_date"] = obj["first_resolved_observation_date"].isoformat()
    history = obj.get("history")
    if isinstance(history, (list, tuple)):
        pairs = []
        for pair in history:
            if isinstance(pair, (list, tuple)) and len(pair) in (2, 3):
                d, p = pair[0], pair[1]
                d = d.isoformat()[:10] if isinstance(d, (date, datetime)) else d
                point = [d, _plain(p)]
                if len(pair) == 3:
                    q = pair[2]
                    point.append(q.to_json() if isinstance(q, PointQuote) else
                                 {k: _plain(v) for k, v in q.items() if v is not None} if isinstance(q, Mapping)
                                 else q)
                pairs.append(point)
            else:
                pairs.append(pair)
        obj["history"] = pairs
        if "history_source" not in obj:
            obj["history_source"] = EXPORT_SOURCE_LETTER * len(pairs)
    if isinstance(obj.get("fee_rate"), Decimal):
        obj["fee_rate"] = float(obj["fee_rate"])
    try:
        return parse_record(obj)
    except ReplayFormatError as exc:
        error = ReplayFormatError(f"record {index}: {exc}")
        error.field = exc.field
        raise error from exc


def _plain(value: object) -> object:
    """A JSON number for an arena value (``Price``, ``Decimal``); anything else as given, for the parser to judge."""
    if isinstance(value, Price):
        return float(value.to_decimal())
    if isinstance(value, Decimal):
        return float(value)
    return value


def write_replay(records: Iterable[ReplayRecord | Mapping[str, Any]], path: str | Path) -> int:
    """Write records in the replay format (validated first, so the reader always accepts what is written).

    Mappings may use ``date``/``datetime``/``Decimal``/``Price`` values; a missing ``history_source`` is
    filled with "A" (arena) per point. The file is replaced atomically. Returns the number of lines written.
    """
    target = Path(path)
    lines = []
    seen: set[str] = set()
    coerced = []
    for i, rec in enumerate(records):
        record = _coerce(rec, i)
        if record.market_id in seen:
            raise ReplayFormatError(f"record {i}: duplicate market_id {record.market_id!r}", field="market_id")
        seen.add(record.market_id)
        coerced.append(record)
        lines.append(json.dumps(record.to_json(), ensure_ascii=False))
    bad = _bad_groups(coerced)
    if bad:
        raise ReplayFormatError(next(iter(bad.values())), field="group_id")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=target.name, suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            for text in lines:
                fh.write(text)
                fh.write("\n")
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return len(lines)


@dataclass(frozen=True)
class _Indexed:
    """A record with its derived lookups computed once (dates for bisecting, prices, visibility instants)."""

    record: ReplayRecord
    dates: tuple[date, ...]
    prices: tuple[Price, ...]
    listed_from: datetime
    resolution_visible_from: datetime
    close_at: datetime | None
    # per point: (bid, ask) as Prices where recorded; () when no point recorded any
    books: tuple[tuple[Price | None, Price | None], ...] = ()
    # per point: the index of the last point at or before it that recorded a volume (-1: none yet)
    volume_from: tuple[int, ...] = ()

    @classmethod
    def of(cls, record: ReplayRecord) -> _Indexed:
        books: tuple[tuple[Price | None, Price | None], ...] = ()
        volume_from: tuple[int, ...] = ()
        if record.quotes:
            books = tuple((Price.of(q.bid) if q and q.bid is not None else None,
                           Price.of(q.ask) if q and q.ask is not None else None) for q in record.quotes)
            last, marks = -1, []
            for i, q in enumerate(record.quotes):
                if q is not None and (q.volume is not None or q.volume_24h is not None):
                    last = i
                marks.append(last)
            volume_from = tuple(marks)
        return cls(record, tuple(d for d, _ in record.history), tuple(Price.of(p) for _, p in record.history),
                   record.listed_from, record.resolution_visible_from, record.close_at, books, volume_from)

    def volumes(self, t: datetime) -> tuple[float | None, float | None]:
        """(volume, volume_24h) of the last point visible at ``t`` that recorded either; (None, None) if none."""
        n = self.visible_count(t)
        i = self.volume_from[n - 1] if self.volume_from and n else -1
        q = self.record.quote(i) if i >= 0 else None
        if q is None:
            return None, None
        return (float(q.volume) if q.volume is not None else None,
                float(q.volume_24h) if q.volume_24h is not None else None)

    def visible_count(self, t: datetime) -> int:
        """How many history points are visible at ``t`` (those dated before ``t``'s UTC day)."""
        return bisect_left(self.dates, t.date())


class ReplayVenue:
    """Serves replay records as of a simulated time ``t``, never showing anything dated at or after ``t``'s day.

    Market ids are arena ids (``"replay:<market_id>"``).
    """

    venue = VENUE

    def __init__(self, records: Iterable[ReplayRecord], *, skipped: Sequence[tuple[int, str]] = ()) -> None:
        self._records: dict[str, _Indexed] = {}
        for record in records:
            if record.arena_id in self._records:
                raise ReplayFormatError(f"duplicate market_id {record.market_id!r}", field="market_id")
            self._records[record.arena_id] = _Indexed.of(record)
        self.skipped = tuple(skipped)

    @classmethod
    def from_path(cls, path: str | Path, *, skip_malformed: bool = False) -> ReplayVenue:
        loaded = read_replay(path, skip_malformed=skip_malformed)
        return cls(loaded.records, skipped=loaded.skipped)

    @property
    def skipped_count(self) -> int:
        return len(self.skipped)

    def __len__(self) -> int:
        return len(self._records)

    def market_ids(self) -> list[str]:
        return list(self._records)

    def _indexed(self, market_id: str) -> _Indexed:
        try:
            return self._records[market_id]
        except KeyError:
            raise NotFound(f"no replay market {market_id!r}") from None

    def record(self, market_id: str) -> ReplayRecord:
        """The full record — including its outcome. For scoring and export, never for an agent's view."""
        return self._indexed(market_id).record

    def span(self) -> tuple[datetime, datetime]:
        """(first instant any market is listed, first instant every resolution is visible)."""
        if not self._records:
            raise NotFound("the replay venue is empty")
        return (min(x.listed_from for x in self._records.values()),
                max(x.resolution_visible_from for x in self._records.values()))

    def _market(self, x: _Indexed, t: datetime) -> Market:
        if t >= x.resolution_visible_from:
            status = MarketStatus.RESOLVED
        elif x.close_at is not None and x.close_at <= t:
            status = MarketStatus.CLOSED
        else:
            status = MarketStatus.OPEN
        record = x.record
        volume, volume_24h = x.volumes(t)
        return Market(
            id=record.arena_id, venue=VENUE, question=record.question, kind=MarketKind.BINARY,
            close_time=x.close_at, status=status, description=record.background, url=record.url,
            category=record.platform, group_id=f"{VENUE}:group:{record.group_id}" if record.group_id else "",
            volume=volume, volume_24h=volume_24h,
        )

    def market_at(self, market_id: str, t: datetime) -> Market | None:
        """The market as seen at ``t``; None before it is listed."""
        t = _aware(t)
        x = self._indexed(market_id)
        if t < x.listed_from:
            return None
        return self._market(x, t)

    def markets_at(self, t: datetime, *, include_resolved: bool = False) -> list[Market]:
        """Markets listed at ``t`` (OPEN or CLOSED; RESOLVED ones only with ``include_resolved``), by id."""
        t = _aware(t)
        out = []
        for x in self._records.values():
            if t < x.listed_from:
                continue
            if t >= x.resolution_visible_from and not include_resolved:
                continue
            out.append(self._market(x, t))
        return sorted(out, key=lambda m: m.id)

    def history_at(self, market_id: str, t: datetime) -> list[PricePoint]:
        """The YES-price points visible at ``t`` (dated before ``t``'s UTC day), each stamped at the end of
        its day."""
        t = _aware(t)
        x = self._indexed(market_id)
        n = x.visible_count(t)
        return [PricePoint(_day_start(d + ONE_DAY), p) for d, p in zip(x.dates[:n], x.prices[:n])]

    def quote_at(self, market_id: str, t: datetime) -> Quote | None:
        """The last visible YES price at ``t``, with the best bid/ask that point recorded (None before the
        first point is visible)."""
        t = _aware(t)
        x = self._indexed(market_id)
        n = x.visible_count(t)
        if n == 0:
            return None
        at = _day_start(x.dates[n - 1] + ONE_DAY)
        bid, ask = x.books[n - 1] if x.books else (None, None)
        return Quote(market_id=market_id, prices={YES: x.prices[n - 1]}, observed_at=at, fetched_at=at,
                     bid=bid, ask=ask, source=VENUE)

    def fee_rate(self, market_id: str) -> Decimal:
        """The market's taker fee rate (0 when the file gives none)."""
        rate = self._indexed(market_id).record.fee_rate
        return rate if rate is not None else Decimal(0)

    def extras(self, market_id: str) -> dict[str, str]:
        """Venue details the store keeps with the market (``MarketRow.extra``): the fee rate where the file
        gives one, which replay fills at recorded quotes pay; {} otherwise."""
        rate = self._indexed(market_id).record.fee_rate
        return {"fee_rate": str(rate)} if rate is not None else {}

    def resolution_at(self, market_id: str, t: datetime) -> Resolution | None:
        """The resolution, only once ``t`` is past the market's resolution date; else None."""
        t = _aware(t)
        x = self._indexed(market_id)
        if t < x.resolution_visible_from:
            return None
        return Resolution.winner(market_id, YES if x.record.resolution == 1 else NO,
                                 resolved_at=x.resolution_visible_from, source=VENUE)


__all__ = [
    "PointQuote",
    "ReplayFile",
    "ReplayFormatError",
    "ReplayRecord",
    "ReplayVenue",
    "parse_record",
    "read_replay",
    "write_replay",
]
