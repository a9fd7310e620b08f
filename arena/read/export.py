"""Export: the arena's recorded facts in portable formats — the replay JSON-lines format (so live history can be
replayed later), and CSV or Parquet of fills, decisions, portfolio snapshots,
scores, stated forecasts, model calls (tokens, cost, latency; prompts and replies on request), markets and their
price history."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from sqlalchemy import Select, func, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import Mapped
from sqlmodel import Session, col

from arena.read.csv_cells import safe_frame
from arena.clock import utc
from arena.domain.market import YES
from arena.money import MICRO
from arena.store.tables import (
    AgentRow,
    CohortRow,
    DecisionRow,
    FillRow,
    ForecastRow,
    MarketRow,
    ModelCallRow,
    PortfolioSnapshotRow,
    PriceSnapshotRow,
    ResolutionRow,
)
from arena.venues.replay import write_replay

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass
class ExportReport:
    written: int = 0
    skipped: Counter = field(default_factory=Counter)  # reason → markets left out
    files: list[str] = field(default_factory=list)


def export_replay(engine: Engine, path: str | Path) -> ExportReport:
    """Write every binary market that resolved YES or NO, with its daily YES price (the last snapshot of each
    replay day, `day_of`: a snapshot at 00:00 UTC closes the day before; only days before the resolution date), in the replay format. Markets the format cannot express
    (void, probabilistic, multi-outcome, unresolved, no price before resolution) are counted by reason.

    Recorded quotes go with the prices: a day's point carries the best YES bid/ask its snapshot recorded
    (a crossed one, bid above ask, is left out: the format refuses it), the last point the market's volume and
    24 h volume as last recorded (the arena keeps only the latest), and a Polymarket fee rate goes as
    ``fee_rate``. A market with none of them is written exactly as before."""
    report = ExportReport()
    records = []
    with Session(engine) as s:
        latest_v = (select(ResolutionRow.market_id, func.max(ResolutionRow.version).label("v"))
                    .group_by(ResolutionRow.market_id).subquery())
        resolutions = {r.market_id: r for r in s.scalars(
            select(ResolutionRow).join(latest_v, (ResolutionRow.market_id == latest_v.c.market_id)
                                       & (ResolutionRow.version == latest_v.c.v)))}
        for m in s.scalars(select(MarketRow).order_by(MarketRow.id)):
            res = resolutions.get(m.id)
            reason = _unexportable(m, res)
            if reason:
                report.skipped[reason] += 1
                continue
            assert res is not None
            resolved_on = day_of(res.resolved_at or res.recorded_at)
            daily: dict = {}
            for at, ppm, bid, ask in s.execute(
                    select(PriceSnapshotRow.observed_at, PriceSnapshotRow.price_ppm, PriceSnapshotRow.bid_ppm,
                           PriceSnapshotRow.ask_ppm)
                    .where(PriceSnapshotRow.market_id == m.id, PriceSnapshotRow.outcome == YES)
                    .order_by(PriceSnapshotRow.observed_at, PriceSnapshotRow.id)):
                day = day_of(at)
                if day < resolved_on:
                    daily[day] = (Decimal(ppm) / MICRO, _quote(bid, ask))  # the last observation of the day wins
            if not daily:
                report.skipped["no price before resolution"] += 1
                continue
            history = [(d, p, q) if q else (d, p) for d, (p, q) in sorted(daily.items())]
            volumes = {k: v for k, v in (("volume", m.volume), ("volume_24h", m.volume_24h))
                       if v is not None and v >= 0 and v == v and v != float("inf")}
            if volumes:
                d, p, *q = history[-1]
                history[-1] = (d, p, {**(q[0] if q else {}), **volumes})
            fee_rate = (m.extra or {}).get("fee_rate") or ""
            records.append({
                "platform": m.venue, "market_id": m.native_id, "question": m.question, "url": m.url,
                "background": m.description, "resolution_criteria": "", "market_info_resolution_criteria": None,
                "market_open_datetime": utc(m.first_seen_at).isoformat(),
                "market_close_datetime": utc(m.close_time).isoformat() if m.close_time else None,
                "resolution": 1 if int(res.payouts.get(YES, 0)) == MICRO else 0,
                "first_resolved_observation_date": resolved_on,
                "history": history,
                "provenance": {"exported_by": "arena", "arena_market_id": m.id, "resolution_version": res.version},
                **({"fee_rate": _rate(fee_rate)} if _rate(fee_rate) else {}),
            })
    report.written = write_replay(records, path) if records else 0
    if not records:
        Path(path).write_text("")
    report.files.append(str(path))
    return report


def day_of(at: datetime) -> date:
    """The replay date of a fact observed at `at`: the UTC day whose end is the first at or after it. A replay
    point dated D counts as observed at the end of D (D + 1 day 00:00 UTC, `arena.venues.replay`), so a
    snapshot a replay sync stamped at that midnight is D's point again — taking `at`'s own date would move every
    point (and the resolution date) one day later on each export and re-import. A fact observed during a day
    becomes that day's point: on re-import it is visible at the day's end, never before it was observed."""
    t = utc(at)
    return t.date() - timedelta(days=1) if t.time() == time(0) else t.date()


def _quote(bid_ppm: int | None, ask_ppm: int | None) -> dict[str, Decimal]:
    """A snapshot's recorded YES bid/ask for a replay point ({} when none, or crossed)."""
    if bid_ppm is not None and ask_ppm is not None and bid_ppm > ask_ppm:
        return {}
    return {k: Decimal(v) / MICRO for k, v in (("bid", bid_ppm), ("ask", ask_ppm)) if v is not None}


def _rate(text: str) -> Decimal | None:
    """A stored fee rate the replay format can hold (in [0, 1], at most 6 decimals, not 0), else None."""
    try:
        rate = Decimal(text)
    except ArithmeticError:
        return None
    if not rate.is_finite() or not Decimal(0) < rate <= Decimal(1) or rate != rate.quantize(Decimal("1e-6")):
        return None
    return rate


def _unexportable(m: MarketRow, res: ResolutionRow | None) -> str:
    if m.kind != "binary":
        return "multi-outcome"
    if res is None or res.kind == "unresolved":
        return "unresolved"
    if res.kind == "void":
        return "void"
    if res.kind != "winner":
        return "probabilistic"
    return ""


TABLES = ("fills", "decisions", "snapshots", "scores", "bets", "forecasts", "model_calls", "markets",
          "question_difficulty", "prices")
PRICE_CHUNK = 100_000  # price-history rows read and written at a time (years of snapshots do not fit in memory)


FORMATS = ("csv", "parquet")


def export_tables(engine: Engine, out_dir: str | Path, as_of: datetime, cohort: str | None = None,
                  fmt: str = "csv", with_text: bool = False, *, rank_by: str | None = None) -> ExportReport:
    """One file per table of TABLES, CSV or Parquet (`fmt`), for one
    cohort or for everything: fills, decisions, portfolio snapshots, the boards (`scores`: the rows of `arena
    leaderboard --format csv`, headline first, from the same code), every bet with its per-bet scores (`bets`),
    stated forecasts, model calls with their tool calls and results (their prompts, raw replies and reasoning
    only when `with_text`: they are large), the markets the cohort touched (every market without a cohort), the
    fitted difficulty of every resolved forecast-set question (`question_difficulty`) and the markets' price history (written in chunks). Money columns are exact decimal strings in USD, prices exact
    decimals, integer columns integers (empty where null) — in both formats, so a Parquet file holds what the
    CSV holds."""
    from arena.read.question_difficulty import question_difficulties
    from arena.read.standings import boards_frame, standings
    from arena.scoring.board import DEFAULT_RANK_BY

    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (one of {', '.join(FORMATS)})")
    out = Path(out_dir)
    if cohort:
        from arena.read.standings import check_cohort_names

        check_cohort_names(engine, [cohort])  # before anything is created
    with Session(engine) as s:
        cohort_ids = list(s.scalars(select(CohortRow.id).where(CohortRow.name == cohort))) if cohort else None
    out.mkdir(parents=True, exist_ok=True)
    report = ExportReport()
    with Session(engine) as s:

        def scoped(q: Select[Any], column: Mapped[int]) -> Select[Any]:
            return q.where(column.in_(cohort_ids)) if cohort_ids is not None else q

        conn = s.connection()
        frames = {
            "fills": read_typed(scoped(select(
                FillRow.id, CohortRow.name.label("cohort"), AgentRow.name.label("agent"), FillRow.market_id,
                FillRow.outcome, FillRow.kind, FillRow.shares, FillRow.cash_micros, FillRow.cost_micros,
                FillRow.price_ppm, FillRow.mid_ppm, FillRow.provenance, FillRow.decision_id,
                FillRow.resolution_version, FillRow.at, FillRow.key)
                .join(AgentRow, AgentRow.id == FillRow.agent_id).join(CohortRow, CohortRow.id == FillRow.cohort_id)
                .order_by(FillRow.id), col(FillRow.cohort_id)), conn),
            "decisions": read_typed(scoped(select(
                DecisionRow.id, CohortRow.name.label("cohort"), AgentRow.name.label("agent"), DecisionRow.round_key,
                DecisionRow.status, DecisionRow.as_of, DecisionRow.cash_at_start_micros, DecisionRow.max_bet_micros,
                DecisionRow.actions, DecisionRow.reasoning, DecisionRow.error, DecisionRow.sizing_version)
                .join(AgentRow, AgentRow.id == DecisionRow.agent_id)
                .join(CohortRow, CohortRow.id == DecisionRow.cohort_id).order_by(DecisionRow.id),
                col(DecisionRow.cohort_id)), conn),
            "snapshots": read_typed(scoped(select(
                PortfolioSnapshotRow.id, CohortRow.name.label("cohort"), AgentRow.name.label("agent"),
                PortfolioSnapshotRow.as_of, PortfolioSnapshotRow.cash_micros,
                PortfolioSnapshotRow.positions_value_micros, PortfolioSnapshotRow.total_value_micros,
                PortfolioSnapshotRow.open_positions, PortfolioSnapshotRow.unpriced_positions,
                PortfolioSnapshotRow.final)
                .join(AgentRow, AgentRow.id == PortfolioSnapshotRow.agent_id)
                .join(CohortRow, CohortRow.id == PortfolioSnapshotRow.cohort_id)
                .order_by(PortfolioSnapshotRow.id), col(PortfolioSnapshotRow.cohort_id)), conn),
            "forecasts": read_typed(scoped(select(
                ForecastRow.id, CohortRow.name.label("cohort"), AgentRow.name.label("agent"), ForecastRow.decision_id,
                ForecastRow.market_id, ForecastRow.source, ForecastRow.probability, ForecastRow.market_price_ppm,
                ForecastRow.replicate, ForecastRow.as_of)
                .join(AgentRow, AgentRow.id == ForecastRow.agent_id)
                .join(CohortRow, CohortRow.id == AgentRow.cohort_id).order_by(ForecastRow.id),
                col(AgentRow.cohort_id)), conn),
            "model_calls": read_typed(scoped(select(
                ModelCallRow.id, CohortRow.name.label("cohort"), AgentRow.name.label("agent"),
                ModelCallRow.decision_id, ModelCallRow.attempt, ModelCallRow.decision_attempt, ModelCallRow.replicate,
                ModelCallRow.at, ModelCallRow.served_model, *_upstream_columns(), ModelCallRow.provider,
                ModelCallRow.prompt_version, ModelCallRow.prompt_tokens, ModelCallRow.completion_tokens,
                ModelCallRow.cost_micros, ModelCallRow.latency_s, ModelCallRow.error, ModelCallRow.tool_calls,
                *((ModelCallRow.prompt, ModelCallRow.raw_response, *_reasoning_columns()) if with_text else ()))
                .join(DecisionRow, DecisionRow.id == ModelCallRow.decision_id)
                .join(AgentRow, AgentRow.id == DecisionRow.agent_id)
                .join(CohortRow, CohortRow.id == AgentRow.cohort_id).order_by(ModelCallRow.id),
                col(AgentRow.cohort_id)), conn),
        }
        frames["bets"] = bets_table(s, cohort_ids, as_of)
        touched = None
        if cohort_ids is not None:
            touched = sorted(set(frames["fills"]["market_id"]) | set(frames["forecasts"]["market_id"]))
        mq = select(MarketRow.id, MarketRow.venue, MarketRow.native_id, MarketRow.question, MarketRow.kind,
                    MarketRow.status, MarketRow.close_time, MarketRow.url, MarketRow.category, MarketRow.group_id,
                    MarketRow.first_seen_at).order_by(MarketRow.id)
        if touched is not None:
            mq = mq.where(col(MarketRow.id).in_(touched or [""]))
        frames["markets"] = read_typed(mq, conn)
        price_rows = _write_prices(s, out, touched, fmt)
    boards = standings(engine, as_of, rank_by=rank_by or DEFAULT_RANK_BY, cohort_names=[cohort] if cohort else None)
    frames["scores"] = boards_frame(boards)
    # the fitted difficulty of every resolved forecast-set question, per cohort (`scoring.question_difficulty`)
    frames["question_difficulty"] = question_difficulties(engine, as_of, cohort_names=[cohort] if cohort else None)
    for name in ("fills", "decisions", "snapshots", "forecasts", "model_calls"):
        frames[name] = _usd_columns(frames[name])
    for name, column in (("decisions", "actions"), ("model_calls", "tool_calls")):
        frames[name][column] = frames[name][column].map(_json_text)
    for name in TABLES[:-1]:
        df = frames[name]
        path = out / f"{name}.{fmt}"
        if fmt == "csv":
            safe_frame(df).to_csv(path, index=False)
        else:
            import pyarrow.parquet as pq

            pq.write_table(_parquet_table(df), path)
        report.files.append(str(path))
        report.written += len(df)
    report.files.append(str(out / f"prices.{fmt}"))
    report.written += price_rows
    return report


def _upstream_columns() -> tuple:
    """The model call's upstream model and endpoint (a proxy's report), when the schema has them."""
    return tuple(getattr(ModelCallRow, c) for c in ("upstream_model", "upstream_base") if hasattr(ModelCallRow, c))


def _reasoning_columns() -> tuple:
    return (ModelCallRow.reasoning_content,) if hasattr(ModelCallRow, "reasoning_content") else ()


def _json_text(value: object) -> str:
    """A JSON column as text: "" for null, the JSON otherwise (a driver may hand back text or objects)."""
    import json

    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def read_typed(query: Select[Any], connection: Connection) -> pd.DataFrame:
    """`pd.read_sql` with the query's integer columns as pandas' nullable Int64 (a null in an integer column
    would otherwise turn the whole column into floats: `decision_id` written `4.0`)."""
    df = pd.read_sql(query, connection)
    return _integers(df, query)


def _integers(df: pd.DataFrame, query: Select[Any]) -> pd.DataFrame:
    from sqlalchemy import Boolean, Integer

    for column in query.selected_columns:
        name = column.key
        if name in df.columns and isinstance(column.type, Integer) and not isinstance(column.type, Boolean) \
                and df[name].dtype != "Int64":
            df[name] = df[name].astype("Int64")
    return df


BET_COLUMNS = ("cohort", "agent", "decision_id", "market_id", "market_kind", "at", "outcome_bought", "side",
               "stake_usd", "price_paid", "price_yes_at_bet", "cash_at_decision_usd", "max_bet_usd",
               "implied_confidence", "implied_p_yes", "stated_probability", "kelly_p_yes", "void", "resolved",
               "outcome_yes", "implied_brier", "kelly_brier", "stated_brier", "market_brier", "won")


def bets_table(session: Session, cohort_ids: list[int] | None, as_of: datetime) -> pd.DataFrame:
    """Every bet (a BUY fill of a decision) recorded by `as_of`, with the per-bet quantities the boards average,
    under the boards' names: seed 001's size-implied confidence and P(YES) and its Brier (`implied_brier`), the
    Kelly-implied and stated P(YES) and their Briers, the market's Brier on the bet, and whether it won."""
    from arena.scoring.leaderboard import per_bet_scores
    from arena.store.frames import bets_frame

    bets = bets_frame(session, cohort_ids, as_of)
    if bets.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in BET_COLUMNS})
    bought = bets["outcome"]
    scored = per_bet_scores(bets)

    def usd(values: pd.Series) -> pd.Series:  # USD or a price: exact to the micro, as the store holds it
        return values.map(lambda v: "" if pd.isna(v) else str(Decimal(round(float(v) * MICRO)) / MICRO))

    out = pd.DataFrame({
        "cohort": scored["cohort"], "agent": scored["agent"],
        "decision_id": scored["decision_id"].astype("Int64"), "market_id": scored["market_id"],
        "market_kind": scored["market_kind"], "at": scored["at"], "outcome_bought": bought.to_numpy(),
        "side": scored["side"], "stake_usd": usd(scored["amount"]),
        "price_paid": usd(scored["price_yes_at_bet"].where(scored["side"] == YES, 1.0 - scored["price_yes_at_bet"])),
        "price_yes_at_bet": usd(scored["price_yes_at_bet"]), "cash_at_decision_usd": usd(scored["cash_at_decision"]),
        "max_bet_usd": usd(scored["max_bet"]), "implied_confidence": scored["confidence"],
        "implied_p_yes": scored["f_yes"], "stated_probability": scored["stated_probability"],
        "kelly_p_yes": scored["p_kelly"], "void": scored["void"].astype(bool), "resolved": scored["resolved"],
        "outcome_yes": scored["outcome"], "implied_brier": scored["brier"], "kelly_brier": scored["brier_kelly"],
        "stated_brier": scored["brier_stated"], "market_brier": scored["brier_market"],
        "won": scored["won"].astype("Int64"),  # 1 won, 0 lost, empty: does not count (unresolved, void)
    })
    return out[list(BET_COLUMNS)].reset_index(drop=True)


def _parquet_table(df: pd.DataFrame) -> pa.Table:
    """The frame as an Arrow table: text columns stay text (exact decimals), times stay UTC timestamps."""
    import pyarrow as pa

    df = df.copy(deep=False)
    for column in df.columns:  # a column of Python ints with nulls (the boards' counts) stays integers, as in the CSV
        if df[column].dtype == object:
            values = [v for v in df[column] if v is not None and not (isinstance(v, float) and pd.isna(v))]
            if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
                df[column] = df[column].astype("Int64")
    return pa.Table.from_pandas(df, preserve_index=False)


PRICE_COLUMNS = ["id", "market_id", "outcome", "price", "bid", "ask", "observed_at", "fetched_at", "source"]


def _write_prices(session: Session, out: Path, markets: list[str] | None, fmt: str) -> int:
    """prices.csv or prices.parquet: every price snapshot (of `markets`, or all), in chunks of PRICE_CHUNK rows
    (a Parquet row group each); returns the rows."""
    q = select(PriceSnapshotRow.id, PriceSnapshotRow.market_id, PriceSnapshotRow.outcome, PriceSnapshotRow.price_ppm,
               PriceSnapshotRow.bid_ppm, PriceSnapshotRow.ask_ppm, PriceSnapshotRow.observed_at,
               PriceSnapshotRow.fetched_at, PriceSnapshotRow.source).order_by(PriceSnapshotRow.id)
    if markets is not None:
        q = q.where(col(PriceSnapshotRow.market_id).in_(markets or [""]))
    path = out / f"prices.{fmt}"
    rows, writer, schema = 0, None, None
    try:
        for chunk in pd.read_sql(q, session.connection(), chunksize=PRICE_CHUNK):
            chunk = _usd_columns(_integers(chunk, q))[PRICE_COLUMNS]
            if fmt == "csv":
                safe_frame(chunk).to_csv(path, index=False, header=rows == 0, mode="w" if rows == 0 else "a")
            else:
                import pyarrow.parquet as pq

                table = _parquet_table(chunk)
                if writer is None:
                    schema = table.schema
                    writer = pq.ParquetWriter(path, schema)
                writer.write_table(table.cast(schema))
            rows += len(chunk)
    finally:
        if writer is not None:
            writer.close()
    if rows == 0:  # no snapshot at all: still a file with its columns
        empty = pd.DataFrame({c: pd.Series(dtype=str) for c in PRICE_COLUMNS})
        if fmt == "csv":
            empty.to_csv(path, index=False)
        else:
            import pyarrow.parquet as pq

            pq.write_table(_parquet_table(empty), path)
    return rows


def _usd_columns(df: pd.DataFrame) -> pd.DataFrame:
    """Integer micro-USD columns become exact decimal USD strings (…_usd); ppm prices become decimals."""
    df = df.copy()
    for column in [c for c in df.columns if c.endswith("_micros")]:
        df[column[: -len("_micros")] + "_usd"] = df[column].map(
            lambda v: "" if pd.isna(v) else str(Decimal(int(v)) / MICRO))
        df = df.drop(columns=[column])
    for column in [c for c in df.columns if c.endswith("_ppm")]:
        df[column[: -len("_ppm")]] = df[column].map(lambda v: "" if pd.isna(v) else str(Decimal(int(v)) / MICRO))
        df = df.drop(columns=[column])
    if "shares" in df.columns:
        df["shares"] = df["shares"].map(lambda v: str(Decimal(int(v)) / MICRO))
    return df
