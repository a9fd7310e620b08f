"""Page contexts: one typed, frozen dataclass per page, built from the database with set-based queries.

Every number a page shows is computed here (or in `services`) — templates only loop and format. Builders take
either `None` (every page of that kind: one query per table, as the static renderer wants) or a short list of
keys (one page, as the live server wants); both go through the same code, so the two sites are identical.
Money stays integer micro-USD, prices ppm, shares micro-shares; scores are floats with NaN for "unknown";
times of table rows are as stored (a naive one is UTC, as SQLite returns it — the `dt` filter reads both).
Imports the store and services; never writes.
"""

from __future__ import annotations

import importlib
import json
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from decimal import Decimal, InvalidOperation
from typing import Any

import pandas as pd
from sqlalchemy import case, desc, func, select, text, union
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import Session

from arena.clock import utc
from arena.domain.market import NO, YES
from arena.domain.sizing import SIZING_VERSION, CohortRules
from arena.money import MICRO
from arena.scoring.board import DEFAULT_RANK_BY, RANK_METRICS
from arena.scoring.brier import BSS_MARKET_FLOOR, brier_band
from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED, PROVISIONAL_RULE
from arena.scoring.leaderboard import leaderboard, model_brier_across_cohorts
from arena.scoring.registry import METRICS
from arena.services.decomposition import decomposition
from arena.services.point_in_time import backend
from arena.services.mark import cash_frame, position_frame, price_frame, value_positions
from arena.services.score import SCORING_VERSION, bets_frame, forecasts_frame
from arena.services.standings import Boards, standings as compute_boards
from arena.store.tables import (
    AgentRow,
    CohortRow,
    DecisionRow,
    FillRow,
    ForecastRow,
    JobRunRow,
    MarketRow,
    ModelCallRow,
    PortfolioSnapshotRow,
    PriceSnapshotRow,
    RejectionRow,
    ResolutionRow,
    SyncErrorRow,
    SyncRunRow,
)
from arena.web.env import money, page_path

OPERATIONS_LIMIT = 100  # rows of each operations table (newest first)
CHART_MAX_POINTS = 400  # longer series are thinned (first, last and evenly spaced points kept)
NAN = float("nan")


# --- small shared pieces ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ColumnHelp:
    """A leaderboard column: its header, and the registered metric's direction and description (a tooltip)."""

    key: str
    label: str
    direction: str
    description: str


@dataclass(frozen=True)
class CohortInfo:
    id: int
    name: str
    period_start: datetime
    status: str
    starting_cash_micros: int
    created_at: datetime
    completed_at: datetime | None
    n_agents: int
    href: str


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


@dataclass(frozen=True)
class Tick:
    pos: float
    label: str
    anchor: str = "middle"  # SVG text-anchor: the end ticks hug the plot so they are never clipped


@dataclass(frozen=True)
class Series:
    label: str
    points: str  # SVG polyline points "x,y x,y …", already in the chart's coordinates
    css: str


@dataclass(frozen=True)
class Marker:
    x: float
    y: float
    path: str  # SVG path data of the marker shape, centred on (x, y)
    css: str
    title: str


@dataclass(frozen=True)
class Rule:
    """A straight reference line across (horizontal: y) or down (vertical: x) the plot, with a label."""

    x1: float
    y1: float
    x2: float
    y2: float
    label: str
    css: str
    label_x: float
    label_y: float
    anchor: str  # SVG text-anchor of the label


@dataclass(frozen=True)
class Chart:
    """An inline SVG chart, fully laid out: the template only draws what is here."""

    title: str
    width: int
    height: int
    left: float
    top: float
    right: float
    bottom: float
    series: tuple[Series, ...]
    markers: tuple[Marker, ...]
    rules: tuple[Rule, ...]
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    empty: bool
    legend: bool

    @property
    def y_label_x(self) -> float:
        return self.left - 6

    @property
    def x_label_y(self) -> float:
        return self.bottom + 18


# --- charts (pure layout) --------------------------------------------------------------------------------------

def _epoch(t: datetime) -> float:
    """Seconds since the epoch of a stored time (a naive one is UTC, as SQLite returns it)."""
    return (t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)).timestamp()


_W, _H = 900, 300
_PAD_L, _PAD_R, _PAD_T, _PAD_B = 76.0, 12.0, 14.0, 30.0


def _nice_step(span: float, target: int = 4) -> float:
    raw = span / max(target, 1)
    if raw <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def _thin(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    if len(points) <= CHART_MAX_POINTS:
        return points
    step = (len(points) - 1) / (CHART_MAX_POINTS - 1)
    return [points[round(i * step)] for i in range(CHART_MAX_POINTS)]


class _Frame:
    """Maps (epoch seconds, value) into the plot box of a chart."""

    def __init__(self, t0: float, t1: float, y0: float, y1: float) -> None:
        if t1 <= t0:
            t0, t1 = t0 - 43_200, t1 + 43_200  # one instant: half a day either side
        if y1 <= y0:
            pad = abs(y0) * 0.05 or 1.0
            y0, y1 = y0 - pad, y1 + pad
        self.t0, self.t1, self.y0, self.y1 = t0, t1, y0, y1
        self.left, self.right = _PAD_L, _W - _PAD_R
        self.top, self.bottom = _PAD_T, _H - _PAD_B

    def x(self, t: float) -> float:
        return self.left + (t - self.t0) / (self.t1 - self.t0) * (self.right - self.left)

    def y(self, v: float) -> float:
        return self.bottom - (v - self.y0) / (self.y1 - self.y0) * (self.bottom - self.top)

    def points(self, pts: Iterable[tuple[float, float]]) -> str:
        ax = (self.right - self.left) / (self.t1 - self.t0)
        bx = self.left - self.t0 * ax
        ay = -(self.bottom - self.top) / (self.y1 - self.y0)
        by = self.bottom - self.y0 * ay
        return " ".join([f"{ax * t + bx:.1f},{ay * v + by:.1f}" for t, v in pts])

    def x_ticks(self) -> tuple[Tick, ...]:
        span = self.t1 - self.t0
        n = 5
        fmt = "%Y-%m-%d" if span > 300 * 86_400 else "%b %d"
        out = []
        for i in range(n):
            t = self.t0 + span * i / (n - 1)
            anchor = "start" if i == 0 else "end" if i == n - 1 else "middle"
            out.append(Tick(round(self.x(t), 1), datetime.fromtimestamp(t, tz=timezone.utc).strftime(fmt), anchor))
        return tuple(out)

    def y_ticks(self, label: Callable[[float], str]) -> tuple[Tick, ...]:
        step = _nice_step(self.y1 - self.y0)
        v = math.ceil(self.y0 / step) * step
        out = []
        while v <= self.y1 + step * 1e-9:
            out.append(Tick(round(self.y(v), 1), label(v)))
            v += step
        return tuple(out)


def _empty_chart(title: str) -> Chart:
    return Chart(title, _W, _H, _PAD_L, _PAD_T, _W - _PAD_R, _H - _PAD_B, (), (), (), (), (), True, False)


def _dollars_label(v: float) -> str:
    a = abs(v)
    sign = "-" if v < 0 else ""
    if a >= 1_000_000:
        return f"{sign}${a / 1_000_000:.3g}M"
    if a >= 10_000:
        return f"{sign}${a / 1_000:.3g}k"
    return f"{sign}${a:,.0f}"


LOG_SCALE_RATIO = 3.0  # an equity chart whose highest value is this many times its lowest is drawn on a log scale


def _log_ticks(lo: float, hi: float) -> list[float]:
    """Round values between two log10 values: finer steps in a short range, each decade's 1 in a long one."""
    steps = (1, 1.5, 2, 3, 4, 5, 7) if hi - lo <= 1.2 else (1, 2, 5) if hi - lo <= 2.5 else (1,)
    out = []
    for e in range(math.floor(lo), math.ceil(hi) + 1):
        for m in steps:
            v = math.log10(m) + e
            if lo <= v <= hi:
                out.append(v)
    return out


def equity_chart(title: str, curves: Sequence[tuple[str, Sequence[tuple[datetime, int]]]],
                 reference_micros: int | None) -> Chart:
    """Total value (micro-USD) over time, one line per curve, with a dashed line at the starting cash. When one
    curve dominates (highest value over lowest at least LOG_SCALE_RATIO, all positive) the y axis is logarithmic,
    so the others are not flattened against the start line; the title then says so."""
    pts = [[(_epoch(t), v / MICRO) for t, v in curve] for _, curve in curves]
    allpts = [p for c in pts for p in c]
    if not allpts:
        return _empty_chart(title)
    ys = [v for _, v in allpts] + ([reference_micros / MICRO] if reference_micros is not None else [])
    log = min(ys) > 0 and max(ys) >= LOG_SCALE_RATIO * min(ys)
    f = math.log10 if log else (lambda v: v)
    if log:
        title = f"{title} (log scale)"
        pts = [[(t, f(v)) for t, v in c] for c in pts]
        ys = [f(v) for v in ys]
    frame = _Frame(min(t for t, _ in allpts), max(t for t, _ in allpts), min(ys), max(ys))
    lo, hi = frame.y0, frame.y1
    pad = (hi - lo) * 0.05
    frame = _Frame(frame.t0, frame.t1, lo - pad, hi + pad)
    series = tuple(Series(label, frame.points(_thin(p)), f"s{i % 10}")
                   for i, ((label, _), p) in enumerate(zip(curves, pts)) if p)
    rules: tuple[Rule, ...] = ()
    if reference_micros is not None:
        y = round(frame.y(f(reference_micros / MICRO)), 1)
        rules = (Rule(frame.left, y, frame.right, y, f"start {money(reference_micros)}", "ref", frame.right - 4,
                      y - 4, "end"),)
    y_ticks = (tuple(Tick(round(frame.y(v), 1), _dollars_label(10 ** v)) for v in _log_ticks(frame.y0, frame.y1))
               if log else frame.y_ticks(_dollars_label))
    return Chart(title, _W, _H, frame.left, frame.top, frame.right, frame.bottom, series, (), rules,
                 frame.x_ticks(), y_ticks, False, len(series) > 1)


def _marker_path(x: float, y: float, shape: str) -> str:
    r = 7.0
    if shape == "up":
        return f"M{x:.1f},{y - r:.1f}L{x + r:.1f},{y + r * 0.8:.1f}L{x - r:.1f},{y + r * 0.8:.1f}Z"
    if shape == "down":
        return f"M{x:.1f},{y + r:.1f}L{x + r:.1f},{y - r * 0.8:.1f}L{x - r:.1f},{y - r * 0.8:.1f}Z"
    return f"M{x - r:.1f},{y:.1f}L{x:.1f},{y - r:.1f}L{x + r:.1f},{y:.1f}L{x:.1f},{y + r:.1f}Z"


def price_chart(title: str, series: Sequence[tuple[str, Sequence[tuple[datetime, int]]]],
                trades: Sequence[tuple[datetime, int, str, str, str]],
                events: Sequence[tuple[datetime, str]]) -> Chart:
    """Prices (ppm, on a fixed 0..1 axis) over time, one line per outcome; trades as markers
    (at, price ppm on the plotted line, shape up/down, title, side css); events (a resolution) as vertical
    lines."""
    pts = [[(_epoch(t), p / MICRO) for t, p in s] for _, s in series]
    times = [t for s in pts for t, _ in s] + [_epoch(t) for t, *_ in trades]
    times += [_epoch(t) for t, _ in events]
    if not times:
        return _empty_chart(title)
    frame = _Frame(min(times), max(times), 0.0, 1.0)
    lines = tuple(Series(label, frame.points(_thin(p)), f"s{i % 10}")
                  for i, ((label, _), p) in enumerate(zip(series, pts)) if p)
    markers = []
    for at, ppm, shape, tip, side in trades:
        x, y = round(frame.x(_epoch(at)), 1), round(frame.y(ppm / MICRO), 1)
        markers.append(Marker(x, y, _marker_path(x, y, shape), f"{'buy' if shape == 'up' else 'sell'} {side}", tip))
    rules = []
    for at, label in events:
        x = round(frame.x(_epoch(at)), 1)
        rules.append(Rule(x, frame.top, x, frame.bottom, label, "event", x - 3, frame.top + 10, "end"))
    return Chart(title, _W, _H, frame.left, frame.top, frame.right, frame.bottom, lines, tuple(markers),
                 tuple(rules), frame.x_ticks(), frame.y_ticks(lambda v: f"{v:.2f}"), False, len(lines) > 1)


# --- standings: the leaderboards, computed once per render ---------------------------------------------------

_BOARD_COLUMNS = [
    ("brier", "Brier"), ("brier_kelly", "Brier (Kelly)"), ("brier_stated", "Brier (stated)"),
    ("bss_vs_0_25", "Skill vs 50 %"), ("bss_vs_market", "Skill vs market"), ("crowd_proxy", "Crowd proxy"),
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


def _f(v: Any) -> float:
    try:
        return NAN if v is None or pd.isna(v) else float(v)
    except (TypeError, ValueError):
        return NAN


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
        agents = conn.execute(_in(select(AgentRow.id, AgentRow.cohort_id, AgentRow.name, AgentRow.kind,
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
        for aid, t, v in conn.execute(_in(sq, PortfolioSnapshotRow.cohort_id,
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
            brier=_f(m.get("brier")), brier_band=str(m.get("brier_band", "n/a")),
            brier_kelly=_f(m.get("brier_kelly")), brier_stated=_f(m.get("brier_stated")),
            bss_vs_0_25=_f(m.get("bss_vs_0_25")), bss_vs_market=_f(m.get("bss_vs_market")),
            crowd_proxy=_f(m.get("crowd_proxy")), win_rate=_f(m.get("win_rate")),
            start_micros=start, cash_micros=c, positions_value_micros=pv[aid], total_value_micros=total,
            pnl_micros=total - start, return_pct=_f(m.get("return_pct")),
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


# --- the headline boards (services.standings), reshaped for the pages ------------------------------------------

# Headline column → (header, registered metric): the header tooltips come from the metric registry.
_HEADLINE_COLUMNS = {
    "forecast_brier": ("Forecast Brier", "forecast_brier"),
    "brier_minus_market": ("Brier − market", "brier_minus_market"),
    "bss_vs_market": ("Skill vs market", "bss_vs_market"),
    "implied_brier": ("Bet-size Brier", "brier"),
    "bss_vs_0_25": ("Bet-size skill vs 50 %", "bss_vs_0_25"),
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
    v = _f(usd)
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
            rank_label=str(rec.get("rank_label") or ""), rank=_f(rec.get("rank")), tier=_f(rec.get("tier")),
            provisional=bool(rec.get("provisional")), n_cohorts=_f(rec.get("n_cohorts")),
            forecast_brier=_f(rec.get("forecast_brier")), forecast_brier_lo=_f(rec.get("forecast_brier_lo")),
            forecast_brier_hi=_f(rec.get("forecast_brier_hi")), n_forecasts=_f(rec.get("n_forecasts")),
            brier_minus_market=_f(rec.get("brier_minus_market")),
            brier_minus_market_lo=_f(rec.get("brier_minus_market_lo")),
            brier_minus_market_hi=_f(rec.get("brier_minus_market_hi")),
            bss_vs_market=_f(rec.get("bss_vs_market")), bss_vs_market_note=str(rec.get("bss_vs_market_note") or ""),
            implied_brier=_f(rec.get("implied_brier")),
            implied_brier_band=str(band) if isinstance(band, str) else "n/a",
            bss_vs_0_25=_f(rec.get("bss_vs_0_25")), kelly_brier=_f(rec.get("kelly_brier")),
            stated_brier=_f(rec.get("stated_brier")), n_bets=_f(rec.get("n_bets")),
            n_resolved_bets=_f(rec.get("n_resolved_bets")), pnl_micros=_micros(rec.get("pnl")),
            return_pct=_f(rec.get("return_pct")), win_rate=_f(rec.get("win_rate")),
            crowd_proxy=_f(rec.get("crowd_proxy")), coherence_gap=_f(rec.get("coherence_gap")),
            contradicting_bets=_f(rec.get("contradicting_bets")),
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


# --- shared loaders --------------------------------------------------------------------------------------------

def _in(q: Any, column: Any, keys: Sequence[Any] | None) -> Any:
    return q if keys is None else q.where(column.in_(list(keys)))


def _cohort_infos(conn: Connection, ids: Sequence[int] | None = None) -> dict[int, CohortInfo]:
    n_agents = (select(AgentRow.cohort_id, func.count().label("n")).group_by(AgentRow.cohort_id).subquery())
    q = (select(CohortRow.id, CohortRow.name, CohortRow.period_start, CohortRow.status,
                CohortRow.starting_cash_micros, CohortRow.created_at, CohortRow.completed_at, n_agents.c.n)
         .outerjoin(n_agents, n_agents.c.cohort_id == CohortRow.id).order_by(CohortRow.period_start, CohortRow.id))
    out = {}
    for cid, name, start, status, cash, created, completed, n in conn.execute(_in(q, CohortRow.id, ids)).all():
        out[cid] = CohortInfo(cid, name, utc(start), status, int(cash), utc(created),
                              utc(completed) if completed else None, int(n or 0), page_path("cohort", name))
    return out


def site_market_ids(conn: Connection, among: Iterable[str] | None = None) -> set[str]:
    """The markets that get a page: those the arena touched (traded or forecast by some agent) — of `among`
    only, when given (one page's worth of ids)."""
    fq, oq = select(FillRow.market_id).distinct(), select(ForecastRow.market_id).distinct()
    if among is not None:
        ids = sorted(set(among))
        if not ids:
            return set()
        fq = fq.where(FillRow.market_id.in_(ids))  # type: ignore[attr-defined]
        oq = oq.where(ForecastRow.market_id.in_(ids))  # type: ignore[attr-defined]
    return {r[0] for r in conn.execute(union(fq, oq)).all()}


def _questions(conn: Connection, ids: Iterable[str] | None) -> dict[str, str]:
    q = select(MarketRow.id, MarketRow.question)
    if ids is not None:
        ids = sorted(set(ids))
        if not ids:
            return {}
        q = q.where(MarketRow.id.in_(ids))  # type: ignore[attr-defined]
    return dict(conn.execute(q).all())


@dataclass(frozen=True)
class MarketRef:
    """A market as other pages mention it: its id, its question (untrusted text) and whether it has a page."""

    id: str
    question: str
    href: str  # site-relative path of its page, "" when it has none

    @property
    def label(self) -> str:
        return self.question or self.id


class _Refs:
    """MarketRef by id, made once per market however many rows mention it."""

    def __init__(self, questions: Mapping[str, str], pages: set[str]) -> None:
        self.questions, self.pages = questions, pages
        self.cache: dict[str, MarketRef] = {}

    def __call__(self, market_id: Any) -> MarketRef:
        mid = str(market_id) if market_id is not None else ""
        ref = self.cache.get(mid)
        if ref is None:
            linked = mid in self.pages and mid in self.questions
            ref = self.cache[mid] = MarketRef(mid, self.questions.get(mid, ""),
                                              page_path("market", mid) if linked else "")
        return ref


# --- index -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AgentLink:
    agent_id: int
    cohort: str
    href: str


@dataclass(frozen=True)
class OverallRow:
    rank: int
    model: str
    cohorts: int
    n_resolved: int
    brier: float
    brier_band: str
    mean_return_pct: float
    total_pnl_micros: int
    provisional: bool
    agents: tuple[AgentLink, ...]


@dataclass(frozen=True)
class CohortSummary:
    cohort: CohortInfo
    n_bets: int
    n_resolved: int
    pnl_micros: int  # the cohort's agents together
    leader: BoardRow | None  # first agent (not a reference row) on the cohort's headline board


@dataclass(frozen=True)
class IndexPage:
    as_of: datetime
    headline: Headline  # per model across cohorts (services.standings), references included
    links: Mapping[str, tuple[AgentLink, ...]]  # model → its agents' pages, one per cohort
    overall: tuple[OverallRow, ...]
    cohorts: tuple[CohortSummary, ...]
    columns: Mapping[str, ColumnHelp]
    provisional_min: int
    n_agents: int
    n_markets: int
    n_fills: int
    chart: Chart | None = None  # the headline per model with its interval, references marked
    cost_chart: Chart | None = None  # cost vs skill, when some model's calls reported a cost


def _num3(v: float) -> str:
    return f"{v:.3f}" if math.isfinite(_f(v)) else "—"


def cost_skill_chart(points: Sequence[tuple[str, int, float]]) -> Chart | None:
    """Cost vs skill: one marker per model at (its models' calls' total cost in USD, its forecast Brier); None
    when no model has a reported cost (baselines and stand-ins cost nothing)."""
    pts = [(name, micros / MICRO, brier) for name, micros, brier in points
           if micros is not None and micros > 0 and math.isfinite(_f(brier))]
    if not pts:
        return None
    left, right, top, bottom = _PAD_L, _W - _PAD_R - 120, _PAD_T + 6, _H - _PAD_B
    x1 = max(c for _, c, _ in pts) * 1.1
    y0, y1 = 0.0, max(0.3, max(b for _, _, b in pts) * 1.1)

    def x(v: float) -> float:
        return round(left + v / x1 * (right - left), 1)

    def y(v: float) -> float:
        return round(bottom - (v - y0) / (y1 - y0) * (bottom - top), 1)

    markers = tuple(Marker(x(c), y(b), _marker_path(x(c), y(b), "dot"), "model",
                           f"{name}: {money(int(round(c * MICRO)))}, forecast Brier {b:.3f}") for name, c, b in pts)
    labels = tuple(Rule(x(c), y(b), x(c), y(b), name, "count", x(c) + 9, y(b) + 4, "start") for name, c, b in pts)
    x_ticks = tuple(Tick(x(x1 * k / 4), money(int(round(x1 * k / 4 * MICRO))), "start" if k == 0 else "middle")
                    for k in range(5))
    y_ticks = tuple(Tick(y(v), f"{v:.2f}") for v in (0.0, y1 / 4, y1 / 2, 3 * y1 / 4, y1))
    return Chart("Cost vs skill: total cost of a model's calls against its forecast Brier (lower is better)", _W, _H,
                 left, top, right, bottom, (), markers, labels, x_ticks, y_ticks, False, False)


def headline_chart(h: Headline) -> Chart:
    """The overall headline board as a chart: one row per model (best first), its score and 95 % interval; the
    reference rows drawn apart."""
    rows = [IntervalRow(r.name + (" (ref.)" if r.is_reference and not r.name.endswith("(reference)") else ""),
                        r.forecast_brier, r.forecast_brier_lo, r.forecast_brier_hi,
                        "reference" if r.is_reference else "model",
                        f"{r.name}: {_num3(r.forecast_brier)} [{_num3(r.forecast_brier_lo)}, "
                        f"{_num3(r.forecast_brier_hi)}], rank {r.rank_label or '—'}")
            for r in h.rows]
    return interval_chart(f"{h.rank_label} per model with its 95 % interval", rows)


def index_context(engine: Engine, as_of: datetime, standings: Standings | None = None) -> IndexPage:
    st = standings if standings is not None and standings.overall is not None else \
        load_standings(engine, as_of, None, with_overall=True)
    with engine.connect() as conn:
        infos = _cohort_infos(conn)
        n_markets = len(site_market_ids(conn))
        n_fills = int(conn.execute(select(func.count()).select_from(FillRow)).scalar_one())
    links: dict[str, list[AgentLink]] = defaultdict(list)
    pnl: dict[str, int] = defaultdict(int)
    for cid in infos:
        for r in st.by_cohort.get(cid, ()):
            links[r.agent].append(AgentLink(r.agent_id, r.cohort, r.href))
            pnl[r.agent] += r.pnl_micros
    overall = []
    board = st.overall if st.overall is not None else pd.DataFrame()
    for i, rec in enumerate(board.to_dict("records") if len(board) else []):
        n_resolved = int(0 if pd.isna(rec.get("n_resolved")) else rec["n_resolved"])
        brier = _f(rec.get("brier"))
        overall.append(OverallRow(
            rank=i + 1, model=str(rec["agent"]), cohorts=int(rec["cohorts"]), n_resolved=n_resolved, brier=brier,
            brier_band=str(brier_band(brier)), mean_return_pct=_f(rec.get("mean_return_pct")),
            total_pnl_micros=pnl[str(rec["agent"])], provisional=n_resolved < PROVISIONAL_MIN_RESOLVED,
            agents=tuple(links[str(rec["agent"])]),
        ))
    summaries = []
    boards_by_name = {b.name: b for b in (st.boards.cohorts if st.boards is not None else [])}
    for cid, info in sorted(infos.items(), key=lambda kv: (kv[1].period_start, kv[0]), reverse=True):
        rows = st.by_cohort.get(cid, ())
        hrefs = {r.agent: r.href for r in rows}
        board = boards_by_name.get(info.name)
        leader = next((r for r in board_rows(board.rows if board is not None else None, hrefs)
                       if not r.is_reference and r.rank_label), None)
        summaries.append(CohortSummary(info, sum(r.n_bets for r in rows), sum(r.n_resolved for r in rows),
                                       sum(r.pnl_micros for r in rows), leader))
    boards = st.boards if st.boards is not None else Boards(as_of, DEFAULT_RANK_BY)
    model_links = {str(m): page_path("model", m) for m, k in zip(boards.overall.get("model", ()),
                                                                  boards.overall.get("kind", ())) if k != "reference"}
    head = headline(boards.overall, boards.rank_by, model_links)
    from arena.web.model_page import model_costs  # (that module builds on this one)

    costs = model_costs(engine, None)
    cost_chart = cost_skill_chart([(r.name, costs[r.name].cost_micros, r.forecast_brier) for r in head.rows
                                   if not r.is_reference and r.name in costs])
    return IndexPage(as_of, head, {k: tuple(v) for k, v in links.items()},
                     tuple(overall), tuple(summaries), column_help(),
                     PROVISIONAL_MIN_RESOLVED, len(st.rows), n_markets, n_fills,
                     headline_chart(head) if boards.rank_by == "forecast_brier" else None, cost_chart)


# --- cohort ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CohortPage:
    as_of: datetime
    cohort: CohortInfo
    headline: Headline  # the cohort's headline board (services.standings), references included
    rows: tuple[AgentScore, ...]
    columns: Mapping[str, ColumnHelp]
    rules: tuple[tuple[str, str], ...]
    lineup: tuple[tuple[str, str, str], ...]  # name, kind, model id
    decisions: tuple[tuple[str, int], ...]  # status → count
    equity: Chart
    provisional_min: int
    skill_luck: tuple[tuple[str, str, SkillLuck], ...] = ()  # agent, its page, its P/L split (agents with bets)
    ablations: tuple[AblationRow, ...] = ()  # the cohort's variant_of pairs (same numbers as its statistics page)
    statistics_href: str = ""
    markets: tuple[Any, ...] = ()  # web.market_index.MarketListRow: its forecast set, then what its agents traded


@dataclass(frozen=True)
class AblationRow:
    """One ablation pair of a cohort: variant − base forecast Brier over the shared questions (< 0: the variant
    forecasts better), its paired-bootstrap interval and p, and the date its confidence sequence first excluded 0."""

    base: str
    variant: str
    factor: str
    n: int
    estimate: float
    lo: float
    hi: float
    p_value: float
    first_date: str | None


def cohort_ablations(engine: Engine, as_of: datetime, names: Sequence[str] | None = None
                     ) -> dict[str, tuple[AblationRow, ...]]:
    """cohort → its ablation pairs compared (`services.ablation.compare` with the statistics page's draws and seed,
    so both pages show the same numbers)."""
    from arena.services.ablation import ablation_pairs_by_cohort, compare
    from arena.services.statistics import DEFAULT_DRAWS

    out = {}
    for cohort, pairs in ablation_pairs_by_cohort(engine).items():
        if names is not None and cohort not in names:
            continue
        rows = []
        for base, variant, factor in pairs:
            c = compare(engine, base, variant, as_of, [cohort], n_boot=DEFAULT_DRAWS, seed=0)
            d = c.differences["forecast_brier"]
            rows.append(AblationRow(base, variant, factor, int(d.n), d.estimate, d.lo, d.hi, d.p_value,
                                    c.sequence.get("first_date")))
        out[cohort] = tuple(rows)
    return out


def _flat(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return str(value)


def cohort_contexts(engine: Engine, as_of: datetime, names: Sequence[str] | None = None,
                    standings: Standings | None = None,
                    luck: Mapping[tuple[str, str], SkillLuck] | None = None) -> dict[str, CohortPage]:
    """Cohort pages by cohort name (None: every cohort); `luck` as in `agent_contexts`."""
    with engine.connect() as conn:
        q = select(CohortRow.id, CohortRow.name, CohortRow.rules, CohortRow.lineup)
        rows = conn.execute(_in(q, CohortRow.name, names)).all()
        ids = [r[0] for r in rows]
        if not ids:
            return {}
        infos = _cohort_infos(conn, None if names is None else ids)
        dq = (select(DecisionRow.cohort_id, DecisionRow.status, func.count())
              .group_by(DecisionRow.cohort_id, DecisionRow.status))
        decisions: dict[int, list[tuple[str, int]]] = defaultdict(list)
        for cid, status, n in conn.execute(_in(dq, DecisionRow.cohort_id, None if names is None else ids)).all():
            decisions[cid].append((status, int(n)))
    st = standings or load_standings(engine, as_of, None if names is None else ids)
    if luck is None:
        luck = skill_luck(engine, as_of, None if names is None else [r[1] for r in rows])
    ablations = cohort_ablations(engine, as_of, None if names is None else [r[1] for r in rows])
    from arena.web.market_index import cohort_markets  # (that module reads this one's shared loaders)

    markets = cohort_markets(engine, None if names is None else ids)
    out = {}
    for cid, name, rules, lineup in rows:
        info = infos[cid]
        board = st.by_cohort.get(cid, ())
        chart = equity_chart("Total value of each agent", [(r.agent, st.curves.get(r.agent_id, ())) for r in board],
                             info.starting_cash_micros)
        boards = st.boards if st.boards is not None else Boards(as_of, DEFAULT_RANK_BY)
        hb = next((b for b in boards.cohorts if b.name == name), None)
        out[name] = CohortPage(
            as_of=as_of, cohort=info,
            headline=headline(hb.rows if hb is not None else None, boards.rank_by, {r.agent: r.href for r in board}),
            rows=board, columns=column_help(),
            rules=tuple((str(k), _flat(v)) for k, v in sorted((rules or {}).items())),
            lineup=tuple((str(e.get("name", "")), str(e.get("kind", "")), str(e.get("model_id", "")))
                         for e in (lineup or []) if isinstance(e, dict)),
            decisions=tuple(sorted(decisions.get(cid, []))), equity=chart, provisional_min=PROVISIONAL_MIN_RESOLVED,
            skill_luck=tuple((r.agent, r.href, luck[(name, r.agent)]) for r in board if (name, r.agent) in luck),
            ablations=ablations.get(name, ()), statistics_href=page_path("statistics", name),
            markets=markets.get(cid, ()),
        )
    return out


# --- agent -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AgentInfo:
    id: int
    name: str
    kind: str
    model_id: str
    config: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class OpenPosition:
    market: MarketRef
    outcome: str
    shares: int
    cost_micros: int
    price_ppm: int | None
    value_micros: int
    unrealized_micros: int
    priced: bool


@dataclass(frozen=True)
class ClosedPosition:
    market: MarketRef
    outcome: str
    bought_micros: int  # Σ stakes of its BUY fills
    returned_micros: int  # Σ cash of its SELL / SETTLE / REFUND / REVERSAL fills
    realized_micros: int  # returned − bought: the fold of the position's cash deltas
    closed_by: str  # kind of its last fill
    closed_at: datetime


@dataclass(frozen=True)
class FillView:
    id: int
    at: datetime
    kind: str
    market: MarketRef
    outcome: str
    shares: int
    price_ppm: int | None
    cash_micros: int
    cost_micros: int
    decision_id: int | None


@dataclass(frozen=True)
class ActionView:
    index: int
    type: str
    market: MarketRef
    outcome: str
    amount_micros: int | None
    amount_text: str  # as the agent gave it, when it is not a valid amount
    fraction: str
    stated_probability: float
    implied_confidence: float  # amount / max bet, clipped to [0, 1] (seed 001); NaN for sells
    rationale: str
    rejected: bool


@dataclass(frozen=True)
class RejectionView:
    action_index: int
    reason: str
    message: str
    at: datetime


@dataclass(frozen=True)
class CallView:
    attempt: int
    at: datetime
    served_model: str
    prompt_version: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_micros: int | None
    latency_s: float
    error: str
    prompt: str
    raw_response: str
    parsed: str  # the parsed decision as indented JSON, "" when parsing failed


@dataclass(frozen=True)
class DecisionView:
    id: int
    round_key: str
    status: str
    as_of: datetime
    completed_at: datetime | None
    cash_at_start_micros: int | None
    max_bet_micros: int | None
    sizing_version: str
    actions: tuple[ActionView, ...]
    reasoning: str
    error: str
    rejections: tuple[RejectionView, ...]
    calls: tuple[CallView, ...]
    n_forecasts: int  # stated forecasts of the round's forecast set (shown on the market pages)
    n_fills: int


@dataclass(frozen=True)
class SkillLuck:
    """An agent's P/L split into the edge it claimed and what its own beliefs call luck (`scoring.decomposition`;
    micro-USD, exact): pnl = expected_pnl + belief_gap + move_without_belief + resolution_residual. Slippage is
    already inside the parts (a view, not an addend)."""

    n_bets: int
    n_without_belief: int
    pnl: int
    expected_pnl: int
    belief_gap: int
    move_without_belief: int
    resolution_residual: int
    slippage_cost: int

    @property
    def luck(self) -> int:
        """belief_gap + resolution_residual = shares x (outcome - stated belief): zero on average if the beliefs
        were right."""
        return self.belief_gap + self.resolution_residual


SKILL_LUCK_FIELDS = ("n_bets", "n_without_belief", "pnl", "expected_pnl", "belief_gap", "move_without_belief",
                     "resolution_residual", "slippage_cost")


def skill_luck(engine: Engine, as_of: datetime, cohort_names: Sequence[str] | None = None
               ) -> dict[tuple[str, str], SkillLuck]:
    """(cohort, agent) → its `SkillLuck`, from `services.decomposition` (None: every cohort)."""
    agents = decomposition(engine, as_of, list(cohort_names) if cohort_names else None).agents
    out = {}
    for row in agents.itertuples(index=False):
        r = row._asdict()
        out[(str(r["cohort"]), str(r["agent"]))] = SkillLuck(
            **{f: int(r[f]) if not pd.isna(r[f]) else 0 for f in SKILL_LUCK_FIELDS})
    return out


@dataclass(frozen=True)
class AgentPage:
    as_of: datetime
    agent: AgentInfo
    cohort: CohortInfo
    score: AgentScore
    headline: BoardRow | None  # the agent's row of its cohort's headline board (None when not computed)
    equity: Chart
    open_positions: tuple[OpenPosition, ...]
    closed_positions: tuple[ClosedPosition, ...]
    fills: tuple[FillView, ...]
    decisions: tuple[DecisionView, ...]
    provisional_min: int
    skill_luck: SkillLuck | None = None  # None: no bet yet


def _amount_micros(text: Any) -> int | None:
    """A stake as the decision recorded it (a decimal string of USD) in micro-USD; None if it is not one."""
    if type(text) is str and text.isdigit():
        return int(text) * MICRO  # whole dollars: the common case, without Decimal
    try:
        d = Decimal(str(text))
    except (InvalidOperation, ValueError):
        return None
    if not d.is_finite():
        return None
    return int((d * MICRO).to_integral_value())


def _action(index: int, a: Any, max_bet: int | None, refs: _Refs, rejected: set[int]) -> ActionView:
    a = a if isinstance(a, dict) else {"type": "?", "rationale": _flat(a)}
    typ = str(a.get("type", ""))
    amount = _amount_micros(a.get("amount")) if a.get("amount") is not None else None
    conf = NAN
    if typ == "BET" and amount is not None and max_bet:
        conf = min(1.0, max(0.0, amount / max_bet))
    return ActionView(
        index=index, type=typ, market=refs(a.get("market_id")), outcome=str(a.get("outcome", "")),
        amount_micros=amount, amount_text="" if amount is not None else _flat(a.get("amount", "")),
        fraction=_flat(a.get("fraction", "")), stated_probability=_f(a.get("stated_probability")),
        implied_confidence=conf, rationale=_flat(a.get("rationale", "")), rejected=index in rejected,
    )


def agent_contexts(engine: Engine, as_of: datetime, agent_ids: Sequence[int] | None = None,
                   standings: Standings | None = None,
                   luck: Mapping[tuple[str, str], SkillLuck] | None = None) -> dict[int, AgentPage]:
    """Agent pages by agent id (None: every agent), from one query per table (`luck`: the `skill_luck` of their
    cohorts when the caller already has it)."""
    with engine.connect() as conn:
        aq = select(AgentRow.id, AgentRow.cohort_id, AgentRow.name, AgentRow.kind, AgentRow.model_id,
                    AgentRow.config)
        agents = conn.execute(_in(aq, AgentRow.id, agent_ids)).all()
        if not agents:
            return {}
        cohort_ids = sorted({a[1] for a in agents})
        infos = _cohort_infos(conn, None if agent_ids is None else cohort_ids)
        ids = None if agent_ids is None else [a[0] for a in agents]

        fq = select(FillRow.id, FillRow.agent_id, FillRow.at, FillRow.kind, FillRow.market_id, FillRow.outcome,
                    FillRow.shares, FillRow.price_ppm, FillRow.cash_micros, FillRow.cost_micros,
                    FillRow.decision_id).order_by(FillRow.id)
        fills = conn.execute(_in(fq, FillRow.agent_id, ids)).all()
        dq = select(DecisionRow.id, DecisionRow.agent_id, DecisionRow.round_key, DecisionRow.status,
                    DecisionRow.as_of, DecisionRow.completed_at, DecisionRow.cash_at_start_micros,
                    DecisionRow.max_bet_micros, DecisionRow.sizing_version, DecisionRow.actions,
                    DecisionRow.reasoning, DecisionRow.error).order_by(DecisionRow.as_of, DecisionRow.id)
        decisions = conn.execute(_in(dq, DecisionRow.agent_id, ids)).all()
        rq = (select(RejectionRow.decision_id, RejectionRow.action_index, RejectionRow.reason, RejectionRow.message,
                     RejectionRow.at).join(DecisionRow, DecisionRow.id == RejectionRow.decision_id)
              .order_by(RejectionRow.id))
        rejections = conn.execute(_in(rq, DecisionRow.agent_id, ids)).all()
        cq = (select(ModelCallRow.decision_id, ModelCallRow.attempt, ModelCallRow.at, ModelCallRow.served_model,
                     ModelCallRow.prompt_version, ModelCallRow.prompt_tokens, ModelCallRow.completion_tokens,
                     ModelCallRow.cost_micros, ModelCallRow.latency_s, ModelCallRow.error, ModelCallRow.prompt,
                     ModelCallRow.raw_response, ModelCallRow.parsed)
              .join(DecisionRow, DecisionRow.id == ModelCallRow.decision_id)
              .order_by(ModelCallRow.decision_id, ModelCallRow.attempt))
        calls = conn.execute(_in(cq, DecisionRow.agent_id, ids)).all()
        oq = (select(ForecastRow.decision_id, func.count()).where(ForecastRow.source == "forecast_set",
                                                                  ForecastRow.replicate == 1)
              .group_by(ForecastRow.decision_id))
        n_forecasts = dict(conn.execute(_in(oq, ForecastRow.agent_id, ids)).all())

        mentioned: set[str] | None = None
        if ids is not None:
            mentioned = {f[4] for f in fills}
            for d in decisions:
                mentioned |= {str(a.get("market_id")) for a in (d[9] or []) if isinstance(a, dict)}
        refs = _Refs(_questions(conn, mentioned), site_market_ids(conn, mentioned))

    st = standings or load_standings(engine, as_of, None if agent_ids is None else cohort_ids)
    head: dict[tuple[str, str], BoardRow] = {}
    for b in (st.boards.cohorts if st.boards is not None else []):
        for r in board_rows(b.rows):
            head[(b.name, r.name)] = r

    by_agent_fills: dict[int, list[Any]] = defaultdict(list)
    for f in fills:
        by_agent_fills[f[1]].append(f)
    rej_by_decision: dict[int, list[RejectionView]] = defaultdict(list)
    for did, idx, reason, message, at in rejections:
        rej_by_decision[did].append(RejectionView(int(idx), reason, message, utc(at)))
    calls_by_decision: dict[int, list[CallView]] = defaultdict(list)
    for (did, attempt, at, served, pver, ptok, ctok, cost, lat, err, prompt, raw, parsed) in calls:
        calls_by_decision[did].append(CallView(
            int(attempt), utc(at), served, pver, ptok, ctok, cost, _f(lat), err, prompt, raw,
            json.dumps(parsed, indent=2, sort_keys=True, ensure_ascii=False) if parsed is not None else ""))
    fills_by_decision = Counter(f[10] for f in fills if f[10] is not None)
    dec_by_agent: dict[int, list[DecisionView]] = defaultdict(list)
    for (did, aid, round_key, status, d_as_of, completed, cash0, maxbet, sver, actions, reasoning, error) in decisions:
        rejected = {r.action_index for r in rej_by_decision.get(did, [])}
        dec_by_agent[aid].append(DecisionView(
            id=did, round_key=round_key, status=status, as_of=utc(d_as_of),
            completed_at=utc(completed) if completed else None, cash_at_start_micros=cash0, max_bet_micros=maxbet,
            sizing_version=sver,
            actions=tuple(_action(i, a, maxbet, refs, rejected) for i, a in enumerate(actions or [])),
            reasoning=reasoning, error=error, rejections=tuple(rej_by_decision.get(did, ())),
            calls=tuple(calls_by_decision.get(did, ())), n_forecasts=int(n_forecasts.get(did, 0)),
            n_fills=fills_by_decision.get(did, 0),
        ))

    if luck is None:
        luck = skill_luck(engine, as_of, None if agent_ids is None else [infos[c].name for c in cohort_ids])
    out = {}
    for aid, cid, name, kind, model_id, config in agents:
        info = infos[cid]
        score = st.rows[aid]
        opens = tuple(
            OpenPosition(refs(p["market_id"]), str(p["outcome"]), int(p["shares"]), int(p["cost"]),
                         int(p["price_ppm"]) if bool(p["priced"]) else None, int(p["value"]),
                         int(p["value"]) - int(p["cost"]), bool(p["priced"]))
            for p in sorted(st.positions.get(aid, ()), key=lambda p: (str(p["market_id"]), str(p["outcome"]))))
        out[aid] = AgentPage(
            as_of=as_of,
            agent=AgentInfo(aid, name, kind, model_id,
                            tuple((str(k), _flat(v)) for k, v in sorted((config or {}).items()))),
            cohort=info, score=score, headline=head.get((info.name, name)),
            equity=equity_chart("Total value (cash + marked positions)", [(name, st.curves.get(aid, ()))],
                                info.starting_cash_micros),
            open_positions=opens, closed_positions=_closed_positions(by_agent_fills.get(aid, []), refs),
            fills=tuple(FillView(f[0], f[2], f[3], refs(f[4]), f[5], f[6], f[7], f[8], f[9], f[10])
                        for f in by_agent_fills.get(aid, [])),
            decisions=tuple(reversed(dec_by_agent.get(aid, []))), provisional_min=PROVISIONAL_MIN_RESOLVED,
            skill_luck=luck.get((info.name, name)),
        )
    return out


def _closed_positions(fills: Sequence[Any], refs: _Refs) -> tuple[ClosedPosition, ...]:
    """Positions whose shares folded back to zero: what went in, what came out, and the realized P/L."""
    acc: dict[tuple[str, str], list[Any]] = {}  # shares, staked, returned, realized, last kind, last at
    for f in fills:
        a = acc.get((f[4], f[5]))
        if a is None:
            a = acc[(f[4], f[5])] = [0, 0, 0, 0, "", None]
        a[0] += f[6]
        if f[3] == "buy":
            a[1] += f[9]
        else:
            a[2] += f[8]
        a[3] += f[8]
        a[4], a[5] = f[3], f[2]
    out = [ClosedPosition(refs(mid), outcome, int(a[1]), int(a[2]), int(a[3]), a[4], a[5])
           for (mid, outcome), a in acc.items() if a[0] == 0]
    out.sort(key=lambda c: (_epoch(c.closed_at), c.market.id, c.outcome))
    return tuple(out)


# --- market ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MarketInfo:
    id: str
    venue: str
    question: str
    description: str
    kind: str
    status: str
    outcomes: tuple[tuple[str, str], ...]  # outcome, label
    close_time: datetime | None
    url: str  # only an http(s) address, else "" (a venue's URL is untrusted)
    category: str


@dataclass(frozen=True)
class ResolutionView:
    version: int
    kind: str
    payouts: tuple[tuple[str, int], ...]  # outcome, payout ppm
    resolved_at: datetime | None
    recorded_at: datetime
    source: str


@dataclass(frozen=True)
class TradeView:
    at: datetime
    agent_id: int
    agent: str
    cohort: str
    agent_href: str
    cohort_href: str
    kind: str
    outcome: str
    shares: int
    price_ppm: int | None
    cash_micros: int


@dataclass(frozen=True)
class MarketPage:
    as_of: datetime
    market: MarketInfo
    latest: tuple[tuple[str, int, datetime], ...]  # outcome, price ppm, observed at
    resolutions: tuple[ResolutionView, ...]
    chart: Chart
    trades: tuple[TradeView, ...]
    n_forecasts: int
    mean_forecast: float  # mean stated P(YES) of every agent forecast on this market, NaN if none


def _safe_url(url: str) -> str:
    u = (url or "").strip()
    return u if u.lower().startswith(("https://", "http://")) and not any(c in u for c in "\"'<> \n\t") else ""


def market_contexts(engine: Engine, as_of: datetime, market_ids: Sequence[str] | None = None) -> dict[str, MarketPage]:
    """Market pages by market id (None: every market the arena touched)."""
    with engine.connect() as conn:
        keys = sorted(site_market_ids(conn, market_ids))
        if not keys:
            return {}
        filt = None if market_ids is None else keys
        mq = select(MarketRow.id, MarketRow.venue, MarketRow.question, MarketRow.description, MarketRow.kind,
                    MarketRow.status, MarketRow.outcomes, MarketRow.outcome_labels, MarketRow.close_time,
                    MarketRow.url, MarketRow.category)
        wanted = set(keys)
        markets = [m for m in conn.execute(_in(mq, MarketRow.id, filt)).all() if m[0] in wanted]
        pq = (select(PriceSnapshotRow.market_id, PriceSnapshotRow.outcome, PriceSnapshotRow.observed_at,
                     PriceSnapshotRow.price_ppm)
              .where(PriceSnapshotRow.observed_at <= as_of, PriceSnapshotRow.fetched_at <= as_of)
              .order_by(PriceSnapshotRow.market_id, PriceSnapshotRow.observed_at, PriceSnapshotRow.id))
        prices = conn.execute(_in(pq, PriceSnapshotRow.market_id, filt)).all()
        tq = (select(FillRow.market_id, FillRow.at, FillRow.agent_id, AgentRow.name, CohortRow.name, FillRow.kind,
                     FillRow.outcome, FillRow.shares, FillRow.price_ppm, FillRow.cash_micros)
              .join(AgentRow, AgentRow.id == FillRow.agent_id).join(CohortRow, CohortRow.id == FillRow.cohort_id)
              .order_by(FillRow.at, FillRow.id))
        trades = conn.execute(_in(tq, FillRow.market_id, filt)).all()
        rq = (select(ResolutionRow.market_id, ResolutionRow.version, ResolutionRow.kind, ResolutionRow.payouts,
                     ResolutionRow.resolved_at, ResolutionRow.recorded_at, ResolutionRow.source)
              .order_by(ResolutionRow.market_id, ResolutionRow.version))
        resolutions = conn.execute(_in(rq, ResolutionRow.market_id, filt)).all()
        oq = (select(ForecastRow.market_id, func.count(), func.avg(ForecastRow.probability))
              .where(ForecastRow.replicate == 1).group_by(ForecastRow.market_id))
        fstats = {m: (int(n), _f(avg)) for m, n, avg in conn.execute(_in(oq, ForecastRow.market_id, filt)).all()}

    cohort_paths: dict[str, str] = {}

    def cohort_hrefs(name: str) -> str:
        if name not in cohort_paths:
            cohort_paths[name] = page_path("cohort", name)
        return cohort_paths[name]

    price_by: dict[str, dict[str, list[tuple[datetime, int]]]] = defaultdict(lambda: defaultdict(list))
    for mid, outcome, t, p in prices:
        price_by[mid][outcome].append((t, int(p)))
    trades_by: dict[str, list[Any]] = defaultdict(list)
    for t in trades:
        trades_by[t[0]].append(t)
    res_by: dict[str, list[ResolutionView]] = defaultdict(list)
    for mid, version, kind, payouts, resolved_at, recorded_at, source in resolutions:
        res_by[mid].append(ResolutionView(int(version), kind,
                                          tuple((str(k), int(v)) for k, v in sorted((payouts or {}).items())),
                                          utc(resolved_at) if resolved_at else None, utc(recorded_at), source))
    out = {}
    for mid, venue, question, description, kind, status, outcomes, labels, close_time, url, category in markets:
        outcomes = list(outcomes or [])
        labels = list(labels or [])
        series_by_outcome = price_by.get(mid, {})
        binary = kind == "binary"
        plotted = [YES] if binary else [o for o in outcomes if o in series_by_outcome]
        label_of = dict(zip(outcomes, labels))
        series = [(f"P({label_of.get(o, o)})" if binary else label_of.get(o, o), series_by_outcome.get(o, []))
                  for o in plotted]
        marks = []
        tviews = []
        for (_, at, aid, agent, cohort, fkind, outcome, sh, p, cash) in trades_by.get(mid, []):
            tviews.append(TradeView(at, aid, agent, cohort, page_path("agent", aid), cohort_hrefs(cohort), fkind,
                                    outcome, int(sh), p, int(cash)))
            if fkind in ("buy", "sell") and p is not None:
                on_line = MICRO - int(p) if binary and outcome == NO else int(p)  # the NO price on the YES line
                tip = f"{agent} ({cohort}): {fkind.upper()} {outcome} {money(abs(int(cash)))} at {int(p) / MICRO:g}"
                marks.append((at, on_line, "up" if fkind == "buy" else "down", tip,
                              "no" if outcome == NO else "yes"))
        res = res_by.get(mid, [])
        events = [(r.resolved_at or r.recorded_at, f"v{r.version}: {r.kind}") for r in res]
        latest = tuple((o, s[-1][1], utc(s[-1][0])) for o, s in sorted(series_by_outcome.items()) if s)
        n, mean = fstats.get(mid, (0, NAN))
        out[mid] = MarketPage(
            as_of=as_of,
            market=MarketInfo(mid, venue, question, description or "", kind, status,
                              tuple((o, label_of.get(o, o)) for o in outcomes),
                              utc(close_time) if close_time else None, _safe_url(url), category or ""),
            latest=latest, resolutions=tuple(res), chart=price_chart("Price history", series, marks, events),
            trades=tuple(tviews), n_forecasts=n, mean_forecast=mean,
        )
    return out


# --- methodology -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class VersionRow:
    name: str
    value: str
    where: str


@dataclass(frozen=True)
class MetricView:
    name: str
    direction: str
    unit: str
    description: str


@dataclass(frozen=True)
class WorkedExample:
    """A worked example of a metric's behaviour: the numbers come from the scoring library's own functions."""

    title: str
    setup: str
    rows: tuple[tuple[str, str], ...]  # quantity, value as printed
    moral: str


def _usd(x: float) -> str:
    return money(int(round(x * MICRO)), signed=x < 0)


def worked_examples() -> tuple[WorkedExample, ...]:
    """Seed 001's two pathologies and the reason BSS vs market is guarded, worked through with the real metric
    functions (`scoring.brier`, `scoring.coherence`) on small, fixed inputs."""
    from arena.scoring.brier import (bss_vs_market as bss_market, brier_score, brier_skill_score, forecast_yes,
                                     implied_confidence, kelly_probability, max_bet)
    from arena.scoring.coherence import contradicts

    cash = 10_000.0
    cap = float(max_bet(cash))
    # 1. a small YES bet reads as a confident NO: three $500 YES bets at a price of 0.50 from an agent that
    #    stated P(YES) = 0.30 (it believes NO), and all three resolve NO.
    amount, price, stated = 500.0, 0.5, 0.3
    c = float(implied_confidence(amount, cap))
    f = float(forecast_yes("YES", c))
    b1 = brier_score([f] * 3, [0.0] * 3)
    kelly = float(kelly_probability("YES", price, amount / cash))
    one = WorkedExample(
        "A small YES bet reads as a confident NO",
        f"Cash {_usd(cash)}, so the maximum bet is {_usd(cap)}. The agent states P(YES) = {stated:.2f} on a market "
        f"priced {price:.2f}, yet bets {_usd(amount)} on YES — three times; all three resolve NO.",
        (("implied confidence c = bet / max bet", f"{c:.2f}"),
         ("f_YES by bet size (a YES bet: f = c)", f"{f:.2f}"),
         ("implied-confidence Brier, mean of (0.2 − 0)²", f"{b1:.3f} — {brier_band(b1)}"),
         ("P/L", _usd(-3 * amount)),
         ("stated Brier (0.30 − 0)², the headline's input", f"{brier_score([stated] * 3, [0.0] * 3):.3f}"),
         ("Kelly-implied P(YES) = q + f(1 − q)", f"{kelly:.3f}"),
         ("Kelly-implied Brier", f"{brier_score([kelly] * 3, [0.0] * 3):.3f}"),
         ("coherence gap |stated − Kelly-implied|", f"{abs(stated - kelly):.3f}"),
         ("contradicting bets (YES bought above the stated P(YES))",
          f"{float(contradicts(['YES'] * 3, [stated] * 3, [price] * 3).mean()):.0%}")),
        "The bet-size Brier calls three losing bets Excellent: betting small on YES is read as a 20 % YES forecast. "
        "The headline scores what the agent said instead, and the coherence columns show its bets contradict it.")
    # 2. maximal bets on a near-certain market: perfect score, almost no money.
    q = 0.9995
    c2 = float(implied_confidence(cap, cap))
    b2 = brier_score([float(forecast_yes("YES", c2))], [1.0])
    profit = cap / q - cap
    two = WorkedExample(
        "Maximal bets on a near-certain market score Perfect",
        f"The agent stakes the maximum, {_usd(cap)}, on YES of a market priced {q} that resolves YES.",
        (("implied confidence c = bet / max bet", f"{c2:.2f}"),
         ("implied-confidence Brier (1 − 1)²", f"{b2:.3f} — {brier_band(b2)}"),
         ("P/L of the bet", f"{money(int(round(profit * MICRO)), signed=True)} (+{100 * profit / cap:.2f} % of the stake)"),
         ("the market's own Brier on it (0.9995 − 1)²", f"{(1 - q) ** 2:.2e}"),
         ("Kelly-implied P(YES)", f"{float(kelly_probability('YES', q, cap / cash)):.6f}")),
        "A perfect bet-size Brier for repeating the market's own certainty: it earns nothing and says nothing the "
        "market did not. On the forecast set such an agent is scored on the same questions as everyone else — and "
        "against the market reference row, which it cannot beat by copying.")
    # 3. why BSS vs market is guarded: a reference Brier near 0 makes the ratio explode.
    f3 = 0.966
    bs3 = brier_score([f3], [1.0])
    raw = float(brier_skill_score(bs3, (1 - q) ** 2))
    three = WorkedExample(
        "Why skill vs market is shown only when the market's Brier is large enough",
        f"One forecast of {f3} on the same market priced {q}, resolving YES.",
        (("the forecast's Brier (0.966 − 1)²", f"{bs3:.6f}"),
         ("the market's Brier (0.9995 − 1)²", f"{(1 - q) ** 2:.2e}"),
         ("1 − BS / BS_market, unguarded", f"{raw:,.0f}"),
         ("Brier − market Brier (bounded in [−1, 1])", f"{bs3 - (1 - q) ** 2:+.6f}"),
         ("skill vs market as shown",
          "—" if math.isnan(bss_market([f3], [q], [1.0])) else f"{bss_market([f3], [q], [1.0]):.2f}")),
        f"Dividing by a reference Brier near 0 turns a tiny difference into thousands. Skill vs market is shown only "
        f"where the market's Brier on the same questions is at least {BSS_MARKET_FLOOR} (so it lies in "
        f"[{1 - 1 / BSS_MARKET_FLOOR:.0f}, 1]); elsewhere it reads — with the reason on hover. Brier minus market is "
        "the comparison that cannot blow up, and it carries an interval.")
    return (one, two, three)


@dataclass(frozen=True)
class MethodologyPage:
    examples: tuple[WorkedExample, ...]
    provisional_rule: str
    bss_floor: float
    rank_choices: tuple[str, ...]
    versions: tuple[VersionRow, ...]
    seen: tuple[tuple[str, str, int], ...]  # what, version, rows stamped with it
    metrics: tuple[MetricView, ...]
    brier_bands: tuple[tuple[str, str], ...]
    return_bands: tuple[tuple[str, str], ...]
    default_rules: tuple[tuple[str, str], ...]
    provisional_min: int
    schema_revision: str


BRIER_BANDS = (("0", "Perfect"), ("(0, 0.10]", "Excellent"), ("(0.10, 0.20]", "Good"),
               ("(0.20, 0.25]", "Fair (at or near random)"), ("(0.25, 0.40]", "Poor"), ("> 0.40", "Very Poor"))
RETURN_BANDS = (("> +50 %", "Exceptional"), ("(+20 %, +50 %]", "Excellent"), ("(+5 %, +20 %]", "Good"),
                ("[−5 %, +5 %]", "Neutral"), ("[−20 %, −5 %)", "Poor"), ("< −20 %", "Very Poor"))


def _optional_version(candidates: Sequence[tuple[str, str]]) -> tuple[str, str]:
    for module, attr in candidates:
        try:
            value = getattr(importlib.import_module(module), attr)
        except Exception:  # noqa: BLE001 — an absent or broken optional module just means "not installed"
            continue
        return str(value), f"{module}.{attr}"
    return "not installed", ""


def methodology_context(engine: Engine) -> MethodologyPage:
    from arena.venues.simulated import SIMULATOR_VERSION

    prompt, where = _optional_version([("arena.agents.prompts", "PROMPT_VERSION"),
                                       ("arena.agents.llm", "PROMPT_VERSION")])
    versions = (
        VersionRow("sizing", SIZING_VERSION, "arena.domain.sizing.SIZING_VERSION"),
        VersionRow("scoring", SCORING_VERSION, "arena.services.score.SCORING_VERSION"),
        VersionRow("prompt", prompt, where),
        VersionRow("simulator", SIMULATOR_VERSION, "arena.venues.simulated.SIMULATOR_VERSION"),
    )
    with engine.connect() as conn:
        seen = [("sizing (decisions)", v or "—", int(n)) for v, n in conn.execute(
            select(DecisionRow.sizing_version, func.count()).group_by(DecisionRow.sizing_version)).all()]
        seen += [("prompt (model calls)", v or "—", int(n)) for v, n in conn.execute(
            select(ModelCallRow.prompt_version, func.count()).group_by(ModelCallRow.prompt_version)).all()]
        try:  # read directly: importing alembic to ask would cost more than the whole page
            revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar() or "none"
        except SQLAlchemyError:
            revision = "none"
    metrics = tuple(MetricView(m.name, m.direction, m.unit, m.description)
                    for m in sorted(METRICS.values(), key=lambda m: m.name))
    rules = CohortRules().to_json()
    return MethodologyPage(worked_examples(), PROVISIONAL_RULE, BSS_MARKET_FLOOR, tuple(RANK_METRICS),
                           versions, tuple(sorted(seen)), metrics, BRIER_BANDS, RETURN_BANDS,
                           tuple((k, _flat(v)) for k, v in rules.items()), PROVISIONAL_MIN_RESOLVED,
                           str(revision))


# --- operations ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SyncRunView:
    id: int
    venue: str
    started_at: datetime
    finished_at: datetime | None
    status: str
    ok: int
    skipped: int
    failed: int
    markets_changed: int
    snapshots_added: int
    resolutions_recorded: int
    error: str


@dataclass(frozen=True)
class SyncErrorView:
    sync_run_id: int
    venue: str
    native_id: str
    kind: str
    field: str
    message: str
    payload_excerpt: str
    at: datetime


@dataclass(frozen=True)
class JobSummary:
    job: str
    runs: int
    ok: int
    failed: int
    running: int
    last_period: str
    last_started: datetime | None


@dataclass(frozen=True)
class JobRunView:
    job: str
    period_key: str
    status: str
    attempts: int
    started_at: datetime
    finished_at: datetime | None
    seconds: float  # finished − started, NaN while running
    counts: str
    error: str
    runner: str


@dataclass(frozen=True)
class DecisionIssue:
    decision_id: int
    agent_id: int
    agent: str
    cohort: str
    agent_href: str
    cohort_href: str
    round_key: str
    status: str
    error: str


@dataclass(frozen=True)
class FailingAgent:
    """An agent whose latest decision in a cohort failed: how many of its decisions failed, the last error."""

    name: str
    failed: int
    last_round: str
    error: str


@dataclass(frozen=True)
class CohortOps:
    """A cohort as operations see it: how many markets it could trade when it opened (the universe: open
    markets with a price from the 3 days before) and now, and which agents' decisions are failing."""

    name: str
    href: str
    status: str
    period_start: datetime
    universe_at_open: int
    universe_now: int
    rounds: int
    failing: tuple[FailingAgent, ...]


@dataclass(frozen=True)
class OperationsPage:
    as_of: datetime
    backend: str
    tables: tuple[tuple[str, int], ...]
    sync_runs: tuple[SyncRunView, ...]
    sync_errors: tuple[SyncErrorView, ...]
    jobs: tuple[JobSummary, ...]
    job_runs: tuple[JobRunView, ...]
    decision_statuses: tuple[tuple[str, int], ...]
    issues: tuple[DecisionIssue, ...]
    limit: int
    cohorts: tuple[CohortOps, ...] = ()


_COUNTED = (("markets", MarketRow), ("price_snapshots", PriceSnapshotRow), ("cohorts", CohortRow),
            ("agents", AgentRow), ("decisions", DecisionRow), ("fills", FillRow), ("rejections", RejectionRow),
            ("forecasts", ForecastRow), ("resolutions", ResolutionRow), ("portfolio_snapshots", PortfolioSnapshotRow),
            ("model_calls", ModelCallRow), ("sync_runs", SyncRunRow), ("job_runs", JobRunRow))


def operations_context(engine: Engine, as_of: datetime, limit: int = OPERATIONS_LIMIT) -> OperationsPage:
    """What the jobs did: row counts, venue syncs and their errors, scheduled job runs, decisions that failed."""
    sync_q = select(SyncRunRow).order_by(desc(SyncRunRow.started_at), desc(SyncRunRow.id))  # newest first
    error_q = select(SyncErrorRow).order_by(desc(SyncErrorRow.id))
    job_q = select(JobRunRow).order_by(desc(JobRunRow.started_at), desc(JobRunRow.id))
    jobs_q = (select(JobRunRow.job, func.count(),
                     func.sum(case((JobRunRow.status == "ok", 1), else_=0)),
                     func.sum(case((JobRunRow.status == "failed", 1), else_=0)),
                     func.sum(case((JobRunRow.status == "running", 1), else_=0)),
                     func.max(JobRunRow.period_key), func.max(JobRunRow.started_at))
              .group_by(JobRunRow.job).order_by(JobRunRow.job))
    status_q = select(DecisionRow.status, func.count()).group_by(DecisionRow.status).order_by(DecisionRow.status)
    failed = (DecisionRow.error != "") | DecisionRow.status.in_(["failed", "claimed"])  # type: ignore[attr-defined]
    issue_q = (select(DecisionRow.id, DecisionRow.agent_id, AgentRow.name, CohortRow.name, DecisionRow.round_key,
                      DecisionRow.status, DecisionRow.error)
               .join(AgentRow, AgentRow.id == DecisionRow.agent_id)
               .join(CohortRow, CohortRow.id == DecisionRow.cohort_id)
               .where(failed).order_by(desc(DecisionRow.id)).limit(limit))
    with engine.connect() as conn:
        tables = tuple((name, int(conn.execute(select(func.count()).select_from(row)).scalar_one()))
                       for name, row in _COUNTED)
        runs = tuple(SyncRunView(r.id, r.venue, utc(r.started_at), utc(r.finished_at) if r.finished_at else None,
                                 r.status, r.ok, r.skipped, r.failed, r.markets_changed, r.snapshots_added,
                                 r.resolutions_recorded, r.error)
                     for r in conn.execute(sync_q.limit(limit)).all())
        errors = tuple(SyncErrorView(r.sync_run_id, r.venue, r.native_id, r.kind, r.field, r.message,
                                     r.payload_excerpt, utc(r.at))
                       for r in conn.execute(error_q.limit(limit)).all())
        jobs = tuple(JobSummary(job, int(n), int(ok or 0), int(bad or 0), int(running or 0), last_period or "",
                                utc(last) if last else None)
                     for job, n, ok, bad, running, last_period, last in conn.execute(jobs_q).all())
        job_runs = []
        for r in conn.execute(job_q.limit(limit)).all():
            started, finished = utc(r.started_at), utc(r.finished_at) if r.finished_at else None
            job_runs.append(JobRunView(
                r.job, r.period_key, r.status, r.attempts, started, finished,
                (finished - started).total_seconds() if finished else NAN,
                ", ".join(f"{k}={_flat(v)}" for k, v in sorted((r.counts or {}).items())), r.error, r.runner))
        statuses = tuple((st, int(n)) for st, n in conn.execute(status_q).all())
        issues = tuple(DecisionIssue(did, aid, agent, cohort, page_path("agent", aid), page_path("cohort", cohort),
                                     rk, status, error)
                       for did, aid, agent, cohort, rk, status, error in conn.execute(issue_q).all())
    return OperationsPage(as_of, backend(engine), tables, runs, errors, jobs, tuple(job_runs), statuses, issues,
                          limit, _cohort_ops(engine, as_of))


OPERATIONS_COHORTS = 12  # the newest cohorts shown with their universe (each size is one price-table read)


def _cohort_ops(engine: Engine, as_of: datetime) -> tuple[CohortOps, ...]:
    from arena.services.decide import tradable_markets

    cohorts_q = (select(CohortRow).where(CohortRow.period_start <= as_of)
                 .order_by(desc(CohortRow.period_start)).limit(OPERATIONS_COHORTS))
    out = []
    with Session(engine) as s:
        universe_now = len(tradable_markets(s, as_of)[0])
        for c in s.scalars(cohorts_q).all():
            start = utc(c.period_start)
            rows = s.execute(select(AgentRow.name, DecisionRow.round_key, DecisionRow.status, DecisionRow.error)
                             .join(AgentRow, AgentRow.id == DecisionRow.agent_id)
                             .where(DecisionRow.cohort_id == c.id)
                             .order_by(AgentRow.name, DecisionRow.round_key)).all()
            latest: dict[str, tuple[str, str, str]] = {}
            failed: Counter = Counter()
            for name, round_key, status, error in rows:
                latest[name] = (round_key, status, error)
                failed[name] += status == "failed"
            failing = tuple(FailingAgent(name, failed[name], rk, (err or "").strip().splitlines()[0][:300]
                                         if (err or "").strip() else "")
                            for name, (rk, st, err) in sorted(latest.items()) if st == "failed")
            out.append(CohortOps(c.name, page_path("cohort", c.name), c.status, start,
                                 len(tradable_markets(s, start)[0]),
                                 universe_now if c.status == "open" else 0,
                                 len({rk for _, rk, _, _ in rows}), failing))
    return tuple(out)


__all__ = [
    "PROVISIONAL_MIN_RESOLVED", "AgentPage", "AgentScore", "Chart", "CohortPage", "IndexPage", "MarketPage",
    "MethodologyPage", "OperationsPage", "Standings", "agent_contexts", "cohort_contexts", "equity_chart",
    "index_context", "load_standings", "market_contexts", "methodology_context", "operations_context",
    "price_chart", "site_market_ids",
]


# --- statistics pages ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class StatsTable:
    """A table for a statistics page: column keys with labels and filters, rows as dicts of plain values."""

    title: str
    note: str
    columns: tuple[tuple[str, str, str], ...]  # key, label, filter name
    rows: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class MatrixCell:
    """One cell of a pairwise matrix: row − column and its BH-adjusted p-value; `css` says which way and whether
    it is significant (the heat), `title` says it in words."""

    diff: float
    p_adjusted: float
    css: str
    title: str


@dataclass(frozen=True)
class PairMatrix:
    title: str
    note: str
    agents: tuple[str, ...]  # best first; rows and columns in this order
    rows: tuple[tuple[str, tuple[MatrixCell, ...]], ...]
    alpha: float


def pair_matrix(res: Any, title: str, label: str) -> PairMatrix | None:
    """The full pairwise difference / BH-adjusted p-value matrix of a `scoring.stats.BootstrapResult`."""
    if res is None or not len(res.table):
        return None
    agents = [a for a in res.table["agent"].tolist() if a in res.diff.index]
    rows = []
    for a in agents:
        cells = []
        for b in agents:
            if a == b:
                cells.append(MatrixCell(NAN, NAN, "self", ""))
                continue
            d = _f(res.diff.at[a, b])
            p = _f(res.p_adjusted.at[a, b])
            if math.isnan(d) or math.isnan(p):
                css, words = "ns", "no draw had both"
            elif p < res.alpha:
                better = d > 0 if res.higher_is_better else d < 0
                css = ("sig-better" if better else "sig-worse") + (" strong" if p < res.alpha / 5 else "")
                words = f"{'better' if better else 'worse'} than {b}, significant"
            else:
                css, words = "ns", f"not significantly different from {b}"
            cells.append(MatrixCell(d, p, css, f"{a} − {b}: {label} {d:+.4f}, BH-adjusted p = {p:.3f} — {words}"
                                    if not math.isnan(d) else f"{a} vs {b}: {words}"))
        rows.append((a, tuple(cells)))
    direction = "higher" if res.higher_is_better else "lower"
    note = (f"Each cell: row − column ({direction} is better) and the two-sided paired-bootstrap p-value, "
            f"Benjamini–Hochberg-adjusted over all pairs; green: the row is significantly better than the column "
            f"(adjusted p < {res.alpha}), red: significantly worse, grey: not significantly different.")
    return PairMatrix(title, note, tuple(agents), tuple(rows), float(res.alpha))


_RW, _RH = 360, 330
_RL, _RR, _RT, _RB = 44.0, 14.0, 12.0, 34.0


def reliability_chart(title: str, bins: Sequence[Mapping[str, Any]]) -> Chart:
    """A reliability diagram: observed frequency of YES against the mean forecast per bin (both 0..1), the
    diagonal of perfect calibration, each bin's point labelled with its count of forecasts."""
    left, right, top, bottom = _RL, _RW - _RR, _RT, _RH - _RB
    pts = [(float(b["mean_forecast"]), float(b["observed_freq"]), int(b["count"]), b) for b in bins
           if b.get("count") and not (math.isnan(_f(b.get("mean_forecast"))) or math.isnan(_f(b.get("observed_freq"))))]
    if not pts:
        return Chart(title, _RW, _RH, left, top, right, bottom, (), (), (), (), (), True, False)

    def x(v: float) -> float:
        return round(left + v * (right - left), 1)

    def y(v: float) -> float:
        return round(bottom - v * (bottom - top), 1)

    ticks = (0.0, 0.25, 0.5, 0.75, 1.0)
    x_ticks = tuple(Tick(x(v), f"{v:g}", "start" if v == 0 else "end" if v == 1 else "middle") for v in ticks)
    y_ticks = tuple(Tick(y(v), f"{v:g}") for v in ticks)
    rules = [Rule(x(0), y(0), x(1), y(1), "perfect calibration", "ref", x(1) - 4, y(1) + 14, "end")]
    markers = []
    for f, o, n, b in pts:
        px, py = x(f), y(o)
        markers.append(Marker(px, py, _marker_path(px, py, "dot"), "bin",
                              f"bin {_f(b.get('lo')):.1f}–{_f(b.get('hi')):.1f}: {n} forecasts, mean {f:.3f}, "
                              f"YES {o:.3f}"))
        rules.append(Rule(px, py, px, py, str(n), "count", px + 8, py - 8, "start"))
    line = Series(title, " ".join(f"{x(f)},{y(o)}" for f, o, _, _ in pts), "s0")
    return Chart(title, _RW, _RH, left, top, right, bottom, (line,), tuple(markers), tuple(rules), x_ticks,
                 y_ticks, False, False)


@dataclass(frozen=True)
class IntervalRow:
    """One row of an `interval_chart`: a point with its interval (NaN bounds: the point alone)."""

    label: str
    estimate: float
    lo: float
    hi: float
    css: str  # the marker's class (e.g. "cohort", "pooled", "reference")
    title: str  # the marker's tooltip


_IW, _IL, _IR, _IT, _IROW, _IB = 900, 190.0, 24.0, 30.0, 24.0, 34.0


def interval_chart(title: str, rows: Sequence[IntervalRow], *, rule_at: float | None = None, rule_label: str = "",
                   signed: bool = False) -> Chart:
    """Points with their intervals, one row each top to bottom (a forest plot, or a board's scores with their
    95 % intervals), an optional vertical reference line (e.g. at 0), x ticks on a round step."""
    rows = [r for r in rows if math.isfinite(_f(r.estimate))]
    height = int(_IT + _IROW * max(len(rows), 1) + _IB)
    left, right, top, bottom = _IL, _IW - _IR, _IT, height - _IB
    if not rows:
        return Chart(title, _IW, height, left, top, right, bottom, (), (), (), (), (), True, False)
    values = [v for r in rows for v in (r.estimate, r.lo, r.hi) if math.isfinite(_f(v))]
    values += [rule_at] if rule_at is not None else []
    x0, x1 = min(values), max(values)
    pad = max((x1 - x0) * 0.08, 0.005)
    x0, x1 = x0 - pad, x1 + pad

    def x(v: float) -> float:
        return round(left + (v - x0) / (x1 - x0) * (right - left), 1)

    rules, markers, y_ticks = [], [], []
    if rule_at is not None:
        rules.append(Rule(x(rule_at), top, x(rule_at), bottom, rule_label, "ref", x(rule_at) + 4, top - 8, "start"))
    for i, r in enumerate(rows):
        yy = round(top + _IROW * (i + 0.5), 1)
        y_ticks.append(Tick(yy, r.label))
        if math.isfinite(_f(r.lo)) and math.isfinite(_f(r.hi)):
            rules.append(Rule(x(r.lo), yy, x(r.hi), yy, "", f"ci {r.css}", 0, 0, "start"))
        markers.append(Marker(x(r.estimate), yy, _marker_path(x(r.estimate), yy, "dot"), r.css, r.title))
    raw = (x1 - x0) / 5
    mag = 10 ** math.floor(math.log10(raw))
    step = next(k * mag for k in (1, 2, 5, 10) if k * mag >= raw)
    x_ticks, v = [], math.ceil(x0 / step) * step
    while v <= x1 + 1e-12:
        label = ("0" if abs(v) < 1e-12 else f"{v:+.2f}") if signed else f"{v:.2f}"
        x_ticks.append(Tick(x(v), label))
        v += step
    return Chart(title, _IW, height, left, top, right, bottom, (), tuple(markers), tuple(rules), tuple(x_ticks),
                 tuple(y_ticks), False, False)


@dataclass(frozen=True)
class StatisticsPage:
    as_of: datetime
    cohort: str
    cohort_href: str
    n_boot: int
    min_resolved: int
    provisional_rule: str
    matrices: tuple[PairMatrix, ...]
    reliability: tuple[Chart, ...]  # one per agent
    tables: tuple[StatsTable, ...]
    proxy_validity: Mapping[str, Any]
    notes: tuple[str, ...]


def _records(df: Any, keep: Sequence[str]) -> tuple[Mapping[str, Any], ...]:
    if df is None or not len(df):
        return ()
    cols = [c for c in keep if c in df.columns]
    return tuple({c: (None if isinstance(v, float) and math.isnan(v) else v) for c, v in rec.items()}
                 for rec in df[cols].to_dict("records"))


def _guard_bss(rows: tuple[Mapping[str, Any], ...]) -> tuple[Mapping[str, Any], ...]:
    """The BSS-vs-market display rule on interim rows: no ratio over a market Brier below BSS_MARKET_FLOOR."""
    out = []
    for r in rows:
        ref = r.get("interim_market_brier")
        if ref is None or not ref >= BSS_MARKET_FLOOR:
            r = {**r, "interim_bss_vs_market": None}
        out.append(r)
    return tuple(out)


def statistics_context(as_of: datetime, st: Any, n_boot: int) -> StatisticsPage:
    """The statistics page of one cohort from `services.statistics.CohortStatistics` (all numbers computed
    there; the template only formats)."""
    summary = st.summary()
    if len(summary) and "brier_ci_low" in summary.columns:
        summary = summary.sort_values(["tier", "agent"], na_position="last")
    head = st.bootstrap.get("forecast_brier")
    head_table = head.table.sort_values(["rank", "agent"], na_position="last") if head is not None else None
    tables = [
        StatsTable("Headline: forecast Brier of stated P(YES) on the forecast set",
                   f"Paired bootstrap over markets, {n_boot} draws, every agent and both reference forecasters "
                   "on the same draws; the same tier means not significantly different (Benjamini–Hochberg, "
                   f"α = 0.05). {PROVISIONAL_RULE}.",
                   (("agent", "agent", ""), ("tier", "tier", "integer"), ("n", "resolved forecasts", "integer"),
                    ("estimate", "forecast Brier", "number"), ("ci_low", "95% low", "number"),
                    ("ci_high", "95% high", "number"), ("p_first", "P(first)", "fraction_percent"),
                    ("p_vs_first_adj", "p vs No. 1 (BH)", "number"), ("provisional", "provisional", "")),
                   _records(head_table, ["agent", "tier", "n", "estimate", "ci_low", "ci_high", "p_first",
                                         "p_vs_first_adj", "provisional"])),
        StatsTable("Bet-size Brier: uncertainty and significance (resolved bets)",
                   f"Paired bootstrap over markets, {n_boot} draws; agents in the same tier are not significantly "
                   f"different (Benjamini–Hochberg, α = 0.05). Provisional: fewer than {st.min_resolved} resolved bets.",
                   (("agent", "agent", ""), ("tier", "tier", "integer"), ("n_resolved", "resolved", "integer"),
                    ("brier_ci_low", "Brier 95% low", "number"), ("brier_ci_high", "Brier 95% high", "number"),
                    ("pnl_ci_low", "P/L low $", "number"), ("pnl_ci_high", "P/L high $", "number"),
                    ("crowd_proxy_ci_low", "proxy low", "number"), ("crowd_proxy_ci_high", "proxy high", "number"),
                    ("p_first", "P(first)", "fraction_percent"), ("pct_beat_first", "% mkts beating No. 1", "number"),
                    ("p_vs_first_adj", "p vs No. 1 (BH)", "number"), ("provisional", "provisional", "")),
                   _records(summary, ["agent", "tier", "n_resolved", "brier_ci_low", "brier_ci_high",
                                      "pnl_ci_low", "pnl_ci_high",
                                      "crowd_proxy_ci_low", "crowd_proxy_ci_high", "p_first", "pct_beat_first",
                                      "p_vs_first_adj", "provisional"])),
        StatsTable("Interim scores (provisional until every market resolves)",
                   "Unresolved bets scored against today's market price (as ForecastBench does); resolved bets against their "
                   "outcome. These change until every market resolves. The interim skill vs market is shown only where "
                   f"the market's interim Brier is at least {BSS_MARKET_FLOOR} (else —: too small to divide by).",
                   (("agent", "agent", ""), ("n", "bets", "integer"), ("n_provisional", "scored vs price", "integer"),
                    ("interim_brier", "interim Brier", "number"), ("interim_brier_stated", "interim stated", "number"),
                    ("interim_market_brier", "market on same bets", "number"),
                    ("interim_bss_vs_market", "interim skill vs market", "number"),
                    ("market_brier", "market on own resolved bets", "number")),
                   _guard_bss(_records(st.interim, ["agent", "n", "n_provisional", "interim_brier",
                                                    "interim_brier_stated", "interim_market_brier",
                                                    "interim_bss_vs_market", "market_brier"]))),
        StatsTable("Calibration of stated forecasts",
                   "Forecast-set probabilities on resolved markets, 10 equal-width bins: expected calibration error "
                   "and the Murphy decomposition (Brier = reliability − resolution + uncertainty + within-bin terms).",
                   (("group", "agent", ""), ("n", "forecasts", "integer"), ("brier", "Brier", "number"),
                    ("ece", "ECE", "number"), ("reliability", "reliability", "number"),
                    ("resolution", "resolution", "number"), ("uncertainty", "uncertainty", "number")),
                   _records(st.murphy, ["group", "n", "brier", "ece", "reliability", "resolution", "uncertainty"])),
        StatsTable("Reliability diagram data",
                   "Per agent and bin: how many forecasts, their mean, and how often YES happened.",
                   (("group", "agent", ""), ("bin", "bin", "integer"), ("lo", "from", "number"), ("hi", "to", "number"),
                    ("count", "forecasts", "integer"), ("mean_forecast", "mean forecast", "number"),
                    ("observed_freq", "observed YES", "number")),
                   tuple(r for r in _records(st.reliability, ["group", "bin", "lo", "hi", "count", "mean_forecast",
                                                              "observed_freq"]) if r.get("count"))),
        StatsTable("Consistency",
                   "Multi-outcome groups: mean |Σ stated P − 1|. Two-member exclusive groups: seed 003's negation "
                   "violation (threshold 0.01). Named outcomes bet on: seed 004's S′.",
                   (("agent", "agent", ""), ("n_groups", "groups", "integer"), ("sum_deviation", "|Σp − 1|", "number"),
                    ("n_pairs", "negation pairs", "integer"), ("negation_violation_rate", "violation rate", "number"),
                    ("n_answers", "answers", "integer"), ("s_prime", "S′", "number")),
                   _records(st.consistency, ["agent", "n_groups", "sum_deviation", "n_pairs", "negation_violation_rate",
                                             "n_answers", "s_prime"])),
    ]
    tables.extend(_sequence_tables(st))
    tables.extend(_ablation_tables(st, n_boot))
    notes = tuple(dict.fromkeys(f"{metric} — {k}: {v}" for metric, res in st.bootstrap.items()
                                for k, v in (getattr(res, "notes", None) or {}).items()))
    matrices = tuple(m for m in (
        pair_matrix(head, "Headline: forecast Brier, every pair", "forecast Brier"),
        pair_matrix(st.bootstrap.get("brier"), "Bet-size Brier, every pair", "implied Brier"),
    ) if m is not None)
    charts = []
    rel = st.reliability
    if rel is not None and len(rel):
        for group, g in rel.groupby("group", sort=True):
            charts.append(reliability_chart(str(group), g.sort_values("bin").to_dict("records")))
    return StatisticsPage(as_of, st.cohort, "", n_boot, st.min_resolved, PROVISIONAL_RULE, matrices, tuple(charts),
                          tuple(tables), dict(st.proxy_validity or {}), notes)


# --- ablations and replicates on the statistics page (issue 13; kept apart from the tables above) -------------

def _sequence_tables(st: Any) -> list[StatsTable]:
    """Anytime-valid comparisons vs the cohort's No. 1 and vs the market (`services.statistics.sequences`)."""
    seq = getattr(st, "sequences", None)
    if seq is None or not len(seq):
        return []
    return [StatsTable(
        "Anytime-valid comparisons: vs No. 1 and vs the market",
        "Forecast Brier on the cohort's shared questions, this forecaster minus the other (< 0: this one forecasts "
        "better), with a 95% confidence sequence updated as each question resolves. Unlike a fixed-sample interval "
        "it may be read every day without inflating false wins; 'first excluded 0' is the date the difference "
        "first became significant, and the verdict is the side it fell on then.",
        (("agent", "forecaster", ""), ("versus", "versus", ""), ("n", "questions", "integer"),
         ("estimate", "difference", "number"), ("lower", "CS low", "number"), ("upper", "CS high", "number"),
         ("first_date", "first excluded 0", ""), ("verdict", "verdict", "")),
        _records(seq, ["agent", "versus", "n", "estimate", "lower", "upper", "first_date", "verdict"]))]


def _ablation_tables(st: Any, n_boot: int) -> list[StatsTable]:
    """The cohort's ablation pairs (B − A per metric) and its replicated seats' run-to-run spread, when it has
    any (`services.statistics._ablations` computes them)."""
    out = []
    ablations = getattr(st, "ablations", None)
    if ablations is not None and len(ablations):
        out.append(StatsTable(
            "Ablations: variant vs base (B − A over shared questions)",
            f"Paired bootstrap over markets, {n_boot} draws. Brier rows: < 0 means the variant forecasts better; "
            "pnl: realized USD, > 0 means the variant earned more. With replicates each question counts the mean of "
            "its replicates (run-to-run noise averaged out; 'replicate noise' = the share of the per-question "
            "variance still due to it); 'executed' uses replicate 1 only, as the boards do. 'CS excluded 0' is the "
            "first date the anytime-valid 95% confidence sequence on the forecast-Brier difference excluded 0.",
            (("pair", "pair", ""), ("factor", "factor", ""), ("metric", "metric", ""), ("n", "questions", "integer"),
             ("estimate", "B − A", "number"), ("lo", "95% low", "number"), ("hi", "95% high", "number"),
             ("p_value", "p", "number"), ("executed", "executed B − A", "number"),
             ("replicate_share", "replicate noise", "fraction_percent"), ("first_date", "CS excluded 0", "")),
            _records(ablations, ["pair", "factor", "metric", "n", "estimate", "lo", "hi", "p_value", "executed",
                                 "replicate_share", "first_date"])))
    replicates = getattr(st, "replicates", None)
    if replicates is not None and len(replicates):
        out.append(StatsTable(
            "Replicates: run-to-run spread",
            "Seats asked k times per decision: the standard deviation across replicates of the stated P(YES) "
            "(mean over questions) and of the forecast Brier each replicate's forecasts would score.",
            (("agent", "agent", ""), ("replicates", "replicates", "integer"), ("questions", "questions", "integer"),
             ("p_sd", "SD of P(YES)", "number"), ("brier_sd", "SD of Brier", "number"),
             ("brier_min", "Brier min", "number"), ("brier_max", "Brier max", "number")),
            _records(replicates, ["agent", "replicates", "questions", "p_sd", "brier_sd", "brier_min",
                                  "brier_max"])))
    return out
