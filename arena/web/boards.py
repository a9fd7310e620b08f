"""The leaderboards as the pages show them: each agent's row of its cohort board (`Standings`, loaded once per
render), the headline boards of `services.standings` reshaped into rows (`BoardRow`, `Headline`), and the
columns' help from the metric registry.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import pandas as pd
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from arena.money import MICRO
from arena.scoring.brier import BSS_MARKET_FLOOR
from arena.scoring.leaderboard import leaderboard, model_brier_across_cohorts
from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED, PROVISIONAL_RULE
from arena.scoring.registry import METRICS
from arena.services.mark import cash_frame, position_frame, price_frame, value_positions
from arena.services.score import bets_frame, forecasts_frame
from arena.services.standings import Boards, standings as compute_boards
from arena.store.tables import AgentRow, CohortRow, PortfolioSnapshotRow
from arena.web.env import page_path
from arena.web.refs import where_in
from arena.web.values import num


@dataclass(frozen=True)
class ColumnHelp:
    """A leaderboard column: its header, and the registered metric's direction and description (a tooltip)."""

    key: str
    label: str
    direction: str
    description: str


@dataclass(frozen=True)
class AgentScore:
    """One row of a cohort leaderboard: every metric of one agent, P/L exact in micro-USD."""

    rank: int
    agent_id: int
    agent: str
    cohort: str
    kind: str
    model_id: str
    href: str  # site-relative path of the agent's page
    cohort_href: str
    n_bets: int
    n_resolved: int
    brier: float
    brier_band: str
    brier_kelly: float
    brier_stated: float
    bss_vs_0_25: float
    bss_vs_market: float
    crowd_proxy: float
    win_rate: float
    start_micros: int
    cash_micros: int
    positions_value_micros: int
    total_value_micros: int
    pnl_micros: int
    return_pct: float
    return_band: str
    open_positions: int
    unpriced_positions: int
    provisional: bool


_BOARD_COLUMNS = [
    ("brier", "Brier"), ("brier_kelly", "Brier (Kelly)"), ("brier_stated", "Brier (stated)"),
    ("bss_vs_0_25", "BSS vs 0.25"), ("bss_vs_market", "BSS vs market"), ("crowd_proxy", "Crowd proxy"),
    ("pnl", "P/L"), ("return_pct", "Return"), ("win_rate", "Win rate"),
    ("model_brier_across_cohorts", "Brier (pooled)"),
]


def column_help() -> dict[str, ColumnHelp]:
    """Header help of the leaderboard columns, by metric name, from the metric registry."""
    out = {}
    for key, label in _BOARD_COLUMNS:
        m = METRICS.get(key)
        out[key] = ColumnHelp(key, label, m.direction if m else "", m.description if m else "")
    return out


@dataclass(frozen=True)
class Standings:
    """Every cohort leaderboard row keyed by agent id, the overall (per model) rows, and each agent's open
    positions valued at `as_of` — computed once and shared by the index, cohort and agent pages."""

    as_of: datetime
    rows: Mapping[int, AgentScore]
    by_cohort: Mapping[int, tuple[AgentScore, ...]]
    positions: Mapping[int, tuple[dict[str, Any], ...]]  # agent id → valued open positions (micro units)
    overall: pd.DataFrame | None
    curves: Mapping[int, tuple[tuple[datetime, int], ...]]  # agent id → (as_of, total value micro-USD) by time
    boards: Boards | None = None  # services.standings: the headline boards (intervals, tiers, references)


def load_standings(engine: Engine, as_of: datetime, cohort_ids: Sequence[int] | None = None,
                   with_overall: bool = False, with_boards: bool = True) -> Standings:
    """Leaderboards of the given cohorts (None: all). P/L is exact: cash folded from fills plus open
    positions marked at the latest price fetched by `as_of` (`services.mark`), minus the starting cash.

    The scoring frames are read once (`services.score`) and fed to the scoring library, so the cohort boards
    and the overall board share one read of the bets instead of two."""
    with engine.connect() as conn:
        cq = select(CohortRow.id, CohortRow.name)
        if cohort_ids is not None:
            cq = cq.where(CohortRow.id.in_(list(cohort_ids)))  # type: ignore[attr-defined]
        cohorts = dict(conn.execute(cq).all())
        agents = conn.execute(where_in(select(AgentRow.id, AgentRow.cohort_id, AgentRow.name, AgentRow.kind,
                                         AgentRow.model_id), AgentRow.cohort_id,
                                  None if cohort_ids is None else list(cohorts))).all()
    ids = list(cohorts)
    boards = (compute_boards(engine, as_of, cohort_names=None if cohort_ids is None else list(cohorts.values()))
              if ids and with_boards else None)  # the bootstraps: only for the pages that show the boards
    if not ids:
        return Standings(as_of, {}, {}, {}, _overall_table(pd.DataFrame(), pd.DataFrame()) if with_overall else None,
                         {}, boards)
    with engine.connect() as conn:
        sq = (select(PortfolioSnapshotRow.agent_id, PortfolioSnapshotRow.as_of,
                     PortfolioSnapshotRow.total_value_micros)
              .where(PortfolioSnapshotRow.as_of <= as_of)
              .order_by(PortfolioSnapshotRow.agent_id, PortfolioSnapshotRow.as_of))
        curves: dict[int, list[tuple[datetime, int]]] = defaultdict(list)
        for aid, t, v in conn.execute(where_in(sq, PortfolioSnapshotRow.cohort_id,
                                          None if cohort_ids is None else ids)).all():
            curves[aid].append((t, v))
    with Session(engine) as s:
        cash = cash_frame(s, ids)
        positions = position_frame(s, ids)
        valued = value_positions(positions, price_frame(s, as_of, positions["market_id"].unique().tolist()))
        bets = bets_frame(s, ids)
        forecasts = forecasts_frame(s, ids)

    pos_by_agent: dict[int, list[dict[str, Any]]] = defaultdict(list)
    pv: dict[int, int] = defaultdict(int)
    unpriced: dict[int, int] = defaultdict(int)
    for rec in valued.to_dict("records"):
        aid = int(rec["agent_id"])
        pos_by_agent[aid].append(rec)
        pv[aid] += int(rec["value"])
        unpriced[aid] += 0 if bool(rec["priced"]) else 1
    cash_by_agent = {int(a): (int(st), int(c)) for a, st, c in zip(cash["agent_id"], cash["start"], cash["cash"])}

    # services.score.portfolios_frame, from the integers just computed (same fold, same marks)
    names = [(aid, cohorts[cid], name) for aid, cid, name, *_ in agents]
    portfolios = pd.DataFrame({
        "cohort": [c for _, c, _ in names], "agent": [n for _, _, n in names],
        "starting_balance": [cash_by_agent.get(a, (0, 0))[0] / MICRO for a, _, _ in names],
        "total_value": [(cash_by_agent.get(a, (0, 0))[1] + pv[a]) / MICRO for a, _, _ in names],
    })
    board = leaderboard(bets, portfolios, forecasts)
    metrics: dict[tuple[str, str], dict[str, Any]] = {}
    order: dict[tuple[str, str], int] = {}
    for rank_in, rec in enumerate(board.to_dict("records")):
        metrics[(rec["cohort"], rec["agent"])] = rec
        order[(rec["cohort"], rec["agent"])] = rank_in

    rows: dict[int, AgentScore] = {}
    for aid, cid, name, kind, model_id in agents:
        cname = cohorts[cid]
        m = metrics.get((cname, name), {})
        start, c = cash_by_agent.get(aid, (0, 0))
        total = c + pv[aid]
        n_resolved = int(m.get("n_resolved", 0) or 0)
        rows[aid] = AgentScore(
            rank=0, agent_id=aid, agent=name, cohort=cname, kind=kind, model_id=model_id,
            href=page_path("agent", aid), cohort_href=page_path("cohort", cname),
            n_bets=int(m.get("n_bets", 0) or 0), n_resolved=n_resolved,
            brier=num(m.get("brier")), brier_band=str(m.get("brier_band", "n/a")),
            brier_kelly=num(m.get("brier_kelly")), brier_stated=num(m.get("brier_stated")),
            bss_vs_0_25=num(m.get("bss_vs_0_25")), bss_vs_market=num(m.get("bss_vs_market")),
            crowd_proxy=num(m.get("crowd_proxy")), win_rate=num(m.get("win_rate")),
            start_micros=start, cash_micros=c, positions_value_micros=pv[aid], total_value_micros=total,
            pnl_micros=total - start, return_pct=num(m.get("return_pct")),
            return_band=str(m.get("return_band", "n/a")), open_positions=len(pos_by_agent[aid]),
            unpriced_positions=unpriced[aid], provisional=n_resolved < PROVISIONAL_MIN_RESOLVED,
        )
    by_cohort: dict[int, list[AgentScore]] = defaultdict(list)
    for aid, cid, *_ in agents:
        by_cohort[cid].append(rows[aid])
    ranked: dict[int, tuple[AgentScore, ...]] = {}
    for cid, rs in by_cohort.items():
        rs.sort(key=lambda r: (order.get((r.cohort, r.agent), 1 << 30), r.agent))  # the scoring library's order
        ranked[cid] = tuple(_with_rank(r, i + 1) for i, r in enumerate(rs))
        for r in ranked[cid]:
            rows[r.agent_id] = r
    return Standings(as_of, rows, ranked, {a: tuple(p) for a, p in pos_by_agent.items()},
                     _overall_table(bets, portfolios) if with_overall else None,
                     {a: tuple(c) for a, c in curves.items()}, boards)


def _overall_table(bets: pd.DataFrame, portfolios: pd.DataFrame) -> pd.DataFrame:
    """Per model across cohorts — `services.score.overall_leaderboard`'s table, from frames already read:
    cohorts, mean return, total P/L and the pooled Brier of all the model's resolved bets."""
    if portfolios.empty:
        return pd.DataFrame(columns=["agent", "cohorts", "mean_return_pct", "total_pnl", "n_resolved", "brier"])
    ports = portfolios.assign(pnl=portfolios["total_value"] - portfolios["starting_balance"])
    ports["return_pct"] = 100.0 * ports["pnl"] / ports["starting_balance"]
    money_table = ports.groupby("agent").agg(cohorts=("cohort", "nunique"), mean_return_pct=("return_pct", "mean"),
                                             total_pnl=("pnl", "sum"))
    if len(bets):
        brier = model_brier_across_cohorts(bets.assign(model=bets["agent"]))
    else:
        brier = pd.DataFrame({"model": pd.Series(dtype=str), "n_resolved": pd.Series(dtype="int64"),
                              "brier": pd.Series(dtype=float)})
    brier = brier.rename(columns={"model": "agent"}).set_index("agent")
    table = money_table.join(brier, how="left").reset_index()
    return table.sort_values(["brier", "agent"], na_position="last", kind="stable").reset_index(drop=True)


def _with_rank(row: AgentScore, rank: int) -> AgentScore:
    return replace(row, rank=rank)


# Headline column → (header, registered metric): the header tooltips come from the metric registry.
_HEADLINE_COLUMNS = {
    "forecast_brier": ("Forecast Brier", "forecast_brier"),
    "brier_minus_market": ("Brier − market", "brier_minus_market"),
    "bss_vs_market": ("BSS vs market", "bss_vs_market"),
    "implied_brier": ("Implied Brier (seed 001)", "brier"),
    "bss_vs_0_25": ("BSS vs 0.25 (seed 001)", "bss_vs_0_25"),
    "kelly_brier": ("Kelly Brier", "brier_kelly"),
    "stated_brier": ("Stated Brier (bets)", "brier_stated"),
    "coherence_gap": ("Coherence gap", "coherence_gap"),
    "contradicting_bets": ("Contradicting bets", "contradicting_bets"),
    "pnl": ("P/L", "pnl"),
    "return_pct": ("Return", "return_pct"),
    "win_rate": ("Win rate", "win_rate"),
    "crowd_proxy": ("Crowd proxy", "crowd_proxy"),
}


def headline_help() -> dict[str, ColumnHelp]:
    """Header help of the headline board's columns, from the metric registry."""
    out = {}
    for key, (label, name) in _HEADLINE_COLUMNS.items():
        m = METRICS.get(name)
        out[key] = ColumnHelp(key, label, m.direction if m else "", m.description if m else "")
    return out


@dataclass(frozen=True)
class BoardRow:
    """One row of a headline board (a cohort's agent, or a model across cohorts), as `services.standings`
    computed it: the web layer only reshapes. Scores are floats (NaN: unknown); P/L exact to the micro-USD."""

    name: str  # agent (cohort board) or model (overall board)
    kind: str  # llm, baseline or reference
    href: str  # the agent's page ("" for a reference row and on the overall board)
    rank_label: str  # "1", "1=" (a tie), "" when unranked
    rank: float
    tier: float
    provisional: bool
    n_cohorts: float
    forecast_brier: float
    forecast_brier_lo: float
    forecast_brier_hi: float
    n_forecasts: float
    brier_minus_market: float
    brier_minus_market_lo: float
    brier_minus_market_hi: float
    bss_vs_market: float
    bss_vs_market_note: str
    implied_brier: float
    implied_brier_band: str
    bss_vs_0_25: float
    kelly_brier: float
    stated_brier: float
    n_bets: float
    n_resolved_bets: float
    pnl_micros: int | None
    return_pct: float
    win_rate: float
    crowd_proxy: float
    coherence_gap: float
    contradicting_bets: float

    @property
    def is_reference(self) -> bool:
        return self.kind == "reference"


def _micros(usd: Any) -> int | None:
    v = num(usd)
    return None if math.isnan(v) else int(round(v * MICRO))


def board_rows(frame: pd.DataFrame | None, hrefs: Mapping[str, str] | None = None) -> tuple[BoardRow, ...]:
    """`services.standings` board rows (cohort: "agent" column; overall: "model"), best first."""
    if frame is None or not len(frame):
        return ()
    key = "model" if "model" in frame.columns else "agent"
    out = []
    for rec in frame.to_dict("records"):
        name = str(rec[key])
        kind = str(rec.get("kind") or "")
        band = rec.get("implied_brier_band")
        out.append(BoardRow(
            name=name, kind=kind, href=(hrefs or {}).get(name, "") if kind != "reference" else "",
            rank_label=str(rec.get("rank_label") or ""), rank=num(rec.get("rank")), tier=num(rec.get("tier")),
            provisional=bool(rec.get("provisional")), n_cohorts=num(rec.get("n_cohorts")),
            forecast_brier=num(rec.get("forecast_brier")), forecast_brier_lo=num(rec.get("forecast_brier_lo")),
            forecast_brier_hi=num(rec.get("forecast_brier_hi")), n_forecasts=num(rec.get("n_forecasts")),
            brier_minus_market=num(rec.get("brier_minus_market")),
            brier_minus_market_lo=num(rec.get("brier_minus_market_lo")),
            brier_minus_market_hi=num(rec.get("brier_minus_market_hi")),
            bss_vs_market=num(rec.get("bss_vs_market")), bss_vs_market_note=str(rec.get("bss_vs_market_note") or ""),
            implied_brier=num(rec.get("implied_brier")),
            implied_brier_band=str(band) if isinstance(band, str) else "n/a",
            bss_vs_0_25=num(rec.get("bss_vs_0_25")), kelly_brier=num(rec.get("kelly_brier")),
            stated_brier=num(rec.get("stated_brier")), n_bets=num(rec.get("n_bets")),
            n_resolved_bets=num(rec.get("n_resolved_bets")), pnl_micros=_micros(rec.get("pnl")),
            return_pct=num(rec.get("return_pct")), win_rate=num(rec.get("win_rate")),
            crowd_proxy=num(rec.get("crowd_proxy")), coherence_gap=num(rec.get("coherence_gap")),
            contradicting_bets=num(rec.get("contradicting_bets")),
        ))
    return tuple(out)


@dataclass(frozen=True)
class Headline:
    """A headline board ready for a page: its rows, the rank key and the rules the page states."""

    rows: tuple[BoardRow, ...]
    rank_by: str
    rank_label: str
    columns: Mapping[str, ColumnHelp]
    provisional_rule: str
    bss_floor: float


def headline(frame: pd.DataFrame | None, rank_by: str, hrefs: Mapping[str, str] | None = None) -> Headline:
    label = _HEADLINE_COLUMNS.get(rank_by, (rank_by, ""))[0]
    return Headline(board_rows(frame, hrefs), rank_by, label, headline_help(), PROVISIONAL_RULE, BSS_MARKET_FLOOR)
