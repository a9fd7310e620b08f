"""Mark to market: value every agent's open positions at the latest prices and store portfolio snapshots.

Set-based: one aggregate query for positions, one for cash, one for prices, then integer numpy arithmetic
(`domain.valuation.value_micros`), then one bulk insert — on PostgreSQL the positions are valued in one
query that returns a row per agent (`agent_values`). Idempotent on (agent, as_of).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pandas as pd
from sqlalchemy import BigInteger, bindparam, select, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from arena.domain.market import NO, YES
from arena.domain.valuation import complement_ppm, value_micros
from arena.money import MICRO
from arena.store import repo
from arena.store.engine import session_scope
from arena.store.frames import cash_frame, fill_markets, position_frame, price_frame, rows_frame
from arena.store.tables import CohortRow, PortfolioSnapshotRow, table_of


@dataclass(frozen=True)
class MarkCounts:
    agents: int
    positions: int
    unpriced: int
    snapshots_written: int


def side_prices(prices: pd.DataFrame) -> pd.DataFrame:
    """The price of each side a position can hold (market_id, outcome, price_ppm): every stored price, plus
    NO = 1 − YES for a market with a YES price and no NO price of its own (binary markets store YES only)."""
    prices = prices[["market_id", "outcome", "price_ppm"]]
    yes = prices[prices["outcome"] == YES]
    has_no = set(prices.loc[prices["outcome"] == NO, "market_id"])
    derived = yes[~yes["market_id"].isin(has_no)]
    derived = pd.DataFrame({"market_id": derived["market_id"].to_numpy(), "outcome": NO,
                            "price_ppm": complement_ppm(derived["price_ppm"].astype("int64").to_numpy())})
    out = pd.concat([prices, derived], ignore_index=True) if len(derived) else prices.reset_index(drop=True)
    return out.astype({"price_ppm": "int64"})


def value_positions(positions: pd.DataFrame, prices: pd.DataFrame, *, at_bid: bool = False) -> pd.DataFrame:
    """Adds price_ppm (side price: NO = 1 − YES for binary markets, see `side_prices`; with `at_bid`, the price
    selling would fetch, `bid_side_prices`, from `prices` read with their quotes), value and priced columns.

    A position with no known price is valued at its cost basis (flagged unpriced), never at 0 or 0.5.
    """
    df = positions.copy()
    if df.empty:
        for c in ("price_ppm", "value"):
            df[c] = pd.Series(dtype="int64")
        df["priced"] = pd.Series(dtype=bool)
        return df
    side = (bid_side_prices(prices) if at_bid else side_prices(prices)).rename(columns={"price_ppm": "side"})
    df = df.merge(side, on=["market_id", "outcome"], how="left")
    df["priced"] = df["side"].notna()
    price = df["side"].fillna(0).astype("int64").to_numpy()
    value = value_micros(df["shares"].to_numpy(dtype=np.int64), price)
    df["price_ppm"] = price
    df["value"] = np.where(df["priced"].to_numpy(), value, df["cost"].to_numpy(dtype=np.int64))
    return df.drop(columns=["side"])


def bid_side_prices(quotes: pd.DataFrame) -> pd.DataFrame:
    """What selling each side a position can hold would fetch (market_id, outcome, price_ppm): YES at the YES
    snapshot's bid, NO at 1 − its ask (selling NO is buying YES back at the ask). Only YES snapshots record a bid
    and an ask, so a side without one (a named outcome, a quote without a book) has no row here."""
    yes = quotes[quotes["outcome"] == YES]
    bid = pd.to_numeric(yes["bid_ppm"], errors="coerce")
    ask = pd.to_numeric(yes["ask_ppm"], errors="coerce")
    sides = [pd.DataFrame({"market_id": yes["market_id"][bid.notna()].to_numpy(), "outcome": YES,
                           "price_ppm": bid[bid.notna()].astype("int64").to_numpy()}),
             pd.DataFrame({"market_id": yes["market_id"][ask.notna()].to_numpy(), "outcome": NO,
                           "price_ppm": complement_ppm(ask[ask.notna()].astype("int64").to_numpy())})]
    return pd.concat(sides, ignore_index=True).astype({"price_ppm": "int64"})


def bid_values(session: Session, as_of: datetime, cohort_ids: Sequence[int], *,
               point_in_time: bool = False) -> pd.Series:
    """Per agent with open positions (index agent_id): its positions marked at the bid (`bid_side_prices`, from
    the latest snapshot fetched by `as_of`) in micro-USD, floor(shares × bid) as `domain.valuation.value_micros`
    — `agent_values(..., at_bid=True)`; NaN when any of its positions has no recorded bid (its liquidation value is
    then unknown, not guessed)."""
    per = agent_values(session, as_of, cohort_ids, point_in_time=point_in_time, at_bid=True)
    return per["positions_value"].astype(float).where(per["unpriced"] == 0).rename("value_at_bid")


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


def agent_values(session: Session, as_of: datetime, cohort_ids: Sequence[int], *,
                 point_in_time: bool = False, at_bid: bool = False) -> pd.DataFrame:
    """Per agent with open positions: positions_value (micro-USD), open_positions, unpriced — the sums of
    `value_positions(position_frame(...), price_frame(...))` (with `point_in_time`, of the positions the
    fills recorded by `as_of` made: `position_frame(..., as_of)`). On PostgreSQL the fold and the valuation run in
    the database (the same rules: `side_prices`, else cost basis; floor(shares × price) as in
    `domain.valuation.value_micros`), so a million positions never cross the wire: three statements — the
    markets held, their latest prices (`price_frame`), and one sorted fold that returns a row per agent;
    elsewhere in pandas. With `at_bid`, every side is priced at what selling it would fetch (`bid_side_prices`)
    and a position without a recorded bid counts as unpriced."""
    conn = session.connection()
    if conn.dialect.name == "postgresql":
        markets = fill_markets(session, cohort_ids)
        side = (bid_side_prices(price_frame(session, as_of, markets, quotes=True)) if at_bid
                else side_prices(price_frame(session, as_of, markets)))
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
    valued = value_positions(positions, price_frame(session, as_of, positions["market_id"].unique().tolist(),
                                                    quotes=at_bid), at_bid=at_bid)
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
            col(PortfolioSnapshotRow.agent_id).in_(book.index.tolist()))))
        rows = [
            dict(cohort_id=int(cid), agent_id=int(aid), as_of=as_of, cash_micros=int(cash),
                 positions_value_micros=int(pv), total_value_micros=int(cash) + int(pv),
                 open_positions=int(n), unpriced_positions=int(u), final=final)
            for aid, cid, cash, pv, n, u in zip(book.index, book["cohort_id"], book["cash"],
                                               book["positions_value"], book["open_positions"], book["unpriced"])
            if int(aid) not in done
        ]
        repo.bulk_insert(s, table_of(PortfolioSnapshotRow), rows)
        return MarkCounts(len(book), int(per_agent["open_positions"].sum()), int(per_agent["unpriced"].sum()),
                          len(rows))
