"""Frame cache: the standings' three input frames (forecast set, bets, portfolios as of T) read from the store only
for the cohorts whose facts changed.

Every board and the overall board are computed from `store.frames`' frames of every cohort. At a thousand cohorts
that is a million bets read, built into DataFrames and hashed on every render, although a scheduled render
finds one or two cohorts changed. `cohort_frames` returns exactly those frames — equal, row for row and dtype
for dtype, to reading them all (tested) — reading from the store only the cohorts whose entry is not valid.

An entry is keyed by (the code digest, the cohort id, the cohort's version — `read.fact_versions`, raised by the
database with every write —, and "latest" or the time it was read as of) and holds the versions of the markets
the cohort's facts name as they were when it was read. It is valid while those market versions hold. Its key
says "latest" when no fact of the cohort or its markets was stamped after the time it was read as of (its
horizon, stored with it): every later time then reads the same rows.

Order: the versions and horizons are read before the frames, so an entry is never stored under a key newer than
its rows (a write in between only makes the next reader, who sees the newer version, read the cohort again). On
PostgreSQL one REPEATABLE READ snapshot serves them all. A store whose triggers keep no versions (a point-in-time
copy) is read directly.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import pandas as pd
import pyarrow as pa
from sqlalchemy.engine import Engine
from sqlmodel import Session

from arena.cache.code import key
from arena.cache.codec import HEAD, decode_tables, encode_tables, from_tables, head, table_bytes, to_table
from arena.clock import utc
from arena.read.fact_versions import cohort_markets, cohort_versions, fact_horizons, market_versions, versions_kept
from arena.read.score import portfolios_frame
from arena.store.frames import bets_frame, forecast_set_frame
from arena.cache.memo import MemoTable, Recent, read_once

FORMAT = 6  # of the key and the payload; bump when either changes shape
KEEP_PER_COHORT = 4
NAMES = ("forecasts", "bets", "portfolios")
LATEST = "latest"


@dataclass(frozen=True)
class Frames:
    """The standings' inputs for a set of cohorts (each frame with a `cohort` column), and how they were got."""

    forecasts: pd.DataFrame
    bets: pd.DataFrame
    portfolios: pd.DataFrame
    read: tuple[int, ...] = ()  # the cohorts whose frames were read from the facts (the rest came from the cache)
    # cohort name → a hash naming exactly its rows in the three frames (with the cache only): what a board of
    # those rows can be keyed by without hashing them (`board_cache.cached_cohort_boards(inputs=...)`). It holds
    # the stored entry's random nonce, so it names those rows in no other database.
    keys: dict[str, str] = field(default_factory=dict)
    # frame name → cohort name → a hash of that cohort's rows in that frame (their content, `_order` included, so
    # equal digests for every cohort mean an equal frame): what a result computed from one frame alone can be
    # kept under across renders in which only the other frames moved (with the cache only)
    digests: dict[str, dict[str, str]] = field(default_factory=dict)
    # the asked seats' rows of the leaked questions `forecasts` leaves out (`store.frames.question_leaks`):
    # cohort, agent, market_id, question, leak_reason, leak_other. The keys and digests above name the rows read
    # with them, of which `forecasts` and this are a fixed split.
    leaked: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(LEAK_COLUMNS)))
    # cohort name → the markets its fills and forecasts name, every fact as of any time (the markets the site gives
    # a page; `web.page_keys`)
    touched: dict[str, list[str]] = field(default_factory=dict)
    # cohort name → every market its facts name (fills, forecasts, forecast-set questions)
    markets: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class _Entry:
    as_of: datetime  # the time the frames were read as of
    horizon: datetime | None  # the latest time stamped on a fact they depend on (`fact_horizons`)
    markets: list[str]  # every market the cohort's facts name (fills, forecasts, forecast-set questions)
    versions: list[int]  # those markets' versions when the frames were read
    touched: list[str]  # the markets its fills and forecasts name (those the site gives a page)
    frames: dict[str, pa.Table]  # NAMES → the cohort's rows (`codec.to_table`), each with its `_order` column
    nonce: str = field(default_factory=lambda: secrets.token_hex(16))  # names this stored entry in any database
    digests: dict[str, str] = field(default_factory=dict)  # NAMES → a hash of that frame's rows (`_digest`)

    def __post_init__(self) -> None:
        if not self.digests:
            self.digests = {name: _digest(cols) for name, cols in self.frames.items()}

    def sees_all(self) -> bool:
        """Whether no fact it depends on was stamped after the time it was read as of."""
        return self.horizon is None or self.horizon <= self.as_of

    def serves(self, as_of: datetime, versions: dict[str, int]) -> bool:
        """Whether its frames are the cohort's as of `as_of`, given its markets' `versions` now (the cohort's own
        version is in its key)."""
        same_time = as_of == self.as_of or (self.horizon is None or self.horizon <= min(as_of, self.as_of))
        return same_time and all(versions.get(m, 0) == v for m, v in zip(self.markets, self.versions))


def _key(cohort_id: int, version: int, when: str) -> str:
    """The key of a cohort's entry at `version`, read as of `when` (an ISO time, or LATEST)."""
    return key("frames", cohort_id, version, when)


# --- frames as Arrow tables: split per cohort, stored, and put back together exactly -------------------------

def _split(frame: pd.DataFrame, names: dict[int, str]) -> dict[int, pa.Table]:
    """Each cohort's rows of `frame` (which has a `cohort` column holding the names) as an Arrow table
    (`codec.to_table`)."""
    table = to_table(frame)
    positions = frame.groupby("cohort", sort=False).indices if len(frame) else {}
    empty = np.array([], dtype=np.int64)
    return {cid: table.take(positions.get(name, empty)) for cid, name in names.items()}


def _frame(parts: list[pa.Table]) -> pd.DataFrame | None:
    """The cohorts' rows as one frame in the order of `_order` (None when there are no rows at all)."""
    parts = [p for p in parts if p.num_rows]
    if not parts:
        return None
    frame = from_tables(parts)
    order = frame["_order"].to_numpy()
    if len(order) > 1 and (np.diff(order) < 0).any():
        frame = frame.take(np.argsort(order, kind="stable"))
    return frame.drop(columns="_order").reset_index(drop=True)


def _digest(table: pa.Table) -> str:
    """A hash of a cohort's rows of one frame: the table's Arrow IPC bytes."""
    return hashlib.sha256(table_bytes(table)).hexdigest()


def encode(entry: _Entry) -> bytes:
    """An entry as a memo payload (`cache.codec`), tagged with its nonce."""
    return encode_tables(entry.frames, {
        "format": FORMAT, "as_of": entry.as_of.isoformat(),
        "horizon": entry.horizon.isoformat() if entry.horizon is not None else None,
        "markets": entry.markets, "versions": entry.versions, "touched": entry.touched, "digests": entry.digests},
        tag=entry.nonce)


def decode(payload: bytes) -> _Entry:
    tables, doc, nonce = decode_tables(payload)
    if doc.get("format") != FORMAT or set(tables) != set(NAMES) or any(t is None for t in tables.values()):
        raise ValueError(f"frame cache payload is not format {FORMAT}")
    horizon = datetime.fromisoformat(doc["horizon"]) if doc["horizon"] is not None else None
    return _Entry(datetime.fromisoformat(doc["as_of"]), horizon, doc["markets"], doc["versions"], doc["touched"],
                  tables, nonce, digests=doc["digests"])  # type: ignore[arg-type]


# Entries this process decoded or read lately (in the process memory): a long-running process (the scheduler,
# `arena serve`, a worker) checks the stored nonces and decodes only the entries it does not hold.
_RECENT: Recent[_Entry] = Recent("frames", lambda e: sum(t.num_rows for t in e.frames.values()) + 1)


def _held(heads: dict[str, bytes]) -> dict[str, _Entry]:
    """key → the entry this process holds for it, for the stored keys whose stored entry it is (its nonce heads
    the stored payload)."""
    return {k: e for k, e in _RECENT.get_many(heads).items() if heads[k] == head(e.nonce)}


# --- reading ----------------------------------------------------------------------------------------------

LEAK_COLUMNS = ("cohort", "agent", "market_id", "question", "leak_reason", "leak_other")


def _split_leaks(forecasts: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the forecast-set rows without the leaked questions — `forecast_set_frame` as read without `leaked` —,
    the leaked questions' rows)."""
    flagged = (forecasts["leak_reason"] != "").to_numpy(dtype=bool) if len(forecasts) else np.zeros(0, dtype=bool)
    clean = forecasts.drop(columns=["leak_reason", "leak_other"])
    if not flagged.any():
        return clean, forecasts.iloc[:0][list(LEAK_COLUMNS)].reset_index(drop=True)
    return (clean[~flagged].reset_index(drop=True),
            forecasts.loc[flagged, list(LEAK_COLUMNS)].reset_index(drop=True))


def _read(session: Session, ids: list[int], as_of: datetime, kinds: Sequence[str] = NAMES) -> dict[str, pd.DataFrame]:
    readers = {"forecasts": lambda: forecast_set_frame(session, ids, as_of, order=True, leaked=True),
               "bets": lambda: bets_frame(session, ids, as_of, order=True),
               "portfolios": lambda: portfolios_frame(session, as_of, ids, point_in_time=True, order=True)}
    return {k: readers[k]() for k in kinds}


def _session(engine: Engine) -> Session:
    if engine.dialect.name == "postgresql":  # one snapshot for the marks and the frames
        return Session(engine.execution_options(isolation_level="REPEATABLE READ"))
    return Session(engine)


def cohort_frames(engine: Engine, cohorts: Sequence[tuple[int, str]], as_of: datetime, *,
                  cache: bool = True) -> Frames:
    """The forecast set, bets and portfolios (point in time) of `cohorts` ((id, name) pairs) as of `as_of`, equal
    to `store.frames.forecast_set_frame`, `bets_frame` and `services.score.portfolios_frame` over those cohorts;
    with `cache`, each cohort's rows come from the frame cache when its facts did not change since they were
    stored (module docstring). Within `cache.memo.one_reading` (a render), asked again for the same
    cohorts and time, it answers from its first reading."""
    as_of = utc(as_of)
    key = ("cohort_frames", engine.url.render_as_string(hide_password=True), id(engine), tuple(cohorts), as_of, cache)
    return read_once(key, lambda: _cohort_frames(engine, cohorts, as_of, cache))


def _cohort_frames(engine: Engine, cohorts: Sequence[tuple[int, str]], as_of: datetime, cache: bool) -> Frames:
    names = {int(cid): name for cid, name in cohorts}
    ids = list(names)
    if cache and not versions_kept(engine):
        cache = False
    store: MemoTable[_Entry] = MemoTable(engine, "frames", encode, decode, keep=KEEP_PER_COHORT)
    with _session(engine) as s:
        if not cache:
            named, touched = cohort_markets(s.connection(), ids)
            frames = _read(s, ids, as_of)
            clean, leaked = _split_leaks(frames["forecasts"].drop(columns="_order"))
            return Frames(clean, *(frames[n].drop(columns="_order") for n in NAMES[1:]), read=tuple(ids),
                          leaked=leaked, touched={names[cid]: touched[cid] for cid in ids},
                          markets={names[cid]: named[cid] for cid in ids})
        conn = s.connection()
        version = cohort_versions(conn, ids)
        latest = {cid: _key(cid, version[cid], LATEST) for cid in ids}
        at = {cid: _key(cid, version[cid], as_of.isoformat()) for cid in ids}
        wanted = [*latest.values(), *at.values()]
        heads = store.heads(wanted, HEAD)
        found = _held(heads)
        stored = store.load([k for k in wanted if k in heads and k not in found])
        _RECENT.put_many(stored)
        found.update(stored)
        named = {m for e in found.values() for m in e.markets}
        now = market_versions(conn, named)
        keys: dict[int, str] = {}
        valid: dict[int, _Entry] = {}
        for cid in ids:
            for key in (latest[cid], at[cid]):
                entry = found.get(key)
                if entry is not None and entry.serves(as_of, now):
                    keys[cid], valid[cid] = key, entry
                    break
        missing = [cid for cid in ids if cid not in valid]
        fresh: dict[int, _Entry] = {}
        if missing:  # versions and horizons first, then the frames (module docstring)
            markets, touched = cohort_markets(conn, missing)
            then = market_versions(conn, [m for ms in markets.values() for m in ms])
            horizons = fact_horizons(conn, markets)
            read = _read(s, missing, as_of)
            split = {kind: _split(read[kind], {cid: names[cid] for cid in missing}) for kind in NAMES}
            for cid in missing:
                entry = _Entry(as_of, horizons[cid], markets[cid], [then[m] for m in markets[cid]], touched[cid],
                               {kind: split[kind][cid] for kind in NAMES})
                keys[cid], fresh[cid] = (latest[cid] if entry.sees_all() else at[cid]), entry
            _RECENT.put_many({keys[cid]: e for cid, e in fresh.items()})
        entries = {**valid, **fresh}
        built = {n: _frame([entries[cid].frames[n] for cid in ids]) for n in NAMES}
        empty = [n for n, f in built.items() if f is None]
        if empty:  # no rows at all: the empty frame exactly as a direct read gives it
            direct = _read(s, ids, as_of, empty)
            built.update({n: direct[n].drop(columns="_order") for n in empty})
    store.save({keys[cid]: (names[cid], e) for cid, e in fresh.items()}, [keys[cid] for cid in valid], as_of,
               replace=True)
    named_rows = {names[cid]: hashlib.sha256(f"{keys[cid]} {entries[cid].nonce}".encode()).hexdigest() for cid in ids}
    digests = {n: {names[cid]: entries[cid].digests[n] for cid in ids} for n in NAMES}
    clean, leaked = _split_leaks(built["forecasts"])
    return Frames(clean, built["bets"], built["portfolios"], read=tuple(missing), keys=named_rows, digests=digests,
                  leaked=leaked, touched={names[cid]: entries[cid].touched for cid in ids},
                  markets={names[cid]: entries[cid].markets for cid in ids})


__all__ = ["FORMAT", "Frames", "KEEP_PER_COHORT", "cohort_frames", "decode", "encode"]
