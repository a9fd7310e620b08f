"""Frames: the read model — every set-based read of the arena's facts as a pandas DataFrame, one query (or a
few) per frame, no per-row ORM objects: open positions and cash folded from fills, latest prices, resolutions,
bets, stated forecasts. Services (marks, scores, standings, statistics, decomposition, ablations) and the site
read the facts through these; none of them writes anything.

`raw_rows` takes rows straight from the DBAPI cursor where SQLAlchemy's per-row processing would cost more
than the query (PostgreSQL), and `timestamp_literal` lets a time-filtered statement go that way. `copy_frame`
goes further for the frames of a million rows: PostgreSQL writes them as CSV (`COPY … TO STDOUT`) and pandas'
C reader parses it, with no Python object per value; `read_frame` takes that way on PostgreSQL and the executed
statement elsewhere. The bets and forecast frames read their facts by id and look the names up (`_joined`):
joining the names in SQL made the server write them a million times.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import BigInteger, Integer, String, bindparam, cast, func, literal_column, or_, select, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlmodel import Session, col

from arena.clock import utc
from arena.domain.market import NO, YES
from arena.money import MICRO
from arena.domain.leakage import Asked, MarketText, ResolutionFact, find_leaks
from arena.store.tables import (AgentRow, CohortRow, DecisionRow, FillRow, ForecastQuestionRow, ForecastRow, MarketRow,
                                PriceSnapshotRow, ResolutionRow)


def rows_frame(rows: Sequence[Sequence[object]], columns: list[str]) -> pd.DataFrame:
    """A DataFrame of `rows` named by `columns`, each column typed as pandas types a list of its values: from
    plain tuples in C (`from_records`, where building a list per column touches every value in Python), the
    rows of a SQLAlchemy result made tuples first."""
    if not rows:
        return pd.DataFrame({c: [] for c in columns})
    if not isinstance(rows[0], tuple):
        rows = [tuple(r) for r in rows]
    return pd.DataFrame.from_records(rows, columns=columns)


def raw_rows(session: Session, q: Any) -> list[tuple]:
    """Rows of `q` straight from the DBAPI cursor: for the 100k-row position fold, SQLAlchemy's per-row result
    processing costs more than the query. Only for statements whose bound values are plain integers and
    strings (rendered as literals by the dialect's own compiler)."""
    conn = session.connection()
    sql = str(q.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
    cursor = conn.connection.cursor()
    try:
        cursor.execute(sql)
        return cursor.fetchall()
    finally:
        cursor.close()


# PostgreSQL writes a double as the shortest text that reads back to it; pandas before 3 reads such text to within
# an ulp unless asked for the round-trip converter (3 deprecates the option, its default reading the text exactly:
# tests/integration/test_copy_frame.py checks the floats come back bit for bit)
_EXACT_FLOATS = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}


def copy_frame(session: Session, q: Any, columns: list[str], kinds: Sequence[str]) -> pd.DataFrame:
    """What `rows_frame(raw_rows(session, q), columns)` returns — the same values and dtypes — read through
    `COPY (q) TO STDOUT` in CSV and parsed by pandas' C reader: no Python object per value, which is what a
    million-row read otherwise spends most of its time on. PostgreSQL only; `q`'s bound values as for `raw_rows`.
    One kind per selected column:

    - "str": a NOT NULL text column (CSV cannot tell NULL from '' once parsed: the reader keeps every value);
    - "int" / "float": a number; NULL becomes NaN (an int column with a NULL is float64, as `rows_frame` makes it);
    - "time": a timestamptz, sent as exact epoch microseconds and typed as `rows_frame` types the driver's
      datetimes (in the connection's time zone).
    """
    if len(kinds) != len(columns) or set(kinds) - {"str", "int", "float", "time"}:
        raise ValueError(f"copy_frame: one kind of str/int/float/time per column, got {list(kinds)}")
    conn = session.connection()
    epoch_us = lambda c: cast(func.extract("epoch", c) * 1_000_000, BigInteger)  # noqa: E731 - numeric: exact
    q = q.with_only_columns(*(epoch_us(c) if k == "time" else c for c, k in zip(q.selected_columns, kinds)),
                            maintain_column_froms=True)
    sql = str(q.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
    buf = io.BytesIO()
    cursor = conn.connection.cursor()
    try:
        with cursor.copy(f"COPY ({sql}) TO STDOUT (FORMAT csv)") as copy:
            for block in copy:
                buf.write(block)
    finally:
        cursor.close()
    if not buf.tell():
        return rows_frame([], columns)
    buf.seek(0)
    df = pd.read_csv(buf, header=None, names=columns, keep_default_na=False, **_EXACT_FLOATS,
                     na_values={c: [""] for c, k in zip(columns, kinds) if k != "str"},
                     dtype={c: (str if k == "str" else "float64") for c, k in zip(columns, kinds) if k in ("str", "float")})
    tz = conn.connection.driver_connection.info.timezone
    for c, k in zip(columns, kinds):
        if k != "str" and df[c].isna().all():  # every value NULL: pandas makes a list of Nones an object column
            df[c] = pd.Series([None] * len(df), dtype=object)
        elif k == "time":
            like = pd.Series([datetime(2000, 1, 1, tzinfo=tz)]).dtype  # the dtype pandas gives the driver's values
            df[c] = pd.to_datetime(df[c], unit="us", utc=True).dt.tz_convert(tz).astype(like)
    return df


def timestamp_literal(at: datetime) -> Any:
    """`at` as a PostgreSQL timestamptz literal, so a time-filtered statement can take `raw_rows` (whose
    literal rendering has no portable form for a datetime bound). The text is `isoformat()` of an aware
    datetime — digits and `-:+.T` only."""
    if at.tzinfo is None:
        raise ValueError("timestamp_literal takes an aware datetime")
    return literal_column(f"CAST('{at.isoformat()}' AS timestamptz)")


def position_frame(session: Session, cohort_ids: Sequence[int], as_of: datetime | None = None) -> pd.DataFrame:
    """Open positions (shares > 0) of the cohorts: agent_id, market_id, outcome, shares, cost (micro units).
    With `as_of`, only fills recorded at or before it count (the book as it stood then)."""
    q = (
        select(FillRow.agent_id, FillRow.market_id, FillRow.outcome,
               func.sum(FillRow.shares).label("shares"), func.sum(FillRow.cost_micros).label("cost"))
        .where(col(FillRow.cohort_id).in_(cohort_ids))
        .group_by(FillRow.agent_id, FillRow.market_id, FillRow.outcome)
        .having(func.sum(FillRow.shares) > 0)
    )
    if session.connection().dialect.name == "postgresql":
        rows = raw_rows(session, q if as_of is None else q.where(FillRow.at <= timestamp_literal(as_of)))
    elif as_of is not None:  # a datetime bound cannot be rendered as a literal portably: the ORM path executes it
        rows = session.connection().execute(q.where(FillRow.at <= as_of)).all()
    else:
        rows = raw_rows(session, q)
    df = rows_frame(rows, ["agent_id", "market_id", "outcome", "shares", "cost"])
    return df.astype({"agent_id": "int64", "shares": "int64", "cost": "int64"})


def cash_frame(session: Session, cohort_ids: Sequence[int], as_of: datetime | None = None) -> pd.DataFrame:
    """Every agent of the cohorts with its cash = starting cash + Σ cash deltas of its fills (with `as_of`: of
    its fills recorded at or before it)."""
    fq = (
        select(FillRow.agent_id, func.sum(FillRow.cash_micros).label("delta"))
        .where(col(FillRow.cohort_id).in_(cohort_ids))
        .group_by(FillRow.agent_id)
    )
    fills = (fq.where(FillRow.at <= as_of) if as_of is not None else fq).subquery()
    q = (
        select(AgentRow.id, AgentRow.cohort_id, CohortRow.starting_cash_micros, fills.c.delta)
        .join(CohortRow, CohortRow.id == AgentRow.cohort_id)
        .outerjoin(fills, fills.c.agent_id == AgentRow.id)
        .where(col(AgentRow.cohort_id).in_(cohort_ids))
        .order_by(AgentRow.id)
    )
    df = rows_frame(session.connection().execute(q).all(), ["agent_id", "cohort_id", "start", "delta"])
    df["delta"] = df["delta"].fillna(0).astype("int64")
    df["cash"] = df["start"].astype("int64") + df["delta"]
    return df


def price_frame(session: Session, as_of: datetime, market_ids: Sequence[str], *, quotes: bool = False) -> pd.DataFrame:
    """Latest price per (market, outcome) among snapshots fetched and observed by `as_of`; with `quotes`, that
    snapshot's bid_ppm and ask_ppm too (NaN where it recorded none: only YES snapshots carry them)."""
    extra = ["bid_ppm", "ask_ppm"] if quotes else []
    if not len(market_ids):
        return pd.DataFrame(columns=["market_id", "outcome", "price_ppm", *extra])
    conn = session.connection()
    if conn.dialect.name == "postgresql":
        # One array parameter instead of an IN list of 10⁴–10⁵ values (whose parsing and planning cost more
        # than the query), and DISTINCT ON for the newest row per (market, outcome), ties to the later id.
        q = text(
            "SELECT DISTINCT ON (market_id, outcome) market_id, outcome, price_ppm"
            + "".join(f", {c}" for c in extra) + " FROM price_snapshots "
            "WHERE market_id = ANY(:ids) AND fetched_at <= :t AND observed_at <= :t "
            "ORDER BY market_id, outcome, observed_at DESC, id DESC"
        ).bindparams(bindparam("ids", type_=ARRAY(String)))
        return rows_frame(conn.execute(q, {"ids": list(market_ids), "t": as_of}).all(),
                          ["market_id", "outcome", "price_ppm", *extra])
    latest = (
        select(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome,
               func.max(PriceSnapshotRow.observed_at).label("t"))
        .where(PriceSnapshotRow.fetched_at <= as_of, PriceSnapshotRow.observed_at <= as_of,
               col(PriceSnapshotRow.market_id).in_(list(market_ids)))
        .group_by(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome)
        .subquery()
    )
    q = (
        select(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome, PriceSnapshotRow.price_ppm,
               *([PriceSnapshotRow.bid_ppm, PriceSnapshotRow.ask_ppm] if quotes else []), PriceSnapshotRow.id)
        .join(latest, (PriceSnapshotRow.market_id == latest.c.market_id)
              & (PriceSnapshotRow.outcome == latest.c.outcome) & (PriceSnapshotRow.observed_at == latest.c.t))
        .where(PriceSnapshotRow.fetched_at <= as_of)
    )
    df = rows_frame(session.connection().execute(q).all(), ["market_id", "outcome", "price_ppm", *extra, "id"])
    # Two sources observed at the same instant: the later-recorded one wins, deterministically.
    df = df.sort_values("id").drop_duplicates(["market_id", "outcome"], keep="last")
    return df[["market_id", "outcome", "price_ppm", *extra]]


def fill_markets(session: Session, cohort_ids: Sequence[int]) -> list[str]:
    """The markets the cohorts have fills in (a superset of their open positions' markets)."""
    q = text("SELECT DISTINCT market_id FROM fills WHERE cohort_id = ANY(:cohorts)").bindparams(
        bindparam("cohorts", type_=ARRAY(BigInteger)))
    return list(session.connection().execute(q, {"cohorts": [int(c) for c in cohort_ids]}).scalars())


_FEW_MARKETS = 2_000  # up to this many, a frame's resolutions are read for its markets alone


def latest_resolutions(session: Session, as_of: datetime | None = None,
                       market_ids: Sequence[str] | None = None) -> pd.DataFrame:
    """market_id, kind, payouts (ppm by outcome) of each market's latest resolution version (with `as_of`: the
    latest version recorded at or before it); with `market_ids`, of those markets only (when they are few: a
    frame of one cohort need not read every market's resolution)."""
    versions = select(ResolutionRow.market_id, func.max(ResolutionRow.version).label("v"))
    if as_of is not None:
        versions = versions.where(ResolutionRow.recorded_at <= as_of)
    if market_ids is not None and len(market_ids) <= _FEW_MARKETS:
        versions = versions.where(col(ResolutionRow.market_id).in_(sorted(set(market_ids))))
    latest = versions.group_by(ResolutionRow.market_id).subquery()
    rows = session.execute(
        select(ResolutionRow.market_id, ResolutionRow.kind, ResolutionRow.payouts)
        .join(latest, (ResolutionRow.market_id == latest.c.market_id) & (ResolutionRow.version == latest.c.v))
    ).all()
    return rows_frame(rows, ["market_id", "kind", "payouts"])


def read_frame(session: Session, q: Any, columns: list[str], kinds: Sequence[str]) -> pd.DataFrame:
    """The rows of `q` as a frame named by `columns`: on PostgreSQL through `copy_frame` (`kinds` says what each
    column holds; a time bound must be a `time_bound`), elsewhere as `rows_frame` of the executed statement."""
    if session.connection().dialect.name == "postgresql":
        return copy_frame(session, q, columns, kinds)
    return rows_frame(session.connection().execute(q).all(), columns)


def time_bound(session: Session, at: datetime) -> Any:
    """`at` as a statement's time bound: a literal on PostgreSQL (where `read_frame` renders the statement),
    the bound value elsewhere."""
    return timestamp_literal(at) if session.connection().dialect.name == "postgresql" else at


def _dimension(session: Session, q: Any, columns: list[str], kinds: list[str]) -> pd.DataFrame:
    """A lookup table read by `q` (its first column an integer id, the rest `columns`), indexed by the id."""
    return read_frame(session, q, ["_id", *columns], ["int", *kinds]).set_index("_id")


def _market_kinds(session: Session, market_ids: pd.Series) -> pd.DataFrame:
    """market_kind by market id, for the given markets (all markets' when they are many)."""
    wanted = pd.unique(market_ids)
    q = select(MarketRow.id, MarketRow.kind)
    if len(wanted) <= _FEW_MARKETS:
        q = q.where(col(MarketRow.id).in_(sorted(wanted.tolist())))
    return read_frame(session, q, ["_id", "market_kind"], ["str", "str"]).set_index("_id")


def _joined(facts: pd.DataFrame, lookups: list[tuple[str, pd.DataFrame]]) -> pd.DataFrame:
    """`facts` with each lookup's columns added by its key column, in the facts' order; a fact whose key a lookup
    lacks is dropped, as an inner join in SQL drops it. (Joined in SQL, the server would write each fill's
    cohort, agent, decision and market names once per fill; looked up here, each distinct key is read once.)"""
    keep = np.ones(len(facts), dtype=bool)
    found = []
    for key, table in lookups:
        codes, keys = pd.factorize(facts[key])  # each distinct key looked up once, not once per fact
        at = np.where(codes >= 0, table.index.get_indexer(keys)[codes], -1)
        keep &= at >= 0
        found.append((table, at))
    out = facts[keep].reset_index(drop=True) if not keep.all() else facts.copy()
    for table, at in found:
        for c in table.columns:
            out[c] = table[c].take(at[keep]).reset_index(drop=True)
    return out


def bets_frame(session: Session, cohort_ids: list[int] | None = None, as_of: datetime | None = None, *,
               order: bool = False) -> pd.DataFrame:
    """One row per BUY fill, in the columns `scoring.leaderboard.per_bet_scores` takes, by cohort id, then agent
    id, then in the order the agent's fills were recorded: seats deciding at once record their fills in any
    order, which must not change a sum over them (a model's bets across cohorts, say). With `as_of`: only fills
    recorded by then, scored against the resolutions recorded by then. With `order`: an `_order` column (cohort
    id × 2³² + the row's place in its cohort) says where each row stands among every cohort's rows.

    A bet on a named outcome of a multi-outcome market is scored as a YES bet on "that outcome wins", at that
    outcome's price; a NO bet on a binary market has YES price 1 − the price paid.
    """
    q = (
        select(FillRow.cohort_id, FillRow.agent_id, FillRow.market_id, FillRow.outcome, FillRow.cost_micros,
               FillRow.price_ppm, FillRow.decision_id, FillRow.at, FillRow.id)
        .where(col(FillRow.kind) == "buy", col(FillRow.decision_id).is_not(None))
        .order_by(FillRow.cohort_id, FillRow.agent_id, FillRow.id)
    )
    if cohort_ids is not None:
        q = q.where(col(FillRow.cohort_id).in_(cohort_ids))
    if as_of is not None:
        q = q.where(FillRow.at <= time_bound(session, as_of))
    fills = read_frame(session, q, ["cohort_id", "agent_id", "market_id", "outcome", "amount", "price_ppm",
                                    "decision_id", "at", "_order"],
                       ["int", "int", "str", "str", "int", "int", "int", "time", "int"])
    if len(fills):
        cohort = fills["cohort_id"].astype("int64")
        fills["_order"] = cohort * (1 << 32) + fills.groupby(cohort, sort=False).cumcount().astype("int64")
    bets = _joined(fills, [  # the fills' cohort, agent, decision and market, looked up by id (an inner join)
        *_cohort_dimensions(session, cohort_ids),
        ("decision_id", _dimension(
            session, select(DecisionRow.id, DecisionRow.cash_at_start_micros, DecisionRow.max_bet_micros).where(
                *([col(DecisionRow.cohort_id).in_(cohort_ids)] if cohort_ids is not None else [])),
            ["cash_at_decision", "max_bet"], ["int", "int"])),
        ("market_id", _market_kinds(session, fills["market_id"]))])
    bets = bets[["cohort", "agent", "market_id", "outcome", "amount", "price_ppm", "cash_at_decision", "max_bet",
                 "decision_id", "market_kind", "at", "_order"]]
    if not order:
        bets = bets.drop(columns="_order")
    if bets.empty:
        return bets.assign(side=[], outcome_yes=[], void=[], price_yes_at_bet=[], stated_probability=[])
    for c in ("amount", "cash_at_decision", "max_bet"):
        bets[c] = bets[c].astype(float) / MICRO
    price = bets["price_ppm"].astype(float) / MICRO
    is_no = bets["outcome"] == NO
    bets["side"] = pd.Series([YES, NO]).array.take(is_no.to_numpy(dtype=np.intp))  # (as pandas types str; no np.where)
    bets["price_yes_at_bet"] = np.where(is_no, 1.0 - price, price)

    # outcome_yes: the YES payout scores both sides of a binary; a named outcome scores its own payout
    codes, markets = pd.factorize(bets["market_id"])  # (per distinct market, then spread to its bets)
    res = latest_resolutions(session, as_of, markets.tolist())
    found = pd.Index(res["market_id"]).get_indexer(markets)  # each market's resolution row, -1: none
    res_kind, res_payouts = res["kind"].tolist(), res["payouts"].tolist()
    kind = np.array([res_kind[r] if r >= 0 else None for r in found], dtype=object)
    scored = np.array([k is not None and k not in ("unresolved", "void") for k in kind], dtype=bool)
    payouts = [res_payouts[r] if ok else {} for r, ok in zip(found, scored)]
    yes_paid = np.array([int(p.get(YES, 0)) for p in payouts], dtype=float) / MICRO
    outcome_yes = np.where(scored, yes_paid, np.nan)[codes]
    named = ~bets["outcome"].isin([YES, NO]).to_numpy()
    for i in np.flatnonzero(named):  # a named outcome scores its own payout
        m = codes[i]
        outcome_yes[i] = int(payouts[m].get(bets["outcome"].iat[i], 0)) / MICRO if scored[m] else np.nan
    bets["outcome_yes"] = outcome_yes
    bets["void"] = (kind == "void")[codes]

    sq = select(ForecastRow.decision_id, ForecastRow.market_id, ForecastRow.probability).where(ForecastRow.source == "bet")
    if cohort_ids is not None:  # only the cohorts' decisions (a bet's decision is its agent's, in its cohort)
        sq = sq.join(DecisionRow, DecisionRow.id == ForecastRow.decision_id).where(
            col(DecisionRow.cohort_id).in_(cohort_ids))
    stated = rows_frame(session.connection().execute(sq).all(), ["decision_id", "market_id", "stated_probability"])
    bets = bets.merge(stated, on=["decision_id", "market_id"], how="left")
    return bets.drop(columns=["price_ppm"])


def _cohort_dimensions(session: Session, cohort_ids: Sequence[int] | None) -> list[tuple[str, pd.DataFrame]]:
    """The lookups that name a fact's cohort and agent (by `cohort_id`, `agent_id`), for `_joined`: the cohorts'
    names and their agents' (an agent's facts are in its cohort)."""
    cohorts, agents = select(CohortRow.id, CohortRow.name), select(AgentRow.id, AgentRow.name)
    if cohort_ids is not None:
        cohorts = cohorts.where(col(CohortRow.id).in_(cohort_ids))
        agents = agents.where(col(AgentRow.cohort_id).in_(cohort_ids))
    return [("cohort_id", _dimension(session, cohorts, ["cohort"], ["str"])),
            ("agent_id", _dimension(session, agents, ["agent"], ["str"]))]


def _forecast_sets(session: Session, cohort_ids: list[int], columns: list[tuple[Any, str, str]],
                   *conditions: Any) -> pd.DataFrame:
    """cohort_id, cohort, agent, market_id, round and the named `columns` (column, name, kind) of the cohorts' forecast-set
    rows meeting `conditions`, in the order they were recorded (the names and rounds looked up by id)."""
    q = (select(DecisionRow.cohort_id, ForecastRow.agent_id, ForecastRow.decision_id, ForecastRow.market_id,
                *(c for c, _, _ in columns))
         .join(DecisionRow, DecisionRow.id == ForecastRow.decision_id)
         .where(col(ForecastRow.source) == "forecast_set", col(DecisionRow.cohort_id).in_(cohort_ids),
                *conditions)
         .order_by(ForecastRow.id))
    facts = read_frame(session, q, ["cohort_id", "agent_id", "decision_id", "market_id", *(n for _, n, _ in columns)],
                       ["int", "int", "int", "str", *(k for _, _, k in columns)])
    rounds = _dimension(session, select(DecisionRow.id, DecisionRow.round_key).where(
        col(DecisionRow.cohort_id).in_(cohort_ids)), ["round"], ["str"])
    df = _joined(facts, [*_cohort_dimensions(session, cohort_ids), ("decision_id", rounds)])
    df["round"] = df["round"].astype(str)
    df["market_id"] = df["market_id"].astype(str)
    return df[["cohort_id", "cohort", "agent", "market_id", "round", *(n for _, n, _ in columns)]]


def forecasts_frame(session: Session, cohort_ids: list[int]) -> pd.DataFrame:
    """Stated forecast-set probabilities: one question per (market, decision round) so agents are compared
    on the same question at the same time."""
    df = _forecast_sets(session, cohort_ids, [(ForecastRow.probability, "probability", "float")],
                        ForecastRow.replicate == 1)  # the executed replicate's (see forecast_set_frame)
    df["question"] = df["market_id"].astype(str) + "@" + df["round"].astype(str)
    return df[["cohort", "agent", "question", "probability"]]


def forecast_set_frame(session: Session, cohort_ids: list[int], as_of: datetime | None = None, *,
                       all_replicates: bool = False, order: bool = False, leaked: bool = False) -> pd.DataFrame:
    """The cohorts' forecast-set questions, one row per asked seat and question: cohort, agent, market_id,
    question (market@round), probability (stated P(YES); 0.5 where the seat did not answer), market_price (the
    YES price the agent saw; for an unanswered question the price shown when the set was chosen; NaN if none),
    outcome_yes (YES payout of the latest resolution recorded by `as_of`; NaN when unresolved, void or not a
    YES/NO payout) and answered (False on an imputed row). With `as_of`, only decisions completed by then.

    Who was asked (`asked_questions`): a seat was asked a round's stored set (`forecast_questions`) when it has a
    completed decision for that round — executed, rejected, hold or failed; a claim still in progress is not
    counted yet — less the markets that had closed by its decision time (a resumed decision was not shown them). A
    seat added after a round has no decision for it and was not asked it. A question asked and not answered — the
    reply left it out, or the decision failed — is scored as a stated 0.5, so leaving a question out can never
    rank a seat better than stating 0.5 on it. A stated forecast outside the stored set (a database from before
    the sets were stored) is kept as answered.

    Only the executed replicate's forecasts (replicate 1) unless `all_replicates` (then a `replicate` column
    says which ask stated each row; an unanswered question is imputed once, as replicate 1): the headline scores
    each seat on one ask, as an unreplicated seat is, so seats with different replicate counts stay comparable (a
    mean of k asks is an ensemble, whose Brier is lower by Jensen's inequality alone) and the scored forecasts
    are the ones its bets came with.

    Leaked questions (`question_leaks`: the round's own facts gave the answer away) are left out — the headline
    and every score on the forecast set are computed without them — unless `leaked`: then every row is kept, with
    `leak_reason` (`domain.leakage.REASONS`, "" for a clean question) and `leak_other` (the market that gave it
    away, "") columns, for a caller that counts them (`cache.frame_cache`).

    Rows come in a fixed order — cohort id, round, market, agent (then replicate) — whatever order the seats'
    answers were recorded in, so every sum over them is the same in two identical runs; with `order`, an
    `_order` column (cohort id × 2³² + the row's place in its cohort) says where."""
    conditions = [] if all_replicates else [ForecastRow.replicate == 1]
    if as_of is not None:
        at = time_bound(session, as_of)
        conditions += [col(DecisionRow.completed_at) <= at, col(ForecastRow.as_of) <= at]
    df = _forecast_sets(session, cohort_ids, [
        (ForecastRow.probability, "probability", "float"), (ForecastRow.market_price_ppm, "price_ppm", "int"),
        (ForecastRow.replicate, "replicate", "int")], *conditions)
    df["probability"] = df["probability"].astype(float)
    df["price_ppm"] = pd.to_numeric(df["price_ppm"], errors="coerce").astype(float)
    df["replicate"] = df["replicate"].astype("int64")
    df["answered"] = True
    df = pd.concat([df, _unanswered(session, cohort_ids, as_of, df)], ignore_index=True)
    df["answered"] = df["answered"].astype(bool)
    df["cohort_id"] = df["cohort_id"].astype("int64")
    df = df.sort_values(["cohort_id", "round", "market_id", "agent", "replicate"], kind="stable").reset_index(drop=True)
    df["_order"] = df["cohort_id"] * (1 << 32) + df.groupby("cohort_id", sort=False).cumcount().astype("int64")
    if not all_replicates:
        df = df.drop(columns="replicate")
    df["question"] = df["market_id"].astype(str) + "@" + df["round"].astype(str)
    df["market_price"] = df["price_ppm"] / MICRO
    res = latest_resolutions(session, as_of, pd.unique(df["market_id"]).tolist() if len(df) else [])
    outcome = {}
    for mid, kind, payouts in zip(res["market_id"], res["kind"], res["payouts"]):
        if kind in ("winner", "probabilistic") and YES in payouts:
            outcome[mid] = int(payouts[YES]) / MICRO
    df["outcome_yes"] = df["market_id"].map(outcome).astype(float)
    cols = ["cohort", "agent", "market_id", "question", "probability", "market_price", "outcome_yes", "answered"]
    flags = question_leaks(session, cohort_ids, as_of) if len(df) else _NO_LEAKS
    key = pd.MultiIndex.from_arrays([df["cohort_id"], df["round"].astype(str), df["market_id"].astype(str)])
    found = pd.MultiIndex.from_arrays([flags["cohort_id"], flags["round"], flags["market_id"]])
    where = found.get_indexer(key) if len(flags) and len(df) else np.full(len(df), -1)
    if leaked:
        reasons = flags["reason"].to_numpy(dtype=object)
        others = flags["other_market_id"].to_numpy(dtype=object)
        df["leak_reason"] = [reasons[i] if i >= 0 else "" for i in where]
        df["leak_other"] = [others[i] if i >= 0 else "" for i in where]
        cols += ["leak_reason", "leak_other"]
    elif (where >= 0).any():
        df = df[where < 0].reset_index(drop=True)
    return df[cols + (["replicate"] if all_replicates else []) + (["_order"] if order else [])]


_NO_LEAKS = pd.DataFrame({"cohort_id": pd.Series([], dtype="int64"), "round": pd.Series([], dtype=object),
                          "market_id": pd.Series([], dtype=object), "reason": pd.Series([], dtype=object),
                          "other_market_id": pd.Series([], dtype=object)})


def question_leaks(session: Session, cohort_ids: Sequence[int], as_of: datetime | None = None) -> pd.DataFrame:
    """The cohorts' leaked forecast-set questions (`domain.leakage`): cohort_id, round, market_id, reason,
    other_market_id — one row per flagged (round, market), in cohort, round and set order. Reads the stored sets
    (with `as_of`, of rounds decided by then), every market they ask, the other members of their exclusive groups,
    the questions of the markets that resolved, and the resolutions recorded (by `as_of`)."""
    ids = [int(c) for c in cohort_ids]
    if not ids:
        return _NO_LEAKS.copy()
    fq, m, r = ForecastQuestionRow, MarketRow, ResolutionRow
    sets = select(fq.cohort_id, fq.round_key, fq.market_id, fq.position, fq.as_of).where(col(fq.cohort_id).in_(ids))
    res = select(r.market_id, r.version, r.recorded_at, r.kind)
    if as_of is not None:
        sets = sets.where(col(fq.as_of) <= as_of)
        res = res.where(col(r.recorded_at) <= as_of)
    conn = session.connection()
    asked = [Asked(c, str(k), str(mid), utc(at), int(pos)) for c, k, mid, pos, at in conn.execute(sets).all()]
    if not asked:
        return _NO_LEAKS.copy()
    asked_ids = select(fq.market_id).where(col(fq.cohort_id).in_(ids))
    groups = select(m.group_id).where(col(m.id).in_(asked_ids), col(m.group_id) != "")
    resolved = select(r.market_id).where(col(r.kind).in_(("winner", "probabilistic")))
    rows = conn.execute(select(m.id, m.question, m.group_id, m.first_seen_at).where(
        or_(col(m.id).in_(asked_ids), col(m.group_id).in_(groups), col(m.id).in_(resolved)))).all()
    markets = {str(i): MarketText(str(i), q or "", g or "", utc(at) if at is not None else None) for i, q, g, at in rows}
    # what YES paid matters only to the groups' members (rule 1): their winners' payouts alone are decoded
    members = select(m.id).where(col(m.group_id).in_(groups))
    paid = {(str(mid), int(v)): (payouts or {}).get(YES) for mid, v, payouts in conn.execute(
        select(r.market_id, r.version, r.payouts).where(col(r.kind) == "winner", col(r.market_id).in_(members))).all()}
    facts = [ResolutionFact(str(mid), int(v), utc(at), str(kind), paid.get((str(mid), int(v))))
             for mid, v, at, kind in conn.execute(res).all()]
    leaks = find_leaks(asked, markets, facts)
    return pd.DataFrame({"cohort_id": pd.Series([x.cohort for x in leaks], dtype="int64"),
                         "round": pd.Series([x.round for x in leaks], dtype=object),
                         "market_id": pd.Series([x.market_id for x in leaks], dtype=object),
                         "reason": pd.Series([x.reason for x in leaks], dtype=object),
                         "other_market_id": pd.Series([x.other_market_id for x in leaks], dtype=object)})


def asked_questions(session: Session, cohort_ids: Sequence[int], as_of: datetime | None = None) -> pd.DataFrame:
    """Every (seat, question) the cohorts asked (the rule in `forecast_set_frame`): cohort_id, cohort, agent,
    round, market_id, price_ppm (the YES price shown when the set was chosen; NaN when none)."""
    ids = [int(c) for c in cohort_ids]
    fq, d = ForecastQuestionRow, DecisionRow
    q = (select(d.cohort_id, d.agent_id, d.round_key, fq.market_id, fq.price_ppm)
         .join(fq, (fq.cohort_id == d.cohort_id) & (fq.round_key == d.round_key))
         .join(MarketRow, MarketRow.id == fq.market_id)
         .where(col(d.cohort_id).in_(ids), col(d.status) != "claimed", col(d.completed_at).is_not(None),
                or_(col(MarketRow.close_time).is_(None), col(MarketRow.close_time) > d.as_of))
         .order_by(d.cohort_id, d.round_key, fq.market_id, d.agent_id))
    if as_of is not None:
        at = time_bound(session, as_of)
        q = q.where(col(d.completed_at) <= at, col(fq.as_of) <= at)
    facts = read_frame(session, q, ["cohort_id", "agent_id", "round", "market_id", "price_ppm"],
                       ["int", "int", "str", "str", "int"])
    df = _joined(facts, _cohort_dimensions(session, ids))
    df["round"] = df["round"].astype(str)
    df["market_id"] = df["market_id"].astype(str)
    df["price_ppm"] = pd.to_numeric(df["price_ppm"], errors="coerce").astype(float)
    return df[["cohort_id", "cohort", "agent", "round", "market_id", "price_ppm"]]


def _unanswered(session: Session, cohort_ids: Sequence[int], as_of: datetime | None,
                stated: pd.DataFrame) -> pd.DataFrame:
    """The asked (seat, question) pairs with no replicate-1 row in `stated`, as rows stating 0.5."""
    asked = asked_questions(session, cohort_ids, as_of)
    keys = ["cohort", "agent", "round", "market_id"]
    first = stated[stated["replicate"] == 1]
    have = pd.MultiIndex.from_frame(first[keys].astype(str)) if len(first) else pd.MultiIndex.from_tuples([], names=keys)
    missing = ~pd.MultiIndex.from_frame(asked[keys].astype(str)).isin(have) if len(asked) else np.zeros(0, dtype=bool)
    out = asked[missing].reset_index(drop=True)
    return out.assign(probability=0.5, replicate=np.int64(1), answered=False)[
        ["cohort_id", "cohort", "agent", "market_id", "round", "probability", "price_ppm", "replicate", "answered"]]


def asked_frame(session: Session, cohort_ids: Sequence[int], as_of: datetime | None = None) -> pd.DataFrame:
    """The cohorts' asked forecast sets (`forecast_questions`): one row per (cohort, round, market) asked of every
    seat of the round, whether or not a seat answered — cohort (name), round, market_id, question (market@round),
    market_price (the YES price shown at decision time, in [0, 1]; NaN when it had none), in_band, filled (bool)
    and as_of (the round's decision time). With `as_of`, only the sets chosen at or before it. Rows come by cohort
    id, round and position in the set."""
    q = (select(ForecastQuestionRow.cohort_id, ForecastQuestionRow.round_key, ForecastQuestionRow.market_id,
                ForecastQuestionRow.price_ppm, cast(ForecastQuestionRow.in_band, Integer),
                cast(ForecastQuestionRow.filled, Integer), ForecastQuestionRow.as_of)
         .where(col(ForecastQuestionRow.cohort_id).in_([int(c) for c in cohort_ids]))
         .order_by(ForecastQuestionRow.cohort_id, ForecastQuestionRow.round_key, ForecastQuestionRow.position))
    if as_of is not None:
        q = q.where(col(ForecastQuestionRow.as_of) <= time_bound(session, as_of))
    facts = read_frame(session, q, ["cohort_id", "round", "market_id", "price_ppm", "in_band", "filled", "as_of"],
                       ["int", "str", "str", "int", "int", "int", "time"])
    cohorts = select(CohortRow.id, CohortRow.name).where(col(CohortRow.id).in_([int(c) for c in cohort_ids]))
    df = _joined(facts, [("cohort_id", _dimension(session, cohorts, ["cohort"], ["str"]))])
    df["round"] = df["round"].astype(str)
    df["market_id"] = df["market_id"].astype(str)
    df["question"] = df["market_id"] + "@" + df["round"]
    df["market_price"] = pd.to_numeric(df["price_ppm"], errors="coerce").astype(float) / MICRO
    df["in_band"] = df["in_band"].astype(bool)
    df["filled"] = df["filled"].astype(bool)
    return df[["cohort", "round", "market_id", "question", "market_price", "in_band", "filled", "as_of"]]


__all__ = ["asked_frame", "asked_questions", "question_leaks", "bets_frame", "cash_frame", "copy_frame", "fill_markets", "forecast_set_frame", "forecasts_frame",
           "latest_resolutions", "position_frame", "price_frame", "raw_rows", "read_frame", "rows_frame", "time_bound",
           "timestamp_literal"]
