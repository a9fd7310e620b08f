"""Board cache: each cohort's board, computed once for the inputs it is computed from.

`scoring.board.cohort_boards` gives every cohort its own paired bootstraps and its own difficulty and IRT fits:
a 100-cohort site spent most of its render recomputing boards of cohorts that had long
completed. A cohort's board is a pure function of the cohort's rows in the three input frames (forecast set,
bets, portfolios), the kinds of its agents, the board's options (rank key, draws, seed) and the scoring code, so
`cached_cohort_boards` keys each cohort by a SHA-256 over exactly those — the rows' content, column names and
dtypes, the options and the package-wide code digest (`cache.code`: every file of the package, its templates, the
libraries' versions) — and computes only the cohorts whose key is not stored yet. A key cannot go stale: a new fill, forecast, resolution or price moves
the key, and an old key is simply never asked for again. Nothing about the as-of enters the key except through
the rows, so "now" and "as of T" share the entries whose inputs agree.

The entries live in the store's `memo` table (kinds "board", "cohort part", "overall part") (a memo, not a fact: emptying it only costs time). Each
cohort keeps its `KEEP_PER_COHORT` most recently used entries. The cache never fails a read: when the store
cannot be written (a read-only replica, a locked SQLite file) the boards are computed and served all the same,
with one warning in the log.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy.engine import Engine

from arena.cache.code import key
from arena.scoring.board import (BetPart, CohortPart, ForecastPart, cohort_part, finish_cohort_board,
                                 overall_bet_part, overall_forecast_part, split_by_cohort)
from arena.cache.codec import decode_frames, decode_many_frames, encode_frames
from arena.cache.memo import MemoTable, Recent, kept


FORMAT = 2  # of the key and the payload; bump when either changes shape
KEEP_PER_COHORT = 8
OVERALL = "(overall board)"  # the `cohort` the overall board's entries are filed under


def _rows_by_cohort(frame: pd.DataFrame) -> tuple[list[list[str]], dict[Any, str]]:
    """The frame's shape (column names and dtypes) and, per cohort, a hash of its rows' content in frame order."""
    shape = [[str(c), str(t)] for c, t in frame.dtypes.items()]
    if not len(frame):
        return shape, {}
    hashes = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    codes, cohorts = pd.factorize(frame["cohort"], sort=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.cumsum(np.bincount(codes, minlength=len(cohorts)))[:-1]
    return shape, {c: hashlib.sha256(part.tobytes()).hexdigest()
                   for c, part in zip(cohorts, np.split(hashes[order], bounds))}


def cohort_keys(forecasts: pd.DataFrame, bets: pd.DataFrame, portfolios: pd.DataFrame, *,
                kinds: Mapping[str, str], options: Mapping[str, Any]) -> dict[Any, str]:
    """cohort → the key (`cache.code.key`) of everything its board is computed from — its rows' content in the
    three frames, the frames' shapes, its agents' kinds and the options — for every cohort in any frame."""
    parts = [_rows_by_cohort(f) for f in (forecasts, bets, portfolios)]
    shapes = [shape for shape, _ in parts]
    cohorts = list(dict.fromkeys(c for _, rows in parts for c in rows))
    agents: dict[Any, set[str]] = {}
    for f in (forecasts, bets, portfolios):
        if len(f):
            for c, a in f[["cohort", "agent"]].drop_duplicates().itertuples(index=False):
                agents.setdefault(c, set()).add(a)
    return {c: key("board", dict(options), shapes, str(c), sorted((a, kinds.get(a)) for a in agents.get(c, ())),
                   [rows.get(c, "") for _, rows in parts]) for c in cohorts}


def encode(frame: pd.DataFrame) -> bytes:
    """A board frame as a memo payload (`cache.codec`) that `decode` turns back into an equal frame."""
    return encode_frames({"board": frame}, {"format": FORMAT})


def _board(frames: Mapping[str, pd.DataFrame | None], meta: Mapping[str, Any]) -> pd.DataFrame:
    board = frames.get("board")
    if meta.get("format") != FORMAT or board is None:
        raise ValueError(f"not a board of format {FORMAT}")
    return board


def decode(payload: bytes) -> pd.DataFrame:
    return _board(*decode_frames(payload))


def decode_many(payloads: list[bytes]) -> list[pd.DataFrame]:
    """`[decode(p) for p in payloads]`, equal frame for frame, in a few pandas constructions instead of one per
    board (`codec.decode_many_frames`)."""
    return [_board(frames, meta) for frames, meta in decode_many_frames(payloads)]


def _subset(frame: pd.DataFrame, cohorts: Iterable[Any]) -> pd.DataFrame:
    return frame[frame["cohort"].isin(list(cohorts))] if len(frame) else frame


# boards by key, decoded or computed lately: a key names its inputs, so it is right for any database
_RECENT: Recent[pd.DataFrame] = Recent("board")


def _store(engine: Engine) -> MemoTable[pd.DataFrame]:
    return MemoTable(engine, "board", encode, decode, keep=KEEP_PER_COHORT, decode_many=decode_many)


def overall_board_cached(inputs: Mapping[Any, str], compute: Callable[[], pd.DataFrame], *, kinds: Mapping[str, str],
                         options: Mapping[str, Any], engine: Engine | None = None,
                         now: datetime | None = None) -> pd.DataFrame:
    """The overall board computed by `compute` from every cohort's rows, named by `inputs` (cohort → a hash of
    its rows, as `services.frame_cache` gives): a render that finds nothing changed takes it from this process's
    memory, or — with `engine` (and `now`, stamping the entry's use) — from the `memo` table, so a fresh
    process (`arena render` from cron) does not refit a million rows either; a changed cohort recomputes it.
    Its entries are filed under the cohort name `OVERALL` (the `KEEP_PER_COHORT` most recently used stay)."""
    named = key("overall board", sorted((str(c), k) for c, k in inputs.items()), sorted(kinds.items()), dict(options))
    store = _store(engine) if engine is not None else None
    return kept({OVERALL: named}, _RECENT, store, lambda _: {OVERALL: compute()}, filed=lambda _: OVERALL,
                now=now)[OVERALL]


# the overall board's forecast and bet parts (`scoring.board.ForecastPart`, `BetPart`) by the key of their frame
_PARTS: Recent[Any] = Recent("overall part")
PARTS = "(overall board parts)"  # the `cohort` the parts' stored entries are filed under


def _series_frame(series: pd.Series | None) -> pd.DataFrame | None:
    return None if series is None else series.rename_axis("agent").rename("value").reset_index()


def _frame_series(frame: pd.DataFrame | None, name: Any) -> pd.Series | None:
    return None if frame is None else frame.set_index("agent")["value"].rename(name)


def encode_part(part: ForecastPart | BetPart) -> bytes:
    """An overall board part as a memo payload: its frames, and its tiers as (agent, value) frames."""
    if isinstance(part, ForecastPart):
        tiers = {f"tier {name}": _series_frame(tier) for name, tier in part.tiers.items()}
        return encode_frames({"table": part.table, "pairs": part.pairs, "proxy": part.proxy, **tiers},
                             {"format": FORMAT, "part": "forecast",
                              "tiers": [[name, None if tier is None else tier.name] for name, tier in part.tiers.items()]})
    return encode_frames({"per": part.per, "tier": _series_frame(part.tier)},
                         {"format": FORMAT, "part": "bet", "tier": None if part.tier is None else part.tier.name})


def decode_part(payload: bytes) -> ForecastPart | BetPart:
    frames, meta = decode_frames(payload)
    if meta.get("format") != FORMAT:
        raise ValueError(f"not an overall board part of format {FORMAT}")
    if meta.get("part") == "forecast":
        table, pairs = frames["table"], frames["pairs"]
        if table is None or pairs is None:
            raise ValueError("an overall forecast part without its table or pairs")
        return ForecastPart(table, {name: _frame_series(frames[f"tier {name}"], label) for name, label in meta["tiers"]},
                            pairs, frames["proxy"])
    if meta.get("part") == "bet":
        return BetPart(frames["per"], _frame_series(frames["tier"], meta["tier"]))
    raise ValueError(f"unknown overall board part {meta.get('part')!r}")


def overall_parts(digests: Mapping[str, Mapping[Any, str]], forecasts: pd.DataFrame, bets: pd.DataFrame, *,
                  options: Mapping[str, Any], engine: Engine | None = None,
                  now: datetime | None = None) -> dict[str, Any]:
    """`forecast_part` and `bet_part` for `scoring.board.overall_board(forecasts, bets, ..., **options)`, each
    kept under the digests of the one frame it is computed from (`digests`: frame name → cohort → a hash of its
    rows, as `services.frame_cache` gives; in the frames' cohort order) — in this process and, with `engine` (and
    `now`, stamping the entries' use), in the `memo` table, filed under `PARTS`. A render after a price
    moved — the portfolios alone changed — refits neither the forecast part (the fits and bootstraps over every
    forecast) nor the bet part, in a long-running process or a fresh one."""
    makers = {"forecast_part": ("forecasts", lambda: overall_forecast_part(forecasts, **options)),
              "bet_part": ("bets", lambda: overall_bet_part(bets, **options))}
    keys = {name: key("overall part", name, [[str(c), d] for c, d in digests[frame].items()], dict(options))
            for name, (frame, _) in makers.items()}
    store = MemoTable(engine, "overall part", encode_part, decode_part,
                      keep=KEEP_PER_COHORT) if engine is not None else None
    return kept(keys, _PARTS, store, lambda missing: {name: makers[name][1]() for name in missing},
                filed=lambda _: PARTS, now=now)


def input_keys(inputs: Mapping[Any, str], agents: Mapping[Any, Iterable[str]], *, kinds: Mapping[str, str],
               options: Mapping[str, Any]) -> dict[Any, str]:
    """cohort → its board's key from `inputs` (cohort → a hash naming exactly its rows in the three frames, as
    `services.frame_cache` gives) instead of from the rows themselves; `agents`: cohort → its agents' names."""
    return {c: key("board from inputs", dict(options), str(c), named, sorted((a, kinds.get(a)) for a in agents.get(c, ())))
            for c, named in inputs.items()}


def cached_cohort_boards(engine: Engine, forecasts: pd.DataFrame, bets: pd.DataFrame, portfolios: pd.DataFrame,
                         *, now: datetime, kinds: Mapping[str, str], rank_by: str, n_boot: int,
                         seed: int, inputs: Mapping[Any, str] | None = None,
                         agents: Mapping[Any, Iterable[str]] | None = None, scope: str = "",
                         parts: Mapping[Any, str] | None = None) -> dict[Any, tuple[str, pd.DataFrame]]:
    """`scoring.board.cohort_boards(forecasts, bets, portfolios, ...)`, equal frame for frame, each with its key,
    computing only the cohorts whose inputs have no stored board yet and storing those (`now` stamps the entries'
    use). With `inputs` (and `agents`, see `input_keys`), the cohorts are keyed by those instead of by hashing
    their rows; `scope` names any filter applied to the frames after they were read (a track). With `parts`
    (cohort → a name of exactly its forecast-set and bet rows), a board computed anew takes its cohort's
    `CohortPart` — the bootstraps and fits — from the cache when only its portfolios moved (a mark)."""
    options = dict(rank_by=rank_by, n_boot=n_boot, seed=seed)
    if inputs is not None:
        present = {c for f in (forecasts, bets, portfolios) if len(f) for c in pd.unique(f["cohort"])}
        keys = input_keys({c: k for c, k in inputs.items() if c in present}, agents or {}, kinds=kinds,
                          options={**options, "scope": scope})
    else:
        keys = cohort_keys(forecasts, bets, portfolios, kinds=kinds, options=options)

    def compute(missing: list[Any]) -> dict[Any, pd.DataFrame]:
        rows = split_by_cohort(_subset(forecasts, missing), _subset(bets, missing), _subset(portfolios, missing))
        made = _cohort_parts(engine, rows, options, scope, parts or {}, now)
        return {c: finish_cohort_board(made[c], p, kinds=kinds, rank_by=rank_by) for c, (_, _, p) in rows.items()}

    boards = kept(keys, _RECENT, _store(engine), compute, filed=str, now=now)
    return {c: (keys[c], board) for c, board in boards.items()}


# cohort parts by key, decoded or computed lately
_COHORT_PARTS: Recent[CohortPart] = Recent("cohort part")


def _cohort_parts(engine: Engine, rows: Mapping[Any, tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]],
                  options: Mapping[str, Any], scope: str, names: Mapping[Any, str], now: datetime
                  ) -> dict[Any, CohortPart]:
    """cohort → its `CohortPart`, for the cohorts of `rows` (cohort → its forecast, bet and portfolio rows): kept
    under (the code digest, the options, the scope, the cohort, `names[cohort]`) where `names` names its rows, and
    computed otherwise."""
    keys = {c: key("cohort part", {**options, "scope": scope}, str(c), names[c]) for c in rows if c in names}
    store = MemoTable(engine, "cohort part", encode_cohort_part, decode_cohort_part, keep=KEEP_PER_COHORT,
                      decode_many=decode_cohort_parts)
    named = kept(keys, _COHORT_PARTS, store,
                 lambda missing: {c: cohort_part(rows[c][0], rows[c][1], **options) for c in missing},
                 filed=str, now=now, store_held=True)
    return {c: named[c] if c in named else cohort_part(f, b, **options) for c, (f, b, _) in rows.items()}


def encode_cohort_part(part: CohortPart) -> bytes:
    """A cohort part as a memo payload: each of its frames (None where it has none)."""
    return encode_frames(vars(part), {"format": FORMAT, "part": "cohort"})


def _cohort_part(frames: Mapping[str, pd.DataFrame | None], meta: Mapping[str, Any]) -> CohortPart:
    if meta.get("format") != FORMAT or meta.get("part") != "cohort":
        raise ValueError(f"not a cohort part of format {FORMAT}")
    return CohortPart(**{name: frames[name] for name in CohortPart.__dataclass_fields__})  # type: ignore[arg-type]


def decode_cohort_part(payload: bytes) -> CohortPart:
    return _cohort_part(*decode_frames(payload))


def decode_cohort_parts(payloads: list[bytes]) -> list[CohortPart]:
    return [_cohort_part(frames, meta) for frames, meta in decode_many_frames(payloads)]


__all__ = ["FORMAT", "KEEP_PER_COHORT", "OVERALL", "PARTS", "cached_cohort_boards", "cohort_keys",
           "decode", "decode_cohort_part", "decode_cohort_parts", "decode_many", "decode_part", "encode", "encode_cohort_part", "encode_part",
           "input_keys", "overall_board_cached", "overall_parts"]
