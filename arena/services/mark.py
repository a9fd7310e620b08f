"""Mark to market: value every agent's open positions at the latest prices and store portfolio snapshots.

Set-based: one aggregate query for positions, one for cash, one for prices, then integer numpy arithmetic
(`domain.valuation.value_micros`), then one bulk insert — on PostgreSQL the positions are valued in one
query that returns a row per agent (`agent_values`). Idempotent on (agent, as_of).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import BigInteger, String, bindparam, func, literal_column, select, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Engine
from sqlmodel import Session

from arena.domain.market import NO, YES
from arena.domain.valuation import value_micros
from arena.money import MICRO
from arena.store import repo
from arena.store.engine import session_scope
from arena.store.tables import AgentRow, CohortRow, FillRow, PortfolioSnapshotRow, PriceSnapshotRow


def rows_frame(rows: Sequence[Sequence[object]], columns: list[str]) -> pd.DataFrame:
    """A DataFrame built column-wise: about 20× faster than from SQLAlchemy Row objects."""
    cols = list(zip(*rows)) if rows else [()] * len(columns)
    return pd.DataFrame({c: list(v) for c, v in zip(columns, cols)})


def _raw_rows(session: Session, q: Any) -> list[tuple]:
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


def timestamp_literal(at: datetime) -> Any:
    """`at` as a PostgreSQL timestamptz literal, so a time-filtered statement can take `_raw_rows` (whose
    literal rendering has no portable form for a datetime bound). The text is `isoformat()` of an aware
    datetime — digits and `-:+.T` only."""
    if at.tzinfo is None:
        raise ValueError("timestamp_literal takes an aware datetime")
    return literal_column(f"CAST('{at.isoformat()}' AS timestamptz)")


@dataclass(frozen=True)
class MarkCounts:
    agents: int
    positions: int
    unpriced: int
    snapshots_written: int


def position_frame(session: Session, cohort_ids: Sequence[int], as_of: datetime | None = None) -> pd.DataFrame:
    """Open positions (shares > 0) of the cohorts: agent_id, market_id, outcome, shares, cost (micro units).
    With `as_of`, only fills recorded at or before it count (the book as it stood then)."""
    q = (
        select(FillRow.agent_id, FillRow.market_id, FillRow.outcome,
               func.sum(FillRow.shares).label("shares"), func.sum(FillRow.cost_micros).label("cost"))
        .where(FillRow.cohort_id.in_(cohort_ids))  # type: ignore[attr-defined]
        .group_by(FillRow.agent_id, FillRow.market_id, FillRow.outcome)
        .having(func.sum(FillRow.shares) > 0)
    )
    if session.connection().dialect.name == "postgresql":
        rows = _raw_rows(session, q if as_of is None else q.where(FillRow.at <= timestamp_literal(as_of)))
    elif as_of is not None:  # a datetime bound cannot be rendered as a literal portably: the ORM path executes it
        rows = session.connection().execute(q.where(FillRow.at <= as_of)).all()
    else:
        rows = _raw_rows(session, q)
    df = rows_frame(rows, ["agent_id", "market_id", "outcome", "shares", "cost"])
    return df.astype({"agent_id": "int64", "shares": "int64", "cost": "int64"})


def cash_frame(session: Session, cohort_ids: Sequence[int], as_of: datetime | None = None) -> pd.DataFrame:
    """Every agent of the cohorts with its cash = starting cash + Σ cash deltas of its fills (with `as_of`: of
    its fills recorded at or before it)."""
    fq = (
        select(FillRow.agent_id, func.sum(FillRow.cash_micros).label("delta"))
        .where(FillRow.cohort_id.in_(cohort_ids))  # type: ignore[attr-defined]
        .group_by(FillRow.agent_id)
    )
    fills = (fq.where(FillRow.at <= as_of) if as_of is not None else fq).subquery()
    q = (
        select(AgentRow.id, AgentRow.cohort_id, CohortRow.starting_cash_micros, fills.c.delta)
        .join(CohortRow, CohortRow.id == AgentRow.cohort_id)
        .outerjoin(fills, fills.c.agent_id == AgentRow.id)
        .where(AgentRow.cohort_id.in_(cohort_ids))  # type: ignore[attr-defined]
    )
    df = rows_frame(session.connection().execute(q).all(), ["agent_id", "cohort_id", "start", "delta"])
    df["delta"] = df["delta"].fillna(0).astype("int64")
    df["cash"] = df["start"].astype("int64") + df["delta"]
    return df


def price_frame(session: Session, as_of: datetime, market_ids: Sequence[str]) -> pd.DataFrame:
    """Latest price per (market, outcome) among snapshots fetched and observed by `as_of`."""
    if not len(market_ids):
        return pd.DataFrame(columns=["market_id", "outcome", "price_ppm"])
    conn = session.connection()
    if conn.dialect.name == "postgresql":
        # One array parameter instead of an IN list of 10⁴–10⁵ values (whose parsing and planning cost more
        # than the query), and DISTINCT ON for the newest row per (market, outcome), ties to the later id.
        q = text(
            "SELECT DISTINCT ON (market_id, outcome) market_id, outcome, price_ppm FROM price_snapshots "
            "WHERE market_id = ANY(:ids) AND fetched_at <= :t AND observed_at <= :t "
            "ORDER BY market_id, outcome, observed_at DESC, id DESC"
        ).bindparams(bindparam("ids", type_=ARRAY(String)))
        return rows_frame(conn.execute(q, {"ids": list(market_ids), "t": as_of}).all(),
                          ["market_id", "outcome", "price_ppm"])
    latest = (
        select(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome,
               func.max(PriceSnapshotRow.observed_at).label("t"))
        .where(PriceSnapshotRow.fetched_at <= as_of, PriceSnapshotRow.observed_at <= as_of,
               PriceSnapshotRow.market_id.in_(list(market_ids)))  # type: ignore[attr-defined]
        .group_by(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome)
        .subquery()
    )
    q = (
        select(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome, PriceSnapshotRow.price_ppm,
               PriceSnapshotRow.id)
        .join(latest, (PriceSnapshotRow.market_id == latest.c.market_id)
              & (PriceSnapshotRow.outcome == latest.c.outcome) & (PriceSnapshotRow.observed_at == latest.c.t))
        .where(PriceSnapshotRow.fetched_at <= as_of)
    )
    df = rows_frame(session.connection().execute(q).all(), ["market_id", "outcome", "price_ppm", "id"])
    # Two sources observed at the same instant: the later-recorded one wins, deterministically.
    df = df.sort_values("id").drop_duplicates(["market_id", "outcome"], keep="last")
    return df[["market_id", "outcome", "price_ppm"]]


def side_prices(prices: pd.DataFrame) -> pd.DataFrame:
    """The price of each side a position can hold (market_id, outcome, price_ppm): every stored price, plus
    NO = 1 − YES for a market with a YES price and no NO price of its own (binary markets store YES only)."""
    prices = prices[["market_id", "outcome", "price_ppm"]]
    yes = prices[prices["outcome"] == YES]
    has_no = set(prices.loc[prices["outcome"] == NO, "market_id"])
    derived = yes[~yes["market_id"].isin(has_no)]
    derived = pd.DataFrame({"market_id": derived["market_id"].to_numpy(), "outcome": NO,
                            "price_ppm": MICRO - derived["price_ppm"].astype("int64").to_numpy()})
    out = pd.concat([prices, derived], ignore_index=True) if len(derived) else prices.reset_index(drop=True)
    return out.astype({"price_ppm": "int64"})


def value_positions(positions: pd.DataFrame, prices: pd.DataFrame) -> pd.DataFrame:
    """Adds price_ppm (side price: NO = 1 − YES for binary markets, see `side_prices`), value and priced
    columns.

    A position with no known price is valued at its cost basis (flagged unpriced), never at 0 or 0.5.
    """
    df = positions.copy()
    if df.empty:
        for c in ("price_ppm", "value"):
            df[c] = pd.Series(dtype="int64")
        df["priced"] = pd.Series(dtype=bool)
        return df
    side = side_prices(prices).rename(columns={"price_ppm": "side"})
    df = df.merge(side, on=["market_id", "outcome"], how="left")
    df["priced"] = df["side"].notna()
    price = df["side"].fillna(0).astype("int64").to_numpy()
    value = value_micros(df["shares"].to_numpy(dtype=np.int64), price)
    df["price_ppm"] = price
    df["value"] = np.where(df["priced"].to_numpy(), value, df["cost"].to_numpy(dtype=np.int64))
    return df.drop(columns=["side"])


WORK_MEM = "256MB"
# The fold streams the covering index ix_fill_position_fold in (cohort, agent, market, outcome) order into a
# sorted GroupAggregate: no hash table of 10⁶ text-keyed groups to build or spill (the planner, misjudging the
# number of groups, would choose one), and the per-agent sum that follows gets its rows already in agent order.
# The side prices (≤ 2 per market) come in as arrays and are hashed once. Valuation in bigint: shares > 0
# (HAVING) and 0 ≤ price ≤ 10⁶ (Price), so truncating division is the floor of `domain.valuation.value_micros`,
# and the remainder product stays below 10¹².
_AGENT_VALUES_PG = """
WITH pos AS (
    SELECT agent_id, market_id, outcome, CAST(sum(shares) AS bigint) AS shares,
           CAST(sum(cost_micros) AS bigint) AS cost
    FROM fills WHERE cohort_id = ANY(:cohorts) {fills_by}
    GROUP BY cohort_id, agent_id, market_id, outcome HAVING sum(shares) > 0),
side AS (SELECT * FROM unnest(CAST(:mids AS text[]), CAST(:outs AS text[]), CAST(:prices AS bigint[]))
         AS s(market_id, outcome, price))
SELECT pos.agent_id,
       CAST(sum(CASE WHEN side.price IS NULL THEN pos.cost
                     ELSE (pos.shares / :micro) * side.price + ((pos.shares % :micro) * side.price) / :micro
                END) AS bigint),
       count(*), count(*) FILTER (WHERE side.price IS NULL)
FROM pos LEFT JOIN side ON side.market_id = pos.market_id AND side.outcome = pos.outcome
GROUP BY pos.agent_id
"""


def _fill_markets(session: Session, cohort_ids: Sequence[int]) -> list[str]:
    """The markets the cohorts have fills in (a superset of their open positions' markets)."""
    q = text("SELECT DISTINCT market_id FROM fills WHERE cohort_id = ANY(:cohorts)").bindparams(
        bindparam("cohorts", type_=ARRAY(BigInteger)))
    return list(session.connection().execute(q, {"cohorts": [int(c) for c in cohort_ids]}).scalars())


def agent_values(session: Session, as_of: datetime, cohort_ids: Sequence[int], *,
                 point_in_time: bool = False) -> pd.DataFrame:
    """Per agent with open positions: positions_value (micro-USD), open_positions, unpriced — the sums of
    `value_positions(position_frame(...), price_frame(...))` (with `point_in_time`, of the positions the
    fills recorded by `as_of` made: `position_frame(..., as_of)`). On PostgreSQL the fold and the valuation run in
    the database (the same rules: `side_prices`, else cost basis; floor(shares × price) as in
    `domain.valuation.value_micros`), so a million positions never cross the wire: three statements — the
    markets held, their latest prices (`price_frame`), and one sorted fold that returns a row per agent;
    elsewhere in pandas."""
    conn = session.connection()
    if conn.dialect.name == "postgresql":
        side = side_prices(price_frame(session, as_of, _fill_markets(session, cohort_ids)))
        before = conn.execute(text("SELECT current_setting('enable_hashagg'), current_setting('enable_mergejoin')")).one()
        # (this transaction only) the fold's sorts stay in memory; no hash aggregation of 10⁶ groups, and no
        # merge join (it would sort the 10⁶ positions by market text to meet 4·10⁴ side prices)
        conn.execute(text(f"SET LOCAL work_mem = '{WORK_MEM}'"))
        conn.execute(text("SET LOCAL enable_hashagg = off"))
        conn.execute(text("SET LOCAL enable_mergejoin = off"))
        try:
            sql = _AGENT_VALUES_PG.format(fills_by="AND at <= :t" if point_in_time else "")
            q = text(sql).bindparams(bindparam("cohorts", type_=ARRAY(BigInteger)))
            params = {"cohorts": [int(c) for c in cohort_ids], "micro": MICRO, "mids": side["market_id"].tolist(),
                      "outs": side["outcome"].tolist(), "prices": [int(p) for p in side["price_ppm"]]}
            rows = conn.execute(q, {**params, "t": as_of} if point_in_time else params).all()
        finally:
            conn.execute(text("SELECT set_config('enable_hashagg', :h, true), set_config('enable_mergejoin', :m, true)"),
                         {"h": before[0], "m": before[1]})
        df = rows_frame(rows, ["agent_id", "positions_value", "open_positions", "unpriced"])
        return df.astype("int64").set_index("agent_id")
    positions = position_frame(session, cohort_ids, as_of if point_in_time else None)
    valued = value_positions(positions, price_frame(session, as_of, positions["market_id"].unique().tolist()))
    valued["unpriced"] = (~valued["priced"].astype(bool)).astype("int64")
    return valued.groupby("agent_id").agg(
        positions_value=("value", "sum"), open_positions=("value", "size"), unpriced=("unpriced", "sum"))


def mark_to_market(engine: Engine, as_of: datetime, cohort_ids: Sequence[int] | None = None,
                   final: bool = False) -> MarkCounts:
    """Write a portfolio snapshot at `as_of` for every agent of the given (default: open) cohorts."""
    with session_scope(engine) as s:
        if cohort_ids is None:
            cohort_ids = list(s.scalars(select(CohortRow.id).where(CohortRow.status == "open")))
        if not cohort_ids:
            return MarkCounts(0, 0, 0, 0)
        cash = cash_frame(s, cohort_ids)
        per_agent = agent_values(s, as_of, cohort_ids)
        book = cash.set_index("agent_id").join(per_agent, how="left").fillna(
            {"positions_value": 0, "open_positions": 0, "unpriced": 0})
        done = set(s.scalars(select(PortfolioSnapshotRow.agent_id).where(
            PortfolioSnapshotRow.as_of == as_of,
            PortfolioSnapshotRow.agent_id.in_(book.index.tolist()))))  # type: ignore[attr-defined]
        rows = [
            dict(cohort_id=int(cid), agent_id=int(aid), as_of=as_of, cash_micros=int(cash),
                 positions_value_micros=int(pv), total_value_micros=int(cash) + int(pv),
                 open_positions=int(n), unpriced_positions=int(u), final=final)
            for aid, cid, cash, pv, n, u in zip(book.index, book["cohort_id"], book["cash"],
                                               book["positions_value"], book["open_positions"], book["unpriced"])
            if int(aid) not in done
        ]
        repo.bulk_insert(s, PortfolioSnapshotRow.__table__, rows)  # type: ignore[attr-defined]
        return MarkCounts(len(book), int(per_agent["open_positions"].sum()), int(per_agent["unpriced"].sum()),
                          len(rows))
