"""Standings: every board — one per cohort and one per model across cohorts — computed once per `as_of` from the
facts recorded up to then, for the CLI, the demo report, the site pages and /api/leaderboard.json.

Point in time: `standings(engine, T)` reads only fills recorded at or before T, the latest resolution version
recorded by T, decisions and their forecasts completed by T, cohorts created by T (completed only if they
completed by T) and price snapshots fetched by T — so the boards as of T equal the boards a run stopped at T
would have shown.

Tracks: every agent row carries its lineup `track` — "model" (answers from the prompt alone) or "agent" (may call
tools) — and `standings(..., track=...)` ranks one track alone (the references stay on every board).

Leakage: questions whose answer the round's own facts gave away (`domain.leakage`) are left out of every board
(`store.frames.forecast_set_frame`); each row counts the ones its seat was asked (`n_leaked`; a reference row: the
cohort's), and each cohort lists them (`Boards.leaks`, the JSON's `leaks`).

Headroom: each cohort carries its forecast sets' headroom (`scoring.headroom`, read by `read.headroom`): the
market's and always-0.5's Brier on them, the share of their questions in band, and the smallest Brier
difference between two seats they can detect at their size.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from dataclasses import dataclass, field
from datetime import datetime
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Text, cast, select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from arena.read.csv_cells import safe_frame
from arena.clock import utc
from arena.config import TRACKS, track_of
from arena.scoring.board import BOARD_COLUMNS, DEFAULT_RANK_BY, check_rank_by, cohort_boards, overall_board
from arena.scoring.stats import DEFAULT_N_BOOT
from arena.cache.board_cache import cached_cohort_boards, overall_board_cached, overall_parts
from arena.cache.frame_cache import cohort_frames
from arena.read.contamination import Guard, SeatDates, seat_dates, split
from arena.read.headroom import cohort_headroom
from arena.domain.contamination import pre_cutoff_lines
from arena.scoring.headline import REFERENCE_AGENTS
from arena.scoring.headroom import Headroom
from arena.domain.leakage import Leak
from arena.domain.question_filter import QuestionFilter
from arena.cache.memo import Recent
from arena.store.tables import AgentRow, CohortRow, MarketRow

# The fields every JSON row carries (overall rows say "model" instead of "agent"), in this order.
JSON_FIELDS = (
    "agent", "kind", "track", "rank", "rank_label", "tier", "provisional", "same_as", "forecast_brier",
    "forecast_brier_lo", "forecast_brier_hi", "n_forecasts", "n_markets", "n_asked", "n_answered", "n_leaked",
    "implied_brier",
    "implied_brier_band", "kelly_brier", "stated_brier",
    "brier_minus_market", "brier_minus_market_lo", "brier_minus_market_hi", "bss_vs_0_25", "bss_vs_market",
    "bss_vs_market_note", "pnl", "return_pct", "win_rate", "crowd_proxy", "coherence_gap", "contradicting_bets",
    "n_bets", "n_resolved_bets",
    # other proper scores and difficulty-adjusted scores on the forecast set (scoring.board)
    "log_score", "spherical_score", "brier_adjusted", "irt_skill",
    # decision value and risk (scoring.decision_value, scoring.risk; pnl_at_bid: positions marked at the bid)
    "decision_value", "decision_value_lo", "decision_value_hi", "sharpe", "max_drawdown", "risk_note", "pnl_at_bid",
    # information beyond the market (scoring.beyond_market)
    "beyond_market", "beyond_market_lo", "beyond_market_hi", "beyond_market_note", "price_copy",
    # the contamination guard (replays; `read.contamination`): the questions left out of the headline for the
    # seat's knowledge cutoff, their own Brier (the "pre-cutoff" line), and the model's age at its first decision
    "n_contaminated", "pre_cutoff_brier", "model_age_days",
)
MONEY_COLUMNS = ("pnl", "return_pct")  # a cohort's money, which a question filter cannot split
_INT_FIELDS = ("rank", "tier", "n_forecasts", "n_markets", "n_asked", "n_answered", "n_leaked", "n_bets", "n_resolved_bets",
               "n_cohorts", "n_contaminated", "model_age_days")
# the guard's columns, added to the board rows after they are ranked (null for a seat that declared no date)
GUARD_COLUMNS = ("n_contaminated", "pre_cutoff_brier", "model_age_days")


@dataclass(frozen=True)
class CohortBoard:
    name: str
    status: str  # "open" or "completed" (as of the boards' as_of)
    rows: pd.DataFrame  # scoring.board.BOARD_COLUMNS, best first
    # names the rows' content — the board cache's key of their inputs, the status and the seats' tracks — so a
    # reader may keep what it derives from them in memory under it ("": computed without the cache, not named)
    key: str = ""


_TRACKED: Recent[pd.DataFrame] = Recent("tracked board")  # CohortBoard.key → its rows with their track column
_JSON_ROWS: Recent[list[dict[str, Any]]] = Recent("board json", lambda rows: len(rows) + 1)  # CohortBoard.key → its JSON rows (`boards_json`)


@dataclass(frozen=True)
class Boards:
    as_of: datetime
    rank_by: str
    cohorts: list[CohortBoard] = field(default_factory=list)
    overall: pd.DataFrame = field(default_factory=pd.DataFrame)  # scoring.board.OVERALL_COLUMNS, best first
    track: str | None = None  # the one track ranked ("model" or "agent"); None: every seat
    # cohort name → the headroom of its forecast sets (`scoring.headroom`), from every seat whatever `track` says
    headroom: Mapping[str, Headroom] = field(default_factory=dict)
    # cohort name → its leaked questions asked of any seat (`domain.leakage.Leak`), by round and market
    leaks: Mapping[str, tuple[Leak, ...]] = field(default_factory=dict)
    questions: QuestionFilter | None = None  # the questions the boards were limited to (None: every question)


@lru_cache(maxsize=1024)
def _track_of_text(config: str | None) -> str:
    return track_of((json.loads(config) if config else None) or {})


def _kind(agent_kind: str) -> str:
    return "llm" if agent_kind == "llm" else "baseline"



def check_cohort_names(engine: Engine, names: list[str] | None) -> None:
    """InputError naming the first of `names` that is no cohort of the store, with the cohorts there are."""
    if not names:
        return
    from arena.errors import InputError

    with Session(engine) as s:
        known = sorted(s.scalars(select(CohortRow.name)))
    unknown = [n for n in names if n not in known]
    if unknown:
        choices = ", ".join(known[-10:]) if known else "none yet"
        raise InputError(f"unknown cohort {unknown[0]!r}",
                         fix=f"choose from {choices}{' (the newest 10 shown)' if len(known) > 10 else ''}, "
                             "or leave --cohort out")

def standings(engine: Engine, as_of: datetime, *, rank_by: str = DEFAULT_RANK_BY,
              cohort_names: list[str] | None = None, n_boot: int = DEFAULT_N_BOOT, seed: int = 0,
              track: str | None = None, cache: bool = True, questions: QuestionFilter | None = None,
              include_contaminated: bool = False) -> Boards:
    """Every board as of `as_of` (see the module docstring), ranked by `rank_by` (a `scoring.board.RANK_CHOICES`
    key; ValueError otherwise). `cohort_names` limits the cohort boards and the overall board to those cohorts;
    `track` ("model" or "agent", config.TRACKS) to the agents of that track. Seeded: the same database and
    arguments give the same intervals and tiers. With `cache`, a cohort whose facts are unchanged since its
    frames were last read takes them from `services.frame_cache`, and a cohort whose inputs are unchanged since
    a board was last computed for them takes it from `services.board_cache` (the same frames and boards either
    way) instead of recomputing it.

    `questions` limits the boards to the forecast-set questions it keeps (`filtered_frames`): such boards are
    computed from the frames without the board caches, whose keys do not name a filter. A replay's questions
    contaminated for a seat (`read.contamination`) leave its headline for its pre-cutoff line unless
    `include_contaminated` (then they are scored with the rest and only counted)."""
    check_rank_by(rank_by)
    questions = questions if questions is not None and questions.active else None
    if questions is not None and rank_by in MONEY_COLUMNS:
        raise ValueError(f"a board limited to some questions cannot be ranked by {rank_by}: money is not split by "
                         "question")
    if track is not None and track not in TRACKS:
        raise ValueError(f"unknown track {track!r}; choose from {', '.join(TRACKS)}")
    as_of = utc(as_of)
    with Session(engine) as s:
        q = (select(CohortRow.id, CohortRow.name, CohortRow.completed_at)
             .where(CohortRow.created_at <= as_of).order_by(CohortRow.period_start, CohortRow.id))
        if cohort_names:
            q = q.where(CohortRow.name.in_(cohort_names))  # type: ignore[attr-defined]
        cohorts = s.execute(q).all()
        if not cohorts:
            return Boards(as_of, rank_by, [], pd.DataFrame(), track, questions=questions)
        ids = [c[0] for c in cohorts]
        # (configs as text: a thousand cohorts share a few lineups, so each distinct one is parsed once)
        agents = s.execute(select(AgentRow.name, AgentRow.kind, cast(AgentRow.config, Text), AgentRow.cohort_id)
                           .where(AgentRow.cohort_id.in_(ids))).all()  # type: ignore[attr-defined]
        kinds = {name: _kind(kind) for name, kind, _, _ in agents}
    frames = cohort_frames(engine, [(c[0], c[1]) for c in cohorts], as_of, cache=cache)
    forecasts, bets, ports = frames.forecasts, frames.bets, frames.portfolios
    if questions is not None:
        forecasts, bets, ports = filtered_frames(engine, as_of, questions, forecasts, bets, ports)
        cache = False  # a board's cache key names its cohort's whole frames, not a filter of them
    # (a filtered board has no headroom: the headroom describes a cohort's whole forecast sets)
    room = cohort_headroom(engine, as_of, [(c[0], c[1]) for c in cohorts], forecasts) if questions is None else {}
    cohort_name = {c[0]: c[1] for c in cohorts}
    # The contamination guard: a replay's questions whose outcome a seat's model could know from its training
    # data leave its headline for its pre-cutoff line; the boards' keys name which rows left.
    parsed: dict[str | None, SeatDates | None] = {}  # each distinct lineup record read once
    for _, _, config, _ in agents:
        if config not in parsed:
            parsed[config] = _dates_of_text(config)
    dates = {(cohort_name[cid], name): d for name, _, config, cid in agents if (d := parsed[config])}
    parts_of = split(engine, as_of, frames, dates, include=include_contaminated, forecasts=forecasts)
    forecasts, contaminated, guard = parts_of.clean, parts_of.contaminated, parts_of.guard
    frame_keys, frame_digests = parts_of.keys, parts_of.digests
    seat_track = {(cohort_name[cid], name): _track_of_text(config) for name, _, config, cid in agents}
    leaks = _leaks(frames.leaked)
    leaked = frames.leaked
    if track is not None:
        forecasts, bets, ports, leaked = (_of_track(f, seat_track, track) for f in (forecasts, bets, ports, leaked))
    n_leaked = _leaked_counts(leaked, leaks)
    opts = dict(kinds=kinds, rank_by=rank_by, n_boot=n_boot, seed=seed)
    if cache:
        agents_of: dict[str, list[str]] = {}
        for name, _, _, cid in agents:
            agents_of.setdefault(cohort_name[cid], []).append(name)
        whole = len(frame_keys) == len(cohorts)  # every cohort's rows named by the frame cache
        # (a cohort's forecast-set and bet rows, named apart from its portfolios: a mark moves only those)
        rows_of = {c: f"{frame_digests['forecasts'][c]} {frame_digests['bets'][c]}"
                   for c in frame_keys} if whole else None
        per_cohort = cached_cohort_boards(engine, forecasts, bets, ports, now=as_of, **opts,
                                          inputs=frame_keys if whole else None, agents=agents_of,
                                          scope=f"track={track}", parts=rows_of)
    else:
        per_cohort = {c: ("", rows) for c, rows in cohort_boards(forecasts, bets, ports, **opts).items()}
    if questions is not None:
        per_cohort = {c: (key, _without_money(rows)) for c, (key, rows) in per_cohort.items()}
    lines = pre_cutoff_lines(contaminated, ["cohort", "agent"])
    boards = []
    for _, name, completed_at in cohorts:
        status = "completed" if completed_at is not None and utc(completed_at) <= as_of else "open"
        inputs_key, rows = per_cohort.get(name, ("", None))
        if rows is None:  # a cohort without agents
            rows = pd.DataFrame(columns=list(BOARD_COLUMNS))
        rows, guarded = _with_guard(rows, "agent", guard, lines, lambda a, name=name: [(name, a)], name)
        tracks = [seat_track.get((name, a)) for a in rows["agent"]]
        key = f"{inputs_key} {status} {json.dumps(tracks)} {guarded}" if inputs_key else ""
        counts = [n_leaked.get((name, a), 0) for a in rows["agent"]]
        key = f"{key} {json.dumps(counts)}" if key else ""
        tracked = (_TRACKED.get_or_make(key, lambda rows=rows, tracks=tracks, counts=counts:
                                        _with_track(rows, tracks, counts)) if key
                   else _with_track(rows, tracks, counts))
        boards.append(CohortBoard(name, status, tracked, key))
    if cache and len(frame_keys) == len(cohorts):  # every cohort's rows are named: so is the overall board's input
        def compute() -> pd.DataFrame:
            # (the parts are kept by the frames' digests: the frames as read, not filtered to a track)
            parts = (overall_parts(frame_digests, forecasts, bets, engine=engine, now=as_of,
                                   options=dict(rank_by=rank_by, n_boot=n_boot, seed=seed))
                     if track is None else {})
            return overall_board(forecasts, bets, ports, **opts, **parts)

        overall = overall_board_cached(frame_keys, compute,
                                       kinds=kinds, options={**opts, "track": track, "kinds": None},
                                       engine=engine, now=as_of)
    else:
        overall = overall_board(forecasts, bets, ports, **opts)
    if questions is not None:
        overall = _without_money(overall)
    by_model: dict[str, set[str]] = {}
    for (_, agent), t in seat_track.items():
        by_model.setdefault(agent, set()).add(t)
    # A name that ran in both tracks (its lineup changed between cohorts) says so rather than picking one.
    models = overall.get("model", pd.Series(dtype=object))
    per_model: dict[str, int] = {}
    for (_, agent), n in n_leaked.items():
        per_model[agent] = per_model.get(agent, 0) + n
    overall = overall.assign(track=[("+".join(sorted(by_model[m])) if m in by_model else None) for m in models],
                             n_leaked=[per_model.get(m, 0) for m in models])
    if len(overall) and "model" in overall:
        pooled = contaminated.assign(market_id=contaminated["cohort"].astype(str) + "/"
                                     + contaminated["market_id"].astype(str))
        seats_of: dict[str, list[tuple[str, str]]] = {}
        for cohort, agent in dates:
            seats_of.setdefault(agent, []).append((cohort, agent))
        overall, _ = _with_guard(overall, "model", guard, pre_cutoff_lines(pooled, ["agent"]),
                                 lambda m: seats_of.get(m, []), None)
    return Boards(as_of, rank_by, boards, overall, track, room, leaks, questions)


def filtered_frames(engine: Engine, as_of: datetime, questions: QuestionFilter, forecasts: pd.DataFrame,
                    bets: pd.DataFrame, ports: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The standings' frames limited to `questions`: the forecast-set rows of the questions it keeps (by their
    round's decision day and market category, `read.breakdown.with_question_facts`); the bets placed in the
    window on markets of those categories; and the portfolios as they are, which give every seat its row —
    `standings` then empties the money columns (`MONEY_COLUMNS`): a cohort's cash and P/L are not split by
    question, and a whole cohort's money beside a part of its forecasts would read as the part's."""
    from arena.read.breakdown import FACT_COLUMNS, filter_questions, with_question_facts

    with Session(engine) as s:
        f = filter_questions(with_question_facts(s, forecasts, as_of), questions).drop(columns=list(FACT_COLUMNS))
        if len(bets):
            cats = dict(s.connection().execute(select(MarketRow.id, MarketRow.category).where(
                MarketRow.id.in_(sorted(pd.unique(bets["market_id"]).tolist())))).all())  # type: ignore[attr-defined]
            bets = bets[questions.mask(bets["at"], [cats.get(m) or "" for m in bets["market_id"]])].reset_index(
                drop=True)
    return f, bets, ports


def _without_money(rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` with MONEY_COLUMNS null (a filtered board's)."""
    return rows.assign(**{c: np.nan for c in MONEY_COLUMNS if c in rows.columns})



def _dates_of_text(config: str | None) -> SeatDates | None:
    """The dates of a frozen lineup record given as text (None when it has neither)."""
    found = seat_dates([("", "", (json.loads(config) if config else None) or {})])
    return found.get(("", ""))


def _with_guard(rows: pd.DataFrame, first: str, guard: Guard, lines: pd.DataFrame, seats: Any,
                cohort: str | None) -> tuple[pd.DataFrame, str]:
    """`rows` with the guard's columns (`GUARD_COLUMNS`) and a text naming their values (for the rows' key).
    `seats(name)` lists the (cohort, agent) seats of a row; `lines` is `domain.contamination.pre_cutoff_lines`
    by cohort and agent (`cohort` given) or by agent alone. A row none of whose seats declared a cutoff has null
    counts; none that declared `released` has a null age (overall: the age at the model's first decision)."""
    if not guard.seats or not len(rows):
        return rows, ""
    at = lines.set_index(["cohort", "agent"] if cohort is not None else ["agent"]) if len(lines) else None
    n, brier, age = [], [], []
    for name in rows[first]:
        mine = [k for k in seats(name) if k in guard.seats]
        cut = [k for k in mine if guard.seats[k].knowledge_cutoff is not None]
        key = (cohort, name) if cohort is not None else name
        found = at is not None and key in at.index
        n.append(int(at.loc[key, "n_contaminated"]) if found else (0 if cut else None))
        brier.append(float(at.loc[key, "pre_cutoff_brier"]) if found else math.nan)
        ages = [guard.ages[k] for k in mine if k in guard.ages]
        age.append(min(ages) if ages else None)
    out = rows.copy(deep=False)
    out["n_contaminated"] = pd.Series(n, index=rows.index, dtype=object)
    out["pre_cutoff_brier"] = pd.Series(brier, index=rows.index, dtype=float)
    out["model_age_days"] = pd.Series(age, index=rows.index, dtype=object)
    return out, json.dumps([n, [None if b != b else b for b in brier], age])


def _with_track(rows: pd.DataFrame, tracks: list[str | None], n_leaked: list[int] | None = None) -> pd.DataFrame:
    """`rows.assign(track=tracks, n_leaked=n_leaked)` without copying the rows' columns (a third of the time; a
    fresh process does it for a thousand boards): a shallow copy, which the new columns do not touch the rows
    through."""
    out = rows.copy(deep=False)
    out["track"] = tracks
    out["n_leaked"] = np.asarray(n_leaked if n_leaked is not None else [0] * len(out), dtype=np.int64)
    return out


def _leaks(leaked: pd.DataFrame) -> dict[str, tuple[Leak, ...]]:
    """cohort name → its leaked questions (one each, whichever seats were asked it), by round and market."""
    if not len(leaked):
        return {}
    out: dict[str, list[Leak]] = {}
    seen: set[tuple[str, str]] = set()
    for cohort, question, mid, reason, other in zip(leaked["cohort"], leaked["question"], leaked["market_id"],
                                                    leaked["leak_reason"], leaked["leak_other"]):
        if (cohort, question) in seen:
            continue
        seen.add((cohort, question))
        rnd = str(question)[len(str(mid)) + 1:]  # a question is market@round
        out.setdefault(str(cohort), []).append(Leak(str(cohort), rnd, str(mid), str(reason), str(other)))
    return {c: tuple(sorted(ls, key=lambda x: (x.round, x.market_id))) for c, ls in out.items()}


def _leaked_counts(leaked: pd.DataFrame, leaks: Mapping[str, tuple[Leak, ...]]) -> dict[tuple[str, str], int]:
    """(cohort, seat) → the leaked questions it was asked; each reference row: its cohort's leaked questions."""
    out: dict[tuple[str, str], int] = {}
    if len(leaked):
        for (cohort, agent), n in leaked.groupby(["cohort", "agent"], sort=False).size().items():
            out[(str(cohort), str(agent))] = int(n)
    for cohort, ls in leaks.items():
        for ref in REFERENCE_AGENTS:
            out[(cohort, ref)] = len(ls)
    return out


def _of_track(frame: pd.DataFrame, seat_track: dict[tuple[str, str], str], track: str) -> pd.DataFrame:
    """The rows of `frame` (with cohort and agent columns) whose seat runs in `track`."""
    if not len(frame):
        return frame
    keep = [seat_track.get((c, a)) == track for c, a in zip(frame["cohort"], frame["agent"])]
    return frame[keep].reset_index(drop=True)


def _json_value(name: str, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(float(value)):
            return None
        return int(value) if name in _INT_FIELDS else float(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, str) and value == "" and name in ("bss_vs_market_note", "beyond_market_note"):
        return None
    return value


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """`frame.to_dict("records")` — the same values, Python scalars included — in a tenth of the time on a
    board's few rows and many columns (one conversion of the whole frame to objects instead of one per cell)."""
    names = list(frame.columns)
    return [dict(zip(names, row)) for row in frame.to_numpy(dtype=object)]


def _rows(frame: pd.DataFrame, first: str) -> list[dict[str, Any]]:
    fields = [first] + (["n_cohorts"] if first == "model" else []) + list(JSON_FIELDS[1:])
    out = []
    for rec in records(frame):
        out.append({f: _json_value(f, rec.get(f if f != first else first)) for f in fields})
    return out


def _cohort_rows(board: CohortBoard) -> list[dict[str, Any]]:
    """`_rows` of a cohort board, kept in memory under its key (shared: never changed by a reader)."""
    make = lambda: _rows(board.rows, "agent")  # noqa: E731
    return _JSON_ROWS.get_or_make(board.key, make) if board.key else make()


def _headroom_json(room: Headroom | None) -> dict[str, Any] | None:
    """A cohort's headroom as JSON (`scoring.headroom.HEADROOM_FIELDS`; null where nothing was computed)."""
    return None if room is None else {k: _json_value(k, v) for k, v in room.to_json().items()}


def boards_json(boards: Boards) -> dict[str, Any]:
    """The boards as plain JSON: {"as_of", "rank_by", "cohorts": [{"name", "status", "rows": [...],
    "headroom": {...}}], "overall": [...]}. Each row has the JSON_FIELDS (overall rows: "model" for "agent", plus n_cohorts); a
    missing value is null, never 0. `track` is "model" or "agent" (null for the reference rows; "agent+model"
    on the overall board for a name that ran in both). `same_as` names the reference row whose forecasts the
    row equals on every question (null otherwise); `n_markets` counts the resolved markets behind the headline
    (its unit of evidence; on the overall board its (cohort, market) observations), `n_forecasts` the resolved
    market@round questions. `beyond_market` (with `beyond_market_lo`/`_hi`) is the encompassing coefficient of
    `scoring.beyond_market`, null with the reason in `beyond_market_note`; `price_copy` the correlation of the
    stated and the price's logits. A cohort's "headroom" (`scoring.headroom`) has market_brier, half_brier,
    in_band_share, min_detectable_difference, filled_share, n_questions, n_markets, n_resolved, paired_sd and
    sd_basis; its "leaks" (`domain.leakage`) list the questions left out of its boards as given away, each
    {round, market_id, reason, other_market_id}, and each row's `n_leaked` counts those its seat was asked.
    "filter" is the question filter the boards were limited to ({"from", "until", "categories"}), null when they
    hold every question."""
    return {
        "as_of": boards.as_of.isoformat(),
        "rank_by": boards.rank_by,
        "filter": boards.questions.to_json() if boards.questions is not None else None,
        "cohorts": [{"name": c.name, "status": c.status, "rows": _cohort_rows(c),
                     "headroom": _headroom_json(boards.headroom.get(c.name)),
                     "leaks": [x.to_json() for x in boards.leaks.get(c.name, ())]} for c in boards.cohorts],
        "overall": _rows(boards.overall, "model") if len(boards.overall) else [],
    }


# The CSV's leading columns: where the row is, then the headline with its interval and tier, then skill against
# the market, coverage and money; every other JSON field follows in JSON_FIELDS order (only those that exist).
CSV_LEAD = ("cohort", "agent", "rank", "rank_label", "forecast_brier", "forecast_brier_lo", "forecast_brier_hi",
            "tier", "provisional", "brier_minus_market", "brier_minus_market_lo", "brier_minus_market_hi",
            "n_asked", "n_answered", "n_markets", "n_forecasts", "pnl", "return_pct")


def csv_columns() -> list[str]:
    """The columns of `boards_frame` / `boards_csv`, in order."""
    fields = ["cohort", *JSON_FIELDS, "n_cohorts"]
    lead = [c for c in CSV_LEAD if c in fields]
    return lead + [c for c in fields if c not in lead]


def boards_frame(boards: Boards) -> pd.DataFrame:
    """The boards as one table — `arena leaderboard --format csv` and `arena export`'s scores table: a `cohort`
    column (the cohort's name, or "overall"), the headline first (`CSV_LEAD`), then the other JSON_FIELDS (an
    overall row puts its model in `agent`) and n_cohorts; a missing value is None, never 0."""
    data = boards_json(boards)
    records = []
    for c in data["cohorts"]:
        records += [{"cohort": c["name"], **r} for r in c["rows"]]
    records += [{"cohort": "overall", "agent": r["model"], **{k: v for k, v in r.items() if k != "model"}}
                for r in data["overall"]]
    frame = pd.DataFrame(records, columns=csv_columns(), dtype=object)
    return frame.where(frame.notna(), None)


def boards_csv(boards: Boards) -> str:
    """`boards_frame` as CSV text; a missing value is an empty cell, never 0."""
    return safe_frame(boards_frame(boards)).to_csv(index=False)


__all__ = ["CSV_LEAD", "JSON_FIELDS", "Boards", "CohortBoard", "boards_csv", "boards_frame", "boards_json", "csv_columns",
           "standings"]
