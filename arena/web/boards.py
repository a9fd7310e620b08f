"""The leaderboards as the pages show them: each agent's row of its cohort board (`Standings`, loaded once per
render), the headline boards of `services.standings` reshaped into rows (`BoardRow`, `Headline`), and the
columns' help from the metric registry.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import pandas as pd
from sqlalchemy.engine import Engine

from arena.money import MICRO
from arena.scoring.brier import BSS_MARKET_FLOOR
from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED, PROVISIONAL_RULE
from arena.scoring.registry import METRICS
from arena.read.agent_standings import AgentStandings, agent_standings
from arena.read.shown_board import shown_board, shown_name, shown_rank_labels, twin_of
from arena.read.standings import Boards, CohortBoard, records
from arena.cache.memo import Recent
from arena.web.env import page_path
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
    rank_label: str = ""  # the rank as shown: "2=" where the bet-size Brier prints alike, "" where unknown


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
    pnl_by_name: Mapping[str, int] = field(default_factory=dict)  # agent name → P/L over its cohorts here
    cohort_pnl: Mapping[int, int] = field(default_factory=dict)  # cohort id → its agents' P/L together


def load_standings(engine: Engine, as_of: datetime, cohort_ids: Sequence[int] | None = None,
                   with_overall: bool = False, with_boards: bool = True,
                   keys: Mapping[int, str] | None = None) -> Standings:
    """Leaderboards of the given cohorts (None: all), reshaped from `services.agent_standings` (which folds the
    cash, marks the positions and scores the bets): one `AgentScore` per agent, ranked in the scoring library's
    order within its cohort. `keys`: as `agent_standings` takes them (cohorts read before are reused)."""
    src = agent_standings(engine, as_of, cohort_ids, with_overall, with_boards, keys)
    agents_of: dict[int, list[tuple[int, int, str, str, str]]] = defaultdict(list)
    for agent in src.agents:
        agents_of[agent[1]].append(agent)
    by_cohort = {cid: _RANKED.get_or_make(keys[cid], lambda agents=agents: _ranked(src, agents))
                 if keys is not None and cid in keys else _ranked(src, agents) for cid, agents in agents_of.items()}
    ranked = {r.agent_id: r for rs in by_cohort.values() for r in rs}
    rows = {a[0]: ranked[a[0]] for a in src.agents}  # in the agents' order, as before
    return Standings(as_of, rows, by_cohort, src.positions, src.overall, src.curves, src.boards, src.pnl_by_name(),
                     src.cohort_pnl())


# cohort key (as `agent_standings` takes them) → its agents' rows, ranked: a render reshapes only changed cohorts
_RANKED: Recent[tuple[AgentScore, ...]] = Recent("ranked scores")


def _ranked(src: AgentStandings, agents: Sequence[tuple[int, int, str, str, str]]) -> tuple[AgentScore, ...]:
    """One cohort's agents' rows, ranked in the scoring library's order."""
    rows = []
    for aid, cid, name, kind, model_id in agents:
        cname = src.cohorts[cid]
        m = src.metrics.get((cname, name), {})
        book = src.money[aid]
        n_resolved = int(m.get("n_resolved", 0) or 0)
        rows.append(AgentScore(
            rank=0, agent_id=aid, agent=name, cohort=cname, kind=kind, model_id=model_id,
            href=page_path("agent", aid), cohort_href=page_path("cohort", cname),
            n_bets=int(m.get("n_bets", 0) or 0), n_resolved=n_resolved,
            brier=num(m.get("brier")), brier_band=str(m.get("brier_band", "n/a")),
            brier_kelly=num(m.get("brier_kelly")), brier_stated=num(m.get("brier_stated")),
            bss_vs_0_25=num(m.get("bss_vs_0_25")), bss_vs_market=num(m.get("bss_vs_market")),
            crowd_proxy=num(m.get("crowd_proxy")), win_rate=num(m.get("win_rate")),
            start_micros=book.start_micros, cash_micros=book.cash_micros,
            positions_value_micros=book.positions_value_micros, total_value_micros=book.total_value_micros,
            pnl_micros=book.pnl_micros, return_pct=num(m.get("return_pct")),
            return_band=str(m.get("return_band", "n/a")), open_positions=book.open_positions,
            unpriced_positions=book.unpriced_positions, provisional=n_resolved < PROVISIONAL_MIN_RESOLVED,
        ))
    rows.sort(key=lambda r: (src.order.get((r.cohort, r.agent), 1 << 30), r.agent))  # the scoring library's order
    labels = shown_rank_labels([r.brier for r in rows], 3)
    return tuple(replace(r, rank=i + 1, rank_label=label) for i, (r, label) in enumerate(zip(rows, labels)))


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
    "decision_value": ("Decision value", "decision_value"),
    "pnl_at_bid": ("P/L at the bid", "pnl_at_bid"),
    "sharpe": ("Sharpe (daily)", "sharpe"),
    "max_drawdown": ("Max drawdown", "max_drawdown"),
    "beyond_market": ("Beyond the market", "beyond_market"),
    "price_copy": ("Price copy", "price_copy"),
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
    same_as: str = ""  # the reference whose forecasts this seat's equal on every question ("" when none)
    n_asked: float = float("nan")  # questions asked / answered (NaN when the board does not count them)
    n_answered: float = float("nan")
    # decision value (share of the bankroll per question) with its interval; risk of the daily marks; P/L at the bid
    decision_value: float = float("nan")
    decision_value_lo: float = float("nan")
    decision_value_hi: float = float("nan")
    sharpe: float = float("nan")
    max_drawdown: float = float("nan")
    risk_note: str = ""  # why the Sharpe ratio is missing ("" when it is not)
    pnl_at_bid_micros: int | None = None
    # information beyond the market (`scoring.beyond_market`): the encompassing coefficient, its interval, why it
    # is missing ("" when it is not), and the price-copy index
    beyond_market: float = float("nan")
    beyond_market_lo: float = float("nan")
    beyond_market_hi: float = float("nan")
    beyond_market_note: str = ""
    price_copy: float = float("nan")
    # the contamination guard (replays): questions left out of the headline for the model's knowledge cutoff and
    # their Brier (NaN: the seat declared no cutoff), and its model age in days at its first decision
    n_contaminated: float = float("nan")
    pre_cutoff_brier: float = float("nan")
    model_age_days: float = float("nan")

    @property
    def guarded(self) -> bool:
        """Whether the row has a pre-cutoff line or a model age to show."""
        return not (math.isnan(self.n_contaminated) and math.isnan(self.model_age_days))

    @property
    def is_reference(self) -> bool:
        return self.kind == "reference"

    @property
    def shown_name(self) -> str:
        """"market-follower = market" for a seat that is its reference's twin (one row for both)."""
        return shown_name(self.name, self.same_as)

    @property
    def twin(self) -> str:
        """The reference this seat equals, as the board names it after "=" ("market"); "" when none."""
        return self.shown_name[len(self.name) + 3:] if self.same_as else ""


def _micros(usd: Any) -> int | None:
    v = num(usd)
    return None if math.isnan(v) else int(round(v * MICRO))


def board_rows(frame: pd.DataFrame | None, hrefs: Mapping[str, str] | None = None) -> tuple[BoardRow, ...]:
    """`services.standings` board rows (cohort: "agent" column; overall: "model"), best first."""
    if frame is None or not len(frame):
        return ()
    key = "model" if "model" in frame.columns else "agent"
    out = []
    for rec in records(frame):
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
            contradicting_bets=num(rec.get("contradicting_bets")), same_as=twin_of(rec.get("same_as")),
            n_asked=num(rec.get("n_asked")), n_answered=num(rec.get("n_answered")),
            decision_value=num(rec.get("decision_value")), decision_value_lo=num(rec.get("decision_value_lo")),
            decision_value_hi=num(rec.get("decision_value_hi")), sharpe=num(rec.get("sharpe")),
            max_drawdown=num(rec.get("max_drawdown")),
            risk_note=rec["risk_note"] if isinstance(rec.get("risk_note"), str) else "",
            pnl_at_bid_micros=_micros(rec.get("pnl_at_bid")),
            beyond_market=num(rec.get("beyond_market")), beyond_market_lo=num(rec.get("beyond_market_lo")),
            beyond_market_hi=num(rec.get("beyond_market_hi")), price_copy=num(rec.get("price_copy")),
            beyond_market_note=str(rec.get("beyond_market_note") or ""),
            n_contaminated=num(rec.get("n_contaminated")), pre_cutoff_brier=num(rec.get("pre_cutoff_brier")),
            model_age_days=num(rec.get("model_age_days")),
        ))
    return tuple(out)


_SHOWN: Recent[pd.DataFrame] = Recent("shown board")  # (CohortBoard.key, rank key) → its rows as shown


def shown_rows(board: CohortBoard, rank_by: str) -> pd.DataFrame:
    """A cohort board's rows as the site shows them (`shown_board`), kept in memory under the board's key."""
    def make() -> pd.DataFrame:
        return shown_board(board.rows, rank_by, "agent")
    return _SHOWN.get_or_make(f"{board.key} {rank_by}", make) if board.key else make()


_DERIVED: Recent[BoardRow | None] = Recent("derived board row")  # (CohortBoard.key, what) → one row derived from that board


def kept_row(board: CohortBoard, what: str, make: Callable[[], BoardRow | None]) -> BoardRow | None:
    """`make()`, one row derived from `board` (`what` names which), kept in memory under the board's key so a
    page that gathers every cohort converts only the boards that changed."""
    return _DERIVED.get_or_make(f"{board.key} {what}", make) if board.key else make()


@dataclass(frozen=True)
class Headline:
    """A headline board ready for a page: its rows, the rank key and the rules the page states."""

    rows: tuple[BoardRow, ...]
    rank_by: str
    rank_label: str
    columns: Mapping[str, ColumnHelp]
    provisional_rule: str
    bss_floor: float
    coverage: bool = False  # the board counts questions asked and answered (n_asked, n_answered)

    @property
    def guarded(self) -> tuple[BoardRow, ...]:
        """The rows with a pre-cutoff line or a model age (the contamination guard, replays), in board order."""
        return tuple(r for r in self.rows if r.guarded)


def headline(frame: pd.DataFrame | None, rank_by: str, hrefs: Mapping[str, str] | None = None) -> Headline:
    """The board as shown (`shown_board`: a reference's twin merged into one row, ties by the shown score)."""
    label = _HEADLINE_COLUMNS.get(rank_by, (rank_by, ""))[0]
    coverage = frame is not None and {"n_asked", "n_answered"} <= set(frame.columns)
    return Headline(board_rows(shown_board(frame, rank_by), hrefs), rank_by, label, headline_help(), PROVISIONAL_RULE,
                    BSS_MARKET_FLOOR, coverage)
