"""The index page: the overall headline board per model (with its chart and cost vs skill), the overall table
across cohorts and one summary per cohort. Only reshapes `Standings` and the boards.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import pandas as pd
from sqlalchemy.engine import Engine

from arena.scoring.board import DEFAULT_RANK_BY
from arena.scoring.brier import brier_band
from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED
from arena.read.frontier import frontier_records, model_frontier
from arena.read.row_counts import row_counts
from arena.read.shown_board import shown_rank_labels
from arena.read.standings import Boards, CohortBoard
from arena.read.touched_markets import touched_market_ids
from arena.web.boards import (BoardRow, ColumnHelp, Headline, Standings, board_rows, column_help, headline,
                              kept_row, load_standings, shown_rows)
from arena.web.charts import Chart, frontier_chart
from arena.web.env import page_path
from arena.web.refs import CohortInfo, cohort_infos
from arena.web.score_charts import IntervalRow, interval_chart
from arena.web.values import num


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
    agents: tuple[AgentLink, ...]  # its agents in its latest AGENT_LINKS cohorts
    href: str = ""  # the model's page (every cohort, by year)
    rank_label: str = ""  # the place as shown: "2=" where the pooled bet-size Brier prints alike, "" where unknown


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
    links: Mapping[str, tuple[AgentLink, ...]]  # model → its agents' pages in its latest AGENT_LINKS cohorts
    overall: tuple[OverallRow, ...]
    cohorts: tuple[CohortSummary, ...]
    columns: Mapping[str, ColumnHelp]
    provisional_min: int
    n_agents: int
    n_markets: int
    n_fills: int
    chart: Chart | None = None  # the headline per model with its interval, references marked
    cost_chart: Chart | None = None  # the cost–skill frontier, when some model's calls reported a cost
    more: Mapping[str, int] = field(default_factory=dict)  # model → its agents not linked here (on its page)
    # the frontier's rows (`scoring.frontier.FRONTIER_COLUMNS`, JSON values) of the models with a reported cost
    frontier: tuple[Mapping[str, Any], ...] = ()


def _num3(v: float) -> str:
    return f"{v:.3f}" if math.isfinite(num(v)) else "—"


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


def _leader(board: CohortBoard | None, hrefs: Mapping[str, str], rank_by: str) -> BoardRow | None:
    """The first ranked agent (not a reference row) of a cohort's headline board as shown (rows best first); only
    that row is made a `BoardRow` (as `board_rows` reads kind and rank label)."""
    if board is None or not len(board.rows):
        return None

    def first() -> BoardRow | None:
        rows = shown_rows(board, rank_by)
        kinds = rows["kind"].tolist() if "kind" in rows.columns else [None] * len(rows)
        labels = rows["rank_label"].tolist() if "rank_label" in rows.columns else [None] * len(rows)
        at = next((i for i, (k, lab) in enumerate(zip(kinds, labels))
                   if str(k or "") != "reference" and str(lab or "")), None)
        return None if at is None else board_rows(rows.iloc[at:at + 1])[0]

    leader = kept_row(board, f"leader {rank_by}", first)
    return None if leader is None else replace(leader, href=hrefs.get(leader.name, ""))


AGENT_LINKS = 5  # per model on the index: its latest cohorts' agents; every one is on the model's pages


def index_context(engine: Engine, as_of: datetime, standings: Standings | None = None,
                  n_markets: int | None = None, frontier: Sequence[Mapping[str, Any]] | None = None) -> IndexPage:
    """`n_markets`: how many markets have a page, when the caller knows (a render's page keys list them);
    `frontier`: the cost–skill frontier's JSON rows (`read.frontier`), when the caller has them."""
    st = standings if standings is not None and standings.overall is not None else \
        load_standings(engine, as_of, None, with_overall=True)
    infos = cohort_infos(engine, as_of)
    n_markets = len(touched_market_ids(engine, as_of)) if n_markets is None else n_markets
    n_fills = dict(row_counts(engine, as_of, ["fills"]))["fills"]
    links: dict[str, list[AgentLink]] = defaultdict(list)
    for cid in infos:
        for r in st.by_cohort.get(cid, ()):
            links[r.agent].append(AgentLink(r.agent_id, r.cohort, r.href))
    overall = []
    board = st.overall if st.overall is not None else pd.DataFrame()
    for i, rec in enumerate(board.to_dict("records") if len(board) else []):
        n_resolved = int(0 if pd.isna(rec.get("n_resolved")) else rec["n_resolved"])
        brier = num(rec.get("brier"))
        overall.append(OverallRow(
            rank=i + 1, model=str(rec["agent"]), cohorts=int(rec["cohorts"]), n_resolved=n_resolved, brier=brier,
            brier_band=str(brier_band(brier)), mean_return_pct=num(rec.get("mean_return_pct")),
            total_pnl_micros=st.pnl_by_name.get(str(rec["agent"]), 0),
            provisional=n_resolved < PROVISIONAL_MIN_RESOLVED,
            agents=tuple(links[str(rec["agent"])][-AGENT_LINKS:]), href=page_path("model", str(rec["agent"])),
        ))
    overall = [replace(r, rank_label=label) for r, label in zip(overall, shown_rank_labels([r.brier for r in overall]))]
    summaries = []
    rank_by = st.boards.rank_by if st.boards is not None else DEFAULT_RANK_BY
    boards_by_name = {b.name: b for b in (st.boards.cohorts if st.boards is not None else [])}
    for cid, info in sorted(infos.items(), key=lambda kv: (kv[1].period_start, kv[0]), reverse=True):
        rows = st.by_cohort.get(cid, ())
        hrefs = {r.agent: r.href for r in rows}
        leader = _leader(boards_by_name.get(info.name), hrefs, rank_by)
        summaries.append(CohortSummary(info, sum(r.n_bets for r in rows), sum(r.n_resolved for r in rows),
                                       st.cohort_pnl.get(cid, 0), leader))
    boards = st.boards if st.boards is not None else Boards(as_of, DEFAULT_RANK_BY)
    model_links = {str(m): page_path("model", m) for m, k in zip(boards.overall.get("model", ()),
                                                                  boards.overall.get("kind", ())) if k != "reference"}
    head = headline(boards.overall, boards.rank_by, model_links)
    rows = list(frontier) if frontier is not None else frontier_records(model_frontier(engine, as_of))
    priced = tuple(r for r in rows if r.get("cost_usd") is not None)
    cost_chart = frontier_chart(priced)
    return IndexPage(as_of, head, {k: tuple(v[-AGENT_LINKS:]) for k, v in links.items()},
                     tuple(overall), tuple(summaries), column_help(),
                     PROVISIONAL_MIN_RESOLVED, len(st.rows), n_markets, n_fills,
                     headline_chart(head) if boards.rank_by == "forecast_brier" else None, cost_chart,
                     {k: len(v) - AGENT_LINKS for k, v in links.items() if len(v) > AGENT_LINKS}, priced)
